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
