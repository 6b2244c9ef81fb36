"""``CertBundle``: the PEM bytes of a webhook's certificates, as issued and stored.

Its own module so that issuing (``certissue.py``, which imports ``cryptography``) and
storing (``certs.py``, which imports the issuer only when it must issue) both use it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CertBundle:
    """PEM bytes: the CA certificate(s), the serving certificate, its key, and the CA key."""

    ca_cert: bytes
    cert: bytes
    key: bytes
    ca_key: bytes = b""
