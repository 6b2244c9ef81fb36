"""``Foreground``: background writes wait for the binds in flight, never for ever."""

from __future__ import annotations

import threading

from volcano_py.kube.foreground import Foreground


def test_pause_reports_whether_a_foreground_call_runs() -> None:
    fg = Foreground()
    assert fg.pause(0)
    fg.queued(2)
    assert not fg.pause(0)  # two calls run; a zero wait gives up at once
    fg.done(2)
    assert fg.pause(0)


def test_a_waiting_background_write_goes_when_the_last_call_ends() -> None:
    fg = Foreground()
    started, answer = threading.Event(), []
    fg.queued(2)

    def background() -> None:
        started.set()
        answer.append(fg.pause(600))  # a hang guard, not a verdict: the exit wakes it

    thread = threading.Thread(target=background)
    thread.start()
    started.wait()
    fg.done()
    assert not answer or answer == [True]  # one call still runs: no early go
    fg.done()
    thread.join(600)
    assert answer == [True]


def test_queued_calls_count_until_each_is_done() -> None:
    fg = Foreground()
    fg.queued(2)
    assert not fg.pause(0)
    fg.done()
    assert not fg.pause(0)  # one still due
    fg.done()
    assert fg.pause(0)
