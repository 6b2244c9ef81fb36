"""Copies that must not drift: the packaged CRD and policy vs manifests/, the webhook
configuration vs the router."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from webhooks import hypernodes
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


def test_every_webhook_path_in_manifests_is_registered_with_its_rules() -> None:
    router = AdmissionRouter()
    hypernodes.register(router)
    config = _kind(ADMISSION / "hypernode-webhook.yaml", "ValidatingWebhookConfiguration")
    for webhook in config["webhooks"]:
        service = router.get(webhook["clientConfig"]["service"]["path"])
        assert webhook["name"] == service.name == "validatehypernode.volcano.sh"
        assert webhook["rules"] == [r.to_dict() for r in service.rules]
        assert webhook["clientConfig"]["service"]["name"] == "volcano-py"
        assert webhook["clientConfig"]["service"]["namespace"] == "volcano-system"
