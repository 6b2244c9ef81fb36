"""Hierarchical DRF's tree (``plugins/support/hdrf.py``) and the heap of queues allocate uses.

The figures are Volcano's rules (``pkg/scheduler/plugins/drf``, docs/design/hdrf.md) worked
by hand; the example clusters are in the ``hdrf_*`` scenarios.
"""

from __future__ import annotations

import pytest

from volcano_py.api.errors import FieldError
from volcano_py.api.queue import Queue
from volcano_py.scheduler.actions.queue_heap import QueueHeap
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.plugins.support.hdrf import HdrfTree, parse_weight

GI = 2**30


def cpu_mem(cpu: float, mem_gi: float = 0) -> Resource:
    return Resource(int(cpu * 1000), int(mem_gi * GI))


def tree_10x10(jobs: dict[str, tuple[str, str, Resource, Resource]]) -> HdrfTree:
    """A tree over 10 cpu / 10Gi; ``jobs``: name -> (hierarchy, weights, held, request)."""
    tree = HdrfTree(cpu_mem(10, 10))
    allocated = Resource()
    for name, (path, weights, held, request) in jobs.items():
        tree.set_job(name, path, weights, held, request)
        allocated.add(held)
    tree.update(allocated)
    return tree


def test_parent_scales_children_to_smallest_share() -> None:
    # the design doc's first case: dev holds 8 cpu (share 0.8), prod half the memory
    # (0.5); eng counts dev scaled to 0.5 (5 cpu), so eng's share is 0.5, not 0.8
    tree = tree_10x10(
        {
            "dev": ("root/eng/dev", "1/1/1", cpu_mem(8), cpu_mem(20)),
            "prod": ("root/eng/prod", "1/1/1", cpu_mem(0, 5), cpu_mem(0, 20)),
        }
    )
    eng = (tree.root.children or {})["eng"]
    assert eng.share == pytest.approx(0.5)
    assert eng.held["cpu"] == pytest.approx(5000)
    assert eng.held["memory"] == pytest.approx(5 * GI)


def test_saturated_child_counts_unscaled_and_blocks_nothing() -> None:
    # a job holding all it asks for is saturated: it is added as it is, and the smallest
    # share is taken among the others (1 cpu), so the parent holds 6 + 1
    tree = tree_10x10(
        {
            "full": ("root/p/full", "1/1/1", cpu_mem(6), cpu_mem(6)),
            "small": ("root/p/small", "1/1/1", cpu_mem(1), cpu_mem(8)),
        }
    )
    p = (tree.root.children or {})["p"]
    assert (p.children or {})["full"].saturated
    assert not p.saturated  # not all its children are
    assert p.share == pytest.approx(0.7)


def test_fully_allocated_resource_saturates_jobs_that_ask_for_it() -> None:
    tree = tree_10x10(
        {
            "a": ("root/a", "1/1", cpu_mem(10), cpu_mem(20)),
        }
    )
    a = (tree.root.children or {})["a"]
    assert a.saturated  # cpu is no longer demanding: nothing more can come
    assert tree.root.saturated


@pytest.mark.parametrize(
    ("left", "right", "first"),
    [
        # eng 2 cpu / weight 2 = 0.1 against sci 4 cpu / weight 8 = 0.05: sci first
        ("root/eng/prod", "root/sci/prod", "right"),
        # same parent: prod 1 cpu / 8 against dev 1 cpu / 2: prod first
        ("root/eng/prod", "root/eng/dev", "left"),
    ],
    ids=["level-1-weights", "level-2-weights"],
)
def test_compare_weighs_each_level(left: str, right: str, first: str) -> None:
    tree = tree_10x10(
        {
            "ep": ("root/eng/prod", "1/2/8", cpu_mem(1), cpu_mem(6)),
            "ed": ("root/eng/dev", "1/2/2", cpu_mem(1), cpu_mem(6)),
            "sp": ("root/sci/prod", "1/8/8", cpu_mem(2), cpu_mem(6)),
            "sd": ("root/sci/dev", "1/8/2", cpu_mem(2), cpu_mem(6)),
        }
    )
    result = tree.compare(left, right)
    assert (result < 0) if first == "left" else (result > 0)


def test_compare_puts_saturated_last_and_looks_down_on_ties() -> None:
    tree = tree_10x10(
        {
            "ep": ("root/eng/prod", "1/1/1", cpu_mem(2), cpu_mem(2)),  # saturated
            "ed": ("root/eng/dev", "1/1/1", cpu_mem(2), cpu_mem(6)),
            "sp": ("root/sci/prod", "1/1/1", cpu_mem(1), cpu_mem(6)),
            "sd": ("root/sci/dev", "1/1/1", cpu_mem(1), cpu_mem(6)),
        }
    )
    assert tree.compare("root/eng/dev", "root/eng/prod") < 0  # prod saturated: last
    # sci (2 x 0.1 = 0.2) < eng (0.2 + 0.2 = 0.4): sci's queues first whatever lies below
    assert tree.compare("root/sci/dev", "root/eng/dev") < 0
    assert tree.compare("root/sci/dev", "root/sci/prod") == 0  # equal all the way down
    assert tree.compare("", "root/sci/dev") == 0  # no hierarchy: only root is compared
    assert tree.compare("root/new/q", "root/sci/dev") < 0  # not in the tree yet: empty


@pytest.mark.parametrize(
    ("raw", "weight"),
    [("8", 8.0), ("2.5", 2.5), ("0.5", 1.0), ("x", 1.0)],
    ids=["whole", "fraction", "below-one", "not-a-number"],
)
def test_weight_parts_below_one_or_unreadable_count_as_one(raw: str, weight: float) -> None:
    assert parse_weight(raw) == weight


def test_clone_is_independent() -> None:
    tree = tree_10x10({"a": ("root/a", "1/1", cpu_mem(2), cpu_mem(6))})
    copy = tree.clone()
    copy.set_job("a", "root/a", "1/1", cpu_mem(5), cpu_mem(6))
    copy.update(cpu_mem(5))
    assert (copy.root.children or {})["a"].share == pytest.approx(0.5)
    assert (tree.root.children or {})["a"].share == pytest.approx(0.2)


def test_queue_reads_hierarchy_annotations() -> None:
    queue = Queue.from_dict(
        {
            "metadata": {
                "name": "root-eng-prod",
                "annotations": {
                    "volcano.sh/hierarchy": "root/eng/prod",
                    "volcano.sh/hierarchy-weights": "1/2/8",
                },
            }
        }
    )
    assert (queue.hierarchy, queue.hierarchy_weights) == ("root/eng/prod", "1/2/8")


def test_queue_with_bad_annotations_names_the_field() -> None:
    with pytest.raises(FieldError, match=r"metadata\.annotations"):
        Queue.from_dict({"metadata": {"name": "q", "annotations": ["volcano.sh/hierarchy"]}})


def test_queue_heap_pops_in_order() -> None:
    keys = {"a": 3, "b": 1, "c": 2, "d": 0}
    heap = QueueHeap(lambda x, y: keys[x] < keys[y])
    for name in "abcd":
        heap.push(name)
    assert [heap.pop() for _ in range(4)] == ["d", "b", "c", "a"]
    assert len(heap) == 0


def test_queue_heap_keeps_places_taken_before_keys_moved() -> None:
    # as Go's container/heap: a waiting queue whose key drops is not sifted until it is
    # pushed again, so the top taken earlier comes out first
    keys = {"a": 1, "b": 2, "c": 3}
    heap = QueueHeap(lambda x, y: keys[x] < keys[y])
    for name in "abc":
        heap.push(name)
    keys["c"] = 0
    assert heap.pop() == "a"
    heap.push("a")
    assert heap.pop() == "c"  # sifted when a's pop moved the last item to the top
