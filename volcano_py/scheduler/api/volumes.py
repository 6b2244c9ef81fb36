"""A pod's PersistentVolumeClaims and what the cluster says about them.

As kube-scheduler's VolumeBinding, VolumeRestrictions and VolumeZone see them:

- ``pod_claims``: the PersistentVolumeClaims of a pod's volumes, in order: a
  ``persistentVolumeClaim`` names its claim; a generic ``ephemeral`` volume's claim is
  ``<pod>-<volume>`` (created by the ephemeral-volume controller).
- ``VolumeListing``: the claims (by ``namespace/name``), PersistentVolumes and StorageClasses
  (by name) of one snapshot; the cache replaces its maps on a change, never edits them, so a
  listing stays as it was taken.
- ``claim_refusal``: why a pod cannot be placed on any node because of its claims, in
  kube-scheduler's words (VolumeBinding's PreFilter): a claim that does not exist (yet), is
  lost or being deleted, a StorageClass that does not exist, an unbound claim of an
  ``Immediate`` class (``pod has unbound immediate PersistentVolumeClaims``), a claim that
  another pod uses with ``ReadWriteOncePod``. And volcano-py's choice for an unbound claim of
  a ``WaitForFirstConsumer`` class: it binds and provisions nothing, so the pod waits, naming
  the claim (docs/scheduler.md).
- ``bound_volumes``: the PersistentVolumes of a pod's bound claims (``spec.volumeName`` and
  ``pv.kubernetes.io/bind-completed``), for the node checks in ``predicates``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from volcano_py.api import JSON

Claim = tuple[str, bool]  # (claim name, from an ephemeral volume)

BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)


def pod_claims(pod: JSON) -> tuple[Claim, ...]:
    """The claims of the pod's volumes (see the module docstring)."""
    spec = pod.get("spec") or {}
    volumes = spec.get("volumes")
    if not volumes:
        return ()
    name = (pod.get("metadata") or {}).get("name", "")
    out: list[Claim] = []
    for volume in volumes:
        claim = volume.get("persistentVolumeClaim")
        if claim:
            out.append((str(claim.get("claimName") or ""), False))
        elif volume.get("ephemeral") is not None:
            out.append((f"{name}-{volume.get('name', '')}", True))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class VolumeListing:
    """Claims (``namespace/name``), PersistentVolumes and StorageClasses of one snapshot."""

    claims: Mapping[str, JSON] = field(default_factory=dict)
    volumes: Mapping[str, JSON] = field(default_factory=dict)
    classes: Mapping[str, JSON] = field(default_factory=dict)


def claim_class(claim: JSON) -> str:
    """The claim's StorageClass name ("" for none)."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    beta = annotations.get(BETA_CLASS_ANNOTATION)
    if beta is not None:
        return str(beta)
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def fully_bound(claim: JSON) -> bool:
    """Bound to a PersistentVolume and the binding completed (VolumeBinding's test)."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    volume_name = (claim.get("spec") or {}).get("volumeName")
    return bool(volume_name) and BIND_COMPLETED_ANNOTATION in annotations


def claim_refusal(
    namespace: str, claims: tuple[Claim, ...], listing: VolumeListing, used_once: set[str]
) -> str | None:
    """Why no node can take a pod with ``claims`` (None when its claims allow placing it).

    ``used_once``: ``namespace/name`` of the ReadWriteOncePod claims other placed pods use.
    """
    unbound_immediate = False
    for name, ephemeral in claims:
        claim = listing.claims.get(f"{namespace}/{name}")
        if claim is None:
            if ephemeral:
                return (
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            return f'persistentvolumeclaim "{name}" not found'
        spec = claim.get("spec") or {}
        if (claim.get("status") or {}).get("phase") == "Lost":
            return (
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                f'"{spec.get("volumeName", "")}"'
            )
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name}" is being deleted'
        if READ_WRITE_ONCE_POD in (spec.get("accessModes") or ()) and (
            f"{namespace}/{name}" in used_once
        ):
            return RWOP_CONFLICT
        if fully_bound(claim):
            continue
        class_name = claim_class(claim)
        storage_class = listing.classes.get(class_name) if class_name else None
        if class_name and storage_class is None:
            return f'storageclass.storage.k8s.io "{class_name}" not found'
        delayed = (storage_class or {}).get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
        if delayed and not spec.get("volumeName"):
            return (
                f'persistentvolumeclaim "{name}" is not bound and its StorageClass '
                f'"{class_name}" binds {WAIT_FOR_FIRST_CONSUMER}: volcano-py does not bind or '
                "provision volumes, so the pod waits until the claim is bound"
            )
        unbound_immediate = True
    return UNBOUND_IMMEDIATE if unbound_immediate else None


def bound_volumes(namespace: str, claims: tuple[Claim, ...], listing: VolumeListing) -> list[JSON]:
    """The PersistentVolumes of the fully bound claims (an empty dict for a missing one)."""
    out = []
    for name, _ in claims:
        claim = listing.claims.get(f"{namespace}/{name}")
        if claim is not None and fully_bound(claim):
            volume_name = str((claim.get("spec") or {}).get("volumeName"))
            out.append(listing.volumes.get(volume_name) or {})
    return out


def read_write_once_pod(
    namespace: str, claims: tuple[Claim, ...], listing: VolumeListing
) -> list[str]:
    """``namespace/name`` of the claims with the ``ReadWriteOncePod`` access mode."""
    out = []
    for name, _ in claims:
        key = f"{namespace}/{name}"
        claim = listing.claims.get(key)
        if claim is not None and READ_WRITE_ONCE_POD in (
            (claim.get("spec") or {}).get("accessModes") or ()
        ):
            out.append(key)
    return out
