"""Process-wide runtime settings for a process that caches a whole cluster.

CPython's cyclic garbage collector runs a young-generation pass every 700 container
allocations. Decoding a watch event allocates ~100 dicts and lists, and a cache of
50,000 pods holds millions of them, so with the default thresholds the collector, not the
JSON decoder, dominates ingest (``bench/bench_informer_ingest.py`` measured 14,000 vs
45,000 decoded pods/s). Cached API objects are acyclic trees freed by reference counting;
the collector only matters for the rare cycle, so it can run far less often.

The webhook threads share the interpreter with the scheduler and the controllers. CPython
lets a thread run 5 ms before it must offer the GIL to a waiting one. An admission gives the
GIL up at every socket read and write (and hand-off between gunicorn's threads); while a
background thread computes, it takes the GIL each time, and the admission waits up to one
interval to get it back (the "convoy"). ``tune_switch_interval()`` shortens the interval to
0.1 ms. Measured with ``bench/bench_process.py`` while 2,000 pods are placed: the webhook's
p99 was ~70 ms at 5 ms, 4.8-9.2 ms (median 6.4, 7 runs) at 0.5 ms and 3.2-6.3 ms (median
4.7, 5 runs) at 0.1 ms, and informer ingest, the scheduler's P3 and pg-controller's figure
did not move beyond run-to-run noise (a lone CPU-bound thread is never asked to switch, so
the in-process scheduler figures cannot).

``tune_gc()`` is called once by the composition root (and by the benchmarks, so they
measure the configuration that ships); ``freeze_after_sync()`` moves everything allocated
up to the first cache sync (the manager calls it once its first scheduling cycle ran, so
its full collection is not on the first bind's path) into the permanent generation, so
later full collections do not walk it, and then lowers the young threshold again
(``STEADY_THRESHOLDS``): once the initial lists are decoded the process serves admissions,
and a young pass holds the GIL for as long as it walks, so many short passes (10,000
objects: ~0.2 ms on an idle core) beat a few long ones (50,000 objects and the cycles freed
with them: 25-38 ms measured on the busy 2-core benchmark machine). Since CPython counts a
young generation as allocations minus deallocations, garbage freed by reference counting
never triggers a pass; only objects that stay (cache growth) or cycles do, and the webhook
app leaves none per request (``webhooks/app.py``). A re-list after a lost watch decodes at
the steady thresholds.

The price of rare full collections: a cycle that outlives a young pass waits in the old
generation, with everything it references, until one runs (at the steady thresholds, many
minutes under load). The churn soak (``bench/bench_churn.py``) found two such sources, each
holding a whole scheduling cycle (snapshot, jobs, tasks, pods): a closed ``Session`` and its
plugins referencing each other, and an API error kept by the raising frame. Both are gone and
tests guard them (``tests/unit/scheduler/test_no_cyclic_garbage.py``,
``tests/unit/kube/test_client_errors_no_cycles.py``): keep per-cycle structures acyclic.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path

GEN0_THRESHOLD = 50_000
GEN1_THRESHOLD = 20
GEN2_THRESHOLD = 100


def tune_gc() -> tuple[int, int, int]:
    """Raise the collector's thresholds; return the previous ones."""
    previous = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)
    return previous


SWITCH_INTERVAL_S = 0.0001


def tune_switch_interval() -> float:
    """Let waiting threads (admissions) take the GIL sooner; return the previous interval."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return previous


STEADY_THRESHOLDS = (10_000, 5, 100)


def freeze_after_sync() -> None:
    """Freeze every object alive now (``gc.freeze``); switch to ``STEADY_THRESHOLDS``."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*STEADY_THRESHOLDS)


# Linux lists a process's live threads here, one folder per thread id
TASKS = Path("/proc/self/task")


def threads_exited(native_ids: Iterable[int], timeout: float, tasks: Path = TASKS) -> bool:
    """Wait until the OS threads ``native_ids`` are gone, ``timeout`` at most; whether they are.

    ``Thread.join`` returns once a thread's Python part ended. The OS thread then still runs
    the C libraries' thread-exit handlers: OpenSSL 3.0 frees the thread's error and random
    state holding a lock of the whole process. A ``fork`` at that moment copies the lock held,
    and the child's first OpenSSL call in any thread (a TLS connection) waits for it forever
    holding the GIL, so the whole worker hangs. It happened to the manager's worker once
    in a bench under load (``kube/prefetch.py``'s threads had just been joined). Where the
    system does not list threads (not Linux) there is no way to tell: True at once.
    """
    if not tasks.is_dir():
        return True
    deadline = time.monotonic() + timeout
    pending = {str(tid) for tid in native_ids}
    while True:
        pending = {tid for tid in pending if os.path.exists(tasks / tid)}
        if not pending:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)
