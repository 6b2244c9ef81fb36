"""Admission webhooks: the router, the Flask app factory and the HyperNode rules.

How the package fits together (see docs/admission.md):

- ``router.AdmissionRouter``: each admission service registers its path, its function
  ``AdmissionReview -> AdmissionResponse`` and its webhook rules (``register`` rejects a
  duplicate path);
- ``admission``: the AdmissionReview wire format; the request uid is always echoed and
  nothing a client sends yields a 5xx;
- ``app.create_app(router)``: a Flask app with one POST route per service, plus health;
- ``hypernodes``: ``/hypernodes/validate`` - CRD schema, the CEL rules of ``policy.yaml``
  (the same ValidatingAdmissionPolicy as ``manifests/admission``), RE2 patterns and tree
  checks against a ``HyperNodeLister`` (the shared informer's store in the manager);
- ``certs``: CA and serving certificate, cert folder or Secret, caBundle patching, renewal;
- ``server.WebhookServer``: gunicorn in code, one gthread worker, TLS >= 1.2, certificates
  reloaded on change, a ``post_worker_init`` hook for whatever must run inside the worker.

This package may import ``volcano_py.api`` and ``volcano_py.kube``, never the controllers,
the scheduler or the manager.
"""
