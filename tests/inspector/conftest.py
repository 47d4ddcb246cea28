"""Fixtures for the inspector's tests: one headless Chromium for all browser tests, a fresh
page per test, the REST demo shop, and where screenshots go.

Browser tests drive Debian's ``/usr/bin/chromium`` with Playwright (its own browser
download is not used); they skip with the reason when Playwright or Chromium is missing.
``make test`` installs Chromium when it can (scripts/system-deps.sh, where it is optional),
so CI runs them; ``MCS_CHROMIUM`` names another Chromium binary.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: Screenshots of every page, written by the browser tests (git ignores ``artifacts/``).
SCREENSHOTS = ROOT / "artifacts" / "inspector"
TOKENIZERS = ROOT / ".." / "shared" / "tokenizers"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str | None:
    return os.environ.get("MCS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the browser tests of a module (they all live in one), with a
    fresh profile. Not session-wide: Playwright's sync API keeps an event loop running on the
    main thread while it is open, which the async tests of other folders need free."""
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium is not installed: apt-get install chromium, or set MCS_CHROMIUM to a Chromium "
                    "binary (make test installs it when it can)")
    # expect() waits 5 s by default; calls behind the page reach real servers on a shared machine
    playwright_api.expect.set_options(timeout=20_000)
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (own cookies and storage) that fails the test on any script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert not errors, f"script errors on the page: {errors}"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(autouse=True)
def _offline_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken reads o200k_base from the shared tokenizer folder when it is there (no download)."""
    if TOKENIZERS.is_dir():
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(TOKENIZERS.resolve()))


@pytest.fixture
def shop() -> Iterator[str]:
    """The REST demo's pet shop on a free loopback port (its base URL)."""
    from mcs_rest.demo import serve_shop

    with serve_shop() as base_url:
        yield base_url
