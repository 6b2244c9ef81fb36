"""The embedded scheduler: gang + network-topology-aware placement (Volcano's scheduler).

A tour, in the order data flows:

- ``cache.SchedulerCache`` — fed by the shared informers (Nodes, Pods, PodGroups, Queues,
  HyperNodes), incremental; ``snapshot()`` is cheap (copy-on-write nodes) and returns an
  ``api.snapshot.Snapshot``. A package of parts that own their state (nodes, jobs and
  implicit jobs, parking, snapshot); it only *reports* cluster events to parking, and the
  checks declare which events un-park a job (``api/wake_hints.py``).
- ``api/`` — ``Resource`` (integer vectors), ``TaskInfo``, ``JobInfo``, ``SubJobInfo``,
  ``NodeInfo``, ``QueueInfo``, ``HyperNodeInfo`` and the ``HyperNodeTree`` with its virtual
  ``<cluster-top-hypernode>``, and the ``Snapshot`` a session opens on.
- ``framework/`` — Volcano's framework package, one concept per module, in layers (each
  imports only those below it; import-linter's "Scheduler layers" contract):

  - ``interface`` — the ``Plugin`` / ``Action`` protocols, the extension-point function
    types, the small records (``ValidateResult``, ``EventHandler``, ``JobFit``, ``Eviction``)
    ``StatementTarget`` and ``Binder`` (what a session hands committed tasks to);
  - ``statement.Statement`` — allocate / discard / commit, exact inverses, on a
    ``StatementTarget``;
  - ``extension_points.ExtensionPoints`` — the plugins' functions, registered
    (``add_*_fn``) and called in tier order;
  - ``session.Session`` — one cycle's state (nodes copy-on-write, jobs, queues, the tree,
    binds, fits, evictions) plus its extension points; it never sees a registry;
  - ``registry`` — ``PluginRegistry`` (and its enqueue fallback), ``ActionRegistry``,
    ``load_conf``; ``framework.open_session`` / ``close_session`` build, open and close the
    plugins of the configured tiers;
  - ``conf`` / ``arguments`` / ``volcano_names`` — ``volcano-scheduler.conf``, typed plugin
    arguments, every name a Volcano release accepts.
- ``topology`` — per-job network topology at session open (tierName translation, soft mode,
  allocated HyperNode checks and recovery).
- ``actions/`` (five, seven names) — ``enqueue`` (Pending -> Inqueue through the session's
  enqueue votes), ``allocate`` (gradients from the lowest tier up, gang commit or discard;
  SubJobs in ``allocate_sub_jobs``), ``backfill`` (best-effort pods), ``preempt`` /
  ``gangpreempt`` (within a queue) and ``reclaim`` / ``gangreclaim`` (across queues), both on
  the ``eviction`` engine.
- ``plugins/`` (eleven) — ``priority``, ``gang``, ``predicates``, ``nodeorder``,
  ``network-topology-aware``, ``overcommit``, ``proportion``, ``capacity``, ``binpack``,
  ``drf``, ``conformance``; ``plugins/support/`` holds what they share that is not a plugin
  (node affinity matching, queue attributes and quota hooks, the HyperNode resource cache
  and gradients). Actions reach plugins only through the session's extension points; actions
  and plugins never import each other.
- ``status`` — PodGroup phase/conditions and pod conditions, computed (pure).
- ``writer`` — the cycle's writes: ``pods/binding``, PodGroup updates (off the cycle,
  ``status_writes``), pod conditions, events, evictions (``KubeWriter``) or the in-memory
  ``MemoryWriter``; ``binds`` (the session's binder) and ``eviction_writes`` feed it.
  ``queue_status`` writes Queue status through its own client, after the cycle.
- ``job_updater`` — at session close (Volcano's ``closeSession``): each job's PodGroup status
  to the writer, its pods told why they wait, the job settled or parked.
- ``scheduler`` — ``run_cycle`` and the ``Scheduler`` loop the manager runs;
  ``capacity_metrics`` exports free capacity per HyperNode after a cycle.
- ``simulator`` / ``treeview`` / ``treesvg`` — the in-process scheduler and the tree views
  behind ``volcano-py simulate``, ``explain`` and ``tree``.

Layering: this package imports ``volcano_py.api``, ``volcano_py.kube`` and
``volcano_py.metrics`` only.
"""
