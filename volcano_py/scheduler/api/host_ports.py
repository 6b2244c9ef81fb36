"""Host ports, as kube-scheduler's NodePorts filter decides them.

A pod asks for the ``hostPort`` of every port of its containers and of its restartable
(sidecar) init containers; an ordinary init container's ports are not held while the pod
runs, so they do not count. A port is ``(hostIP, protocol, hostPort)`` with an empty hostIP
meaning ``0.0.0.0`` and an empty protocol ``TCP``. Two ports conflict when protocol and port
are equal and either hostIP is ``0.0.0.0`` or both hostIPs are equal.

The pod side is ``TaskInfo.host_ports`` (computed once per set of container lists, as the
request is); the node side is ``NodeInfo.ports``, kept by ``add_task``/``remove_task`` for
every pod that occupies the node, so a pod allocated earlier in the session (another pod of
the same gang) holds its ports exactly as a bound one does. ``predicates`` asks ``conflict``.

A rejected pod can fit again only when a pod holding one of its ports leaves the node or a
node is added (kube-scheduler's NodePorts events): its job waits with allocate's resource
reason, which wakes on every cluster event, these two included (``api/wake_hints.py``).
"""

from __future__ import annotations

from volcano_py.api import JSON

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)
UsedPorts = dict[tuple[str, int], dict[str, int]]  # (protocol, port) -> hostIP -> pods

BIND_ALL = "0.0.0.0"
REASON = "node(s) didn't have free ports for the requested pod ports"


def host_ports(spec: JSON) -> tuple[HostPort, ...]:
    """The host ports a pod with this spec holds while it runs, in spec order."""
    out: list[HostPort] = []
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for container in (*sidecars, *(spec.get("containers") or ())):
        for port in container.get("ports") or ():
            number = port.get("hostPort") or 0
            if isinstance(number, int) and number > 0:
                out.append((port.get("hostIP") or BIND_ALL, port.get("protocol") or "TCP", number))
    return tuple(out)


def hold(used: UsedPorts, ports: tuple[HostPort, ...], sign: int) -> None:
    """Count ``ports`` in (``sign`` 1) or out of (-1) a node's ``used`` ports."""
    for ip, protocol, number in ports:
        by_ip = used.setdefault((protocol, number), {})
        count = by_ip.get(ip, 0) + sign
        if count > 0:
            by_ip[ip] = count
        else:
            by_ip.pop(ip, None)
            if not by_ip:
                del used[(protocol, number)]


def conflict(ports: tuple[HostPort, ...], used: UsedPorts) -> bool:
    """Whether any of ``ports`` is taken on a node holding ``used``."""
    for ip, protocol, number in ports:
        by_ip = used.get((protocol, number))
        if by_ip and (ip == BIND_ALL or BIND_ALL in by_ip or ip in by_ip):
            return True
    return False
