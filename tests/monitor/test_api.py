"""The ingest and read API against a real server process (SQLite; PostgreSQL with RANKLENS_TEST_PG_URL)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from ranklens.monitor.client import MonitorAPIError

from .conftest import TOKEN, ServerProcess, eval_json

ROOT = Path(__file__).resolve().parents[2]


def _post(server: ServerProcess, path: str, body: Any, *, token: str | None = TOKEN, raw: bytes | None = None) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx.post(server.url + path, content=content, headers=headers, timeout=30)


def test_health(server: ServerProcess, backend: str) -> None:
    r = httpx.get(server.url + "/api/v1/health")
    assert r.status_code == 200
    assert r.json()["database"] == backend


def test_push_real_eval_output_and_read_it_back(client: Any, project: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from ranklens.cli.main import main; main()", "eval", str(ROOT / "examples/toy.qrels"), str(ROOT / "examples/toy_bm25.run"),
         "-m", "nDCG@10", "AP", "--per-query", "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    doc = json.loads(out.stdout)
    snap = client.push(doc, project=project, system="bm25", id="toy-1", tags={"arm": "A"})
    assert snap["created"] is True
    # eval's JSON names the qrels queries (expected_queries, skipped_queries): the coverage series comes along
    assert set(snap["values"]) == {"nDCG@10", "AP", "query_coverage"}
    n = len(doc["runs"][0]["per_query"]) + len(doc["runs"][0]["skipped_queries"])
    assert snap["coverage"]["expected"] == doc["runs"][0]["expected_queries"] == n
    assert snap["has_per_query"] is True
    listed = client.snapshots(project)
    assert listed["total"] == 1 and listed["snapshots"][0]["id"] == "toy-1"
    detail = client.snapshot(project, "toy-1", measure="AP")
    assert detail["worst_queries"][0]["value"] == min(q["value"] for q in detail["worst_queries"])
    assert detail["tags"] == {"arm": "A"}


def test_push_recommender_measures(client: Any, project: str) -> None:
    """Issue 16: system-level measures (one value per run, a ``system`` section, no per-query column) and
    per-list measures with exclude-seen are stored and read back with the values ``eval`` printed."""
    ml = ROOT / "examples/movielens"
    out = subprocess.run(
        [sys.executable, "-c", "from ranklens.cli.main import main; main()", "eval", str(ml / "test.csv"), str(ml / "recs.csv"),
         "--train", str(ml / "train.csv"), "--exclude-seen", "-m", "nDCG@10", "Coverage@10", "Novelty@10", "Gini@10",
         "--per-query", "--format", "json", "--quiet"],
        capture_output=True, text=True, check=True,
    )
    doc = json.loads(out.stdout)
    snap = client.push(doc, project=project, system="recs", id="ml-1")
    assert snap["created"] is True
    printed = doc["runs"][0]["aggregate"]
    assert set(snap["values"]) == {"nDCG@10", "Coverage@10", "Novelty@10", "Gini@10", "query_coverage"}
    assert snap["values"]["query_coverage"] == 1.0  # every user of the test set was answered
    for measure, value in snap["values"].items():
        if measure != "query_coverage":
            assert value == pytest.approx(printed[measure], abs=1e-12)
    detail = client.snapshot(project, "ml-1", measure="nDCG@10")
    assert detail["worst_queries"]  # per-list values were stored per user


def test_idempotent_replay_and_conflict(client: Any, project: str) -> None:
    first = client.push_values({"nDCG@10": 0.8}, project=project, system="s", id="same-id", at="2026-01-01T00:00:00Z")
    again = client.push_values({"nDCG@10": 0.8}, project=project, system="s", id="same-id", at="2026-01-01T00:00:00Z")
    assert first["created"] is True and again["created"] is False
    assert again["id"] == first["id"] and again["at"] == first["at"]
    with pytest.raises(MonitorAPIError) as info:
        client.push_values({"nDCG@10": 0.7}, project=project, system="s", id="same-id", at="2026-01-01T00:00:00Z")
    assert info.value.status == 409 and info.value.code == "conflict"
    assert client.snapshots(project)["total"] == 1


def test_retry_without_time_is_the_same_snapshot(client: Any, project: str) -> None:
    a = client.push_values({"AP": 0.5}, project=project, system="s", id="no-time")
    b = client.push_values({"AP": 0.5}, project=project, system="s", id="no-time")
    assert (a["created"], b["created"]) == (True, False) and a["at"] == b["at"]


def test_writes_need_the_token(server: ServerProcess, project: str) -> None:
    body = {"system": "s", "values": {"AP": 0.5}}
    for token in (None, "wrong"):
        r = _post(server, f"/api/v1/projects/{project}/snapshots", body, token=token)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "unauthorized"
    # reads are open by default
    assert httpx.get(server.url + "/api/v1/projects").status_code == 200


def test_measure_names_are_checked_and_canonical(client: Any, server: ServerProcess, project: str) -> None:
    snap = client.push_values({"ndcg_cut.10": 0.5, "map": 0.4}, project=project, system="s")
    assert set(snap["values"]) == {"nDCG@10", "AP"}
    r = _post(server, f"/api/v1/projects/{project}/snapshots", {"system": "s", "values": {"ndgc@10": 0.5}})
    assert r.status_code == 422
    assert "did you mean 'nDCG@10'" in r.json()["error"]["message"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b'{"system": "s", "values": {"AP": NaN}}', "finite"),
        (b'{"system": "s", "values": {"AP": Infinity}}', "finite"),
        (b'{"system": "s", "values": {"AP": -Infinity}}', "finite"),
        (b'{"system": "s", "values": {"AP": "high"}}', "number"),
        (b'{"system": "", "values": {"AP": 0.5}}', "empty"),
        (b'{"system": "a\\u0000b", "values": {"AP": 0.5}}', "control"),
        (b'{"system": "s"}', "either"),
        (b'{"system": "s", "values": {"AP": 0.5}, "surprise": 1}', "Extra inputs"),
        (b'{"system": "s", "values": {"AP": 0.5}, "at": "1066-10-14T00:00:00Z"}', "1970"),
        (b'{"system": "s", "values": {"AP": 0.5}, "id": "../../etc"}', "pattern"),
        (b'{"system": "s", "values"', "JSON"),
    ],
)
def test_bad_snapshots_are_rejected(server: ServerProcess, project: str, raw: bytes, fragment: str) -> None:
    r = _post(server, f"/api/v1/projects/{project}/snapshots", None, raw=raw)
    assert r.status_code in (400, 422), r.text
    err = r.json()["error"]
    assert fragment.lower() in (err["message"] + json.dumps(err.get("details", []))).lower()


def test_size_limits(server: ServerProcess, project: str) -> None:
    tags = {f"k{i}": "v" for i in range(51)}
    r = _post(server, f"/api/v1/projects/{project}/snapshots", {"system": "s", "values": {"AP": 0.5}, "tags": tags})
    assert r.status_code == 422
    r = _post(server, f"/api/v1/projects/{project}/snapshots", None, raw=b"{" + b" " * (65 * 1024 * 1024) + b"}")
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "payload_too_large"


def test_bad_project_names(server: ServerProcess) -> None:
    r = _post(server, "/api/v1/projects", {"name": "a/b"})
    assert r.status_code == 422
    r = _post(server, "/api/v1/projects", {"name": " padded "})
    assert r.status_code == 422


def test_threshold_rule_fires_then_resolves(client: Any, project: str) -> None:
    rule = client.add_rule(project, "nDCG@10 >= 0.85")
    assert rule["kind"] == "threshold" and rule["op"] == ">="
    ok = client.push_values({"nDCG@10": 0.9}, project=project, system="bm25", at="2026-03-01T00:00:00Z")
    assert ok["rules"][0]["status"] == "ok"
    bad = client.push_values({"nDCG@10": 0.8}, project=project, system="bm25", at="2026-03-02T00:00:00Z")
    assert bad["rules"][0]["status"] == "breach"
    assert bad["rules"][0]["alert"]["change"] == "fired"
    still = client.push_values({"nDCG@10": 0.7}, project=project, system="bm25", at="2026-03-03T00:00:00Z")
    assert still["rules"][0]["alert"]["change"] == "still firing"
    firing = client.alerts(project, state="firing")
    assert len(firing) == 1 and firing[0]["system"] == "bm25" and firing[0]["first_snapshot"] == bad["id"]
    # a backfill of an older day is checked but does not move the alert
    old = client.push_values({"nDCG@10": 0.95}, project=project, system="bm25", at="2026-02-01T00:00:00Z")
    assert old["rules"][0]["status"] == "ok" and old["rules"][0]["alert"] is None
    assert len(client.alerts(project, state="firing")) == 1
    fixed = client.push_values({"nDCG@10": 0.9}, project=project, system="bm25", at="2026-03-04T00:00:00Z")
    assert fixed["rules"][0]["alert"]["change"] == "resolved"
    assert client.alerts(project, state="firing") == []
    resolved = client.alerts(project, state="resolved")
    assert resolved[0]["resolved_at"] == "2026-03-04T00:00:00Z"
    overview = client.overview(project)
    assert overview["rules"][0]["status"] == {"bm25": "ok"}


def test_threshold_rule_per_segment_and_system(client: Any, project: str) -> None:
    client.add_rule(project, "AP >= 0.5", segment="books", system="dense")
    pq = {"q1": {"AP": 0.2}, "q2": {"AP": 0.3}, "q3": {"AP": 0.9}}
    segs = {"q1": "books", "q2": "books", "q3": "toys"}
    dense = client.push(eval_json(pq), project=project, system="dense", query_segments=segs)
    assert dense["segments"]["books"]["AP"] == pytest.approx(0.25)
    assert [r["status"] for r in dense["rules"]] == ["breach"]
    other = client.push(eval_json(pq), project=project, system="bm25", query_segments=segs)
    assert other["rules"] == []  # the rule is for system dense only


def test_window_rule(client: Any, project: str) -> None:
    client.add_rule(project, kind="window", measure="nDCG@10", window_days=7, max_drop=0.02, min_points=3)
    outs = [
        client.push_values({"nDCG@10": v}, project=project, system="s", at=f"2026-05-{d:02d}T00:00:00Z")
        for d, v in [(1, 0.80), (2, 0.81), (3, 0.79), (4, 0.795), (5, 0.75)]
    ]
    assert [o["rules"][0]["status"] for o in outs] == ["skipped", "skipped", "skipped", "ok", "breach"]
    assert "7-day mean 0.7988 over 4 snapshot(s)" in outs[-1]["rules"][0]["detail"]


def test_significance_rule_uses_paired_test(client: Any, project: str) -> None:
    client.add_rule(project, kind="significance", measure="AP", reference="control", alpha=0.05)
    base = {f"q{i}": {"AP": 0.5 + 0.02 * i} for i in range(20)}
    worse = {q: {"AP": v["AP"] - 0.1 - 0.001 * i} for i, (q, v) in enumerate(base.items())}
    same = {q: {"AP": v["AP"] + (0.01 if i % 2 else -0.01)} for i, (q, v) in enumerate(base.items())}
    ctl = client.push(eval_json(base), project=project, system="control", at="2026-06-01T00:00:00Z")
    assert ctl["rules"] == []  # the reference is not compared with itself
    out = client.push(eval_json(same), project=project, system="treat", at="2026-06-02T00:00:00Z")
    assert out["rules"][0]["status"] == "ok"
    out = client.push(eval_json(worse), project=project, system="treat", at="2026-06-03T00:00:00Z")
    assert out["rules"][0]["status"] == "breach"
    assert out["rules"][0]["value"] == pytest.approx(-0.1095, abs=1e-3)
    assert "p = " in out["rules"][0]["detail"]


def test_server_side_evaluation_against_a_stored_qrels_version(client: Any, project: str) -> None:
    import ranklens

    qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d6": 2.0, "d5": 1.0}}
    ds = client.add_dataset(project, "toy", "v1", qrels)
    assert ds["created"] is True and ds["num_judgements"] == 5
    assert client.add_dataset(project, "toy", "v1", qrels)["created"] is False
    snap = client.evaluate_run(run, project=project, system="bm25", dataset="toy", measures=["nDCG@10", "ndcg_cut.5", "P@1"])
    expected = ranklens.evaluate(qrels, run, ["nDCG@10", "nDCG@5", "P@1"])
    for m in ("nDCG@10", "nDCG@5", "P@1"):
        assert snap["values"][m] == pytest.approx(expected[m], abs=1e-12)
    assert snap["tags"]["dataset"] == "toy@v1"
    with pytest.raises(MonitorAPIError) as info:
        client.evaluate_run(run, project=project, system="bm25", dataset="nope", measures=["AP"])
    assert info.value.status == 404


def test_server_side_evaluation_gives_its_notes_as_data(client: Any, project: str) -> None:
    """The notes of a server-side evaluation come as data (kind, count, fields) beside their words: a page
    words them itself, nothing parses the text. By hand: q9 is a run query the qrels lack (1 row), q2 a qrels
    query the run lacks (skipped, the evaluator's default)."""
    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d4": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0}, "q9": {"d7": 1.0}}
    client.add_dataset(project, "notes", "v1", qrels)
    snap = client.evaluate_run(run, project=project, system="bm25", dataset="notes", measures=["P@1"])
    assert snap["note_data"] == [
        {"kind": "run_only_queries", "count": 1, "rows": 1},
        {"kind": "qrels_only_queries", "count": 1, "scored_zero": False},
    ]
    assert len(snap["notes"]) == 2 and "1 run query (1 rows) not in the qrels" in snap["notes"][0]


def test_pages_and_json_twins(server: ServerProcess, client: Any, project: str) -> None:
    pq = {f"q{i}": {"nDCG@10": 0.4 + 0.03 * i, "AP": 0.3 + 0.02 * i} for i in range(10)}
    segs = {f"q{i}": ("even" if i % 2 == 0 else "odd") for i in range(10)}
    client.add_rule(project, "nDCG@10 >= 0.5")
    a1 = client.push(eval_json(pq), project=project, system="A", at="2026-07-01T00:00:00Z", query_segments=segs, id="a1")
    pq2 = {q: {m: v + 0.05 for m, v in row.items()} for q, row in pq.items()}
    client.push(eval_json(pq2), project=project, system="B", at="2026-07-01T00:00:00Z", query_segments=segs, id="b1")
    pages = [
        ("/", "/api/v1/projects"),
        (f"/projects/{project}", f"/api/v1/projects/{project}"),
        (f"/projects/{project}/series?measure=AP&segment=odd", f"/api/v1/projects/{project}/series?measure=AP&segment=odd"),
        (f"/projects/{project}/segments", f"/api/v1/projects/{project}/segments"),
        (f"/projects/{project}/ab?a=B&b=A&measure=nDCG@10", f"/api/v1/projects/{project}/ab?a=B&b=A&measure=nDCG@10"),
        (f"/projects/{project}/snapshots", f"/api/v1/projects/{project}/snapshots"),
        (f"/projects/{project}/snapshots/b1?compare=a1", f"/api/v1/projects/{project}/snapshots/b1?compare=a1"),
        (f"/projects/{project}/alerts", f"/api/v1/projects/{project}/alerts"),
        ("/webhooks", "/api/v1/webhooks"),
    ]
    auth = {"Authorization": f"Bearer {TOKEN}"}  # /webhooks (the delivery log) needs the token
    for page, twin in pages:
        r = httpx.get(server.url + page, headers=auth)
        assert r.status_code == 200, (page, r.text[:300])
        assert r.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in r.headers["content-security-policy"]
        assert f'href="{twin.replace("&", "&amp;")}"' in r.text, page
        j = httpx.get(server.url + twin, headers=auth)
        assert j.status_code == 200 and j.headers["content-type"] == "application/json", twin
    ab = client.ab(project, "B", "A", "nDCG@10")
    assert ab["comparison"]["mean_difference"] == pytest.approx(0.05)
    assert ab["comparison"]["n"] == 10 and ab["comparison"]["wins"] == 10
    assert ab["comparison"]["p_value"] == 0.0 or ab["comparison"]["p_value"] < 1e-6
    series = client.series(project, "nDCG@10")
    assert {s["system"] for s in series["series"]} == {"A", "B"}
    assert series["thresholds"][0]["value"] == 0.5
    seg = httpx.get(server.url + f"/api/v1/projects/{project}/segments").json()
    assert {row["segment"] for row in seg["segments"]} == {"(all)", "even", "odd"}
    drill = client.snapshot(project, "b1", compare="a1")
    assert drill["changes"] and all(c["change"] == pytest.approx(0.05) for c in drill["changes"])
    assert a1["id"] == "a1"


def test_plotly_is_served_from_the_package(server: ServerProcess) -> None:
    r = httpx.get(server.url + "/static/plotly.min.js")
    assert r.status_code == 200 and len(r.content) > 1_000_000
    assert r.headers["content-type"].startswith("text/javascript")
    assert httpx.get(server.url + "/static/dashboard.js").status_code == 200


ERROR_CASES = [
    ("GET", "/api/v1/projects/no-such-project", None, 404),
    ("GET", "/api/v1/nothing-here", None, 404),
    ("GET", "/api/v1/projects/x/alerts?state=sleeping", None, None),
    ("POST", "/api/v1/projects/x/snapshots", b"not json", 422),
    ("POST", "/api/v1/projects/x/rules", b'{"expr": "nDCG@10 >> 3"}', 400),
    ("POST", "/api/v1/projects/x/rules", b'{"kind": "significance", "measure": "AP"}', 400),
    ("DELETE", "/api/v1/projects/x/rules/999999", None, 404),
    ("PUT", "/api/v1/projects", b"{}", 405),
    ("GET", "/api/v1/projects/x/series?measure=nope@@", None, 400),
    ("GET", "/api/v1/projects/x/snapshots?limit=0", None, None),
]


@pytest.mark.parametrize(("method", "path", "body", "status"), ERROR_CASES)
def test_one_json_error_shape(server: ServerProcess, method: str, path: str, body: bytes | None, status: int | None) -> None:
    r = httpx.request(
        method, server.url + path, content=body,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    assert r.status_code >= 400
    if status is not None:
        assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    doc = r.json()
    assert set(doc) == {"error"}
    err = doc["error"]
    assert set(err) <= {"status", "code", "message", "details"}
    assert err["status"] == r.status_code
    assert isinstance(err["code"], str) and err["code"]
    assert isinstance(err["message"], str) and err["message"]


def test_html_errors_are_pages(server: ServerProcess) -> None:
    r = httpx.get(server.url + "/projects/%3Cb%3Enope", headers={"Accept": "text/html"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "<b>nope" not in r.text and "&lt;b&gt;nope" in r.text


def test_read_protection(tmp_path: Path) -> None:
    srv = ServerProcess(f"sqlite:///{tmp_path / 'p.db'}", env={"RANKLENS_PROTECT_READS": "1"}).start()
    try:
        assert httpx.get(srv.url + "/api/v1/projects").status_code == 401
        assert httpx.get(srv.url + "/", headers={"Accept": "text/html"}).status_code == 401
        ok = httpx.get(srv.url + "/api/v1/projects", headers={"Authorization": f"Bearer {srv.token}"})
        assert ok.status_code == 200
        assert httpx.get(srv.url + "/api/v1/health").status_code == 200
        with httpx.Client(base_url=srv.url) as browser:
            bad = browser.post("/login", content=b"token=nope", headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert bad.status_code == 401
            good = browser.post("/login", content=f"token={srv.token}".encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert good.status_code == 303
            assert browser.get("/").status_code == 200
    finally:
        srv.stop()
