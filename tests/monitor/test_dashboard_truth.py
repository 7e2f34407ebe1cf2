"""The dashboard tells the truth (issue 13): a segment rule marks its segment, not the total; A/B is always
candidate − baseline; pages open on the headline measure; snapshots are picked from a list; rules are
managed from the CLI, idempotently, and edited in place; the mode bar never covers a title; the time series
shows thresholds, alerts and a 95% band of the mean. API checks run against the real server process;
the browser checks (Debian Chromium) write screenshots to the artifacts folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import TOKEN, ServerProcess, eval_json

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _segmented(overall: float, fashion: float, n: int = 20) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Per-query nDCG@10/AP/RR: the first half 'fashion' queries at ``fashion``, the rest chosen so that
    the overall mean is ``overall``."""
    half = n // 2
    rest = 2 * overall - fashion
    pq = {f"q{i:02d}": {"nDCG@10": fashion if i < half else rest, "AP": 0.1, "RR": 0.2} for i in range(n)}
    segs = {f"q{i:02d}": ("fashion" if i < half else "books") for i in range(n)}
    return pq, segs


# ---------------------------------------------------------------------------------------------------------
# 1. a segment rule's breach marks the segment, not the total


def test_segment_breach_marks_segment_not_total(server: ServerProcess, client: Any, project: str) -> None:
    client.add_rule(project, "nDCG@10 >= 0.85", segment="fashion")
    pq, segs = _segmented(0.9235, 0.8)
    out = client.push(eval_json(pq), project=project, system="dense", query_segments=segs)
    assert [r["status"] for r in out["rules"]] == ["breach"]
    ov = client.overview(project)
    cell = next(c for c in ov["systems"][0]["values"] if c["measure"] == "nDCG@10")
    assert cell["value"] == pytest.approx(0.9235)
    assert cell["status"] is None  # no rule on all queries: the total is neither red nor green
    assert cell["segments"] == [{"segment": "fashion", "status": "breach"}]
    html = httpx.get(f"{server.url}/projects/{project}").text
    td = re.search(r'<td class="n ([^"]*)"[^>]*>0\.9235(.*?)</td>', html, re.S)
    assert td is not None
    assert "breach" not in td.group(1) and not td.group(2).lstrip().startswith("✗")
    assert re.search(r'class="badge breach"[^>]*>fashion ✗<', td.group(2))
    # an overall rule still marks the total
    client.add_rule(project, "nDCG@10 >= 0.95")
    client.push(eval_json(pq), project=project, system="dense", query_segments=segs, at="2100-01-01T00:00:00Z")
    cell = next(c for c in client.overview(project)["systems"][0]["values"] if c["measure"] == "nDCG@10")
    assert cell["status"] == "breach"


# ---------------------------------------------------------------------------------------------------------
# 2. candidate − baseline everywhere; bounded, cached resampling tests


def _two_systems(client: Any, project: str, n: int = 10, gain: float = 0.05) -> None:
    pq = {f"q{i}": {"nDCG@10": 0.4 + 0.03 * (i % 10)} for i in range(n)}
    better = {q: {"nDCG@10": v["nDCG@10"] + gain} for q, v in pq.items()}
    client.push(eval_json(pq), project=project, system="old", at="2026-07-01T00:00:00Z")
    client.push(eval_json(better), project=project, system="new", at="2026-07-01T00:00:00Z")


def test_ab_is_candidate_minus_baseline(server: ServerProcess, client: Any, project: str) -> None:
    _two_systems(client, project)
    api = f"{server.url}/api/v1/projects/{project}/ab"
    j = httpx.get(api, params={"baseline": "old", "candidate": "new"}).json()
    assert (j["baseline"], j["candidate"], j["orientation"]) == ("old", "new", "candidate − baseline")
    c = j["comparison"]
    assert c["difference"] == pytest.approx(0.05) and c["mean_difference"] == pytest.approx(0.05)
    assert c["wins"] == 10 and c["losses"] == 0  # wins are the candidate's
    assert all(r["difference"] == pytest.approx(r["candidate"] - r["baseline"]) and r["difference"] > 0 for r in j["per_query"])
    # swapped roles: the sign follows the roles
    k = httpx.get(api, params={"baseline": "new", "candidate": "old"}).json()
    assert k["comparison"]["difference"] == pytest.approx(-0.05)
    # the old parameters: a = candidate, b = baseline (same numbers as before)
    old = httpx.get(api, params={"a": "new", "b": "old"}).json()
    assert old["comparison"]["difference"] == pytest.approx(0.05) and old["candidate"] == "new"
    assert client.ab(project, "new", "old", "nDCG@10")["comparison"]["mean_difference"] == pytest.approx(0.05)
    html = httpx.get(f"{server.url}/projects/{project}/ab", params={"baseline": "old", "candidate": "new"}).text
    assert "new (candidate) vs old (baseline)" in html
    assert "<th>old (baseline)</th>" in html and "<th>new (candidate)</th>" in html
    assert '<td class="n ok">+0.0500</td>' in html  # green: the candidate is better
    assert 'name="baseline"' in html and 'name="candidate"' in html


def test_ab_resampling_is_capped_and_cached(server: ServerProcess, client: Any, project: str) -> None:
    _two_systems(client, project, n=8000, gain=0.001)
    params = {"baseline": "old", "candidate": "new", "test": "bootstrap"}
    api = f"{server.url}/api/v1/projects/{project}/ab"
    first = httpx.get(api, params=params, timeout=60).json()
    again = httpx.get(api, params=params, timeout=60).json()
    c = first["comparison"]
    assert c["n"] == 8000 and c["test_sample"] == 5000 and c["test"] == "bootstrap"
    assert c["mean_difference"] == pytest.approx(0.001)  # the mean uses every query
    assert again["comparison"] == c  # the same answer again (no assertion on how long either took)
    t = httpx.get(api, params={**params, "test": "t"}).json()["comparison"]
    assert t["test_sample"] is None and t["test"] == "t"


# ---------------------------------------------------------------------------------------------------------
# 3. pages open on the headline measure


def test_pages_open_on_headline_measure(server: ServerProcess, client: Any, project: str) -> None:
    pq, segs = _segmented(0.7, 0.6)
    client.push(eval_json(pq), project=project, system="a", query_segments=segs, id="s1")
    base = f"{server.url}/api/v1/projects/{project}"
    for path in ("/series", "/segments", "/ab", "/snapshots/s1"):
        assert httpx.get(base + path).json()["measure"] == "nDCG@10", path
    assert client.overview(project)["measures"][0] == "nDCG@10"
    html = httpx.get(f"{server.url}/projects/{project}/series").text
    assert '<option value="nDCG@10" selected>' in html
    # an explicit measure still wins
    assert httpx.get(base + "/series", params={"measure": "AP"}).json()["measure"] == "AP"
    # the headline is a project setting (API and CLI)
    assert client.set_headline_measure(project, "rr")["headline_measure"] == "RR"
    for path in ("/series", "/segments", "/ab", "/snapshots/s1"):
        assert httpx.get(base + path).json()["measure"] == "RR", path
    assert client.overview(project)["measures"][0] == "RR"
    r = httpx.patch(base, json={"headline_measure": "nDGC@10"}, headers=AUTH)
    assert r.status_code == 400 and "nDCG@10" in r.text  # did you mean
    assert httpx.patch(base, json={"headline_measure": "AP"}).status_code == 401
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    res = CliRunner().invoke(cli, ["rules", "headline", "--url", server.url, "--token", TOKEN, project, "--clear"])
    assert res.exit_code == 0 and "default" in res.output, res.output
    assert httpx.get(base + "/series").json()["measure"] == "nDCG@10"


# ---------------------------------------------------------------------------------------------------------
# 4. snapshots picked from a list; compare with the previous one in one click


def test_snapshot_picker_and_previous(server: ServerProcess, client: Any, project: str) -> None:
    for day, cid in ((1, "s-1"), (2, "s-2"), (3, "s-3")):
        client.push(eval_json({"q1": {"nDCG@10": 0.1 * day}}), project=project, system="x", at=f"2026-05-0{day}T00:00:00Z", id=cid)
    client.push(eval_json({"q1": {"nDCG@10": 0.5}}), project=project, system="y", at="2026-05-02T12:00:00Z", id="y-1")
    j = httpx.get(f"{server.url}/api/v1/projects/{project}/snapshots/s-3").json()
    assert j["previous"] == "s-2"
    assert [c["id"] for c in j["choices"]] == ["y-1", "s-2", "s-1"]
    assert j["choices"][0]["system"] == "y" and j["choices"][0]["at"] == "2026-05-02T12:00:00Z"
    assert httpx.get(f"{server.url}/api/v1/projects/{project}/snapshots/s-1").json()["previous"] is None
    html = httpx.get(f"{server.url}/projects/{project}/snapshots/s-3").text
    assert '<select name="compare">' in html and '<input name="compare"' not in html
    assert re.search(r'<option value="s-2" >[^<]*· x · s-2</option>', html)
    link = re.search(r'<a class="compare-previous" href="([^"]+)"', html)
    assert link is not None
    page = httpx.get(f"{server.url}/projects/{project}/snapshots/s-3" + link.group(1).replace("&amp;", "&")).text
    assert "Biggest changes from s-2" in page
    assert re.search(r'<option value="s-2" selected>', page)


# ---------------------------------------------------------------------------------------------------------
# 5. rules: idempotent, edited in place, managed from the CLI (one rules file for CI and monitoring)


def test_same_rule_twice_is_one_rule_and_one_alert(server: ServerProcess, client: Any, project: str) -> None:
    r1 = client.add_rule(project, "nDCG@10 >= 0.85", segment="fashion")
    r2 = client.add_rule(project, "nDCG@10 >= 0.85", segment="fashion")
    r3 = client.add_rule(project, "nDCG@10 >= 0.850")  # not the same rule: no segment
    assert r1["id"] == r2["id"] != r3["id"]
    assert len(client.rules(project)) == 2
    pq, segs = _segmented(0.9, 0.8)
    client.push(eval_json(pq), project=project, system="dense", query_segments=segs)
    alerts = httpx.get(f"{server.url}/api/v1/projects/{project}/alerts").json()["alerts"]
    assert len(alerts) == 1 and alerts[0]["rule_id"] == r1["id"]
    # adding a disabled rule again turns it back on, still one rule
    client.disable_rule(project, r3["id"])
    assert client.add_rule(project, "nDCG@10 >= 0.85")["id"] == r3["id"]
    assert [r["enabled"] for r in client.rules(project)] == [True, True]


def test_rule_edited_in_place(server: ServerProcess, client: Any, project: str) -> None:
    rule = client.add_rule(project, "nDCG@10 >= 0.85")
    other = client.add_rule(project, "AP >= 0.2")
    edited = client.edit_rule(project, rule["id"], "nDCG@10 >= 0.7", segment="books")
    assert edited["id"] == rule["id"]
    assert (edited["value"], edited["segment"], edited["description"]) == (0.7, "books", "nDCG@10 >= 0.7 [segment books]")
    assert edited["name"] == edited["description"]  # the generated name follows the rule
    assert client.edit_rule(project, rule["id"], enabled=False)["enabled"] is False
    r = httpx.patch(f"{server.url}/api/v1/projects/{project}/rules/{rule['id']}", json={"enabled": True}, headers=AUTH)
    assert r.status_code == 200 and r.json()["rule"]["enabled"] is True and r.json()["rule"]["value"] == 0.7
    # editing one rule into a copy of another is refused; unknown ids and fields are 4xx
    r = httpx.patch(f"{server.url}/api/v1/projects/{project}/rules/{other['id']}", json={"expr": "nDCG@10 >= 0.7", "segment": "books"}, headers=AUTH)
    assert r.status_code == 409 and r.json()["error"]["code"] == "conflict"
    r = httpx.patch(f"{server.url}/api/v1/projects/{project}/rules/999999", json={"enabled": False}, headers=AUTH)
    assert r.status_code == 404
    r = httpx.patch(f"{server.url}/api/v1/projects/{project}/rules/{rule['id']}", json={"colour": "red"}, headers=AUTH)
    assert 400 <= r.status_code < 500
    r = httpx.patch(f"{server.url}/api/v1/projects/{project}/rules/{rule['id']}", json={"enabled": False})
    assert r.status_code == 401
    assert [x["id"] for x in client.rules(project)] == [rule["id"], other["id"]]


def test_rules_cli(server: ServerProcess, project: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    def run(*args: str) -> Any:
        res = CliRunner().invoke(cli, ["rules", *args[:1], "--url", server.url, "--token", TOKEN, *args[1:]])
        return res

    res = run("add", project, "nDCG@10 >= 0.85", "--segment", "fashion")
    assert res.exit_code == 0, res.output
    first_id = int(res.output.split()[0])
    assert "nDCG@10 >= 0.85 [segment fashion]" in res.output
    assert int(run("add", project, "nDCG@10 >= 0.85", "--segment", "fashion").output.split()[0]) == first_id
    rules = tmp_path / "rules.toml"
    rules.write_text('rules = ["P@5 >= 0.4"]\n[min]\n"nDCG@10" = 0.85\n[segment.fashion]\nmin = { "nDCG@10" = 0.85 }\n')
    res = run("add", project, "--file", str(rules), "--format", "json")
    assert res.exit_code == 0, res.output
    assert run("add", project, "--file", str(rules)).exit_code == 0  # the same file again: nothing new
    listed = run("list", project, "--format", "json")
    import json

    got = json.loads(listed.output)
    assert sorted(r["description"] for r in got) == ["P@5 >= 0.4", "nDCG@10 >= 0.85", "nDCG@10 >= 0.85 [segment fashion]"]
    res = run("edit", project, str(first_id), "nDCG@10 >= 0.8")
    assert res.exit_code == 0 and res.output.split()[0] == str(first_id) and ">= 0.8 [segment fashion]" in res.output
    res = run("disable", project, str(first_id))
    assert res.exit_code == 0 and "disabled" in res.output
    res = run("list", project)
    assert f"{first_id:>5}  disabled  nDCG@10 >= 0.8 [segment fashion]" in res.output
    res = CliRunner().invoke(cli, ["rules", "add", "--url", server.url, "--token", "wrong", project, "AP >= 0.1"])
    assert res.exit_code != 0 and "401" in res.output
    res = run("add", project)
    assert res.exit_code == 2 and "expression or --file" in res.output


# ---------------------------------------------------------------------------------------------------------
# 6. the mode bar never covers a title (dashboard and HTML report); badges do not wrap


def test_titles_clear_of_mode_bar() -> None:
    from ranklens.monitor import charts
    from ranklens.report import charts as report_charts

    for layout in (charts._layout("x"), report_charts._layout("x", "a", "b")):
        title = layout["title"]
        assert title["yref"] == "container" and title["yanchor"] == "top" and title["pad"]["t"] >= 28
        assert layout["margin"]["t"] >= title["pad"]["t"] + 30
    css = (Path(charts.__file__).with_name("static") / "style.css").read_text()
    assert re.search(r"\.badge \{[^}]*white-space: nowrap", css)
    js = (Path(charts.__file__).with_name("static") / "dashboard.js").read_text()
    assert 'displayModeBar: "hover"' in js


# ---------------------------------------------------------------------------------------------------------
# 7. the time series: threshold, alerts, 95% band of the mean


def test_series_has_threshold_alerts_and_band(server: ServerProcess, client: Any, project: str) -> None:
    from ranklens import stats

    rule = client.add_rule(project, "nDCG@10 >= 0.6")
    vals = [0.5, 0.7, 0.6, 0.8, 0.55, 0.65]
    client.push(eval_json({f"q{i}": {"nDCG@10": v} for i, v in enumerate(vals)}), project=project, system="s", at="2026-01-01T00:00:00Z")
    client.push(eval_json({f"q{i}": {"nDCG@10": v - 0.1} for i, v in enumerate(vals)}), project=project, system="s", at="2026-01-02T00:00:00Z")
    client.push_values({"nDCG@10": 0.7}, project=project, system="s", at="2026-01-03T00:00:00Z")  # no per-query values
    j = client.series(project, "nDCG@10")
    pts = j["series"][0]["points"]
    ci = stats.t_interval(vals, [0.0] * len(vals))
    assert pts[0]["ci_low"] == pytest.approx(ci.low) and pts[0]["ci_high"] == pytest.approx(ci.high) and pts[0]["n"] == 6
    assert pts[0]["ci_low"] < pts[0]["value"] < pts[0]["ci_high"]
    assert "ci_low" in pts[1] and "ci_low" not in pts[2]
    assert j["thresholds"] == [{"rule_id": rule["id"], "value": 0.6, "op": ">=", "system": None, "enabled": True}]
    assert [a["state"] for a in j["alerts"]] == ["resolved"]
    from ranklens.monitor.charts import series_figure

    names = [t["name"] for t in series_figure(j)["data"]]
    assert names == ["s 95% CI", "s", "threshold &gt;= 0.6", "alerts"]


# ---------------------------------------------------------------------------------------------------------
# the three dashboard items in Chromium, with screenshots

from .test_browser import Watched, _open_with_charts, browser_context, demo_server  # noqa: E402,F401,F811


@pytest.mark.browser
def test_browser_segment_breach_overview(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    p = "truth-segment"
    with demo_server.client() as c:
        c.add_rule(p, "nDCG@10 >= 0.85", segment="fashion")
        pq, segs = _segmented(0.9235, 0.8)
        c.push(eval_json(pq), project=p, system="dense", query_segments=segs)
    w = _open_with_charts(browser_context, f"{demo_server.url}/projects/{p}", 1, artifacts_dir / "truth-overview-segment.png")
    try:
        cell = w.page.locator("table.grid td.n", has_text="0.9235")
        assert cell.count() == 1
        assert "breach" not in (cell.get_attribute("class") or "")
        assert cell.locator("a.badge.breach", has_text="fashion ✗").count() == 1
        colour = cell.evaluate("el => getComputedStyle(el).backgroundColor")
        assert colour in ("rgba(0, 0, 0, 0)", "transparent"), colour  # the total is not painted red
        assert w.clean(), w.report()
    finally:
        w.page.close()


@pytest.mark.browser
def test_browser_ab_candidate_green(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    url = demo_server.url + "/projects/demo-search/ab?baseline=bm25-v1&candidate=neural-v2&measure=nDCG%4010"
    w = _open_with_charts(browser_context, url, 2, artifacts_dir / "truth-ab.png")
    try:
        text = w.page.locator("table.summary").inner_text()
        assert "bm25-v1 (baseline)" in text and "neural-v2 (candidate)" in text and "Candidate − baseline" in text
        fills = w.page.eval_on_selector_all("#chart-ab-diff .barlayer .point path", "els => els.map(e => e.style.fill)")
        green = sum(f.replace(" ", "") == "rgb(44,160,44)" for f in fills)
        assert fills and green > len(fills) / 2  # the new system wins most queries: mostly green
        assert w.page.locator("#chart-ab-diff .gtitle", has_text="candidate − baseline").count() == 1
        assert w.clean(), w.report()
    finally:
        w.page.close()


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.browser
def test_browser_series_band_threshold_alerts(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:
    url = demo_server.url + "/projects/demo-search/series?segment=fashion"  # opens on nDCG@10
    w = _open_with_charts(browser_context, url, 1, artifacts_dir / "truth-series.png")
    try:
        assert "nDCG@10" in w.page.locator("h1").inner_text()
        legend = w.page.locator("div.chart .legendtext")
        assert legend.filter(has_text="95% CI").count() == 2  # one band per system
        assert legend.filter(has_text="threshold >= 0.55").count() == 1
        assert legend.filter(has_text="alerts").count() == 1
        assert w.page.locator("div.chart .scatterlayer .trace path.js-fill").count() >= 2
        # the mode bar (shown on hover) does not cover the title
        w.page.hover("div.chart .nsewdrag")
        w.page.wait_for_selector("div.chart .modebar", state="visible")
        title = w.page.locator("div.chart .gtitle").bounding_box()
        bar = w.page.locator("div.chart .modebar").bounding_box()
        assert title and bar and not _overlap(title, bar), (title, bar)
        w.page.screenshot(path=str(artifacts_dir / "truth-series-hover.png"), full_page=True)
        assert w.clean(), w.report()
    finally:
        w.page.close()
    w = Watched(browser_context)
    try:  # the alerts table: badges on one line
        w.page.set_viewport_size({"width": 900, "height": 800})
        w.page.goto(demo_server.url + "/projects/demo-search/alerts", wait_until="load")
        heights = w.page.eval_on_selector_all("table.grid .badge", "els => els.map(e => e.getBoundingClientRect().height)")
        assert heights and max(heights) < 24, heights
        w.page.screenshot(path=str(artifacts_dir / "truth-alerts.png"), full_page=True)
    finally:
        w.page.set_viewport_size({"width": 1280, "height": 900})
        w.page.close()
