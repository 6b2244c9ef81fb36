"""A round's creates, many at a time: the API server's pace, not one round trip after another.

Who calls it: ``reconcile.py``, for ``plan.then``. Label discovery of 10,000 single-node
racks used to create them one request at a time, in series (with the webhook's review in
every round trip): the racks appeared at 7-10 a second (issue 44). Here a run of creates of
one tier (children still before parents: a tier's run ends before the next tier starts) is
written by ``WRITE_WORKERS`` threads at once; the pace is then the API client's, whose token
bucket (``--kube-api-qps`` / ``--kube-api-burst``, client-go's QPS/burst) limits every
request of the process, as client-go's does. Updates stay in the plan's order, one at a time
(the order is what keeps a node out of two leaves); so do short runs (under
``PARALLEL_FROM``), so a small round writes exactly as before.

Every write of a run is attempted; the first exception is raised once all have finished,
and the controller retries the (idempotent) reconcile as for any API error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from volcano_py.api import JSON

Pair = tuple[JSON | None, JSON]

WRITE_WORKERS = 16
PARALLEL_FROM = 16


def segments(pairs: Iterable[Pair], tier_of: Callable[[JSON], int]) -> list[list[Pair]]:
    """``pairs`` cut into runs: creates (no current object) of one tier together, else alone."""
    out: list[list[Pair]] = []
    for pair in pairs:
        last = out[-1] if out else None
        if (
            last is not None
            and pair[0] is None
            and last[-1][0] is None
            and tier_of(last[-1][1]) == tier_of(pair[1])
        ):
            last.append(pair)
        else:
            out.append([pair])
    return out


def run_all(calls: list[Callable[[], object]], workers: int = WRITE_WORKERS) -> None:
    """Run ``calls``: in order when few, else on ``workers`` threads; raise the first error."""
    if len(calls) < PARALLEL_FROM:
        for call in calls:
            call()
        return
    with ThreadPoolExecutor(workers, thread_name_prefix="hypernode-writes") as pool:
        futures = [pool.submit(call) for call in calls]
    errors = [e for f in futures if (e := f.exception()) is not None]
    if errors:
        raise errors[0]
