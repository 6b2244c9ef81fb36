"""``ConfWatch``: the scheduler's running configuration and its hot reload.

The running ``SchedulerConf`` comes from ``--scheduler-conf`` (fixed for the process's
life; a bad file is refused before anything listens, see ``commands/manager.py``) or from
the ``volcano-scheduler-configmap`` ConfigMap, which is watched through a field-selected
informer on the shared factory, like the hyperNode-controller's ConfigMap. The scheduler
loop calls ``current()`` at the start of every cycle:

- a changed, valid ``volcano-scheduler.conf`` replaces the running conf for that cycle;
- a changed, invalid one is reported once (a log line and a Warning Event
  ``InvalidSchedulerConf`` on the ConfigMap, both naming the key) and the running conf
  stays; the same bad text is not reported again;
- a deleted ConfigMap or a missing key keeps the running conf.

Each conf taken into use that has no ``network-topology-aware`` is logged once as a warning
(``topology_config``); ``topology_note`` keeps that line for ``/readyz``.

Nothing here raises into the loop: no configuration can crash a running worker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.api.meta import object_key
from volcano_py.api.resources import CONFIGMAPS
from volcano_py.api.safeload import clip
from volcano_py.kube.events import Recorder
from volcano_py.metrics import SCHEDULER_CONF_NOT_IMPLEMENTED, SCHEDULER_CONF_RELOADS
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.registry import ActionRegistry, PluginRegistry, load_conf
from volcano_py.scheduler.topology_config import load_message

log = logging.getLogger(__name__)

CONF_KEY = "volcano-scheduler.conf"
INVALID_REASON = "InvalidSchedulerConf"

ConfigMapGetter = Callable[[], Mapping[str, Any] | None]


class ConfWatch:
    """Holds the running conf; ``current()`` applies a changed ConfigMap when it is valid."""

    def __init__(
        self,
        conf: SchedulerConf,
        plugins: PluginRegistry,
        actions: ActionRegistry,
        *,
        configmap: ConfigMapGetter | None = None,
        recorder: Recorder | None = None,
        text: str | None = None,
    ) -> None:
        """Start from ``conf`` (loaded from ``text``, if known); watch ``configmap`` if given."""
        self.conf = conf
        self.plugins = plugins
        self.actions = actions
        self._configmap = configmap
        self._recorder = recorder
        self._seen_text = text
        self.last_error: str | None = None
        self.topology_note = ""
        self._taken(conf)

    def _taken(self, conf: SchedulerConf) -> None:
        """``conf`` is now the running one: publish what it skips."""
        publish_not_implemented(conf)
        self.topology_note = load_message(conf)
        if self.topology_note:
            log.warning("scheduler conf: %s", self.topology_note)

    def current(self) -> SchedulerConf:
        """The conf for this cycle (a valid ConfigMap edit applies here)."""
        if self._configmap is None:
            return self.conf
        try:
            cm = self._configmap()
        except Exception:  # a store read failing is not a reason to stop scheduling
            log.exception("reading the scheduler ConfigMap failed; keeping the running conf")
            return self.conf
        text = None if cm is None else (cm.get("data") or {}).get(CONF_KEY)
        if not isinstance(text, str) or text == self._seen_text:
            return self.conf
        self._seen_text = text
        assert cm is not None
        key = object_key(cm)
        try:
            conf = load_conf(text, self.plugins, self.actions)
        except Exception as e:  # ConfError, or any bug in a plugin's builder
            message = clip(str(e) if isinstance(e, ConfError) else f"{type(e).__name__}: {e}")
            self.last_error = f"{key} {CONF_KEY}: {message}"
            SCHEDULER_CONF_RELOADS.labels("rejected").inc()
            log.error(
                "scheduler ConfigMap %s: %s rejected, keeping the running conf: %s",
                key,
                CONF_KEY,
                message,
            )
            if self._recorder is not None:
                self._recorder.event(
                    cm,
                    "Warning",
                    INVALID_REASON,
                    f"{CONF_KEY}: {message}; the running configuration stays",
                    resource=CONFIGMAPS,
                )
            return self.conf
        self.conf = conf
        self.last_error = None
        SCHEDULER_CONF_RELOADS.labels("applied").inc()
        self._taken(conf)
        log.info("scheduler ConfigMap %s applied: actions=%s", key, ",".join(conf.actions))
        return conf


def publish_not_implemented(conf: SchedulerConf) -> None:
    """Set the not-implemented gauge to exactly the names of ``conf``."""
    SCHEDULER_CONF_NOT_IMPLEMENTED.clear()
    for entry in conf.not_implemented:
        kind, _, name = entry.partition(" ")
        SCHEDULER_CONF_NOT_IMPLEMENTED.labels(kind, name).set(1)
