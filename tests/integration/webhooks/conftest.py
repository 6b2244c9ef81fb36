"""Fixtures for the admission tests: `volcano-py webhook` in a subprocess, registered with
the real API server through a ValidatingWebhookConfiguration (url + generated caBundle), and
the ValidatingAdmissionPolicy from manifests/admission.

Both are scoped with an objectSelector on a per-session label so that other suites sharing
the control plane never go through them: tests label their HyperNodes with `webhook_labels`
(or `policy_labels`) to opt in.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import ssl
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.harness import ControlPlane, free_port
from devcluster.manager import webhook_command
from tests.fixtures import client, control_plane, namespace
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from webhooks import certs

__all__ = ["client", "control_plane", "namespace"]

ROOT = Path(__file__).resolve().parents[3]
ADMISSION = ROOT / "manifests" / "admission"
SCOPE_LABEL = "volcano-py.test/admission"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _wait_healthy(port: int, ca: Path, proc: subprocess.Popen[bytes], log: Path) -> None:
    context = ssl.create_default_context(cafile=str(ca))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"webhook exited {proc.returncode}: {log.read_text()[-2000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(
                f"https://127.0.0.1:{port}/readyz", context=context, timeout=2
            ) as resp,
        ):
            if resp.status == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"webhook not ready: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def scope_id() -> str:
    return uuid.uuid4().hex[:12]


@pytest.fixture(scope="session")
def webhook_labels(scope_id: str) -> dict[str, str]:
    return {SCOPE_LABEL: f"webhook-{scope_id}"}


@pytest.fixture(scope="session")
def policy_labels(scope_id: str) -> dict[str, str]:
    return {SCOPE_LABEL: f"policy-{scope_id}"}


@pytest.fixture(scope="session")
def webhook_server(
    control_plane: ControlPlane,
    client: KubeClient,
    tmp_path_factory: pytest.TempPathFactory,
    webhook_labels: dict[str, str],
) -> Iterator[dict[str, Any]]:
    """The webhook process and its registration; yields {port, cert_dir, log}."""
    folder = tmp_path_factory.mktemp("webhook")
    cert_dir = folder / "certs"
    bundle = certs.generate()
    certs.write_cert_dir(bundle, cert_dir)
    port = free_port()
    log = folder / "webhook.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            webhook_command(cert_dir, port, "--kubeconfig", str(control_plane.kubeconfig)),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
    config = _docs(ADMISSION / "webhooks.yaml")[0]
    config["metadata"]["name"] = f"volcano-py-test-{webhook_labels[SCOPE_LABEL]}"
    hook = config["webhooks"][0]  # the HyperNode entry only: this server is `volcano-py webhook`
    config["webhooks"] = [hook]
    hook["clientConfig"] = {
        "url": f"https://127.0.0.1:{port}/hypernodes/validate",
        "caBundle": base64.b64encode(bundle.ca_cert).decode(),
    }
    hook["objectSelector"] = {"matchLabels": dict(webhook_labels)}
    try:
        _wait_healthy(port, cert_dir / certs.CA_FILE, proc, log)
        client.create(R.VALIDATING_WEBHOOK_CONFIGURATIONS, config)
        time.sleep(1.0)  # the API server picks up webhook configurations asynchronously
        yield {"port": port, "cert_dir": cert_dir, "log": log, "process": proc}
    finally:
        with contextlib.suppress(NotFound):
            client.delete(R.VALIDATING_WEBHOOK_CONFIGURATIONS, config["metadata"]["name"])
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="session")
def admission_policy(client: KubeClient, policy_labels: dict[str, str]) -> Iterator[str]:
    """The ValidatingAdmissionPolicy and binding from manifests/, the binding scoped to
    objects carrying `policy_labels`. Yields the policy name."""
    docs = _docs(ADMISSION / "hypernode-policy.yaml")
    policy = next(d for d in docs if d["kind"] == "ValidatingAdmissionPolicy")
    binding = next(d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding")
    binding["spec"]["matchResources"]["objectSelector"] = {"matchLabels": dict(policy_labels)}
    client.create(R.VALIDATING_ADMISSION_POLICIES, policy)
    client.create(R.VALIDATING_ADMISSION_POLICY_BINDINGS, binding)
    try:
        yield policy["metadata"]["name"]
    finally:
        with contextlib.suppress(NotFound):
            client.delete(R.VALIDATING_ADMISSION_POLICY_BINDINGS, binding["metadata"]["name"])
        with contextlib.suppress(NotFound):
            client.delete(R.VALIDATING_ADMISSION_POLICIES, policy["metadata"]["name"])
