"""An SVG picture of the HyperNode tree: tiers as rows, boxes with usage bars.

Each HyperNode is a rounded box in its tier's row (the highest tier on top) with its name,
tier/tierName, node count and three bars — cpu, memory, GPUs — filled by the share in use
(free vs allocatable, hover for the numbers). Parents sit centred over their children; edges
are drawn parent to child. Broken HyperNodes (cycles, two parents) have a red border and the
tree's errors are listed under the title. Self-contained: no scripts, no external fonts.
"""

from __future__ import annotations

from html import escape
from typing import Any

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.scheduler.treeview import broken_names

JSON = dict[str, Any]

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN, HEADER = 170, 78, 18, 56, 24, 56
COLORS = {"cpu": "#4e79a7", "memory": "#59a14f", "gpu": "#e15759"}


def _fraction(free: str, alloc: str) -> float:
    try:
        total = parse_quantity(alloc).as_float()
        left = parse_quantity(free).as_float()
    except (QuantityError, ValueError):
        return 0.0
    return 0.0 if total <= 0 else max(0.0, min(1.0, 1 - left / total))


def _layout(hns: JSON) -> dict[str, tuple[float, float]]:
    """Leaves left to right in tree order; parents centred over their children."""
    tiers = sorted({h["tier"] for h in hns.values()}, reverse=True)
    row = {tier: i for i, tier in enumerate(tiers)}
    x: dict[str, float] = {}

    def row_of(name: str) -> int:
        return int(hns[name]["tier"])

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
            next_x[0] += BOX_W + GAP_X
        visiting.discard(name)
        return x[name]

    roots = sorted(
        (n for n, h in hns.items() if not h["parent"]), key=lambda n: (-hns[n]["tier"], n)
    )
    for name in [*roots, *sorted(hns)]:
        place(name)
    return {
        n: (MARGIN + x[n], MARGIN + HEADER + row[hns[n]["tier"]] * (BOX_H + GAP_Y)) for n in hns
    }


def render_svg(report: JSON) -> str:
    """The picture as an SVG document."""
    hns = report["hyperNodes"]
    broken = broken_names(report)
    pos = _layout(hns)
    errors = report["errors"]
    width = max((p[0] for p in pos.values()), default=0) + BOX_W + MARGIN
    height = max((p[1] for p in pos.values()), default=MARGIN + HEADER) + BOX_H + MARGIN
    height += 16 * len(errors)
    width = max(width, 480)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 6}" font-size="16" font-weight="bold">HyperNode tree '
        f"({len(hns)} HyperNodes, {'ready' if report['ready'] else 'NOT READY'})</text>",
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
                    f'<line x1="{px + BOX_W / 2:.1f}" y1="{py + BOX_H + shift:.1f}" '
                    f'x2="{cx + BOX_W / 2:.1f}" y2="{cy + shift:.1f}" stroke="#999"/>'
                )
    for name, h in sorted(hns.items()):
        px, py = pos[name]
        py += shift
        stroke = "#c0392b" if name in broken else "#555"
        width_px = 3 if name in broken else 1
        tier = f"tier {h['tier']}" + (f" · {h['tierName']}" if h["tierName"] else "")
        out.append(f"<g><title>{escape(name)}: {h['nodeCount']} nodes</title>")
        out.append(
            f'<rect x="{px}" y="{py}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="#f7f7f7" '
            f'stroke="{stroke}" stroke-width="{width_px}"/>'
        )
        out.append(
            f'<text x="{px + 8}" y="{py + 15}" font-weight="bold">{escape(name[:26])}</text>'
        )
        out.append(
            f'<text x="{px + 8}" y="{py + 29}" fill="#555">{escape(tier)} · '
            f"{h['nodeCount']} nodes</text>"
        )
        for i, key in enumerate(("cpu", "memory", "gpu")):
            free, alloc = h["free"][key], h["allocatable"][key]
            used = _fraction(free, alloc)
            by = py + 38 + i * 12
            out.append(f'<text x="{px + 8}" y="{by + 8}" font-size="9">{key}</text>')
            out.append(
                f'<rect x="{px + 48}" y="{by}" width="{BOX_W - 58}" height="8" fill="#e3e3e3"/>'
            )
            out.append(
                f'<rect x="{px + 48}" y="{by}" width="{(BOX_W - 58) * used:.1f}" height="8" '
                f'fill="{COLORS[key]}"><title>{key}: {escape(free)} free of '
                f"{escape(alloc)}</title></rect>"
            )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
