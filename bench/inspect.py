"""`mcs inspect` page load on the GitHub spec (623 operations, discovery mode), in headless Chromium.

The inspector serves ``RestDriver(github_api.github.com_2020-08.json)`` on loopback; each
run opens the page in a fresh browser context (cold cache) and reads from the browser:

* first paint: the ``first-contentful-paint`` entry of the Paint Timing API (bar < 1 s);
* tools listed: when all 626 tool links (623 operations and the 3 discovery meta-tools,
  ``search_tools``, ``describe_tool``, ``call_tool``) are in the page (our own goal < 1 s);
* a search: the time from typing a query to its ranked list shown.

Alternative, measured in the same run and browser: a static HTML page listing the same
626 tool names and summaries, served by the standard library's ``http.server`` (the
floor for showing that much on loopback). Medians of RUNS runs; ratios inspector/static.

Each figure is checked with :func:`bench._support.check` (OVER where it misses its goal).

Run: ``python -m bench inspect``. Needs the shared corpus, Playwright and Debian's
Chromium (``scripts/system-deps.sh``); says so and skips otherwise.
"""

from __future__ import annotations

import html
import os
import shutil
import statistics
import threading
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from bench._support import SHARED, check

GITHUB = SHARED / "corpus" / "openapi" / "github_api.github.com_2020-08.json"
RUNS = 9
FIRST_PAINT_BAR_MS = 1000.0
LISTED_GOAL_MS = 1000.0
SEARCH_GOAL_MS = 500.0
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
_PAINT = "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null"


def _static_page(folder: Path, rows: list[dict[str, Any]]) -> None:
    items = "\n".join(
        f'<li><a class="tool-link" href="#{html.escape(r["name"])}">{html.escape(r["name"])}</a> '
        f'<span>{html.escape(r["summary"])}</span></li>' for r in rows
    )
    page = f"<!doctype html><html><head><meta charset='utf-8'><title>tools</title></head><body><h1>GitHub</h1><ul>{items}</ul></body></html>"
    (folder / "index.html").write_text(page, encoding="utf-8")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _measure(browser: Any, url: str, expected: int) -> tuple[float, float]:
    """(first contentful paint, all tool links present), in ms from navigation start."""
    context = browser.new_context(bypass_csp=True)  # lets Playwright poll; the page is unchanged
    try:
        page = context.new_page()
        page.goto(url, wait_until="commit")
        page.wait_for_function(f"document.querySelectorAll('a.tool-link').length >= {expected}", timeout=30_000)
        listed = float(page.evaluate("performance.now()"))
        page.wait_for_function(_PAINT, timeout=30_000)
        return float(page.evaluate(_PAINT)), listed
    finally:
        context.close()


def _search_ms(browser: Any, url: str) -> float:
    context = browser.new_context(bypass_csp=True)  # lets Playwright poll; the page is unchanged
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("document.querySelectorAll('a.tool-link').length > 600", timeout=30_000)
        page.fill("#search", "create a comment on an issue")
        started = float(page.evaluate("performance.now()"))
        page.wait_for_function("document.querySelector('#search-status').textContent.includes('best first')", timeout=30_000)
        return float(page.evaluate("performance.now()")) - started
    finally:
        context.close()


def _medians(run: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    run()  # warm the server (and the browser's process pool); not counted
    samples = [run() for _ in range(RUNS)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    if not GITHUB.is_file():
        print(f"skipped: the shared corpus is not beside the repository ({GITHUB})")
        return
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: Playwright is not installed (pip install playwright)")
        return
    chromium = os.environ.get("MCS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("skipped: Chromium is not installed (apt-get install chromium; scripts/system-deps.sh)")
        return
    from mcs_rest import RestDriver

    from mcs.inspector import InspectorServer

    with RestDriver(str(GITHUB), base_url="http://127.0.0.1:9") as driver, InspectorServer(driver) as server, \
            TemporaryDirectory() as folder, sync_playwright() as playwright:
        rows = server.inspection.tool_rows()
        _static_page(Path(folder), rows)
        static = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=folder))
        threading.Thread(target=static.serve_forever, daemon=True).start()
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            ours = _medians(lambda: _measure(browser, server.url, len(rows)))
            floor = _medians(lambda: _measure(browser, f"http://127.0.0.1:{static.server_address[1]}/", len(rows)))
            search = statistics.median(_search_ms(browser, server.url) for _ in range(5))
        finally:
            browser.close()
            static.shutdown()
            static.server_close()
    print(f"GitHub REST 2020-08: {len(rows)} tools listed ({server.inspection.mode()} mode), "
          f"median of {RUNS} cold page loads on loopback, Chromium headless")
    paint = check("first paint", ours[0], FIRST_PAINT_BAR_MS, unit="ms", item="bar: first paint < 1 s")
    listed = check("tools listed", ours[1], LISTED_GOAL_MS, unit="ms")
    searched = check("search to ranked list", search, SEARCH_GOAL_MS, unit="ms")
    print(f"   first paint     inspector {ours[0]:7.1f} ms   static page {floor[0]:7.1f} ms   "
          f"ratio {ours[0] / floor[0]:.2f}   {paint}")
    print(f"   tools listed    inspector {ours[1]:7.1f} ms   static page {floor[1]:7.1f} ms   "
          f"ratio {ours[1] / floor[1]:.2f}   {listed}")
    print(f"   search to ranked list (discovery search, 623 tools): {search:.1f} ms   {searched}")

if __name__ == "__main__":
    main()
