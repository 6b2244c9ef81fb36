"""volcano-py: Volcano's network-topology-aware gang scheduling in one Python process.

A tour of the package, from the bottom layer up (imports only point down; import-linter
enforces it, see ``setup.cfg``):

``volcano_py.api``
    Pure data, no I/O. The annotation and label keys Volcano uses, byte for byte; the
    resources we talk to (group/version/plural); Kubernetes quantities; label selectors;
    HyperNode member-selector resolution with RE2 semantics; small frozen typed views of
    HyperNode and PodGroup built from the API server's JSON, whose errors name the field.

``volcano_py.kube``
    The only package that talks to the API server (and the only importer of the
    ``kubernetes`` client, used for configuration loading alone). A raw JSON client,
    errors mapped from HTTP status, the ``SharedInformerFactory`` that owns one informer per
    resource (list, watch, bookmarks, re-list on 410, reconnect with backoff, indexed store,
    non-blocking handlers), the rate-limited workqueue, ``retry_on_conflict``, Lease leader
    election and the Event recorder.

``volcano_py.controllers``
    The controller framework (``framework.py``: registry object, the ``Controller``
    protocol, ``--controllers`` selection) and the controllers themselves.

``volcano_py.scheduler`` / ``webhooks``
    The embedded scheduler and the admission webhooks; both read the shared caches.

``volcano_py.ui``
    The read-only topology view (``/ui``, ``/api/topology``) every replica serves through the
    ops server, built from the scheduler cache; nothing below depends on it.

``volcano_py.manager`` / ``volcano_py.cli``
    The composition root that wires one process, and the ``volcano-py`` command.

Every cached object is the API server's JSON as plain dicts; typed views are built where
the domain needs them.
"""

__version__ = "0.1.0"
