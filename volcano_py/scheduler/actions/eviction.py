"""The eviction engine shared by ``preempt`` and ``reclaim``: pick the cheapest domain.

For one starving job (admitted — a Pending PodGroup never evicts —, pending tasks, allocate
could not place it, and not for a reason no freed room changes: gated pods, DRA claims,
unusable volume claims):

- **Domains.** A topology job's candidate domains are the HyperNodes of its reach (tier
  within the hard bound, or the top for soft mode; under the highest allowed ancestor of its
  allocated HyperNode) — the gradient without the idle pre-filter, as Volcano's evict
  purpose. Any other job has one domain, the whole cluster.
- **Victims as bundles.** The candidates (occupying pods of other jobs in the action's scope,
  never a pod labelled/annotated ``volcano.sh/preemptable: "false"``, never one whose eviction
  the API server refused lately) of every job touching the domain go through the plugins'
  victim functions (``Session.preemptable`` / ``reclaimable``: gang, priority, conformance,
  proportion/capacity). A victim job offers its permitted surplus pods inside the domain one
  by one (a ``minTaskMember`` role keeps its count), and — when the whole gang is
  permitted — the whole gang as one bundle.
- **Cost.** Per domain the bundles are taken fewest-pods first (those freeing most of the
  job's need inside the domain per evicted pod, then the lowest priority, then the smallest)
  until the job fits (a trial placement in a discarded Statement, run only once the freed
  total could cover the need), then each chosen bundle is dropped again if the job still
  fits without it. The domain's cost is (pods evicted, highest victim priority, gangs touched);
  the least wins, ties to the lower tier then the name.
- **Bound.** Domains are ordered by a cheap lower bound (pods needed to cover the resource
  shortfall with the largest permitted pods); at most ``ssn.evict_max_hypernodes`` feasible
  domains are evaluated and a domain whose bound cannot beat the best so far is skipped.

Nothing is written here: the choice lands in ``ssn.evictions`` and ``ssn.nominations``.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

from volcano_py.api import JSON
from volcano_py.api.constants import PodGroupPhase
from volcano_py.metrics import EVICTION_TRANSACTIONS, PREEMPTION_ATTEMPTS, PREEMPTION_VICTIMS
from volcano_py.scheduler.actions.allocate_sub_jobs import (
    _fresh_shape,
    _restore,
    _save,
    ordered_sub_jobs,
    trial,
)
from volcano_py.scheduler.actions.dra_claims import DRA_NOT_SUPPORTED_REASON
from volcano_py.scheduler.actions.eviction_domains import (
    CLUSTER_DOMAIN,
    EVICTABLE_STATES,
    DomainChoice,
    Scope,
    VictimFn,
    candidate_domains,
    not_preemptable,
)
from volcano_py.scheduler.actions.placement import place_tasks
from volcano_py.scheduler.actions.scheduling_gates import SCHEDULING_GATED_REASON
from volcano_py.scheduler.actions.volume_claims import VOLUME_CLAIMS_REASON
from volcano_py.scheduler.api.job_info import JobInfo, task_role
from volcano_py.scheduler.api.resource import Resource
from volcano_py.scheduler.api.task_info import READY, TaskInfo, TaskStatus
from volcano_py.scheduler.framework.interface import Eviction, JobFit
from volcano_py.scheduler.framework.session import Session

# why a job waits when no eviction could help it
NO_ROOM_HELPS = frozenset({SCHEDULING_GATED_REASON, DRA_NOT_SUPPORTED_REASON, VOLUME_CLAIMS_REASON})


class EvictionPlanner:
    """Chooses victims for one preemptor job (see the module docstring)."""

    def __init__(
        self,
        ssn: Session,
        job: JobInfo,
        victim_fn: VictimFn,
        in_scope: Callable[[JobInfo], bool],
        taken: set[str],
    ) -> None:
        """``in_scope(victim job)``: the action's scope; ``taken``: already chosen victims."""
        self.ssn = ssn
        self.job = job
        self.victim_fn = victim_fn
        self.in_scope = in_scope
        self.taken = taken
        self.preemptor = job.pending_tasks()[0]
        self.placement: dict[str, str] = {}
        self._protected_cache: dict[str, bool] = {}
        self._last_fit: frozenset[str] = frozenset()
        self._domain = CLUSTER_DOMAIN
        self.need = Resource()
        for task in job.pending_tasks()[: max(job.min_member - job.ready_task_num(), 1)]:
            self.need.add(task.resreq)

    def _protected(self, task: TaskInfo) -> bool:
        known = self._protected_cache.get(task.key)
        if known is None:
            known = self._protected_cache[task.key] = not_preemptable(task, self.ssn.jobs)
        return known

    def _nodes(self, domain: str) -> list[str]:
        if domain == CLUSTER_DOMAIN:
            return list(self.ssn.node_names)
        return [n.name for n in self.ssn.nodes_in(domain)]

    def _candidates(self, node_names: list[str]) -> list[TaskInfo]:
        ssn = self.ssn
        out = []
        for name in node_names:
            for task in ssn.nodes[name].tasks.values():
                if task.status not in EVICTABLE_STATES or task.job == self.job.key:
                    continue
                if task.key in self.taken or task.key in ssn.unevictable:
                    continue
                victim_job = ssn.jobs.get(task.job)
                if victim_job is None or not self.in_scope(victim_job):
                    continue
                if self._protected(task):
                    continue
                out.append(task)
        return out

    def _bundles(self, in_domain: list[TaskInfo]) -> list[list[TaskInfo]]:
        """Surplus pods one by one, and whole gangs, as the victim functions permit."""
        ssn = self.ssn
        inside = {t.key for t in in_domain}
        jobs = sorted({t.job for t in in_domain})
        offered: list[TaskInfo] = list(in_domain)
        for uid in jobs:
            offered += [
                t
                for t in ssn.jobs[uid].tasks.values()
                if t.status in READY and t.key not in inside and t.node_name
            ]
        # a role's spare pods first: a victim function that permits only the first few of a job
        # (capacity, proportion: down to the queue's share) then permits pods that can go
        spare = {uid: ssn.jobs[uid].role_surplus() for uid in jobs}
        offered.sort(key=lambda t: spare[t.job].get(task_role(t), 1) <= 0)
        permitted = {t.key for t in self.victim_fn(self.preemptor, offered)}
        bundles: list[list[TaskInfo]] = []
        for uid in jobs:
            victim_job = ssn.jobs[uid]
            ready = [t for t in victim_job.tasks.values() if t.status in READY]
            surplus = len(ready) - victim_job.min_member
            roles = spare[uid]  # a role at its minTaskMember keeps its pods
            for task in sorted((t for t in in_domain if t.job == uid), key=lambda t: t.key):
                if surplus <= 0:
                    break
                role = task_role(task)
                if task.key in permitted and roles.get(role, 1) > 0:
                    bundles.append([task])
                    surplus -= 1
                    if role in roles:
                        roles[role] -= 1
            whole = ready and all(t.key in permitted for t in ready)
            if whole and not any(t.key in ssn.unevictable or self._protected(t) for t in ready):
                bundles.append(sorted(ready, key=lambda t: t.key))
        return bundles

    def fits(self, victims: list[TaskInfo], node_names: list[str]) -> bool:
        """Whether the job's gang fits on ``node_names`` once ``victims`` are gone (a trial)."""
        ssn, job = self.ssn, self.job
        victims = list({t.key: t for t in victims}.values())
        for task in victims:
            ssn.own_node(task.node_name).remove_task(task)
            ssn.fire_deallocate(task)
        stmt = ssn.statement()
        saved = _save(job)
        try:
            if job.has_sub_group_policy():
                # SubJobs each in their own gradient inside the domain, as allocate does
                domain = ssn.hypernodes.get(self._domain, ssn.tree.top)
                shapes = {uid: _fresh_shape(sj) for uid, sj in job.sub_jobs.items()}
                trial(ssn, stmt, job, domain, ordered_sub_jobs(job), shapes)
            else:
                place_tasks(ssn, stmt, job, [ssn.nodes[n] for n in node_names], Counter())
            ok = len(stmt) > 0 and ssn.job_ready(job)
            if ok:
                self.placement = {t.key: t.node_name for t in stmt.operations}
                self._last_fit = frozenset(t.key for t in victims)
            return ok
        finally:
            stmt.discard()
            _restore(job, saved)
            for task in reversed(victims):
                ssn.own_node(task.node_name).add_task(task)
                ssn.fire_allocate(task)

    def _lower_bound(self, node_names: list[str], bundles: list[list[TaskInfo]]) -> int | None:
        """Pods that must go at least (largest first per short resource); None: never fits."""
        idle = Resource()
        for name in node_names:
            idle.add(self.ssn.nodes[name].idle)
        inside = set(node_names)
        pods = [t for b in bundles for t in b if t.node_name in inside]
        bound = 0
        for resource, amount in self.need.items():
            short = amount - idle.get(resource)
            if short <= 0:
                continue
            sizes = sorted((t.resreq.get(resource) for t in pods), reverse=True)
            count = 0
            while short > 0 and count < len(sizes) and sizes[count] > 0:
                short -= sizes[count]
                count += 1
            if short > 0:
                return None
            bound = max(bound, count)
        return bound

    def _big_enough(self, node_names: list[str]) -> bool:
        """The domain's allocatable covers the need (else no eviction can help)."""
        total = Resource()
        nodes = self.ssn.nodes
        for name in node_names:
            total.add(nodes[name].allocatable)
        return self.need.less_equal(total)

    def _cost(self, victims: list[TaskInfo]) -> tuple[int, int, int]:
        jobs = self.ssn.jobs
        top = max((jobs[t.job].priority for t in victims), default=0)
        return (len(victims), top, len({t.job for t in victims}))

    def evaluate(self, domain: str, tier: int) -> DomainChoice:
        """The cheapest victim set found in ``domain`` (``feasible`` False when none works)."""
        choice = DomainChoice(domain, tier)
        self._domain = domain
        node_names = self._nodes(domain)
        bundles = self._bundles(self._candidates(node_names))
        inside = set(node_names)
        jobs = self.ssn.jobs
        need = list(self.need.items())

        def freed(bundle: list[TaskInfo]) -> float:
            """Share of the need this bundle frees inside the domain, per pod evicted."""
            total = 0.0
            for resource, amount in need:
                got = sum(t.resreq.get(resource) for t in bundle if t.node_name in inside)
                total += min(got, amount) / amount if amount > 0 else 0.0
            return total / len(bundle)

        # fewest pods first: the bundles freeing most of the need per pod, then the cheapest
        bundles.sort(key=lambda b: (-freed(b), jobs[b[0].job].priority, len(b), b[0].key))
        idle = Resource()
        for name in node_names:
            idle.add(self.ssn.nodes[name].idle)
        chosen: list[list[TaskInfo]] = []
        fitted = self.need.less_equal(idle) and self.fits([], node_names)
        for bundle in bundles:
            if fitted:
                break
            chosen.append(bundle)
            for task in bundle:
                if task.node_name in inside:
                    idle.add(task.resreq)
            # the trial placement only once the freed total could cover the need
            fitted = self.need.less_equal(idle) and self.fits(
                [t for b in chosen for t in b], node_names
            )
        if not fitted:
            choice.note = "not enough to evict"
            return choice
        # drop what is not needed after all, the least useful first
        for bundle in sorted(chosen, key=lambda b: (freed(b), -len(b))):
            rest = [b for b in chosen if b is not bundle]
            left = idle.clone()
            for task in bundle:
                if task.node_name in inside and all(task not in b for b in rest):
                    left.sub(task.resreq)
            if self.need.less_equal(left) and self.fits([t for b in rest for t in b], node_names):
                chosen, idle = rest, left
        choice.victims = list({t.key: t for b in chosen for t in b}.values())
        if self._last_fit != frozenset(t.key for t in choice.victims):
            self.fits(choice.victims, node_names)
        choice.placement = dict(self.placement)
        choice.cost = self._cost(choice.victims)
        choice.feasible = True
        return choice

    def ordered_domains(self) -> list[tuple[int | None, int, str]]:
        """(lower bound, tier, domain), cheapest bound first; None bounds (never fit) last."""
        ordered: list[tuple[int | None, int, str]] = []
        for domain, tier in candidate_domains(self.ssn, self.job):
            node_names = self._nodes(domain)
            if node_names and self._big_enough(node_names):
                # every permitted victim is a candidate: the bound over candidates holds
                candidates = self._candidates(node_names)
                ordered.append((self._lower_bound(node_names, [candidates]), tier, domain))
        big = 1 << 62
        ordered.sort(key=lambda o: (big if o[0] is None else o[0], o[1], o[2]))
        return ordered

    def report(self) -> list[JSON]:
        """Every candidate domain, evaluated (``explain``): victims, cost, what was decided."""
        out: list[JSON] = []
        limit = max(self.ssn.evict_max_hypernodes, 1)
        for rank, (bound, tier, domain) in enumerate(self.ordered_domains()):
            entry: JSON = {"hyperNode": domain, "tier": tier, "lowerBound": bound}
            if bound is None:
                entry["note"] = "the permitted victims cannot free enough"
            else:
                choice = self.evaluate(domain, tier)
                entry["feasible"] = choice.feasible
                entry["victims"] = sorted(t.key for t in choice.victims)
                pods, priority, gangs = choice.cost
                entry["cost"] = {"pods": pods, "maxVictimPriority": priority, "gangs": gangs}
                if rank >= limit:
                    entry["note"] = f"beyond max-hypernodes ({limit}): not tried by the action"
                elif choice.note:
                    entry["note"] = choice.note
            out.append(entry)
        return out

    def plan(self) -> tuple[DomainChoice | None, list[DomainChoice]]:
        """The best domain (None when no domain works) and every domain evaluated."""
        ordered = [o for o in self.ordered_domains() if o[0] is not None]
        best: DomainChoice | None = None
        tried: list[DomainChoice] = []
        for bound, tier, domain in ordered[: max(self.ssn.evict_max_hypernodes, 1)]:
            if best is not None and bound is not None and bound > best.cost[0]:
                break
            choice = self.evaluate(domain, tier)
            tried.append(choice)
            if choice.feasible and (
                best is None or (choice.cost, choice.tier) < (best.cost, best.tier)
            ):
                best = choice
        return best, tried


def evict_for_jobs(
    ssn: Session,
    action: str,
    victim_fn: VictimFn,
    scope: Scope,
) -> None:
    """Run the planner for every starving job in job order; record evictions and nominations."""
    taken = {e.task.key for e in ssn.evictions}
    starving = [
        job
        for job in ssn.jobs.values()
        if job.key in ssn.job_fit
        and ssn.job_fit[job.key].reason not in NO_ROOM_HELPS
        and job.phase != PodGroupPhase.PENDING  # not admitted: never evicts (Volcano)
        and job.pending_tasks()
        and ssn.job_starving(job)
        and job.key not in ssn.nominations
        and ssn.job_valid(job) is None
        and not waiting_for_releases(ssn, job)
        and not _never_preempts(job)
    ]
    starving.sort(key=ssn.job_order_key())
    preempting = action.endswith("preempt")
    victims = 0
    for job in starving:
        if preempting:
            PREEMPTION_ATTEMPTS.inc()
        planner = EvictionPlanner(ssn, job, victim_fn, functools.partial(scope, job), taken)
        best, _ = planner.plan()
        if best is None:
            continue
        if not best.victims:
            continue  # it fits already: allocate will place it next cycle
        victims += len(best.victims)
        EVICTION_TRANSACTIONS.labels(action).inc()
        for task in best.victims:
            taken.add(task.key)
            ssn.evictions.append(Eviction(task, job.key, best.domain, action))
        ssn.nominations[job.key] = best.domain
        ssn.nominated_nodes[job.key] = best.placement
        ssn.job_fit[job.key] = JobFit(
            ssn.job_fit[job.key].reason,
            f"{action}: evicting {len(best.victims)} pod(s) in {best.domain} "
            f"for this PodGroup; " + ssn.job_fit[job.key].message,
        )
    if preempting:
        PREEMPTION_VICTIMS.set(victims)


def _never_preempts(job: JobInfo) -> bool:
    """The preemptor pod says ``preemptionPolicy: Never`` (Kubernetes; Volcano honours it)."""
    spec = job.pending_tasks()[0].pod.get("spec") or {}
    return spec.get("preemptionPolicy") == "Never"


def waiting_for_releases(ssn: Session, job: JobInfo) -> bool:
    """A job already nominated whose domain still has pods terminating: do not evict again."""
    nominated = job.nominated_hypernode()
    if not nominated:
        return False
    names = ssn.node_names if nominated == CLUSTER_DOMAIN else ssn.real_nodes.get(nominated, ())
    return any(t.status == TaskStatus.RELEASING for n in names for t in ssn.nodes[n].tasks.values())


def eviction_report(ssn: Session, job: JobInfo, victim_fn: VictimFn, scope: Scope) -> list[JSON]:
    """Per candidate domain what an eviction action would take for ``job`` (``explain``)."""
    if not job.pending_tasks():
        return []
    planner = EvictionPlanner(ssn, job, victim_fn, functools.partial(scope, job), set())
    return planner.report()
