from __future__ import annotations

import itertools

import pytest

from volcano_py.kube.errors import AlreadyExists, Conflict, NotFound
from volcano_py.kube.retry import Backoff, retry_on, retry_on_conflict


def conflict(n: int) -> Conflict:
    return Conflict(409, "Conflict", f"stale #{n}")


class Flaky:
    """Raises the given errors in turn, then returns ``result``."""

    def __init__(self, *errors: Exception, result: str = "ok") -> None:
        self.errors = list(errors)
        self.result = result
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return self.result


def test_retry_on_conflict_retries_until_success_with_default_retry_sleeps() -> None:
    sleeps: list[float] = []
    fn = Flaky(conflict(1), conflict(2))
    assert retry_on_conflict(fn, sleep=sleeps.append, rand=lambda: 0.0) == "ok"
    assert fn.calls == 3
    assert sleeps == [0.01, 0.01]


def test_retry_on_conflict_gives_up_after_steps_and_raises_the_last_conflict() -> None:
    sleeps: list[float] = []
    errors = [conflict(i) for i in range(10)]
    fn = Flaky(*errors)
    with pytest.raises(Conflict) as caught:
        retry_on_conflict(fn, sleep=sleeps.append, rand=lambda: 1.0)
    assert fn.calls == 5
    assert caught.value is errors[4]
    assert sleeps == pytest.approx([0.011] * 4), "10 ms plus at most 10% jitter"


@pytest.mark.parametrize(
    "error",
    [
        AlreadyExists(409, "AlreadyExists", "taken"),
        NotFound(404, "NotFound", "gone"),
        ValueError("bug"),
    ],
    ids=["already-exists", "not-found", "other"],
)
def test_retry_on_conflict_does_not_retry_other_errors(error: Exception) -> None:
    fn = Flaky(error)
    with pytest.raises(type(error)):
        retry_on_conflict(fn, sleep=lambda s: pytest.fail("must not sleep"))
    assert fn.calls == 1


def test_retry_on_uses_the_predicate_and_the_backoff() -> None:
    sleeps: list[float] = []
    fn = Flaky(NotFound(404, "NotFound", "a"), NotFound(404, "NotFound", "b"), result="found")
    backoff = Backoff(duration=0.5, factor=2.0, steps=3)
    result = retry_on(lambda e: isinstance(e, NotFound), fn, backoff, sleep=sleeps.append)
    assert result == "found"
    assert sleeps == [0.5, 1.0]


@pytest.mark.parametrize(
    ("backoff", "expected"),
    [
        (Backoff(0.01, factor=5.0, steps=4), [0.01, 0.05, 0.25, 1.25, 6.25, 6.25]),
        (Backoff(0.5, factor=2.0, steps=100, cap=4.0), [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]),
        (Backoff(1.0, factor=1.0, steps=2), [1.0] * 6),
        (Backoff(2.0, factor=0.0, steps=3), [2.0] * 6),
    ],
    ids=["default-backoff", "capped", "constant", "no-factor"],
)
def test_backoff_delays_follow_wait_backoff_step(backoff: Backoff, expected: list[float]) -> None:
    delays = list(itertools.islice(backoff.delays(), 6))
    assert delays == pytest.approx(expected)


def test_backoff_jitter_adds_up_to_jitter_times_the_delay() -> None:
    backoff = Backoff(1.0, factor=2.0, jitter=0.5, steps=3)
    assert list(itertools.islice(backoff.delays(lambda: 0.5), 3)) == [1.25, 2.5, 5.0]
