"""The scheduler's in-memory model: resource vectors, tasks, jobs, nodes and HyperNodes.

Volcano's ``pkg/scheduler/api`` in Python: ``Resource``, ``TaskInfo``, ``JobInfo``,
``NodeInfo``, ``HyperNodeInfo``. These are mutable working objects owned by the scheduler
cache and the session; plugins read them and change them only through the Statement.
"""
