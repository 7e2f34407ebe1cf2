"""Issue 29: the per-window series stored with its revision history (``/production``, ``/windows/refresh``,
``/windows?history=``), computed by the function behind ``ranklens windows``."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from .conftest import TOKEN, backends, in_process_app

AUTH = {"Authorization": f"Bearer {TOKEN}"}
DAY = 86400
T0 = 1767571200  # 2026-01-05T00:00:00Z
RULES = {"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0}


@pytest.fixture(params=backends())
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    with in_process_app(request.param, tmp_path) as c:
        yield c


def _imp(request: str, item: str, pos: int, ts: float, segment: str = "all") -> dict[str, Any]:
    return {"id": f"{request}-{item}", "request": request, "query": request, "item": item, "position": pos,
            "score": 10.0 - pos, "timestamp": ts, "segment": segment}


def _click(request: str, item: str, ts: float) -> dict[str, Any]:
    return {"id": f"c-{request}-{item}", "request": request, "item": item, "event": "click", "timestamp": ts}


def test_late_events_revise_the_provisional_window(app: Any) -> None:
    # day 1: r1 shows a, b; b clicked. Labels per request (query = request): b relevant → nDCG@10 = 1/log2(3)
    imps = [_imp("r1", "a", 1, T0 + 3600), _imp("r1", "b", 2, T0 + 3600), _imp("r2", "a", 1, T0 + DAY + 60)]
    app.post("/api/v1/projects/p/ingest", json={"impressions": imps, "events": [_click("r1", "b", T0 + 3700)]}, headers=AUTH)
    first = app.post("/api/v1/projects/p/windows/refresh", json={"labels": RULES, "window": "1d", "label_delay": "24h",
                                                                 "measures": ["nDCG@10"]}, headers=AUTH)
    assert first.status_code == 200, first.text
    assert first.json()["added"] == 2 and first.json()["revised"] == 0
    w, day2 = app.get("/api/v1/projects/p/windows", headers=AUTH).json()["windows"]
    assert day2["value"] == 0.0 and day2["n"] == 1  # r2: nothing clicked, everything graded 0
    assert w["start"] == "2026-01-05T00:00:00Z" and w["provisional"] is True and w["revision"] == 1
    assert w["value"] == pytest.approx(1 / math.log2(3), abs=1e-12) and w["n"] == 1
    # a late click on a (inside its 24 h label window): both relevant → nDCG@10 = 1, a second revision
    app.post("/api/v1/projects/p/ingest", json={"events": [_click("r1", "a", T0 + 5 * 3600)]}, headers=AUTH)
    second = app.post("/api/v1/projects/p/windows/refresh", headers=AUTH).json()
    assert second["revised"] == 1
    w, _ = app.get("/api/v1/projects/p/windows", headers=AUTH).json()["windows"]
    assert w["value"] == pytest.approx(1.0, abs=1e-12) and w["revision"] == 2
    history = app.get("/api/v1/projects/p/windows", params={"history": "true"}, headers=AUTH).json()["windows"][:2]
    assert [(h["revision"], h["current"], round(h["value"], 6)) for h in history] == [(1, False, round(1 / math.log2(3), 6)), (2, True, 1.0)]
    # an unchanged refresh adds no revision
    assert app.post("/api/v1/projects/p/windows/refresh", headers=AUTH).json()["revised"] == 0
    # time moves on (an impression 2 days later): the day-1 window's label window closes → no longer provisional
    app.post("/api/v1/projects/p/ingest", json={"impressions": [_imp("r3", "a", 1, T0 + 2 * DAY + 10)],
                                                "events": [_click("r3", "a", T0 + 2 * DAY + 20)]}, headers=AUTH)
    app.post("/api/v1/projects/p/windows/refresh", headers=AUTH)
    rows = {r["start"]: r for r in app.get("/api/v1/projects/p/production", headers=AUTH).json()["windows"]}
    assert rows["2026-01-05T00:00:00Z"]["provisional"] is False and rows["2026-01-05T00:00:00Z"]["revision"] == 3
    assert rows["2026-01-07T00:00:00Z"]["provisional"] is True


def test_refresh_needs_settings_and_data(app: Any) -> None:
    app.post("/api/v1/projects/q/ingest", json={"impressions": [_imp("r1", "a", 1, T0)]}, headers=AUTH)
    r = app.post("/api/v1/projects/q/windows/refresh", headers=AUTH)
    assert r.status_code == 400 and "labels" in r.json()["error"]["message"]
    r = app.post("/api/v1/projects/q/windows/refresh", json={"labels": RULES, "measures": ["nDGC@10"]}, headers=AUTH)
    assert r.status_code == 400 and "did you mean 'nDCG@10'" in r.json()["error"]["message"]
    r = app.post("/api/v1/projects/q/windows/refresh", json={"labels": RULES, "window": "soon"}, headers=AUTH)
    assert r.status_code == 400 and "duration" in r.json()["error"]["message"]
    assert app.post("/api/v1/projects/q/windows/refresh", json={"labels": RULES}).status_code == 401


def test_the_stored_series_is_what_ranklens_windows_prints(app: Any, tmp_path: Path) -> None:
    """One engine: the server's series equals the command's JSON on the same logs."""
    import numpy as np

    from ranklens.cli.main import cli

    rng = np.random.default_rng(7)
    imps, clicks = [], []
    for r in range(120):
        ts = T0 + int(r * 1800)
        seg = "books" if r % 3 else "toys"
        for p in range(1, 6):
            imps.append({**_imp(f"r{r}", f"d{(r + p) % 9}", p, ts, seg), "score": float(rng.normal())})
            if rng.random() < 0.5 / p:
                clicks.append(_click(f"r{r}", f"d{(r + p) % 9}", ts + 120))
    app.post("/api/v1/projects/same/ingest", json={"impressions": imps, "events": clicks}, headers=AUTH)
    settings = {"labels": RULES, "window": "1d", "label_delay": "6h", "measures": ["nDCG@10", "DCG@5"]}
    assert app.post("/api/v1/projects/same/windows/refresh", json=settings, headers=AUTH).status_code == 200
    served = app.get("/api/v1/projects/same/production", headers=AUTH).json()

    (tmp_path / "imp.jsonl").write_text("".join(json.dumps(i) + "\n" for i in imps))
    (tmp_path / "ev.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clicks))
    (tmp_path / "rules.toml").write_text('default_grade = 0\n[signals]\nclick = "event"\n[[grade]]\ngrade = 1\nwhen = { click = 0.5 }\n')
    res = CliRunner().invoke(cli, ["windows", str(tmp_path / "imp.jsonl"), str(tmp_path / "ev.jsonl"), "--labels",
                                   str(tmp_path / "rules.toml"), "--window", "1d", "--label-delay", "6h", "-m", "nDCG@10", "DCG@5",
                                   "--segment-col", "segment", "-f", "json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.output[res.output.index("{"):])
    key = lambda w: (w["start"], w["segment"], w["measure"])  # noqa: E731
    assert len(printed["windows"]) == len(served["windows"]) > 4
    for a, b in zip(sorted(printed["windows"], key=key), sorted(served["windows"], key=key)):
        assert (a["start"], a["segment"], a["measure"], a["n"], a["provisional"]) == (b["start"], b["segment"], b["measure"], b["n"], b["provisional"])
        assert a["value"] == pytest.approx(b["value"], abs=1e-12) and a["ci"] == pytest.approx(b["ci"], abs=1e-12)
    assert [(d["start"], d["segment"], d["what"], d["flag"]) for d in sorted(printed["drift"], key=lambda d: (d["what"], d["segment"], d["start"]))] == \
        [(d["start"], d["segment"], d["what"], d["flag"]) for d in served["drift"]]


def test_production_alerts_live_in_the_alert_table_with_their_own_key(app: Any) -> None:
    """A threshold breached by a closed window opens a production alert on /alerts; a snapshot check of the
    same rule and system that passes does not resolve it, and a production check that passes does not resolve
    the snapshot's alert; a later revision that satisfies the rule resolves the production alert."""
    from .conftest import eval_json

    rule = {"kind": "threshold", "measure": "nDCG@10", "op": ">=", "value": 0.9}
    assert app.post("/api/v1/projects/mix/rules", json=rule, headers=AUTH).status_code == 201
    # day 1: r1 shows a, b; b clicked → nDCG@10 = 1/log2(3) = 0.63 < 0.9; day 3 closes day 1's label window
    # (segment "books" in both: the snapshot check's scope and the series' segment are the same name)
    imps = [_imp("r1", "a", 1, T0 + 3600, "books"), _imp("r1", "b", 2, T0 + 3600, "books"), _imp("r9", "a", 1, T0 + 3 * DAY, "books")]
    app.post("/api/v1/projects/mix/ingest", json={"impressions": imps, "events": [_click("r1", "b", T0 + 3700),
                                                                                  _click("r9", "a", T0 + 3 * DAY + 5)]}, headers=AUTH)
    settings = {"labels": RULES, "window": "1d", "label_delay": "24h", "measures": ["nDCG@10"]}
    assert app.post("/api/v1/projects/mix/windows/refresh", json=settings, headers=AUTH).status_code == 200
    alerts = app.get("/api/v1/projects/mix/alerts", headers=AUTH).json()["alerts"]
    assert [(a["source"], a["window"], a["system"], a["state"]) for a in alerts] == [("production", "2026-01-05T00:00:00Z", "all", "firing")]
    assert alerts[0]["value"] == pytest.approx(1 / math.log2(3), abs=1e-12) and alerts[0]["first_snapshot"] is None
    # a snapshot of the same system, passing the rule: the production alert stays firing
    body = {"id": "s1", "system": "all", "at": "2026-01-06T00:00:00Z", "results": eval_json({"q1": {"nDCG@10": 0.95}, "q2": {"nDCG@10": 0.97}}),
            "query_segments": {"q1": "books", "q2": "books"}}
    assert app.post("/api/v1/projects/mix/snapshots", json=body, headers=AUTH).status_code == 201
    states = sorted((a["source"], a["segment"], a["state"]) for a in app.get("/api/v1/projects/mix/alerts", headers=AUTH).json()["alerts"])
    assert states == [("production", "books", "firing")]
    # a failing snapshot opens a snapshot alert; the next production refresh (still breached) leaves it alone
    body = {"id": "s2", "system": "all", "at": "2026-01-07T00:00:00Z", "results": eval_json({"q1": {"nDCG@10": 0.1}, "q2": {"nDCG@10": 0.2}}),
            "query_segments": {"q1": "books", "q2": "books"}}
    assert app.post("/api/v1/projects/mix/snapshots", json=body, headers=AUTH).status_code == 201
    app.post("/api/v1/projects/mix/windows/refresh", headers=AUTH)
    states = sorted((a["source"], a["state"]) for a in app.get("/api/v1/projects/mix/alerts", headers=AUTH).json()["alerts"])
    assert states == [("production", "firing"), ("snapshot", "firing"), ("snapshot", "firing")]  # all queries and books
    # a late click on a (inside its label window) makes day 1's nDCG@10 = 1: the production alert resolves, the snapshot's stays
    app.post("/api/v1/projects/mix/ingest", json={"events": [_click("r1", "a", T0 + 5 * 3600)]}, headers=AUTH)
    app.post("/api/v1/projects/mix/windows/refresh", headers=AUTH)
    states = sorted((a["source"], a["state"]) for a in app.get("/api/v1/projects/mix/alerts", headers=AUTH).json()["alerts"])
    assert states == [("production", "resolved"), ("snapshot", "firing"), ("snapshot", "firing")]
    page = app.get("/projects/mix/alerts", headers=AUTH)
    assert page.status_code == 200 and "production window 2026-01-05T00:00:00Z" in page.text


@pytest.mark.parametrize("backend", backends())
def test_the_background_refresh_revises_the_series_without_a_call(tmp_path: Path, backend: str) -> None:
    """With ``refresh_interval`` the server refreshes by itself; a pass without new data stores nothing
    (counters, not clocks: the test waits for the refresher's counts). On SQLite and on PostgreSQL."""
    import time

    with in_process_app(backend, tmp_path, refresh_interval=0.05) as app:
        refresher = app.app.state.refresher
        imps = [_imp("r1", "a", 1, T0 + 3600), _imp("r1", "b", 2, T0 + 3600)]
        app.post("/api/v1/projects/bg/ingest", json={"impressions": imps, "events": [_click("r1", "b", T0 + 3700)]}, headers=AUTH)
        app.post("/api/v1/projects/bg/windows/refresh", json={"labels": RULES, "window": "1d", "measures": ["nDCG@10"]}, headers=AUTH)

        def wait(pred: Any) -> None:
            deadline = time.monotonic() + 60
            while not pred() and time.monotonic() < deadline:
                time.sleep(0.02)

        wait(lambda: refresher.refreshed >= 1)  # its first pass: nothing seen yet → refreshes, no new revision
        passes = refresher.passes
        wait(lambda: refresher.passes >= passes + 2)
        assert refresher.refreshed == 1 and refresher.skipped >= 1 and refresher.failures == 0
        assert app.get("/api/v1/projects/bg/windows", headers=AUTH).json()["windows"][0]["revision"] == 1
        app.post("/api/v1/projects/bg/ingest", json={"events": [_click("r1", "a", T0 + 5 * 3600)]}, headers=AUTH)
        wait(lambda: refresher.refreshed >= 2)
        w = app.get("/api/v1/projects/bg/windows", headers=AUTH).json()["windows"][0]
        assert w["revision"] == 2 and w["value"] == pytest.approx(1.0, abs=1e-12)
    with in_process_app("sqlite", tmp_path / "off") as app:
        assert app.app.state.refresher is None  # off unless configured


def test_the_position_bias_setting_refits_theta_per_window_as_compute_windows_does(app: Any) -> None:
    """``position_bias`` in the production settings: the stored IPS and ``theta@p`` rows are those of
    ``compute_windows(position_bias="em")`` on the same logs; null goes back to the DCG discount; anything else
    is refused with the field named."""
    import sys

    from ranklens.production import compute_windows

    repo = str(Path(__file__).resolve().parents[2])
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from bench.refresh_bench import generate

    imp, ev = generate(3000, seed=11, hours=2.0)
    imps = [{"id": f"i{i}", **row} for i, row in enumerate(imp.to_dicts())]
    evs = [{"id": f"e{i}", **row} for i, row in enumerate(ev.to_dicts())]
    r = app.post("/api/v1/projects/pb/ingest", json={"impressions": imps, "events": evs}, headers=AUTH)
    assert r.status_code == 200, r.text
    settings = {"labels": RULES, "window": "1h", "label_delay": "1h", "measures": ["IPS-DCG@5"], "position_bias": "em"}
    assert app.post("/api/v1/projects/pb/windows/refresh", json=settings, headers=AUTH).status_code == 200
    assert app.get("/api/v1/projects/pb/production", headers=AUTH).json()["settings"]["position_bias"] == "em"
    stored = {(w["start"], w["segment"], w["system"], w["measure"]): w["value"]
              for w in app.get("/api/v1/projects/pb/windows", headers=AUTH).json()["windows"]}
    expected = compute_windows(imp, ev, RULES, window="1h", label_delay="1h", measures=["IPS-DCG@5"], segment_col="segment",
                               system_col="system", position_bias="em")
    assert any(k[3] == "theta@2" for k in stored)  # the fit is in the series
    assert len(stored) == len(expected.windows)
    for w in expected.windows:
        assert stored[(w.start, w.segment, w.system, w.measure)] == pytest.approx(w.value, rel=1e-9)
    # null: the DCG discount again, no theta rows among the current values
    assert app.post("/api/v1/projects/pb/windows/refresh", json={"position_bias": None}, headers=AUTH).status_code == 200
    current = app.get("/api/v1/projects/pb/windows", headers=AUTH).json()["windows"]
    plain = compute_windows(imp, ev, RULES, window="1h", label_delay="1h", measures=["IPS-DCG@5"], segment_col="segment",
                            system_col="system")
    assert {w["measure"] for w in current if w["value"] is not None and not w["measure"].startswith("theta")} == {"IPS-DCG@5"}
    by_key = {(w["start"], w["segment"], w["system"], w["measure"]): w["value"] for w in current}
    for w in plain.windows:
        assert by_key[(w.start, w.segment, w.system, w.measure)] == pytest.approx(w.value, rel=1e-9)
    bad = app.post("/api/v1/projects/pb/windows/refresh", json={"position_bias": "magic"}, headers=AUTH)
    assert bad.status_code == 400 and "position_bias" in bad.text


@pytest.mark.parametrize("backend", backends())
def test_the_stored_logs_read_back_as_sent(tmp_path: Path, backend: str) -> None:
    """What a refresh reads (``_frames``: COPY as CSV on PostgreSQL, blocks of rows on SQLite) is what was
    ingested: ids with commas, quotes, newlines and non-ASCII, in ingestion order."""
    from ranklens.monitor.production import _frames

    from .conftest import in_process_monitor

    odd = ['r,1', 'r"2"', "r\n3", "ré 4", "r5"]
    imps = [{"id": f"i{k}", "request": r, "query": r, "item": f"d,{k}", "position": k + 1, "score": 0.5 - k,
             "timestamp": T0 + k, "segment": "s\n", "system": "A"} for k, r in enumerate(odd)]
    evs = [{"id": "e1", "request": 'r"2"', "item": "d,1", "event": "click", "timestamp": T0 + 99, "value": 0.25}]
    with in_process_monitor(backend, tmp_path) as monitor:
        from ranklens.monitor.ingest import ingest_batch

        monitor.db.write(lambda s: ingest_batch(s, "odd", {"impressions": imps, "events": evs}))
        with monitor.db.read() as s:
            from ranklens.monitor.production import _project_id

            got_imp, got_ev = _frames(s, _project_id(s, "odd"))
    assert got_imp.rows() == [(i["request"], i["query"], i["item"], i["position"], i["score"], float(i["timestamp"]),
                              i["segment"], i["system"]) for i in imps]
    assert got_ev.rows() == [('r"2"', "d,1", "click", float(T0 + 99), 0.25)]
