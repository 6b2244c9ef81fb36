"""Hostile inputs offline (issue 26): the alias bomb and huge tiers, before and after.

Each case runs in a child process under an address-space limit (``RLIMIT_AS`` =
``AS_LIMIT``), so a baseline that tries to allocate without bound ends in ``MemoryError``
inside the child instead of taking the machine down. Printed per case: outcome, wall time,
the child's peak RSS (imports done before the clock starts).

1. **bomb** - the 453-byte-class "billion laughs" scheduler conf (a plugin weight that is
   ``9**9`` words expanded). Baseline: PyYAML's ``safe_load`` and then the error message the
   old conf check built (``repr`` of the value). Now: ``parse_conf`` (the bounded loader).
2. **tiers** - the normal-pod score of ``network-topology-aware`` for 8 nodes over tiers
   ``1..2`` and ``1..10**6``. Baseline: Volcano's loop over every integer tier (a dict per
   call, as the plugin did). Now: the plugin's closed form (``_tier_weight_sum``); the ratio
   far/near says whether the cost depends on the distance between tiers.
3. **ufm** - a 50 MB UFM answer of empty objects (~16.7 M of them; issue 44). Baseline: the
   whole body parsed by orjson and then counted (the loader before issue 44). Now: the
   discoverer's reader (``iter_json_array``, one port at a time). Goal: peak RSS <= 200 MB.

``python -m bench hostile``.
"""

from __future__ import annotations

import importlib
import resource
import subprocess
import sys
import time

AS_LIMIT = 1 << 30  # the Deployment's memory limit
CALLS = 200
FAR_BEFORE_CALLS = 2  # Volcano's loop over 10**6 tiers: ~0.5 s a call


def bomb_text() -> str:
    lines = ["x:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += ["tiers:", "- plugins:", "  - name: binpack", "    arguments: {binpack.weight: *l8}"]
    return "\n".join(lines) + "\n"


def case_bomb_before() -> str:
    import yaml

    data = yaml.safe_load(bomb_text())
    value = data["tiers"][0]["plugins"][0]["arguments"]["binpack.weight"]
    message = f"binpack.weight: expected an integer, got {value!r}"
    return f"error message of {len(message)} characters"


def case_bomb_after() -> str:
    from volcano_py.scheduler.framework.arguments import ConfError
    from volcano_py.scheduler.framework.conf import parse_conf

    try:
        parse_conf(bomb_text())
    except ConfError as e:
        return f"refused: {e}"
    return "accepted (unexpected)"


def _tier_loop(fading: float, low: int, high: int) -> float:
    weights = {tier: fading ** (tier - 1) for tier in range(low, high + 1)}
    return sum(weights.values())


def case_tiers(kind: str, high: int) -> str:
    from volcano_py.scheduler.plugins.network_topology_aware import _tier_weight_sum

    calls = FAR_BEFORE_CALLS if kind == "before" and high > 2 else CALLS
    started = time.perf_counter()
    for _ in range(calls):
        if kind == "before":
            _tier_loop(0.8, 1, high)
        else:
            _tier_weight_sum(0.8, 1, high)
    per_call = (time.perf_counter() - started) / calls
    return f"{per_call * 1e6:.2f} us a call"


UFM_BODY_BYTES = 50_000_000


def ufm_body() -> bytearray:
    """``[{},{},...]`` of ``UFM_BODY_BYTES``, built in place (no second copy)."""
    body = bytearray(UFM_BODY_BYTES)
    chunk = b"{}," * 300_000
    pos = 1
    while pos + len(chunk) < UFM_BODY_BYTES:
        body[pos : pos + len(chunk)] = chunk
        pos += len(chunk)
    body[0:1], body[pos - 1 : pos] = b"[", b"]"
    del body[pos:]
    return body


def case_ufm_before() -> str:
    import orjson

    try:
        ports = orjson.loads(ufm_body())
    except SystemError as e:  # orjson wraps the MemoryError it met
        if isinstance(e.__cause__, MemoryError):
            raise MemoryError from e
        raise
    return f"parsed {len(ports)} ports"


def case_ufm_after() -> str:
    from volcano_py.controllers.hypernode.config import DiscoveryConfig
    from volcano_py.controllers.hypernode.discovery import DiscoveryContext, DiscoveryError
    from volcano_py.controllers.hypernode.ufm import UFMDiscoverer
    from volcano_py.kube.store import Store

    entry = DiscoveryConfig("ufm", enabled=True, config={"endpoint": "ufm"})
    discoverer = UFMDiscoverer(entry, DiscoveryContext(Store(), Store()))
    try:
        links = discoverer._links(ufm_body())
    except DiscoveryError as e:
        return f"refused: {e}"
    return f"accepted {len(links)} links"


CASES = {
    "bomb-before": case_bomb_before,
    "bomb-after": case_bomb_after,
    "tiers-before-near": lambda: case_tiers("before", 2),
    "tiers-before-far": lambda: case_tiers("before", 10**6),
    "tiers-after-near": lambda: case_tiers("after", 2),
    "tiers-after-far": lambda: case_tiers("after", 10**6),
    "ufm-before": case_ufm_before,
    "ufm-after": case_ufm_after,
}


def child(name: str) -> None:
    import yaml  # noqa: F401  (imports are not what is measured)

    importlib.import_module("volcano_py.scheduler.framework.conf")
    importlib.import_module("volcano_py.scheduler.plugins.network_topology_aware")
    importlib.import_module("volcano_py.controllers.hypernode.ufm")

    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    started = time.perf_counter()
    try:
        outcome = CASES[name]()
    except MemoryError:
        outcome = f"MemoryError at the {AS_LIMIT >> 30} GiB address-space limit"
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name:18s} {wall * 1000:9.1f} ms  peak RSS {peak:7.1f} MB  {outcome[:110]}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1])
        return 0
    print(f"hostile inputs, each in a child under RLIMIT_AS={AS_LIMIT >> 30} GiB")
    for name in CASES:
        subprocess.run([sys.executable, "-m", "bench.bench_hostile", "--child", name], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
