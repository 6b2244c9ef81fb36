"""``NodeSearch``: how many feasible nodes a task's node search finds before it stops.

Volcano's scheduler does not check every node for every task: once it has found enough
feasible nodes it stops and scores only those, and the next search starts where the last one
stopped, so the cluster is covered in turn (kube-scheduler's ``percentageOfNodesToScore`` is
the same idea). The number is Volcano's, from its three flags, which ``volcano-py manager``
takes under the same names:

- a list of at most ``--minimum-feasible-nodes`` nodes (default 100) is searched whole;
- otherwise the search stops after ``--percentage-nodes-to-find`` percent of the list
  (default 0: adaptive, ``50 - nodes / 125`` percent, never below
  ``--minimum-percentage-nodes-to-find``, default 5), and never after fewer than
  ``--minimum-feasible-nodes``;
- ``--percentage-nodes-to-find 100`` searches every node (the best node of the cluster, at
  the cost of scoring all of them).

So on 500 nodes a task looks for 230 feasible nodes, on 5,000 for 500: the per-task cost stops
growing with the cluster. A task that fits nowhere is still checked against every node, so an
unschedulable task's reasons count the whole list. Topology decisions do not change: the
HyperNode a gang goes to is chosen before its nodes are searched, and searched lists of a
HyperNode's nodes are usually below the minimum.

The search's start is kept from one task to the next and from cycle to cycle (the scheduler
holds one ``NodeSearch``); a list searched whole always starts at its first node, so small
clusters (and every scenario under 100 nodes) place exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

BASELINE_PERCENTAGE = 50
DEFAULT_MIN_NODES = 100
DEFAULT_MIN_PERCENTAGE = 5
DEFAULT_PERCENTAGE = 0


@dataclass(slots=True)
class NodeSearch:
    """The search limits (Volcano's flags) and where the next capped search starts."""

    min_nodes: int = DEFAULT_MIN_NODES
    min_percentage: int = DEFAULT_MIN_PERCENTAGE
    percentage: int = DEFAULT_PERCENTAGE
    next_start: int = 0

    def feasible_to_find(self, total: int) -> int:
        """How many feasible nodes of a list of ``total`` to find before stopping."""
        if total <= self.min_nodes or self.percentage >= 100:
            return total
        percentage = self.percentage
        if percentage <= 0:
            percentage = max(BASELINE_PERCENTAGE - total // 125, self.min_percentage)
        return max(total * percentage // 100, self.min_nodes)

    def start_of(self, total: int, capped: bool) -> int:
        """Where a search of ``total`` nodes starts (0 when the list is searched whole)."""
        return self.next_start % total if capped and total else 0

    def searched(self, start: int, examined: int, total: int) -> None:
        """A capped search from ``start`` looked at ``examined`` nodes: the next starts after."""
        if total:
            self.next_start = (start + examined) % total
