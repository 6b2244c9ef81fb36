"""The topology page on a discovered cluster of real-world shape, in headless Chromium.

2,000 nodes with long names, 301 HyperNodes made by the real ``label`` discovery function
(``hypernode-dc1-fabric-tier1-<random>``, label keys as tier names), gangs owned by a Volcano
Job, a Deployment, a StatefulSet, a batch Job, a RayCluster and a PyTorchJob, placed by the
real scheduler cycle, and queues (``tests/discovered_cluster.py``), served by the view on a
loopback ops server. The page must show HyperNodes by their label value (the object name in
the tooltip, and search finds it), chips by their owner, the Queue panel, and no text drawn
over other text anywhere in the tree rows, the tables or the side panels (bounding boxes of
the rendered text, clipped by the boxes that clip it).

``VOLCANO_PY_UI_SCREENSHOT=docs/ui-screenshot.png`` also writes the page there (the README's
picture).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.discovered_cluster import discovered_cache
from tests.integration.ui.browser import chromium, missing, screenshot
from volcano_py.ops import OpsServer
from volcano_py.ui.view import TopologyView

WAIT_S = 30.0

# Every element with text of its own inside a group (a tree row, a table row, a queue, a
# pending gang, the header): the rectangles its text covers (one per line it wraps onto) once
# clipped by itself and its clipping ancestors. No two rectangles of one group may intersect.
OVERLAPS_JS = """
const groups = document.querySelectorAll(
  '.hn > .row, #tiers tr, #queues .queue, #pending .pending, header');
const clipped = (e, r) => {
  let [l, t, rt, b] = [r.left, r.top, r.right, r.bottom];
  for (let a = e; a && a !== document.body; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
      const q = a.getBoundingClientRect();
      l = Math.max(l, q.left); t = Math.max(t, q.top);
      rt = Math.min(rt, q.right); b = Math.min(b, q.bottom);
    }
  }
  return rt - l > 0.5 && b - t > 0.5 ? [l, t, rt, b] : null;
};
const found = [];
let checked = 0;
for (const g of groups) {
  const boxes = [];
  for (const e of [g, ...g.querySelectorAll('*')]) {
    const texts = [...e.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim());
    if (!texts.length) continue;
    for (const t of texts) {  // one rectangle per line the text occupies
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const line of range.getClientRects()) {
        const rect = clipped(e, line);
        if (rect) boxes.push([e, rect]);
      }
    }
  }
  checked += boxes.length;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, ra] = boxes[i], [b, rb] = boxes[j];
    if (a === b) continue;  // one element's own text (its line boxes may touch)
    const w = Math.min(ra[2], rb[2]) - Math.max(ra[0], rb[0]);
    const h = Math.min(ra[3], rb[3]) - Math.max(ra[1], rb[1]);
    if (w > 1 && h > 1) found.push(`${a.textContent.slice(0, 40)} / ${b.textContent.slice(0, 40)}`);
  }
}
return [checked, found.slice(0, 10)];
"""


@pytest.fixture
def clean_gangs() -> None:
    """This module's cluster is in process: no control-plane gangs to clean (overrides the
    package's autouse fixture, so these tests need no API server)."""


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[Any, TopologyView]]:
    problem = missing()
    if problem:
        pytest.fail(f"the browser tests need headless Chromium: {problem}", pytrace=False)
    view = TopologyView(discovered_cache(), lambda: "fixed")
    ops = OpsServer("127.0.0.1", 0, healthy=list, ready=list, routes=view.routes())
    ops.start()
    driver = chromium()
    try:
        driver.get(f"http://127.0.0.1:{ops.port}/ui")
        WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
            lambda d: d.execute_script("return window.__topology.renders")
        )
        yield driver, view
    finally:
        driver.quit()
        ops.stop()


def _open_one_leaf(driver: Any) -> None:
    """Open the first collapsed HyperNode with gangs inside, so their chips are drawn."""
    rows = driver.find_elements(By.CSS_SELECTOR, "div.hn > .row")
    row = next(r for r in rows if r.find_elements(By.CSS_SELECTOR, ".below"))
    row.find_element(By.CSS_SELECTOR, 'button.tog[aria-expanded="false"]').click()
    WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".row .gang")
    )


def test_no_text_overlaps_and_hypernodes_read_as_their_label(page: tuple[Any, Any]) -> None:
    driver, view = page
    data = orjson.loads(view.current()[1])
    assert data["summary"]["hyperNodes"] == 301
    _open_one_leaf(driver)
    rows = driver.find_elements(By.CSS_SELECTOR, "div.hn > .row .name")
    assert len(rows) > 10
    names = [r.text for r in rows]
    assert any(n.startswith("pod-") for n in names)
    assert any(n.startswith("spine-sw-") for n in names)
    assert any(n.startswith("leaf-sw-") for n in names)
    assert not any(n.startswith("hypernode-") for n in names)
    leaf = next(r for r in rows if r.text.startswith("leaf-sw-"))
    assert "(HyperNode hypernode-dc1-fabric-tier1-" in leaf.get_attribute("title")
    checked, overlaps = driver.execute_script(OVERLAPS_JS)
    path = screenshot(driver, "readable-discovered")
    assert checked > 200
    assert overlaps == [], f"text drawn over text (see {path}): {overlaps}"
    wanted = os.environ.get("VOLCANO_PY_UI_SCREENSHOT")
    if wanted:
        shutil.copyfile(path, wanted)


def test_chips_name_the_owning_workload(page: tuple[Any, Any]) -> None:
    driver, view = page
    data = orjson.loads(view.current()[1])
    placed = next(g for g in data["gangs"] if g["owner"]["kind"] == "Deployment" and g["hyperNode"])
    driver.find_element(By.ID, "search").send_keys(placed["owner"]["name"])
    chip = f'.row [data-gang="{placed["namespace"]}/{placed["name"]}"]'
    chips = WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, chip)
    )
    assert chips, "the Deployment's gang was not drawn in its leaf after a search"
    assert chips[0].text.startswith(f"Deployment {placed['owner']['name']} ")
    assert placed["name"] in chips[0].get_attribute("title")
    texts = " | ".join(c.text for c in driver.find_elements(By.CSS_SELECTOR, ".gang"))
    texts += " | ".join(p.text for p in driver.find_elements(By.CSS_SELECTOR, ".pending b"))
    assert "podgroup-" not in texts
    _, overlaps = driver.execute_script(OVERLAPS_JS)
    assert overlaps == [], overlaps
    driver.find_element(By.ID, "search").clear()


def test_queue_panel_shows_allocated_deserved_capability_and_pending(
    page: tuple[Any, Any],
) -> None:
    driver, _ = page
    research = driver.find_element(By.CSS_SELECTOR, '#queues [data-queue="research"]')
    text = research.text
    assert "weight 3" in text
    assert "3 pending, 30 running" in text
    assert "allocated: gpu 960" in text
    assert "capability: gpu 1024" in text
    assert "deserved: unset" in text
    prod = driver.find_element(By.CSS_SELECTOR, '#queues [data-queue="production-inference"]')
    assert "deserved: gpu 512 · cpu 4000" in prod.text
