"""``WorkBudget``: how much placement work one job may take in a cycle.

One job that cannot be placed must not hold the cycle for everyone behind it (issue 44: a
5,000-task gang on 16 nodes held one cycle 219 s). Placement work is counted in **node
trials**: one pending task tried against one node (the predicates run on it; ``select_node``
adds how many nodes each search examined). Counting trials, not seconds, keeps the decision
the same on a loaded machine and in tests.

``allocate`` gives each job ``limit`` trials in its turn (``DEFAULT_NODE_TRIALS``: 100,000,
20 searches of 5,000 nodes that all refuse, or ~200 pods placed at 5,000 nodes; the measured
time is in docs/scheduler.md). A job that uses them up
stops placing (its trial is discarded, as for any gang not ready) and is tried again,
unbounded, after the rest of the queue: the jobs behind it are placed in the same cycle,
and a job that needs more work than the budget is still placed. The last job of a round,
with nobody behind it, gets an unbounded turn (it would only be tried again at once). A
search already started
finishes its task, so a turn can overshoot by one task's search (at most every node).
"""

from __future__ import annotations

DEFAULT_NODE_TRIALS = 100_000


class WorkBudget:
    """Node trials spent in a session, and the current job's turn against ``limit``."""

    __slots__ = ("_bounded", "_job", "_mark", "limit", "trials", "turns")

    def __init__(self, limit: int = DEFAULT_NODE_TRIALS) -> None:
        """No trial spent; every turn may take ``limit`` trials."""
        if limit < 1:
            raise ValueError(f"placement budget: {limit} node trials, want at least 1")
        self.limit = limit
        self.trials = 0  # every trial of the session
        self.turns: dict[str, list[int]] = {}  # job -> the trials of each of its turns
        self._job = ""
        self._mark = 0
        self._bounded = False

    def begin(self, job: str, *, bounded: bool = True) -> None:
        """``job``'s turn starts; ``bounded``: it may take ``limit`` trials."""
        self._job, self._mark, self._bounded = job, self.trials, bounded

    def exhausted(self) -> bool:
        """Whether the current turn used its budget (never when it is unbounded)."""
        return self._bounded and self.trials - self._mark >= self.limit

    def end(self) -> bool:
        """The turn is over: its trials are the job's; True when it ran out of budget."""
        over = self.exhausted()
        if self._job:
            self.turns.setdefault(self._job, []).append(self.trials - self._mark)
        self._job, self._bounded = "", False
        return over
