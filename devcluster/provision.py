"""Provision the local cluster's binaries: etcd, the Kubernetes control plane, kubectl, kwok.

The Kubernetes binaries are kube-apiserver and kube-controller-manager; kwok plays the
kubelets (see ``kwok.py``).

Where they come from, in order:

1. ``$KUBEBUILDER_ASSETS`` (the envtest convention) for every binary it holds;
2. a cache outside the clone, ``$VOLCANO_PY_TESTBIN`` or ``~/.cache/volcano-py/testbin/<key>/``.
   There are two keys, one per build: ``k8s-<version>-etcd-<version>-<hash>`` for the
   Kubernetes and etcd binaries (the hash covers ``gomod/kube`` and ``gomod/etcd`` only) and
   ``kwok-<version>-<hash>`` for kwok (``gomod/kwok``), so bumping one never rebuilds the
   other; fresh clones and CI reuse both;
3. otherwise they are built once from the Go module proxy by the helper modules in ``gomod/``
   (``k8s.io/kubernetes`` with a ``replace`` for every staging module; etcd from
   ``go.etcd.io/etcd/server/v3``; ``sigs.k8s.io/kwok/cmd/kwok``), under a file lock so
   concurrent runs build once; a run waiting on another's build says so every 20 s
   (``buildprogress.hold_build_lock``).

kube-scheduler (``ensure_kube_scheduler``: ``make run``'s default scheduler and the bench's
anchor), the bind floor (``ensure_bind_floor``: ``bindfloor/main.go``, a client-go program that
only posts precomputed bindings, built against ``gomod/kube``'s pins in a copy of that module
so the checkout's ``go.mod`` never changes) and helm (``ensure_helm``: the chart's lint and
render in the tests) are built the same way on first use, each in its own cache folder.

``python -m devcluster.provision`` provisions and prints the directories; the time a
cold build took is kept in ``provision.json`` beside the binaries (``bench/`` reports it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from devcluster.buildprogress import PROGRESS_S, go_build, hold_build_lock

GOMOD = Path(__file__).parent / "gomod"
KUBE_BINARIES = ("kube-apiserver", "kube-controller-manager", "kubectl")
ETCD_BINARY = "etcd"
KWOK_BINARY = "kwok"
KUBE_SCHEDULER_BINARY = "kube-scheduler"
HELM_BINARY = "helm"
BIND_FLOOR_BINARY = "bind-floor"
BIND_FLOOR_SOURCE = Path(__file__).parent / "bindfloor" / "main.go"
CONTROL_PLANE_BINARIES = (ETCD_BINARY, *KUBE_BINARIES)
ALL_BINARIES = (*CONTROL_PLANE_BINARIES, KWOK_BINARY)


def _module_version(gomod: Path, module: str) -> str:
    for line in gomod.read_text().splitlines():
        parts = line.split("//")[0].split()
        if parts[:1] == ["require"]:
            parts = parts[1:]
        if len(parts) == 2 and parts[0] == module:
            return parts[1]
    raise RuntimeError(f"{gomod}: no requirement on {module}")


def versions() -> dict[str, str]:
    """The Kubernetes, etcd and kwok versions the helper modules pin."""
    return {
        "kubernetes": _module_version(GOMOD / "kube" / "go.mod", "k8s.io/kubernetes"),
        "etcd": _module_version(GOMOD / "etcd" / "go.mod", "go.etcd.io/etcd/server/v3"),
        "kwok": _module_version(GOMOD / "kwok" / "go.mod", "sigs.k8s.io/kwok"),
    }


def _modules_digest(*modules: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for module in modules for p in (GOMOD / module).glob("go.*")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def cache_key() -> str:
    """Kubernetes and etcd: versions plus a hash of their helper modules (not kwok's)."""
    v = versions()
    return f"k8s-{v['kubernetes']}-etcd-{v['etcd']}-{_modules_digest('etcd', 'kube')}"


def kube_scheduler_cache_key() -> str:
    """kube-scheduler (the speed anchor of ``bench/``): the Kubernetes version and module hash."""
    return f"kube-scheduler-{versions()['kubernetes']}-{_modules_digest('kube')}"


def kwok_cache_key() -> str:
    """kwok: its version plus a hash of its helper module."""
    return f"kwok-{versions()['kwok']}-{_modules_digest('kwok')}"


def helm_cache_key() -> str:
    """Helm (the chart's lint and render): its version plus a hash of its helper module."""
    version = _module_version(GOMOD / "helm" / "go.mod", "helm.sh/helm/v3")
    return f"helm-{version}-{_modules_digest('helm')}"


def cache_root() -> Path:
    """The folder that holds every provisioned key."""
    override = os.environ.get("VOLCANO_PY_TESTBIN")
    if override:
        return Path(override)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "volcano-py" / "testbin"


def _go_env(gocache: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"})
    if gocache:
        env["GOCACHE"] = gocache
    return env


FLAGS = ("-trimpath", "-ldflags=-s -w")


def _need_go() -> None:
    if shutil.which("go") is None:
        raise RuntimeError(
            "the control plane binaries are not cached and Go is not installed: install Go "
            ">= 1.26 or point KUBEBUILDER_ASSETS at etcd, kube-apiserver, "
            "kube-controller-manager, kubectl and kwok binaries"
        )


def build(target: Path, *, gocache: str | None = None) -> float:
    """Compile etcd and the Kubernetes binaries into ``target``; return the seconds it took."""
    _need_go()
    started = time.monotonic()
    env = _go_env(gocache)
    flags = list(FLAGS)
    packages = [f"k8s.io/kubernetes/cmd/{name}" for name in KUBE_BINARIES]
    what = ", ".join(KUBE_BINARIES)
    print(
        f"the control plane binaries are not cached: building {what} and etcd once into "
        f"{target.parent} (a cold build takes ~6 min on 2 cores, module downloads included; "
        f"progress every {PROGRESS_S:.0f} s)...",
        file=sys.stderr,
        flush=True,
    )
    go_build([*flags, "-o", f"{target}/", *packages], GOMOD / "kube", env, what, "~6 min")
    go_build(
        [*flags, "-o", str(target / ETCD_BINARY), "go.etcd.io/etcd/server/v3"],
        GOMOD / "etcd",
        env,
        "etcd",
        "~1 min after the Kubernetes build",
    )
    return time.monotonic() - started


def _build_one(
    target: str, package: str, module: str, banner: str, gocache: str | None, expected: str
) -> float:
    """``go build`` one ``package`` of the helper ``module`` into ``target``; the seconds.

    ``expected``: the usual cold build time, repeated in the progress lines.
    """
    _need_go()
    started = time.monotonic()
    print(banner, file=sys.stderr, flush=True)
    go_build(
        [*FLAGS, "-o", target, package],
        GOMOD / module,
        _go_env(gocache),
        package.rsplit("/", 1)[-1],
        expected,
    )
    return time.monotonic() - started


def build_kwok(target: Path, *, gocache: str | None = None) -> float:
    """Compile kwok into ``target``; return the seconds it took."""
    banner = "building kwok (~35 s after the Kubernetes build, ~6 min alone on 2 cores)..."
    expected = "~35 s after the Kubernetes build, ~6 min alone"
    return _build_one(
        str(target / KWOK_BINARY), "sigs.k8s.io/kwok/cmd/kwok", "kwok", banner, gocache, expected
    )


def build_kube_scheduler(target: Path, *, gocache: str | None = None) -> float:
    """Compile kube-scheduler from the pinned Kubernetes module into ``target``; the seconds."""
    banner = (
        "building kube-scheduler (~40 s after the Kubernetes build, ~6 min alone on 2 cores)..."
    )
    expected = "~40 s after the Kubernetes build, ~6 min alone"
    package = "k8s.io/kubernetes/cmd/kube-scheduler"
    return _build_one(f"{target}/", package, "kube", banner, gocache, expected)


def ensure_kube_scheduler() -> Path:
    """kube-scheduler built from the same pinned module as the control plane (only benches)."""
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if assets and os.access(Path(assets) / KUBE_SCHEDULER_BINARY, os.X_OK):
        return Path(assets) / KUBE_SCHEDULER_BINARY
    folder = _cached(kube_scheduler_cache_key(), (KUBE_SCHEDULER_BINARY,), build_kube_scheduler)
    return folder / KUBE_SCHEDULER_BINARY


def bind_floor_cache_key() -> str:
    """The bind floor: the Kubernetes version, its module's hash and the program's source."""
    source = hashlib.sha256(BIND_FLOOR_SOURCE.read_bytes()).hexdigest()[:6]
    return f"bind-floor-{versions()['kubernetes']}-{_modules_digest('kube')}-{source}"


def build_bind_floor(target: Path, *, gocache: str | None = None) -> float:
    """Compile ``bindfloor/main.go`` against ``gomod/kube``'s pins into ``target``; the seconds.

    It is built in a copy of the helper module (renamed), where ``go build`` may add the
    client-go requirements it names directly.
    """
    with tempfile.TemporaryDirectory(prefix="bind-floor-") as tmp:
        module = Path(tmp)
        for name in ("go.mod", "go.sum"):
            shutil.copy(GOMOD / "kube" / name, module / name)
        text = (module / "go.mod").read_text()
        (module / "go.mod").write_text(
            text.replace(
                "module volcano-py.local/testbin/kube", "module volcano-py.local/bindfloor"
            )
        )
        shutil.copy(BIND_FLOOR_SOURCE, module / "main.go")
        _need_go()
        started = time.monotonic()
        print("building the bind floor (~1 min after the Kubernetes build)...", file=sys.stderr)
        go_build(
            [*FLAGS, "-o", str(target / BIND_FLOOR_BINARY), "."],
            module,
            _go_env(gocache),
            BIND_FLOOR_BINARY,
            "~1 min after the Kubernetes build",
        )
        return time.monotonic() - started


def ensure_bind_floor() -> Path:
    """The bind floor binary (only ``bench_vs_kube_scheduler``), built once into the cache."""
    folder = _cached(bind_floor_cache_key(), (BIND_FLOOR_BINARY,), build_bind_floor)
    return folder / BIND_FLOOR_BINARY


def build_helm(target: Path, *, gocache: str | None = None) -> float:
    """Compile helm from the Go module proxy into ``target``; the seconds it took."""
    banner = "building helm for the chart tests (~2 min after the Kubernetes build)..."
    return _build_one(
        str(target / HELM_BINARY),
        "helm.sh/helm/v3/cmd/helm",
        "helm",
        banner,
        gocache,
        "~2 min after the Kubernetes build",
    )


def ensure_helm() -> Path:
    """Helm for ``helm lint`` / ``helm template`` of ``charts/volcano-py`` (tests and CI).

    ``$HELM`` when it names an executable, else the cache, built once like the other binaries.
    """
    given = os.environ.get("HELM")
    if given and os.access(given, os.X_OK):
        return Path(given)
    return _cached(helm_cache_key(), (HELM_BINARY,), build_helm) / HELM_BINARY


def _complete(folder: Path, names: tuple[str, ...]) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in names)


def _cached(key: str, names: tuple[str, ...], builder: Callable[[Path], float]) -> Path:
    """The cache folder for ``key``, built (once, under a lock) if any of ``names`` is missing."""
    folder = cache_root() / key
    if _complete(folder, names):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / ".lock", "a+") as lock:
        hold_build_lock(lock)
        if not _complete(folder, names):
            staging = Path(tempfile.mkdtemp(prefix="build-", dir=folder.parent))
            seconds = builder(staging)
            (staging / "provision.json").write_text(
                json.dumps(
                    {
                        "cold_build_seconds": round(seconds, 1),
                        "key": key,
                        "versions": versions(),
                        "built_at": time.time(),
                    }
                )
            )
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
    return folder


def ensure_binaries() -> dict[str, Path]:
    """Return a path for every binary, building into the cache if needed."""
    found: dict[str, Path] = {}
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if assets:
        for name in ALL_BINARIES:
            path = Path(assets) / name
            if os.access(path, os.X_OK):
                found[name] = path
    if any(name not in found for name in CONTROL_PLANE_BINARIES):
        folder = _cached(cache_key(), CONTROL_PLANE_BINARIES, build)
        for name in CONTROL_PLANE_BINARIES:
            found.setdefault(name, folder / name)
    if KWOK_BINARY not in found:
        found[KWOK_BINARY] = _cached(kwok_cache_key(), (KWOK_BINARY,), build_kwok) / KWOK_BINARY
    return found


def main() -> int:
    """Provision and print where the binaries are."""
    started = time.monotonic()
    paths = ensure_binaries()
    # make run's default scheduler and the chart tests' helm: built here (make testbin, before
    # make test), so no test spends its time limit on a cold build
    paths["kube-scheduler"] = ensure_kube_scheduler()
    paths["helm"] = ensure_helm()
    folder = {p.parent for p in paths.values()}
    print(
        f"control plane binaries ready in {time.monotonic() - started:.1f}s: "
        f"{', '.join(sorted(str(f) for f in folder))}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
