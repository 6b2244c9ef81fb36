"""R6: the manager runs with exactly the RBAC in ``manifests/base/rbac.yaml``.

The ServiceAccount ``volcano-py`` is created in ``volcano-system``, ``rbac.yaml`` applied as
is, a token minted with the TokenRequest API and written into a kubeconfig, and the manager
run with it - in Secret mode (``--webhook-cert-secret``) and patching the caBundle of
``volcano-py-admission`` (``--webhook-configuration``), as the Deployment does. Then the main
e2e checks: the webhook denies a bad HyperNode through the API server, label discovery creates
HyperNodes, pg-controller creates a PodGroup for an annotated Deployment, the scheduler binds
a pod; and nothing in the manager's log says Forbidden.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.harness import ControlPlane, free_port
from tests.builders import deployment_body, pod_body, regex
from tests.e2e.conftest import (
    ROOT,
    ManagerProcess,
    install_webhook,
    manager_certs,
    start_manager,
    stop_manager,
)
from tests.e2e.faults import (
    RACK,
    SYSTEM_NS,
    discovered,
    label_source,
    put_controller_config,
    rack_node,
    wait_until,
)
from volcano_py.api import resources as R
from volcano_py.api.resources import APIResource
from volcano_py.kube.client import KubeClient
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import ApiError, Forbidden

pytestmark = pytest.mark.timeout(240)

SA = "volcano-py"
WEBHOOK_CONFIGURATION = "volcano-py-admission"
RBAC_KINDS = {
    kind: APIResource("rbac.authorization.k8s.io", "v1", plural, kind, namespaced)
    for kind, plural, namespaced in (
        ("ClusterRole", "clusterroles", False),
        ("ClusterRoleBinding", "clusterrolebindings", False),
        ("Role", "roles", True),
        ("RoleBinding", "rolebindings", True),
    )
}


def apply_rbac(admin: KubeClient) -> list[str]:
    """Create every object of manifests/base/rbac.yaml; returns their kinds/names."""
    applied = []
    for doc in yaml.safe_load_all((ROOT / "manifests/base/rbac.yaml").read_text()):
        if not doc:
            continue
        resource = RBAC_KINDS[doc["kind"]]
        admin.create(resource, doc, namespace=doc["metadata"].get("namespace"))
        applied.append(f"{doc['kind']}/{doc['metadata']['name']}")
    return applied


def service_account_kubeconfig(plane: ControlPlane, admin: KubeClient, path: Path) -> Path:
    """A kubeconfig authenticating as the ServiceAccount with a TokenRequest token."""
    admin.create(R.SERVICEACCOUNTS, {"metadata": {"name": SA, "namespace": SYSTEM_NS}}, SYSTEM_NS)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    issued = admin.create(
        R.SERVICEACCOUNTS, request, SYSTEM_NS, subresource_of=SA, subresource="token"
    )
    assert plane.pki is not None
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "cp",
                "cluster": {
                    "server": plane.host,
                    "certificate-authority-data": base64.b64encode(
                        plane.pki.ca_cert.read_bytes()
                    ).decode(),
                },
            }
        ],
        "users": [{"name": SA, "user": {"token": issued["status"]["token"]}}],
        "contexts": [{"name": "sa", "context": {"cluster": "cp", "user": SA}}],
        "current-context": "sa",
    }
    path.write_text(json.dumps(config))
    return path


def placed(admin: KubeClient, namespace: str) -> list[str]:
    """Each pod's nodeName ("" while pending)."""
    return [p["spec"].get("nodeName", "") for p in admin.list_all(R.PODS, namespace)]


@pytest.fixture(scope="module")
def manager(
    plane: ControlPlane, admin: KubeClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    work = tmp_path_factory.mktemp("r6")
    apply_rbac(admin)
    kubeconfig = service_account_kubeconfig(plane, admin, work / "sa.kubeconfig")
    put_controller_config(admin, [label_source()])
    admin.create(R.NAMESPACES, {"metadata": {"name": "r6"}})
    # the configuration exists (as `kubectl apply -k manifests/` makes it) with a stale CA;
    # the manager must patch its own CA in with its own permissions
    port = free_port()
    install_webhook(admin, manager_certs(work), port, WEBHOOK_CONFIGURATION)
    process = start_manager(
        plane,
        work,
        f"--kubeconfig={kubeconfig}",  # argparse: the last --kubeconfig wins
        "--webhook-cert-secret=volcano-py-webhook-cert",
        f"--webhook-configuration={WEBHOOK_CONFIGURATION}",
        webhook_port=port,
    )
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def test_manager_works_with_exactly_the_manifest_rbac(
    admin: KubeClient, manager: ManagerProcess
) -> None:
    # certificate bootstrap with its own rights: the Secret exists, the caBundle is its CA
    secret = admin.get(R.SECRETS, "volcano-py-webhook-cert", SYSTEM_NS)
    vwc = admin.get(R.VALIDATING_WEBHOOK_CONFIGURATIONS, WEBHOOK_CONFIGURATION)
    mwc = admin.get(R.MUTATING_WEBHOOK_CONFIGURATIONS, WEBHOOK_CONFIGURATION)
    for config in (vwc, mwc):  # both of its configurations, each entry
        for entry in config["webhooks"]:
            assert entry["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]

    with pytest.raises(ApiError) as info:
        admin.create(
            R.HYPERNODES,
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": "r6-bad"},
                "spec": {"tier": 1, "members": [regex("node-[")]},
            },
        )
    assert "member regexMatch pattern is invalid" in info.value.message

    for i in range(2):
        rack_node(admin, f"r6-n{i}", "s0", "rack-a", allocatable={"cpu": "4", "pods": "110"})
    wait_until(lambda: discovered(admin, RACK, "rack-a"), 60, "label discovery creates HyperNodes")

    admin.create(
        R.DEPLOYMENTS,
        deployment_body(
            "gang", "r6", 2, annotations={"scheduling.volcano.sh/group-min-member": "2"}
        ),
    )
    groups: list[dict[str, Any]] = wait_until(
        lambda: admin.list_all(R.PODGROUPS, "r6"), 60, "pg-controller creates the PodGroup"
    )
    assert groups[0]["spec"]["minMember"] == 2
    wait_until(
        lambda: (lambda nodes: len(nodes) == 2 and all(nodes))(placed(admin, "r6")),
        60,
        "the scheduler places the gang",
    )

    admin.create(R.PODS, pod_body("solo", "r6", requests={"cpu": "1"}))
    bound = wait_until(
        lambda: admin.get(R.PODS, "solo", "r6")["spec"].get("nodeName"),
        60,
        "the scheduler binds a pod",
    )
    assert bound in {"r6-n0", "r6-n1"}

    log = manager.log()
    forbidden = [line for line in log.splitlines() if "forbidden" in line.lower()]
    assert not forbidden, forbidden[:5]


def test_secrets_are_readable_only_in_the_controller_namespace(
    admin: KubeClient, manager: ManagerProcess
) -> None:
    sa = KubeClient(load_config(str(manager.log_path.parent / "sa.kubeconfig")))
    for namespace, name in ((SYSTEM_NS, "ufm-credentials"), (SYSTEM_NS, "other"),
                            ("r6", "ufm-credentials")):  # fmt: skip
        admin.create(
            R.SECRETS,
            {"metadata": {"name": name, "namespace": namespace}, "stringData": {"u": "x"}},
            namespace,
        )
    # by name only (issue 26): the UFM Secret the config names, not the namespace's others
    assert sa.get(R.SECRETS, "ufm-credentials", SYSTEM_NS)["metadata"]["name"] == "ufm-credentials"
    with pytest.raises(Forbidden):
        sa.get(R.SECRETS, "other", SYSTEM_NS)
    with pytest.raises(Forbidden):
        sa.list_all(R.SECRETS, SYSTEM_NS)
    with pytest.raises(Forbidden):
        sa.get(R.SECRETS, "ufm-credentials", "r6")
    with pytest.raises(Forbidden):
        sa.list_all(R.SECRETS, "r6")
