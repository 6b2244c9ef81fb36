"""`kubectl apply -k manifests/` against a real API server (its own control plane: the
webhook configuration it installs points at a Service that is not running here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from devcluster.harness import ControlPlane
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

ROOT = Path(__file__).resolve().parents[2]


def test_kubectl_apply_k_manifests_succeeds_and_creates_every_object() -> None:
    with ControlPlane(controller_manager=False) as cp:
        result = subprocess.run(
            [
                str(cp.binaries["kubectl"]),
                "--kubeconfig",
                str(cp.kubeconfig),
                "apply",
                "-k",
                str(ROOT / "manifests"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        client = KubeClient(cp.admin_config())
        deployment = client.get(R.DEPLOYMENTS, "volcano-py", "volcano-system")
        pod_spec = deployment["spec"]["template"]["spec"]
        container = pod_spec["containers"][0]
        assert deployment["spec"]["replicas"] == 2
        assert pod_spec["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        client.get(R.CONFIGMAPS, "volcano-controller-configmap", "volcano-system")
        client.get(R.CONFIGMAPS, "volcano-scheduler-configmap", "volcano-system")
        validating = client.get(R.VALIDATING_WEBHOOK_CONFIGURATIONS, "volcano-py-admission")
        mutating = client.get(R.MUTATING_WEBHOOK_CONFIGURATIONS, "volcano-py-admission")
        assert [w["clientConfig"]["service"]["path"] for w in validating["webhooks"]] == [
            "/hypernodes/validate",
            "/jobs/validate",
            "/queues/validate",
            "/pods/validate",
        ]
        assert [w["clientConfig"]["service"]["path"] for w in mutating["webhooks"]] == [
            "/jobs/mutate",
            "/queues/mutate",
            "/podgroups/mutate",
        ]
        assert "--ui=false" in container["args"]  # issue 26: the topology view is opt-in
        policy = client.request(
            "GET",
            "/apis/networking.k8s.io/v1/namespaces/volcano-system/networkpolicies/volcano-py",
        )
        ingress = policy["spec"]["ingress"]
        assert [rule["ports"][0]["port"] for rule in ingress] == [8443, 8080]
        assert ingress[1]["from"] == [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
        ]
        role = client.request(
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/volcano-system/roles/volcano-py",
        )
        secret_rules = [r for r in role["rules"] if r["resources"] == ["secrets"]]
        assert all(r.get("resourceNames") or r["verbs"] == ["create"] for r in secret_rules)


def test_rbac_manifests_use_no_wildcards() -> None:
    for doc in yaml.safe_load_all((ROOT / "manifests" / "base" / "rbac.yaml").read_text()):
        for rule in doc.get("rules") or []:
            for key in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(key, []), (doc["metadata"]["name"], rule)
