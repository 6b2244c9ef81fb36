r"""The one place user-supplied regular expressions are compiled and matched: RE2, like Go.

HyperNode ``regexMatch`` patterns are checked by the webhook, resolved by the hypernode
controller's status sync and matched by the scheduler. Volcano does all three with Go's
``regexp`` package (RE2 syntax, linear time, unanchored ``MatchString``); here all three call
this module, which uses Google's RE2 through ``google-re2`` (import name ``re2``), so a
pattern means the same thing everywhere and no pattern can backtrack for ever.

Compiled patterns are cached (LRU) because the same few patterns are matched against every
node on every change. Invalid patterns are cached too, as ``None``.

RE2 and Go accept the same syntax, with two differences. RE2 accepts ``\C`` (any byte) and
Go does not; it is rejected here. RE2 keeps each program within 8 MiB, so a few monstrous
patterns Go compiles (``\pL{1000}``) are refused as "expression too large"; a bigger budget
would let one webhook request burn seconds of CPU and hundreds of MiB. Error texts are
rewritten into Go's wording (``error parsing regexp: missing closing ): `(` ``) because
Volcano's webhook puts Go's text in its denial message.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2


class CompiledPattern:
    """A valid pattern, compiled once; ``matches`` is Go's ``(*Regexp).MatchString``."""

    __slots__ = ("_raw_match", "pattern", "regex")

    def __init__(self, pattern: str, regex: Any) -> None:
        self.pattern = pattern
        # The re2 module's compiled object, for callers that need match objects.
        self.regex = regex
        # google-re2's binding of RE2::Match, when present: four times faster than ``search``,
        # which builds a generator and maps byte offsets back to str offsets on every call.
        raw = getattr(regex, "_regexp", None)
        self._raw_match = getattr(raw, "Match", None) if _UNANCHORED is not None else None

    def matches(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text`` (unanchored)."""
        if self._raw_match is not None:
            data = text.encode("utf-8")
            return bool(self._raw_match(_UNANCHORED, data, 0, len(data))[0][0] != -1)
        return self.regex.search(text) is not None

    def __repr__(self) -> str:
        return f"CompiledPattern({self.pattern!r})"


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # we report errors ourselves; RE2 would print them to stderr
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)

# RE2's error code text -> Go regexp/syntax ErrorCode text.
_GO_WORDING = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> tuple[CompiledPattern | None, str | None]:
    """``(compiled, None)`` or ``(None, reason)``; cached either way."""
    escape = _byte_escape(pattern)
    if escape is not None:
        return None, _go_error("invalid escape sequence", escape)
    try:
        return CompiledPattern(pattern, re2.compile(pattern, _OPTIONS)), None
    except re2.error as e:
        return None, _translate(pattern, e)


def compile_re2(pattern: str) -> CompiledPattern | None:
    """The compiled pattern, or None when it is not a valid RE2/Go pattern. Never raises."""
    return _compile(pattern)[0]


def re2_error(pattern: str) -> str | None:
    """Why ``pattern`` does not compile, in Go's words; None when it is valid."""
    return _compile(pattern)[1]


def re2_search(pattern: str, text: str) -> bool:
    """Go's ``regexp.MatchString``: does ``pattern`` match anywhere in ``text``?

    Unanchored (``ode`` matches ``node-1``); an invalid pattern matches nothing.
    """
    compiled = _compile(pattern)[0]
    return compiled is not None and compiled.matches(text)


def _translate(pattern: str, error: Exception) -> str:
    raw = error.args[0] if error.args else str(error)
    message = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    for code, go_code in _GO_WORDING.items():
        if message == code:
            return _go_error(go_code, "")
        if message.startswith(code + ": "):
            argument = message[len(code) + 2 :]
            if go_code in ("missing closing )", "unexpected )"):
                argument = pattern  # Go reports the whole expression for parenthesis errors
            return _go_error(go_code, argument)
    return f"error parsing regexp: {message}"


def _go_error(code: str, argument: str) -> str:
    return f"error parsing regexp: {code}: `{argument}`"


def _byte_escape(pattern: str) -> str | None:
    r"""The first ``\C`` escape in ``pattern`` (RE2 allows it, Go does not), or None."""
    i = pattern.find("\\")
    while i != -1 and i + 1 < len(pattern):
        if pattern[i + 1] == "C":
            return "\\C"
        i = pattern.find("\\", i + 2)
    return None
