"""One bounded YAML/JSON loader for every text the process reads.

Who calls it: the scheduler conf (``--scheduler-conf`` file and the ConfigMap), the discovery
ConfigMap (``volcano-controller.conf``), the CLI's ``--cluster``/``--objects`` and manifest
files, and UFM's port list. Nothing else in the process parses YAML or JSON from outside
(the API server's own JSON goes through ``kube/``, whose objects the API server has already
bounded).

Each source has ``Limits``:

- ``max_bytes``: the text's UTF-8 size, checked before parsing;
- ``max_depth``: nesting of mappings and sequences (PyYAML's composer recurses: a few
  thousand ``[`` would otherwise end in ``RecursionError``);
- ``max_aliases``: ``*alias`` uses (merge keys ``<<: *a`` included);
- ``max_nodes``: the nodes the document holds *with every alias expanded*. PyYAML shares an
  aliased node instead of copying it, so a 453-byte "billion laughs" document loads fine and
  only explodes when something walks it (a ``repr`` in an error message, a JSON dump): this
  cap is what makes every later walk bounded. A long string counts one value per
  ``SCALAR_CHARS_PER_VALUE`` characters, so aliasing a big string is bounded too. Counted
  while composing, O(nodes in the text).

JSON is counted before it is parsed: ``load_json`` refuses a text whose values pass
``max_nodes`` before orjson builds any of them (``json_values``: a C-speed upper bound from
the structural characters, and only when that bound passes the cap an exact, string-aware
count that stops at the cap), so a 48 MB body of 16 M empty objects is refused at its bytes
and never becomes 1.8 GB of dicts. ``iter_json_array`` goes further for a big list whose
items are read one at a time (UFM's port list): each item is parsed alone, under
``max_item_values``, and dropped by the caller once it has kept what it needs, so the memory
is the body's bytes plus what the caller keeps.

Over a cap, or not YAML/JSON at all, raises ``LoadError``: one line, at most
``MAX_MESSAGE`` characters, ``<source>[:<line>]: <what> (cap <n>)``, and never a value from
the document. ``brief(value)`` gives a bounded ``repr`` for messages that must show a value.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from yaml.events import AliasEvent

MAX_MESSAGE = 300  # characters in any message this module builds
SCALAR_CHARS_PER_VALUE = 100  # a long string counts one value per this many characters
KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps for one kind of input (see the module docstring)."""

    max_bytes: int
    max_depth: int = 64
    max_aliases: int = 64
    max_nodes: int = 100_000


# A ConfigMap's data is at most 1 MiB (the API server's object limit); a conf file is no bigger.
CONFIG_LIMITS = Limits(max_bytes=1 * MIB)
# A UFM port list (JSON, no aliases): ~300 bytes and ~30 values a port, read one port at a
# time (``iter_json_array``: max_nodes caps the ports, ``UFM_PORT_VALUES`` one port's values);
# the body is read up to the discoverer's own cap (``ufm.MAX_BODY_BYTES``, 100 MiB), which
# replaces max_bytes.
UFM_LIMITS = Limits(max_bytes=100 * MIB, max_depth=16, max_aliases=0, max_nodes=1_000_000)
UFM_PORT_VALUES = 4096
# The CLI's cluster snapshots and manifests: the user's own files, large clusters included.
FILE_LIMITS = Limits(max_bytes=512 * MIB, max_depth=128, max_aliases=4096, max_nodes=64_000_000)


class LoadError(ValueError):
    """A text over a cap or not YAML/JSON; the message is one short line naming the source."""

    def __init__(self, message: str, line: int | None = None, *, capped: bool = False) -> None:
        """``line`` is 1-based when known (also in the message); ``capped``: a cap, not syntax."""
        super().__init__(clip(message))
        self.line = line
        self.capped = capped


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line and at most ``limit`` characters (an ellipsis marks a cut)."""
    one = " ".join(text.split()) if "\n" in text or "\r" in text else text
    return one if len(one) <= limit else one[: limit - 3] + "..."


BRIEF_CHARS = 100  # a value shown in a message
_BRIEF = reprlib.Repr()
_BRIEF.maxlevel = 2
_BRIEF.maxdict = _BRIEF.maxlist = _BRIEF.maxtuple = _BRIEF.maxset = 4
_BRIEF.maxstring = _BRIEF.maxother = _BRIEF.maxlong = 40


def brief(value: Any) -> str:
    """A ``repr`` of ``value`` cut to ``BRIEF_CHARS`` without walking all of it."""
    return clip(_BRIEF.repr(value), BRIEF_CHARS)


class CapExceeded(yaml.MarkedYAMLError):
    """A cap passed while scanning or composing: a ``YAMLError`` with ``problem`` and a mark.

    ``BoundedLoader`` raises it, so code that drives the loader itself and already handles
    ``yaml.YAMLError`` (``volcano-py validate``) reports it like a syntax error.
    """

    def __init__(self, what: str, mark: Any) -> None:
        """``what`` is the one-line problem; ``mark`` where it was found."""
        super().__init__(problem=what, problem_mark=mark)
        self.what = what
        self.line = int(mark.line) + 1

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that counts depth, aliases and expanded nodes as it composes."""

    def __init__(self, text: str, limits: Limits) -> None:
        """Load ``text`` under ``limits`` (the caller checked its size)."""
        super().__init__(text)
        self.limits = limits
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Compose one node, refusing it when a cap is passed."""
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        alias = self.check_event(AliasEvent)
        if alias:
            self._aliases += 1
            if self._aliases > self.limits.max_aliases:
                raise CapExceeded(f"more than {self.limits.max_aliases} aliases (alias cap)", mark)
        else:
            self._depth += 1
            if self._depth > self.limits.max_depth:
                what = f"nested deeper than {self.limits.max_depth} levels (depth cap)"
                raise CapExceeded(what, mark)
        node: Any = super().compose_node(parent, index)
        if alias:
            size = _size(node)
        else:
            self._depth -= 1
            size = 1 + _children_size(node)
            if size > 1:
                node.expanded_size = size  # read back when an alias or a parent uses it
        if size > self.limits.max_nodes:
            what = f"expands to more than {self.limits.max_nodes} values (size cap)"
            raise CapExceeded(what, mark)
        return node

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 (PyYAML's)
        """``[`` or ``{``: refused past the depth cap before the scanner looks further ahead.

        An unclosed ``[[[[...`` keeps a possible simple key open at every level, and
        PyYAML's scanner re-checks all of them per token: quadratic without this.
        """
        if self.flow_level >= self.limits.max_depth:
            what = f"nested deeper than {self.limits.max_depth} levels (depth cap)"
            raise CapExceeded(what, self.get_mark())
        super().fetch_flow_collection_start(TokenClass)


def _size(node: Any) -> int:
    size: int = getattr(node, "expanded_size", 1)
    return size


def _children_size(node: Any) -> int:
    if isinstance(node, yaml.ScalarNode):
        return len(node.value) // SCALAR_CHARS_PER_VALUE
    if isinstance(node, yaml.SequenceNode):
        return sum(_size(child) for child in node.value)
    if isinstance(node, yaml.MappingNode):
        return sum(_size(k) + _size(v) for k, v in node.value)
    return 0


def check_size(text: str | bytes | bytearray, source: str, limits: Limits) -> None:
    """``LoadError`` when ``text`` is over ``limits.max_bytes`` (without encoding a big str)."""
    size = len(text)  # bytes, or characters: at most 4 bytes each
    if isinstance(text, str) and size <= limits.max_bytes < size * 4:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise LoadError(f"{source}: larger than {limits.max_bytes} bytes (size cap)", capped=True)


def load_yaml(text: str, source: str, limits: Limits = CONFIG_LIMITS) -> Any:
    """The single YAML (or JSON) document in ``text``; ``None`` when it is empty."""
    docs = load_yaml_all(text, source, limits)
    if len(docs) > 1:
        raise LoadError(f"{source}: expected one YAML document, found {len(docs)}")
    return docs[0] if docs else None


def load_yaml_all(text: str, source: str, limits: Limits = CONFIG_LIMITS) -> list[Any]:
    """Every document in ``text`` (empty ones as ``None``)."""
    return list(iter_yaml(text, source, limits))


def iter_yaml(text: str, source: str, limits: Limits) -> Iterator[Any]:
    """Documents one by one, each checked against ``limits`` as it is composed."""
    check_size(text, source, limits)
    loader = BoundedLoader(text, limits)
    try:
        while loader.check_node():
            node = loader.get_node()
            yield None if node is None else loader.construct_document(node)
    except yaml.YAMLError as e:
        capped = isinstance(e, CapExceeded)
        raise LoadError(yaml_message(source, e), _line(e), capped=capped) from None
    finally:
        loader.dispose()


Text = str | bytes | bytearray

# A JSON string, possessive so a long or unclosed one never backtracks.
_STRING = rb'"(?:[^"\\]++|\\.)*+"'
# Groups: 1 a string or an empty container (an empty container is counted by its parent's
# , or : like any scalar); 2 , or : (a value after each); 3 an opening bracket (a non-empty
# container); 4 a closing one.
_COUNT = rb"(" + _STRING + rb"|[\[{]\s*+[\]}])|([,:])|([\[{])|([\]}])"
_COUNT_BYTES = re.compile(_COUNT)
_COUNT_STR = re.compile(_COUNT.decode())
_STRUCTURAL = ",:[{"


class TooDeep(ValueError):
    """``json_values`` met more nesting than its ``max_depth``."""


def json_values(data: Text, stop: int, max_depth: int | None = None) -> int:
    """The values ``_check_json`` would count in JSON ``data``, counted without parsing it.

    Above ``stop`` exactly when the values are; otherwise an upper bound of them. First the
    bound from ``count`` (C speed, the characters inside strings included); only when it
    passes ``stop`` the exact, string-aware count, which ends as soon as it passes ``stop``,
    or raises ``TooDeep`` when it goes deeper than ``max_depth`` first.
    """
    if isinstance(data, str):
        bound = 1 + sum(data.count(c) for c in _STRUCTURAL)
    else:
        bound = 1 + sum(data.count(c.encode()) for c in _STRUCTURAL)
    if bound <= stop:
        return bound
    values = 1
    depth = 1
    deepest = max_depth if max_depth is not None else bound
    pattern = _COUNT_STR if isinstance(data, str) else _COUNT_BYTES
    for match in pattern.finditer(data):  # type: ignore[arg-type]
        kind = match.lastindex
        if kind == 4:
            depth -= 1
        elif kind != 1:
            values += 1
            if values > stop:
                break
            if kind == 3:
                depth += 1
                if depth > deepest:
                    raise TooDeep(deepest)
    return values


def load_json(data: Text, source: str, limits: Limits) -> Any:
    """A JSON document (orjson), size-, count- and depth-checked; ``LoadError`` otherwise."""
    check_size(data, source, limits)
    try:
        values = json_values(data, limits.max_nodes, limits.max_depth)
    except TooDeep:
        what = f"nested deeper than {limits.max_depth} levels (depth cap)"
        raise LoadError(f"{source}: {what}", capped=True) from None
    if values > limits.max_nodes:
        raise LoadError(f"{source}: more than {limits.max_nodes} values (size cap)", capped=True)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise LoadError(f"{source}:{e.lineno}: invalid YAML/JSON: {e.msg}", e.lineno) from None
    if isinstance(value, dict | list):
        _check_json(value, source, limits)
    return value


# One item of a list read by ``iter_json_array``: a scalar, or an object whose members are
# scalars or containers of scalars (a UFM port). Anything deeper takes the token walk.
_FLAT = rb"(?:[^\[\]{}\"]++|" + _STRING + rb")*+"
_ITEM = re.compile(
    rb"\s*+("
    + rb"\{(?:[^\[\]{}\"]++|" + _STRING + rb"|\[" + _FLAT + rb"\]|\{" + _FLAT + rb"\})*+\}"
    + rb"|" + _STRING
    + rb"|[^\s,\[\]{}\"]++"
    + rb")\s*+([,\]])"
)  # fmt: skip
_WALK = re.compile(_STRING + rb"|[\[\]{},:]")
_SPACE = re.compile(rb"\s*+")


def iter_json_array(
    data: bytes | bytearray, source: str, limits: Limits, max_item_values: int
) -> Iterator[Any]:
    """The items of the JSON list ``data``, parsed one at a time (see the module docstring).

    ``limits.max_nodes`` caps the items, ``max_item_values`` the values of one item, and
    ``limits.max_depth`` its nesting; each is checked before the item is parsed. Raises
    ``LoadError``: ``capped`` for a cap, not for a text that is not a JSON list.
    """
    check_size(data, source, limits)
    view = memoryview(data)
    pos = _skip_space(data, 0)
    if data[pos : pos + 1] != b"[":
        raise LoadError(f"{source}: invalid YAML/JSON: expected a JSON list")
    pos = _skip_space(data, pos + 1)
    if data[pos : pos + 1] == b"]":
        _expect_end(data, pos + 1, source)
        return
    items = 0
    while True:
        items += 1
        if items > limits.max_nodes:
            raise LoadError(f"{source}: more than {limits.max_nodes} items (size cap)", capped=True)
        match = _ITEM.match(data, pos)
        if match is not None:
            start, end, after = match.start(1), match.end(1), match.end()
            closer = match.group(2)
            if data.count(b",", start, end) + data.count(b":", start, end) >= max_item_values:
                raise LoadError(
                    f"{source}: item {items} holds more than {max_item_values} values (size cap)",
                    capped=True,
                )
        else:
            start = pos
            end = _walk_item(data, pos, source, items, limits.max_depth - 1, max_item_values)
            after = _skip_space(data, end)
            closer = data[after : after + 1]
            after += 1
            if closer not in (b",", b"]"):
                raise LoadError(
                    f"{source}: invalid YAML/JSON: item {items} is not followed by , or ]"
                )
        try:
            yield orjson.loads(view[start:end])
        except orjson.JSONDecodeError as e:
            raise LoadError(f"{source}: invalid YAML/JSON in item {items}: {e.msg}") from None
        if closer == b"]":
            _expect_end(data, after, source)
            return
        pos = after


def _skip_space(data: bytes | bytearray, pos: int) -> int:
    match = _SPACE.match(data, pos)
    return pos if match is None else match.end()


def _expect_end(data: bytes | bytearray, pos: int, source: str) -> None:
    if _skip_space(data, pos) != len(data):
        raise LoadError(f"{source}: invalid YAML/JSON: data after the list")


def _walk_item(
    data: bytes | bytearray, pos: int, source: str, item: int, max_depth: int, max_values: int
) -> int:
    """The end of the container item at ``pos``, counted token by token under the caps."""
    depth = 0
    values = 0
    for match in _WALK.finditer(data, pos):
        token = data[match.start()]
        pos = match.end()
        if token in b"[{":
            depth += 1
            if depth > max_depth:
                what = f"item {item} is nested deeper than {max_depth} levels (depth cap)"
                raise LoadError(f"{source}: {what}", capped=True)
        elif token in b"]}":
            depth -= 1
        elif token in b",:":
            values += 1
            if values >= max_values:
                what = f"item {item} holds more than {max_values} values (size cap)"
                raise LoadError(f"{source}: {what}", capped=True)
        if depth <= 0:
            return pos
    raise LoadError(f"{source}: invalid YAML/JSON: item {item} is not a complete value")


def load_any(text: str, source: str, limits: Limits) -> list[Any]:
    """JSON when ``text`` starts like JSON (fast), else every YAML document."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return [load_json(text, source, limits)]
        except LoadError as e:
            if e.capped:
                raise
            # a flow-style YAML document also starts with { or [: let YAML decide
    return load_yaml_all(text, source, limits)


def _check_json(value: Any, source: str, limits: Limits) -> None:
    """Depth and node count of a parsed JSON value (iterative: no recursion on depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    nodes = 1
    while stack:
        item, depth = stack.pop()
        children: Any = item.values() if isinstance(item, dict) else item
        nodes += len(children) * (2 if isinstance(item, dict) else 1)
        if nodes > limits.max_nodes:
            raise LoadError(
                f"{source}: more than {limits.max_nodes} values (size cap)", capped=True
            )
        if depth >= limits.max_depth and any(isinstance(c, dict | list) for c in children):
            what = f"nested deeper than {limits.max_depth} levels (depth cap)"
            raise LoadError(f"{source}: {what}", capped=True)
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


def yaml_message(source: str, error: yaml.YAMLError) -> str:
    """``<source>:<line>: invalid YAML/JSON: <problem>`` (no snippet of the text).

    A passed cap reads ``<source>:<line>: <what> (<which> cap)``.
    """
    line = _line(error)
    where = f"{source}:{line}" if line is not None else source
    if isinstance(error, CapExceeded):
        return clip(f"{where}: {error.what}")
    problem = getattr(error, "problem", None) or type(error).__name__
    return clip(f"{where}: invalid YAML/JSON: {problem}")


def _line(error: yaml.YAMLError) -> int | None:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return None if mark is None else int(mark.line) + 1
