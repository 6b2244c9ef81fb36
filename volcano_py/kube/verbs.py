"""The client verbs, one ``Protocol`` each: what a component says it needs of ``KubeClient``.

A component takes the client through a role made of the verbs it uses, so a unit test can
hand it a small recording fake instead of a client, and a reader sees at a glance what it
writes::

    class HyperNodeClient(Get, Create, Patch, Delete, Protocol):
        \"\"\"The verbs the reconcile uses.\"\"\"

Each verb is declared here once, with ``KubeClient``'s signature (the keyword arguments a
component may pass); ``KubeClient`` satisfies every role.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from volcano_py.api import JSON
from volcano_py.api.resources import APIResource


class Get(Protocol):
    """GET one object."""

    def get(self, resource: APIResource, name: str, namespace: str | None = None) -> JSON:
        """GET one object."""
        ...


class Create(Protocol):
    """POST a new object."""

    def create(self, resource: APIResource, body: JSON, namespace: str | None = None) -> JSON:
        """POST a new object."""
        ...


class Update(Protocol):
    """PUT an object (or its subresource)."""

    def update(self, resource: APIResource, body: JSON, *, subresource: str | None = None) -> JSON:
        """PUT an object (or its ``subresource``)."""
        ...


class Patch(Protocol):
    """PATCH an object (or its subresource)."""

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> JSON:
        """PATCH an object or its ``subresource`` (a merge patch unless ``patch_type``)."""
        ...


class Delete(Protocol):
    """DELETE an object."""

    def delete(
        self,
        resource: APIResource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> JSON:
        """DELETE an object (with a propagation policy and uid/resourceVersion preconditions)."""
        ...
