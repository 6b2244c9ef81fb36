"""The scheduler's Events come from ``volcano``, as Volcano's scheduler's do."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.kube.client import ClientConfig, KubeClient
from volcano_py.manager import Manager, ManagerOptions, scheduler_component


@pytest.mark.parametrize(
    ("names", "component"),
    [(("volcano",), "volcano"), (("gpu-sched",), "gpu-sched"), (("a", "b"), "volcano")],
    ids=["default", "one-custom-name", "several-names"],
)
def test_scheduler_component_is_volcanos_generate_component_name(
    names: tuple[str, ...], component: str
) -> None:
    assert scheduler_component(names) == component


def test_manager_scheduler_reports_as_volcano_and_readyz_notes_missing_topology(
    tmp_path: Path,
) -> None:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n'
    )
    client = KubeClient(ClientConfig(host="https://127.0.0.1:9"))  # never contacted
    options = ManagerOptions(
        scheduler_conf=str(conf),
        leader_elect=False,
        ui_enabled=False,
        metrics_host="127.0.0.1",
        metrics_port=0,  # any free port: the default 8080 may be taken on a shared machine
    )
    manager = Manager(options, client=client)
    assert manager.scheduler is not None
    assert manager.scheduler.writer.recorder is manager.scheduler_recorder
    assert manager.scheduler_recorder.component == "volcano"
    assert manager.recorder.component == "volcano-py"  # the controllers keep their own
    detail = manager.readiness_detail()
    assert any("no network-topology-aware plugin" in line for line in detail), detail
