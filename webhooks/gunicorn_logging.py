"""gunicorn's loggers, written by the process's own logging setup (text or JSON lines).

gunicorn gives ``gunicorn.error`` (start, stop, worker lifecycle, errors) and
``gunicorn.access`` (one line per request, when enabled) handlers of their own with their own
formats, and stops them from propagating. ``ProcessLogger`` (gunicorn's ``logger_class``)
takes those handlers away again and lets both loggers propagate, so their records reach the
root handlers that ``volcano_py.logsetup.configure_logging`` installed (in the master, and
inherited by the forked worker): with ``--log-format json`` every line the process writes is
JSON, gunicorn's included. Their level follows the root logger's (``-v``), like every other
module's.
"""

from __future__ import annotations

import logging
from typing import Any

from gunicorn.glogging import Logger


class ProcessLogger(Logger):  # type: ignore[misc]
    """gunicorn's ``Logger`` with its records handed to the root logger's handlers."""

    def setup(self, cfg: Any) -> None:
        """Let gunicorn set itself up, then drop its handlers and propagate to the root."""
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
                handler.close()
            logger.propagate = True
            logger.setLevel(logging.NOTSET)  # the root's level (-v) decides
