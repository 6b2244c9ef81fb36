"""``port_problem``: whether the manager can listen where its flags say, before it tries.

The manager's two listeners bind late — the webhook port in gunicorn's arbiter, the ops port
(``/metrics``, ``/ui``) in the worker — so a taken port used to kill the worker with a bare
``OSError: [Errno 98] Address already in use`` and leave the arbiter restarting it. ``prepare``
asks here first: each address is bound once (``SO_REUSEADDR``, as the real listeners do, so a
port in TIME_WAIT is not called taken) and closed again, and a refusal becomes one line naming
the address, the port and the flag that chose it, e.g. ``--metrics-address 127.0.0.1:8080:
port 8080 is already in use (another process listens there); pick a free one``.
"""

from __future__ import annotations

import errno
import socket


def port_problem(flag: str, host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (None when it can, or when ``port`` is 0)."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host or "0.0.0.0", port))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            why = "is already in use (another process listens there); pick a free one"
        elif e.errno == errno.EACCES:
            why = "needs privileges to be listened on (ports below 1024); pick one above"
        elif e.errno == errno.EADDRNOTAVAIL:
            why = f"cannot be listened on: {host} is not an address of this machine"
        else:
            why = f"cannot be listened on: {e.strerror}"
        return f"{flag} {shown}: port {port} {why}"
    return None
