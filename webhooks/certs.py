"""Webhook certificates: a self-signed CA and a serving certificate, on disk or in a Secret.

- ``generate(...)`` makes a ``CertBundle``: a CA (10 years by default) and a serving
  certificate signed by it (1 year) with DNS SANs (``<svc>``, ``<svc>.<ns>``,
  ``<svc>.<ns>.svc``, ``<svc>.<ns>.svc.cluster.local``, ``localhost``) and IP SANs
  (``127.0.0.1``, ``::1``).
- ``write_cert_dir`` / ``load_cert_dir``: ``ca.crt``, ``tls.crt``, ``tls.key`` (written
  atomically, key mode 0600) - what ``--cert-dir`` and ``make certs`` use.
- ``save_secret`` / ``load_secret``: the same three keys in a ``kubernetes.io/tls`` Secret.
- ``patch_ca_bundle``: put the CA bundle into every webhook of the Validating- and the
  MutatingWebhookConfiguration of one name (get + update, retried on conflict).
- the replica's view (the Secret as the source of truth shared by replicas, the CA patched
  into the webhook configuration before a certificate signed by it is served, rotation on a
  timer) is ``volcano_py.certkeeper.CertKeeper``, built from these pieces.
- ``ensure(...)``: the same for a folder alone: load what exists, renew what is due
  (``due_for_renewal``: less than a third of the serving certificate's life left; the CA is
  replaced within a year of its expiry), write it back.

Rotation without a failed admission (see docs/admission.md): the serving certificate is
re-issued by the *same* CA, so the caBundle the API server trusts does not change; the
server (``server.py``) builds its SSL context from the files and reloads it when they change,
so new connections get the new certificate while open ones finish on the old. When the CA
itself is renewed, the new CA is *added* to the caBundle (old + new) before the serving
certificate signed by it is put in place.

``python -m webhooks.certs --out certs/`` fills a folder for local runs (``make certs``).

Only issuing imports ``cryptography`` (``certissue.py``, on first use); the expiry checks read
the dates from the certificates' DER (``certdates.py``), so a start that finds current
certificates does not import it.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from volcano_py.api import resources as R
from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import Conflict, NotFound
from webhooks import certdates
from webhooks.certbundle import CertBundle as CertBundle  # part of this module's API

log = logging.getLogger(__name__)

CA_FILE, CERT_FILE, KEY_FILE = "ca.crt", "tls.crt", "tls.key"
DEFAULT_SERVICE, DEFAULT_NAMESPACE = "volcano-py", "volcano-system"
CA_DAYS, SERVING_DAYS = 3650, 365


def dns_names(service: str, namespace: str) -> list[str]:
    """The names the API server may use to reach ``service`` in ``namespace``."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
        "localhost",
    ]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def generate_ca(common_name: str = "volcano-py-webhook-ca", days: int = CA_DAYS) -> CertBundle:
    """A self-signed CA (``cert``/``key`` empty in the result)."""
    from webhooks import certissue  # cryptography, imported to issue only (certdates.py)

    return certissue.generate_ca(common_name, days)


def issue_serving(
    ca: CertBundle,
    names: Sequence[str],
    ips: Sequence[str] = ("127.0.0.1", "::1"),
    days: int = SERVING_DAYS,
    *,
    not_after: dt.datetime | None = None,
) -> CertBundle:
    """A serving certificate for ``names`` and ``ips`` signed by ``ca`` (which needs its key)."""
    from webhooks import certissue

    return certissue.issue_serving(ca, names, ips, days, not_after=not_after)


def generate(
    service: str = DEFAULT_SERVICE,
    namespace: str = DEFAULT_NAMESPACE,
    extra_names: Sequence[str] = (),
    ips: Sequence[str] = ("127.0.0.1", "::1"),
    days: int = SERVING_DAYS,
) -> CertBundle:
    """A new CA and a serving certificate for the webhook Service."""
    return issue_serving(generate_ca(), [*dns_names(service, namespace), *extra_names], ips, days)


def not_after(pem: bytes) -> dt.datetime:
    """The expiry of the first certificate in ``pem``."""
    return certdates.validity(pem)[1]


def due_for_renewal(bundle: CertBundle, now: dt.datetime | None = None) -> bool:
    """True when the serving certificate has less than a third of its life left."""
    now = now or _now()
    not_before, expiry = certdates.validity(bundle.cert)
    return expiry - now < (expiry - not_before) / 3


def ca_due_for_renewal(bundle: CertBundle, now: dt.datetime | None = None) -> bool:
    """True when the newest CA expires within a year."""
    now = now or _now()
    newest = max(expiry for _, expiry in certdates.validities(bundle.ca_cert))
    return newest - now < dt.timedelta(days=365)


def renew(bundle: CertBundle, names: Sequence[str], ips: Sequence[str], days: int) -> CertBundle:
    """The next bundle: same CA when it is not due, else a new CA appended to the bundle."""
    if bundle.ca_key and not ca_due_for_renewal(bundle):
        return issue_serving(bundle, names, ips, days)
    fresh = generate_ca()
    merged = CertBundle(fresh.ca_cert + bundle.ca_cert, b"", b"", fresh.ca_key)
    return issue_serving(merged, names, ips, days)


# --- files ----------------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_cert_dir(bundle: CertBundle, folder: Path) -> None:
    """Write ``ca.crt``, ``tls.crt``, ``tls.key`` (+ ``ca.key`` when known) into ``folder``.

    The key is written before the certificate so a reader never pairs a new cert with an
    old key for long (``server.py`` also checks the pair loads before switching).
    """
    folder.mkdir(parents=True, exist_ok=True)
    if bundle.ca_key:
        _write_atomic(folder / "ca.key", bundle.ca_key, 0o600)
    _write_atomic(folder / CA_FILE, bundle.ca_cert, 0o644)
    _write_atomic(folder / KEY_FILE, bundle.key, 0o600)
    _write_atomic(folder / CERT_FILE, bundle.cert, 0o644)


def load_cert_dir(folder: Path) -> CertBundle | None:
    """The bundle in ``folder``, or None when a file is missing."""
    try:
        ca_key = (folder / "ca.key").read_bytes() if (folder / "ca.key").exists() else b""
        return CertBundle(
            (folder / CA_FILE).read_bytes(),
            (folder / CERT_FILE).read_bytes(),
            (folder / KEY_FILE).read_bytes(),
            ca_key,
        )
    except FileNotFoundError:
        return None


# --- the cluster ----------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def save_secret(
    client: KubeClient, namespace: str, name: str, bundle: CertBundle, *, create_only: bool = False
) -> None:
    """Create or replace the ``kubernetes.io/tls`` Secret holding ``bundle``.

    Raises ``AlreadyExists`` when ``create_only`` and it exists, ``Conflict`` when it changed
    between our read and our write (another replica rotated it).
    """
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": {
            "ca.crt": _b64(bundle.ca_cert),
            "tls.crt": _b64(bundle.cert),
            "tls.key": _b64(bundle.key),
            "ca.key": _b64(bundle.ca_key),
        },
    }
    if create_only:
        client.create(R.SECRETS, body, namespace=namespace)
        return
    try:
        current = client.get(R.SECRETS, name, namespace)
    except NotFound:
        client.create(R.SECRETS, body, namespace=namespace)
        return
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    client.update(R.SECRETS, body)


def load_secret(client: KubeClient, namespace: str, name: str) -> CertBundle | None:
    """The bundle stored in the Secret, or None when it does not exist or is incomplete."""
    try:
        data = client.get(R.SECRETS, name, namespace).get("data") or {}
    except NotFound:
        return None
    if not all(k in data for k in ("ca.crt", "tls.crt", "tls.key")):
        return None
    raw = {k: base64.b64decode(v) for k, v in data.items()}
    return CertBundle(raw["ca.crt"], raw["tls.crt"], raw["tls.key"], raw.get("ca.key", b""))


# The kinds a webhook configuration comes in; the process owns one of each by the same name.
WEBHOOK_CONFIGURATIONS = (R.VALIDATING_WEBHOOK_CONFIGURATIONS, R.MUTATING_WEBHOOK_CONFIGURATIONS)


def patch_ca_bundle(
    client: KubeClient, config_name: str, ca_pem: bytes, attempts: int = 5
) -> list[str]:
    """Set ``clientConfig.caBundle`` of every webhook in each configuration named ``config_name``.

    Each kind of ``WEBHOOK_CONFIGURATIONS`` that has one is patched (one already carrying
    ``ca_pem`` is left alone); returns the kinds changed. NotFound when no kind has it.
    """
    changed: list[str] = []
    found = 0
    missing: NotFound | None = None
    for resource in WEBHOOK_CONFIGURATIONS:
        try:
            patched = _patch_one(client, resource, config_name, ca_pem, attempts)
        except NotFound as e:
            missing = e
            continue
        found += 1
        if patched:
            changed.append(resource.kind)
    if found == 0 and missing is not None:
        raise missing
    return changed


def _patch_one(
    client: KubeClient, resource: R.APIResource, name: str, ca_pem: bytes, attempts: int
) -> bool:
    wanted = _b64(ca_pem)
    for attempt in range(attempts):
        current = client.get(resource, name)
        webhooks = current.get("webhooks") or []
        if webhooks and all((w.get("clientConfig") or {}).get("caBundle") == wanted
                            for w in webhooks):  # fmt: skip
            return False
        for webhook in webhooks:
            webhook.setdefault("clientConfig", {})["caBundle"] = wanted
        try:
            client.update(resource, current)
            return True
        except Conflict:
            if attempt == attempts - 1:
                raise
    return False


def ensure(
    folder: Path,
    *,
    service: str = DEFAULT_SERVICE,
    namespace: str = DEFAULT_NAMESPACE,
    extra_names: Sequence[str] = (),
    ips: Sequence[str] = ("127.0.0.1", "::1"),
    days: int = SERVING_DAYS,
    now: dt.datetime | None = None,
) -> tuple[CertBundle, bool]:
    """Load the bundle in ``folder``; create or renew it when missing or due.

    Returns:
        The bundle now in ``folder`` and whether it was (re)written.
    """
    names = [*dns_names(service, namespace), *extra_names]
    bundle = load_cert_dir(folder)
    if bundle is not None and not due_for_renewal(bundle, now):
        return bundle, False
    bundle = (
        renew(bundle, names, ips, days)
        if bundle is not None
        else generate(service, namespace, extra_names, ips, days)
    )
    write_cert_dir(bundle, folder)
    log.info("wrote webhook certificate for %s (expires %s)", names[0], not_after(bundle.cert))
    return bundle, True


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m webhooks.certs --out DIR``: write a CA and a serving certificate."""
    parser = argparse.ArgumentParser(prog="python -m webhooks.certs", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("certs"))
    parser.add_argument("--service", default=DEFAULT_SERVICE)
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    parser.add_argument("--days", type=int, default=SERVING_DAYS)
    parser.add_argument("--force", action="store_true", help="replace existing certificates")
    args = parser.parse_args(argv)
    if args.force:
        bundle = generate(args.service, args.namespace, days=args.days)
        write_cert_dir(bundle, args.out)
    else:
        bundle, _ = ensure(args.out, service=args.service, namespace=args.namespace, days=args.days)
    expiry = f"{not_after(bundle.cert):%Y-%m-%d}"
    sys.stdout.write(f"{args.out}: {CA_FILE} {CERT_FILE} {KEY_FILE} (valid until {expiry})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
