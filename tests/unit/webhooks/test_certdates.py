"""certdates: validity dates read without cryptography match what cryptography reads."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from volcano_py.certkeeper import CertKeeper
from webhooks import certdates, certs


def self_signed(not_before: dt.datetime, not_after: dt.datetime, *, rsa_key: bool = False) -> bytes:
    """A minimal certificate with these dates (an RSA key makes the fields longer)."""
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = (
        rsa.generate_private_key(65537, 2048)
        if rsa_key
        else ec.generate_private_key(ec.SECP256R1())
    )
    # an issuer over 127 bytes: its length is in DER's long form, as the certificate's is
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "c" * 64),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "o" * 64),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "u" * 64),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def expected(pem: bytes) -> list[certdates.Validity]:
    return [
        (c.not_valid_before_utc, c.not_valid_after_utc)
        for c in x509.load_pem_x509_certificates(pem)
    ]


def test_the_product_bundles_read_as_cryptography_reads_them() -> None:
    bundle = certs.generate()
    renewed = certs.renew(bundle, ["a"], ["127.0.0.1"], 30)
    for pem in (bundle.cert, bundle.ca_cert, renewed.cert):
        assert certdates.validities(pem) == expected(pem)
    assert certdates.validity(bundle.cert) == expected(bundle.cert)[0]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ((1950, 1, 1), (2049, 12, 31)),  # UTCTime at both ends of its range
        ((2026, 11, 26), (2050, 1, 1)),  # GeneralizedTime from 2050 on
        ((2049, 12, 31), (9999, 12, 31)),  # UTCTime, then RFC 5280's "no end" date
    ],
)
def test_utc_and_generalized_times(before: tuple[int, ...], after: tuple[int, ...]) -> None:
    start = dt.datetime(*before, 12, 30, 45, tzinfo=dt.UTC)
    end = dt.datetime(*after, 23, 59, 59, tzinfo=dt.UTC)
    pem = self_signed(start, end)
    assert certdates.validity(pem) == (start, end) == expected(pem)[0]


def test_a_bundle_of_several_certificates_in_order_and_text_around_them() -> None:
    now = dt.datetime(2026, 11, 26, tzinfo=dt.UTC)
    first = self_signed(now, now + dt.timedelta(days=1), rsa_key=True)
    second = self_signed(now, now + dt.timedelta(days=2))
    pem = b"# comment\n" + first + b"\nanything\n" + second
    assert certdates.validities(pem) == expected(first) + expected(second)


@pytest.mark.parametrize(
    "pem",
    [
        b"",
        b"not a certificate",
        b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",  # truncated
    ],
)
def test_what_is_not_a_certificate_raises_value_error(pem: bytes) -> None:
    with pytest.raises(ValueError, match="certificate"):
        certdates.validities(pem)


def test_checking_a_current_bundle_does_not_import_cryptography(tmp_path: Path) -> None:
    # what the manager does at every start: CertKeeper.sync on the folder it finds
    certs.write_cert_dir(certs.generate(), tmp_path)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from volcano_py.certkeeper import CertKeeper\n"
        f"assert CertKeeper(Path({str(tmp_path)!r})).sync() is False, 'rewritten'\n"
        "assert not [m for m in sys.modules if m.startswith('cryptography')], 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    # and a bundle that is due is still renewed (issuing imports cryptography)
    due = certs.issue_serving(
        certs.load_cert_dir(tmp_path) or certs.generate(),
        ["volcano-py"],
        not_after=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1),
    )
    certs.write_cert_dir(due, tmp_path)
    assert CertKeeper(tmp_path).sync() is True
    assert certs.not_after((tmp_path / certs.CERT_FILE).read_bytes()) > due_expiry(due)


def due_expiry(bundle: certs.CertBundle) -> dt.datetime:
    return certdates.validity(bundle.cert)[1]
