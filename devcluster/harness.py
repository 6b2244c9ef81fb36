"""A real control plane on loopback: etcd, kube-apiserver, kube-controller-manager and kwok.

The envtest way: random free ports, a temporary folder for data, certificates and logs,
client-certificate auth as ``system:masters`` for the tests, RBAC on (so the product can be
run with its own ServiceAccount's permissions through impersonation). kwok plays the kubelets
(see ``kwok.py``): a Node annotated ``kwok.x-k8s.io/node: fake`` heartbeats (Lease and
conditions) and turns Ready, its pods go Running once bound and disappear once deleted.
kube-controller-manager runs the node-lifecycle controller with it, so taints follow node
readiness as in a cluster (``kwok=False`` drops both: nodes are then plain objects).
``controller_manager=False`` drops the workload controllers (Deployments, ReplicaSets,
garbage collection ...); kube-controller-manager then still runs for the node-lifecycle
controller if kwok does. ``like_a_cluster=True`` (what ``make run`` starts) runs
kube-controller-manager's whole default controller set (DaemonSets, CronJobs, EndpointSlices,
disruption, TTL, podgc ... and a CSR signer with the local CA) and kube-scheduler, built from
the pinned module as the bench builds it, as the default scheduler: a pod without
``schedulerName`` runs as in a cluster. The tests keep the short list and no default scheduler
(a test asks for either when it needs it). ``workload_api=True`` (``make run`` too) turns on
Kubernetes' own Workload API: the API server, kube-controller-manager and kube-scheduler get
``WORKLOAD_GATES`` and the API server ``WORKLOAD_RUNTIME_CONFIG`` (``scheduling.k8s.io``
v1beta1 Workload / PodGroup, v1alpha3 CompositePodGroup; the Job controller then makes a
Workload and PodGroup for a Job with ``spec.scheduling``). Off by default, as in a cluster.

Things that bite, handled here: the API server needs ``--advertise-address=127.0.0.1`` on a
machine without a default route; ``--endpoint-reconciler-type=none``; every serving
certificate the API server calls needs an IP SAN for 127.0.0.1.

``python -m devcluster.harness`` runs one in the foreground and prints its kubeconfig.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from devcluster import kwok as kwok_sim
from devcluster.pki import Pki, issue_client, make_pki
from devcluster.provision import ensure_binaries, ensure_kube_scheduler
from volcano_py.kube.client import ClientConfig
from webhooks import certs

# Kubernetes' own Workload API (off by default in v1.37)
WORKLOAD_GATES = (
    "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,"
    "WorkloadWithJob=true,CompositePodGroup=true"
)
WORKLOAD_RUNTIME_CONFIG = (
    "--runtime-config=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true"
)
KCM_CONTROLLERS = (
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "job-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
)
# Only with kwok: without kubelets it would taint every node unreachable.
KWOK_CONTROLLERS = ("node-lifecycle-controller",)
# How long a node's Lease may go unrenewed before it is marked NotReady and tainted
# (kube-controller-manager's default, 50 s, when unset): thousands of kwok nodes on a loaded
# machine renew late, so a 5,000-node bench there sets a longer one (bench_vs_kube_scheduler).
NODE_GRACE_ENV = "VOLCANO_PY_NODE_MONITOR_GRACE"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager + kwok on loopback. Start, use, stop."""

    def __init__(
        self,
        work_dir: Path | None = None,
        *,
        controller_manager: bool = True,
        kwok: bool = True,
        audit: bool = False,
        like_a_cluster: bool = False,
        workload_api: bool = False,
    ) -> None:
        self.binaries = ensure_binaries()
        self.like_a_cluster = like_a_cluster
        self.workload_api = workload_api
        if like_a_cluster:
            self.binaries["kube-scheduler"] = ensure_kube_scheduler()
        self._own_dir = work_dir is None
        self.dir = Path(tempfile.mkdtemp(prefix="volcano-py-cp-")) if work_dir is None else work_dir
        self.with_controller_manager = controller_manager
        self.with_kwok = kwok
        self.audit = audit
        self.etcd_port = free_port()
        self.etcd_peer_port = free_port()
        self.apiserver_port = free_port()
        self.pki: Pki | None = None
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self.startup_seconds = 0.0

    # -- addresses ------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The API server's URL."""
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        """Etcd's client URL."""
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def kubeconfig(self) -> Path:
        """An admin kubeconfig for this control plane."""
        return self.dir / "kubeconfig"

    def admin_config(self) -> ClientConfig:
        """Client configuration for the admin identity at the API server's current address."""
        assert self.pki is not None
        return ClientConfig(
            host=self.host,
            ca_file=str(self.pki.ca_cert),
            cert_file=str(self.pki.admin_cert),
            key_file=str(self.pki.admin_key),
        )

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, timeout: float = 90.0) -> ControlPlane:
        """Start all components and wait until the API server is ready."""
        started = time.monotonic()
        self.pki = make_pki(self.dir / "pki")
        self._write_kubeconfig()
        self._start_etcd()
        self.start_apiserver(timeout=timeout)
        if self.with_controller_manager or self.with_kwok:
            self._start_controller_manager()
        if self.with_kwok:
            self.start_kwok()
        if self.like_a_cluster:
            self._start_kube_scheduler()
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Stop every component and remove the work folder (if the harness made it)."""
        for name in ("kube-scheduler", "kwok", "kube-controller-manager", "kube-apiserver", "etcd"):
            self._kill(name)
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        self._procs[name] = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()

    def _kill(self, name: str, sig: int = signal.SIGTERM) -> None:
        proc = self._procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self._spawn(
            "etcd",
            [
                str(self.binaries["etcd"]),
                "--name=default",
                f"--data-dir={self.dir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync",
                "--quota-backend-bytes=8589934592",
                "--log-level=warn",
            ],
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=1) as r:
                    if json.loads(r.read()).get("health") == "true":
                        return
            except OSError:
                pass
            self._check_alive("etcd")
            time.sleep(0.1)
        raise RuntimeError(f"etcd did not become healthy; see {self.dir / 'etcd.log'}")

    def start_apiserver(self, port: int | None = None, timeout: float = 90.0) -> None:
        """(Re)start kube-apiserver, on ``port`` if given, and wait until it is ready."""
        assert self.pki is not None
        if port is not None:
            self.apiserver_port = port
        self._spawn(
            "kube-apiserver",
            [
                str(self.binaries["kube-apiserver"]),
                f"--etcd-servers={self.etcd_url}",
                f"--secure-port={self.apiserver_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--tls-cert-file={self.pki.serving_cert}",
                f"--tls-private-key-file={self.pki.serving_key}",
                f"--client-ca-file={self.pki.ca_cert}",
                f"--service-account-key-file={self.pki.sa_pub}",
                f"--service-account-signing-key-file={self.pki.sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--authorization-mode=RBAC",
                "--endpoint-reconciler-type=none",
                "--disable-admission-plugins=ServiceAccount",
                "--allow-privileged=true",
                f"--cert-dir={self.dir / 'apiserver-certs'}",
                *self._audit_args(),
                *self._workload_args(runtime_config=True),
            ],
        )
        self._wait_ready(timeout)

    # -- audit (who wrote what: the fault suite counts a deposed leader's writes) ----------

    @property
    def audit_log(self) -> Path:
        """The API server's audit log (JSON lines) when started with ``audit=True``."""
        return self.dir / "audit.log"

    def _audit_args(self) -> list[str]:
        if not self.audit:
            return []
        policy = self.dir / "audit-policy.yaml"
        policy.write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
            "- level: Metadata\n  verbs: [create, update, patch, delete, deletecollection]\n"
            "- level: None\n"
        )
        return [
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
        ]

    def audit_events(self) -> list[dict[str, Any]]:
        """Every audit event written so far."""
        if not self.audit_log.exists():
            return []
        lines = self.audit_log.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def user_kubeconfig(self, user: str, groups: list[str]) -> Path:
        """A kubeconfig authenticating as ``user`` (a client certificate from the test CA)."""
        assert self.pki is not None
        ca = certs.CertBundle(
            ca_cert=self.pki.ca_cert.read_bytes(),
            cert=b"",
            key=b"",
            ca_key=self.pki.ca_key.read_bytes(),
        )
        cert, key = issue_client(ca, user, groups)
        config = json.loads(self.kubeconfig.read_text())
        config["users"][0]["user"] = {
            "client-certificate-data": base64.b64encode(cert).decode(),
            "client-key-data": base64.b64encode(key).decode(),
        }
        path = self.dir / f"kubeconfig-{user}"
        path.write_text(json.dumps(config, indent=2))
        return path

    def stop_apiserver(self, sig: int = signal.SIGTERM) -> None:
        """Stop kube-apiserver (SIGKILL for a crash)."""
        self._kill("kube-apiserver", sig)

    def restart_apiserver(self, sig: int = signal.SIGTERM) -> None:
        """Stop kube-apiserver and start it again on the same port."""
        self.stop_apiserver(sig)
        self.start_apiserver()

    def pids(self) -> list[int]:
        """The process ids of the components still running."""
        return [p.pid for p in self._procs.values() if p.poll() is None]

    def start_kwok(self) -> None:
        """Start kwok (the simulated kubelets); see ``kwok.py``."""
        self._spawn("kwok", kwok_sim.argv(self.binaries["kwok"], self.kubeconfig))

    def stop_kwok(self, sig: int = signal.SIGTERM) -> None:
        """Stop kwok: its nodes stop heartbeating, as if every kubelet died."""
        self._kill("kwok", sig)

    def _workload_args(self, *, runtime_config: bool = False) -> list[str]:
        """The Workload API's gates (and, for the API server, its versions) when asked for."""
        if not self.workload_api:
            return []
        return [WORKLOAD_GATES, WORKLOAD_RUNTIME_CONFIG] if runtime_config else [WORKLOAD_GATES]

    def _start_controller_manager(self) -> None:
        controllers = (KCM_CONTROLLERS if self.with_controller_manager else ()) + (
            KWOK_CONTROLLERS if self.with_kwok else ()
        )
        extra: list[str] = []
        if self.like_a_cluster and self.pki is not None:
            controllers = ("*",)  # the default set, as a cluster's kube-controller-manager
            extra = [
                f"--root-ca-file={self.pki.ca_cert}",
                f"--cluster-signing-cert-file={self.pki.ca_cert}",
                f"--cluster-signing-key-file={self.pki.ca_key}",
            ]
        self._spawn(
            "kube-controller-manager",
            [
                str(self.binaries["kube-controller-manager"]),
                f"--kubeconfig={self.kubeconfig}",
                f"--controllers={','.join(controllers)}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--secure-port=0",
                "--kube-api-qps=1000",
                "--kube-api-burst=2000",
                "--concurrent-replicaset-syncs=10",
                "--concurrent-gc-syncs=20",
                f"--service-account-private-key-file={self.pki.sa_key if self.pki else ''}",
                *extra,
                *self._workload_args(),
                *(
                    [f"--node-monitor-grace-period={os.environ[NODE_GRACE_ENV]}"]
                    if os.environ.get(NODE_GRACE_ENV)
                    else []
                ),
            ],
        )

    def _start_kube_scheduler(self) -> None:
        """kube-scheduler as the cluster's default scheduler (``default-scheduler``)."""
        config = self.dir / "kube-scheduler.yaml"
        config.write_text(
            "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            f"clientConnection:\n  kubeconfig: {self.kubeconfig}\n"
            "leaderElection:\n  leaderElect: false\n"
        )
        self._spawn(
            "kube-scheduler",
            [
                str(self.binaries["kube-scheduler"]),
                f"--config={config}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "-v=0",
                *self._workload_args(),
            ],
        )

    def _check_alive(self, name: str) -> None:
        proc = self._procs.get(name)
        if proc is not None and proc.poll() is not None:
            tail = (self.dir / f"{name}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def _ssl_context(self) -> ssl.SSLContext:
        assert self.pki is not None
        ctx = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        ctx.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        return ctx

    def _wait_ready(self, timeout: float) -> None:
        ctx = self._ssl_context()
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            self._check_alive("kube-apiserver")
            try:
                with urllib.request.urlopen(f"{self.host}/readyz", timeout=2, context=ctx) as r:
                    if r.status == 200:
                        return
            except OSError as e:
                last = str(e)
            time.sleep(0.2)
        raise RuntimeError(
            f"kube-apiserver not ready after {timeout}s ({last}); "
            f"see {self.dir / 'kube-apiserver.log'}"
        )

    def _write_kubeconfig(self) -> None:
        assert self.pki is not None

        def b64(path: Path) -> str:
            return base64.b64encode(path.read_bytes()).decode()

        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "volcano-py-test",
                    "cluster": {
                        "server": self.host,
                        "certificate-authority-data": b64(self.pki.ca_cert),
                    },
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate-data": b64(self.pki.admin_cert),
                        "client-key-data": b64(self.pki.admin_key),
                    },
                }
            ],
            "contexts": [
                {
                    "name": "volcano-py-test",
                    "context": {"cluster": "volcano-py-test", "user": "admin"},
                }
            ],
            "current-context": "volcano-py-test",
        }
        self.kubeconfig.write_text(json.dumps(config, indent=2))

    # -- etcd maintenance (for 410 tests) -------------------------------------------------

    def _etcd_post(self, path: str, body: dict[str, object]) -> dict[str, object]:
        request = urllib.request.Request(
            f"{self.etcd_url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as r:
            result: dict[str, object] = json.loads(r.read())
            return result

    def etcd_revision(self) -> int:
        """Etcd's current revision."""
        reply = self._etcd_post("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})
        header = reply["header"]
        assert isinstance(header, dict)
        return int(header["revision"])

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision; every older resourceVersion is gone."""
        revision = self.etcd_revision()
        self._etcd_post("/v3/kv/compaction", {"revision": str(revision), "physical": True})
        return revision


def main() -> int:
    """Run a control plane in the foreground until interrupted."""
    with ControlPlane(Path(tempfile.mkdtemp(prefix="volcano-py-cp-"))) as cp:
        print(f"control plane up in {cp.startup_seconds:.1f}s")
        print(f"export KUBECONFIG={cp.kubeconfig}")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
