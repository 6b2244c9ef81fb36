"""The bounded YAML/JSON loader: caps, short messages, and every reader going through it."""

from __future__ import annotations

import json
import tracemalloc

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from volcano_py.api.safeload import (
    CONFIG_LIMITS,
    MAX_MESSAGE,
    Limits,
    LoadError,
    brief,
    iter_json_array,
    json_values,
    load_any,
    load_json,
    load_yaml,
)
from volcano_py.controllers.hypernode.config import ConfigError, parse_config_text
from volcano_py.scheduler.framework.arguments import Arguments, ConfError
from volcano_py.scheduler.framework.conf import parse_conf


def bomb(levels: int = 9, fanout: int = 9, word: str = "lol", indent: str = "") -> str:
    """A "billion laughs" document: ``fanout ** levels`` words once its aliases expand."""
    lines = [f"{indent}l0: &l0 [{', '.join([word] * fanout)}]"]
    for i in range(1, levels):
        lines.append(f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n"


SMALL = Limits(max_bytes=4096, max_depth=8, max_aliases=5, max_nodes=200)


@pytest.mark.parametrize(
    ("text", "limits", "expected"),
    [
        (bomb(), CONFIG_LIMITS, "conf:6: expands to more than 100000 values (size cap)"),
        (bomb(levels=3, fanout=3), SMALL, "conf:3: more than 5 aliases (alias cap)"),
        ("[" * 100_000, CONFIG_LIMITS, "conf: nested deeper than 64 levels (depth cap)"),
        ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 20)), SMALL,
         "conf:8: nested deeper than 8 levels (depth cap)"),
        ("x: " + "y" * 5000, SMALL, "conf: larger than 4096 bytes (size cap)"),
        ("s: &s " + "z" * 3900 + "\nt: [*s, *s, *s, *s, *s]\n", SMALL,
         "conf:2: expands to more than 200 values (size cap)"),
        ('{"a": ' * 20 + "1" + "}" * 20, SMALL, "conf: nested deeper than 8 levels (depth cap)"),
        ("[" + ",".join(["1"] * 300) + "]", SMALL, "conf: more than 200 values (size cap)"),
        ("a: [1, 2\n", SMALL, "conf:2: invalid YAML/JSON: expected ',' or ']', but got "
         "'<stream end>'"),
        ("a: *nowhere\n", SMALL, "conf:1: invalid YAML/JSON: found undefined alias 'nowhere'"),
    ],
    ids=["billion-laughs", "aliases", "flow-depth", "block-depth", "bytes", "aliased-string",
         "json-depth", "json-values", "syntax", "undefined-alias"],
)  # fmt: skip
def test_loader_refuses_input_over_a_cap_with_one_line_naming_source_and_cap(
    text: str, limits: Limits, expected: str
) -> None:
    with pytest.raises(LoadError) as err:
        load_any(text, "conf", limits)
    assert str(err.value) == expected
    assert err.value.capped is ("cap)" in expected)


@pytest.mark.parametrize(
    "text",
    ["a: 1\nb: [x, y]\n", '{"a": [1, 2, {"b": null}]}', "- &x {k: v}\n- *x\n", "", "---\n---\n"],
    ids=["block", "json", "small-alias", "empty", "two-empty"],
)
def test_loader_reads_what_pyyaml_reads_when_under_the_caps(text: str) -> None:
    assert load_any(text, "conf", CONFIG_LIMITS) == (list(yaml.safe_load_all(text)) or [])


def test_load_yaml_takes_one_document_and_none_for_empty() -> None:
    assert load_yaml("", "conf") is None
    assert load_yaml("a: 1", "conf") == {"a": 1}
    with pytest.raises(LoadError, match="expected one YAML document, found 2"):
        load_yaml("a: 1\n---\nb: 2\n", "conf")


def test_load_json_names_the_line_of_a_syntax_error() -> None:
    with pytest.raises(LoadError) as err:
        load_json(b"[1,\n2,\n}", "ufm: GET https://ufm/x", CONFIG_LIMITS)
    assert str(err.value).startswith("ufm: GET https://ufm/x:3: invalid YAML/JSON: ")
    assert not err.value.capped


def test_brief_is_bounded_without_walking_a_huge_value() -> None:
    shared = ["lol"] * 9
    for _ in range(12):  # 9**13 leaves if walked
        shared = [shared] * 9
    assert len(brief(shared)) < 200
    assert len(brief("x" * 10**6)) < 80


# -- every reader goes through it ------------------------------------------------------------


@pytest.mark.parametrize(
    "position",
    [
        "actions: {bomb}",
        "tiers:\n- plugins:\n  - name: gang\n    arguments: {{x: {bomb}}}",
        "tiers:\n- plugins:\n  - name: binpack\n    arguments: {{binpack.weight: {bomb}}}",
        "configurations:\n- name: allocate\n  arguments: {{x: {bomb}}}",
    ],
    ids=["actions", "tiers", "plugin-arguments", "configurations"],
)
def test_scheduler_conf_refuses_an_alias_bomb_in_every_position(position: str) -> None:
    text = bomb(indent="  ").replace("  l0:", "x:\n  l0:", 1) + position.format(bomb="*l8")
    with pytest.raises(ConfError) as err:
        parse_conf(text)
    assert "expands to more than 100000 values (size cap)" in str(err.value)
    assert len(str(err.value)) <= MAX_MESSAGE


def test_scheduler_conf_type_error_shows_a_bounded_value() -> None:
    value = [["lol"] * 9] * 9
    err = Arguments("binpack", {"binpack.weight": value})._fail("binpack.weight", "an integer")
    assert len(str(err)) < 300
    assert "binpack.weight" in str(err)


def test_discovery_config_refuses_an_alias_bomb_and_names_the_key() -> None:
    text = bomb() + "networkTopologyDiscovery: *l8\n"
    with pytest.raises(ConfigError) as err:
        parse_config_text(text)
    assert str(err.value) == (
        "volcano-controller.conf:6: expands to more than 100000 values (size cap)"
    )


# -- properties ------------------------------------------------------------------------------

SCALARS = st.sampled_from(["x", "lol", "1", "true", "null", '"q"', "z" * 40])


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """Random flow YAML: anchors, aliases to earlier anchors (so expansion can explode), and
    the whole wrapped in up to 100 levels of nesting."""
    anchors: list[str] = []

    def node(depth: int) -> str:
        choice = draw(st.integers(0, 4 if depth < 4 else 1))
        if choice == 0:
            return draw(SCALARS)
        if choice == 1:
            if not anchors:
                return draw(SCALARS)
            return "*" + anchors[draw(st.integers(0, len(anchors) - 1))]
        items = [node(depth + 1) for _ in range(draw(st.integers(0, 6)))]
        if choice == 2:
            items += ["*" + anchors[-1]] * draw(st.integers(0, 12)) if anchors else []
            body = "[" + ", ".join(items) + "]"
        else:
            body = "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}"
        name = f"a{len(anchors)}"
        anchors.append(name)
        return f"&{name} {body}"

    top = ", ".join(f"k{i}: {node(1)}" for i in range(draw(st.integers(1, 8))))
    wrap = draw(st.integers(0, 100))
    return "[" * wrap + "{" + top + "}" + "]" * wrap + "\n"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=yaml_texts())
def test_loader_on_random_yaml_stays_bounded_and_speaks_briefly(text: str) -> None:
    tracemalloc.start()
    error = ""
    try:
        try:
            docs = load_any(text, "random", CONFIG_LIMITS)
            # whatever loaded can be walked: its expanded size is under the cap
            assert len(repr(docs)) < 40 * CONFIG_LIMITS.max_nodes
        except LoadError as e:
            error = str(e)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert len(error) <= MAX_MESSAGE
    assert "\n" not in error
    assert "lol" not in error


@settings(max_examples=20, deadline=None)
@given(levels=st.integers(1, 14), fanout=st.integers(1, 14))
def test_loader_on_any_billion_laughs_refuses_or_loads_within_the_cap(
    levels: int, fanout: int
) -> None:
    text = bomb(levels, fanout)
    # the loader's count: a sequence is 1 + its items, the top mapping 1 + its keys and values
    sizes = [1 + fanout]
    for _ in range(1, levels):
        sizes.append(1 + fanout * sizes[-1])
    expanded = 1 + sum(1 + size for size in sizes)
    if expanded <= CONFIG_LIMITS.max_nodes:
        assert len(load_any(text, "bomb", CONFIG_LIMITS)) == 1
        return
    with pytest.raises(LoadError) as err:
        load_any(text, "bomb", CONFIG_LIMITS)
    assert err.value.capped
    assert len(str(err.value)) <= MAX_MESSAGE


# -- JSON is counted before it is parsed (issue 44) --------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=',:[]{}"\\ ab', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='ab,:"', max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def exact_values(value: object) -> int:
    """What ``_check_json`` counts: 1, plus per container its children (twice for a dict)."""
    if isinstance(value, dict):
        return 1 + sum(1 + exact_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(exact_values(v) for v in value)
    return 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON_VALUES, spaced=st.booleans())
def test_json_values_passes_a_stop_exactly_when_the_parsed_values_do(
    value: object, spaced: bool
) -> None:
    text = json.dumps(value, indent=1 if spaced else None)
    exact = exact_values(value)
    for stop in (0, exact - 1, exact, exact + 50):
        counted = json_values(text, stop)
        assert (counted > stop) is (exact > stop), (text, stop, counted)
        assert counted >= min(exact, stop + 1)
        assert json_values(text.encode(), stop) == counted


def test_load_json_refuses_values_over_the_cap_before_parsing_them() -> None:
    body = b"[" + b"{}," * 1_000_000 + b"{}]"  # 3 MB; a million dicts would be ~70 MB
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match=r"more than 100000 values \(size cap\)") as err:
            load_json(body, "ufm", Limits(max_bytes=8 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.value.capped
    assert peak < len(body)


LIST_LIMITS = Limits(max_bytes=1 << 20, max_depth=5, max_nodes=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(JSON_VALUES, max_size=4), spaced=st.booleans())
def test_iter_json_array_yields_what_orjson_parses(items: list[object], spaced: bool) -> None:
    text = json.dumps(items, indent=1 if spaced else None).encode()
    limits = Limits(max_bytes=1 << 20, max_depth=64, max_nodes=10)
    assert list(iter_json_array(text, "ufm", limits, 1000)) == orjson.loads(text)


@pytest.mark.parametrize(
    ("text", "expected", "capped"),
    [
        (b"[" + b",".join([b"{}"] * 5) + b"]", "ufm: more than 4 items (size cap)", True),
        (b'[{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9]}]', "ufm: item 1 holds more than 8 values (size cap)",
         True),
        (b'[1, [[{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9]}]]]',
         "ufm: item 2 holds more than 8 values (size cap)", True),
        (b'[[[[[["deep"]]]]]]', "ufm: item 1 is nested deeper than 4 levels (depth cap)", True),
        (b'{"a": 1}', "ufm: invalid YAML/JSON: expected a JSON list", False),
        (b"[1 2]", "ufm: invalid YAML/JSON: item 1 is not followed by , or ]", False),
        (b"[1, [2", "ufm: invalid YAML/JSON: item 2 is not a complete value", False),
        (b"[1] x", "ufm: invalid YAML/JSON: data after the list", False),
    ],
    ids=["items", "item-values", "deep-item-values", "item-depth", "not-a-list", "no-comma",
         "cut-short", "trailing"],
)  # fmt: skip
def test_iter_json_array_refuses_an_item_before_parsing_it(
    text: bytes, expected: str, capped: bool
) -> None:
    with pytest.raises(LoadError) as err:
        list(iter_json_array(text, "ufm", LIST_LIMITS, 8))
    assert str(err.value) == expected
    assert err.value.capped is capped
