"""Stable HyperNode names: readable when they can be, hashed and bounded when not."""

from __future__ import annotations

import pytest

from volcano_py.api.selectors import is_dns1123_subdomain
from volcano_py.controllers.hypernode.names import MAX_NAME_LENGTH, stable_name


def test_safe_values_make_a_readable_name_without_a_hash() -> None:
    assert stable_name("hypernode-a-tier1", ["s4", "rack-0"], "id") == "hypernode-a-tier1-s4.rack-0"


@pytest.mark.parametrize(
    "values",
    [["Rack_1"], ["a.b"], ["___"], ["-x-"], ["r" * 80], ["z" * 63, "s" * 63, "r" * 63], []],
    ids=["upper-underscore", "dot", "only-unsafe", "dashes-at-ends", "long", "three-long", "none"],
)
def test_other_values_are_cleaned_cut_and_hashed_into_a_valid_name(values: list[str]) -> None:
    name = stable_name("hypernode-topologya3-tier3", values, "label\x00" + "\x00".join(values))
    assert len(name) <= MAX_NAME_LENGTH
    assert is_dns1123_subdomain(name) == []
    assert all(part and len(part) <= 63 for part in name.split("."))
    assert name == stable_name(
        "hypernode-topologya3-tier3", values, "label\x00" + "\x00".join(values)
    )


def test_identities_that_clean_alike_get_different_names() -> None:
    upper = stable_name("p", ["Rack"], "label\x00Rack")
    lower = stable_name("p", ["rack"], "label\x00rack")
    other = stable_name("p", ["RACK"], "label\x00RACK")
    assert lower == "p-rack"
    assert len({upper, lower, other}) == 3
