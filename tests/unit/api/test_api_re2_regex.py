from __future__ import annotations

import time

import pytest

from volcano_py.api.regex import compile_re2, re2_error, re2_search


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("ode", "node-1", True),
        ("^node-[0-9]+$", "node-12", True),
        ("^node-[0-9]+$", "node-12a", False),
        ("^node-[0-9]+$", "xnode-12", False),
        ("node-1", "node-10", True),
        ("^node-1$", "node-10", False),
        ("gpu|cpu", "a-cpu-node", True),
        ("", "anything", True),
        ("(?i)NODE", "node", True),
        (r"\d{3}", "n-123", True),
        ("^a.b$", "a\nb", False),
        ("b$", "ab\n", False),
        ("é", "café", True),
        (r"\pL+-1", "日本-1", True),
    ],
    ids=[
        "unanchored",
        "anchored",
        "anchored-suffix",
        "anchored-prefix",
        "substring",
        "exact-anchors",
        "alternation",
        "empty-matches-all",
        "case-insensitive-flag",
        "perl-class",
        "dot-excludes-newline",
        "dollar-is-end-of-text",
        "utf8-literal",
        "unicode-class",
    ],
)
def test_re2_search_matches_like_go_matchstring(pattern: str, text: str, expected: bool) -> None:
    assert re2_search(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        ("(", "error parsing regexp: missing closing ): `(`"),
        ("a)", "error parsing regexp: unexpected ): `a)`"),
        ("x[a", "error parsing regexp: missing closing ]: `[a`"),
        ("a\\", "error parsing regexp: trailing backslash at end of expression: ``"),
        ("*", "error parsing regexp: missing argument to repetition operator: `*`"),
        ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
        ("x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
        ("(?P<>a)", "error parsing regexp: invalid named capture: `(?P<>`"),
        ("[[:foo:]]", "error parsing regexp: invalid character class range: `[:foo:]`"),
        ("a(?=b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        ("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
        ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
        ("\\Z", "error parsing regexp: invalid escape sequence: `\\Z`"),
        ("\\C", "error parsing regexp: invalid escape sequence: `\\C`"),
        ("[\\C]", "error parsing regexp: invalid escape sequence: `\\C`"),
    ],
    ids=[
        "open-paren",
        "close-paren",
        "bracket",
        "trailing-backslash",
        "bare-star",
        "nested-repeat",
        "repeat-size",
        "named-capture",
        "posix-class",
        "lookahead",
        "backreference",
        "class-range",
        "python-only-escape",
        "byte-escape",
        "byte-escape-in-class",
    ],
)
def test_re2_error_uses_go_wording(pattern: str, error: str) -> None:
    assert re2_error(pattern) == error
    assert compile_re2(pattern) is None
    assert re2_search(pattern, pattern) is False


@pytest.mark.parametrize(
    "pattern",
    ["^gpu-node-[0-9]+$", "\\\\C", "(?P<n>a)", "(?<n>a)", "a{1000}", "\\Q(\\E", "(?U)a+"],
    ids=[
        "typical",
        "escaped-backslash-then-C",
        "named",
        "named-short",
        "max-repeat",
        "quoted",
        "ungreedy",
    ],
)
def test_re2_accepts_go_syntax(pattern: str) -> None:
    assert re2_error(pattern) is None
    compiled = compile_re2(pattern)
    assert compiled is not None
    assert compiled.pattern == pattern


def test_re2_catastrophic_backtracking_pattern_stays_linear() -> None:
    text = "a" * 200_000 + "!"
    start = time.process_time()  # CPU time: other processes' load does not count
    assert re2_search("(a+)+$", text) is False
    assert re2_search("(a|aa)*b", text) is False
    # backtracking would not finish; linear takes milliseconds
    assert time.process_time() - start < 5.0


def test_re2_compile_is_cached_for_valid_and_invalid_patterns() -> None:
    assert compile_re2("^rack-[0-9]+$") is compile_re2("^rack-[0-9]+$")
    assert re2_error("(") is re2_error("(")


def test_re2_fallback_path_matches_like_the_fast_path() -> None:
    compiled = compile_re2("ode-[0-9]$")
    assert compiled is not None
    fast = [compiled.matches(t) for t in ("node-1", "node-12", "café-node-3")]
    compiled_again = type(compiled)(compiled.pattern, compiled.regex)
    compiled_again._raw_match = None
    assert [compiled_again.matches(t) for t in ("node-1", "node-12", "café-node-3")] == fast
    assert fast == [True, False, True]


def test_re2_refuses_patterns_past_its_program_budget_with_go_wording() -> None:
    assert re2_error(r"\pL{1000}") == "error parsing regexp: expression too large: ``"
    assert re2_search(r"\pL{1000}", "a" * 1000) is False
