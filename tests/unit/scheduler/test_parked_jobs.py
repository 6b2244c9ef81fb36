"""``ParkedJobs`` against the plain rule it keeps: a release returns exactly the parked jobs
one of whose events happened after they were parked, or that were parked ``max_s`` ago."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from volcano_py.kube.clock import FakeClock
from volcano_py.scheduler.api.wake_hints import ALL_EVENTS, ClusterEvent
from volcano_py.scheduler.cache.parking import ParkedJobs

EVENTS = list(ClusterEvent)
EVENT_SETS = [ALL_EVENTS, frozenset({EVENTS[0]}), frozenset(EVENTS[1:3]), frozenset()]

step = st.one_of(
    st.tuples(st.just("park"), st.integers(0, 9), st.sampled_from(range(len(EVENT_SETS)))),
    st.tuples(st.just("discard"), st.integers(0, 9)),
    st.tuples(st.just("event"), st.sampled_from(EVENTS)),
    st.tuples(st.just("tick"), st.sampled_from([0.5, 4.0, 11.0])),
    st.tuples(st.just("look")),
    st.tuples(st.just("release")),
)


@given(st.lists(step, max_size=60))
def test_release_returns_what_the_rule_names(steps: list[tuple[object, ...]]) -> None:
    clock = FakeClock()
    parked = ParkedJobs(max_s=10.0, clock=clock)
    model: dict[str, tuple[int, float, frozenset[ClusterEvent]]] = {}
    epoch = seen = 0
    latest: dict[ClusterEvent, int] = {}
    for s in steps:
        match s:
            case ("park", job, which):
                events = EVENT_SETS[int(str(which))]
                parked.park(f"j{job}", events)
                model.pop(f"j{job}", None)
                model[f"j{job}"] = (seen, clock.now(), events)
            case ("discard", job):
                parked.discard(f"j{job}")
                model.pop(f"j{job}", None)
            case ("event", event):
                assert isinstance(event, ClusterEvent)
                parked.event(event)
                epoch += 1
                latest[event] = epoch
            case ("tick", seconds):
                clock.step(float(str(seconds)))
            case ("look",):
                parked.looking()
                seen = epoch
            case ("release",):
                oldest = clock.now() - 10.0
                due = {
                    job
                    for job, (at_epoch, at, events) in model.items()
                    if at_epoch < max((latest.get(e, 0) for e in events), default=0) or at < oldest
                }
                assert set(parked.release()) == due
                for job in due:
                    del model[job]
        assert len(parked) == len(model)
        assert all(job in parked for job in model)
