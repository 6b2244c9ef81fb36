"""Install the project's CustomResourceDefinitions (``manifests/crds``) into a cluster.

Used by the tests' session fixture and by ``make run`` (``devcluster.devrun``): every CRD is
created or replaced, then waited for until the API server reports it Established, so the
first request for its resource does not race the CRD's registration.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists

ROOT = Path(__file__).resolve().parents[1]
CRD_DIR = ROOT / "manifests" / "crds"


def install_crds(client: KubeClient, folder: Path = CRD_DIR, timeout: float = 30.0) -> list[str]:
    """Create (or replace) every CRD in ``folder`` and wait until each is Established."""
    names = []
    for path in sorted(folder.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            name = doc["metadata"]["name"]
            try:
                client.create(R.CRDS, doc)
            except AlreadyExists:
                current = client.get(R.CRDS, name)
                doc["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                client.update(R.CRDS, doc)
            names.append(name)
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            conditions = (client.get(R.CRDS, name).get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not Established after {timeout}s")
            time.sleep(0.1)
    return names
