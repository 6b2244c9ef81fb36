"""Give freed memory back to the operating system once the process goes quiet after work.

Under create/delete churn the process's live data stays flat (the caches hold what exists,
the bounded memos in ``volcano_py.kube.memo`` cap the rest), but glibc's allocator keeps
freed chunks in its heaps for reuse, so RSS stays at the churn's high-water mark long after
the churn stopped (``bench/bench_churn.py``: ~4 MB of a ~80 MB worker). ``IdleTrimmer``
watches a change key (the informers' counts of object changes; bookmarks do not move it) and,
once a period passes with no change after one that had some, empties the bounded memos
(``memo.clear_all``: entries that churn left behind, up to their limits), runs a full
collection and ``malloc_trim(0)`` once. A busy process is never trimmed (the allocator's free
lists and the memos are what makes the next burst cheap); a quiet one is trimmed once per
quiet spell.

Where the C library has no ``malloc_trim`` (musl, macOS) only the collection runs.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import threading
from collections.abc import Callable

from volcano_py.kube import memo

log = logging.getLogger(__name__)

DEFAULT_PERIOD_S = 30.0


def _malloc_trim() -> Callable[[], object] | None:
    # The symbols already loaded into the process (the C library among them), looked up
    # without ``ctypes.util.find_library``: that runs ``ldconfig -p`` in a child process,
    # ~10 ms of the worker's start-up before its first bind.
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


def release_memory(trim: Callable[[], object] | None = None) -> None:
    """The memos emptied, a full garbage collection, then the C heap's free pages back."""
    memo.clear_all()
    gc.collect()
    if trim is not None:
        trim()


def release_now() -> None:
    """``release_memory`` with this C library's ``malloc_trim`` (where it has one)."""
    release_memory(_malloc_trim())


class IdleTrimmer:
    """See the module docstring; ``run`` is the thread body."""

    def __init__(
        self,
        change_key: Callable[[], object],
        *,
        period: float = DEFAULT_PERIOD_S,
        release: Callable[[], None] | None = None,
    ) -> None:
        """``release`` defaults to ``release_memory`` with this C library's ``malloc_trim``."""
        self._change_key = change_key
        self.period = period
        self._release: Callable[[], None] = release or self._release_memory
        self._trim = _malloc_trim() if release is None else None
        self._last = change_key()
        self._busy = False
        self.trims = 0

    def _release_memory(self) -> None:
        release_memory(self._trim)

    def tick(self) -> bool:
        """One check: True when this one released memory (quiet after a busy period)."""
        key = self._change_key()
        if key != self._last:
            self._last = key
            self._busy = True
            return False
        if not self._busy:
            return False
        self._busy = False
        self._release()
        self.trims += 1
        log.debug("idle after activity: memory released (%d times so far)", self.trims)
        return True

    def run(self, stop: threading.Event) -> None:
        """Check every ``period`` seconds until ``stop``."""
        while not stop.wait(self.period):
            self.tick()
