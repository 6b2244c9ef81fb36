"""``VolumeStore``: the cache's PersistentVolumeClaims, PersistentVolumes and StorageClasses.

Fed by their informers (``SchedulerCache.attach``) or by ``simulate``'s snapshot. Each kind is
a map the store replaces on a change (copy-on-write), so a snapshot's ``VolumeListing`` is
the maps as they were, taken in O(1); volume objects change far less often than cycles run.
The cache calls it under its lock.
"""

from __future__ import annotations

from volcano_py.api import JSON
from volcano_py.scheduler.api.volumes import VolumeListing

CLAIM, VOLUME, CLASS = "PersistentVolumeClaim", "PersistentVolume", "StorageClass"
KINDS = (CLAIM, VOLUME, CLASS)


def read_by_checks(kind: str, obj: JSON) -> tuple[object, ...]:
    """What of a claim, volume or class the volume checks read (``api/volumes.py``)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    if kind == CLAIM:
        return (
            spec.get("volumeName"),
            spec.get("storageClassName"),
            spec.get("accessModes"),
            meta.get("annotations"),
            meta.get("deletionTimestamp"),
            (obj.get("status") or {}).get("phase"),
        )
    if kind == VOLUME:
        return (spec.get("nodeAffinity"), meta.get("labels"))
    return (obj.get("volumeBindingMode"),)


class VolumeStore:
    """Claims by ``namespace/name``, volumes and classes by name."""

    __slots__ = ("_maps",)

    def __init__(self) -> None:
        self._maps: dict[str, dict[str, JSON]] = {kind: {} for kind in KINDS}

    @staticmethod
    def _key(kind: str, obj: JSON) -> str:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        return f"{meta.get('namespace', '')}/{name}" if kind == CLAIM else name

    def update(self, kind: str, obj: JSON) -> bool:
        """An object of ``kind`` was added or changed: whether what scheduling reads changed.

        A status heartbeat or a resize leaves the answer of every check as it was, so it
        wakes no parked job (``read_by_checks``).
        """
        key = self._key(kind, obj)
        old = self._maps[kind].get(key)
        self._maps[kind] = {**self._maps[kind], key: obj}
        return old is None or read_by_checks(kind, old) != read_by_checks(kind, obj)

    def delete(self, kind: str, obj: JSON) -> None:
        """An object of ``kind`` went away."""
        key = self._key(kind, obj)
        if key in self._maps[kind]:
            self._maps[kind] = {k: v for k, v in self._maps[kind].items() if k != key}

    def listing(self) -> VolumeListing:
        """The maps as they are now (never edited afterwards)."""
        return VolumeListing(self._maps[CLAIM], self._maps[VOLUME], self._maps[CLASS])
