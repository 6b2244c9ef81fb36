"""``make run`` and ``make demo``: the manager in the foreground, on a cluster or a local one.

Which cluster (``--cluster``, ``make run CLUSTER=...``): ``local`` always starts a local one;
``existing`` runs the manager against ``$KUBECONFIG``'s cluster (certificates in ``certs/``; the
cluster's API server cannot call a webhook on this machine, so no webhook configuration is
installed) and creates nothing there; ``auto`` (the default) starts a local one, but refuses,
with the two commands to choose from, when ``$KUBECONFIG`` is set to a cluster ``make run`` did
not start (``choose_cluster``): an exported kubeconfig of a real cluster is never used unless
asked for. ``make demo`` is always local. A local cluster is started from the test harness
(binaries cached) as a cluster would be (``like_a_cluster``): etcd, kube-apiserver,
kube-controller-manager with its whole default controller set, kube-scheduler as the default
scheduler (pods without ``schedulerName`` run) and kwok as the kubelets; the CRDs, the
ValidatingAdmissionPolicy, a ValidatingWebhookConfiguration pointing at
``https://127.0.0.1:<port>`` and both ConfigMaps are installed; a fleet of GPU nodes is created
(``--nodes``, default 8 in 2 spines x 2 racks, see ``fleet.py``) which label discovery turns
into HyperNodes; the manager runs against it and the lines to try are printed.

``--demo`` then applies ``examples/workloads/deployment-gang.yaml``, waits until its pods run,
prints ``volcano-py tree`` and where each pod landed, and keeps the cluster up.

Ports given (``--webhook-port``, ``--metrics-port``; ``make run WEBHOOK_PORT=..``,
``METRICS_PORT=..``) are checked before anything starts: a taken one is a one-line error
naming it and its flag, exit 2 at once. Either way the run lasts until Ctrl-C, SIGTERM or
SIGHUP reaches this process (or until ``make`` above it dies, or the manager exits: its code
is ours), and then stops everything it started and removes its temporary folder. GNU ``make``
passes SIGTERM on to the run but not a SIGHUP sent to make's pid alone (it waits for the
run), so the start lines name what to signal: this process, or the whole process group (a
closed terminal does that). A run killed with SIGKILL
is cleaned up by the next one (``devstate.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from devcluster import devstate, fleet
from devcluster.crds import install_crds
from devcluster.harness import ControlPlane, free_port
from devcluster.manager import install_webhook
from volcano_py.api import resources as R
from volcano_py.certkeeper import CertKeeper
from volcano_py.commands.ports import port_problem
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import AlreadyExists

ROOT = Path(__file__).resolve().parents[1]
WEBHOOK_CONFIGURATION = "volcano-py-admission"
NAMESPACE = "volcano-system"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Shutdown(Exception):
    """A stop signal arrived (or the parent went away)."""


def _create(client: KubeClient, resource: R.APIResource, body: dict[str, Any]) -> None:
    with contextlib.suppress(AlreadyExists):
        client.create(resource, body)


def step(what: str) -> None:
    """One line of progress while the local cluster comes up (each step can take seconds)."""
    print(f"make run: {what} ...", flush=True)


def install(client: KubeClient, cert_dir: Path, webhook_port: int) -> None:
    """CRDs, namespace, ConfigMaps, the VAP and the webhook configurations for 127.0.0.1."""
    install_crds(client)
    _create(client, R.NAMESPACES, {"metadata": {"name": NAMESPACE}})
    base = ROOT / "manifests" / "base"
    for name in ("controller-configmap.yaml", "scheduler-configmap.yaml"):
        _create(client, R.CONFIGMAPS, yaml.safe_load((base / name).read_text()))
    admission = ROOT / "manifests" / "admission"
    for doc in yaml.safe_load_all((admission / "hypernode-policy.yaml").read_text()):
        resource = R.BY_KIND[doc["kind"]]
        _create(client, resource, doc)
    CertKeeper(cert_dir).sync()
    install_webhook(client, cert_dir, webhook_port, WEBHOOK_CONFIGURATION)


def manager_argv(
    kubeconfig: str,
    cert_dir: Path,
    webhook_port: int,
    metrics_port: int,
    *,
    local: bool,
    extra: str = "",
) -> list[str]:
    """The ``volcano-py manager`` command line ``make run`` uses.

    ``extra`` is ``make run MANAGER_ARGS=...``: more manager flags, split as a shell would,
    after ours (so ``--controllers=*,-job-controller`` can be tried locally).
    """
    argv = [
        sys.executable,
        "-m",
        "volcano_py",
        "manager",
        f"--kubeconfig={kubeconfig}",
        f"--cert-dir={cert_dir}",
        "--webhook-host=127.0.0.1",
        f"--webhook-port={webhook_port}",
        f"--metrics-address=127.0.0.1:{metrics_port}",
    ]
    if local:
        argv.append(f"--webhook-configuration={WEBHOOK_CONFIGURATION}")
    return argv + shlex.split(extra)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (``.venv/bin/...``)."""
    with contextlib.suppress(ValueError):
        return str(path.absolute().relative_to(Path.cwd()))
    return str(path)


def cli_command() -> str:
    """How to call the ``volcano-py`` CLI of this virtualenv from here."""
    script = Path(sys.executable).parent / "volcano-py"
    return _shown(script) if script.exists() else f"{_shown(Path(sys.executable))} -m volcano_py"


def kubectl_command(plane: ControlPlane) -> str:
    """``kubectl`` if it is on PATH, else the cached one the harness built."""
    return "kubectl" if shutil.which("kubectl") else str(plane.binaries["kubectl"])


def instructions(plane: ControlPlane, nodes: int, *, demo: bool) -> str:
    """What to paste into another shell."""
    kubectl = kubectl_command(plane)
    workload = _shown(fleet.DEMO_WORKLOAD)
    if demo:
        tries = [f"{kubectl} get pods -o wide", f"{kubectl} get podgroups,hypernodes"]
    elif nodes:
        tries = [
            f"{kubectl} get nodes -L {fleet.SPINE_LABEL},{fleet.RACK_LABEL}",
            f"{kubectl} apply -f {workload}",
        ]
    else:
        node = _shown(ROOT / "examples" / "nodes" / "gpu-nodes.yaml")
        tries = [f"{kubectl} apply -f {node}", f"{kubectl} apply -f {workload}"]
    lines = [f"  export KUBECONFIG={plane.kubeconfig}", *(f"  {t}" for t in tries)]
    lines.append(f"  {cli_command()} tree")
    return "\n".join(lines)


def run_demo(client: KubeClient, kubeconfig: str) -> None:
    """Apply the example gang, wait until it runs, print the tree and the placements."""
    name, replicas = fleet.apply_demo_workload(client)
    pods = fleet.wait_running(client, "default", name, replicas)
    subprocess.run(
        [sys.executable, "-m", "volcano_py", "tree"],
        env={**os.environ, "KUBECONFIG": kubeconfig},
        check=False,
    )
    print(f"\nwhere the gang {name} landed:")
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        phase = (pod.get("status") or {}).get("phase")
        print(f"  {pod['metadata']['name']:40} {pod['spec'].get('nodeName') or '-':20} {phase}")


CLUSTER_MODES = ("auto", "local", "existing")


def made_by_run(kubeconfig: str) -> bool:
    """Whether ``kubeconfig`` is a local cluster's that ``make run`` started (its folder)."""
    return Path(kubeconfig).parent.name.startswith(devstate.RUN_PREFIX)


def choose_cluster(mode: str, kubeconfig: str | None, *, demo: bool) -> tuple[str | None, str]:
    """``(kubeconfig to run against or None for a local cluster, refusal or "")``."""
    if demo or mode == "local":
        return None, ""
    if mode == "existing":
        if not kubeconfig:
            return None, "CLUSTER=existing needs $KUBECONFIG set to the cluster to run against"
        return kubeconfig, ""
    if kubeconfig and not made_by_run(kubeconfig):
        return None, (
            f"$KUBECONFIG is set ({kubeconfig}) to a cluster make run did not start; it will "
            "not run volcano-py's scheduler and controllers there unless asked: "
            "`make run CLUSTER=existing` runs against it, `make run CLUSTER=local` (or "
            "`unset KUBECONFIG`) starts a local cluster"
        )
    return None, ""


def port_problems(webhook_port: int, metrics_port: int) -> str:
    """The first given port that cannot be listened on, as one line ("" when both can)."""
    for flag, port in (
        ("WEBHOOK_PORT (--webhook-port)", webhook_port),
        ("METRICS_PORT (--metrics-port)", metrics_port),
    ):
        problem = port_problem(flag, "127.0.0.1", port)
        if problem:
            return problem
    return ""


def _raise_shutdown(signum: int, _frame: FrameType | None) -> None:
    raise Shutdown(signal.Signals(signum).name)


def stop_hint() -> str:
    """How to stop this run from another shell (make passes SIGTERM on, not SIGHUP)."""
    return (
        f"stop with Ctrl-C, or from another shell: kill {os.getpid()} (or kill -HUP "
        f"-{os.getpgrp()}, the whole group, as a closed terminal does)"
    )


def _wait(manager: subprocess.Popen[bytes], parent: int) -> int:
    """Until the manager exits (its code) or ``make`` above us is gone (Shutdown)."""
    while True:
        code = manager.poll()
        if code is not None:
            return code
        if os.getppid() != parent:
            raise Shutdown("parent exited")
        time.sleep(0.5)


def _stop_manager(manager: subprocess.Popen[bytes] | None) -> None:
    if manager is None or manager.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(manager.pid, signal.SIGTERM)
    try:
        manager.wait(30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(manager.pid, signal.SIGKILL)
        manager.wait(5)


def main(argv: list[str] | None = None) -> int:
    """Run (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="make run")
    parser.add_argument("--demo", action="store_true", help="apply the example gang too")
    parser.add_argument("--nodes", type=int, default=8, help="GPU nodes to create (0: none)")
    parser.add_argument("--webhook-port", type=int, default=0)
    parser.add_argument("--metrics-port", type=int, default=0)
    parser.add_argument(
        "--manager-args", default="", help="more `volcano-py manager` flags (MANAGER_ARGS=)"
    )
    parser.add_argument(
        "--cluster",
        choices=CLUSTER_MODES,
        default="auto",
        help="local: start one; existing: $KUBECONFIG's; auto: local, refusing a foreign "
        "$KUBECONFIG",
    )
    args = parser.parse_args(argv)
    if args.nodes < 0:
        parser.error(f"--nodes: expected a count >= 0, got {args.nodes}")
    external, refusal = choose_cluster(args.cluster, os.environ.get("KUBECONFIG"), demo=args.demo)
    refusal = refusal or port_problems(args.webhook_port, args.metrics_port)
    if refusal:
        print(f"make run: {refusal}", file=sys.stderr, flush=True)
        return 2
    parent, started = os.getppid(), time.monotonic()
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_shutdown)
    cert_dir = ROOT / "certs"
    webhook_port = args.webhook_port or free_port()
    metrics_port = args.metrics_port or free_port()
    folder: Path | None = None
    plane: ControlPlane | None = None
    manager: subprocess.Popen[bytes] | None = None
    try:
        if external:
            kubeconfig = external
            print(f"running against $KUBECONFIG={external} (no webhook configuration installed)")
            print(f"topology view: http://127.0.0.1:{metrics_port}/ui", flush=True)
            print(stop_hint(), flush=True)
        else:
            try:
                cleaned = devstate.clean_stale()
            except devstate.AlreadyRunning as e:
                print(f"make run: {e}", file=sys.stderr)
                return 1
            if cleaned:
                print(cleaned, flush=True)
            folder = Path(tempfile.mkdtemp(prefix=devstate.RUN_PREFIX))
            devstate.record(folder)
            step(
                f"starting etcd, kube-apiserver, kube-controller-manager (every default "
                f"controller), kube-scheduler (the default scheduler) and kwok in {folder}"
            )
            plane = ControlPlane(folder, like_a_cluster=True, workload_api=True)
            plane.start()
            kubeconfig = str(plane.kubeconfig)
            step("installing the CRDs, the ConfigMaps and the admission configuration")
            install(KubeClient(plane.admin_config()), cert_dir, webhook_port)
            step(f"starting the manager and {args.nodes} kwok node(s)")
        manager = subprocess.Popen(
            manager_argv(
                kubeconfig,
                cert_dir,
                webhook_port,
                metrics_port,
                local=plane is not None,
                extra=args.manager_args,
            ),
            start_new_session=True,  # stopped by us, in order, not by the terminal's Ctrl-C
        )
        if plane is not None:
            client = KubeClient(plane.admin_config())
            fleet.create_fleet(client, args.nodes)
            shape = f"{args.nodes} GPU nodes in 2 spines x 2 racks" if args.nodes else "no nodes"
            took = time.monotonic() - started
            print(
                f"local cluster up in {took:.1f}s ({shape}, kwok as kubelets; "
                f"HyperNodes come from label discovery). Try:\n"
                f"{instructions(plane, args.nodes, demo=args.demo)}\n"
                f"  topology view:  http://127.0.0.1:{metrics_port}/ui\n"
                f"  metrics/health: http://127.0.0.1:{metrics_port}/metrics\n"
                f"  webhooks:       https://127.0.0.1:{webhook_port}"
                "/{hypernodes,jobs,queues,pods}/validate, /{jobs,queues,podgroups}/mutate\n"
                f"{stop_hint()}; it stops everything and removes {folder}",
                flush=True,
            )
            if args.demo and args.nodes:
                run_demo(client, kubeconfig)
                print(f"\nthe cluster stays up until Ctrl-C:\n{instructions(plane, 1, demo=True)}")
        code = _wait(manager, parent)
        print(f"make run: the manager exited with code {code}; stopping", file=sys.stderr)
        return code
    except Shutdown as stop:
        print(f"\nmake run: {stop}; stopping", file=sys.stderr, flush=True)
        return 0
    finally:
        for signum in STOP_SIGNALS:  # cleanup runs to the end, whatever arrives now
            signal.signal(signum, signal.SIG_IGN)
        _stop_manager(manager)
        if plane is not None:
            plane.stop()
        if folder is not None:
            devstate.terminate(devstate.processes_using(folder))
            shutil.rmtree(folder, ignore_errors=True)
            devstate.forget()


if __name__ == "__main__":
    raise SystemExit(main())
