"""Keeps the webhook's serving certificate valid: files, a shared Secret, the caBundle.

Two modes, chosen by the manager's flags:

- **files** (``--cert-dir`` without ``--webhook-cert-secret``): a self-signed CA and serving
  certificate are created in the folder when missing and renewed when a third of their life
  is left (``webhooks.certs``);
- **Secret** (``--webhook-cert-secret NAME``, the in-cluster default): every replica reads the
  bundle from the Secret; the first that finds it missing or due writes a new one (losers of
  that race read the winner's), then writes it to its own cert folder.

In both modes, when ``--webhook-configuration`` names the webhook configurations (the
Validating- and the MutatingWebhookConfiguration of that name, whichever exist), the CA
bundle is patched into each *before* a certificate signed by a new CA is put in the folder, so
the API server trusts the new certificate before it is served: rotation never fails an
admission (the server reloads the files for new connections, see ``webhooks.server``).
``sync()`` runs once before gunicorn binds; ``run(stop)`` repeats it every ``interval`` on the
``webhook:cert-keeper`` thread, logging (never raising) failures.

``lifetime`` (``--cert-validity``, seconds) asks for short-lived serving certificates: each is
issued by the same CA to expire ``lifetime`` seconds after issue, and is re-issued when less
than a third of that is left, or when the certificate found lasts longer than ``lifetime``
(the validity was shortened). Keep ``interval`` well under ``lifetime / 3`` so a check always
falls inside the renewal window.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from volcano_py.kube.client import KubeClient
from volcano_py.kube.errors import ApiError, Conflict
from webhooks import certs

log = logging.getLogger(__name__)


@dataclass
class CertKeeper:
    """See the module docstring."""

    folder: Path
    client: KubeClient | None = None
    secret: str | None = None
    namespace: str = certs.DEFAULT_NAMESPACE
    service: str = certs.DEFAULT_SERVICE
    webhook_configuration: str | None = None
    interval: float = 3600.0
    days: int = certs.SERVING_DAYS
    lifetime: float | None = None

    def sync(self) -> bool:
        """Make the folder (and the Secret, and the caBundle) current; True if anything changed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        changed = False
        if self.secret and self.client is not None:
            bundle = self._from_secret(self.client, self.secret)
        else:
            bundle = self._next(certs.load_cert_dir(self.folder))
        if self.webhook_configuration and self.client is not None:
            changed |= self._patch_ca(self.client, self.webhook_configuration, bundle.ca_cert)
        on_disk = certs.load_cert_dir(self.folder)
        if on_disk is None or on_disk.cert != bundle.cert or on_disk.ca_cert != bundle.ca_cert:
            certs.write_cert_dir(bundle, self.folder)
            log.info(
                "webhook certificate written to %s (expires %s)",
                self.folder,
                certs.not_after(bundle.cert),
            )
            changed = True
        return changed

    def run(self, stop: threading.Event) -> None:
        """Repeat ``sync`` every ``interval`` seconds until ``stop``."""
        while not stop.wait(self.interval):
            try:
                self.sync()
            except (ApiError, OSError, ValueError) as e:
                log.warning("webhook certificate check failed (will retry): %s", e)

    def start(self, stop: threading.Event) -> threading.Thread:
        """``run(stop)`` on the ``webhook:cert-keeper`` thread."""
        thread = threading.Thread(
            target=self.run, args=(stop,), name="webhook:cert-keeper", daemon=True
        )
        thread.start()
        return thread

    def _next(self, bundle: certs.CertBundle | None) -> certs.CertBundle:
        """``bundle`` when it is still good, else its renewal (or a first one)."""
        if bundle is not None and not self._due(bundle):
            return bundle
        return self._issue(bundle)

    def _from_secret(self, client: KubeClient, name: str) -> certs.CertBundle:
        bundle = certs.load_secret(client, self.namespace, name)
        fresh = self._next(bundle)
        if fresh is bundle:
            return fresh
        try:
            certs.save_secret(client, self.namespace, name, fresh, create_only=bundle is None)
            log.info(
                "webhook certificate %s in Secret %s/%s",
                "renewed" if bundle else "created",
                self.namespace,
                name,
            )
        except Conflict:  # another replica wrote it first (AlreadyExists is a Conflict too)
            log.info("Secret %s/%s was written by another replica; using it", self.namespace, name)
        stored = certs.load_secret(client, self.namespace, name)
        return stored if stored is not None else fresh

    def _due(self, bundle: certs.CertBundle) -> bool:
        """Whether the serving certificate in ``bundle`` must be re-issued now."""
        if self.lifetime is None:
            return certs.due_for_renewal(bundle)
        left = (certs.not_after(bundle.cert) - dt.datetime.now(dt.UTC)).total_seconds()
        return left < self.lifetime / 3 or left > self.lifetime + 60

    def _issue(self, current: certs.CertBundle | None) -> certs.CertBundle:
        """The next bundle: the same CA when it is usable, the serving cert per the settings."""
        names = certs.dns_names(self.service, self.namespace)
        ips = ("127.0.0.1", "::1")
        if self.lifetime is None:
            if current is None:
                return certs.generate(self.service, self.namespace, days=self.days)
            return certs.renew(current, names, ips, self.days)
        ca = current
        if ca is None or not ca.ca_key or certs.ca_due_for_renewal(ca):
            fresh = certs.generate_ca()
            previous = current.ca_cert if current is not None else b""
            ca = certs.CertBundle(fresh.ca_cert + previous, b"", b"", fresh.ca_key)
        expiry = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=self.lifetime)
        return certs.issue_serving(ca, names, ips, not_after=expiry)

    @staticmethod
    def _patch_ca(client: KubeClient, configuration: str, ca_pem: bytes) -> bool:
        kinds = certs.patch_ca_bundle(client, configuration, ca_pem)
        for kind in kinds:
            log.info("caBundle patched into %s %s", kind, configuration)
        return bool(kinds)
