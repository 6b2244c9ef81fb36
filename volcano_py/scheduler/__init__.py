"""The embedded scheduler: gang + network-topology-aware placement (Volcano's scheduler).

A tour, in the order data flows:

- ``cache.SchedulerCache`` — fed by the shared informers (Nodes, Pods, PodGroups,
  HyperNodes), incremental; ``snapshot()`` is cheap (copy-on-write nodes).
- ``api/`` — ``Resource`` (integer vectors), ``TaskInfo``, ``JobInfo``, ``NodeInfo``,
  ``HyperNodeInfo`` and the ``HyperNodeTree`` with its virtual ``<cluster-top-hypernode>``.
- ``framework/`` — ``conf`` (``volcano-scheduler.conf``), ``registry`` (``PluginRegistry``,
  ``ActionRegistry``), ``session.Session`` (extension points as named function maps),
  ``statement.Statement`` (allocate / discard / commit, exact inverses).
- ``topology`` — per-job network topology at session open (tierName translation, soft mode,
  allocated HyperNode checks and recovery).
- ``actions/`` — ``enqueue`` (Pending -> Inqueue with overcommit 1.2) and ``allocate``
  (gradients from the lowest tier up, gang commit or discard).
- ``plugins/`` — ``priority``, ``gang``, ``predicates``, ``nodeorder``,
  ``network-topology-aware``.
- ``status`` — PodGroup phase/conditions and pod conditions, computed (pure).
- ``writer`` — the only writer: ``pods/binding``, PodGroup updates, pod conditions, events
  (``KubeWriter``) or the in-memory ``MemoryWriter``.
- ``scheduler`` — ``run_cycle`` and the ``Scheduler`` loop the manager runs.
- ``simulator`` / ``treeview`` / ``treesvg`` — the in-process scheduler and the tree views
  behind ``volcano-py simulate``, ``explain`` and ``tree``.

Layering: this package imports ``volcano_py.api`` and ``volcano_py.kube`` only.
"""
