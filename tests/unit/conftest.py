"""Unit-test fixtures shared by every folder: commands that configure logging are undone.

``manager`` and ``webhook`` call ``configure_logging``, which points the root logger at the
stderr of the moment (a test's capture, closed once the test ends) and, for JSON, installs
exception hooks. Each test gets the process-wide logging state back as it found it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    hooks = sys.excepthook, threading.excepthook
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    sys.excepthook, threading.excepthook = hooks
    logging.captureWarnings(False)
