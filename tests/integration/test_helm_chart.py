"""``charts/volcano-py`` renders what ``manifests/`` installs, lints clean, and its values work.

helm is built from the Go module proxy into the binary cache like the control plane's
binaries (``devcluster.provision.ensure_helm``; ``$HELM`` points at another). Both sides are
rendered by their own tools, ``helm template`` and ``kubectl kustomize`` (the cached kubectl),
and compared object by object: a change to ``manifests/`` that the chart does not carry
(a new file in a kustomization, a changed field) fails here.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.harness import ControlPlane
from devcluster.provision import ensure_binaries, ensure_helm
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import Conflict

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "volcano-py"
NAMESPACE = "volcano-system"
JSON = dict[str, Any]


def _objects(text: str) -> dict[tuple[str, str, str, str], JSON]:
    out = {}
    for doc in yaml.safe_load_all(text):
        if not doc:
            continue
        meta = doc["metadata"]
        key = (doc["apiVersion"], doc["kind"], meta.get("namespace", ""), meta["name"])
        assert key not in out, f"rendered twice: {key}"
        out[key] = doc
    return out


def _run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT, timeout=120)
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stderr}"
    return done.stdout


def _helm(*args: str) -> str:
    return _run([str(ensure_helm()), *args])


def _render(values: JSON, tmp: Path) -> dict[tuple[str, str, str, str], JSON]:
    given = tmp / "values.yaml"
    given.write_text(yaml.safe_dump(values))
    args = ["template", "volcano-py", str(CHART), "--namespace", NAMESPACE, "-f", str(given)]
    return _objects(_helm(*args))


def test_the_chart_renders_exactly_the_objects_of_manifests(tmp_path: Path) -> None:
    kustomized = _objects(_run([str(ensure_binaries()["kubectl"]), "kustomize", "manifests/"]))
    rendered = _render({"namespace": {"create": True}}, tmp_path)
    assert sorted(rendered) == sorted(kustomized)
    for key, obj in kustomized.items():
        assert rendered[key] == obj, f"{key} differs from manifests/"


def test_helm_lint_passes() -> None:
    out = _helm("lint", "--strict", str(CHART))
    assert "0 chart(s) failed" in out


def test_values_change_what_they_name(tmp_path: Path) -> None:
    conf = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'
    values = {
        "image": {"repository": "registry.example.com/volcano-py"},
        "replicas": 3,
        "resources": {"requests": {"cpu": "2"}},
        "scheduler": {"conf": conf},
        "serviceMonitor": {"enabled": True},
        "networkPolicy": {"enabled": False},
        "crds": {"install": False},
        "extraArgs": ["--ui=true"],
        "webhook": {"caBundle": "Q0E="},
    }
    rendered = _render(values, tmp_path)
    kinds = {key[1] for key in rendered}
    assert "CustomResourceDefinition" not in kinds
    assert "NetworkPolicy" not in kinds
    assert "Namespace" not in kinds
    assert ("monitoring.coreos.com/v1", "ServiceMonitor", NAMESPACE, "volcano-py") in rendered
    deployment = rendered[("apps/v1", "Deployment", NAMESPACE, "volcano-py")]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/volcano-py:0.1.0"
    assert container["resources"] == {"requests": {"cpu": "2"}}
    assert container["args"][-1] == "--ui=true"
    assert deployment["spec"]["replicas"] == 3
    configmap = rendered[("v1", "ConfigMap", NAMESPACE, "volcano-scheduler-configmap")]
    assert configmap["data"]["volcano-scheduler.conf"] == conf
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        config = rendered[("admissionregistration.k8s.io/v1", kind, "", "volcano-py-admission")]
        assert {w["clientConfig"]["caBundle"] for w in config["webhooks"]} == {"Q0E="}


@pytest.mark.parametrize("namespace", ["gpu-scheduling"])
def test_another_release_namespace_moves_every_namespaced_object(namespace: str) -> None:
    out = _helm("template", "volcano-py", str(CHART), "--namespace", namespace)
    assert NAMESPACE not in out
    rendered = _objects(out)
    assert ("v1", "Service", namespace, "volcano-py") in rendered


def test_the_rendered_chart_is_accepted_by_the_api_server(
    control_plane: ControlPlane, client: KubeClient, tmp_path: Path
) -> None:
    with contextlib.suppress(Conflict):
        client.create(R.NAMESPACES, {"metadata": {"name": NAMESPACE}})
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(_helm("template", "volcano-py", str(CHART), "--namespace", NAMESPACE))
    kubectl = [
        str(control_plane.binaries["kubectl"]),
        "--kubeconfig",
        str(control_plane.kubeconfig),
    ]
    _run([*kubectl, "apply", "--dry-run=server", "-f", str(rendered)])
