"""``queue-controller``: Volcano's queue state machine, its Commands, and the built-in queues.

What it owns (see ``docs/queues.md``): ``status.state`` of every Queue, the
``volcano.sh/closed-by-parent`` annotation, and the existence of ``root`` and ``default``.
The PodGroup counts and ``allocated`` in ``Queue.status`` are the scheduler's
(``scheduler/queue_status.py``): one writer per field, so neither overwrites the other with
a stale copy.

Wiring (``initialize``, no I/O): the shared Queue, PodGroup and Command informers, plus one
index on the PodGroup cache (PodGroups by queue). Handlers turn events into ``Request`` keys:

- a Queue added, or its parent changed -> sync it; ``root`` or ``default`` deleted -> sync
  it (the sync re-creates it);
- a PodGroup added or deleted -> sync its queue (a Closing queue closes with its last one);
- a Command added whose ``target`` is a ``scheduling.volcano.sh/v1beta1`` Queue -> that
  Command's key.

``sync`` of a Command deletes it (consumed once, as Volcano's ``handleCommand``) and queues
its action for the target queue; a Command naming no queue, an action other than
``OpenQueue`` / ``CloseQueue``, or a queue that does not exist gets a Warning Event naming
the Command and changes nothing else. ``sync`` of a queue runs ``state.transition`` and
writes ``status.state`` only when it changes (an idle cluster costs no write; a queue with no
``spec.parent`` gets ``root`` written once, as Volcano's ``updateQueueParent``), then follows
the hierarchy as Volcano's ``syncHierarchicalQueue``: a queue under a Closing or Closed
parent is closed and marked closed-by-parent, and reopens with its parent. A cycle through
``spec.parent`` is reported as a Warning Event on the queue and the hierarchy is not
followed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api import JSON
from volcano_py.api import resources as R
from volcano_py.api.constants import DEFAULT_QUEUE
from volcano_py.api.meta import annotations_of, name_of, namespace_of
from volcano_py.api.queue import (
    BUILTIN_QUEUES,
    CLOSED_BY_PARENT_ANNOTATION,
    QUEUE_CONTROLLER_NAME,
    ROOT_QUEUE,
    QueueState,
    queue_manifest,
)
from volcano_py.controllers import skeleton
from volcano_py.controllers.framework import ControllerOptions
from volcano_py.controllers.queue.state import (
    CLOSE_QUEUE_ACTION,
    COMMAND_ACTIONS,
    OPEN_QUEUE_ACTION,
    SYNC_QUEUE_ACTION,
    Step,
    read_state,
    transition,
)
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists, NotFound
from volcano_py.kube.events import DiscardRecorder, Recorder
from volcano_py.kube.informer import EventHandler
from volcano_py.kube.store import Store, key_of

log = logging.getLogger(__name__)

QUEUE_INDEX = "queue-controller/queue"
QUEUE_API_VERSION = f"{R.QUEUES.group}/{R.QUEUES.version}"
# an open under a shut parent is retried this many times (the parent may be opening and
# the cache not have seen it yet), as Volcano's maxRequeueNum; the first refusal is an Event
MAX_OPEN_RETRIES = 15
OPEN_RETRY_DELAY_S = 0.05  # doubled per try, at most OPEN_RETRY_MAX_DELAY_S (about 45 s in all)
OPEN_RETRY_MAX_DELAY_S = 5.0
_SHUT = (QueueState.CLOSED, QueueState.CLOSING)


@dataclass(frozen=True, slots=True)
class Request:
    """One unit of work: a queue name and an action, or a Command's ``namespace/name``.

    ``by_parent``: an open its parent's reopening asked for (its cache may not show the
    parent Open yet: retried without a Warning Event).
    """

    key: str
    action: str = SYNC_QUEUE_ACTION
    command: bool = False
    by_parent: bool = False


def queue_of_podgroup(podgroup: Mapping[str, Any]) -> str:
    """The queue a PodGroup names (``default`` when it names none, as the scheduler reads it)."""
    queue = (podgroup.get("spec") or {}).get("queue")
    return queue if isinstance(queue, str) and queue else DEFAULT_QUEUE


def _podgroup_queue_index(podgroup: JSON) -> list[str]:
    return [queue_of_podgroup(podgroup)]


def is_queue_reference(ref: Any) -> bool:
    """Whether a Command's ``target`` points at a Queue (Volcano's ``IsQueueReference``)."""
    return (
        isinstance(ref, Mapping)
        and ref.get("apiVersion") == QUEUE_API_VERSION
        and ref.get("kind") == R.QUEUES.kind
    )


def parent_of(queue: Mapping[str, Any]) -> str:
    """``spec.parent``; a queue other than ``root`` without one sits under ``root``."""
    parent = (queue.get("spec") or {}).get("parent")
    if isinstance(parent, str) and parent:
        return parent
    return "" if name_of(queue) == ROOT_QUEUE else ROOT_QUEUE


def parent_cycle(queues: Callable[[str], JSON | None], name: str) -> list[str] | None:
    """The loop of names when following ``spec.parent`` from ``name`` comes back; else None."""
    path = [name]
    current = queues(name)
    while current is not None:
        parent = parent_of(current)
        if not parent:
            return None
        if parent in path:
            return [*path[path.index(parent) :], parent]
        path.append(parent)
        current = queues(parent)
    return None


class QueueController(skeleton.QueueController[Request]):
    """The ``queue-controller`` (Volcano's ``queuecontroller``); see the module docstring."""

    controller_name = QUEUE_CONTROLLER_NAME

    def __init__(self) -> None:
        super().__init__()
        self.client: KubeClient | None = None
        self.recorder: Recorder = DiscardRecorder()
        self.queues = Store()
        self.podgroups = Store({QUEUE_INDEX: _podgroup_queue_index})
        self.commands = Store()
        self._open_tries: dict[Request, int] = {}  # opens waiting for their parent to open

    def wire(self, options: ControllerOptions) -> skeleton.Wiring:
        """Get the shared informers, index PodGroups by queue, register the handlers."""
        self.client = options.client
        self.recorder = skeleton.recorder_of(options)
        informers = skeleton.shared_informers(options, R.QUEUES, R.PODGROUPS, R.COMMANDS)
        queues, podgroups, commands = informers
        skeleton.add_index(podgroups, QUEUE_INDEX, _podgroup_queue_index)
        self.queues, self.podgroups, self.commands = queues.store, podgroups.store, commands.store
        registrations = [
            queues.add_event_handler(
                EventHandler(
                    on_add=self.queue_added,
                    on_update=self.queue_updated,
                    on_delete=self.queue_deleted,
                )
            ),
            podgroups.add_event_handler(
                EventHandler(on_add=self.podgroup_changed, on_delete=self.podgroup_changed)
            ),
            commands.add_event_handler(EventHandler(on_add=self.command_added)),
        ]
        return informers, registrations

    def caches_synced(self) -> None:
        """Sync ``root`` and ``default`` once at start (re-created if missing)."""
        for name in BUILTIN_QUEUES:
            self.queue.add(Request(name))

    # --- handlers: events in, keys out ------------------------------------------------------

    def queue_added(self, queue: JSON) -> None:
        """A new Queue is synced (its state written Open when unset)."""
        self.queue.add(Request(name_of(queue)))

    def queue_updated(self, old: JSON, new: JSON) -> None:
        """A Queue whose parent moved is synced again (Volcano's ``updateQueue``)."""
        if parent_of(old) != parent_of(new):
            self.queue.add(Request(name_of(new)))

    def queue_deleted(self, queue: JSON) -> None:
        """``root`` and ``default`` are re-created."""
        if name_of(queue) in BUILTIN_QUEUES:
            self.queue.add(Request(name_of(queue)))

    def podgroup_changed(self, podgroup: JSON) -> None:
        """A PodGroup came or went: its queue's count moved."""
        self.queue.add(Request(queue_of_podgroup(podgroup)))

    def command_added(self, command: JSON) -> None:
        """A Command aimed at a Queue is consumed by this controller."""
        if is_queue_reference(command.get("target")):
            self.queue.add(Request(key_of(command), command=True))

    # --- sync --------------------------------------------------------------------------------

    def sync(self, request: Request) -> None:
        """Reconcile one request (the worker's sync function)."""
        if request.command:
            self.sync_command(request.key)
        else:
            self.sync_queue(request.key, request.action, request)

    def _client(self) -> KubeClient:
        if self.client is None:
            raise RuntimeError("queue-controller: sync() before initialize()")
        return self.client

    def _warn(self, obj: JSON, resource: R.APIResource, reason: str, message: str) -> None:
        log.warning("%s %s: %s", resource.kind.lower(), key_of(obj), message)
        self.recorder.event(obj, "Warning", reason, message, resource=resource)

    def sync_command(self, key: str) -> None:
        """Consume one Command: delete it, then queue its action (or warn, see the docstring)."""
        command = self.commands.get(key)
        if command is None:
            return
        target = command.get("target") or {}
        queue_name = target.get("name")
        action = command.get("action")
        problem = None
        if not isinstance(queue_name, str) or not queue_name:
            problem = ("InvalidCommand", "target.name: the Command names no Queue")
        elif action not in COMMAND_ACTIONS:
            problem = (
                "InvalidCommand",
                f"action: {action!r} is not one of {', '.join(COMMAND_ACTIONS)} "
                f"(Command for Queue {queue_name!r})",
            )
        elif self.queues.get(queue_name) is None:
            problem = ("QueueNotFound", f"target.name: Queue {queue_name!r} does not exist")
        try:
            self._client().delete(R.COMMANDS, name_of(command), namespace_of(command))
        except NotFound:
            return  # consumed by someone else already
        if problem is not None:
            self._warn(command, R.COMMANDS, *problem)
            return
        log.info("command %s: %s for queue %s", key, action, queue_name)
        self.queue.add(Request(str(queue_name), str(action)))

    def sync_queue(self, name: str, action: str, request: Request | None = None) -> None:
        """Run ``action`` on queue ``name`` (re-create it first if it is a missing built-in)."""
        queue = self.queues.get(name)
        if queue is None:
            if name in BUILTIN_QUEUES:
                self._create_builtin(name)
            return
        if name != ROOT_QUEUE and not (queue.get("spec") or {}).get("parent"):
            # Volcano's updateQueueParent: a queue without a parent hangs under root, written
            # once so that `kubectl get queue` and vcctl show it
            self._client().patch(R.QUEUES, name, {"spec": {"parent": ROOT_QUEUE}})
        state = read_state((queue.get("status") or {}).get("state"))
        podgroups = len(self.podgroups.index_keys(QUEUE_INDEX, name))
        step, new_state = transition(state, action, podgroups)
        if step is Step.CLOSE and not self._close_children(queue):
            return
        if step is Step.OPEN and not self._open_hierarchy(queue, request or Request(name, action)):
            return
        if (queue.get("status") or {}).get("state") != new_state.value:
            self._client().patch(
                R.QUEUES, name, {"status": {"state": new_state.value}}, subresource="status"
            )
            log.info("queue %s: %s -> %s (%s)", name, state.value, new_state.value, action)
        if step is Step.OPEN:
            self._mark_closed_by_parent(queue, value="false")
        self._follow_parent(queue, new_state)

    def _create_builtin(self, name: str) -> None:
        parent = "" if name == ROOT_QUEUE else ROOT_QUEUE
        try:
            self._client().create(R.QUEUES, queue_manifest(name, parent=parent))
        except AlreadyExists:
            return
        log.info("queue %s: re-created (it was deleted)", name)

    def _children(self, name: str) -> list[JSON]:
        return sorted(
            (q for q in self.queues.list() if parent_of(q) == name and name_of(q) != name),
            key=name_of,
        )

    def _mark_closed_by_parent(self, queue: JSON, value: str) -> None:
        current = annotations_of(queue).get(CLOSED_BY_PARENT_ANNOTATION)
        if current == value or (value == "false" and current is None):
            return
        patch = {"metadata": {"annotations": {CLOSED_BY_PARENT_ANNOTATION: value}}}
        self._client().patch(R.QUEUES, name_of(queue), patch)

    def _close_children(self, queue: JSON) -> bool:
        """Volcano's ``closeHierarchicalQueue``; False when the queue must not close."""
        if name_of(queue) == ROOT_QUEUE:
            self._warn(queue, R.QUEUES, CLOSE_QUEUE_ACTION, "the root queue cannot be closed")
            return False
        for child in self._children(name_of(queue)):
            if read_state((child.get("status") or {}).get("state")) not in _SHUT:
                self._mark_closed_by_parent(child, value="true")
                self.queue.add(Request(name_of(child), CLOSE_QUEUE_ACTION))
        return True

    def _open_hierarchy(self, queue: JSON, request: Request) -> bool:
        """Volcano's ``openHierarchicalQueue``; False when a closed parent keeps it shut."""
        parent_name = parent_of(queue)
        parent = self.queues.get(parent_name) if parent_name not in ("", ROOT_QUEUE) else None
        if parent is not None and read_state((parent.get("status") or {}).get("state")) in _SHUT:
            message = (
                f"queue {name_of(queue)} stays shut: its parent queue {parent_name} is "
                "closing or closed; open the parent first"
            )
            tries = self._open_tries.pop(request, 0)
            if tries == 0 and not request.by_parent:
                self._warn(queue, R.QUEUES, OPEN_QUEUE_ACTION, message)
            if tries < MAX_OPEN_RETRIES:
                self._open_tries[request] = tries + 1
                delay = min(OPEN_RETRY_DELAY_S * 2**tries, OPEN_RETRY_MAX_DELAY_S)
                self.queue.add_after(request, delay)
                log.info("queue %s: open retried in %.2fs: %s", name_of(queue), delay, message)
            return False
        self._open_tries.pop(request, None)
        for child in self._children(name_of(queue)):
            if annotations_of(child).get(CLOSED_BY_PARENT_ANNOTATION) == "true":
                self.queue.add(Request(name_of(child), OPEN_QUEUE_ACTION, by_parent=True))
        return True

    def _follow_parent(self, queue: JSON, state: QueueState) -> None:
        """Volcano's ``syncHierarchicalQueue``: close under a shut parent, reopen with it."""
        name = name_of(queue)
        parent_name = parent_of(queue)
        if not parent_name:
            return
        cycle = parent_cycle(self.queues.get, name)
        if cycle is not None:
            self._warn(
                queue,
                R.QUEUES,
                "HierarchyCycle",
                f"spec.parent: the queue hierarchy loops ({' -> '.join(cycle)}); "
                "the parent's state is not followed",
            )
            return
        parent = self.queues.get(parent_name)
        if parent is None:
            return
        parent_state = read_state((parent.get("status") or {}).get("state"))
        if parent_state in _SHUT and state not in _SHUT:
            self._mark_closed_by_parent(queue, value="true")
            self.queue.add(Request(name, CLOSE_QUEUE_ACTION))
        elif (
            parent_state is QueueState.OPEN
            and state in _SHUT
            and annotations_of(queue).get(CLOSED_BY_PARENT_ANNOTATION) == "true"
        ):
            self.queue.add(Request(name, OPEN_QUEUE_ACTION))
