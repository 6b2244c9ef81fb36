"""Kubernetes resource quantities (``500m``, ``1.5Gi``, ``1e3``), exact, printed like Go's.

A ``Quantity`` holds its value as an integer count of nano-units, so parsing, adding and
multiplying never round (Kubernetes itself rounds anything finer than ``1n`` up on parse, and
so do we). It remembers its ``Format`` (``BinarySI``, ``DecimalSI``, ``DecimalExponent``) and
prints itself the way ``Quantity.String()`` does: canonical form (``1.5`` -> ``1500m``,
``2048Ki`` -> ``2Mi``), except that a parsed string Kubernetes would keep verbatim is kept.

Used for pod requests, node allocatable, PodGroup ``minResources`` and anywhere else a
resource amount appears. Parsing is cached: the same few strings recur on every pod.

Deliberate differences from apimachinery v0.37, all far outside real resource amounts: a
``DecimalSI`` value past ``E`` prints in exponent form (``1e21``; Go loses the magnitude and
prints ``1``) and a ``BinarySI`` value past ``Ei`` prints its exact decimal digits; ``value()``
and ``milli_value()`` are exact where Go's int64 would wrap; and inputs of ``1e1000`` or more,
or with more than 1000 digits, are rejected rather than carried around as huge numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from volcano_py.api.errors import invalid, key

NANO = 10**9
_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1
_MAX_DIGITS = 1000  # values must be below 10**_MAX_DIGITS


class Format(StrEnum):
    """How a quantity prints, remembered from the string it was parsed from."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi (12 * 2^20)
    DECIMAL_SI = "DecimalSI"  # 12M (12 * 10^6)


# Kubernetes' error texts, byte for byte.
ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_TOO_LARGE = f"quantities must be less than 1e{_MAX_DIGITS}"
ERR_TOO_MANY_DIGITS = f"quantities must have no more than {_MAX_DIGITS} digits"


class QuantityError(ValueError):
    """A string is not a quantity; ``reason`` is Kubernetes' message for it."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"invalid quantity {text!r}: {reason}")
        self.text = text
        self.reason = reason


# sign, leading zeros, integer digits, fraction digits, suffix (letters, sign, digits).
_SHAPE = re.compile(r"([+-]?)0*+([0-9]*+)(?:\.([0-9]*+))?([eEinumkKMGTP]*+[+-]?[0-9]*+)")
_EXPONENT = re.compile(r"[+-]?[0-9]+")

_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_OF = {exp: s for s, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """An exact resource amount: ``nanos`` is the value times 10^9.

    Equality, ordering and hashing look at the value only (``1Gi == 1073741824``), like
    ``Quantity.Cmp``; ``format`` decides how it prints.
    """

    nanos: int
    format: Format = Format.DECIMAL_SI
    # The parsed text when Kubernetes would print it back unchanged; never set by arithmetic.
    original: str | None = field(default=None, repr=False)

    @staticmethod
    def parse(text: str) -> Quantity:
        """Parse ``text`` (see ``parse_quantity``)."""
        return parse_quantity(text)

    @classmethod
    def from_int(cls, value: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        """``value`` whole units (Kubernetes' ``NewQuantity``)."""
        return cls(value * NANO, fmt)

    @classmethod
    def from_milli(cls, value: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        """``value`` thousandths (Kubernetes' ``NewMilliQuantity``)."""
        return cls(value * 10**6, fmt)

    # --- reading -------------------------------------------------------------------------

    def value(self) -> int:
        """The value rounded up, away from zero, to a whole number (``Value()``)."""
        return _ceil_div(self.nanos, NANO)

    def milli_value(self) -> int:
        """The value times 1000, rounded up away from zero (``MilliValue()``)."""
        return _ceil_div(self.nanos, 10**6)

    def scaled_value(self, exponent: int) -> int:
        """The value over 10^exponent, rounded up away from zero (``ScaledValue()``)."""
        shift = exponent + 9
        return self.nanos * 10**-shift if shift <= 0 else _ceil_div(self.nanos, 10**shift)

    def as_float(self) -> float:
        """An approximate float, for scores and ratios only (``AsApproximateFloat64``)."""
        return self.nanos / NANO

    @property
    def is_zero(self) -> bool:
        """True for any zero amount."""
        return self.nanos == 0

    @property
    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self.nanos > 0) - (self.nanos < 0)

    def canonical(self) -> str:
        """The canonical form, ignoring any kept original text."""
        return _format(self.nanos, self.format)

    def __str__(self) -> str:
        return self.original if self.original is not None else _format(self.nanos, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    # --- arithmetic (results are canonical; a zero left operand takes the right's format) ---

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos + other.nanos, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos - other.nanos, fmt)

    def __mul__(self, factor: int) -> Quantity:
        if not isinstance(factor, int) or isinstance(factor, bool):
            return NotImplemented
        return Quantity(self.nanos * factor, self.format)

    __rmul__ = __mul__

    def __neg__(self) -> Quantity:
        return Quantity(-self.nanos, self.format)

    def __bool__(self) -> bool:
        return self.nanos != 0

    # --- comparison by value ---------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos < other.nanos

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos <= other.nanos

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos > other.nanos

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos >= other.nanos


ZERO = Quantity(0)


@lru_cache(maxsize=8192)
def parse_quantity(text: str) -> Quantity:
    """Parse a Kubernetes quantity exactly as ``resource.ParseQuantity`` does.

    Accepts an optional sign, digits with an optional fraction (``.5``, ``1.``), and one
    suffix: binary ``Ki``..``Ei``, decimal ``n u m k M G T P E`` or an exponent ``e3``/``E-3``.
    Amounts finer than ``1n`` round up away from zero; ``BinarySI`` amounts are capped at
    2^63-1; whitespace is not allowed.

    Raises:
        QuantityError: with Kubernetes' reason text.
    """
    if text == "0":
        return Quantity(0, Format.DECIMAL_SI, "0")
    shape = _SHAPE.fullmatch(text)
    if not text or shape is None:
        raise QuantityError(text, ERR_FORMAT_WRONG)
    sign, num, denom, suffix = shape.group(1, 2, 3, 4)
    num = num or "0"
    denom = denom or ""
    if len(num) + len(denom) > _MAX_DIGITS:
        raise QuantityError(text, ERR_TOO_MANY_DIGITS)
    base, exponent, fmt = _interpret_suffix(text, suffix)
    significant = (num + denom).lstrip("0")
    if not significant:
        nanos = 0
    elif base == 10:
        nanos = _decimal_nanos(text, int(significant), len(significant), exponent - len(denom))
    else:
        nanos = _ceil_div(int(significant) * 2**exponent * NANO, 10 ** len(denom))
        nanos = min(nanos, _INT64_MAX * NANO)
    if fmt is Format.BINARY_SI and 0 < nanos < NANO:
        fmt = Format.DECIMAL_SI
    if sign == "-":
        nanos = -nanos
    kept = text if _kept_verbatim(num, denom, exponent, base) else None
    return Quantity(nanos, fmt, kept)


def _interpret_suffix(text: str, suffix: str) -> tuple[int, int, Format]:
    exponent = _DECIMAL_SUFFIXES.get(suffix)
    if exponent is not None:
        return 10, exponent, Format.DECIMAL_SI
    exponent = _BINARY_SUFFIXES.get(suffix)
    if exponent is not None:
        return 2, exponent, Format.BINARY_SI
    if 1 < len(suffix) <= 12 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix, 1):
        exponent = int(suffix[1:])
        if abs(exponent) <= _INT32_MAX:
            return 10, exponent, Format.DECIMAL_EXPONENT
    raise QuantityError(text, ERR_SUFFIX)


def _decimal_nanos(text: str, magnitude: int, significant: int, exponent: int) -> int:
    """``magnitude * 10**exponent`` in nanos, rounded up (``magnitude`` has that many digits)."""
    if significant + exponent > _MAX_DIGITS:
        raise QuantityError(text, ERR_TOO_LARGE)
    shift = exponent + 9
    if shift >= 0:
        return magnitude * int(10**shift)
    if -shift >= significant:  # less than one nano: rounds up to exactly one
        return 1
    return _ceil_div(magnitude, 10**-shift)


def _kept_verbatim(num: str, denom: str, exponent: int, base: int) -> bool:
    """Whether Kubernetes' parser keeps the input string as the quantity's printed form.

    It does so on its int64 fast path when the string already looks canonical; the check is
    shallow, so ``+1``, ``01``, ``1E3`` and ``1.500`` are kept as written.
    """
    shifted = num + denom
    if base == 2:
        if denom or 15 - len(num) - exponent * 3 // 10 - 1 < 0:
            return False
        value = int(num)
        return (value << exponent) <= _INT64_MAX and value & 0x07 != 0
    scale = exponent - len(denom)
    if 18 - len(shifted) < 0 or scale < -9:
        return False
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _format(nanos: int, fmt: Format) -> str:
    if nanos == 0:
        return "0"
    sign = "-" if nanos < 0 else ""
    amount = abs(nanos)
    if fmt is Format.BINARY_SI:
        whole, fraction = divmod(amount, NANO)
        if whole >= 1024 and not fraction:
            exponent = 0
            while whole % 1024 == 0:
                whole //= 1024
                exponent += 1
            if exponent < len(_BINARY_SUFFIX_OF):
                return f"{sign}{whole}{_BINARY_SUFFIX_OF[exponent]}"
            fmt = Format.DECIMAL_EXPONENT  # no suffix past Ei: print exactly in decimal
        else:
            fmt = Format.DECIMAL_SI
    digits = str(amount)
    mantissa = digits.rstrip("0")
    exponent = len(digits) - len(mantissa) - 9
    pad = exponent % 3
    mantissa += "0" * pad
    exponent -= pad
    if fmt is Format.DECIMAL_SI and exponent in _DECIMAL_SUFFIX_OF:
        return f"{sign}{mantissa}{_DECIMAL_SUFFIX_OF[exponent]}"
    return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"


def _ceil_div(numerator: int, denominator: int) -> int:
    """Divide, rounding away from zero."""
    whole, rest = divmod(abs(numerator), denominator)
    whole += rest != 0
    return -whole if numerator < 0 else whole


def to_quantity(value: Any, field_path: str = "") -> Quantity:
    """A quantity from JSON: a string, or a bare number as the API server also accepts.

    Raises:
        FieldError: naming ``field_path``, when the value is not a quantity.
    """
    if isinstance(value, Quantity):
        return value
    if isinstance(value, str):
        text = value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, float) and math.isfinite(value):
        text = repr(value)
    else:
        raise invalid(field_path, value, "must be a quantity string such as '500m' or '1Gi'")
    try:
        return parse_quantity(text)
    except QuantityError as e:
        raise invalid(field_path, value, e.reason) from None


def parse_resource_list(
    resources: Mapping[str, Any] | None, field: str = ""
) -> dict[str, Quantity]:
    """Parse a ``ResourceList`` (``{"cpu": "500m", "memory": "1Gi"}``).

    Raises:
        FieldError: naming the bad key, e.g. ``spec.minResources[cpu]``.
    """
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        raise invalid(field, resources, "must be an object of resource names to quantities")
    return {
        str(name): to_quantity(value, key(field, str(name))) for name, value in resources.items()
    }


def add_resource_lists(*lists: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """Sum resource lists key by key (``quota.Add``); a key missing from one counts as zero."""
    total: dict[str, Quantity] = {}
    for resources in lists:
        for name, amount in resources.items():
            current = total.get(name)
            total[name] = amount if current is None else current + amount
    return total


def scale_resource_list(resources: Mapping[str, Quantity], factor: int) -> dict[str, Quantity]:
    """Every amount times ``factor``."""
    return {name: amount * factor for name, amount in resources.items()}


def format_resource_list(resources: Mapping[str, Quantity]) -> dict[str, str]:
    """Back to JSON: names to quantity strings, sorted by name."""
    return {name: str(resources[name]) for name in sorted(resources)}
