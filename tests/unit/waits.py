"""How long a unit test waits, in real time, for something that must happen.

A hang guard, never a verdict: a wait that succeeds returns as soon as the thing happens, so
the figure costs nothing on a passing run and only bounds a broken one. It is far beyond any
load (the suite must pass on a loaded 2-core machine) and within the 60 s per-test guard
(``tests/conftest.py``). Waits for something that must *not* happen stay short: load only
makes them more likely to pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable

WAIT_S = 30.0


def wait_until(condition: Callable[[], object], what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``WAIT_S`` (a hang)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {WAIT_S:.0f} s")
        time.sleep(0.005)
