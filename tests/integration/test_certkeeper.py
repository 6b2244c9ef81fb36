"""The webhook certificate keeper against the real API server (Secret + caBundle)."""

from __future__ import annotations

import base64
from pathlib import Path

from volcano_py.api import resources as R
from volcano_py.certkeeper import CertKeeper
from volcano_py.kube.client import KubeClient


def webhook_configuration(name: str) -> dict:  # type: ignore[type-arg]
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "validatehypernode.volcano.sh",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "clientConfig": {"url": "https://127.0.0.1:1/hypernodes/validate"},
                "rules": [
                    {
                        "apiGroups": ["topology.volcano.sh"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE"],
                        "resources": ["hypernodes"],
                    }
                ],
            }
        ],
    }


def test_cert_keeper_shares_one_certificate_through_the_secret_and_patches_the_ca(
    client: KubeClient, namespace: str, tmp_path: Path
) -> None:
    vwc = f"certkeeper-{namespace}"
    client.create(R.VALIDATING_WEBHOOK_CONFIGURATIONS, webhook_configuration(vwc))
    try:
        first = CertKeeper(
            tmp_path / "a",
            client=client,
            secret="webhook-cert",
            namespace=namespace,
            webhook_configuration=vwc,
        )
        assert first.sync() is True
        secret = client.get(R.SECRETS, "webhook-cert", namespace)
        assert secret["type"] == "kubernetes.io/tls"
        ca = (tmp_path / "a" / "ca.crt").read_bytes()
        stored = client.get(R.VALIDATING_WEBHOOK_CONFIGURATIONS, vwc)
        assert stored["webhooks"][0]["clientConfig"]["caBundle"] == base64.b64encode(ca).decode()

        # A second replica reads the same certificate instead of minting its own.
        second = CertKeeper(
            tmp_path / "b",
            client=client,
            secret="webhook-cert",
            namespace=namespace,
            webhook_configuration=vwc,
        )
        assert second.sync() is True  # its folder was empty
        assert (tmp_path / "b" / "tls.crt").read_bytes() == (
            tmp_path / "a" / "tls.crt"
        ).read_bytes()
        # Nothing due, nothing changed: no writes.
        version = client.get(R.SECRETS, "webhook-cert", namespace)["metadata"]["resourceVersion"]
        assert first.sync() is False
        assert (
            client.get(R.SECRETS, "webhook-cert", namespace)["metadata"]["resourceVersion"]
            == version
        )
    finally:
        client.delete(R.VALIDATING_WEBHOOK_CONFIGURATIONS, vwc)


def test_cert_keeper_files_mode_creates_and_keeps_a_certificate(tmp_path: Path) -> None:
    keeper = CertKeeper(tmp_path)
    assert keeper.sync() is True
    cert = (tmp_path / "tls.crt").read_bytes()
    assert keeper.sync() is False
    assert (tmp_path / "tls.crt").read_bytes() == cert
