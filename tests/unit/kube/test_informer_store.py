from __future__ import annotations

from typing import Any

from volcano_py.kube.store import Store, key_of, namespace_index


def pod(name: str, ns: str = "default", node: str = "", rv: str = "1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
        "spec": {"nodeName": node},
    }


def by_node(obj: dict[str, Any]) -> list[str]:
    node = obj["spec"].get("nodeName")
    return [node] if node else []


def test_store_key_of_namespaced_and_cluster_scoped() -> None:
    assert key_of(pod("a", "ns")) == "ns/a"
    assert key_of({"metadata": {"name": "n1"}}) == "n1"


def test_store_index_follows_updates_and_removes() -> None:
    store = Store({"node": by_node, "namespace": namespace_index})
    store.put("default/a", pod("a", node="n1"))
    store.put("default/b", pod("b", node="n1"))
    assert sorted(o["metadata"]["name"] for o in store.by_index("node", "n1")) == ["a", "b"]

    store.put("default/a", pod("a", node="n2", rv="2"))
    assert [o["metadata"]["name"] for o in store.by_index("node", "n1")] == ["b"]
    assert [o["metadata"]["name"] for o in store.by_index("node", "n2")] == ["a"]

    store.remove("default/b")
    assert store.by_index("node", "n1") == []
    assert store.index_values("node") == ["n2"]
    assert store.index_keys("namespace", "default") == ["default/a"]


def test_store_add_indexers_indexes_existing_items() -> None:
    store = Store()
    store.put("default/a", pod("a", node="n1"))
    store.add_indexers({"node": by_node})
    assert store.index_keys("node", "n1") == ["default/a"]


def test_store_put_and_remove_return_previous_objects() -> None:
    store = Store()
    first = pod("a")
    assert store.put("default/a", first) is None
    assert store.put("default/a", pod("a", rv="2")) is first
    assert store.remove("default/a")["metadata"]["resourceVersion"] == "2"
    assert store.remove("default/a") is None
    assert len(store) == 0
