"""Certificates in the cluster: a Secret round trip and the caBundle patched into a
ValidatingWebhookConfiguration."""

from __future__ import annotations

import base64
import contextlib
import uuid

from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import NotFound
from webhooks import certs


def test_secret_round_trip_keeps_the_bundle(client: KubeClient, namespace: str) -> None:
    bundle = certs.generate()
    certs.save_secret(client, namespace, "webhook-certs", bundle)
    assert certs.load_secret(client, namespace, "webhook-certs") == bundle
    renewed = certs.renew(bundle, ["volcano-py"], ["127.0.0.1"], 30)
    certs.save_secret(client, namespace, "webhook-certs", renewed)  # replaces
    assert certs.load_secret(client, namespace, "webhook-certs") == renewed
    assert certs.load_secret(client, namespace, "absent") is None


def test_patch_ca_bundle_sets_every_webhook(client: KubeClient) -> None:
    name = f"volcano-py-test-{uuid.uuid4().hex[:8]}"
    hook = {
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Ignore",
        "clientConfig": {"url": "https://127.0.0.1:1/hypernodes/validate"},
        "objectSelector": {"matchLabels": {"never": name}},
        "rules": [
            {
                "apiGroups": ["topology.volcano.sh"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE"],
                "resources": ["hypernodes"],
            }
        ],
    }
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{**hook, "name": "a.volcano.sh"}, {**hook, "name": "b.volcano.sh"}],
    }
    client.create(R.VALIDATING_WEBHOOK_CONFIGURATIONS, config)
    try:
        bundle = certs.generate()
        certs.patch_ca_bundle(client, name, bundle.ca_cert)
        stored = client.get(R.VALIDATING_WEBHOOK_CONFIGURATIONS, name)
        bundles = [base64.b64decode(w["clientConfig"]["caBundle"]) for w in stored["webhooks"]]
        assert bundles == [bundle.ca_cert, bundle.ca_cert]
    finally:
        with contextlib.suppress(NotFound):
            client.delete(R.VALIDATING_WEBHOOK_CONFIGURATIONS, name)
