"""An SVG picture of the HyperNode tree: tiers as rows, boxes with usage bars.

Each HyperNode is a rounded box in its tier's row (the highest tier on top) with its name,
tier/tierName, node count and three bars — cpu, memory, GPUs — filled by the share in use
(free vs allocatable, hover for the numbers). Parents sit centred over their children; edges
are drawn parent to child. Broken HyperNodes (cycles, two parents) have a red border and the
tree's errors are listed under the title. Self-contained: no scripts, no external fonts.

Readable with discovered names (``hypernode-gpu-tier1-x7k2p``): boxes are as wide as the
longest label needs (``text_width``, a conservative estimate from DejaVu Sans Bold, wider
than the usual browser sans-serif fonts), up to ``MAX_BOX_W``; a name longer than that is
shortened in the middle, keeping as much of its distinguishing tail as it takes for every
label to stay different (the full name is in the box's tooltip). Boxes of one row never
overlap: a parent is centred over its children, then pushed right of its left neighbour when
two would collide (two parents of one child, a cycle).
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from volcano_py.api import JSON
from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.scheduler.treeview import broken_names

MIN_BOX_W, MAX_BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN, HEADER = 170, 360, 78, 18, 56, 24, 56
PAD, BAR_X = 8, 56  # bars start right of their labels ("memory" at 9 px)
NAME_SIZE, LINE_SIZE, TITLE_SIZE = 11, 11, 16
COLORS = {"cpu": "#4e79a7", "memory": "#59a14f", "gpu": "#e15759"}
ELLIPSIS = "…"

# Advance widths in em, at least DejaVu Sans Bold's for each character (what "sans-serif"
# usually is on Linux; Arial and Helvetica are narrower), so an estimate never falls short.
_NARROW, _THIN, _WIDE = "ijl.,:;'|!", "frt()[]/ -·_", "mwMW…"
_EM_NARROW, _EM_THIN, _EM_LOWER, _EM_UPPER, _EM_WIDE = 0.38, 0.50, 0.72, 0.86, 1.10


def text_width(text: str, size: float) -> float:
    """The width ``text`` takes at ``size`` px in a sans-serif font (a safe over-estimate)."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += _EM_NARROW
        elif ch in _THIN:
            em += _EM_THIN
        elif ch in _WIDE:
            em += _EM_WIDE
        elif ch.isupper():
            em += _EM_UPPER
        else:
            em += _EM_LOWER
    return em * size


def fit_label(text: str, width: float, size: float, tail: int = 0) -> str:
    """``text``, or its head + ``…`` + tail within ``width`` px.

    The tail keeps at least ``tail`` characters while they fit (discovered names differ at
    the end); the head and tail share what is left.
    """
    if text_width(text, size) <= width:
        return text
    for keep in range(len(text) - 1, 0, -1):
        end = min(keep, max(tail, keep // 2))
        label = text[: keep - end] + ELLIPSIS + text[len(text) - end :]
        if text_width(label, size) <= width:
            return label
    return ELLIPSIS


def unique_labels(names: Iterable[str], width: float, size: float) -> dict[str, str]:
    """A label per name within ``width``, no two alike: clashing tails grow until they differ.

    Names that cannot be told apart within ``width`` keep their full text (wider than the
    box, but never two boxes saying the same thing).
    """
    ordered = sorted(set(names))
    tails = dict.fromkeys(ordered, 0)
    while True:
        labels = {n: fit_label(n, width, size, tails[n]) for n in ordered}
        holders: dict[str, list[str]] = {}
        for name, label in labels.items():
            holders.setdefault(label, []).append(name)
        clashing = {n for group in holders.values() if len(group) > 1 for n in group}
        if not clashing:
            return labels
        growing = [n for n in clashing if tails[n] < len(n)]
        if not growing:
            return {n: n if n in clashing else label for n, label in labels.items()}
        for name in growing:
            tails[name] = max(tails[name] + 1, _tail_of(labels[name]) + 1)


def _tail_of(label: str) -> int:
    return len(label) - label.index(ELLIPSIS) - 1 if ELLIPSIS in label else len(label)


def _fraction(free: str, alloc: str) -> float:
    try:
        total = parse_quantity(alloc).as_float()
        left = parse_quantity(free).as_float()
    except (QuantityError, ValueError):
        return 0.0
    return 0.0 if total <= 0 else max(0.0, min(1.0, 1 - left / total))


def _second_line(h: JSON) -> str:
    tier = f"tier {h['tier']}" + (f" · {h['tierName']}" if h["tierName"] else "")
    return f"{tier} · {h['nodeCount']} nodes"


def _layout(hns: JSON, box_w: float) -> dict[str, tuple[float, float]]:
    """Leaves left to right in tree order; parents centred over their children; no overlap."""
    tiers = sorted({h["tier"] for h in hns.values()}, reverse=True)
    row = {tier: i for i, tier in enumerate(tiers)}
    x: dict[str, float] = {}
    next_x = [0.0]
    visiting: set[str] = set()

    def place(name: str) -> float:
        if name in x:
            return x[name]
        if name in visiting:
            return next_x[0]
        visiting.add(name)
        kids = [c for c in hns[name]["children"] if c in hns and c not in visiting]
        xs = [place(c) for c in kids]
        if xs:
            x[name] = (min(xs) + max(xs)) / 2
        else:
            x[name] = next_x[0]
            next_x[0] += box_w + GAP_X
        visiting.discard(name)
        return x[name]

    roots = sorted(
        (n for n, h in hns.items() if not h["parent"]), key=lambda n: (-hns[n]["tier"], n)
    )
    for name in [*roots, *sorted(hns)]:
        place(name)
    for tier in tiers:  # two parents of one child (or a cycle) would share a spot: push right
        end = float("-inf")
        for name in sorted((n for n in hns if hns[n]["tier"] == tier), key=lambda n: (x[n], n)):
            x[name] = max(x[name], end + GAP_X)
            end = x[name] + box_w
    return {
        n: (MARGIN + x[n], MARGIN + HEADER + row[hns[n]["tier"]] * (BOX_H + GAP_Y)) for n in hns
    }


def render_svg(report: JSON) -> str:
    """The picture as an SVG document."""
    hns = report["hyperNodes"]
    broken = broken_names(report)
    needed = max(
        (
            max(text_width(n, NAME_SIZE), text_width(_second_line(h), LINE_SIZE))
            for n, h in hns.items()
        ),
        default=0.0,
    )
    box_w = float(min(MAX_BOX_W, max(MIN_BOX_W, int(needed + 2 * PAD + 1))))
    labels = unique_labels(hns, box_w - 2 * PAD, NAME_SIZE)
    pos = _layout(hns, box_w)
    errors = report["errors"]
    title = f"HyperNode tree ({len(hns)} HyperNodes, {'ready' if report['ready'] else 'NOT READY'})"
    width = max((p[0] for p in pos.values()), default=0) + box_w + MARGIN
    width = max(
        width,
        480,
        2 * MARGIN + text_width(title, TITLE_SIZE),
        *(2 * MARGIN + text_width(e, LINE_SIZE) for e in errors),
    )
    height = max((p[1] for p in pos.values()), default=MARGIN + HEADER) + BOX_H + MARGIN
    height += 16 * len(errors)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 6}" font-size="{TITLE_SIZE}" font-weight="bold">'
        f"{escape(title)}</text>",
    ]
    for i, error in enumerate(errors):
        out.append(
            f'<text x="{MARGIN}" y="{MARGIN + 26 + 14 * i}" fill="#c0392b">{escape(error)}</text>'
        )
    shift = 16 * len(errors)
    for name, h in hns.items():
        px, py = pos[name]
        for child in h["children"]:
            if child in pos:
                cx, cy = pos[child]
                out.append(
                    f'<line x1="{px + box_w / 2:.1f}" y1="{py + BOX_H + shift:.1f}" '
                    f'x2="{cx + box_w / 2:.1f}" y2="{cy + shift:.1f}" stroke="#999"/>'
                )
    for name, h in sorted(hns.items()):
        px, py = pos[name]
        out += _box(name, labels[name], h, px, py + shift, box_w, name in broken)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _box(
    name: str, label: str, h: JSON, px: float, py: float, box_w: float, bad: bool
) -> list[str]:
    stroke, stroke_w = ("#c0392b", 3) if bad else ("#555", 1)
    line = fit_label(_second_line(h), box_w - 2 * PAD, LINE_SIZE)
    out = [
        f'<g class="hypernode" data-name="{escape(name)}">'
        f"<title>{escape(name)}: {h['nodeCount']} nodes</title>",
        f'<rect x="{px:.1f}" y="{py:.1f}" width="{box_w:.0f}" height="{BOX_H}" rx="6" '
        f'fill="#f7f7f7" stroke="{stroke}" stroke-width="{stroke_w}"/>',
        f'<text class="name" x="{px + PAD:.1f}" y="{py + 15:.1f}" font-size="{NAME_SIZE}" '
        f'font-weight="bold">{escape(label)}</text>',
        f'<text x="{px + PAD:.1f}" y="{py + 29:.1f}" fill="#555">{escape(line)}</text>',
    ]
    bar_w = box_w - BAR_X - PAD
    for i, key in enumerate(("cpu", "memory", "gpu")):
        free, alloc = h["free"][key], h["allocatable"][key]
        by = py + 38 + i * 12
        out.append(f'<text x="{px + PAD:.1f}" y="{by + 8:.1f}" font-size="9">{key}</text>')
        out.append(
            f'<rect x="{px + BAR_X:.1f}" y="{by:.1f}" width="{bar_w:.0f}" height="8" '
            'fill="#e3e3e3"/>'
        )
        out.append(
            f'<rect x="{px + BAR_X:.1f}" y="{by:.1f}" width="{bar_w * _fraction(free, alloc):.1f}" '
            f'height="8" fill="{COLORS[key]}"><title>{key}: {escape(free)} free of '
            f"{escape(alloc)}</title></rect>"
        )
    out.append("</g>")
    return out
