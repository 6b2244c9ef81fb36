from __future__ import annotations

import threading

import pytest

from volcano_py.controllers.framework import (
    ControllerOptions,
    ControllerRegistry,
    ControllerSet,
    UnknownControllerError,
    is_enabled,
    parse_controllers_flag,
)
from volcano_py.kube.client import ClientConfig, KubeClient
from volcano_py.kube.informer import SharedInformerFactory


class Dummy:
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def initialize(self, options: ControllerOptions) -> None:
        del options

    def run(self, stop: threading.Event) -> None:
        stop.wait()


def registry(*names: str) -> ControllerRegistry:
    reg = ControllerRegistry()
    for name in names:
        reg.register(name, lambda name=name: Dummy(name))
    return reg


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["*"], ["hyperNode-controller", "pg-controller"]),
        (["*", "-pg-controller"], ["hyperNode-controller"]),
        (["-pg-controller", "*"], ["hyperNode-controller"]),
        (["pg-controller"], ["pg-controller"]),
        (["pg-controller", "-pg-controller"], ["pg-controller"]),
        ([], []),
        (["-hyperNode-controller"], []),
    ],
    ids=[
        "star",
        "star-minus",
        "minus-before-star",
        "only-one",
        "first-wins",
        "none",
        "minus-without-star",
    ],
)
def test_registry_enabled_follows_controllers_flag_semantics(
    selection: list[str], expected: list[str]
) -> None:
    assert registry("pg-controller", "hyperNode-controller").enabled(selection) == expected


def test_registry_enabled_rejects_unknown_name_listing_known_ones() -> None:
    with pytest.raises(UnknownControllerError) as info:
        registry("pg-controller", "hyperNode-controller").enabled(["*", "-gc-controller"])
    assert "gc-controller" in str(info.value)
    assert "hyperNode-controller, pg-controller" in str(info.value)


def test_registry_register_rejects_duplicates() -> None:
    reg = registry("pg-controller")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("pg-controller", lambda: Dummy("pg-controller"))


def test_registry_get_unknown_lists_known_and_iteration_is_sorted() -> None:
    reg = registry("zeta", "alpha", "mid")
    assert list(reg) == ["alpha", "mid", "zeta"]
    assert reg.get("mid")().name == "mid"
    with pytest.raises(UnknownControllerError, match="known controllers: alpha, mid, zeta"):
        reg.get("nope")


def test_is_enabled_without_star_is_false_for_unlisted() -> None:
    assert not is_enabled("a", ["b"])
    assert is_enabled("a", ["*"])


@pytest.mark.parametrize(
    ("value", "expected"),
    [("*", ["*"]), ("a, -b ,", ["a", "-b"]), (["a,b", "c"], ["a", "b", "c"])],
    ids=["star", "spaces-and-trailing-comma", "repeated-flag"],
)
def test_parse_controllers_flag_splits_commas_and_repeats(
    value: str | list[str], expected: list[str]
) -> None:
    assert parse_controllers_flag(value) == expected


def set_options() -> ControllerOptions:
    client = KubeClient(ClientConfig(host="https://127.0.0.1:9"))  # never contacted
    return ControllerOptions(client=client, informers=SharedInformerFactory(client))


def test_controller_set_builds_each_controller_once_when_first_asked() -> None:
    made: list[str] = []
    initialized: list[str] = []

    class Counted(Dummy):
        def initialize(self, options: ControllerOptions) -> None:
            initialized.append(self.name)

    reg = ControllerRegistry()
    for name in ("a", "b"):
        reg.register(name, lambda name=name: made.append(name) or Counted(name))
    controllers = ControllerSet(reg, ["a", "b"], set_options())
    assert made == []
    assert controllers.built() == []
    results: list[list[str]] = []
    racers = [
        threading.Thread(target=lambda: results.append([c.name for c in controllers.build()]))
        for _ in range(4)
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert made == ["a", "b"]
    assert initialized == ["a", "b"]
    assert results == [["a", "b"]] * 4
    assert [c.name for c in controllers.built()] == ["a", "b"]


def test_controller_set_builds_what_failed_again_on_the_next_call() -> None:
    attempts: list[str] = []

    def flaky() -> Dummy:
        attempts.append("b")
        if len(attempts) == 1:
            raise RuntimeError("import failed")
        return Dummy("b")

    reg = registry("a")
    reg.register("b", flaky)
    controllers = ControllerSet(reg, ["a", "b"], set_options())
    with pytest.raises(RuntimeError):
        controllers.build()
    assert [c.name for c in controllers.built()] == ["a"]
    assert [c.name for c in controllers.build()] == ["a", "b"]
    assert attempts == ["b", "b"]
