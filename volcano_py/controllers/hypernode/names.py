"""Stable HyperNode names: derived from what a HyperNode stands for, never random.

The discoverers (``label.py``, ``ufm.py``) name a HyperNode ``<prefix>-<readable>``: the
prefix says the source's kind of HyperNode (``hypernode-<type>-tier<N>``, ``leaf-hn``), the
readable part the values it stands for (label values from the top tier down, joined by
``.``; a UFM leaf switch). So a HyperNode that is deleted and re-created comes back under
the same name, and ``kubectl get hypernodes`` shows which label values each one is.

When a value would not survive as is (upper case, characters outside ``[a-z0-9-]``, a
``.`` of its own) or the name would exceed ``MAX_NAME_LENGTH``, the readable part is
cleaned and cut, and ``-<hash>`` (the first 8 hex digits of the SHA-256 of the identity)
is appended, so two different identities never share a name. A name is always a valid
DNS-1123 subdomain whose dot-separated parts are DNS labels.

Volcano names discovered HyperNodes with a random 5-character suffix instead; see
docs/discovery.md for why and what happens to HyperNodes named that way.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

MAX_NAME_LENGTH = 63
HASH_LENGTH = 8
_UNSAFE = re.compile(r"[^a-z0-9-]")


def clean_value(value: str) -> str:
    """``value`` lower-cased, other characters turned to ``-``, no ``-`` at either end."""
    return _UNSAFE.sub("-", value.lower()).strip("-")


def stable_name(prefix: str, values: Sequence[str], identity: str) -> str:
    """``<prefix>-<values joined by .>``, or with ``-<hash of identity>`` when needed.

    ``identity`` must tell apart everything that may share ``prefix`` and ``values`` after
    cleaning (the source, type, tier and raw values, say).
    """
    cleaned = [clean_value(v) for v in values]
    readable = ".".join(cleaned)
    name = f"{prefix}-{readable}"
    exact = all(c == v and c for c, v in zip(cleaned, values, strict=True))
    if exact and values and len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(identity.encode()).hexdigest()[:HASH_LENGTH]
    room = MAX_NAME_LENGTH - len(prefix) - HASH_LENGTH - 2
    parts = [p for p in readable[: max(0, room)].split(".") if p.strip("-")]
    cut = ".".join(p.strip("-") for p in parts)
    return f"{prefix}-{cut}-{digest}" if cut else f"{prefix}-{digest}"
