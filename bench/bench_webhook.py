"""HyperNode admission webhook: latency/throughput over TLS, CEL cost, and a robustness run.

Goals (issue 3): at 300 requests/s over TLS with keep-alive, the 16-member HyperNode's p99 is
<= 3x a bare Flask endpoint's under the same gunicorn settings (one gthread worker, 8 threads,
TLS >= 1.2), measured in the same run; a 1,000-member HyperNode validates in <= 50 ms.

Parts:

1. **In-process CEL/pipeline cost** for 16- and 1,000-member HyperNodes: cold (first request
   of a fresh validator) and warm (members seen before - the webhook's steady state, and
   what an UPDATE of a stored HyperNode costs); then ``NEW_RUNS`` 1,000-member HyperNodes
   whose members are all new to the process, with the compiled CEL and, in the same run,
   with every expression on celpy's interpreter (``HyperNodeValidator(compiled=False)``).
2. **Served**: ``volcano-py webhook`` and a bare Flask app (returns a fixed AdmissionReview),
   each in its own gunicorn subprocess on 127.0.0.1; an open-loop client sends 300 req/s for
   ``BENCH_SECONDS`` over 8 keep-alive TLS connections; p50/p99 and achieved throughput.
   Latency counts from the scheduled send time (no coordinated omission). The repeated
   bodies hit the validator's whole-list memo (what re-applies and member-preserving UPDATEs
   cost); a last case sends ``NEW_RATE`` req/s of 1,000-member HyperNodes whose members are
   all new, each request a different object.
3. **Robustness**: ``BENCH_ROBUST`` (10,000) hypothesis-generated HyperNodes (valid and not,
   regex members built to make backtracking engines explode) plus malformed reviews, sent to
   the served webhook: responses without the request's uid, 5xx answers, and the slowest
   evil-pattern request are counted.

Everything binds 127.0.0.1; load is bounded by the rate and the duration.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from devcluster.harness import free_port
from devcluster.manager import webhook_command
from volcano_py.kube.runtime import tune_gc
from webhooks import certs
from webhooks.hypernodes.validator import HyperNodeValidator

RATE = 300
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ROBUST = int(os.environ.get("BENCH_ROBUST", "10000"))
CONNECTIONS = 8
NEW_RUNS = 20
NEW_RATE = 20  # served requests/s whose 1,000 members are all new (~27 ms of CPU each)
EVIL = ["(a+)+$", "(a|aa)*b", "(x+x+)+y", "^(([a-z])+.)+[A-Z]([a-z])+$", "(.*a){20}"]


def hypernode(name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": 1,
            "tierName": "rack",
            "members": [
                {"type": "Node", "selector": {"exactMatch": {"name": f"{name}-node-{i}"}}}
                for i in range(members)
            ],
        },
    }


def review(obj: Any, uid: str | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid or str(uuid.uuid4()),
            "operation": "CREATE",
            "kind": {"group": "topology.volcano.sh", "version": "v1alpha1", "kind": "HyperNode"},
            "object": obj,
        },
    }


# --- 1. in process ------------------------------------------------------------------------


def _timed(validator: HyperNodeValidator, obj: dict[str, Any]) -> float:
    started = time.perf_counter()
    verdict = validator.validate(obj)
    spent = time.perf_counter() - started
    assert verdict.allowed, verdict
    return spent


def in_process() -> None:
    print("-- in-process validation (HyperNodeValidator.validate)")
    for members in (16, 1000):
        validator = HyperNodeValidator()
        obj = hypernode(f"cold-{members}", members)
        cold = _timed(validator, obj)
        warm = [_timed(validator, obj) for _ in range(20)]
        print(
            f"{members:>5} members: cold {cold * 1000:8.1f} ms   warm p50 "
            f"{statistics.median(warm) * 1000:6.2f} ms  max {max(warm) * 1000:6.2f} ms"
            f"   (goal <= 50 ms: warm {'OK' if max(warm) <= 0.05 else 'MISSED'}, "
            f"cold {'OK' if cold <= 0.05 else 'MISSED'})"
        )
    one_member_changed()
    all_new_members()


def one_member_changed() -> None:
    """UPDATEs of a stored 1,000-member HyperNode that change one member each time.

    The whole-list memo misses; every other member is found in the per-member memos.
    """
    validator = HyperNodeValidator()
    obj = hypernode("update", 1000)
    validator.validate(obj)
    spent = []
    for i in range(20):
        obj["spec"]["members"][i]["selector"]["exactMatch"]["name"] = f"changed-{i}"
        spent.append(_timed(validator, obj))
    print(
        f" 1000 members, one changed per request: p50 {statistics.median(spent) * 1000:6.2f} ms"
        f"  max {max(spent) * 1000:6.2f} ms"
    )


def all_new_members() -> None:
    """A 1,000-member HyperNode whose members the process never saw: compiled vs interpreted.

    Each request carries 1,000 member names new to the validator (a fresh HyperNode name),
    so every per-member rule and the CRD's selector rules run for every member; the same
    objects go through a validator with every expression on celpy's interpreter.
    """
    print("-- 1,000-member HyperNode, all 1,000 members new (compiled CEL vs celpy interpreter)")
    compiled = HyperNodeValidator()
    compiled.validate(hypernode("warm-up", 16))
    spent = [_timed(compiled, hypernode(f"new-{i}", 1000)) for i in range(NEW_RUNS)]
    interpreted = HyperNodeValidator(compiled=False)
    interpreted.validate(hypernode("warm-up", 16))
    slow = [_timed(interpreted, hypernode(f"old-{i}", 1000)) for i in range(2)]
    p50, worst = statistics.median(spent), max(spent)
    print(
        f"compiled: p50 {p50 * 1000:7.1f} ms  max {worst * 1000:7.1f} ms  ({NEW_RUNS} objects)   "
        f"interpreted: p50 {statistics.median(slow) * 1000:7.1f} ms  "
        f"({statistics.median(slow) / p50:.0f}x slower)   "
        f"(goal <= 50 ms: p50 {'OK' if p50 <= 0.05 else 'MISSED'}, "
        f"max {'OK' if worst <= 0.05 else 'MISSED'})"
    )


# --- 2. served ----------------------------------------------------------------------------


def serve_bare(port: int, cert_dir: Path) -> None:
    """The baseline: a Flask endpoint answering a fixed AdmissionReview, same gunicorn."""
    from flask import Flask, Response, request

    from webhooks.server import ServerOptions, WebhookServer

    def factory() -> Any:
        app = Flask("bare")

        @app.post("/hypernodes/validate")
        def admit() -> Response:
            body = request.get_data()
            uid = json.loads(body)["request"]["uid"]
            payload = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {"uid": uid, "allowed": True},
            }
            return Response(json.dumps(payload), mimetype="application/json")

        @app.get("/readyz")
        def ready() -> str:
            return "ok"

        return app

    WebhookServer(factory, ServerOptions(cert_dir, "127.0.0.1", port, log_level="warning")).run()


def start(argv: list[str], port: int, ca: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    context = ssl.create_default_context(cafile=str(ca))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=context):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"server on {port} did not start")


def start_bare(port: int, cert_dir: Path) -> subprocess.Popen[bytes]:
    """The baseline: a bare Flask endpoint under the same gunicorn settings (``--serve-bare``)."""
    argv = [sys.executable, "-m", "bench.bench_webhook", "--serve-bare", str(port), str(cert_dir)]
    return start(argv, port, cert_dir / certs.CA_FILE)


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


class Client:
    """One keep-alive TLS connection."""

    def __init__(self, port: int, ca: Path) -> None:
        self.context = ssl.create_default_context(cafile=str(ca))
        self.port = port
        self.conn = self._connect()

    def _connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=30)

    def post(self, body: bytes, content_type: str = "application/json") -> tuple[int, bytes]:
        for attempt in (0, 1):
            try:
                self.conn.request(
                    "POST", "/hypernodes/validate", body, {"Content-Type": content_type}
                )
                resp = self.conn.getresponse()
                return resp.status, resp.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = self._connect()
                if attempt:
                    raise
        raise AssertionError("unreachable")


def open_loop(
    port: int, ca: Path, body: bytes | list[bytes], seconds: float, rate: int = RATE
) -> dict[str, float]:
    """Send ``rate`` req/s for ``seconds``; latency from each request's scheduled time.

    ``body``: one body for every request, or a list (request ``i`` sends ``body[i % len]``).
    """
    bodies = body if isinstance(body, list) else [body]
    total = int(rate * seconds)
    interval = 1.0 / rate
    latencies: list[float] = []
    sent_at: list[float] = []  # wall-clock scheduled times, for BENCH_DUMP
    errors = [0]
    lock = threading.Lock()
    next_index = [0]
    start_at = time.monotonic() + 0.5
    wall_offset = time.time() - time.monotonic()

    def worker() -> None:
        client = Client(port, ca)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= total:
                return
            scheduled = start_at + i * interval
            delay = scheduled - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            status, _ = client.post(bodies[i % len(bodies)])
            done = time.monotonic()
            with lock:
                latencies.append(done - scheduled)
                sent_at.append(scheduled + wall_offset)
                if status != 200:
                    errors[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = max(time.monotonic() - start_at, 1e-9)
    if os.environ.get("BENCH_DUMP"):
        with open(os.environ["BENCH_DUMP"] + f".{port}.{int(seconds)}", "w") as f:
            f.write("\n".join(f"{t:.4f} {x:.6f}" for t, x in zip(sent_at, latencies, strict=True)))
    latencies.sort()
    return {
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "rps": len(latencies) / elapsed,
        "errors": errors[0],
    }


def served(folder: Path) -> int:
    cert_dir = folder / "certs"
    certs.write_cert_dir(certs.generate(), cert_dir)
    ca = cert_dir / certs.CA_FILE
    ours_port, bare_port = free_port(), free_port()
    ours = start(webhook_command(cert_dir, ours_port, "--no-cluster"), ours_port, ca)
    bare = start_bare(bare_port, cert_dir)
    failed = 0
    try:
        print(
            f"-- served over TLS, keep-alive, {RATE} req/s offered for {SECONDS:.0f} s, "
            f"{CONNECTIONS} connections, gunicorn 1 gthread worker x 8 threads"
        )
        results = {}
        cases = (
            ("bare Flask", bare_port, 16, RATE),
            ("webhook 16", ours_port, 16, RATE),
            ("webhook 1000", ours_port, 1000, RATE),
            ("webhook 1000 @100/s", ours_port, 1000, 100),
        )
        for label, port, members, rate in cases:
            body = json.dumps(review(hypernode(f"bench-{members}", members))).encode()
            open_loop(port, ca, body, 1.0, rate)  # warm-up: TLS sessions, memo
            results[label] = r = open_loop(port, ca, body, SECONDS, rate)
            print(
                f"{label:>19}: offered {rate} req/s  p50 {r['p50']:8.2f} ms  p99 "
                f"{r['p99']:8.2f} ms  {r['rps']:6.1f} req/s  non-200 {r['errors']:.0f}  "
                f"({len(body)} B)"
            )
        # every request a 1,000-member HyperNode whose members the process never saw
        rate = NEW_RATE
        bodies = [
            json.dumps(review(hypernode(f"served-new-{i}", 1000))).encode()
            for i in range(int(rate * (SECONDS + 1)))
        ]
        open_loop(ours_port, ca, bodies[:rate], 1.0, rate)
        label = f"webhook 1000 new @{rate}/s"
        results[label] = r = open_loop(ours_port, ca, bodies[rate:], SECONDS, rate)
        print(
            f"{label:>19}: offered {rate} req/s  p50 {r['p50']:8.2f} ms  p99 "
            f"{r['p99']:8.2f} ms  {r['rps']:6.1f} req/s  non-200 {r['errors']:.0f}  "
            f"(all members new in every request)"
        )
        ratio = results["webhook 16"]["p99"] / max(results["bare Flask"]["p99"], 1e-9)
        ok16 = ratio <= 3.0
        ok1000 = results["webhook 1000"]["p99"] <= 50.0
        print(f"16-member p99 / bare p99 = {ratio:.2f}x (goal <= 3x: {'OK' if ok16 else 'MISSED'})")
        print(
            f"1000-member p99 = {results['webhook 1000']['p99']:.1f} ms "
            f"(goal <= 50 ms: {'OK' if ok1000 else 'MISSED'})"
        )
        failed += robustness(ours_port, ca)
    finally:
        stop(ours)
        stop(bare)
    return failed


# --- 3. robustness ------------------------------------------------------------------------


def robustness(port: int, ca: Path) -> int:
    if ROBUST <= 0:  # BENCH_ROBUST=0: only the latency figures
        print("-- robustness: skipped (BENCH_ROBUST=0)")
        return 0
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    client = Client(port, ca)
    counts = {"sent": 0, "no_uid": 0, "5xx": 0, "denied": 0, "allowed": 0, "4xx": 0}
    slowest_evil = [0.0]
    text = st.text(alphabet="abcxyz-.0123456789()[]{}*+?|^$\\", max_size=12)
    selector = st.one_of(
        st.fixed_dictionaries({"exactMatch": st.fixed_dictionaries({"name": text})}),
        st.fixed_dictionaries(
            {
                "regexMatch": st.fixed_dictionaries(
                    {"pattern": st.one_of(text, st.sampled_from(EVIL))}
                )
            }
        ),
        st.fixed_dictionaries(
            {
                "labelMatch": st.fixed_dictionaries(
                    {"matchLabels": st.dictionaries(text, text, max_size=2)}
                )
            }
        ),
        st.dictionaries(
            st.sampled_from(["exactMatch", "regexMatch", "labelMatch", "x"]),
            st.one_of(st.none(), text, st.integers()),
            max_size=3,
        ),
    )
    member = st.fixed_dictionaries(
        {"type": st.sampled_from(["Node", "HyperNode", "Pod", ""]), "selector": selector}
    )
    obj = st.fixed_dictionaries(
        {
            "apiVersion": st.just("topology.volcano.sh/v1alpha1"),
            "kind": st.just("HyperNode"),
            "metadata": st.fixed_dictionaries({"name": st.one_of(text, st.just("a" * 200))}),
            "spec": st.one_of(
                st.fixed_dictionaries(
                    {
                        "tier": st.one_of(st.integers(-2, 5), text),
                        "members": st.lists(member, max_size=6),
                    }
                ),
                st.none(),
                text,
            ),
        }
    )

    def send(body: bytes, uid: str | None, content_type: str = "application/json") -> None:
        started = time.perf_counter()
        try:
            status, data = client.post(body, content_type)
        except (OSError, http.client.HTTPException):
            # the server refused an oversized body before reading it and closed the
            # connection (the API server itself never sends more than 3 MiB)
            assert len(body) > 3 * 1024 * 1024, "connection failed for a normal request"
            status, data = 413, b""
        spent = time.perf_counter() - started
        counts["sent"] += 1
        if status >= 500:
            counts["5xx"] += 1
        elif status >= 400:
            counts["4xx"] += 1
        if any(p.encode() in body for p in EVIL):
            slowest_evil[0] = max(slowest_evil[0], spent)
        if uid is not None and status == 200:
            answer = json.loads(data)["response"]
            if answer.get("uid") != uid:
                counts["no_uid"] += 1
            counts["allowed" if answer["allowed"] else "denied"] += 1
        elif uid is not None and status != 200:
            counts["no_uid"] += 1  # a well-formed review must get an AdmissionReview back

    @settings(
        max_examples=ROBUST,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(obj)
    def generated(o: dict[str, Any]) -> None:
        uid = str(uuid.uuid4())
        send(json.dumps(review(o, uid)).encode(), uid)

    started = time.monotonic()
    generated()
    malformed: list[tuple[bytes, str]] = [
        (b"{not json", "application/json"),
        (b"[]", "application/json"),
        (json.dumps({"kind": "AdmissionReview"}).encode(), "application/json"),
        (json.dumps(review({})).encode(), "text/plain"),
        (b"x" * (3 * 1024 * 1024 + 1), "application/json"),
        (json.dumps({**review({}), "request": {"uid": 7}}).encode(), "application/json"),
    ]
    for body, content_type in malformed * 20:
        send(body, None, content_type)
    elapsed = time.monotonic() - started
    print(
        f"-- robustness: {counts['sent']} requests in {elapsed:.0f} s "
        f"({counts['allowed']} allowed, {counts['denied']} denied, {counts['4xx']} 4xx for "
        f"malformed input): {counts['no_uid']} reviews answered without their uid, "
        f"{counts['5xx']} 5xx; slowest request with a backtracking-bomb pattern "
        f"{slowest_evil[0] * 1000:.1f} ms"
    )
    return int(counts["no_uid"] > 0 or counts["5xx"] > 0)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-bare":
        serve_bare(int(sys.argv[2]), Path(sys.argv[3]))
        return 0
    tune_gc()  # what `volcano-py webhook` and the manager run with
    in_process()
    with tempfile.TemporaryDirectory() as folder:
        return served(Path(folder))


if __name__ == "__main__":
    raise SystemExit(main())
