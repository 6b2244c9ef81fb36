"""certdates: validity dates read without cryptography match what cryptography reads."""

from __future__ import annotations

import base64
import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509

from volcano_py.certkeeper import CertKeeper
from webhooks import certdates, certs

CA = certs.generate_ca("certdates-test-ca", days=1)


def issued(not_after: dt.datetime) -> bytes:
    """A serving certificate from the product's own issuer, expiring at ``not_after``."""
    return certs.issue_serving(CA, ["certdates.test"], not_after=not_after).cert


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
    "after",
    [(2049, 12, 31), (2050, 1, 1), (9999, 12, 31)],  # UTCTime's last year, GeneralizedTime's
)
def test_utc_and_generalized_times(after: tuple[int, ...]) -> None:
    end = dt.datetime(*after, 23, 59, 59, tzinfo=dt.UTC)
    pem = issued(end)
    der = base64.b64decode(b"".join(pem.strip().splitlines()[1:-1]))
    assert der[1] == 0x82  # the certificate's length in DER's long form (two bytes)
    assert certdates.validity(pem)[1] == end
    assert certdates.validity(pem) == expected(pem)[0]


@pytest.mark.parametrize(
    ("text", "year"),
    [(b"500101123045Z", 1950), (b"491231235959Z", 2049)],  # UTCTime's first and last year
)
def test_utc_time_years_wrap_at_1950(text: bytes, year: int) -> None:
    when, end = certdates._time(bytes([0x17, len(text)]) + text, 0)
    assert (when.year, end) == (year, 2 + len(text))
    assert when.tzinfo is dt.UTC


def test_a_bundle_of_several_certificates_in_order_and_text_around_them() -> None:
    now = dt.datetime.now(dt.UTC)
    first = issued(now + dt.timedelta(days=1))
    second = issued(now + dt.timedelta(days=2))
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
