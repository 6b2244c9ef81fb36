"""Fixtures for the operator conformance suite: the scheduler fixtures, shared."""

from tests.integration.scheduler.conftest import (
    client,
    control_plane,
    namespace,
    run_scheduler,
    topology,
)

__all__ = ["client", "control_plane", "namespace", "run_scheduler", "topology"]
