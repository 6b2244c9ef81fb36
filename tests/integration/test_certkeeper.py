"""The webhook certificate keeper against the real API server (Secret + caBundle)."""

from __future__ import annotations

import base64
import contextlib
from pathlib import Path

import pytest

from volcano_py.api import resources as R
from volcano_py.certkeeper import CertKeeper
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound


def webhook_configuration(  # type: ignore[type-arg]
    name: str, kind: str = "ValidatingWebhookConfiguration"
) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
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


def _ca_bundles(client: KubeClient, name: str) -> dict[str, str]:
    """caBundle of the first entry of each configuration named ``name``."""
    return {
        resource.kind: client.get(resource, name)["webhooks"][0]["clientConfig"]["caBundle"]
        for resource in (R.VALIDATING_WEBHOOK_CONFIGURATIONS, R.MUTATING_WEBHOOK_CONFIGURATIONS)
    }


def test_cert_keeper_patches_the_ca_into_the_validating_and_the_mutating_configuration(
    client: KubeClient, namespace: str, tmp_path: Path
) -> None:
    name = f"certkeeper-both-{namespace}"
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        client.create(R.BY_KIND[kind], webhook_configuration(name, kind))
    try:
        first = CertKeeper(tmp_path / "a", client=client, webhook_configuration=name)
        assert first.sync() is True
        ca = base64.b64encode((tmp_path / "a" / "ca.crt").read_bytes()).decode()
        assert _ca_bundles(client, name) == {
            "ValidatingWebhookConfiguration": ca,
            "MutatingWebhookConfiguration": ca,
        }
        # current in both: nothing is written
        versions = {
            r.kind: client.get(r, name)["metadata"]["resourceVersion"]
            for r in (R.VALIDATING_WEBHOOK_CONFIGURATIONS, R.MUTATING_WEBHOOK_CONFIGURATIONS)
        }
        assert first.sync() is False
        assert versions == {
            r.kind: client.get(r, name)["metadata"]["resourceVersion"]
            for r in (R.VALIDATING_WEBHOOK_CONFIGURATIONS, R.MUTATING_WEBHOOK_CONFIGURATIONS)
        }
        # a new CA (another folder, files mode) goes into both, before its certificate is used
        second = CertKeeper(tmp_path / "b", client=client, webhook_configuration=name)
        assert second.sync() is True
        rotated = base64.b64encode((tmp_path / "b" / "ca.crt").read_bytes()).decode()
        assert rotated != ca
        assert set(_ca_bundles(client, name).values()) == {rotated}
    finally:
        for resource in (R.VALIDATING_WEBHOOK_CONFIGURATIONS, R.MUTATING_WEBHOOK_CONFIGURATIONS):
            with contextlib.suppress(NotFound):
                client.delete(resource, name)


def test_cert_keeper_patches_whichever_configuration_exists_and_fails_when_none(
    client: KubeClient, namespace: str, tmp_path: Path
) -> None:
    name = f"certkeeper-mutating-{namespace}"
    client.create(
        R.MUTATING_WEBHOOK_CONFIGURATIONS,
        webhook_configuration(name, "MutatingWebhookConfiguration"),
    )
    try:
        assert CertKeeper(tmp_path / "a", client=client, webhook_configuration=name).sync()
        stored = client.get(R.MUTATING_WEBHOOK_CONFIGURATIONS, name)
        ca = base64.b64encode((tmp_path / "a" / "ca.crt").read_bytes()).decode()
        assert stored["webhooks"][0]["clientConfig"]["caBundle"] == ca
    finally:
        client.delete(R.MUTATING_WEBHOOK_CONFIGURATIONS, name)
    with pytest.raises(NotFound):
        CertKeeper(tmp_path / "c", client=client, webhook_configuration=name).sync()
