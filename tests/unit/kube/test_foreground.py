"""``Foreground``: background writes wait for the binds in flight, never for ever."""

from __future__ import annotations

import threading

from volcano_py.kube.foreground import Foreground


def test_pause_reports_whether_a_foreground_call_runs() -> None:
    fg = Foreground()
    assert fg.pause(0)
    with fg.running(), fg.running():
        assert not fg.pause(0)  # two calls run; a zero wait gives up at once
    assert fg.pause(0)


def test_a_waiting_background_write_goes_when_the_last_call_ends() -> None:
    fg = Foreground()
    started, answer = threading.Event(), []
    first, second = fg.running(), fg.running()
    first.__enter__()
    second.__enter__()

    def background() -> None:
        started.set()
        answer.append(fg.pause(600))  # a hang guard, not a verdict: the exit wakes it

    thread = threading.Thread(target=background)
    thread.start()
    started.wait()
    first.__exit__(None, None, None)
    assert not answer or answer == [True]  # one call still runs: no early go
    second.__exit__(None, None, None)
    thread.join(600)
    assert answer == [True]


def test_a_call_that_raises_still_ends() -> None:
    fg = Foreground()
    try:
        with fg.running():
            raise RuntimeError("bind failed")
    except RuntimeError:
        pass
    assert fg.pause(0)


def test_queued_calls_count_until_each_is_done() -> None:
    fg = Foreground()
    fg.queued(2)
    assert not fg.pause(0)
    fg.done()
    assert not fg.pause(0)  # one still due
    fg.done()
    assert fg.pause(0)
