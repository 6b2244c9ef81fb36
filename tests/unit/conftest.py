"""Unit-test fixtures shared by every folder: a clean environment, logging undone.

- **The environment is the test's own.** Unit tests run in any shell, including the one
  ``make run`` tells you to use (``KUBECONFIG`` exported to a live cluster) and inside a pod
  (``KUBERNETES_SERVICE_HOST``). Each test starts with neither, and with ``HOME`` pointing at
  an empty folder (no ``~/.kube/config``); a test that needs one sets it with ``monkeypatch``.
- ``manager`` and ``webhook`` call ``configure_logging``, which points the root logger at the
  stderr of the moment (a test's capture, closed once the test ends) and, for JSON, installs
  exception hooks. Each test gets the process-wide logging state back as it found it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# what a shell or a pod may set that decides which cluster a command talks to
CLUSTER_ENV = ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")


@pytest.fixture(autouse=True)
def _own_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for name in CLUSTER_ENV:
        monkeypatch.delenv(name, raising=False)
    home: Path = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))


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
