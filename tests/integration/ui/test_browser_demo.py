"""The topology page of ``make demo``'s cluster in headless Chromium: what a newcomer sees first.

``make demo`` (devcluster/devrun.py) starts its local cluster (kwok nodes labelled by rack and
spine, HyperNodes made by label discovery), applies the example gang Deployment and waits
until it runs. The page must then show the racks and spines by their label values (not the
discovered ``hypernode-...`` names), the gang as ``Deployment training-workers`` inside one
rack, the Queue panel with that gang running, and no text drawn over other text.

``VOLCANO_PY_UI_SCREENSHOT=docs/ui-screenshot.png`` also writes the page there (the README's
picture).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from devcluster import devstate
from tests.builders import wait_until
from tests.integration.ui.browser import assert_readable, chromium, missing

pytestmark = pytest.mark.timeout(400)

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 60.0


@pytest.fixture
def clean_gangs() -> None:
    """``make demo`` has its own cluster: nothing of the package's to clean (overrides the
    package's autouse fixture, so this test needs no shared control plane)."""


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[int]:
    """``make demo`` (devrun --demo) up with its gang running; the metrics port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {**os.environ, "VOLCANO_PY_RUN_DIR": str(tmp_path / "state"), "PYTHONUNBUFFERED": "1"}
    env.pop("KUBECONFIG", None)
    log = tmp_path / "demo.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "devcluster.devrun", "--demo", f"--metrics-port={port}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    folder: Path | None = None
    try:
        wait_until(
            lambda: proc.poll() is None and "the cluster stays up" in log.read_text(),
            300,
            "make demo is up with its gang running",
        )
        folder = Path(json.loads((tmp_path / "state" / "make-run.json").read_text())["dir"])
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(90)
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if folder is not None:
            devstate.terminate(devstate.processes_using(folder))


FACTS_JS = """
const chip = [...document.querySelectorAll('.row .gang')]
  .find(e => e.textContent.startsWith('Deployment training-workers'));
const holder = chip.closest('div.hn').querySelector(':scope > .row .name');
return {
  names: [...document.querySelectorAll('div.hn > .row .name')].map(e => e.textContent),
  chip: chip.textContent, title: chip.title, holder: holder.textContent,
  queue: document.querySelector('#queues [data-queue="default"]').textContent,
};
"""


def test_make_demo_page_reads_as_racks_owners_and_queues(demo: int) -> None:
    problem = missing()
    if problem:
        pytest.fail(f"the browser tests need headless Chromium: {problem}", pytrace=False)
    driver = chromium(1500, 620)
    try:
        driver.get(f"http://127.0.0.1:{demo}/ui")
        chip = ".row .gang"
        WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
            lambda d: any(
                e.text.startswith("Deployment training-workers")
                for e in d.find_elements(By.CSS_SELECTOR, chip)
            )
        )
        # read in one go: the page re-renders when the cluster changes (kwok updates pods)
        seen = driver.execute_script(FACTS_JS)
        names = seen["names"]
        assert {"spine-0", "spine-1"} <= set(names), names
        assert any(n.startswith("rack-") for n in names), names
        assert not any(n.startswith("hypernode-") for n in names), names
        assert seen["chip"].startswith("Deployment training-workers ")
        assert seen["chip"].endswith(" 4/4")
        assert "PodGroup default/" in seen["title"]
        assert seen["holder"].startswith("rack-"), seen
        assert "1 running" in seen["queue"]
        path = assert_readable(driver, "make-demo", 50)
        wanted = os.environ.get("VOLCANO_PY_UI_SCREENSHOT")
        if wanted:
            shutil.copyfile(path, wanted)
    finally:
        driver.quit()
