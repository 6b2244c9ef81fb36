"""The topology page in a real browser (headless Chromium) against a manager on the real
control plane: the page loads, the racks show, a gang applied with kubectl appears inside its
rack within seconds, a pending gang shows its reason. Screenshots go to ``artifacts/ui/``.

Chromium missing is a failure with the install command, never a skip (CI installs it).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from devcluster.harness import ControlPlane
from tests.integration.ui.browser import chromium, missing, screenshot, text_of
from tests.integration.ui.conftest import GPUS_PER_NODE, UiCluster

WAIT_S = 20.0


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    problem = missing()
    if problem:
        pytest.fail(f"the browser tests need headless Chromium: {problem}", pytrace=False)
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: object, what: str, condition: object, timeout: float = WAIT_S) -> object:
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2).until(condition)
    except TimeoutException:
        path = screenshot(driver, "failed-" + what.replace(" ", "-"))  # type: ignore[arg-type]
        raise AssertionError(f"page did not show {what} within {timeout}s (see {path})") from None


def _rows(driver: object, css: str) -> list[object]:
    return list(driver.find_elements(By.CSS_SELECTOR, css))  # type: ignore[attr-defined]


def _kubectl_apply(cp: ControlPlane, objects: list[dict[str, object]]) -> None:
    stream = "\n---\n".join(json.dumps(o) for o in objects)
    subprocess.run(
        [str(cp.binaries["kubectl"]), "--kubeconfig", str(cp.kubeconfig), "apply", "-f", "-"],
        input=stream.encode(),
        check=True,
        capture_output=True,
        timeout=60,
    )


def test_browser_shows_racks_then_a_gang_in_its_rack_and_a_pending_reason(
    ui_cluster: UiCluster, control_plane: ControlPlane, browser: object
) -> None:
    c, driver = ui_cluster, browser
    driver.get(f"{c.url}/ui")  # type: ignore[attr-defined]
    _wait(driver, "a first render", lambda d: d.execute_script("return window.__topology.renders"))
    for rack in c.racks:
        _wait(driver, f"rack {rack}", lambda d, r=rack: _rows(d, f'div.hn[data-hn="{r}"]'))
    rack_row = text_of(driver, f'div.hn[data-hn="{c.racks[0]}"] > .row')  # type: ignore[arg-type]
    assert "tier 1 · rack" in rack_row
    assert f"gpu {2 * GPUS_PER_NODE}" in rack_row
    screenshot(driver, "1-racks")  # type: ignore[arg-type]

    fits, objects = c.gang_objects("kubectl-fits", 2, GPUS_PER_NODE)
    _kubectl_apply(control_plane, objects)
    chips = " , ".join(f'div.hn[data-hn="{r}"] > .row [data-gang="{fits}"]' for r in c.racks)
    _wait(driver, f"gang {fits} inside a rack", lambda d: _rows(d, chips))
    screenshot(driver, "2-gang-in-rack")  # type: ignore[arg-type]

    waiting, objects = c.gang_objects("kubectl-too-big", 3, GPUS_PER_NODE)
    _kubectl_apply(control_plane, objects)
    item = f'[data-pending="{waiting}"] .msg'
    _wait(driver, f"the reason of {waiting}", lambda d: _rows(d, item))
    assert text_of(driver, item).strip()  # type: ignore[arg-type]
    screenshot(driver, "3-pending-reason")  # type: ignore[arg-type]


def test_browser_search_opens_the_path_to_a_node(ui_cluster: UiCluster, browser: object) -> None:
    c, driver = ui_cluster, browser
    driver.get(f"{c.url}/ui")  # type: ignore[attr-defined]
    _wait(driver, "a first render", lambda d: d.execute_script("return window.__topology.renders"))
    node = c.nodes[c.racks[1]][1]
    box = driver.find_element(By.ID, "search")  # type: ignore[attr-defined]
    box.send_keys(node)
    hit = f'div.hn.hit[data-hn="{c.racks[1]}"]'
    _wait(driver, f"the rack of {node} highlighted", lambda d: _rows(d, hit))
    marked = driver.execute_script(  # type: ignore[attr-defined]
        "return Array.from(document.querySelectorAll(arguments[0]), e => e.innerText)",
        f"{hit} .nodes mark",
    )
    assert marked == [node]
    screenshot(driver, "4-search")  # type: ignore[arg-type]


def test_browser_collapse_and_expand_a_rack(ui_cluster: UiCluster, browser: object) -> None:
    c, driver = ui_cluster, browser
    driver.get(f"{c.url}/ui")  # type: ignore[attr-defined]
    _wait(driver, "a first render", lambda d: d.execute_script("return window.__topology.renders"))
    rack = c.racks[0]
    toggle = f'div.hn[data-hn="{rack}"] > .row button.tog'
    _rows(driver, toggle)[0].click()  # type: ignore[attr-defined]
    nodes = f'div.hn[data-hn="{rack}"] .nodes'
    _wait(driver, f"the nodes of {rack}", lambda d: _rows(d, nodes))
    shown = text_of(driver, nodes)  # type: ignore[arg-type]
    assert all(n in shown for n in c.nodes[rack])
    _rows(driver, toggle)[0].click()  # type: ignore[attr-defined]
    _wait(driver, f"{rack} collapsed", lambda d: not _rows(d, nodes))


def test_browser_draws_each_subjob_of_a_partitioned_gang_in_its_rack(
    ui_cluster: UiCluster, control_plane: ControlPlane, browser: object
) -> None:
    """Two partitions of 4 pods, each needing a whole rack (2 GPUs a pod), the gang within
    the spine: one dashed chip per SubJob, each inside a different rack."""
    c, driver = ui_cluster, browser
    driver.get(f"{c.url}/ui")  # type: ignore[attr-defined]
    _wait(driver, "a first render", lambda d: d.execute_script("return window.__topology.renders"))
    key, objects = c.gang_objects("kubectl-parts", 8, GPUS_PER_NODE // 2, tier=2, partition=4)
    _kubectl_apply(control_plane, objects)
    racks_of: dict[str, str] = {}
    for sub_job in ("part/0", "part/1"):
        where = {
            r: f'div.hn[data-hn="{r}"] > .row [data-subjob="{key}/{sub_job}"]' for r in c.racks
        }

        def in_a_rack(d: object, where: dict[str, str] = where) -> list[tuple[str, object]]:
            return [(r, chip) for r, css in where.items() for chip in _rows(d, css)]

        [(rack, chip)] = _wait(driver, f"SubJob {sub_job} inside a rack", in_a_rack)  # type: ignore[misc]
        racks_of[sub_job] = rack
        assert "sub" in chip.get_attribute("class").split()  # type: ignore[attr-defined]
        inside = driver.execute_script(  # type: ignore[attr-defined]
            "const c = arguments[0].getBoundingClientRect();"
            "const r = arguments[0].closest('.row').getBoundingClientRect();"
            "return c.right <= r.right + 0.5;",
            chip,
        )
        assert inside, f"the chip of {sub_job} overflows its row"
    assert sorted(racks_of.values()) == sorted(c.racks), racks_of
    screenshot(driver, "5-sub-jobs")  # type: ignore[arg-type]
