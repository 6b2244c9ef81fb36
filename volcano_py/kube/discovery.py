"""Whether the API server serves a resource (API discovery, one GET per group version).

For resources behind a feature gate or a ``--runtime-config`` switch: Kubernetes' own
``scheduling.k8s.io/v1beta1`` PodGroup (``api/native_groups.py``) exists only when the
``GenericWorkload`` gate and that API version are on. Asked once at start; an API server
that does not serve it (404), or that cannot be asked, means "not served" with one INFO line,
never an error: the rest of the process works the same without it.
"""

from __future__ import annotations

import logging

from volcano_py.api.resources import APIResource
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError

log = logging.getLogger(__name__)


def serves(client: KubeClient, resource: APIResource) -> bool:
    """Whether ``/apis/<group>/<version>`` lists ``resource``'s plural."""
    path = f"/apis/{resource.group}/{resource.version}" if resource.group else "/api/v1"
    try:
        doc = client.request("GET", path)
    except ApiError as e:
        log.info("%s not served (%s): not read", resource, type(e).__name__)
        return False
    served = any(r.get("name") == resource.plural for r in doc.get("resources") or [])
    if not served:
        log.info("%s not served by %s: not read", resource, path)
    return served
