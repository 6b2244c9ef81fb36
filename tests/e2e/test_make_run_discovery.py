"""``make run``, then the discovery ConfigMap replaced with another topology type (issue 27).

As a new user following Volcano's auto-discovery guide would: ``make run`` installs a
label-discovery ConfigMap (type ``topology-A``: spine over rack); ``kubectl apply`` a
ConfigMap with another type (racks only, under another name). The new HyperNodes must
appear within 30 s and the old ones go, with no ``maxDeletePercent`` in sight and the
``DiscoveryConfigApplied`` Event on the ConfigMap.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.builders import wait_until
from tests.e2e.test_make_run import Run, runs

__all__ = ["runs"]  # the fixture, shared with test_make_run

pytestmark = pytest.mark.timeout(300)

NEW_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-controller-configmap
  namespace: volcano-system
data:
  volcano-controller.conf: |
    networkTopologyDiscovery:
      - source: label
        enabled: true
        config:
          networkTopologyTypes:
            racks-only:
              - nodeLabel: "volcano.sh/tor-rack"
              - nodeLabel: "kubernetes.io/hostname"
"""


def _hypernodes(run: Run) -> list[dict[str, Any]]:
    out = run.kubectl(
        "get", "hypernodes", "-l", "volcano.sh/network-topology-source=label", "-o", "json"
    )
    items: list[dict[str, Any]] = json.loads(out)["items"]
    return items


def test_replacing_the_discovery_configmap_gives_the_new_hypernodes_within_30s(
    runs: Callable[..., Run], tmp_path: Path
) -> None:
    run = runs(make=True)
    old = wait_until(lambda: _hypernodes(run), 60, "make run's label HyperNodes")
    assert all(h["metadata"]["name"].startswith("hypernode-topology-a-") for h in old)
    racks = {h["metadata"]["labels"]["volcano.sh/tor-rack"] for h in old if h["spec"]["tier"] == 1}

    manifest = tmp_path / "racks-only.yaml"
    manifest.write_text(NEW_CONFIG)
    started = time.monotonic()
    run.kubectl("apply", "-f", str(manifest))
    expected = sorted(f"hypernode-racks-only-tier1-{rack}" for rack in racks)
    last: dict[str, list[str]] = {}

    def only_new() -> bool:
        # exactly the new type's racks: the old ones gone and every new one created
        # (creates land one by one, so "no old name left" alone can see three of four)
        last["names"] = sorted(h["metadata"]["name"] for h in _hypernodes(run))
        return last["names"] == expected

    try:
        wait_until(only_new, 30, "the new type's HyperNodes, the old ones gone")
    except AssertionError:
        raise AssertionError(f"after 30 s: {last.get('names')}, expected {expected}") from None
    print(f"new HyperNodes {time.monotonic() - started:.1f}s after kubectl apply")
    events = json.loads(
        run.kubectl(
            "get",
            "events",
            "-n",
            "volcano-system",
            "--field-selector",
            "involvedObject.name=volcano-controller-configmap",
            "-o",
            "json",
        )
    )["items"]
    assert any(e.get("reason") == "DiscoveryConfigApplied" for e in events), events
    assert not any(e.get("reason") == "DeletionLimitExceeded" for e in events), events
