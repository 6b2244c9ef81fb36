"""R3: a UFM server failing in every way never costs a HyperNode, and never leaks the password.

The manager runs the ``ufm`` discovery source configured through ``volcano-controller-configmap``
with its credentials in a Secret, against ``tests/ufm_standin.py`` (the one mock: a UFM
appliance cannot run here). After a good round has created the leaf/spine HyperNodes, the
stand-in answers 500, garbage, hangs past the timeout, and rejects the password in turn.
For each: 0 HyperNodes deleted, every HyperNode gets ``DiscoveryStale=True`` (reason
``SourceError``) naming that failure, Warning Events are recorded, and the password (or its
basic-auth encoding) is absent from every line the manager logged. A good round clears it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.harness import ControlPlane
from tests.e2e.conftest import ManagerProcess, start_manager, stop_manager
from tests.e2e.faults import (
    SOURCE_LABEL,
    SYSTEM_NS,
    put_controller_config,
    wait_until,
)
from tests.ufm_standin import UFMStandIn
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient

pytestmark = pytest.mark.timeout(240)

PASSWORD = "Ufm-p4ssw0rd-never-logged"
# what each failure's condition message says (docs/discovery.md, "ufm")
FAILURES = {
    "500": "HTTP 500",
    "garbage": "did not return JSON",
    "hang": "timed out",
    "wrong-password": "HTTP 401",
}


@pytest.fixture(scope="module")
def ufm() -> Iterator[UFMStandIn]:
    with UFMStandIn(password=PASSWORD) as standin:
        yield standin


@pytest.fixture(scope="module")
def manager(
    plane: ControlPlane,
    admin: KubeClient,
    ufm: UFMStandIn,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ManagerProcess]:
    admin.create(
        R.SECRETS,
        {
            "metadata": {"name": "ufm-credentials", "namespace": SYSTEM_NS},
            "stringData": {"username": ufm.username, "password": PASSWORD},
        },
        namespace=SYSTEM_NS,
    )
    put_controller_config(
        admin,
        [
            {
                "source": "ufm",
                "enabled": True,
                "interval": "1s",
                "credentials": {"secretRef": {"name": "ufm-credentials"}},
                "config": {"endpoint": ufm.endpoint, "caFile": str(ufm.ca_file), "timeout": "2s"},
            }
        ],
    )
    process = start_manager(plane, tmp_path_factory.mktemp("r3"), "-v=5")
    yield process
    assert stop_manager(process) == 0, process.log()[-4000:]


def ufm_hypernodes(admin: KubeClient) -> dict[str, dict[str, Any]]:
    found = admin.list_all(R.HYPERNODES, label_selector=f"{SOURCE_LABEL}=ufm")
    return {h["metadata"]["name"]: h for h in found}


def stale(hypernode: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (hypernode.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "DiscoveryStale" and condition.get("status") == "True":
            return dict(condition)
    return None


def marked(admin: KubeClient, fragment: str) -> dict[str, dict[str, Any]] | None:
    """The UFM HyperNodes once every one is DiscoveryStale with a message saying ``fragment``."""
    hns = ufm_hypernodes(admin)
    conditions = [stale(h) for h in hns.values()]
    if not all(c is not None and fragment in c["message"] for c in conditions):
        return None  # not yet, or still the previous failure's condition
    return hns


def test_ufm_failures_delete_nothing_mark_stale_and_never_log_the_password(
    admin: KubeClient, ufm: UFMStandIn, manager: ManagerProcess
) -> None:
    good = wait_until(
        lambda: (lambda hns: hns if "spine-hn" in hns and len(hns) >= 2 else None)(
            ufm_hypernodes(admin)
        ),
        60,
        "a good UFM round creates leaf-hn-* and spine-hn",
    )
    names = set(good)
    for mode, fragment in FAILURES.items():
        ufm.mode = mode
        before = ufm.requests

        hns = wait_until(
            lambda f=fragment, b=before: ufm.requests > b and marked(admin, f),  # type: ignore[misc]
            45,
            f"every UFM HyperNode marked DiscoveryStale for mode {mode}",
        )
        assert set(hns) == names, f"mode {mode}: HyperNodes changed: {set(hns) ^ names}"
        reasons = {stale(h)["reason"] for h in hns.values()}  # type: ignore[index]
        assert reasons == {"SourceError"}

    events = [
        e
        for ns in ("default", SYSTEM_NS)
        for e in admin.list_all(R.EVENTS, ns)
        if e.get("reason") == "SourceError" and e.get("type") == "Warning"
    ]
    kinds = {e["involvedObject"]["kind"] for e in events}
    assert {"HyperNode", "ConfigMap"} <= kinds, kinds

    ufm.mode = "ok"
    wait_until(
        lambda: (lambda h: set(h) == names and not any(stale(x) for x in h.values()))(
            ufm_hypernodes(admin)
        ),
        45,
        "a good round clears DiscoveryStale",
    )
    log = manager.log()
    basic = base64.b64encode(f"{ufm.username}:{PASSWORD}".encode()).decode()
    leaked = [line for line in log.splitlines() if PASSWORD in line or basic in line]
    assert not leaked, leaked[:3]
    assert "ufm" in log  # the failures were logged (without the password)
