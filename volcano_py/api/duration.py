"""Go's ``time.Duration`` text (``90s``, ``1m30s``, ``1.5h``, ``1h2m3s4ms5µs6ns``) in seconds.

Volcano reads durations with Go's ``time.ParseDuration``: the vcjob policies' ``timeout``,
the HyperNode controller's intervals, the ``sla`` plugin's ``sla-waiting-time``. One reader
for all of them, with Go's syntax: an optional sign, then one or more decimal numbers each
with a unit (``ns``, ``us``/``µs``, ``ms``, ``s``, ``m``, ``h``); ``0`` alone needs no unit.
"""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(value: str) -> float:
    """``value`` in seconds.

    Raises:
        ValueError: ``value`` is not in Go's duration syntax (the message quotes it).
    """
    text = value.strip()
    sign = 1.0
    if text[:1] in ("+", "-"):
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f"invalid duration {value!r}: expected such as 90s, 10m or 1h30m")
    total = 0.0
    position = 0
    while position < len(text):
        match = _PART.match(text, position)
        if match is None:
            raise ValueError(f"invalid duration {value!r}: expected such as 90s, 10m or 1h30m")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    return sign * total
