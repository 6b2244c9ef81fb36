"""``volcano-py tree -o svg`` stays readable with discovered names: distinct, unclipped labels.

The SVG is rendered to PNG with cairosvg (``tests/artifacts/tree-*.png``, git-ignored, to look
at), and its geometry is checked from the SVG itself, with text extents measured by cairo in
the font the renderer uses (``sans-serif``, DejaVu Sans here): every label inside its box, no
two labels or boxes overlapping, no two HyperNodes labelled alike.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import cairocffi
import cairosvg
import pytest

from tests.unit.scheduler.objects import hypernode, node
from volcano_py.scheduler.cache import SchedulerCache
from volcano_py.scheduler.simulator import fill_cache
from volcano_py.scheduler.treesvg import fit_label, render_svg, text_width, unique_labels
from volcano_py.scheduler.treeview import tree_report

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
NS = "{http://www.w3.org/2000/svg}"
SUFFIXES = ("x7k2p", "x7k2q", "b91zt", "m3v8a")


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return (
            self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1
        )

    def inside(self, other: Box) -> bool:
        return (
            other.x0 <= self.x0
            and self.x1 <= other.x1
            and other.y0 <= self.y0
            and self.y1 <= other.y1
        )


def _discovered(prefix: str) -> list[dict[str, object]]:
    """Label discovery's shape: racks under spines, names that differ only at the end."""
    objects: list[dict[str, object]] = []
    racks = [f"{prefix}-tier1-{s}" for s in SUFFIXES]
    for i, rack in enumerate(racks):
        members = [f"n-{i}-{j}" for j in range(2)]
        objects += [node(m, {"nvidia.com/gpu": 8}) for m in members]
        objects.append(hypernode(rack, 1, nodes=members, tier_name="rack"))
    objects.append(hypernode(f"{prefix}-tier2-q4z1c", 2, children=racks[:2], tier_name="spine"))
    objects.append(hypernode(f"{prefix}-tier2-q4z1d", 2, children=racks[2:], tier_name="spine"))
    return objects


CASES = {
    "discovered": _discovered("hypernode-gpu"),
    "long-names": _discovered("hypernode-nvidia.com-gpu-h100-superpod-east-zone-b"),
    # two spines claim one rack: the tree is broken and both parents want the same spot
    "two-parents": [
        node("n1"),
        node("n2"),
        hypernode("hypernode-gpu-tier1-aaaaa", 1, nodes=["n1"]),
        hypernode("hypernode-gpu-tier1-bbbbb", 1, nodes=["n2"]),
        hypernode("hypernode-gpu-tier2-ccccc", 2, children=["hypernode-gpu-tier1-aaaaa"]),
        hypernode("hypernode-gpu-tier2-ddddd", 2, children=["hypernode-gpu-tier1-aaaaa"]),
    ],
}


def _measure(text: str, size: float, bold: bool) -> tuple[float, float, float]:
    """(advance width, ascent, descent) of ``text`` in cairo's sans-serif at ``size`` px."""
    surface = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, 1, 1)
    context = cairocffi.Context(surface)
    weight = cairocffi.FONT_WEIGHT_BOLD if bold else cairocffi.FONT_WEIGHT_NORMAL
    context.select_font_face("sans-serif", cairocffi.FONT_SLANT_NORMAL, weight)
    context.set_font_size(size)
    ascent, descent = context.font_extents()[:2]
    return context.text_extents(text)[4], ascent, descent


def _text_box(element: ET.Element, default_size: float) -> Box:
    size = float(element.get("font-size", default_size))
    width, ascent, descent = _measure(
        element.text or "", size, element.get("font-weight") == "bold"
    )
    x, y = float(element.get("x", 0)), float(element.get("y", 0))
    return Box(x, y - ascent, x + width, y + descent)


def _rect_box(element: ET.Element) -> Box:
    x, y = float(element.get("x", 0)), float(element.get("y", 0))
    return Box(x, y, x + float(element.get("width", 0)), y + float(element.get("height", 0)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_tree_svg_labels_are_distinct_inside_their_boxes_and_never_overlap(case: str) -> None:
    cache = SchedulerCache()
    fill_cache(cache, CASES[case])
    report = tree_report(cache)
    svg = render_svg(report)
    ARTIFACTS.mkdir(exist_ok=True)
    png = cairosvg.svg2png(bytestring=svg.encode(), write_to=None)
    assert png is not None
    assert png.startswith(b"\x89PNG")
    (ARTIFACTS / f"tree-{case}.png").write_bytes(png)

    root = ET.fromstring(svg)
    default_size = float(root.get("font-size", 11))
    groups = root.findall(f"{NS}g[@class='hypernode']")
    assert {g.get("data-name") for g in groups} == set(report["hyperNodes"])
    boxes = {g.get("data-name"): _rect_box(g.find(f"{NS}rect")) for g in groups}  # type: ignore[arg-type]
    names = {g.get("data-name"): g.find(f"{NS}text[@class='name']") for g in groups}
    labels = [el.text for el in names.values() if el is not None]
    assert len(labels) == len(set(labels)) == len(groups), labels
    for name, element in names.items():
        assert element is not None
        assert _text_box(element, default_size).inside(boxes[name]), (name, element.text)
    ordered = sorted(boxes.items())
    for i, (a, box_a) in enumerate(ordered):
        for b, box_b in ordered[i + 1 :]:
            assert not box_a.overlaps(box_b), (a, b)
    texts = [_text_box(el, default_size) for el in root.iter(f"{NS}text")]
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    bars = [_rect_box(r) for g in groups for r in g.findall(f"{NS}rect")[1:]]
    assert bars
    assert not any(t.overlaps(bar) for t in texts for bar in bars)
    width = float(root.get("width", 0))
    assert all(t.x1 <= width for t in texts)


def test_tree_svg_discovered_names_are_shown_whole() -> None:
    cache = SchedulerCache()
    fill_cache(cache, CASES["discovered"])
    svg = render_svg(tree_report(cache))
    for suffix in SUFFIXES:
        assert f">hypernode-gpu-tier1-{suffix}</text>" in svg


def test_text_width_never_underestimates_the_rendered_font() -> None:
    for text in ("hypernode-gpu-tier1-x7k2p", "HYPERNODE-MWQ-0.5", "tier 2 · spine · 12 nodes"):
        for bold in (False, True):
            assert text_width(text, 11) >= _measure(text, 11, bold)[0], (text, bold)


def test_labels_shortened_in_the_middle_stay_distinct() -> None:
    names = [f"{'hypernode-nvidia.com-gpu-' * 3}tier1-{s}" for s in ("ab", "ac", "bb")]
    labels = unique_labels(names, 120, 11)
    assert len(set(labels.values())) == 3
    assert all("…" in label and text_width(label, 11) <= 120 for label in labels.values())
    assert fit_label("short", 120, 11) == "short"
