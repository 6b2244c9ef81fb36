"""The local cluster is dev tooling: never part of the product's wheel."""

from __future__ import annotations

import configparser
from pathlib import Path

import setuptools

ROOT = Path(__file__).resolve().parents[3]


def test_wheel_packages_leave_devcluster_and_tests_out() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    include = cfg["options.packages.find"]["include"].split()
    packages = setuptools.find_packages(where=str(ROOT), include=include)
    assert "volcano_py" in packages
    assert "webhooks" in packages
    assert not [p for p in packages if p.split(".")[0] in {"devcluster", "tests", "bench"}]


def test_devcluster_is_a_package_with_its_binaries_modules() -> None:
    assert (ROOT / "devcluster" / "__init__.py").is_file()
    for module in ("kube", "etcd", "kwok"):
        assert (ROOT / "devcluster" / "gomod" / module / "go.mod").is_file()
    assert not (ROOT / "tests" / "controlplane").exists()


def test_devcluster_modules_find_the_repository_root() -> None:
    from devcluster import crds, devrun, devstate, fleet, manager

    for module in (crds, devrun, devstate, fleet, manager):
        assert (module.ROOT / "manifests" / "crds").is_dir(), module.__name__
