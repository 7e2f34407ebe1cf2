"""An outage can never look like a recovery (issue 24): unanswered queries count, coverage is a series.

The scenario of the issue, scaled down: 6 categories of 50 queries, one evaluation pushed per day, the rule
``nDCG@10 > 0.85`` (a rule without a segment: every category too). Beauty regresses on day 11 (0.80 on every
query), and from day 15 15 of its 50 queries return nothing while the 35 answered ones are back at 0.90 —
the mean over the answered queries alone (0.90) would pass. Service in-process (:class:`Monitor` on a
:class:`Database`), SQLite and PostgreSQL.

Oracles, written out by hand: beauty during the outage scores (35 × 0.90 + 15 × 0) / 50 = 0.63 (the gate's
rule: every qrels query counts); its coverage is 35/50 = 0.7; all queries 285/300 = 0.95.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from .conftest import backends, in_process_monitor

CATS = ["beauty", "books", "garden", "home", "sports", "toys"]
SEGMENTS = {f"{c}-{i:02d}": c for c in CATS for i in range(50)}
DAY0 = dt.datetime(2026, 9, 1, 6, tzinfo=dt.timezone.utc)
OUTAGE = 15  # first day of the outage
REGRESSION = 11


def _day_doc(day: int, regression: bool = True) -> dict[str, Any]:
    """The ``ranklens eval -f json --per-query`` document of one day (``skipped_queries``: unanswered)."""
    per_query: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    for q, cat in SEGMENTS.items():
        v = 0.90
        if regression and cat == "beauty" and REGRESSION <= day < OUTAGE:
            v = 0.80
        if cat == "beauty" and day >= OUTAGE and int(q[-2:]) < 15:
            skipped.append(q)
            continue
        per_query[q] = {"nDCG@10": v}
    agg = sum(r["nDCG@10"] for r in per_query.values()) / len(per_query)
    run = {"run": "prod", "measures": ["nDCG@10"], "aggregate": {"nDCG@10": agg}, "num_queries": len(per_query),
           "per_query": per_query, "notes": [], "options": {"missing": "skip"},
           "expected_queries": len(SEGMENTS), "skipped_queries": sorted(skipped)}
    return {"ranklens_version": "0", "runs": [run]}


@pytest.fixture(params=backends())
def monitor(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    with in_process_monitor(request.param, tmp_path) as m:
        yield m


def _push(monitor: Any, project: str, day: int, regression: bool = True, **extra: Any) -> dict[str, Any]:
    from ranklens.monitor.schemas import SnapshotIn

    body = SnapshotIn.model_validate({
        "id": f"day-{day:02d}", "system": "prod", "at": DAY0 + dt.timedelta(days=day - 1),
        "results": _day_doc(day, regression), "query_segments": SEGMENTS, **extra,
    })
    out, created = monitor.ingest(project, body)
    assert created
    return out


def _deliveries(monitor: Any) -> list[tuple[str, dict[str, Any]]]:
    from ranklens.monitor.models import Delivery

    with monitor.db.read() as s:
        return [(e, json.loads(p)) for e, p in s.execute(select(Delivery.event, Delivery.payload).order_by(Delivery.id))]


def _checks(out: dict[str, Any], measure: str, segment: str | None) -> list[dict[str, Any]]:
    return [r for r in out["rules"] if r["rule"].startswith(measure) and r["segment"] == segment]


def test_outage_keeps_the_alert_firing_and_fires_coverage(monitor: Any) -> None:
    from ranklens.monitor import views
    from ranklens.monitor.schemas import RuleIn, WebhookIn

    project = "shop"
    monitor.add_rule(project, RuleIn(expr="nDCG@10 > 0.85"))
    monitor.add_webhook(WebhookIn(url="http://127.0.0.1:9/hook", project=project))
    outs = {day: _push(monitor, project, day) for day in range(1, 22)}

    # the regression fires on beauty (and only there) on day 11
    (beauty11,) = _checks(outs[REGRESSION], "nDCG@10 > 0.85", "beauty")
    assert beauty11["status"] == "breach" and beauty11["alert"]["change"] == "fired"
    assert beauty11["value"] == pytest.approx(0.80)
    # the outage: beauty = (35 × 0.90 + 15 × 0) / 50 = 0.63, every qrels query counts; still firing
    for day in range(OUTAGE, 22):
        (b,) = _checks(outs[day], "nDCG@10 > 0.85", "beauty")
        assert b["status"] == "breach" and b["alert"]["change"] == "still firing", day
        assert b["value"] == pytest.approx(35 * 0.90 / 50)
        assert "15 of 50 expected queries unanswered, scored 0" in b["detail"]
        assert outs[day]["segments"]["beauty"]["nDCG@10"] == pytest.approx(0.63)
        assert outs[day]["values"]["nDCG@10"] == pytest.approx((285 * 0.90) / 300)
        assert outs[day]["coverage"]["answered"] == 285 and outs[day]["coverage"]["expected"] == 300
        assert outs[day]["coverage"]["segments"]["beauty"] == {"answered": 35, "expected": 50, "ratio": 0.7}
    # coverage fires by itself on the outage day (all queries and beauty), not before, and stays firing
    for day in range(1, OUTAGE):
        assert all(r["status"] in ("ok", "skipped") for r in _checks(outs[day], "query_coverage", None) + _checks(outs[day], "query_coverage", "beauty"))
    (cov_all,) = _checks(outs[OUTAGE], "query_coverage", None)
    (cov_beauty,) = _checks(outs[OUTAGE], "query_coverage", "beauty")
    assert cov_all["status"] == cov_beauty["status"] == "breach"
    assert cov_all["alert"]["change"] == cov_beauty["alert"]["change"] == "fired"
    assert cov_beauty["value"] == pytest.approx(0.7) and cov_all["value"] == pytest.approx(0.95)
    assert "change −0.3000 (fell)" in cov_beauty["detail"]
    (cov_books,) = _checks(outs[OUTAGE], "query_coverage", "books")
    assert cov_books["status"] == "ok"
    for day in range(OUTAGE + 1, 22):
        (c,) = _checks(outs[day], "query_coverage", "beauty")
        assert c["status"] == "breach" and c["alert"]["change"] == "still firing", day
    # nothing resolved: no alert.resolved webhook at all
    events = _deliveries(monitor)
    assert [e for e, _ in events if e == "alert.resolved"] == []
    assert sorted((p["alert"]["measure"], p["alert"]["segment"] or "") for e, p in events) == [
        ("nDCG@10", "beauty"), ("query_coverage", ""), ("query_coverage", "beauty")
    ]
    # the coverage series shows the drop: 1.0 for 14 days, then 0.7
    with monitor.db.read() as s:
        series = views.series_view(s, project, measure="query_coverage", segment="beauty")
    values = [p["value"] for p in series["series"][0]["points"]]
    assert values == [1.0] * (OUTAGE - 1) + [0.7] * (22 - OUTAGE)


def test_an_outage_alone_fires_on_its_first_day(monitor: Any) -> None:
    """No regression before: the outage by itself fires the beauty alert on its first day (0.63 < 0.85)
    and coverage with it; nothing resolves while the queries stay missing."""
    from ranklens.monitor.schemas import RuleIn, WebhookIn

    project = "shop-outage-only"
    monitor.add_rule(project, RuleIn(expr="nDCG@10 > 0.85"))
    monitor.add_webhook(WebhookIn(url="http://127.0.0.1:9/hook", project=project))
    outs = {day: _push(monitor, project, day, regression=False) for day in range(OUTAGE - 3, 22)}
    fired = {day: [(r["rule"], r["segment"]) for r in out["rules"] if (r["alert"] or {}).get("change") == "fired"]
             for day, out in outs.items()}
    assert fired[OUTAGE] == [("nDCG@10 > 0.85 [segment beauty]", "beauty"), ("query_coverage >= 7-day mean − 0", None),
                             ("query_coverage >= 7-day mean − 0 [segment beauty]", "beauty")]
    assert all(not fired[d] for d in fired if d != OUTAGE)
    assert [e for e, _ in _deliveries(monitor)] == ["alert.firing"] * 3


def test_outage_with_missing_skip_says_on_how_many_queries(monitor: Any) -> None:
    """``missing: skip`` (explicit): values over the answered queries, and every check says on how many;
    coverage still fires."""
    from ranklens.monitor.schemas import RuleIn

    project = "shop-skip"
    monitor.add_rule(project, RuleIn(expr="nDCG@10 > 0.85"))
    outs = {day: _push(monitor, project, day, missing="skip") for day in (13, 14, OUTAGE)}
    (b,) = _checks(outs[OUTAGE], "nDCG@10 > 0.85", "beauty")
    assert b["value"] == pytest.approx(0.90) and b["status"] == "ok"
    assert "on 35 of 50 queries" in b["detail"]
    assert outs[OUTAGE]["missing"] == "skip"
    (c,) = _checks(outs[OUTAGE], "query_coverage", "beauty")
    assert c["status"] == "breach" and c["value"] == pytest.approx(0.7)


def test_coverage_cannot_be_sent_as_a_value() -> None:
    from ranklens.errors import InputError
    from ranklens.monitor.schemas import SnapshotIn
    from ranklens.monitor.service import normalise_snapshot

    with pytest.raises(InputError, match="query_coverage is computed by the monitor"):
        normalise_snapshot(SnapshotIn.model_validate({"system": "s", "values": {"query_coverage": 1.0, "AP": 0.5}}))


def test_aggregate_only_results_with_skipped_queries_need_missing_skip() -> None:
    from ranklens.errors import InputError
    from ranklens.monitor.schemas import SnapshotIn
    from ranklens.monitor.service import normalise_snapshot

    run = {"run": "r", "aggregate": {"AP": 0.5}, "num_queries": 8, "expected_queries": 10, "skipped_queries": ["a", "b"]}
    with pytest.raises(InputError, match="did not answer 2 of its 10 qrels queries"):
        normalise_snapshot(SnapshotIn.model_validate({"system": "s", "results": run}))
    data = normalise_snapshot(SnapshotIn.model_validate({"system": "s", "results": run, "missing": "skip"}))
    assert data.coverage == {"": (8, 10)} and data.aggregates == {"AP": 0.5, "query_coverage": 0.8}


def _files(tmp: Path) -> tuple[Path, Path, Path]:
    """6 queries in 2 segments; the run answers 4 of them (a1 and b1 are missing)."""
    qrels, run, segs = tmp / "q.txt", tmp / "r.txt", tmp / "s.tsv"
    qrels.write_text("".join(f"{q} 0 d{i} {1 + i % 2}\n" for q in ("a1", "a2", "a3", "b1", "b2", "b3") for i in range(3)))
    rows = {"a2": ["d1", "d0", "x"], "a3": ["x", "d0"], "b2": ["d0", "d1", "d2"], "b3": ["y", "z", "d1"]}
    run.write_text("".join(f"{q} Q0 {d} {r + 1} {10 - r} sys\n" for q, docs in rows.items() for r, d in enumerate(docs)))
    segs.write_text("query_id\tsegment\n" + "".join(f"{q}\t{q[0]}\n" for q in ("a1", "a2", "a3", "b1", "b2", "b3")))
    return qrels, run, segs


def test_eval_json_then_push_counts_unanswered_queries(server: Any, project: str, tmp_path: Path) -> None:
    """The documented path (eval -f json --per-query, then push) stores what ``eval --missing zero`` and the
    gate compute: every qrels query counts. The oracle is the engine's own run with ``--missing zero``."""
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    from .conftest import TOKEN

    qrels, run, segs = _files(tmp_path)
    runner = CliRunner()
    doc = runner.invoke(cli, ["eval", str(qrels), str(run), "-m", "nDCG@10", "--per-query", "-f", "json", "--quiet"])
    assert doc.exit_code == 0, doc.output
    (r,) = json.loads(doc.stdout)["runs"]
    assert r["expected_queries"] == 6 and r["skipped_queries"] == ["a1", "b1"] and len(r["per_query"]) == 4
    zero = runner.invoke(cli, ["eval", str(qrels), str(run), "-m", "nDCG@10", "--per-query", "-f", "json", "--quiet",
                               "--missing", "zero", "--segments", str(segs)])
    (z,) = json.loads(zero.stdout)["runs"]
    results = tmp_path / "results.json"
    results.write_text(doc.stdout)
    pushed = runner.invoke(cli, ["push", str(results), "-p", project, "-s", "prod", "--segments", str(segs),
                                 "--url", server.url, "--token", TOKEN])
    assert pushed.exit_code == 0, pushed.output
    assert "2 of 6 expected queries unanswered (scored 0)" in pushed.output
    with server.client() as c:
        snap = c.snapshot(project, c.snapshots(project)["snapshots"][0]["id"])
    values = {row["segment"]: row["values"] for row in snap["values"]}
    assert values["(all)"]["nDCG@10"] == pytest.approx(z["aggregate"]["nDCG@10"], abs=1e-12)
    for seg in ("a", "b"):
        assert values[seg]["nDCG@10"] == pytest.approx(z["segments"][seg]["aggregate"]["nDCG@10"], abs=1e-12)
        assert values[seg]["query_coverage"] == pytest.approx(2 / 3)
    assert snap["coverage"]["answered"] == 4 and snap["coverage"]["expected"] == 6 and snap["missing"] == "zero"
    # --missing skip: the values of eval's default (answered queries only), said to be on 4 of 6 queries
    pushed = runner.invoke(cli, ["push", str(results), "-p", project, "-s", "prod-skip", "--missing", "skip",
                                 "--url", server.url, "--token", TOKEN])
    assert pushed.exit_code == 0 and "left out of the values" in pushed.output
    html = httpx_get(f"{server.url}/projects/{project}/segments")
    assert "4 of 6" in html


def test_python_client_takes_the_qrels_as_expected_queries(server: Any, project: str) -> None:
    import ranklens

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document: skipped"):
        res = ranklens.evaluate(qrels, {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}}, ["P@1"])
    assert res["P@1"] == pytest.approx(2 / 3)  # eval's default leaves q4 out
    with server.client() as c:
        out = c.push(res, project=project, system="py", expected_queries=ranklens.read_qrels(qrels))
        assert out["values"]["P@1"] == pytest.approx(2 / 4) and out["coverage"]["answered"] == 3
        skip = c.push(res, project=project, system="py-skip", expected_queries=["q1", "q2", "q3", "q4"], missing="skip")
        assert skip["values"]["P@1"] == pytest.approx(2 / 3) and skip["values"]["query_coverage"] == 0.75


def httpx_get(url: str) -> str:
    import httpx

    return httpx.get(url).text


def test_missing_skip_is_said_wherever_the_value_is_shown(monitor: Any) -> None:
    """With ``missing: skip`` the overview cell, the series points, the Segments page and the snapshot page
    say "on 285 of 300 queries" / "on 35 of 50 queries" next to the value."""
    from ranklens.monitor import views

    project = "shop-skip-shown"
    _push(monitor, project, OUTAGE, missing="skip")
    with monitor.db.read() as s:
        ov = views.overview_view(s, project)
        cell = next(c for c in ov["systems"][0]["values"] if c["measure"] == "nDCG@10")
        assert cell["on"] == "on 285 of 300 queries"
        series = views.series_view(s, project, measure="nDCG@10", segment="beauty")
        assert series["series"][0]["points"][0]["on"] == "on 35 of 50 queries"
        segs = {r["segment"]: r for r in views.segments_view(s, project, measure="nDCG@10")["segments"]}
        assert segs["beauty"]["on"] == {"prod": "on 35 of 50 queries"} and segs["books"]["on"] == {}
        snap = views.snapshot_view(s, project, f"day-{OUTAGE:02d}")
        assert snap["missing"] == "skip" and snap["coverage"]["answered"] == 285
        beauty = next(r for r in snap["values"] if r["segment"] == "beauty")
        assert beauty["coverage"] == {"answered": 35, "expected": 50}


def test_server_side_evaluation_counts_the_stored_qrels(monitor: Any) -> None:
    """``POST /runs``: the stored qrels are the expected queries. q4 is unanswered: P@1 = (1 + 0 + 1 + 0) / 4
    (it scores 0), not 2/3; coverage 3/4."""
    from ranklens.monitor.schemas import DatasetIn, RunIn

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}}
    monitor.add_dataset("served", DatasetIn(name="judged", version="v1", qrels=qrels))
    out, _ = monitor.evaluate_run("served", RunIn(system="s", dataset="judged", measures=["P@1"], run=run))
    assert out["values"]["P@1"] == pytest.approx(2 / 4) and out["values"]["query_coverage"] == 0.75
    skip, _ = monitor.evaluate_run("served", RunIn(system="t", dataset="judged", measures=["P@1"], run=run, missing="skip"))
    assert skip["values"]["P@1"] == pytest.approx(2 / 3) and skip["coverage"]["answered"] == 3
