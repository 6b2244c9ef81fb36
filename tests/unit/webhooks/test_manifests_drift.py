"""Copies that must not drift: the packaged CRD and policy vs manifests/, the webhook
configurations vs the router (and the RBAC that lets the process patch them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from webhooks import hypernodes, jobs, podgroups, pods, queues
from webhooks.hypernodes.schema import CRD_PATH
from webhooks.hypernodes.validator import POLICY_PATH
from webhooks.router import AdmissionRouter

ROOT = Path(__file__).resolve().parents[3]
ADMISSION = ROOT / "manifests" / "admission"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _kind(path: Path, kind: str) -> dict[str, Any]:
    return next(d for d in _docs(path) if d["kind"] == kind)


def test_packaged_crd_equals_manifests_crd() -> None:
    manifest = ROOT / "manifests" / "crds" / "topology.volcano.sh_hypernodes.yaml"
    assert _docs(CRD_PATH) == _docs(manifest)


def test_packaged_policy_equals_manifests_policy() -> None:
    packaged = _kind(POLICY_PATH, "ValidatingAdmissionPolicy")
    shipped = _kind(ADMISSION / "hypernode-policy.yaml", "ValidatingAdmissionPolicy")
    assert packaged == shipped


def test_policy_binding_binds_the_policy_on_the_same_resources() -> None:
    policy = _kind(ADMISSION / "hypernode-policy.yaml", "ValidatingAdmissionPolicy")
    binding = _kind(ADMISSION / "hypernode-policy.yaml", "ValidatingAdmissionPolicyBinding")
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert (
        binding["spec"]["matchResources"]["resourceRules"]
        == policy["spec"]["matchConstraints"]["resourceRules"]
    )


WEBHOOK_KINDS = {
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
}


def _webhook_configurations() -> list[dict[str, Any]]:
    """Every webhook configuration anywhere under manifests/."""
    paths = sorted((ROOT / "manifests").rglob("*.yaml"))
    return [
        doc
        for path in paths
        if "WebhookConfiguration" in path.read_text()  # skip parsing the large CRDs
        for doc in _docs(path)
        if doc.get("kind") in WEBHOOK_KINDS
    ]


def test_every_webhook_path_in_manifests_is_registered_with_its_rules() -> None:
    router = AdmissionRouter()
    hypernodes.register(router)
    jobs.register(router)
    queues.register(router, queues.ClusterView(list))
    pods.register(router)
    podgroups.register(router)
    shipped: dict[str, str] = {}
    for config in _webhook_configurations():
        for webhook in config["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            service = router.get(path)
            assert webhook["name"] == service.name, path
            assert webhook["rules"] == [r.to_dict() for r in service.rules], path
            assert webhook["clientConfig"]["service"]["name"] == "volcano-py"
            assert webhook["clientConfig"]["service"]["namespace"] == "volcano-system"
            assert path not in shipped, f"{path} registered twice"
            shipped[path] = config["kind"]
    # ... and every path the router serves is registered, a mutating one as mutating
    assert set(shipped) == {s.path for s in router}
    mutating = {p for p, kind in shipped.items() if kind.startswith("Mutating")}
    assert mutating == {jobs.MUTATE_PATH, queues.MUTATE_PATH, podgroups.MUTATE_PATH}


def test_the_process_may_patch_the_ca_of_every_shipped_webhook_configuration() -> None:
    rbac = _docs(ROOT / "manifests" / "base" / "rbac.yaml")
    role = next(
        d for d in rbac if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "volcano-py"
    )
    for config in _webhook_configurations():
        rule = next(
            r
            for r in role["rules"]
            if r.get("apiGroups") == ["admissionregistration.k8s.io"]
            and r["resources"] == [WEBHOOK_KINDS[config["kind"]]]
        )
        assert rule["resourceNames"] == [config["metadata"]["name"]]
        assert set(rule["verbs"]) == {"get", "patch", "update"}
