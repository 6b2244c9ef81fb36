"""Kubeconfigs of the common shapes are read without the kubernetes package (kube/config.py)."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.kube import config as C
from volcano_py.kube.config import in_cluster_config, load_config, plain_config


def kubeconfig(path: Path, user: dict[str, Any], cluster: dict[str, Any] | None = None) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "main",
        "contexts": [
            {"name": "main", "context": {"cluster": "c", "user": "u"}},
            {"name": "other", "context": {"cluster": "c2", "user": "u"}},
        ],
        "clusters": [
            {"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:6443/"}},
            {"name": "c2", "cluster": {"server": "https://10.0.0.2:6443"}},
        ],
        "users": [{"name": "u", "user": user}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_inline_certificates_go_to_private_files(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        {"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")},
        {"server": "https://127.0.0.1:6443/", "certificate-authority-data": b64("CA")},
    )
    config = plain_config(str(path))
    assert config is not None
    assert config.host == "https://127.0.0.1:6443"
    assert config.verify
    assert config.token is None
    assert config.ca_file
    assert config.cert_file
    assert config.key_file
    assert Path(config.ca_file).read_text() == "CA"
    assert Path(config.cert_file).read_text() == "CERT"
    assert Path(config.key_file).read_text() == "KEY"
    assert stat.S_IMODE(os.stat(config.key_file).st_mode) == 0o600


def test_files_are_relative_to_the_kubeconfig_and_the_context_can_be_chosen(
    tmp_path: Path,
) -> None:
    (tmp_path / "ca.crt").write_text("CA")
    (tmp_path / "token").write_text("tok-1\n")
    path = kubeconfig(
        tmp_path / "config",
        {"tokenFile": "token"},
        {"server": "https://127.0.0.1:6443", "certificate-authority": "ca.crt"},
    )
    config = plain_config(str(path))
    assert config is not None
    assert config.token is not None
    assert config.ca_file == str(tmp_path / "ca.crt")
    assert config.token() == "Bearer tok-1"
    other = plain_config(str(path), context="other")
    assert other is not None
    assert other.host == "https://10.0.0.2:6443"


def test_a_token_file_is_read_again_after_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("old")
    path = kubeconfig(tmp_path / "config", {"tokenFile": str(tmp_path / "token")})
    config = plain_config(str(path))
    assert config is not None
    assert config.token is not None
    now = [1000.0]
    monkeypatch.setattr(C.time, "monotonic", lambda: now[0])
    assert config.token() == "Bearer old"
    (tmp_path / "token").write_text("new")
    assert config.token() == "Bearer old"  # within TOKEN_REREAD_S
    now[0] += C.TOKEN_REREAD_S
    assert config.token() == "Bearer new"


def test_an_insecure_cluster_with_a_static_token(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        {"token": "abc"},
        {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True},
    )
    config = plain_config(str(path))
    assert config is not None
    assert config.token is not None
    assert not config.verify
    assert config.token() == "Bearer abc"


@pytest.mark.parametrize(
    ("user", "cluster"),
    [
        ({"exec": {"command": "aws"}}, None),  # a credential plugin
        ({"auth-provider": {"name": "oidc"}}, None),
        ({"username": "a", "password": "b"}, None),
        ({"token": "t", "as": "someone"}, None),  # impersonation
        ({"token": "t"}, {"server": "https://x:6443", "proxy-url": "http://proxy"}),
        ({"token": "t"}, {"server": "ftp://example"}),
        ({"tokenFile": "missing-file"}, None),
        ({"client-certificate-data": "not base64!"}, None),
    ],
)
def test_other_shapes_are_left_to_the_kubernetes_package(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any] | None
) -> None:
    assert plain_config(str(kubeconfig(tmp_path / "config", user, cluster))) is None


def test_merged_missing_and_broken_files_are_left_to_the_package(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"token": "t"})
    assert plain_config(f"{path}{os.pathsep}{path}") is None
    assert plain_config(str(tmp_path / "gone")) is None
    (tmp_path / "broken").write_text("users: {\n")
    assert plain_config(str(tmp_path / "broken")) is None
    assert plain_config(str(path), context="no-such-context") is None


def test_the_in_cluster_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert in_cluster_config(str(tmp_path)) is None  # not in a pod
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert in_cluster_config(str(tmp_path)) is None  # no token mounted
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("CA")
    config = in_cluster_config(str(tmp_path))
    assert config is not None
    assert config.token is not None
    assert config.host == "https://[fd00::1]:443"
    assert config.ca_file == str(tmp_path / "ca.crt")
    assert config.token() == "Bearer sa-token"


def test_load_config_reads_a_plain_kubeconfig_without_importing_kubernetes(
    tmp_path: Path,
) -> None:
    path = kubeconfig(tmp_path / "config", {"token": "t"})
    code = (
        "import sys\n"
        "from volcano_py.kube.config import load_config\n"
        f"c = load_config({str(path)!r})\n"
        "print(c.host, 'kubernetes' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["https://127.0.0.1:6443", "False"]
    # and a shape it leaves alone still loads, through the package
    exec_path = kubeconfig(
        tmp_path / "exec",
        {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true"}},
    )
    assert load_config(str(exec_path)).host == "https://127.0.0.1:6443"
