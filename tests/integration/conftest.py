"""Fixtures for integration tests: see tests/fixtures.py."""

from tests.fixtures import client, control_plane, namespace, taken

__all__ = ["client", "control_plane", "namespace", "taken"]
