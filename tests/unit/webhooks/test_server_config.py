"""The gunicorn application is configured in code: one gthread worker, TLS hook, worker hooks."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest

from webhooks import certs
from webhooks.server import ReloadingSSLContext, ServerOptions, WebhookServer


def test_server_runs_one_gthread_worker_with_tls_hook(tmp_path: Path) -> None:
    certs.write_cert_dir(certs.generate(), tmp_path)
    server = WebhookServer(lambda: None, ServerOptions(tmp_path, "127.0.0.1", 9443, threads=4))
    cfg = server.cfg
    assert (cfg.workers, cfg.worker_class_str, cfg.threads) == (
        1,
        "webhooks.worker.GuardedThreadWorker",
        4,
    )
    assert cfg.bind == ["127.0.0.1:9443"]
    assert cfg.certfile == str(tmp_path / certs.CERT_FILE)
    context = cfg.ssl_context(cfg, lambda: None)
    assert server.ssl is not None
    assert context is server.ssl.get()


def test_server_calls_post_worker_init_and_builds_app_in_worker(tmp_path: Path) -> None:
    calls: list[Any] = []
    server = WebhookServer(
        lambda: "app", ServerOptions(None, port=1), post_worker_init=calls.append
    )
    server.cfg.post_worker_init("worker-1")
    assert calls == ["worker-1"]
    assert server.load() == "app"
    assert server.cfg.certfile is None


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> str:
    """A TLS handshake over memory BIOs (no sockets); returns the negotiated cipher."""
    s_in, s_out, c_in, c_out = (ssl.MemoryBIO() for _ in range(4))
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    client_side = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, side in (("client", client_side), ("server", server_side)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()):
            cipher = client_side.cipher()
            assert cipher is not None
            return cipher[0]
    raise AssertionError("handshake did not finish")


def _tls12_client(ciphers: str) -> ssl.SSLContext:
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    client.maximum_version = ssl.TLSVersion.TLSv1_2
    client.set_ciphers(ciphers)
    return client


def test_tls12_offers_only_ecdhe_aead_suites(tmp_path: Path) -> None:
    certs.write_cert_dir(certs.generate(), tmp_path)
    context = ReloadingSSLContext(tmp_path).build()
    tls12 = [c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12
    assert all(name.startswith("ECDHE-") for name in tls12), tls12
    assert all("GCM" in name or "CHACHA20" in name for name in tls12), tls12
    assert _handshake(context, _tls12_client("ECDHE-ECDSA-AES128-GCM-SHA256")) == (
        "ECDHE-ECDSA-AES128-GCM-SHA256"
    )
    with pytest.raises(ssl.SSLError):
        _handshake(context, _tls12_client("ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA"))


def test_gunicorn_lines_go_through_the_process_json_logging(tmp_path: Path) -> None:
    import io
    import json
    import logging

    from gunicorn.glogging import Logger

    from volcano_py.logsetup import JsonFormatter
    from webhooks.gunicorn_logging import ProcessLogger

    server = WebhookServer(lambda: None, ServerOptions(None, port=1, access_log=True))
    assert server.cfg.logger_class is ProcessLogger
    assert server.cfg.accesslog == "-"
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    try:
        glog = ProcessLogger(server.cfg)
        assert isinstance(glog, Logger)
        glog.info("Booting worker with pid: %s", 42)
        glog.error("Worker (pid:%s) exited", 42)
        glog.debug("not at INFO")
        glog.access_log.info("127.0.0.1 - - POST /hypernodes/validate 200")
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for name in ("gunicorn.error", "gunicorn.access"):
            logging.getLogger(name).propagate = False
    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(e["logger"], e["level"], e["msg"]) for e in entries] == [
        ("gunicorn.error", "info", "Booting worker with pid: 42"),
        ("gunicorn.error", "error", "Worker (pid:42) exited"),
        ("gunicorn.access", "info", "127.0.0.1 - - POST /hypernodes/validate 200"),
    ]
