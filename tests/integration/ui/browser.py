"""Headless Chromium from Debian's packages, driven by selenium (tests and bench/bench_ui.py).

``chromium()`` starts ``/usr/bin/chromium`` through ``/usr/bin/chromedriver`` (Debian's
``chromium`` and ``chromium-driver`` packages; ``make browser`` / ``.ci/run`` install them).
Selenium is told both paths, so it never tries to download a browser or a driver (the
machine may be offline). A missing browser is an error that says how to install it: the
browser tests must fail, not skip, where it is absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("VOLCANO_PY_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("VOLCANO_PY_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts" / "ui"
INSTALL_HINT = "apt-get install -y chromium chromium-driver (or: make browser)"


def missing() -> str | None:
    """Why the browser cannot start (None: it can)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).is_file() and os.access(path, os.X_OK)) and not shutil.which(path):
            return f"{path} not found: install it with {INSTALL_HINT}"
    return None


def chromium(width: int = 1500, height: int = 1000) -> webdriver.Chrome:
    """A headless Chromium session; raises RuntimeError naming the fix when it is missing."""
    problem = missing()
    if problem:
        raise RuntimeError(problem)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in a container has no user namespace sandbox
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    """Save a PNG under ``artifacts/ui/`` (git-ignored); returns its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


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


def text_of(driver: webdriver.Chrome, css: str, timeout: float = 30.0) -> str:
    """The rendered text of the first element ``css`` matches, once there is one.

    Read inside the page in one script call: the view redraws its rows when its data or the
    search changes, so an element found first and read later can be stale by then.
    """
    text: str = WebDriverWait(driver, timeout, poll_frequency=0.2).until(
        lambda d: d.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : null", css
        )
    )
    return text


def text_overlaps(driver: webdriver.Chrome) -> tuple[int, list[str]]:
    """``(text rectangles checked, up to 10 pairs drawn over each other)`` on the page now."""
    checked, found = driver.execute_script(OVERLAPS_JS)
    return int(checked), [str(f) for f in found]


def assert_readable(driver: webdriver.Chrome, name: str, at_least: int) -> Path:
    """No text over text on the page (at least ``at_least`` text boxes seen); its screenshot.

    The screenshot goes to ``artifacts/ui/<name>.png``; with ``VOLCANO_PY_UI_SCREENSHOT`` set
    the caller may copy it there (the README's picture, ``docs/ui-screenshot.png``).
    """
    checked, overlaps = text_overlaps(driver)
    path = screenshot(driver, name)
    assert checked > at_least, f"only {checked} text boxes on the page (see {path})"
    assert overlaps == [], f"text drawn over text (see {path}): {overlaps}"
    return path
