"""The indexed tree checks decide as the walk does (issue 44), and follow the store's changes."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from volcano_py.api.constants import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.kube.store import Store
from webhooks.hypernodes.tree import check_tree
from webhooks.hypernodes.treeindex import add_tree_indexes, check_tree_indexed

NAMES = ["a", "b", "c", "d"]
VERSIONS = itertools.count(1)


def member(kind: str, how: str, value: str) -> dict[str, Any]:
    if how == "exact":
        return {"type": kind, "selector": {"exactMatch": {"name": value}}}
    if how == "regex":
        return {"type": kind, "selector": {"regexMatch": {"pattern": value}}}
    return {"type": kind, "selector": {"labelMatch": {"matchLabels": {"rack": value}}}}


MEMBERS = st.one_of(
    st.builds(member, st.just("HyperNode"), st.just("exact"), st.sampled_from([*NAMES, "x"])),
    st.builds(member, st.just("HyperNode"), st.just("regex"), st.sampled_from(["^a", "b|c", "z"])),
    st.builds(member, st.just("Node"), st.just("exact"), st.sampled_from(["n1", "n2", "n3"])),
    st.builds(member, st.just("Node"), st.just("regex"), st.sampled_from(["n1", "^m"])),
    st.builds(member, st.just("Node"), st.just("label"), st.sampled_from(["r1", "r2"])),
)


@st.composite
def hypernodes(draw: st.DrawFn, name: str) -> dict[str, Any]:
    labels = {NETWORK_TOPOLOGY_SOURCE_LABEL: "label"} if draw(st.booleans()) else {}
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            # never reused, as the API server's: the selector cache trusts (name, version)
            "resourceVersion": str(next(VERSIONS)),
        },
        "spec": {"tier": draw(st.integers(1, 3)), "members": draw(st.lists(MEMBERS, max_size=3))},
    }


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    stored = [draw(hypernodes(n)) for n in draw(st.lists(st.sampled_from(NAMES), unique=True))]
    return stored, draw(hypernodes(draw(st.sampled_from([*NAMES, "e"]))))


def indexed_store(objects: list[dict[str, Any]]) -> Store:
    store = Store()
    assert add_tree_indexes(store)
    for obj in objects:
        store.put(obj["metadata"]["name"], obj)
    return store


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=clusters())
def test_indexed_tree_checks_decide_and_speak_as_the_walk(
    cluster: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    stored, obj = cluster
    store = indexed_store(stored)
    walked, indexed = check_tree(obj, store), check_tree_indexed(obj, store)
    assert indexed.denial == walked.denial
    assert indexed.warnings == walked.warnings


def test_indexes_follow_updates_and_deletes_of_the_store() -> None:
    spine = {
        "metadata": {"name": "spine"},
        "spec": {"tier": 2, "members": [member("HyperNode", "exact", "rack")]},
    }
    rack = {
        "metadata": {"name": "rack"},
        "spec": {"tier": 1, "members": [member("Node", "exact", "n1")]},
    }
    other = {
        "metadata": {"name": "other"},
        "spec": {"tier": 3, "members": [member("HyperNode", "exact", "rack")]},
    }
    store = indexed_store([spine, rack])
    assert "already has the parent" in (check_tree_indexed(other, store).denial or "")
    store.put("spine", {"metadata": {"name": "spine"}, "spec": {"tier": 2, "members": []}})
    assert check_tree_indexed(other, store).denial is None
    thief = {
        "metadata": {"name": "thief"},
        "spec": {"tier": 1, "members": [member("Node", "exact", "n1")]},
    }
    assert 'already a member of HyperNode "rack"' in (check_tree_indexed(thief, store).denial or "")
    store.remove("rack")
    assert check_tree_indexed(thief, store).denial is None
