"""The scheduler's cache: an incremental model of the cluster fed by informers.

``SchedulerCache`` (``scheduler_cache.py``) is what callers use; its parts own their state
beside it (``nodes.py``, ``jobs.py`` with ``implicit_jobs.py`` and ``allocated_index.py``,
``parking.py``, ``lost_members.py``, ``snapshot.py``), the way Kueue keeps its TAS cache in
files beside each other.
"""

from volcano_py.scheduler.cache.implicit_jobs import Classifier
from volcano_py.scheduler.cache.scheduler_cache import SchedulerCache

__all__ = ["Classifier", "SchedulerCache"]
