"""``make run`` and ``make demo``: the manager in the foreground, on a cluster or a local one.

With ``$KUBECONFIG`` set, the manager runs against that cluster (certificates in ``certs/``;
the cluster's API server cannot call a webhook on this machine, so no webhook configuration
is installed). Without it, a local control plane is started from the test harness (binaries
cached), the CRDs, the ValidatingAdmissionPolicy, a ValidatingWebhookConfiguration pointing
at ``https://127.0.0.1:<port>`` and both ConfigMaps are installed, and the manager runs
against it; the kubeconfig to use is printed.

``--demo`` then adds labelled example nodes (their labels drive the label discovery in the
controller ConfigMap), an annotated gang Deployment, waits until its pods are bound and prints
``volcano-py tree`` and where each pod landed; it stops everything afterwards.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tests.builders import create_node, deployment_body
from tests.controlplane.harness import ControlPlane, free_port
from tests.fixtures import install_crds
from volcano_py.api import resources as R
from volcano_py.certkeeper import CertKeeper
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists

ROOT = Path(__file__).resolve().parents[2]
WEBHOOK_CONFIGURATION = "volcano-py-admission"
NAMESPACE = "volcano-system"


def _create(client: KubeClient, resource: R.Resource, body: dict[str, Any]) -> None:
    with contextlib.suppress(AlreadyExists):
        client.create(resource, body)


def install(client: KubeClient, cert_dir: Path, webhook_port: int) -> None:
    """CRDs, namespace, ConfigMaps, the VAP and a webhook configuration for 127.0.0.1."""
    install_crds(client)
    _create(client, R.NAMESPACES, {"metadata": {"name": NAMESPACE}})
    base = ROOT / "manifests" / "base"
    for name in ("controller-configmap.yaml", "scheduler-configmap.yaml"):
        _create(client, R.CONFIGMAPS, yaml.safe_load((base / name).read_text()))
    admission = ROOT / "manifests" / "admission"
    for doc in yaml.safe_load_all((admission / "hypernode-policy.yaml").read_text()):
        resource = R.BY_KIND[doc["kind"]]
        _create(client, resource, doc)
    CertKeeper(cert_dir).sync()
    ca = (cert_dir / "ca.crt").read_bytes()
    webhook = yaml.safe_load((admission / "hypernode-webhook.yaml").read_text())
    for entry in webhook["webhooks"]:
        entry["clientConfig"] = {
            "url": f"https://127.0.0.1:{webhook_port}/hypernodes/validate",
            "caBundle": base64.b64encode(ca).decode(),
        }
    _create(client, R.VALIDATING_WEBHOOK_CONFIGURATIONS, webhook)


def manager_argv(
    kubeconfig: str, cert_dir: Path, webhook_port: int, metrics_port: int, *, local: bool
) -> list[str]:
    """The ``volcano-py manager`` command line ``make run`` uses."""
    argv = [
        sys.executable,
        "-m",
        "volcano_py",
        "manager",
        f"--kubeconfig={kubeconfig}",
        f"--cert-dir={cert_dir}",
        "--webhook-host=127.0.0.1",
        f"--webhook-port={webhook_port}",
        f"--metrics-address=127.0.0.1:{metrics_port}",
    ]
    if local:
        argv.append(f"--webhook-configuration={WEBHOOK_CONFIGURATION}")
    return argv


def demo(client: KubeClient, kubeconfig: str) -> None:
    """Labelled nodes, an annotated gang, wait for binds, print the tree and placements."""
    for spine in range(2):
        for rack in range(2):
            for i in range(4):
                name = f"demo-s{spine}-r{rack}-n{i}"
                create_node(
                    client,
                    name,
                    labels={
                        "volcano.sh/tor-spine": f"spine-{spine}",
                        "volcano.sh/tor-rack": f"rack-{spine}-{rack}",
                        "kubernetes.io/hostname": name,
                    },
                    allocatable={
                        "cpu": "8",
                        "memory": "32Gi",
                        "pods": "110",
                        "nvidia.com/gpu": "8",
                    },
                )
    _create(client, R.NAMESPACES, {"metadata": {"name": "demo"}})
    client.create(
        R.DEPLOYMENTS,
        deployment_body(
            "trainer",
            "demo",
            6,
            annotations={"scheduling.volcano.sh/group-min-member": "6"},
            pod_annotations={
                "volcano.sh/network-topology-mode": "hard",
                "volcano.sh/network-topology-highest-tier": "2",
            },
            requests={"cpu": "2", "nvidia.com/gpu": "2"},
        ),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = client.list_all(R.PODS, "demo")
        if len(pods) == 6 and all(p["spec"].get("nodeName") for p in pods):
            break
        time.sleep(1)
    subprocess.run(
        [sys.executable, "-m", "volcano_py", "tree"],
        env={**os.environ, "KUBECONFIG": kubeconfig},
        check=False,
    )
    print("\nwhere the gang landed:")
    for pod in sorted(client.list_all(R.PODS, "demo"), key=lambda p: p["metadata"]["name"]):
        print(f"  {pod['metadata']['name']:40} {pod['spec'].get('nodeName') or '(pending)'}")


def main(argv: list[str] | None = None) -> int:
    """Run (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="make run")
    parser.add_argument("--demo", action="store_true")
    parser.add_argument("--webhook-port", type=int, default=0)
    parser.add_argument("--metrics-port", type=int, default=0)
    args = parser.parse_args(argv)
    cert_dir = ROOT / "certs"
    webhook_port = args.webhook_port or free_port()
    metrics_port = args.metrics_port or free_port()
    external = os.environ.get("KUBECONFIG")
    plane: ControlPlane | None = None
    if external and not args.demo:
        kubeconfig = external
        print(f"running against $KUBECONFIG={external} (no webhook configuration installed)")
    else:
        plane = ControlPlane().start()
        kubeconfig = str(plane.kubeconfig)
        install(KubeClient(plane.admin_config()), cert_dir, webhook_port)
        print(
            f"local control plane up in {plane.startup_seconds:.1f}s\n"
            f"  export KUBECONFIG={kubeconfig}\n"
            f"  metrics/health: http://127.0.0.1:{metrics_port}/metrics\n"
            f"  webhook:        https://127.0.0.1:{webhook_port}/hypernodes/validate",
            flush=True,
        )
    manager = subprocess.Popen(
        manager_argv(kubeconfig, cert_dir, webhook_port, metrics_port, local=plane is not None)
    )
    try:
        if args.demo and plane is not None:
            demo(KubeClient(plane.admin_config()), kubeconfig)
            return 0
        return manager.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if manager.poll() is None:
            manager.send_signal(signal.SIGTERM)
            try:
                manager.wait(30)
            except subprocess.TimeoutExpired:
                manager.kill()
        if plane is not None:
            plane.stop()


if __name__ == "__main__":
    raise SystemExit(main())
