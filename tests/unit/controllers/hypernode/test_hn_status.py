from __future__ import annotations

from tests.unit.controllers.hypernode.hnfakes import FakeApi, exact, hypernode, label_member, regex
from volcano_py.controllers.hypernode.status import NodeCountIndex, NodeCountSync
from volcano_py.kube.foreground import Foreground


def build(*hypernodes: dict, nodes: dict[str, dict[str, str]] | None = None) -> NodeCountIndex:
    index = NodeCountIndex()
    for name, labels in (nodes or {}).items():
        index.node_upserted(name, labels)
    for obj in hypernodes:
        index.hypernode_upserted(obj)
    return index


NODES = {
    "gpu-1": {"rack": "r1"},
    "gpu-2": {"rack": "r1"},
    "gpu-3": {"rack": "r2"},
    "cpu-1": {"rack": "r2"},
}


def test_node_count_resolves_exact_regex_and_label_members_against_current_nodes() -> None:
    index = build(
        hypernode("by-exact", 1, [exact("gpu-1"), exact("gpu-1"), exact("ghost")]),
        hypernode("by-regex", 1, [regex("^gpu-")]),
        hypernode("by-label", 1, [label_member(rack="r2")]),
        hypernode("mixed", 1, [regex("gpu-1"), label_member(rack="r1")]),
        nodes=NODES,
    )
    assert index.node_count("by-exact") == 2  # exactMatch counts its name, like the scheduler
    assert index.node_count("by-regex") == 3
    assert index.node_count("by-label") == 2
    assert index.node_count("mixed") == 2  # distinct nodes, not members
    assert index.node_count("unknown") is None


def test_node_count_follows_hypernode_members_down_and_counts_distinct_nodes() -> None:
    index = build(
        hypernode("r1", 1, [label_member(rack="r1")]),
        hypernode("r2", 1, [label_member(rack="r2")]),
        hypernode("gpus", 1, [regex("^gpu")]),
        hypernode(
            "spine",
            2,
            [exact("r1", "HyperNode"), exact("r2", "HyperNode"), exact("gpus", "HyperNode")],
        ),
        hypernode("top", 3, [exact("spine", "HyperNode"), exact("missing", "HyperNode")]),
        nodes=NODES,
    )
    assert index.node_count("spine") == 4
    assert index.node_count("top") == 4


def test_node_count_follows_a_label_change_only_in_affected_hypernodes() -> None:
    index = build(
        hypernode("r1", 1, [label_member(rack="r1")]),
        hypernode("r2", 1, [label_member(rack="r2")]),
        hypernode("fixed", 1, [exact("gpu-1")]),
        hypernode("spine", 2, [exact("r1", "HyperNode"), exact("r2", "HyperNode")]),
        nodes=NODES,
    )
    assert index.node_count("spine") == 4
    affected = index.node_upserted("gpu-1", {"rack": "r2"})
    assert affected == {"r1", "r2", "spine"}
    assert (index.node_count("r1"), index.node_count("r2"), index.node_count("spine")) == (1, 3, 4)
    assert index.node_upserted("gpu-1", {"rack": "r2"}) == set()  # no change, nothing to do
    assert index.node_upserted("gpu-1", {"rack": "r2", "color": "red"}) == set()


def test_node_count_follows_node_add_and_delete_for_regex_members() -> None:
    index = build(
        hypernode("gpus", 1, [regex("^gpu")]),
        hypernode("top", 2, [exact("gpus", "HyperNode")]),
        nodes=NODES,
    )
    assert index.node_upserted("gpu-9", {}) == {"gpus", "top"}
    assert index.node_count("top") == 4
    assert index.node_upserted("cpu-9", {}) == set()
    assert index.node_deleted("gpu-1") == {"gpus", "top"}
    assert index.node_count("gpus") == 3


def test_node_count_updates_parents_when_a_child_appears_changes_or_goes() -> None:
    index = build(hypernode("top", 2, [exact("late", "HyperNode")]), nodes=NODES)
    assert index.node_count("top") == 0
    assert index.hypernode_upserted(hypernode("late", 1, [exact("gpu-1")])) == {"late", "top"}
    assert index.node_count("top") == 1
    index.hypernode_upserted(hypernode("late", 1, [exact("gpu-1"), exact("gpu-2")]))
    assert index.node_count("top") == 2
    assert index.hypernode_deleted("late") == {"top"}
    assert index.node_count("top") == 0


def test_node_count_survives_a_cycle_in_a_hand_made_tree() -> None:
    index = build(
        hypernode("a", 2, [exact("b", "HyperNode"), exact("gpu-1")]),
        hypernode("b", 2, [exact("a", "HyperNode"), exact("gpu-2")]),
        nodes=NODES,
    )
    assert index.node_count("a") == 2


def test_node_count_sync_writes_only_when_the_count_differs() -> None:
    api = FakeApi()
    obj = hypernode("r1", 1, [label_member(rack="r1")])
    api.put(obj)
    index = build(obj, nodes=NODES)
    sync = NodeCountSync(api, api.store, index)
    sync.sync("r1")
    assert api.writes() == [("patch", "r1", "status")]
    assert api.store.get("r1")["status"]["nodeCount"] == 2
    sync.sync("r1")
    sync.sync("gone")
    assert len(api.writes()) == 1
    index.node_upserted("gpu-3", {"rack": "r1"})
    sync.sync("r1")
    assert api.store.get("r1")["status"]["nodeCount"] == 3


def test_node_count_sync_writes_zero_for_an_empty_hypernode() -> None:
    api = FakeApi()
    obj = hypernode("empty", 1, [label_member(rack="none")])
    api.put(obj)
    sync = NodeCountSync(api, api.store, build(obj, nodes=NODES))
    sync.sync("empty")
    assert api.store.get("empty")["status"] == {"nodeCount": 0}


class AskedForeground(Foreground):
    """Records what each pause found, without waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bool] = []

    def pause(self, max_s: float = 0.0) -> bool:
        self.asked.append(super().pause(0))
        return self.asked[-1]


def test_node_count_sync_gives_way_to_binds_in_flight() -> None:
    """A count write asks for a pause in the binds running, then is written."""
    api = FakeApi()
    obj = hypernode("r1", 1, [label_member(rack="r1")])
    api.put(obj)
    fg = AskedForeground()
    sync = NodeCountSync(api, api.store, build(obj, nodes=NODES), foreground=fg)
    fg.queued(1)  # a bind in flight
    sync.sync("r1")
    fg.done()
    assert fg.asked == [False]  # it asked while a bind ran
    assert (api.store.get("r1") or {})["status"]["nodeCount"] == 2  # and wrote after its pause
