"""Pod bookkeeping is level-based: creates the informer has shown, or that expired, stop counting.

The stranded 12th pod of jobseq's "Restart job when job is unschedulable": a pod we created
and that was deleted before any sync saw it in the cache counted as Pending forever.
"""

from __future__ import annotations

from tests.unit.controllers.job.jobfakes import harness, load_job, podgroup_for, with_phase
from volcano_py.controllers.job.podwork import CREATE_EXPECTATION_TTL_S
from volcano_py.kube.clock import FakeClock

JOB = with_phase(
    load_job("""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job}
spec:
  minAvailable: 3
  tasks:
    - name: worker
      replicas: 3
      template:
        spec:
          containers: [{name: c, image: nginx}]
"""),
    "Pending",
    minAvailable=3,
)


def _created(h: object) -> list[str]:
    return [c.name for c in h.client.of("create", "pods")]  # type: ignore[attr-defined]


def test_a_pod_created_and_deleted_between_two_syncs_is_created_again() -> None:
    h = harness(jobs=(JOB,), podgroups=(podgroup_for(JOB, "Inqueue"),))
    h.run()
    bodies = {c.name: c.body for c in h.client.of("create", "pods")}
    h.client.calls.clear()
    # The informer delivered job-worker-2's add and delete before the next sync ran.
    h.sync.observed(bodies["job-worker-2"])
    h.run()
    assert _created(h) == ["job-worker-2"]
    assert h.status_writes() == []  # still three pods in flight: nothing new to say


def test_a_create_the_informer_never_shows_expires_on_the_clock() -> None:
    clock = FakeClock()
    h = harness(jobs=(JOB,), podgroups=(podgroup_for(JOB, "Inqueue"),), clock=clock)
    h.run()
    h.client.calls.clear()
    h.run()
    assert _created(h) == []
    clock.step(CREATE_EXPECTATION_TTL_S + 1)
    h.run()
    assert _created(h) == ["job-worker-0", "job-worker-1", "job-worker-2"]


def test_a_restart_deletes_our_pods_the_cache_has_not_shown_yet_by_uid() -> None:
    h = harness(jobs=(JOB,), podgroups=(podgroup_for(JOB, "Inqueue"),))
    h.run()
    h.client.calls.clear()
    h.run(action="RestartJob")
    deletes = h.client.of("delete", "pods")
    assert sorted(c.name for c in deletes) == ["job-worker-0", "job-worker-1", "job-worker-2"]
    assert all(c.body == {"uid": f"uid-{c.name}"} for c in deletes)
    (status,) = h.status_writes()
    assert status["state"]["phase"] == "Restarting"
    assert status["terminating"] == 3
