"""Process-wide runtime settings for a process that caches a whole cluster.

CPython's cyclic garbage collector runs a young-generation pass every 700 container
allocations. Decoding a watch event allocates ~100 dicts and lists, and a cache of
50,000 pods holds millions of them, so with the default thresholds the collector, not the
JSON decoder, dominates ingest (``bench/bench_informer_ingest.py`` measured 14,000 vs
45,000 decoded pods/s). Cached API objects are acyclic trees freed by reference counting;
the collector only matters for the rare cycle, so it can run far less often.

The webhook threads share the interpreter with the scheduler and the controllers. CPython
lets a thread run 5 ms before it must offer the GIL to a waiting one; an admission that
arrives while the scheduler computes then waits in 5 ms steps. ``tune_switch_interval()``
shortens that to 0.5 ms: the webhook's p99 while 2,000 pods were placed fell from ~70 ms
to ~10 ms with no measurable cost to placement (``bench/bench_process.py``).

``tune_gc()`` is called once by the composition root (and by the benchmarks, so they
measure the configuration that ships); ``freeze_after_sync()`` moves everything allocated
up to the first cache sync into the permanent generation, so later full collections do
not walk it.
"""

from __future__ import annotations

import gc
import sys

GEN0_THRESHOLD = 50_000
GEN1_THRESHOLD = 20
GEN2_THRESHOLD = 100


def tune_gc() -> tuple[int, int, int]:
    """Raise the collector's thresholds; return the previous ones."""
    previous = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)
    return previous


SWITCH_INTERVAL_S = 0.0005


def tune_switch_interval() -> float:
    """Let waiting threads (admissions) take the GIL sooner; return the previous interval."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return previous


def freeze_after_sync() -> None:
    """Move every object alive now out of the collector's sight (``gc.freeze``)."""
    gc.collect()
    gc.freeze()
