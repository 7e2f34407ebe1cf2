"""Issue 24 in headless Chromium (Debian's /usr/bin/chromium via Playwright): the Segments page marks each
segment's bound and breach and shows its coverage; the snapshot page says how many expected queries were
answered and the change per segment; the coverage series shades the alert's period. Screenshots go to the
artifacts folder.

Data: 3 categories of 10 queries at 0.9; on the second day 4 of the 10 beauty queries return nothing, so
beauty scores 6 × 0.9 / 10 = 0.54 (every qrels query counts) with 6 of 10 queries answered.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ServerProcess
from .test_browser import Watched, browser_context  # noqa: F401 - the Chromium fixture

pytestmark = pytest.mark.browser

P = "shop-coverage"
SEGS = {f"{c}-{i}": c for c in ("beauty", "books", "toys") for i in range(10)}


def _doc(day: int) -> dict[str, Any]:
    skipped = [q for q in SEGS if day == 2 and q.startswith("beauty-") and int(q.split("-")[1]) < 4]
    per_query = {q: {"nDCG@10": 0.9} for q in SEGS if q not in skipped}
    run = {"run": "prod", "aggregate": {"nDCG@10": 0.9}, "num_queries": len(per_query), "per_query": per_query,
           "expected_queries": len(SEGS), "skipped_queries": skipped}
    return {"runs": [run]}


@pytest.fixture(scope="module")
def coverage_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = ServerProcess(f"sqlite:///{tmp_path_factory.mktemp('coverage') / 'm.db'}").start()
    try:
        with srv.client() as c:
            c.add_rule(P, "nDCG@10 > 0.85")
            for day in (1, 2):
                c.push(_doc(day), project=P, system="prod", id=f"day-{day}", at=f"2026-10-0{day}T06:00:00Z", query_segments=SEGS)
        yield srv
    finally:
        srv.stop()


def _open(context: Any, url: str, shot: Path, charts: int = 1) -> Watched:
    """The page at ``url`` once its charts are drawn, with a full-page screenshot at ``shot``."""
    w = Watched(context)
    w.page.goto(url, wait_until="load")
    if charts:
        w.page.wait_for_function(
            f"document.querySelectorAll('div.chart[data-rendered=\"true\"]').length >= {charts}", timeout=20_000
        )
    w.page.screenshot(path=str(shot), full_page=True)
    return w


def test_segments_page_marks_bounds_breaches_and_coverage(
    coverage_server: ServerProcess, browser_context: Any, artifacts_dir: Path  # noqa: F811
) -> None:
    w = _open(browser_context, f"{coverage_server.url}/projects/{P}/segments?measure=nDCG%4010", artifacts_dir / "segments-coverage.png")
    try:
        beauty = w.page.locator("tr[data-segment=beauty]")
        assert beauty.locator("td.thresholds").inner_text() == "> 0.85"
        value = beauty.locator("td.value")
        assert "breach" in (value.get_attribute("class") or "")
        assert value.inner_text().startswith("0.5400") and value.locator(".mark.breach").inner_text() == "✗"
        cov = beauty.locator("td.coverage")
        assert cov.inner_text() == "6 of 10" and "breach" in (cov.get_attribute("class") or "")
        books = w.page.locator("tr[data-segment=books]")
        assert books.locator("td.value .mark.ok").inner_text() == "✓"
        assert books.locator("td.coverage").inner_text() == "10 of 10"
        # the chart marks the bound in every segment: one marker per segment, at 0.85
        assert w.page.locator("#chart-segments .legendtext", has_text="rule bound").count() == 1
        assert w.page.locator("#chart-segments .scatterlayer .trace .points path").count() == 4
        whole = w.page.locator('tr[data-segment="(all)"]')
        assert whole.locator("td.coverage").inner_text() == "26 of 30"
        assert w.clean(), w.report()
    finally:
        w.page.close()


def test_snapshot_page_shows_coverage_and_change_per_segment(
    coverage_server: ServerProcess, browser_context: Any, artifacts_dir: Path  # noqa: F811
) -> None:
    url = f"{coverage_server.url}/projects/{P}/snapshots/day-2?compare=day-1&measure=nDCG%4010"
    w = _open(browser_context, url, artifacts_dir / "snapshot-coverage.png", charts=0)
    try:
        assert "26 of 30 expected queries answered (the others scored 0)" in w.page.locator("main p").first.inner_text()
        row = w.page.locator("table.segment-changes tr", has_text="beauty")
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        assert cells == ["beauty", "0.5400", "6 of 10", "0.9000", "10 of 10", "-0.3600 (fell)"]
        assert w.clean(), w.report()
    finally:
        w.page.close()


def test_coverage_series_shows_the_drop_and_the_alert(
    coverage_server: ServerProcess, browser_context: Any, artifacts_dir: Path  # noqa: F811
) -> None:
    q = urllib.parse.urlencode({"measure": "query_coverage", "segment": "beauty"})
    w = _open(browser_context, f"{coverage_server.url}/projects/{P}/series?{q}", artifacts_dir / "series-coverage.png")
    try:
        assert w.page.locator("div.chart .shapelayer path").count() >= 1  # the alert's period
        assert "firing" in w.page.locator("main").inner_text()
        assert w.clean(), w.report()
    finally:
        w.page.close()
