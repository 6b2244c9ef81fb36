"""Certificates: SANs, renewal decisions, files, and the server's reloading SSL context."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509

from webhooks import certs
from webhooks.server import ReloadingSSLContext


@pytest.fixture(scope="module")
def bundle() -> certs.CertBundle:
    return certs.generate("svc", "ns", extra_names=["webhook.example.com"])


def test_generate_serving_cert_has_service_dns_and_loopback_ip_sans(
    bundle: certs.CertBundle,
) -> None:
    cert = x509.load_pem_x509_certificate(bundle.cert)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [
        "svc",
        "svc.ns",
        "svc.ns.svc",
        "svc.ns.svc.cluster.local",
        "localhost",
        "webhook.example.com",
    ]
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    ca = x509.load_pem_x509_certificate(bundle.ca_cert)
    cert.verify_directly_issued_by(ca)


def test_due_for_renewal_when_a_third_of_life_is_left(bundle: certs.CertBundle) -> None:
    expiry = certs.not_after(bundle.cert)
    assert not certs.due_for_renewal(bundle, expiry - dt.timedelta(days=200))
    assert certs.due_for_renewal(bundle, expiry - dt.timedelta(days=100))


def test_renew_keeps_the_ca_so_the_ca_bundle_does_not_change(bundle: certs.CertBundle) -> None:
    renewed = certs.renew(bundle, ["svc"], ["127.0.0.1"], 30)
    assert renewed.ca_cert == bundle.ca_cert
    assert renewed.cert != bundle.cert


def test_renew_adds_a_new_ca_next_to_the_old_when_the_ca_is_due(tmp_path: Path) -> None:
    old_ca = certs.generate_ca(days=100)
    old = certs.issue_serving(old_ca, ["svc"], days=30)
    renewed = certs.renew(old, ["svc"], ["127.0.0.1"], 30)
    cas = x509.load_pem_x509_certificates(renewed.ca_cert)
    assert len(cas) == 2
    x509.load_pem_x509_certificate(renewed.cert).verify_directly_issued_by(cas[0])


def test_ensure_writes_once_then_reuses(tmp_path: Path) -> None:
    first, changed = certs.ensure(tmp_path)
    again, changed_again = certs.ensure(tmp_path)
    assert (changed, changed_again) == (True, False)
    assert again == first
    assert (tmp_path / certs.KEY_FILE).stat().st_mode & 0o777 == 0o600


def test_reloading_context_picks_up_rotated_files(tmp_path: Path, bundle: certs.CertBundle) -> None:
    certs.write_cert_dir(bundle, tmp_path)
    reloading = ReloadingSSLContext(tmp_path, reload_interval=0)
    first = reloading.get()
    assert first.minimum_version == ssl.TLSVersion.TLSv1_2
    assert reloading.get() is first
    certs.write_cert_dir(certs.renew(bundle, ["svc"], ["127.0.0.1"], 10), tmp_path)
    assert reloading.get() is not first


def test_reloading_context_keeps_previous_when_files_are_broken(
    tmp_path: Path, bundle: certs.CertBundle
) -> None:
    certs.write_cert_dir(bundle, tmp_path)
    reloading = ReloadingSSLContext(tmp_path, reload_interval=0)
    first = reloading.get()
    (tmp_path / certs.KEY_FILE).write_bytes(b"not a key")
    assert reloading.get() is first


def test_certs_main_fills_folder(tmp_path: Path) -> None:
    assert certs.main(["--out", str(tmp_path / "c")]) == 0
    assert certs.load_cert_dir(tmp_path / "c") is not None
