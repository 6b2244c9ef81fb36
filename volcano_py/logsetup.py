"""Logging for the process: klog-style verbosity, text or JSON lines, secrets never logged.

``-v`` maps klog's levels onto Python's: 0-1 WARNING, 2-3 INFO, 4 and above DEBUG (the
kubernetes client's and urllib3's own loggers stay at WARNING below ``-v=6``). JSON lines
carry ``ts``, ``level``, ``logger``, ``thread`` and ``msg`` (and ``exc`` for tracebacks), for
log pipelines that parse structure. With JSON, nothing else reaches stderr as plain text:
``warnings`` go through the ``py.warnings`` logger, and an uncaught exception (main thread or
any other) is logged at CRITICAL with its traceback in ``exc`` instead of being printed.
gunicorn's loggers propagate here too (``webhooks.gunicorn_logging``).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from types import TracebackType
from typing import Literal

LogFormat = Literal["text", "json"]


def level_for_verbosity(verbosity: int) -> int:
    """The Python logging level for klog's ``-v``."""
    if verbosity >= 4:
        return logging.DEBUG
    if verbosity >= 2:
        return logging.INFO
    return logging.WARNING


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        """Render ``record`` as a JSON line."""
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "thread": record.threadName,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(verbosity: int = 2, fmt: LogFormat = "text") -> None:
    """Configure the root logger once for the process."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_for_verbosity(verbosity))
    if verbosity < 6:
        for noisy in ("urllib3", "kubernetes"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    if fmt == "json":
        logging.captureWarnings(True)
        sys.excepthook = _log_uncaught
        threading.excepthook = _log_uncaught_in_thread


def _log_uncaught(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
        return
    logging.getLogger("volcano_py").critical("uncaught exception", exc_info=(kind, value, tb))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("volcano_py").critical(
        "uncaught exception in thread %s",
        name,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )
