"""GenerationMemo: bounded by two generations, keeps what is still asked for."""

from __future__ import annotations

import pytest

from volcano_py.kube import memo as memo_module
from volcano_py.kube.idle_trim import release_memory
from volcano_py.kube.memo import GenerationMemo
from volcano_py.kube.transforms import SubtreeSharer


def test_entries_in_use_survive_every_turnover_and_the_rest_are_dropped() -> None:
    memo: GenerationMemo[str, int] = GenerationMemo(4)
    memo.put("hot", 0)
    for i in range(100):  # one-off keys churn through; "hot" is asked for now and then
        memo.put(f"once-{i}", i)
        if i % 3 == 0:
            assert memo.get("hot") == 0
        assert len(memo) <= 8
    assert "hot" in memo
    assert memo.get("once-0") is None  # long gone
    assert memo.get("once-99") == 99


def test_a_hit_in_the_previous_generation_moves_forward() -> None:
    memo: GenerationMemo[str, int] = GenerationMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("c", 3)  # a, b become the previous generation
    assert memo.get("a") == 1  # moved into the current one (with c)
    memo.put("d", 4)  # current (c, a) full: it becomes previous; b is dropped
    assert memo.get("b") is None
    assert memo.get("a") == 1
    memo.clear()
    assert len(memo) == 0


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="limit"):
        GenerationMemo(0)


def test_clear_all_empties_every_live_memo_and_release_memory_calls_it() -> None:
    first: GenerationMemo[str, int] = GenerationMemo(4)
    second: GenerationMemo[str, int] = GenerationMemo(4)
    for i in range(6):
        first.put(f"a{i}", i)
    second.put("b", 1)
    assert memo_module.clear_all() >= 7
    assert len(first) == 0
    assert len(second) == 0
    first.put("again", 1)  # still usable afterwards
    release_memory()
    assert len(first) == 0


def test_clear_all_also_empties_the_pod_transforms_subtree_sharer() -> None:
    sharer = SubtreeSharer(limit=8)
    held = sharer.share({"app": "web"})
    memo_module.clear_all()
    assert len(sharer) == 0
    assert sharer.share({"app": "web"}) is not held  # forgotten, shared afresh
