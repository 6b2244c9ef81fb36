"""``examples/native/`` as written, on the gated control plane: both gangs land in one rack.

The racks here are hand-made HyperNodes whose ``tierName`` is ``volcano.sh/tor-rack``, the
name label discovery gives the tier it builds from that label (``make run``'s fleet).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from devcluster.nodes import create_node
from tests.builders import exact, hypernode_body
from tests.integration.scheduler.conftest import wait_for
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "native"
KINDS = {"Job": R.JOBS, "PodGroup": R.NATIVE_PODGROUPS, "Pod": R.PODS}


def test_native_examples_run_as_gangs_in_one_rack(
    client: KubeClient, namespace: str, run_scheduler: Any
) -> None:
    prefix = namespace
    racks: dict[str, set[str]] = {}
    for r in range(3):
        nodes = [f"{prefix}-r{r}-n{i}" for i in range(2)]
        for name in nodes:
            create_node(
                client,
                name,
                labels={"volcano.sh/tor-rack": f"rack-{r}"},
                allocatable={"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
            )
        rack = f"{prefix}-rack-{r}"
        client.create(
            R.HYPERNODES,
            hypernode_body(rack, 1, [exact(n) for n in nodes], tier_name="volcano.sh/tor-rack"),
        )
        racks[rack] = set(nodes)
    try:
        run_scheduler()
        for path in sorted(EXAMPLES.glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                client.create(KINDS[doc["kind"]], doc, namespace)

        def placed() -> dict[str, str] | None:
            pods = client.list(R.PODS, namespace)["items"]
            nodes = {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}
            return nodes if len(nodes) == 6 and all(nodes.values()) else None

        nodes = wait_for(placed, timeout=60)
        for group in ("native-gang", "native-trainer"):
            used = {n for pod, n in nodes.items() if pod.startswith(group)}
            assert any(used <= rack for rack in racks.values()), (group, nodes)
    finally:
        for rack in racks:
            client.delete(R.HYPERNODES, rack)
        for name in set().union(*racks.values()):
            client.delete(R.NODES, name)
