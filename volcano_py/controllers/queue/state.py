"""The queue state machine: what an action does to a queue in a given state.

Volcano's ``pkg/controllers/queue/state`` as one pure function. A queue is in one of four
states (``status.state``; unset reads as Open). Three actions reach it: ``SyncQueue`` (any
change the controller observed), and ``OpenQueue`` / ``CloseQueue`` (a ``bus.volcano.sh``
Command). ``transition(state, action, podgroups)`` says which step runs and the state it
writes:

- ``SYNC``: recount and keep the state, except that a Closing queue with no PodGroup left
  becomes Closed;
- ``OPEN``: the hierarchical open (a closed parent refuses; children closed by this queue
  reopen) and then Open;
- ``CLOSE``: the hierarchical close (children are closed too) and then Closed when no
  PodGroup names the queue, else Closing.

A state the machine does not know is treated as Unknown, which only an Open or Close
command leaves (as in Volcano, where ``Unknown`` is a stable state).
"""

from __future__ import annotations

from enum import StrEnum

from volcano_py.api.queue import QueueState

OPEN_QUEUE_ACTION = "OpenQueue"
CLOSE_QUEUE_ACTION = "CloseQueue"
SYNC_QUEUE_ACTION = "SyncQueue"
COMMAND_ACTIONS = (OPEN_QUEUE_ACTION, CLOSE_QUEUE_ACTION)


class Step(StrEnum):
    """What the controller does before writing the new state."""

    SYNC = "sync"
    OPEN = "open"
    CLOSE = "close"


def _closing_or_closed(podgroups: int) -> QueueState:
    return QueueState.CLOSING if podgroups else QueueState.CLOSED


def read_state(raw: object) -> QueueState:
    """``status.state`` as a state: unset is Open, anything unknown is Unknown."""
    if raw in (None, ""):
        return QueueState.OPEN
    try:
        return QueueState(str(raw))
    except ValueError:
        return QueueState.UNKNOWN


def transition(state: QueueState, action: str, podgroups: int) -> tuple[Step, QueueState]:
    """The step ``action`` runs on a queue in ``state`` holding ``podgroups`` PodGroups."""
    if action == OPEN_QUEUE_ACTION:
        step = Step.SYNC if state is QueueState.OPEN else Step.OPEN
        return step, QueueState.OPEN
    if action == CLOSE_QUEUE_ACTION:
        if state is QueueState.CLOSED:
            return Step.SYNC, QueueState.CLOSED
        if state is QueueState.CLOSING:
            return Step.SYNC, _closing_or_closed(podgroups)
        return Step.CLOSE, _closing_or_closed(podgroups)
    if state is QueueState.CLOSING:
        return Step.SYNC, _closing_or_closed(podgroups)
    return Step.SYNC, state
