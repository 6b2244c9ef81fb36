"""A certificate's validity dates, read from its DER encoding without ``cryptography``.

Checking whether the webhook's certificate is due for renewal is all the manager's start-up
does with certificates when they are current, and importing ``cryptography`` for it cost
~30 ms of the start before the first bind (``docs/operations.md``, "Start-up"). The dates
sit at a fixed place in every X.509 certificate (RFC 5280, 4.1)::

    Certificate ::= SEQUENCE { tbsCertificate SEQUENCE {
        [0] version OPTIONAL, serialNumber INTEGER, signature AlgorithmIdentifier,
        issuer Name, validity SEQUENCE { notBefore Time, notAfter Time }, ... }, ... }

with ``Time`` a UTCTime (``YYMMDDHHMMSSZ``, years 1950-2049) or a GeneralizedTime
(``YYYYMMDDHHMMSSZ``). Only that path is read; anything else in the certificate is left to
the TLS library that loads it. Input that is not a certificate raises ``ValueError``, as
``cryptography``'s loaders do. Issuing certificates still uses ``cryptography``
(``webhooks.certs``), imported when a certificate is issued.
"""

from __future__ import annotations

import base64
import datetime as dt
import re

_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.DOTALL)
_SEQUENCE, _INTEGER, _VERSION = 0x30, 0x02, 0xA0
_UTC_TIME, _GENERALIZED_TIME = 0x17, 0x18

Validity = tuple[dt.datetime, dt.datetime]


def validities(pem: bytes) -> list[Validity]:
    """``(not_before, not_after)`` of every certificate in ``pem``, in order (UTC)."""
    blocks = _PEM.findall(pem)
    if not blocks:
        raise ValueError("no PEM certificate found")
    try:
        return [_validity(base64.b64decode(block, validate=False)) for block in blocks]
    except (IndexError, ValueError) as e:
        raise ValueError(f"unreadable certificate: {e}") from None


def validity(pem: bytes) -> Validity:
    """``(not_before, not_after)`` of the first certificate in ``pem`` (UTC)."""
    return validities(pem)[0]


def _validity(der: bytes) -> Validity:
    cert = _inside(der, 0, _SEQUENCE)
    tbs = _inside(der, cert[0], _SEQUENCE)
    at = tbs[0]
    if der[at] == _VERSION:
        at = _skip(der, at)
    at = _skip(der, at, _INTEGER)  # serialNumber
    at = _skip(der, at, _SEQUENCE)  # signature algorithm
    at = _skip(der, at, _SEQUENCE)  # issuer
    start, _ = _inside(der, at, _SEQUENCE)  # validity
    not_before, end = _time(der, start)
    not_after, _ = _time(der, end)
    return not_before, not_after


def _header(der: bytes, at: int) -> tuple[int, int]:
    """The content's start and length of the element at ``at``."""
    first = der[at + 1]
    if first < 0x80:
        return at + 2, first
    count = first & 0x7F
    if not 1 <= count <= 4:
        raise ValueError(f"length of {count} bytes at {at}")
    return at + 2 + count, int.from_bytes(der[at + 2 : at + 2 + count], "big")


def _inside(der: bytes, at: int, tag: int) -> tuple[int, int]:
    """The content's start and end of the element at ``at``, which must be a ``tag``."""
    if der[at] != tag:
        raise ValueError(f"tag {der[at]:#x} at {at}, expected {tag:#x}")
    start, length = _header(der, at)
    if start + length > len(der):
        raise ValueError(f"element at {at} runs past the end")
    return start, start + length


def _skip(der: bytes, at: int, tag: int | None = None) -> int:
    """Where the element after the one at ``at`` begins (``tag``: check the skipped one's)."""
    return _inside(der, at, der[at] if tag is None else tag)[1]


def _time(der: bytes, at: int) -> tuple[dt.datetime, int]:
    """The UTCTime or GeneralizedTime at ``at``, and where the next element begins."""
    tag = der[at]
    if tag not in (_UTC_TIME, _GENERALIZED_TIME):
        raise ValueError(f"tag {tag:#x} at {at} is not a time")
    start, end = _inside(der, at, tag)
    text = der[start:end].decode("ascii")
    if tag == _UTC_TIME:
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    if len(text) != 15 or not text.endswith("Z") or not text[:14].isdigit():
        raise ValueError(f"time {text!r} at {at} is not YYYYMMDDHHMMSSZ")
    year, month, day = int(text[0:4]), int(text[4:6]), int(text[6:8])
    hour, minute, second = int(text[8:10]), int(text[10:12]), int(text[12:14])
    return dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC), end
