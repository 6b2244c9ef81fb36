"""The gunicorn application is configured in code: one gthread worker, TLS hook, worker hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webhooks import certs
from webhooks.server import ServerOptions, WebhookServer


def test_server_runs_one_gthread_worker_with_tls_hook(tmp_path: Path) -> None:
    certs.write_cert_dir(certs.generate(), tmp_path)
    server = WebhookServer(lambda: None, ServerOptions(tmp_path, "127.0.0.1", 9443, threads=4))
    cfg = server.cfg
    assert (cfg.workers, cfg.worker_class_str, cfg.threads) == (1, "gthread", 4)
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
