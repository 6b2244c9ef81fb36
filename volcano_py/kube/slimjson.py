"""Decode Pods and Nodes without ``metadata.managedFields``, which no informer keeps.

An informer's transform drops ``managedFields`` from every object (``transforms.py``), but
only after ``orjson`` has built it: thousands of small dicts per list, ~40% of a Pod's JSON
and ~45% of a Node's (2,000 of the bench's pods: 1.3 of 3.3 MB; 500 kwok nodes: 0.65 of
1.4 MB). The informers of Pods and Nodes therefore cut the array out of the bytes first and
decode the rest: their lists and watch events decode in about half the time (the pods above:
~20 ms instead of ~45 ms, cut included), which is start-up time spent before the first bind
at 500 nodes and ten times as much at 5,000.

What is cut, and why the cut cannot change anything else:

- Only the member ``,"managedFields":[ ... ]``. Its opening bytes cannot occur inside a JSON
  string (a quote inside a string is escaped, so ``,"`` is never string content).
- Only for Pods and Nodes (``decoder_for``): their schemas have no other field of that name,
  so every occurrence is an ``ObjectMeta``'s. A custom resource could declare one anywhere,
  and is decoded whole.
- The array's entries (``ManagedFieldsEntry``) hold strings and objects, never an array, so
  the first ``]`` outside a string closes it. A ``]`` inside a string (a field key such as
  ``v:"x]"``) is told apart by counting the unescaped quotes before it: an odd count means
  it is inside one. A backslash-escaped backslash makes that count ambiguous; that array is
  then left in place (the transform drops it after decoding, as before).
- If the cut bytes do not decode (a server that broke one of these rules), the whole
  answer is decoded instead: a cut never turns into an error or a wrong object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from volcano_py.api.resources import NODES, PODS, APIResource

Decode = Callable[[bytes], Any]

_MEMBER = b',"managedFields":['
_ESCAPED_QUOTE = b'\\"'
_ESCAPED_BACKSLASH = b"\\\\"


def without_managed_fields(raw: bytes) -> bytes:
    """``raw`` with every ``managedFields`` array member cut out (see the module docstring)."""
    start = raw.find(_MEMBER)
    if start < 0:
        return raw
    pieces = []
    kept = 0  # raw[kept:] has not been copied yet
    while start >= 0:
        end = _array_end(raw, start + len(_MEMBER))
        if end < 0:  # not provable: this one stays, the next member is found as usual
            start = raw.find(_MEMBER, start + len(_MEMBER))
            continue
        pieces.append(raw[kept:start])
        kept = end + 1
        start = raw.find(_MEMBER, kept)
    if not pieces:
        return raw
    pieces.append(raw[kept:])
    return b"".join(pieces)


def _array_end(raw: bytes, first: int) -> int:
    """The index of the ``]`` that closes the array whose items begin at ``first``, or -1.

    Each stretch between two ``]`` is counted once (a pod can carry thousands of ``]`` in
    its field keys: env var names). No escaped quote or backslash spans a ``]`` (both are
    a backslash and the character right after it), so the stretches' counts add up.
    """
    quotes = 0
    start = first
    while True:
        close = raw.find(b"]", start)
        if close < 0 or raw.find(_ESCAPED_BACKSLASH, start, close) >= 0:
            return -1
        quotes += raw.count(b'"', start, close) - raw.count(_ESCAPED_QUOTE, start, close)
        if quotes % 2 == 0:
            return close
        start = close + 1  # that one was inside a string


def loads_without_managed_fields(raw: bytes) -> Any:
    """Decode ``raw`` as ``orjson.loads`` would, minus the ``managedFields`` members."""
    slim = without_managed_fields(raw)
    if slim is raw:
        return orjson.loads(raw)
    try:
        return orjson.loads(slim)
    except orjson.JSONDecodeError:
        return orjson.loads(raw)


_SLIM: frozenset[APIResource] = frozenset({PODS, NODES})


def decoder_for(resource: APIResource) -> Decode:
    """How an informer of ``resource`` decodes its lists and watch events."""
    return loads_without_managed_fields if resource in _SLIM else orjson.loads
