"""slimjson: Pods and Nodes decode without managedFields, and never into anything else."""

from __future__ import annotations

import random
import time
from typing import Any

import orjson
import pytest

from volcano_py.api.resources import NODES, PODGROUPS, PODS
from volcano_py.kube.slimjson import (
    decoder_for,
    loads_without_managed_fields,
    without_managed_fields,
)

JSON = dict[str, Any]


def entry(manager: str, fields: JSON) -> JSON:
    """A ManagedFieldsEntry, keys in the order kube-apiserver writes them."""
    return {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-26T20:44:12Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


def pod(name: str, managed: list[JSON], **meta: Any) -> JSON:
    """A Pod as the API server encodes it: managedFields last in metadata."""
    return {
        "metadata": {"name": name, "namespace": "ns", **meta, "managedFields": managed},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]},
    }


def expected(doc: Any) -> Any:
    """``doc`` with every metadata's managedFields removed."""
    if isinstance(doc, dict):
        return {
            k: expected(v)
            for k, v in doc.items()
            if not (k == "managedFields" and "name" in doc)  # ObjectMeta's only
        }
    if isinstance(doc, list):
        return [expected(v) for v in doc]
    return doc


KUBELET_FIELDS: JSON = {
    "f:status": {"f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:status": {}}}},
    "f:spec": {"f:containers": {'k:{"name":"c"}': {"f:image": {}}}},
}


def test_a_list_decodes_as_the_whole_list_minus_managed_fields() -> None:
    doc = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "42", "continue": "abc"},
        "items": [
            pod(f"p{i}", [entry("kubelet", KUBELET_FIELDS), entry("kwok", {"f:x": {}})])
            for i in range(20)
        ],
    }
    raw = orjson.dumps(doc)
    slim = without_managed_fields(raw)
    assert b"managedFields" not in slim
    assert len(slim) < len(raw) / 2
    assert loads_without_managed_fields(raw) == expected(doc)


def test_a_watch_event_and_an_object_without_managed_fields() -> None:
    event = {"type": "MODIFIED", "object": pod("p", [entry("kubelet", KUBELET_FIELDS)])}
    assert loads_without_managed_fields(orjson.dumps(event)) == expected(event)
    bare = {"metadata": {"name": "n"}, "status": {}}
    raw = orjson.dumps(bare)
    assert without_managed_fields(raw) is raw
    assert loads_without_managed_fields(raw) == bare


@pytest.mark.parametrize(
    "key",
    [
        'v:"finalizer]"',  # a ] inside a string: not the end of the array
        'k:{"name":"a]b","port":"]]"}',
        "v:]",
        'v:"]", "[x]"',
    ],
)
def test_brackets_and_quotes_inside_field_keys_do_not_end_the_cut(key: str) -> None:
    doc = {"items": [pod("a", [entry("m", {key: {}}), entry("n", {"f:y": {}})]), pod("b", [])]}
    raw = orjson.dumps(doc)
    assert b"managedFields" not in without_managed_fields(raw)
    assert loads_without_managed_fields(raw) == expected(doc)


def test_an_escaped_backslash_leaves_that_array_in_place_and_cuts_the_others() -> None:
    doc = {"items": [pod("a", [entry("m", {"v:back\\slash]": {}})]), pod("b", [entry("k", {})])]}
    decoded = loads_without_managed_fields(orjson.dumps(doc))
    assert decoded["items"][0] == doc["items"][0]  # kept whole: not provable
    assert decoded["items"][1] == expected(doc["items"][1])


def test_text_that_looks_like_the_member_inside_a_value_is_never_cut() -> None:
    tricky = ',"managedFields":[1]'
    doc = pod("a", [entry("m", {})], annotations={"note": tricky, tricky: "k"}, labels={"x": "]"})
    decoded = loads_without_managed_fields(orjson.dumps(doc))
    assert decoded == expected(doc)
    assert decoded["metadata"]["annotations"] == {"note": tricky, tricky: "k"}


def test_a_server_that_nests_an_array_gets_the_whole_answer_decoded() -> None:
    odd = entry("m", {"f:a": {}})
    odd["future"] = [1, [2]]  # no such field today; the first ] outside strings is not the end
    doc = {"items": [pod("a", [odd]), pod("b", [entry("n", {})])]}
    raw = orjson.dumps(doc)
    assert loads_without_managed_fields(raw) == orjson.loads(raw)


def test_random_documents_decode_to_the_whole_decode_minus_managed_fields() -> None:
    rng = random.Random(7)
    alphabet = 'ab]["\\{}:,/ é\n'

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))

    def fields(depth: int) -> JSON:
        if depth == 0:
            return {}
        return {text(): fields(depth - 1) for _ in range(rng.randint(0, 3))}

    for i in range(500):
        managed = [entry(text(), fields(3)) for _ in range(rng.randint(0, 3))]
        meta = {"labels": {text(): text()}, "annotations": {text(): text()}}
        doc = {"items": [pod(f"p{i}-{j}", managed, **meta) for j in range(rng.randint(1, 3))]}
        decoded = loads_without_managed_fields(orjson.dumps(doc))
        for got, want in zip(decoded["items"], doc["items"], strict=True):
            # cut, or (an escaped backslash inside) left whole: never anything in between
            assert got == expected(want) or got == want


def test_only_pods_and_nodes_are_decoded_without_managed_fields() -> None:
    assert decoder_for(PODS) is loads_without_managed_fields
    assert decoder_for(NODES) is loads_without_managed_fields
    # a custom resource may declare a field of that name anywhere: decoded whole
    group = {"metadata": {"name": "pg"}, "spec": {"x": 1, "managedFields": [{"a": "b"}]}}
    assert decoder_for(PODGROUPS)(orjson.dumps(group)) == group


def test_thousands_of_brackets_inside_field_keys_cost_one_pass() -> None:
    # env var names may hold "]" (Kubernetes 1.32+ accepts any printable name): a hostile
    # pod's managedFields can carry thousands of them, each a candidate end of the array.
    # Counting from the array's start for every candidate took 35 s here; one pass 0.03 s.
    env = {f'k:{{"name":"v{i}]"}}': {".": {}} for i in range(30_000)}
    doc = {"items": [pod("hostile", [entry("m", {"f:spec": {"f:env": env}})]), pod("b", [])]}
    raw = orjson.dumps(doc)
    started = time.process_time()  # CPU time: other processes' load does not count
    decoded = loads_without_managed_fields(raw)
    assert time.process_time() - started < 5.0  # a guard against the quadratic scan, not a figure
    assert decoded == expected(doc)
