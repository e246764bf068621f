"""Headless Chromium for the HTML report tests (tests/test_html_browser.py),
through Playwright with the system's browser (Debian's ``chromium``; never a
browser that Playwright downloads). ``browser()`` skips the test cleanly when
Playwright is not installed or no browser starts.
"""
from __future__ import annotations

import os
import shutil

import pytest

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def executable() -> str | None:
    env = os.environ.get("PTXC_CHROMIUM")
    if env:
        return env
    for name in CANDIDATES:
        path = name if os.path.isabs(name) and os.access(name, os.X_OK) else shutil.which(name)
        if path:
            return path
    return None


def start():
    """(playwright, browser) or pytest.skip with the reason."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install 'ptxc[test]')")
    exe = executable()
    if exe is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set PTXC_CHROMIUM)")
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=exe, args=ARGS, timeout=60000)
    except Exception as err:          # noqa: BLE001 - any failure to start means: skip
        pw.stop()
        pytest.skip(f"Chromium did not start: {str(err).splitlines()[0]}")
    return pw, browser


class Page:
    """A page opened on a file, recording console errors and page errors."""

    def __init__(self, browser, path, width: int = 1400, height: int = 1000):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(f"file://{path}")
        self.page.wait_for_selector("#kernels tbody tr")
