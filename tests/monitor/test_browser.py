"""The dashboard in headless Chromium (Debian's /usr/bin/chromium driven by Playwright, never a downloaded
browser): overview, time series and A/B pages on the demo data render their plotly charts without console
errors; screenshots are saved to the artifacts folder. Hostile names trigger no script."""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ServerProcess
from .test_escaping import hostile_pages, seed_hostile

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("RANKLENS_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    from ranklens.monitor.demo import seed

    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.db'}"
    seed(url)
    srv = ServerProcess(url).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


class Watched:
    """A page with its console errors, page errors and dialogs recorded."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def clean(self) -> bool:
        return not (self.console_errors or self.page_errors or self.dialogs)

    def report(self) -> str:
        return f"console={self.console_errors} page={self.page_errors} dialogs={self.dialogs}"


def _open_with_charts(context: Any, url: str, charts: int, shot: Path) -> Watched:
    w = Watched(context)
    w.page.goto(url, wait_until="load")
    w.page.wait_for_function(
        f"document.querySelectorAll('div.chart[data-rendered=\"true\"]').length >= {charts}", timeout=20_000
    )
    w.page.screenshot(path=str(shot), full_page=True)
    assert w.page.locator("div.chart .main-svg").count() >= charts
    return w


def test_overview_page(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    w = _open_with_charts(browser_context, demo_server.url + "/projects/demo-search", 1, artifacts_dir / "overview.png")
    try:
        assert w.page.locator("div.chart .barlayer .trace").count() == 2  # one bar trace per system
        assert w.page.get_by_text("fashion nDCG@10 floor").count() >= 1
        assert w.page.locator("table.grid td.n.ok").count() >= 2
        assert w.clean(), w.report()
    finally:
        w.page.close()


def test_time_series_page(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    url = demo_server.url + "/projects/demo-search/series?measure=nDCG%4010&segment=fashion"
    w = _open_with_charts(browser_context, url, 1, artifacts_dir / "series.png")
    try:
        traces = w.page.locator("div.chart .scatterlayer .trace")
        assert traces.count() == 6  # two systems and their 95% bands, the threshold line, the alert markers
        assert w.page.locator("div.chart .legendtext", has_text="threshold >= 0.55").count() == 1
        assert w.page.locator("div.chart .legendtext", has_text="alerts").count() == 1
        points = w.page.locator("div.chart .scatterlayer .trace .points path")
        assert points.count() >= 180  # 90 days × 2 systems, plus the alert marker
        assert w.clean(), w.report()
        # the system filter narrows the chart to one system
        w.page.select_option("select[name=system]", ["neural-v2"])
        w.page.click("form.filters button[type=submit]")
        w.page.wait_for_function("document.querySelector('div.chart[data-rendered=\"true\"]') !== null")
        assert "system=neural-v2" in w.page.url
        assert w.page.locator("div.chart .legendtext", has_text="bm25-v1").count() == 0
        assert w.clean(), w.report()
    finally:
        w.page.close()


def test_ab_page(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    url = demo_server.url + "/projects/demo-search/ab?a=neural-v2&b=bm25-v1&measure=nDCG%4010"
    w = _open_with_charts(browser_context, url, 2, artifacts_dir / "ab.png")
    try:
        text = w.page.locator("table.summary").inner_text()
        assert "95% CI" in text and "p =" in text and "over 60 queries" in text
        assert w.page.locator("#chart-ab-diff .barlayer .trace").count() == 1
        assert w.clean(), w.report()
    finally:
        w.page.close()


def test_hostile_names_run_no_script(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    with demo_server.client() as c:
        p = seed_hostile(c)
    for i, path in enumerate(hostile_pages(p)):
        w = Watched(browser_context)
        try:
            if path.startswith("/webhooks"):  # the webhook list needs the token (issue 13): send it, as a team member would
                w.page.set_extra_http_headers({"Authorization": f"Bearer {demo_server.token}"})
            w.page.goto(demo_server.url + path, wait_until="load")
            if w.page.locator("div.chart").count():
                w.page.wait_for_function("document.querySelectorAll('div.chart[data-rendered=\"true\"]').length >= 1", timeout=20_000)
            if i == 1:
                w.page.screenshot(path=str(artifacts_dir / "hostile-overview.png"), full_page=True)
                assert w.page.locator("h1").inner_text() == urllib.parse.unquote(p)
            assert w.clean(), (path, w.report())
        finally:
            w.page.close()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, Any]]]:
    """A server holding the generated production log of test_production_truth (issue 29), refreshed."""
    from .test_production_truth import RULES, generate

    url = f"sqlite:///{tmp_path_factory.mktemp('live') / 'live.db'}"
    srv = ServerProcess(url).start()
    try:
        imps, events, _ = generate()
        with srv.client() as c:
            for i in range(0, len(imps), 2000):
                c.ingest("shop", impressions=imps[i : i + 2000])
            c.ingest("shop", events=events)
            c.add_rule("shop", kind="window", measure="DCG@5", window_days=7, max_drop=0.05, min_points=3)
            c.refresh_windows("shop", labels=RULES, window="1d", label_delay="24h", measures=["DCG@5", "IPS-DCG@5"])
            data = c.production("shop")
        yield srv, data
    finally:
        srv.stop()


def test_live_page(live_server: tuple[ServerProcess, dict[str, Any]], browser_context: Any, artifacts_dir: Path) -> None:
    srv, data = live_server
    w = _open_with_charts(browser_context, srv.url + "/projects/shop/production", 4, artifacts_dir / "live.png")
    try:
        assert w.page.locator("#chart-live-0 .scatterlayer .trace").count() == 4  # segment × system
        assert w.page.locator("#chart-drift .scatterlayer .trace").count() == 4
        assert w.page.locator("#chart-throughput .barlayer .trace").count() == 2  # impressions, events
        # provisional windows are drawn hollow: as many unfilled markers as provisional points in both charts
        provisional = sum(1 for x in data["windows"] if x["provisional"] and x["value"] is not None)
        assert provisional > 0
        hollow = w.page.evaluate(
            "Array.from(document.querySelectorAll('div.chart[id^=chart-live] .scatterlayer .points path.point'))"
            ".filter(p => { const s = getComputedStyle(p); return s.fill === 'none' || s.fillOpacity === '0'; }).length"
        )
        assert hollow == provisional, (hollow, provisional)
        firing = [a for a in data["alerts"] if a["state"] == "firing"]
        assert w.page.locator("tr.window-alert").count() == len(firing) > 0
        assert w.page.locator("tr.drift-flag").count() == sum(1 for d in data["drift"] if d["flag"])
        assert w.page.locator("#live-impressions").inner_text() == str(data["ingest"]["impressions"])
        assert w.clean(), w.report()
    finally:
        w.page.close()
