"""Bad input to any subcommand: one actionable line and an exit code, never a traceback.

Every case runs ``main()`` in-process: a traceback would be an exception escaping it. The API
server's retry loop runs on a fake clock and a fake probe (no sockets, no sleeps); the same
loop against a closed port, as a process, is in ``tests/e2e/test_cli_unreachable_cluster.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli import build_parser, main
from volcano_py.commands.cluster_access import (
    CommandError,
    Waiting,
    wait_for_api_server,
)
from volcano_py.kube.config import load_config
from volcano_py.kube.errors import ConfigError, ConnectionFailed, ServerError, Unauthorized

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples/scheduler/cluster.yaml")
DISCOVERY_CONF = str(ROOT / "examples/discovery/volcano-controller.conf")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "broken.yaml").write_text("a: [\n")
    (tmp_path / "scalars.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "bad.kubeconfig").write_text("clusters: [\n")
    (tmp_path / "ftp.kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'ftp://example'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    (tmp_path / "binary.yaml").write_bytes(b"kind: \xe3\x28\xa1\n")
    (tmp_path / "meta.yaml").write_text("kind: Pod\nmetadata: 5\n")
    (tmp_path / "quantity.yaml").write_text(
        "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n"
    )
    return tmp_path


CASES = [
    (["validate", "{d}/nope.yaml"], 2, "nope.yaml: cannot read"),
    (["validate", "{d}/empty.yaml"], 2, "empty.yaml:1: no objects in the file"),
    (["validate", "{d}/broken.yaml"], 2, "broken.yaml:2: invalid YAML/JSON"),
    (["discover", "--config", "{d}/nope", "--objects", "{d}/empty.yaml"], 2, "nope"),
    (["discover", "--config", "{d}/broken.yaml", "--objects", "{d}/empty.yaml"], 2, "broken"),
    (["discover", "--config", DISCOVERY_CONF, "--objects", "{d}/broken.yaml"], 2, "broken.yaml"),
    (["simulate", "--cluster", "{d}/nope.yaml"], 2, "nope.yaml"),
    (["simulate", "--cluster", "{d}/scalars.yaml"], 2, "scalars.yaml: expected objects"),
    (
        ["simulate", "--cluster", CLUSTER, "--scheduler-conf", "{d}/broken.yaml"],
        2,
        "scheduler conf:2: invalid YAML/JSON",
    ),
    (["explain", "--cluster", CLUSTER, "--job", "nope/x"], 1, "no PodGroup nope/x"),
    (["explain", "--cluster", "{d}/broken.yaml", "--job", "a/b"], 2, "broken.yaml"),
    (["tree", "--cluster", "{d}/nope.yaml"], 2, "nope.yaml"),
    (["validate", "{d}/binary.yaml"], 2, "binary.yaml: cannot read: not UTF-8 text"),
    (["discover", "--config", "{d}/binary.yaml", "--objects", "{d}/empty.yaml"], 2, "not UTF-8"),
    (["simulate", "--cluster", "{d}/binary.yaml"], 2, "binary.yaml: not UTF-8 text"),
    (["simulate", "--cluster", "{d}/meta.yaml"], 2, "Pod '': metadata: must be an object"),
    (["explain", "--cluster", "{d}/quantity.yaml", "--job", "a/b"], 2, "Node n1: status.alloc"),
    (["tree", "--cluster", "{d}/quantity.yaml"], 2, 'Invalid value: "lots"'),
    (["tree", "--cluster", "{d}"], 2, "Is a directory"),
    (["tree", "--kubeconfig", "{d}/nope.kubeconfig"], 2, "kubeconfig {d}/nope.kubeconfig: no such"),
    (["tree", "--kubeconfig", "{d}/bad.kubeconfig"], 2, "kubeconfig {d}/bad.kubeconfig: cannot"),
    (["tree", "--kubeconfig", "{d}/ftp.kubeconfig"], 2, "not an http(s) server address"),
    (["manager", "--kubeconfig", "{d}/nope.kubeconfig"], 2, "kubeconfig {d}/nope.kubeconfig"),
    (["manager", "--controllers", "nope"], 2, "--controllers: unknown controller 'nope'"),
    (["manager", "--lease-duration", "5"], 2, "--lease-duration (5) must exceed"),
    (["manager", "--scheduler-conf", "{d}/scalars.yaml"], 2, "--scheduler-conf {d}/scalars"),
    (["webhook", "--cert-dir", "{d}/afile", "--no-cluster"], 2, "--cert-dir {d}/afile"),
    (["webhook", "--cert-dir", "{d}/nocerts", "--no-cluster"], 2, "has no tls.crt"),
    (
        ["webhook", "--cert-dir", "{d}/certs", "--self-signed", "--kubeconfig", "{d}/nope.kc"],
        2,
        "kubeconfig {d}/nope.kc: no such file",
    ),
]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    CASES,
    ids=[f"{c[0][0]}-{i}" for i, c in enumerate(CASES)],
)
def test_cli_bad_input_exits_with_one_actionable_line(
    files: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    args = [a.format(d=files) for a in argv]
    assert main(args) == code
    err = capsys.readouterr().err
    assert message.format(d=files) in err
    assert "Traceback" not in err


REQUIRED = {
    "validate": ["x.yaml"],
    "discover": ["--config", "c", "--objects", "o"],
    "simulate": ["--cluster", "c"],
    "explain": ["--cluster", "c", "--job", "a/b"],
    "webhook": ["--cert-dir", "d"],
}


def test_cli_unknown_flag_cases_cover_every_subcommand() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert set(subparsers.choices) == {*REQUIRED, "manager", "tree"}  # type: ignore[arg-type]


@pytest.mark.parametrize("command", sorted({*REQUIRED, "manager", "tree"}))
def test_cli_unknown_flag_is_an_argparse_error_exit_2(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, *REQUIRED.get(command, []), "--no-such-flag"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: volcano-py")
    assert "error: unrecognized arguments: --no-such-flag" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["manager", "--schedule-period", "-1"], "--schedule-period: must be greater than 0"),
        (["manager", "--webhook-threads", "0"], "--webhook-threads: must be at least 1"),
        (["manager", "--webhook-port", "70000"], "--webhook-port: must be a port"),
        (["manager", "--lease-duration", "nan"], "--lease-duration: expected a finite number"),
        (["manager", "--leader-elect", "maybe"], "--leader-elect: expected true or false"),
        (["manager", "--api-wait", "-3"], "--api-wait: must not be negative"),
        (["tree", "--api-wait", "soon"], "--api-wait: expected a number"),
        (["tree", "-o", "png"], "argument -o/--output: invalid choice: 'png'"),
    ],
    ids=["period", "threads", "port", "nan", "bool", "api-wait", "api-wait-word", "choice"],
)
def test_cli_bad_flag_value_names_the_flag_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds

    def waiting(self) -> Waiting:
        return Waiting(now=lambda: self.t, sleep=self.sleep)


def test_api_wait_retries_with_backoff_says_so_and_gives_up_after_the_bound() -> None:
    clock = FakeClock()
    said: list[str] = []
    calls = 0

    def probe() -> None:
        nonlocal calls
        calls += 1
        raise ConnectionFailed("GET /version: connecting to 10.0.0.1:6443: refused")

    with pytest.raises(CommandError) as info:
        wait_for_api_server(probe, "https://10.0.0.1:6443", 20.0, said.append, clock.waiting())
    assert info.value.exit_code == 1
    assert str(info.value).startswith(
        f"the API server at https://10.0.0.1:6443 did not answer after {calls} attempt(s) in 20s: "
        "GET /version: connecting to 10.0.0.1:6443: refused"
    )
    assert clock.t == pytest.approx(20.0)  # bounded: the last sleep is cut to the deadline
    assert clock.slept[:4] == pytest.approx([0.5, 1, 2, 4], rel=0.11)  # exponential, jittered
    assert max(clock.slept) <= 8 * 1.1
    assert len(said) == len(clock.slept) == calls - 1
    assert said[0].startswith("cannot reach the API server at https://10.0.0.1:6443: GET /version")
    assert "retrying in 0.5s" in said[0] or "retrying in 0.6s" in said[0]


def test_api_wait_returns_once_the_server_answers() -> None:
    clock = FakeClock()
    answers: list[Exception | None] = [ServerError(503, "ServiceUnavailable", "starting"), None]

    def probe() -> None:
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    said: list[str] = []
    wait_for_api_server(probe, "https://h", 30.0, said.append, clock.waiting())
    assert answers == []
    assert len(said) == 1
    assert "503 ServiceUnavailable: starting" in said[0]


def test_api_wait_does_not_retry_refused_credentials() -> None:
    clock = FakeClock()

    def probe() -> None:
        raise Unauthorized(401, "Unauthorized", "Unauthorized")

    with pytest.raises(CommandError, match="refused our credentials"):
        wait_for_api_server(probe, "https://h", 30.0, lambda _: None, clock.waiting())
    assert clock.slept == []


def test_api_wait_zero_means_one_attempt() -> None:
    clock = FakeClock()

    def probe() -> None:
        raise ConnectionFailed("refused")

    with pytest.raises(CommandError, match="after 1 attempt"):
        wait_for_api_server(probe, "https://h", 0.0, lambda _: None, clock.waiting())
    assert clock.slept == []


def test_load_config_names_a_missing_kubeconfig_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "gone"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError) as info:
        load_config()
    assert f"$KUBECONFIG {tmp_path / 'gone'} does not exist" in str(info.value)
    assert "pass --kubeconfig FILE" in str(info.value)


def test_load_config_does_not_fall_back_to_in_cluster_for_a_broken_default_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "config"
    broken.write_text("users: {\n")
    monkeypatch.setenv("KUBECONFIG", str(broken))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match=f"kubeconfig {broken}: cannot load it"):
        load_config()


def test_load_config_reads_kubeconfig_when_called_not_when_the_package_was_imported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the kubernetes package takes $KUBECONFIG once, at import: a shell that exported a
    # working cluster's kubeconfig then must not answer for a $KUBECONFIG set since
    from kubernetes.config import kube_config

    working = tmp_path / "working"
    working.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {exec: {command: x, apiVersion: v1}}}]\n"
    )
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(working))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "gone"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match=f"KUBECONFIG {tmp_path / 'gone'} does not exist"):
        load_config()
