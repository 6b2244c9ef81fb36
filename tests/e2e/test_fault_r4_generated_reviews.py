"""R4: 10,000 generated HyperNodes and malformed reviews: 0 5xx, the uid always echoed.

Sent straight to the manager's TLS webhook port (four keep-alive connections) and, a few
hundred of them, through the real API server (which calls the webhook with
``failurePolicy: Fail``: a webhook error would surface as a 500 "failed calling webhook").
The generator is seeded (``random.Random``) so a failure names a reproducible input; it mixes
valid HyperNodes with every kind of bad field, invalid and backtracking-bomb regexes,
wrong types and missing parts.
"""

from __future__ import annotations

import json
import random
import string
import threading
import uuid
from typing import Any

import pytest

from bench.bench_webhook import EVIL
from tests.e2e.conftest import ManagerProcess
from tests.e2e.faults import Reviewer, delete_quietly
from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

pytestmark = pytest.mark.timeout(300)

DIRECT = 10_000
THROUGH_API = 300
CONNECTIONS = 4
ALPHABET = string.ascii_lowercase + string.digits + "-.()[]{}*+?|^$\\"


def _text(rng: random.Random, size: int = 12) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, size)))


def _name(rng: random.Random) -> str:
    return "r4-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(10))


def _selector(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return {"exactMatch": {"name": rng.choice([_name(rng), _text(rng), ""])}}
    if kind == 1:
        pattern = rng.choice([*EVIL, _text(rng), "node-[", "^gpu-[0-9]+$", "(?P<x>a)"])
        return {"regexMatch": {"pattern": pattern}}
    if kind == 2:
        return {"labelMatch": {"matchLabels": {_text(rng, 6): _text(rng, 6)}}}
    if kind == 3:  # more than one, or none
        return {"exactMatch": {"name": _name(rng)}, "regexMatch": {"pattern": "a"}}
    if kind == 4:
        return rng.choice([None, {}, "x", 7, []])
    return {rng.choice(["exactMatch", "regexMatch", "labelMatch", "x"]): rng.choice([None, 3, ""])}


def hypernode(rng: random.Random) -> dict[str, Any]:
    """One generated HyperNode (valid about a third of the time)."""
    members = [
        {
            "type": rng.choice(["Node", "Node", "HyperNode", "Pod", "", None]),
            "selector": _selector(rng),
        }
        for _ in range(rng.randint(0, 6))
    ]
    spec: Any = {"tier": rng.choice([1, 2, 3, 0, -1, "1", None]), "members": members}
    if rng.random() < 0.3:
        spec["tierName"] = rng.choice(["rack", _text(rng, 70)])
    if rng.random() < 0.05:
        spec = rng.choice([None, "spec", 5])
    name = _name(rng) if rng.random() < 0.9 else rng.choice(["", "a" * 300, "Bad_Name"])
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def malformed(rng: random.Random) -> tuple[bytes, str]:
    """A body that is not a proper AdmissionReview."""
    uid = str(uuid.uuid4())
    choices: list[Any] = [
        b"{not json",
        b"[]",
        b"null",
        json.dumps({"kind": "AdmissionReview"}).encode(),
        json.dumps({"kind": "AdmissionReview", "request": {"uid": 7}}).encode(),
        json.dumps({"kind": "AdmissionReview", "request": {"uid": uid, "object": None}}).encode(),
        json.dumps({"kind": "AdmissionReview", "request": {"uid": uid, "object": [1]}}).encode(),
        json.dumps({"request": {"uid": uid, "operation": "DELETE", "oldObject": {}}}).encode(),
        bytes(rng.randrange(256) for _ in range(64)),
    ]
    return rng.choice(choices), rng.choice(["application/json", "text/plain"])


def test_generated_reviews_sent_directly_never_5xx_and_always_echo_the_uid(
    manager: ManagerProcess,
) -> None:
    ca = manager.log_path.parent / "certs" / "ca.crt"
    problems: list[str] = []
    counts = {"allowed": 0, "denied": 0, "malformed": 0}
    lock = threading.Lock()

    def run(worker: int) -> None:
        rng = random.Random(worker)
        reviewer = Reviewer(manager.webhook_port, ca)
        for i in range(DIRECT // CONNECTIONS):
            obj = hypernode(rng)
            status, response, uid = reviewer.admit(obj)
            if status != 200 or response.get("uid") != uid:
                with lock:
                    problems.append(f"seed {worker} #{i}: HTTP {status} {response} for {obj}")
                continue
            with lock:
                counts["allowed" if response["allowed"] else "denied"] += 1
            if i % 20 == 0:
                body, content_type = malformed(rng)
                raw_status, data = reviewer.raw(body, content_type)
                with lock:
                    counts["malformed"] += 1
                    if raw_status >= 500:
                        problems.append(
                            f"malformed {body[:80]!r}: HTTP {raw_status} {data[:200]!r}"
                        )

    threads = [threading.Thread(target=run, args=(w,)) for w in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not problems, f"{len(problems)} problems, first: {problems[:3]}"
    assert counts["allowed"] + counts["denied"] == DIRECT
    assert counts["allowed"] > 100, counts  # the mix is real
    assert counts["denied"] > 1000, counts


def test_generated_hypernodes_through_the_api_server_are_admitted_or_denied_never_5xx(
    manager: ManagerProcess, client: KubeClient
) -> None:
    rng = random.Random(4)
    created: list[str] = []
    denied = 0
    server_errors: list[str] = []
    for _ in range(THROUGH_API):
        obj = hypernode(rng)
        try:
            client.create(R.HYPERNODES, obj)
            created.append(obj["metadata"]["name"])
        except ApiError as e:
            if e.status >= 500:
                server_errors.append(f"HTTP {e.status}: {e.message[:300]} for {obj}")
            else:
                denied += 1
    for name in created:
        delete_quietly(client, R.HYPERNODES, name)
    assert not server_errors, f"{len(server_errors)} 5xx, first: {server_errors[:2]}"
    assert created, "no generated HyperNode was valid"
    assert denied, "no generated HyperNode was denied"
