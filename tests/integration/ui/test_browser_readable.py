"""The topology page on a discovered cluster of real-world shape, in headless Chromium.

2,000 nodes with long names, 301 HyperNodes made by the real ``label`` discovery function
(``hypernode-dc1-fabric-tier1-pod-00.spine-sw-000.leaf-sw-0000``, label keys as tier names),
gangs owned by a Volcano Job, a Deployment, a StatefulSet, a batch Job, a RayCluster and a
PyTorchJob, placed by the real scheduler cycle, and queues
(``tests/discovered_cluster.py``), served by the view on a loopback ops server. The page
must show HyperNodes by their label value (the object name in the tooltip, and search finds
it), chips by their owner, the Queue panel, and no text drawn over other text anywhere in
the tree rows, the tables or the side panels (bounding boxes of the rendered text, clipped
by the boxes that clip it).

The screenshot is ``artifacts/ui/readable-discovered.png`` (the README's picture is
``make demo``'s, ``test_browser_demo.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.discovered_cluster import discovered_cache
from tests.integration.ui.browser import (
    assert_readable,
    chromium,
    missing,
    text_of,
    text_overlaps,
)
from volcano_py.ops import OpsServer
from volcano_py.ui.view import TopologyView

WAIT_S = 30.0


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
    assert_readable(driver, "readable-discovered", 200)


def test_chips_name_the_owning_workload(page: tuple[Any, Any]) -> None:
    driver, view = page
    data = orjson.loads(view.current()[1])
    placed = next(g for g in data["gangs"] if g["owner"]["kind"] == "Deployment" and g["hyperNode"])
    driver.find_element(By.ID, "search").send_keys(placed["owner"]["name"])
    chip = f'.row [data-gang="{placed["namespace"]}/{placed["name"]}"]'
    # the search redraws the page after a debounce (``#found`` is filled in the same task as
    # that redraw): wait for it, then read each text in one script call, so no element can go
    # stale between finding and reading it
    drawn = WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
        lambda d: d.execute_script(
            "return document.getElementById('found').textContent !== ''"
            " && document.querySelector(arguments[0]) !== null",
            chip,
        )
    )
    assert drawn, "the Deployment's gang was not drawn in its leaf after a search"
    text, title = driver.execute_script(
        "const e = document.querySelector(arguments[0]); return [e.innerText, e.title]", chip
    )
    assert text.startswith(f"Deployment {placed['owner']['name']} ")
    assert placed["name"] in title
    texts = " | ".join(
        driver.execute_script(
            "return Array.from(document.querySelectorAll('.gang, .pending b'), e => e.innerText)"
        )
    )
    assert "podgroup-" not in texts
    _, overlaps = text_overlaps(driver)
    assert overlaps == [], overlaps
    driver.find_element(By.ID, "search").clear()


def test_queue_panel_shows_allocated_deserved_capability_and_pending(
    page: tuple[Any, Any],
) -> None:
    driver, _ = page
    text = text_of(driver, '#queues [data-queue="research"]')
    assert "weight 3" in text
    assert "3 pending, 30 running" in text
    assert "allocated: gpu 960" in text
    assert "capability: gpu 1024" in text
    assert "deserved: unset" in text
    prod = text_of(driver, '#queues [data-queue="production-inference"]')
    assert "deserved: gpu 512 · cpu 4000" in prod
