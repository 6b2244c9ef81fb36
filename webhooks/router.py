"""The admission router: each admission service registers a path, a function and its rules.

Like Volcano's ``router.RegisterAdmission``, but an object filled explicitly (no import side
effects): ``register()`` rejects a duplicate path, ``get()`` on an unknown path names the
known ones, iteration is sorted by path. The Flask app (``app.create_app``) is built from a
router, and the ValidatingWebhookConfiguration's rules come from the same registrations
(each service spells its rules with ``rule_for``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

AdmissionReview = Mapping[str, Any]
AdmissionResponse = dict[str, Any]
AdmitFunc = Callable[[AdmissionReview], AdmissionResponse]


@dataclass(frozen=True, slots=True)
class WebhookRule:
    """One ``rules[]`` entry of a webhook configuration."""

    operations: tuple[str, ...]
    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str = "*"

    def to_dict(self) -> dict[str, Any]:
        """The rule as the admissionregistration.k8s.io/v1 API spells it."""
        return {
            "operations": list(self.operations),
            "apiGroups": list(self.api_groups),
            "apiVersions": list(self.api_versions),
            "resources": list(self.resources),
            "scope": self.scope,
        }


def rule_for(group_version: str, resource: str, scope: str, *operations: str) -> WebhookRule:
    """The rule for ``operations`` on ``resource`` of ``group_version`` (``"v1"`` is core)."""
    group, _, version = group_version.rpartition("/")
    return WebhookRule(operations, (group,), (version,), (resource,), scope)


@dataclass(frozen=True, slots=True)
class AdmissionService:
    """A registered admission service: path, function, webhook name and rules."""

    path: str
    func: AdmitFunc
    name: str
    rules: tuple[WebhookRule, ...] = field(default=())


class AdmissionRouter:
    """Path -> AdmissionService; see the module docstring."""

    def __init__(self) -> None:
        self._services: dict[str, AdmissionService] = {}

    def register(
        self, path: str, func: AdmitFunc, rules: Sequence[WebhookRule] = (), *, name: str = ""
    ) -> AdmissionService:
        """Add a service at ``path`` (must start with ``/``); a duplicate path is an error."""
        if not path.startswith("/"):
            raise ValueError(f"admission path {path!r} must start with '/'")
        if path in self._services:
            raise ValueError(f"admission path {path!r} is already registered")
        service = AdmissionService(
            path, func, name or path.strip("/").replace("/", "-"), tuple(rules)
        )
        self._services[path] = service
        return service

    def get(self, path: str) -> AdmissionService:
        """The service at ``path``; KeyError naming the registered paths otherwise."""
        try:
            return self._services[path]
        except KeyError:
            known = ", ".join(sorted(self._services)) or "none"
            raise KeyError(f"no admission service at {path!r} (registered: {known})") from None

    def __iter__(self) -> Iterator[AdmissionService]:
        return iter(sorted(self._services.values(), key=lambda s: s.path))

    def __contains__(self, path: object) -> bool:
        return path in self._services

    def __len__(self) -> int:
        return len(self._services)
