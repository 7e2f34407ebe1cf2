"""The HTML report in a real headless Chromium with no network: it loads, draws its plots, fetches nothing.

Uses the system Chromium (Debian package ``chromium``) driven by the ``playwright`` Python package through
``executable_path``; no browser is ever downloaded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ranklens.comparison import compare
from ranklens.measures import parse
from ranklens.report import write_report
from ranklens.results import Results

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs the system Chromium at /usr/bin/chromium (apt-get install chromium)"
)


def _comparison() -> object:
    rng = np.random.default_rng(4)
    queries = tuple(f"q{i:02d}" for i in range(24))
    base = rng.random(24)
    runs = {}
    for k, name in enumerate(("bm25", "dense", "hybrid")):
        values = np.clip(base + 0.05 * k + rng.normal(0, 0.05, 24), 0, 1)[:, None]
        runs[name] = Results(name, (parse("nDCG@10"),), queries, values, (float(values.mean()),))
    segments = {q: ("short" if i % 3 else "long") for i, q in enumerate(queries)}
    costs = {"bm25": {"latency_ms": 8}, "dense": {"latency_ms": 35}, "hybrid": {"latency_ms": 60}}
    return compare(None, runs, ["nDCG@10"], baseline="bm25", segments=segments, costs=costs)


def test_html_report_renders_offline_in_chromium(tmp_path: Path) -> None:
    from playwright import sync_api  # a test dependency: a missing package must fail, not skip

    report = write_report(_comparison(), tmp_path / "report.html")  # type: ignore[arg-type]
    attempted: list[str] = []
    errors: list[str] = []

    def only_files(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith("file:"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            attempted.append(url)
            route.abort()  # type: ignore[attr-defined]

    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
            service_workers="block",
        )
        try:
            context.route("**/*", only_files)
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(report.as_uri(), wait_until="load")
            # 1 segment chart + 1 distribution + 2 per-query difference charts + 1 Pareto plot
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 5", timeout=15_000)
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
            n_svg = page.eval_on_selector_all(".plotly .main-svg", "els => els.length")
            n_bars = page.eval_on_selector_all(".plotly .bars .point", "els => els.length")
            n_boxes = page.eval_on_selector_all(".plotly .boxlayer .trace", "els => els.length")
            n_points = page.eval_on_selector_all(".plotly .scatterlayer .point", "els => els.length")
            titles = page.eval_on_selector_all(".plotly .gtitle", "els => els.map(e => e.textContent)")
        finally:
            context.close()
    assert attempted == [], f"the report tried to reach the network: {attempted}"
    assert errors == []
    assert shot.stat().st_size > 20_000
    assert n_svg >= 5
    # segment chart: 2 pairs × (all, long, short) bars; per-query charts: 2 × 24 bars
    assert n_bars == 2 * 3 + 2 * 24
    assert n_boxes == 3
    assert n_points >= 3  # the Pareto plot's systems (plus the box plots' points)
    assert any("per query, sorted" in t for t in titles) and any("per segment" in t for t in titles)
