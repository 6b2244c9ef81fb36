"""The ufm source against a local HTTPS stand-in: right groups, and failures that delete nothing."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.integration.hypernode.conftest import (
    CONFIGMAP,
    discovered,
    events_about,
    put_configmap,
    wait_until,
)
from tests.ufm_standin import UFMStandIn
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

ROOT = Path(__file__).resolve().parents[3]


def ufm_config(standin: UFMStandIn, namespace: str) -> str:
    return f"""
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 1s
    credentials:
      secretRef: {{name: ufm-credentials, namespace: {namespace}}}
    config:
      endpoint: {standin.endpoint}
      caFile: {standin.ca_file}
      timeout: 2s
"""


def create_secret(client: KubeClient, namespace: str, standin: UFMStandIn) -> None:
    client.create(
        R.SECRETS,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "ufm-credentials", "namespace": namespace},
            "stringData": {"username": standin.username, "password": standin.password},
        },
    )


def members(obj: dict) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in obj["spec"]["members"]]


def stale(obj: dict) -> dict | None:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "DiscoveryStale"), None)


EXPECTED = {
    "leaf-hn-leaf-switch-a1": ["gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04"],
    "leaf-hn-leaf-switch-b1": ["gpu-node-05", "gpu-node-06"],
    "leaf-hn-leaf-switch-c1": ["gpu-node-07"],
    "spine-hn": ["leaf-hn-leaf-switch-a1", "leaf-hn-leaf-switch-b1", "leaf-hn-leaf-switch-c1"],
}


def test_ufm_source_discovers_groups_and_failures_delete_nothing(
    client: KubeClient, namespace: str, controller_runner, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with UFMStandIn() as standin:
        create_secret(client, namespace, standin)
        put_configmap(client, namespace, ufm_config(standin, namespace))
        controller_runner()
        wait_until(
            lambda: {n: members(h) for n, h in discovered(client, "ufm").items()} == EXPECTED,
            what="the UFM groups",
        )
        spine = discovered(client, "ufm")["spine-hn"]
        assert spine["spec"]["tier"] == 2
        wait_until(
            lambda: (
                (discovered(client, "ufm")["spine-hn"].get("status") or {}).get("nodeCount") == 7
            ),
            what="spine-hn nodeCount",
        )

        for mode, fragment in [
            ("500", "HTTP 500"),
            ("garbage", "did not return JSON"),
            ("hang", "timed out"),
            ("wrong-password", "HTTP 401 (the credentials were rejected)"),
        ]:
            standin.mode = mode
            found = wait_until(
                lambda fragment=fragment: all(
                    (c := stale(h)) is not None and fragment in c["message"]
                    for h in discovered(client, "ufm").values()
                ),
                timeout=30,
                what=f"the DiscoveryStale condition for {mode}",
            )
            assert found
            current = discovered(client, "ufm")
            assert set(current) == set(EXPECTED), f"{mode}: HyperNodes were deleted"
            condition = stale(current["leaf-hn-leaf-switch-a1"])
            assert condition["status"] == "True"
            assert condition["reason"] == "SourceError"
            # Events are recorded asynchronously, after the condition is written: wait for them.
            wait_until(
                lambda fragment=fragment: any(
                    e["reason"] == "SourceError" and fragment in e["message"]
                    for e in events_about(client, "default", "leaf-hn-leaf-switch-a1")
                ),
                timeout=15,
                what=f"the SourceError Event on leaf-hn-leaf-switch-a1 for {mode}",
            )
            wait_until(
                lambda: any(
                    e["reason"] == "SourceError" for e in events_about(client, namespace, CONFIGMAP)
                ),
                timeout=15,
                what=f"the SourceError Event on the ConfigMap for {mode}",
            )

        # A good result again clears the condition.
        standin.mode = "ok"
        wait_until(
            lambda: all(stale(h) is None for h in discovered(client, "ufm").values()),
            what="the condition to clear",
        )
        assert standin.requests >= 6

    leaked = [r for r in caplog.records if standin.password in r.getMessage()]
    assert leaked == [], "the UFM password appeared in a log line"
    assert any("HTTP 401" in r.getMessage() for r in caplog.records)


def test_ufm_source_refuses_a_hostile_body_by_its_cap_and_deletes_nothing(
    client: KubeClient, namespace: str, controller_runner
) -> None:
    with UFMStandIn() as standin:
        create_secret(client, namespace, standin)
        text = ufm_config(standin, namespace).replace("timeout: 2s", "timeout: 60s")
        put_configmap(client, namespace, text)
        controller_runner()
        wait_until(lambda: set(discovered(client, "ufm")) == set(EXPECTED), what="the groups")
        standin.mode = "hostile"
        wait_until(
            lambda: all(
                (c := stale(h)) is not None and "more than 1000000 items (size cap)" in c["message"]
                for h in discovered(client, "ufm").values()
            ),
            timeout=90,
            what="the DiscoveryStale condition naming the cap",
        )
        assert set(discovered(client, "ufm")) == set(EXPECTED), "HyperNodes were deleted"


def test_ufm_source_with_verification_on_refuses_an_untrusted_certificate(
    client: KubeClient, namespace: str, controller_runner
) -> None:
    with UFMStandIn() as standin:
        create_secret(client, namespace, standin)
        text = ufm_config(standin, namespace).replace(f"      caFile: {standin.ca_file}\n", "")
        put_configmap(client, namespace, text)
        running = controller_runner()
        wait_until(
            lambda: (o := running.controller.last_outcome.get("ufm")) is not None and o.held_back,
            what="a failed round",
        )
        assert "TLS verification failed" in (running.controller.last_outcome["ufm"].held_back or "")
        assert discovered(client, "ufm") == {}


def test_ufm_source_without_its_secret_fails_to_start_with_a_clear_event(
    client: KubeClient, namespace: str, controller_runner
) -> None:
    with UFMStandIn() as standin:
        put_configmap(client, namespace, ufm_config(standin, namespace))
        controller_runner()
        events = wait_until(
            lambda: [
                e
                for e in events_about(client, namespace, CONFIGMAP)
                if "cannot start" in e["message"]
            ],
            what="the start failure event",
        )
        assert f"Secret {namespace}/ufm-credentials not found" in events[0]["message"]
        assert 'networkTopologyDiscovery[0] (source "ufm")' in events[0]["message"]


def test_discover_command_calls_the_ufm_endpoint(tmp_path: Path) -> None:
    with UFMStandIn() as standin:
        conf = tmp_path / "conf.yaml"
        conf.write_text(ufm_config(standin, "vs"))
        objects = tmp_path / "objects.yaml"
        objects.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": "ufm-credentials", "namespace": "vs"},
                    "stringData": {"username": standin.username, "password": standin.password},
                }
            )
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "volcano_py",
                "discover",
                "--config",
                str(conf),
                "--objects",
                str(objects),
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        listing = yaml.safe_load(done.stdout)
        assert [i["metadata"]["name"] for i in listing["items"]] == list(EXPECTED)
        assert all(
            i["metadata"]["labels"]["volcano.sh/network-topology-source"] == "ufm"
            for i in listing["items"]
        )

        standin.mode = "500"
        failed = subprocess.run(
            [
                sys.executable,
                "-m",
                "volcano_py",
                "discover",
                "--config",
                str(conf),
                "--objects",
                str(objects),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert failed.returncode == 1
        assert "source ufm:" in failed.stderr
        assert "HTTP 500" in failed.stderr
        assert standin.password not in failed.stderr + failed.stdout
