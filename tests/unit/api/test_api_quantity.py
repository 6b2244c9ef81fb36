from __future__ import annotations

import pytest

from volcano_py.api.errors import FieldError
from volcano_py.api.quantity import (
    ZERO,
    Format,
    Quantity,
    QuantityError,
    add_resource_lists,
    format_resource_list,
    parse_quantity,
    parse_resource_list,
    scale_resource_list,
    to_quantity,
)

# (input, String(), canonical String() after arithmetic, Format, Value(), MilliValue()),
# produced by k8s.io/apimachinery v0.37.1's resource.ParseQuantity.
GOLDEN = [
    ("0", "0", "0", "DecimalSI", 0, 0),
    ("00", "0", "0", "DecimalSI", 0, 0),
    ("-0", "0", "0", "DecimalSI", 0, 0),
    ("+0", "0", "0", "DecimalSI", 0, 0),
    ("0.0", "0", "0", "DecimalSI", 0, 0),
    (".", "0", "0", "DecimalSI", 0, 0),
    ("-.", "0", "0", "DecimalSI", 0, 0),
    ("+.", "0", "0", "DecimalSI", 0, 0),
    ("-", "0", "0", "DecimalSI", 0, 0),
    ("+", "0", "0", "DecimalSI", 0, 0),
    ("1", "1", "1", "DecimalSI", 1, 1000),
    ("01", "01", "1", "DecimalSI", 1, 1000),
    ("+1", "+1", "1", "DecimalSI", 1, 1000),
    ("-1", "-1", "-1", "DecimalSI", -1, -1000),
    ("1.", "1.", "1", "DecimalSI", 1, 1000),
    ("1.G", "1.G", "1G", "DecimalSI", 1000000000, 1000000000000),
    (".5", "500m", "500m", "DecimalSI", 1, 500),
    ("-.5", "-500m", "-500m", "DecimalSI", -1, -500),
    ("0.5", "500m", "500m", "DecimalSI", 1, 500),
    ("1.5", "1500m", "1500m", "DecimalSI", 2, 1500),
    ("1.500", "1.500", "1500m", "DecimalSI", 2, 1500),
    ("10.500", "10.500", "10500m", "DecimalSI", 11, 10500),
    ("1.0", "1", "1", "DecimalSI", 1, 1000),
    ("1.000", "1", "1", "DecimalSI", 1, 1000),
    ("1000", "1k", "1k", "DecimalSI", 1000, 1000000),
    ("1000m", "1", "1", "DecimalSI", 1, 1000),
    ("1500m", "1500m", "1500m", "DecimalSI", 2, 1500),
    ("100m", "100m", "100m", "DecimalSI", 1, 100),
    ("500m", "500m", "500m", "DecimalSI", 1, 500),
    ("1m", "1m", "1m", "DecimalSI", 1, 1),
    ("0.1m", "100u", "100u", "DecimalSI", 1, 1),
    ("1n", "1n", "1n", "DecimalSI", 1, 1),
    ("0.1n", "1n", "1n", "DecimalSI", 1, 1),
    ("0.9n", "1n", "1n", "DecimalSI", 1, 1),
    ("3.001n", "4n", "4n", "DecimalSI", 1, 1),
    ("1u", "1u", "1u", "DecimalSI", 1, 1),
    ("1k", "1k", "1k", "DecimalSI", 1000, 1000000),
    ("1M", "1M", "1M", "DecimalSI", 1000000, 1000000000),
    ("1G", "1G", "1G", "DecimalSI", 1000000000, 1000000000000),
    ("1T", "1T", "1T", "DecimalSI", 1000000000000, 1000000000000000),
    ("1P", "1P", "1P", "DecimalSI", 1000000000000000, 1000000000000000000),
    ("1e3", "1e3", "1e3", "DecimalExponent", 1000, 1000000),
    ("1E3", "1E3", "1e3", "DecimalExponent", 1000, 1000000),
    ("1e+3", "1e+3", "1e3", "DecimalExponent", 1000, 1000000),
    ("1e-3", "1e-3", "1e-3", "DecimalExponent", 1, 1),
    ("1E-3", "1E-3", "1e-3", "DecimalExponent", 1, 1),
    ("1e-9", "1e-9", "1e-9", "DecimalExponent", 1, 1),
    ("1e-10", "1e-9", "1e-9", "DecimalExponent", 1, 1),
    ("1.1E-9", "2e-9", "2e-9", "DecimalExponent", 1, 1),
    ("0.5e-9", "1e-9", "1e-9", "DecimalExponent", 1, 1),
    ("1.2e3", "1200", "1200", "DecimalExponent", 1200, 1200000),
    ("1.3E+6", "1300e3", "1300e3", "DecimalExponent", 1300000, 1300000000),
    ("1.40e9", "1400e6", "1400e6", "DecimalExponent", 1400000000, 1400000000000),
    ("1.53E12", "1530e9", "1530e9", "DecimalExponent", 1530000000000, 1530000000000000),
    ("1.6e15", "1600e12", "1600e12", "DecimalExponent", 1600000000000000, 1600000000000000000),
    ("9.01", "9010m", "9010m", "DecimalSI", 10, 9010),
    ("8.1k", "8100", "8100", "DecimalSI", 8100, 8100000),
    ("7.123456M", "7.123456M", "7123456", "DecimalSI", 7123456, 7123456000),
    ("6.987654321G", "6.987654321G", "6987654321", "DecimalSI", 6987654321, 6987654321000),
    ("5.444T", "5.444T", "5444G", "DecimalSI", 5444000000000, 5444000000000000),
    ("40.1T", "40100G", "40100G", "DecimalSI", 40100000000000, 40100000000000000),
    ("300.2T", "300200G", "300200G", "DecimalSI", 300200000000000, 300200000000000000),
    ("2.5P", "2500T", "2500T", "DecimalSI", 2500000000000000, 2500000000000000000),
    ("100.035k", "100.035k", "100035", "DecimalSI", 100035, 100035000),
    ("0.001", "1m", "1m", "DecimalSI", 1, 1),
    ("0.0005k", "500m", "500m", "DecimalSI", 1, 500),
    ("0.005", "5m", "5m", "DecimalSI", 1, 5),
    ("0.05", "50m", "50m", "DecimalSI", 1, 50),
    ("0.00050k", "500m", "500m", "DecimalSI", 1, 500),
    ("0.00500", "5m", "5m", "DecimalSI", 1, 5),
    ("0.05000", "50m", "50m", "DecimalSI", 1, 50),
    ("0.50000", "500m", "500m", "DecimalSI", 1, 500),
    ("0.5e0", "500e-3", "500e-3", "DecimalExponent", 1, 500),
    ("0.5e-1", "50e-3", "50e-3", "DecimalExponent", 1, 50),
    ("0.5e-2", "5e-3", "5e-3", "DecimalExponent", 1, 5),
    ("10.035M", "10.035M", "10035k", "DecimalSI", 10035000, 10035000000),
    ("0.0000000001", "1n", "1n", "DecimalSI", 1, 1),
    ("0.0000000005", "1n", "1n", "DecimalSI", 1, 1),
    ("0.00000000050", "1n", "1n", "DecimalSI", 1, 1),
    ("0.00000012345", "124n", "124n", "DecimalSI", 1, 1),
    ("0.00000012354", "124n", "124n", "DecimalSI", 1, 1),
    ("1Ki", "1Ki", "1Ki", "BinarySI", 1024, 1024000),
    ("8Ki", "8Ki", "8Ki", "BinarySI", 8192, 8192000),
    ("1023Ki", "1023Ki", "1023Ki", "BinarySI", 1047552, 1047552000),
    ("1024Ki", "1Mi", "1Mi", "BinarySI", 1048576, 1048576000),
    ("1025Ki", "1025Ki", "1025Ki", "BinarySI", 1049600, 1049600000),
    ("2048Ki", "2Mi", "2Mi", "BinarySI", 2097152, 2097152000),
    ("1536Mi", "1536Mi", "1536Mi", "BinarySI", 1610612736, 1610612736000),
    ("1.5Gi", "1536Mi", "1536Mi", "BinarySI", 1610612736, 1610612736000),
    ("1024Mi", "1Gi", "1Gi", "BinarySI", 1073741824, 1073741824000),
    ("7Mi", "7Mi", "7Mi", "BinarySI", 7340032, 7340032000),
    ("6Gi", "6Gi", "6Gi", "BinarySI", 6442450944, 6442450944000),
    ("5Ti", "5Ti", "5Ti", "BinarySI", 5497558138880, 5497558138880000),
    ("4Pi", "4Pi", "4Pi", "BinarySI", 4503599627370496, 4503599627370496000),
    ("100.035Ki", "102435840m", "102435840m", "BinarySI", 102436, 102435840),
    ("0.5Mi", "512Ki", "512Ki", "BinarySI", 524288, 524288000),
    ("0.05Gi", "53687091200m", "53687091200m", "BinarySI", 53687092, 53687091200),
    ("0.025Ti", "27487790694400m", "27487790694400m", "BinarySI", 27487790695, 27487790694400),
    ("0.000000000001Ki", "2n", "2n", "DecimalSI", 1, 1),
    (".001Ki", "1024m", "1024m", "BinarySI", 2, 1024),
    (".000001Ki", "1024u", "1024u", "DecimalSI", 1, 2),
    (".000000001Ki", "1024n", "1024n", "DecimalSI", 1, 1),
    (".000000000001Ki", "2n", "2n", "DecimalSI", 1, 1),
    (".5Ki", "512", "512", "BinarySI", 512, 512000),
    (".5Mi", "512Ki", "512Ki", "BinarySI", 524288, 524288000),
    ("-.5Ki", "-512", "-512", "BinarySI", -512, -512000),
    ("1.Ki", "1.Ki", "1Ki", "BinarySI", 1024, 1024000),
    ("0.5Ki", "512", "512", "BinarySI", 512, 512000),
    ("0.1Ki", "102400m", "102400m", "BinarySI", 103, 102400),
    ("1.0Ki", "1Ki", "1Ki", "BinarySI", 1024, 1024000),
    ("+1Ki", "+1Ki", "1Ki", "BinarySI", 1024, 1024000),
    ("01Ki", "01Ki", "1Ki", "BinarySI", 1024, 1024000),
    ("-1Ki", "-1Ki", "-1Ki", "BinarySI", -1024, -1024000),
    ("-1.5Gi", "-1536Mi", "-1536Mi", "BinarySI", -1610612736, -1610612736000),
    ("e3", "0", "0", "DecimalExponent", 0, 0),
    ("E3", "0", "0", "DecimalExponent", 0, 0),
    ("Ki", "0", "0", "BinarySI", 0, 0),
    ("m", "0", "0", "DecimalSI", 0, 0),
    ("0.000000001", "1n", "1n", "DecimalSI", 1, 1),
    ("4G", "4G", "4G", "DecimalSI", 4000000000, 4000000000000),
    ("1Gi", "1Gi", "1Gi", "BinarySI", 1073741824, 1073741824000),
    ("2Gi", "2Gi", "2Gi", "BinarySI", 2147483648, 2147483648000),
    ("300Mi", "300Mi", "300Mi", "BinarySI", 314572800, 314572800000),
    ("307200Ki", "300Mi", "300Mi", "BinarySI", 314572800, 314572800000),
    ("1001Gi", "1001Gi", "1001Gi", "BinarySI", 1074815565824, 1074815565824000),
    ("1080m", "1080m", "1080m", "DecimalSI", 2, 1080),
    ("1.08", "1080m", "1080m", "DecimalSI", 2, 1080),
    ("1080000000n", "1080m", "1080m", "DecimalSI", 2, 1080),
    ("1000u", "1m", "1m", "DecimalSI", 1, 1),
    ("0.001T", "1G", "1G", "DecimalSI", 1000000000, 1000000000000),
    ("1000M", "1G", "1G", "DecimalSI", 1000000000, 1000000000000),
    ("1e9", "1e9", "1e9", "DecimalExponent", 1000000000, 1000000000000),
    (".001e12", "1e9", "1e9", "DecimalExponent", 1000000000, 1000000000000),
    ("80e-3", "80e-3", "80e-3", "DecimalExponent", 1, 80),
    ("300e6", "300e6", "300e6", "DecimalExponent", 300000000, 300000000000),
    ("1000e-12", "1e-9", "1e-9", "DecimalExponent", 1, 1),
    ("5000m", "5", "5", "DecimalSI", 5, 5000),
    ("1.000001", "1.000001", "1000001u", "DecimalSI", 2, 1001),
    ("-1.5", "-1500m", "-1500m", "DecimalSI", -2, -1500),
    ("-1500m", "-1500m", "-1500m", "DecimalSI", -2, -1500),
    ("-0.5Gi", "-512Mi", "-512Mi", "BinarySI", -536870912, -536870912000),
    ("1.5k", "1500", "1500", "DecimalSI", 1500, 1500000),
    ("1.5M", "1500k", "1500k", "DecimalSI", 1500000, 1500000000),
    ("0.5k", "500", "500", "DecimalSI", 500, 500000),
]


@pytest.mark.parametrize(
    ("text", "printed", "canonical", "fmt", "value", "milli"),
    GOLDEN,
    ids=[repr(r[0]) for r in GOLDEN],
)
def test_quantity_parse_matches_apimachinery(
    text: str, printed: str, canonical: str, fmt: str, value: int, milli: int
) -> None:
    q = parse_quantity(text)
    assert str(q) == printed
    assert q.canonical() == canonical
    assert q.format == fmt
    assert q.value() == value
    assert q.milli_value() == milli


FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)

# Inputs Kubernetes rejects, with its reason text.
REJECTED = [
    ("1K", "unable to parse quantity's suffix"),
    ("1i", "unable to parse quantity's suffix"),
    (".5i", "unable to parse quantity's suffix"),
    ("-3.01i", "unable to parse quantity's suffix"),
    ("-3.01e-", "unable to parse quantity's suffix"),
    (
        "1.1.M",
        FORMAT_WRONG,
    ),
    (
        "1+1.0M",
        FORMAT_WRONG,
    ),
    ("0.1mi", "unable to parse quantity's suffix"),
    (
        "0.1am",
        FORMAT_WRONG,
    ),
    (
        "aoeu",
        FORMAT_WRONG,
    ),
    (
        " 1",
        FORMAT_WRONG,
    ),
    (
        "1 ",
        FORMAT_WRONG,
    ),
    (
        "",
        FORMAT_WRONG,
    ),
    ("ee3", "unable to parse quantity's suffix"),
    ("1e", "unable to parse quantity's suffix"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTED, ids=[repr(r[0]) for r in REJECTED])
def test_quantity_parse_rejects_like_apimachinery(text: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.reason == reason
    assert isinstance(info.value, ValueError)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("1000E", "1e21"),
        ("5000E", "5e21"),
        ("1e21", "1e21"),
        ("1e100", "10e99"),
        ("12E", "12E"),
    ],
    ids=["1000E", "5000E", "1e21", "1e100", "12E"],
)
def test_quantity_prints_exponent_form_when_past_the_largest_suffix(
    text: str, printed: str
) -> None:
    assert str(parse_quantity(text)) == printed


def test_quantity_prints_binary_past_ei_as_exact_decimal() -> None:
    assert str(parse_quantity("1Ei") * 1024) == "1180591620717411303424"


@pytest.mark.parametrize(
    ("text", "value"),
    [("1E", 10**18), ("12345678901234567890", 12345678901234567890), ("8Ei", 2**63 - 1)],
    ids=["exa", "twenty-digits", "capped-binary"],
)
def test_quantity_value_is_exact_beyond_int64(text: str, value: int) -> None:
    assert parse_quantity(text).value() == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1e1000", "quantities must be less than 1e1000"),
        ("1e2147483648", "unable to parse quantity's suffix"),
        ("1" * 1001, "quantities must have no more than 1000 digits"),
    ],
    ids=["too-large", "exponent-past-int32", "too-many-digits"],
)
def test_quantity_rejects_absurd_sizes_quickly(text: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.reason == reason


@pytest.mark.parametrize(
    ("text", "printed"),
    [("1e-2147483647", "1e-9"), ("-1e-2147483647", "-1e-9"), ("0e2147483647", "0")],
    ids=["tiny", "tiny-negative", "zero-huge-exponent"],
)
def test_quantity_extreme_exponents_round_without_big_numbers(text: str, printed: str) -> None:
    assert str(parse_quantity(text)) == printed


@pytest.mark.parametrize(
    ("left", "op", "right", "printed", "fmt"),
    [
        ("1Gi", "+", "500m", "1073741824500m", Format.BINARY_SI),
        ("0", "+", "1Gi", "1Gi", Format.BINARY_SI),
        ("100m", "+", "0", "100m", Format.DECIMAL_SI),
        ("1Ki", "+", "1k", "2024", Format.BINARY_SI),
        ("1k", "+", "1Ki", "2024", Format.DECIMAL_SI),
        ("500m", "+", "500m", "1", Format.DECIMAL_SI),
        ("1e3", "+", "1", "1001", Format.DECIMAL_EXPONENT),
        ("1.5", "+", "1.5", "3", Format.DECIMAL_SI),
        ("1Gi", "-", "1Mi", "1023Mi", Format.BINARY_SI),
        ("0", "-", "1Gi", "-1Gi", Format.BINARY_SI),
        ("-1", "+", "1Ki", "1023", Format.DECIMAL_SI),
        ("1Gi", "*", "3", "3Gi", Format.BINARY_SI),
        ("100m", "*", "10", "1", Format.DECIMAL_SI),
        ("1536Mi", "*", "2", "3Gi", Format.BINARY_SI),
        ("1e3", "*", "1000", "1e6", Format.DECIMAL_EXPONENT),
        ("7Ei", "*", "2", "14Ei", Format.BINARY_SI),
        ("1.5Gi", "*", "0", "0", Format.BINARY_SI),
    ],
    ids=lambda v: str(v),
)
def test_quantity_arithmetic_matches_apimachinery(
    left: str, op: str, right: str, printed: str, fmt: Format
) -> None:
    a = parse_quantity(left)
    if op == "+":
        result = a + parse_quantity(right)
    elif op == "-":
        result = a - parse_quantity(right)
    else:
        result = a * int(right)
    assert str(result) == printed
    assert result.format is fmt


def test_quantity_arithmetic_drops_the_kept_text() -> None:
    kept = parse_quantity("+1")
    assert str(kept) == "+1"
    assert str(kept + ZERO) == "1"
    assert str(2 * kept) == "2"
    assert str(-kept) == "-1"


def test_quantity_compares_by_value_across_formats() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1073741824")
    assert hash(parse_quantity("1k")) == hash(parse_quantity("1e3"))
    assert parse_quantity("999m") < parse_quantity("1") <= parse_quantity("1000m")
    assert parse_quantity("2") > parse_quantity("1.5") >= parse_quantity("1500m")
    assert sorted([parse_quantity("1Ki"), parse_quantity("1k"), ZERO]) == [
        ZERO,
        parse_quantity("1k"),
        parse_quantity("1Ki"),
    ]
    assert parse_quantity("1") != "1"


def test_quantity_constructors_and_accessors() -> None:
    assert str(Quantity.from_int(3)) == "3"
    assert str(Quantity.from_int(2048, Format.BINARY_SI)) == "2Ki"
    assert str(Quantity.from_milli(1500)) == "1500m"
    assert Quantity.parse("250m").as_float() == 0.25
    assert parse_quantity("1.5").scaled_value(-3) == 1500
    assert parse_quantity("1.5k").scaled_value(3) == 2
    assert parse_quantity("-1.5").sign == -1
    assert ZERO.is_zero
    assert not ZERO
    assert parse_quantity("1n")
    assert repr(parse_quantity("1536Mi")) == "Quantity('1536Mi')"


def test_quantity_is_immutable() -> None:
    q = parse_quantity("1")
    with pytest.raises(AttributeError):
        q.nanos = 5  # type: ignore[misc]


def test_quantity_parse_is_cached() -> None:
    assert parse_quantity("750m") is parse_quantity("750m")


@pytest.mark.parametrize(
    ("value", "printed"),
    [("1Gi", "1Gi"), (4, "4"), (0.5, "500m"), (1e-7, "100e-9"), (3.0, "3")],
    ids=["string", "int", "float", "tiny-float", "whole-float"],
)
def test_quantity_from_json_accepts_strings_and_numbers(value: object, printed: str) -> None:
    assert str(to_quantity(value, "x")) == printed


@pytest.mark.parametrize(
    "value", [True, None, [1], float("nan"), "1 Gi"], ids=["bool", "null", "list", "nan", "space"]
)
def test_quantity_from_json_rejects_non_quantities_naming_the_field(value: object) -> None:
    with pytest.raises(FieldError) as info:
        to_quantity(value, "spec.minResources[cpu]")
    assert info.value.field == "spec.minResources[cpu]"


def test_resource_list_parses_every_entry() -> None:
    parsed = parse_resource_list({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 2})
    assert {k: str(v) for k, v in parsed.items()} == {
        "cpu": "500m",
        "memory": "1Gi",
        "nvidia.com/gpu": "2",
    }
    assert parse_resource_list(None) == {}


def test_resource_list_error_names_the_bad_key() -> None:
    with pytest.raises(FieldError) as info:
        parse_resource_list({"cpu": "1", "memory": "lots"}, "spec.minResources")
    assert info.value.field == "spec.minResources[memory]"
    assert str(info.value) == (f'spec.minResources[memory]: Invalid value: "lots": {FORMAT_WRONG}')


def test_resource_list_must_be_an_object() -> None:
    with pytest.raises(FieldError) as info:
        parse_resource_list(["cpu"], "spec.minResources")  # type: ignore[arg-type]
    assert info.value.field == "spec.minResources"


def test_resource_lists_add_scale_and_format() -> None:
    pod = parse_resource_list({"cpu": "250m", "memory": "512Mi"})
    total = add_resource_lists(scale_resource_list(pod, 4), {"nvidia.com/gpu": parse_quantity("1")})
    assert format_resource_list(total) == {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}
    assert add_resource_lists() == {}
