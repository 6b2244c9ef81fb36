"""Errors from the API server, mapped from HTTP status; and the retry verdicts workers raise.

The client raises the most specific ``ApiError`` subclass for a response (``NotFound``,
``AlreadyExists``, ``Conflict``, ``Gone``, ...), always chained from the transport error
when there was one. Callers catch the class they can act on; anything else propagates.

``TemporaryError(delay)`` and ``PermanentError`` are what reconcile functions raise to tell
the worker loop "retry after ``delay``" and "stop retrying this key".
"""

from __future__ import annotations

from typing import Any


class ConfigError(Exception):
    """No usable cluster configuration (kubeconfig missing or broken, not in a cluster).

    The message names the file or the variable to fix; commands print it as it is.
    """


class ApiError(Exception):
    """A non-success answer from the API server (or no answer at all)."""

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked us to wait (``details.retryAfterSeconds``), if any."""
        details = self.body.get("details") or {}
        value = details.get("retryAfterSeconds")
        return float(value) if isinstance(value, int | float) else None


class BadRequest(ApiError):
    """400."""


class Unauthorized(ApiError):
    """401: the credentials were not accepted."""


class Forbidden(ApiError):
    """403: RBAC (or an admission webhook) said no."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409 with a stale resourceVersion: re-read and try again."""


class AlreadyExists(Conflict):
    """409 ``AlreadyExists``: a create found the name taken."""


class Gone(ApiError):
    """410: the resourceVersion is too old (compacted); re-list."""


class Invalid(ApiError):
    """422: the object failed validation (schema, CEL, or a webhook's verdict)."""


class TooManyRequests(ApiError):
    """429: throttled by API priority and fairness; honour ``retry_after``."""


class ServerError(ApiError):
    """5xx: the server failed; usually worth retrying."""


class ConnectionFailed(ApiError):
    """The request never got an HTTP answer (refused, reset, timed out)."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "ConnectionFailed", message)


class NotLeader(ApiError):
    """A leader-only write was not sent: this replica no longer holds the Lease (the fence)."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "NotLeader", message)


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def error_for(status: int, body: dict[str, Any] | None) -> ApiError:
    """Build the ``ApiError`` subclass for an HTTP status and its ``Status`` body."""
    body = body or {}
    reason = str(body.get("reason") or "")
    message = str(body.get("message") or "")
    if status == 409 and reason == "AlreadyExists":
        return AlreadyExists(status, reason, message, body)
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ApiError
    return cls(status, reason, message, body)


def is_retryable(error: BaseException) -> bool:
    """Whether ``error`` is a transient failure worth retrying with backoff."""
    return isinstance(error, ServerError | TooManyRequests | ConnectionFailed)


class TemporaryError(Exception):
    """Raised by a reconcile function: retry this key after ``delay`` seconds."""

    def __init__(self, message: str, delay: float = 1.0) -> None:
        super().__init__(message)
        self.delay = delay


class PermanentError(Exception):
    """Raised by a reconcile function: this key cannot succeed until its input changes."""
