"""Typed view of ``topology.volcano.sh/v1alpha1`` HyperNode, and member resolution.

A HyperNode groups Nodes (tier-0/leaf HyperNodes) or other HyperNodes into one level of the
network topology tree. Each ``spec.members[]`` entry has a ``type`` (``Node``/``HyperNode``)
and a selector: ``exactMatch.name``, ``regexMatch.pattern`` (RE2, unanchored, like Go's
``MatchString``) or ``labelMatch`` (a label selector; Node members only).

``HyperNode.from_dict`` reads an object the API server has already accepted, so it checks
types and shapes only and names the field that is wrong; the schema and CEL rules are the
offline validator's and the webhook's business. Member resolution follows Volcano's
``GetMembers`` exactly, including its corners: an empty ``exactMatch.name`` or an invalid
pattern or label selector resolves to nothing; an empty ``labelMatch`` selects no node.
These functions run for every HyperNode over every node (10,000 of them), so the matchers are
compiled once per call and the loops are plain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from volcano_py.api.constants import MemberType
from volcano_py.api.errors import FieldError, child, index
from volcano_py.api.meta import (
    Condition,
    annotations_of,
    labels_of,
    metadata,
    read_list,
    read_object,
    read_only,
    read_section,
    read_str,
    whole_number,
)
from volcano_py.api.regex import compile_re2
from volcano_py.api.selectors import LabelSelector

_MEMBER_TYPES = "must be one of Node, HyperNode"


@dataclass(frozen=True, slots=True)
class ExactMatch:
    """``selector.exactMatch``: one member by name."""

    name: str

    @classmethod
    def from_dict(cls, data: Any, field: str) -> ExactMatch:
        """Read ``{"name": ...}``; a missing name reads as ``""`` (which selects nothing)."""
        return cls(read_str(read_object(data, field), "name", field))


@dataclass(frozen=True, slots=True)
class RegexMatch:
    """``selector.regexMatch``: members whose name the RE2 pattern matches anywhere."""

    pattern: str

    @classmethod
    def from_dict(cls, data: Any, field: str) -> RegexMatch:
        """Read ``{"pattern": ...}``; a missing pattern reads as ``""``."""
        return cls(read_str(read_object(data, field), "pattern", field))


@dataclass(frozen=True, slots=True)
class MemberSelector:
    """``spec.members[].selector``.

    The CRD allows exactly one of the three; this view keeps whatever is there, and
    resolution unions them the way Volcano does.
    """

    exact_match: str | None = None
    regex_match: str | None = None
    label_match: LabelSelector | None = None

    @classmethod
    def from_dict(cls, data: Any, field: str) -> MemberSelector:
        """Read a selector object (``None`` reads as an empty selector)."""
        if data is None:
            return cls()
        data = read_object(data, field)
        exact, regex, label = data.get("exactMatch"), data.get("regexMatch"), data.get("labelMatch")
        return cls(
            exact_match=None
            if exact is None
            else ExactMatch.from_dict(exact, child(field, "exactMatch")).name,
            regex_match=None
            if regex is None
            else RegexMatch.from_dict(regex, child(field, "regexMatch")).pattern,
            label_match=None
            if label is None
            else LabelSelector.from_dict(label, child(field, "labelMatch"), strict=False),
        )

    def to_dict(self) -> dict[str, Any]:
        """Back to JSON."""
        out: dict[str, Any] = {}
        if self.exact_match is not None:
            out["exactMatch"] = {"name": self.exact_match}
        if self.regex_match is not None:
            out["regexMatch"] = {"pattern": self.regex_match}
        if self.label_match is not None:
            out["labelMatch"] = self.label_match.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class Member:
    """``spec.members[]``: a Node or a child HyperNode, chosen by ``selector``."""

    type: MemberType
    selector: MemberSelector

    @classmethod
    def from_dict(cls, data: Any, field: str) -> Member:
        """Read one member; ``type`` must be ``Node`` or ``HyperNode``."""
        data = read_object(data, field)
        raw_type = data.get("type")
        try:
            member_type = MemberType(raw_type)
        except ValueError:
            raise FieldError(child(field, "type"), _MEMBER_TYPES) from None
        selector = MemberSelector.from_dict(data.get("selector"), child(field, "selector"))
        return cls(member_type, selector)

    def to_dict(self) -> dict[str, Any]:
        """Back to JSON."""
        return {"type": str(self.type), "selector": self.selector.to_dict()}

    def matches_node(self, name: str, labels: Mapping[str, str]) -> bool:
        """Whether the node ``name`` with ``labels`` is one of this member's nodes."""
        if self.type is not MemberType.NODE:
            return False
        return name in resolve_node_members(self, {name: labels})


def resolve_node_members(member: Member, nodes: Mapping[str, Mapping[str, str]]) -> set[str]:
    """The node names a ``Node`` member selects from ``nodes`` (name -> labels).

    ``exactMatch`` selects its name whether or not such a node exists; ``regexMatch``
    searches node names; ``labelMatch`` selects nodes whose labels match (an empty selector
    selects none). A HyperNode-type member selects no nodes.
    """
    if member.type is not MemberType.NODE:
        return set()
    selector = member.selector
    selected: set[str] = set()
    if selector.exact_match is not None:
        if not selector.exact_match:
            return selected
        selected.add(selector.exact_match)
    if selector.regex_match is not None:
        compiled = compile_re2(selector.regex_match)
        if compiled is None:
            return set()
        matches = compiled.matches
        selected.update(name for name in nodes if matches(name))
    label_match = selector.label_match
    if label_match is not None:
        if label_match.is_empty:
            return selected
        if not label_match.is_valid:
            return set()
        label_matches = label_match.matches
        selected.update(name for name, labels in nodes.items() if label_matches(labels))
    return selected


def resolve_hypernode_members(member: Member, hypernode_names: Iterable[str]) -> set[str]:
    """The child HyperNode names a ``HyperNode`` member selects from ``hypernode_names``.

    ``exactMatch`` selects its name as written; ``regexMatch`` searches the names;
    ``labelMatch`` selects nothing for HyperNode members. A Node member selects none.
    """
    if member.type is not MemberType.HYPERNODE:
        return set()
    selector = member.selector
    selected: set[str] = set()
    if selector.exact_match is not None:
        if not selector.exact_match:
            return selected
        selected.add(selector.exact_match)
    if selector.regex_match is not None:
        compiled = compile_re2(selector.regex_match)
        if compiled is None:
            return set()
        matches = compiled.matches
        selected.update(name for name in hypernode_names if matches(name))
    return selected


@dataclass(frozen=True, slots=True)
class HyperNode:
    """The fields of a HyperNode the controllers, scheduler and webhook read."""

    name: str
    tier: int
    tier_name: str
    members: tuple[Member, ...]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    node_count: int | None
    conditions: tuple[Condition, ...]
    resource_version: str
    uid: str

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> HyperNode:
        """Build the view from the API server's JSON.

        Raises:
            FieldError: naming the field whose type or shape is wrong.
        """
        obj = read_object(obj, "")
        meta = metadata(obj)
        spec = read_section(obj, "spec")
        status = read_section(obj, "status")
        members = read_list(spec.get("members"), "spec.members")
        return cls(
            name=read_str(meta, "name", "metadata"),
            tier=_tier(spec.get("tier")),
            tier_name=read_str(spec, "tierName", "spec"),
            members=tuple(
                Member.from_dict(item, index("spec.members", i)) for i, item in enumerate(members)
            ),
            labels=read_only(labels_of(obj)),
            annotations=read_only(annotations_of(obj)),
            node_count=_node_count(status.get("nodeCount")),
            conditions=tuple(
                cast(Condition, read_object(item, index("status.conditions", i)))
                for i, item in enumerate(read_list(status.get("conditions"), "status.conditions"))
            ),
            resource_version=read_str(meta, "resourceVersion", "metadata"),
            uid=read_str(meta, "uid", "metadata"),
        )

    @property
    def node_members(self) -> tuple[Member, ...]:
        """Members of type ``Node``."""
        return tuple(m for m in self.members if m.type is MemberType.NODE)

    @property
    def selective(self) -> bool:
        """Whether the nodes it selects depend on which nodes exist and their labels.

        Only ``regexMatch`` and ``labelMatch`` Node members do: an ``exactMatch`` selects its
        name whatever exists, so a node event never changes what an exact-only HyperNode
        selects.
        """
        return any(
            m.selector.regex_match is not None or m.selector.label_match is not None
            for m in self.node_members
        )

    @property
    def hypernode_members(self) -> tuple[Member, ...]:
        """Members of type ``HyperNode``."""
        return tuple(m for m in self.members if m.type is MemberType.HYPERNODE)

    def exact_children(self) -> list[str]:
        """Names of child HyperNodes given by ``exactMatch`` (how the scheduler links parents)."""
        return [
            m.selector.exact_match
            for m in self.members
            if m.type is MemberType.HYPERNODE and m.selector.exact_match
        ]


def _tier(value: Any) -> int:
    if value is None:  # Go clients omit a zero tier (omitempty)
        return 0
    tier = whole_number(value)
    if tier is None or tier < 0:
        raise FieldError("spec.tier", "must be an integer >= 0")
    return tier


def _node_count(value: Any) -> int | None:
    if value is None:
        return None
    count = whole_number(value)
    if count is None or count < 0:
        raise FieldError("status.nodeCount", "must be an integer >= 0")
    return count
