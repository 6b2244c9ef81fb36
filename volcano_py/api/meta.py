"""Read-only helpers for the API server's JSON objects as the caches hold them (plain dicts).

Informers store objects exactly as the API server sent them; these helpers read the common
``metadata`` fields without copying and never fail on a missing or ``null`` field: labels and
annotations are always a ``Mapping`` (an empty one when absent). The TypedDicts describe the
shapes for readers and for mypy; nothing validates against them at run time.

The ``read_*`` helpers at the end are what the typed views' ``from_dict`` use to read a field
and name it in a ``FieldError`` when its JSON type is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypedDict, TypeVar, cast

from volcano_py.api.constants import JDB_MAX_UNAVAILABLE, JDB_MIN_AVAILABLE
from volcano_py.api.errors import FieldError, child

EMPTY: Mapping[str, str] = MappingProxyType({})
_V = TypeVar("_V")


class OwnerReference(TypedDict, total=False):
    """``metadata.ownerReferences[]``."""

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    """``metadata`` of any object, as far as volcano-py reads it."""

    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    finalizers: list[str]


class Condition(TypedDict, total=False):
    """``metav1.Condition`` (HyperNode status) and PodGroup conditions alike."""

    type: str
    status: str
    reason: str
    message: str
    lastTransitionTime: str
    observedGeneration: int
    transitionID: str


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj["metadata"]``, or an empty mapping when it is missing."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else EMPTY


def name_of(obj: Mapping[str, Any]) -> str:
    """``metadata.name`` (``""`` when missing)."""
    return str(metadata(obj).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace`` (``""`` for cluster-scoped objects)."""
    return str(metadata(obj).get("namespace") or "")


def uid_of(obj: Mapping[str, Any]) -> str:
    """``metadata.uid`` (``""`` when missing)."""
    return str(metadata(obj).get("uid") or "")


def resource_version_of(obj: Mapping[str, Any]) -> str:
    """``metadata.resourceVersion`` (``""`` when missing)."""
    return str(metadata(obj).get("resourceVersion") or "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels``; an empty mapping when absent or null."""
    labels = metadata(obj).get("labels")
    return labels if isinstance(labels, Mapping) else EMPTY


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations``; an empty mapping when absent or null."""
    annotations = metadata(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else EMPTY


def owner_references_of(obj: Mapping[str, Any]) -> list[OwnerReference]:
    """``metadata.ownerReferences`` (an empty list when absent)."""
    refs = metadata(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return []
    return [cast(OwnerReference, ref) for ref in refs if isinstance(ref, Mapping)]


def copy_annotations(
    source: Mapping[str, str], target: dict[str, str], keys: Iterable[str]
) -> None:
    """Copy the ``keys`` ``source`` has into ``target``, then its disruption budget.

    The budget is ``jdb-min-available`` when ``source`` has it, else ``jdb-max-unavailable``:
    a vcjob's pods and a PodGroup carry one of the two, as in Volcano.
    """
    for key in keys:
        if key in source:
            target[key] = source[key]
    if JDB_MIN_AVAILABLE in source:
        target[JDB_MIN_AVAILABLE] = source[JDB_MIN_AVAILABLE]
    elif JDB_MAX_UNAVAILABLE in source:
        target[JDB_MAX_UNAVAILABLE] = source[JDB_MAX_UNAVAILABLE]


def controller_ref(obj: Mapping[str, Any]) -> OwnerReference | None:
    """The owner reference with ``controller: true``, like apimachinery's ``GetControllerOf``."""
    for ref in owner_references_of(obj):
        if ref.get("controller") is True:
            return ref
    return None


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    """True when ``metadata.deletionTimestamp`` is set."""
    return bool(metadata(obj).get("deletionTimestamp"))


def object_key(obj: Mapping[str, Any]) -> str:
    """The cache key: ``namespace/name``, or ``name`` for cluster-scoped objects."""
    meta = metadata(obj)
    name = meta.get("name") or ""
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def split_key(key: str) -> tuple[str | None, str]:
    """Invert ``object_key``: ``"ns/name"`` -> ``("ns", "name")``, ``"name"`` -> ``(None, "name")``.

    Raises:
        ValueError: the key has more than one ``/`` or an empty part.
    """
    parts = key.split("/")
    if len(parts) == 1 and parts[0]:
        return None, parts[0]
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


# --- reading fields for typed views --------------------------------------------------------


def read_object(data: Any, field: str) -> Mapping[str, Any]:
    """``data`` when it is a JSON object.

    Raises:
        FieldError: ``<field>: must be an object``.
    """
    if not isinstance(data, Mapping):
        raise FieldError(field, "must be an object")
    return data


def read_section(obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """``obj[name]`` (``spec``, ``status``) when it is an object; empty when absent or null.

    Raises:
        FieldError: ``<name>: must be an object``.
    """
    value = obj.get(name)
    return EMPTY if value is None else read_object(value, name)


def read_list(data: Any, field: str) -> list[Any]:
    """``data`` when it is a JSON list; ``[]`` when absent.

    Raises:
        FieldError: ``<field>: must be a list``.
    """
    if data is None:
        return []
    if not isinstance(data, list):
        raise FieldError(field, "must be a list")
    return data


def read_str(data: Mapping[str, Any], name: str, field: str) -> str:
    """``data[name]`` when it is a string; ``""`` when absent.

    Raises:
        FieldError: ``<field>.<name>: must be a string``.
    """
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(child(field, name), "must be a string")
    return value


def whole_number(value: Any) -> int | None:
    """``value`` as an int when it is a JSON whole number (``1`` or ``1.0``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def read_int(value: Any, field: str) -> int | None:
    """A JSON integer, or None when absent.

    Raises:
        FieldError: ``<field>: must be an integer``.
    """
    if value is None:
        return None
    number = whole_number(value)
    if number is None:
        raise FieldError(field, "must be an integer")
    return number


def read_only(mapping: Mapping[str, _V]) -> Mapping[str, _V]:
    """A read-only view, without copying (cached objects are replaced, never edited)."""
    if isinstance(mapping, MappingProxyType):
        return mapping
    return MappingProxyType(cast(dict[str, _V], mapping))
