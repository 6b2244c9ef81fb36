"""A task's node search stops after Volcano's number of feasible nodes, and moves on.

``NodeSearch.feasible_to_find`` is Volcano's ``CalculateNumOfFeasibleNodesToFind`` (the
figures below are its formula worked by hand); ``select_node`` stops once it has that many
feasible nodes, starts the next capped search where this one stopped, checks every node for a
task that fits nowhere, and searches a list of at most ``--minimum-feasible-nodes`` whole from
its first node.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.unit.scheduler.helpers import session
from tests.unit.scheduler.objects import node, pod, podgroup
from volcano_py.commands.manager import options_from
from volcano_py.scheduler.actions.placement import select_node
from volcano_py.scheduler.api.node_info import NodeInfo
from volcano_py.scheduler.api.node_search import NodeSearch
from volcano_py.scheduler.api.task_info import TaskInfo
from volcano_py.scheduler.framework.session import Session


@pytest.mark.parametrize(
    ("total", "search", "expected"),
    [
        (0, NodeSearch(), 0),
        (100, NodeSearch(), 100),  # at the minimum: the whole list
        (101, NodeSearch(), 100),  # 50% of 101 is 50, raised to the minimum
        (500, NodeSearch(), 230),  # 50 - 500/125 = 46%
        (1000, NodeSearch(), 420),  # 42%
        (5000, NodeSearch(), 500),  # 10%
        (6000, NodeSearch(), 300),  # 50 - 48 = 2%, raised to the 5% floor
        (6000, NodeSearch(min_percentage=1), 120),  # 2%
        (500, NodeSearch(percentage=20), 100),  # 20% of 500 = 100
        (500, NodeSearch(percentage=10), 100),  # 50, raised to the minimum
        (500, NodeSearch(percentage=100), 500),
        (500, NodeSearch(min_nodes=0, percentage=1), 5),
        (500, NodeSearch(min_nodes=1000), 500),
    ],
)
def test_feasible_to_find_is_volcanos_formula(
    total: int, search: NodeSearch, expected: int
) -> None:
    assert search.feasible_to_find(total) == expected


def _cluster(nodes: int, cpu: str = "8") -> tuple[Session, TaskInfo, list[NodeInfo]]:
    objects = [node(f"n{i:04d}", {"cpu": cpu}) for i in range(nodes)]
    objects += [podgroup("pg", 1), pod("p0", "pg", {"cpu": "1"})]
    ssn = session(objects)
    task = next(iter(ssn.jobs["default/pg"].tasks.values()))
    return ssn, task, [ssn.nodes[name] for name in sorted(ssn.nodes)]


def _counting(ssn: Session) -> Counter[str]:
    """Count the nodes the session's predicates are asked about."""
    asked: Counter[str] = Counter()

    def count(_task: TaskInfo, node: NodeInfo) -> str | None:
        asked[node.name] += 1
        return None

    points = ssn._points.predicate  # the counter goes first: it sees every node asked about
    others = dict(points)
    points.clear()
    points["count"] = count
    points.update(others)
    return asked


def test_a_capped_search_stops_at_the_count_and_the_next_starts_after_it() -> None:
    ssn, task, nodes = _cluster(300)
    asked = _counting(ssn)
    wanted = ssn.node_search.feasible_to_find(300)
    assert wanted == 144  # 48% of 300
    first = select_node(ssn, task, nodes, Counter())
    assert first is not None
    assert first < wanted
    assert sorted(asked) == [n.name for n in nodes[:wanted]]
    assert ssn.node_search.next_start == wanted
    asked.clear()
    second = select_node(ssn, task, nodes, Counter())
    assert second is not None
    assert wanted <= second < 2 * wanted
    assert sorted(asked) == [n.name for n in nodes[wanted : 2 * wanted]]
    asked.clear()
    select_node(ssn, task, nodes, Counter())  # wraps round: 288..299, then 0..131
    expected = nodes[2 * wanted :] + nodes[: 3 * wanted - 300]
    assert sorted(asked) == sorted(n.name for n in expected)
    assert ssn.node_search.next_start == 3 * wanted - 300


def test_a_task_that_fits_nowhere_is_checked_against_every_node() -> None:
    ssn, task, nodes = _cluster(300, cpu="0.5")
    reasons: Counter[str] = Counter()
    assert select_node(ssn, task, nodes, reasons) is None
    assert sum(reasons.values()) == 300
    assert ssn.node_search.next_start == 0  # went all the way round


def test_a_short_list_is_searched_whole_from_its_first_node() -> None:
    ssn, task, nodes = _cluster(100)
    asked = _counting(ssn)
    ssn.node_search.next_start = 37  # left by an earlier capped search of a longer list
    for _ in range(3):
        select_node(ssn, task, nodes, Counter())
    assert set(asked.values()) == {3}
    assert len(asked) == 100
    assert ssn.node_search.next_start == 37


def test_percentage_100_searches_every_node_for_the_best() -> None:
    ssn, task, nodes = _cluster(300)
    ssn.node_search = NodeSearch(percentage=100)
    asked = _counting(ssn)
    select_node(ssn, task, nodes, Counter())
    assert len(asked) == 300


def test_the_manager_takes_volcanos_flag_names() -> None:
    from volcano_py.cli import build_parser

    args = build_parser().parse_args(
        [
            "manager",
            "--minimum-feasible-nodes=50",
            "--minimum-percentage-nodes-to-find=2",
            "--percentage-nodes-to-find=30",
        ]
    )
    assert options_from(args).node_search == NodeSearch(50, 2, 30)
    defaults = options_from(build_parser().parse_args(["manager"])).node_search
    assert defaults == NodeSearch(100, 5, 0)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["manager", "--percentage-nodes-to-find=101"])
