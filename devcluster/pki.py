"""The harness's certificate authority and the certificates it issues, as files.

A CA, the API server's serving certificate, an admin client certificate (``system:masters``)
and the ServiceAccount signing keys.

The CA and the serving certificate come from ``webhooks.certs`` (the product's own
certificate code); client certificates are issued here (``issue_client``), also for the
per-user kubeconfigs of ``ControlPlane.user_kubeconfig``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from webhooks import certs


@dataclass(frozen=True)
class Pki:
    """Files of the harness's certificate authority and the identities it issued."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    sa_key: Path
    sa_pub: Path


def _write_key(path: Path, key: rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def issue_client(ca: certs.CertBundle, user: str, groups: list[str]) -> tuple[bytes, bytes]:
    """A client certificate (CN = user, O = groups) signed by ``ca``: (cert PEM, key PEM)."""
    ca_cert = x509.load_pem_x509_certificates(ca.ca_cert)[0]
    ca_key = serialization.load_pem_private_key(ca.ca_key, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(subject))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def make_pki(folder: Path) -> Pki:
    """Create a CA, an API server serving cert, an admin client cert and SA signing keys.

    The CA and the serving certificate come from ``webhooks.certs`` (the product's own
    certificate code); only the client certificate is made here.
    """
    folder.mkdir(parents=True, exist_ok=True)
    names = (
        "ca.crt",
        "ca.key",
        "apiserver.crt",
        "apiserver.key",
        "admin.crt",
        "admin.key",
        "sa.key",
        "sa.pub",
    )
    pki = Pki(*(folder / n for n in names))
    ca = certs.generate_ca("volcano-py-test-ca", days=2)
    serving = certs.issue_serving(
        ca, ["localhost", "kubernetes", "kubernetes.default.svc"], ["127.0.0.1", "10.0.0.1"], 2
    )
    admin_cert, admin_key = issue_client(ca, "volcano-py-test-admin", ["system:masters"])
    for path, data in (
        (pki.ca_cert, ca.ca_cert),
        (pki.ca_key, ca.ca_key),
        (pki.serving_cert, serving.cert),
        (pki.serving_key, serving.key),
        (pki.admin_cert, admin_cert),
        (pki.admin_key, admin_key),
    ):
        path.write_bytes(data)
        if path.suffix == ".key":
            path.chmod(0o600)

    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_key(pki.sa_key, sa_key)
    pki.sa_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki
