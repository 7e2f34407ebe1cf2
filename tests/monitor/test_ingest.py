"""Issue 29: production logs into the monitor's store (``POST/GET /api/v1/projects/{p}/ingest``, ``ranklens ingest``).

Every expectation is counted by hand from the batch the test sends.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from .conftest import TOKEN, ServerProcess, backends, in_process_app

AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = 1767607200  # 2026-01-05T10:00:00Z


def _imp(i: int, request: str, item: str, pos: int, ts: float = T0, **kw: Any) -> dict[str, Any]:
    return {"id": f"i{i}", "request": request, "query": "q", "item": item, "position": pos, "score": 1.0 / pos,
            "timestamp": ts, **kw}


def _ev(i: int, request: str, item: str, ts: float, **kw: Any) -> dict[str, Any]:
    return {"id": f"e{i}", "request": request, "item": item, "event": "click", "timestamp": ts, **kw}


@pytest.fixture(scope="module", params=backends())
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with in_process_app(request.param, tmp_path_factory.mktemp("ingest"), max_body=200_000) as c:
        yield c


def test_events_are_validated_one_by_one(app: Any) -> None:
    body = {
        "impressions": [
            _imp(1, "r1", "a", 1), _imp(2, "r1", "b", 2),
            {**_imp(3, "r1", "c", 3), "position": 0},           # refused: position
            {**_imp(4, "r1", "d", 4), "score": "NaN"},          # refused: score
            {k: v for k, v in _imp(5, "r1", "e", 5).items() if k != "item"},  # refused: item missing
            _imp(1, "r1", "a", 1),                              # repeated id within the batch
            "not an object",
        ],
        "events": [_ev(1, "r1", "b", T0 + 60), {**_ev(2, "r1", "a", T0 + 5), "timestamp": "soon"}, _ev(3, "r9", "z", T0 + 9)],
    }
    r = app.post("/api/v1/projects/logs/ingest", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["impressions"] == {"received": 7, "stored": 2, "duplicates": 1, "rejected": 4}
    assert out["events"] == {"received": 3, "stored": 2, "duplicates": 0, "rejected": 1, "unmatched": 1, "clock_skew": 0}
    assert [(x["kind"], x["index"], x["id"], x["field"]) for x in out["rejected"]] == [
        ("impression", 2, "i3", "position"), ("impression", 3, "i4", "score"), ("impression", 4, "i5", "item"),
        ("impression", 6, None, ""), ("event", 1, "e2", "timestamp"),
    ]
    assert out["rejected"][2]["reason"] == "missing"
    # idempotent by id: the same batch again stores nothing
    again = app.post("/api/v1/projects/logs/ingest", json=body, headers=AUTH).json()
    assert again["impressions"]["stored"] == 0 and again["impressions"]["duplicates"] == 3
    assert again["events"]["stored"] == 0 and again["events"]["duplicates"] == 2
    status = app.get("/api/v1/projects/logs/ingest", headers=AUTH).json()
    assert (status["impressions"], status["events"], status["requests"]) == (2, 2, 1)


def test_write_guards_apply(app: Any) -> None:
    assert app.post("/api/v1/projects/g/ingest", json={"events": []}).status_code == 401
    wrong = app.post("/api/v1/projects/g/ingest", json={"events": []}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    big = {"impressions": [_imp(i, f"r{i}", "a", 1) for i in range(2000)]}  # > 200,000 bytes
    r = app.post("/api/v1/projects/g/ingest", json=big, headers=AUTH)
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    r = app.post("/api/v1/projects/g/ingest", json={"clicks": []}, headers=AUTH)
    assert r.status_code == 400 and "impressions" in r.json()["error"]["message"]
    r = app.post("/api/v1/projects/g/ingest", content=b"{not json", headers={**AUTH, "content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("the body is not JSON")


def test_pending_orphan_and_clock_skew_counts(app: Any) -> None:
    day = 86400
    body = {
        "impressions": [_imp(1, "r1", "a", 1, T0), _imp(2, "r1", "b", 2, T0), _imp(3, "r2", "a", 1, T0 + 3 * day)],
        "events": [
            _ev(1, "r1", "a", T0 + 30),          # matched
            _ev(2, "r1", "b", T0 - 30),          # matched, before its impression: clock skew
            _ev(3, "rx", "a", T0 + 60),          # no impression, 3 days before the latest time: orphan (24h delay)
            _ev(4, "ry", "a", T0 + 3 * day - 60),  # no impression, within 24 h of the latest time: pending
        ],
    }
    out = app.post("/api/v1/projects/counts/ingest", json=body, headers=AUTH).json()
    assert out["events"]["unmatched"] == 2 and out["events"]["clock_skew"] == 1
    status = app.get("/api/v1/projects/counts/ingest", headers=AUTH).json()
    assert (status["pending_events"], status["orphan_events"], status["clock_skew_events"]) == (1, 1, 1)
    assert status["as_of"] == "2026-01-08T10:00:00Z" and status["first"] == "2026-01-05T10:00:00Z"
    assert sum(t["impressions"] for t in status["throughput"]) == 3 and sum(t["events"] for t in status["throughput"]) == 4
    # the impression of the pending event arrives: it is matched, nothing pending is left
    app.post("/api/v1/projects/counts/ingest", json={"impressions": [_imp(9, "ry", "a", 1, T0 + 3 * day - 120)]}, headers=AUTH)
    assert app.get("/api/v1/projects/counts/ingest", headers=AUTH).json()["pending_events"] == 0
    assert app.get("/api/v1/projects/nosuch/ingest", headers=AUTH).status_code == 404


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("ingest-cli") / "c.db"
    srv = ServerProcess(f"sqlite:///{db}").start()
    try:
        yield srv
    finally:
        srv.stop()


def test_cli_ingest_reload_stores_nothing_twice(server: ServerProcess, tmp_path: Path) -> None:
    from ranklens.cli.main import cli

    imp = tmp_path / "imp.csv.gz"
    with gzip.open(imp, "wt") as fh:
        fh.write("req,query,item,position,score,timestamp,segment\n")
        for r in range(30):
            for p in range(1, 4):
                fh.write(f"r{r},q{r % 5},d{p},{p},{1 / p},2026-01-05T10:{r:02d}:00Z,{'books' if r % 2 else 'toys'}\n")
    ev = tmp_path / "ev.jsonl"
    ev.write_text("".join(json.dumps({"request": f"r{r}", "item": "d1", "event": "click", "timestamp": T0 + 60 * r + 5}) + "\n"
                          for r in range(30)))
    args = ["ingest", str(imp), str(ev), "--project", "cli", "--url", server.url, "--token", TOKEN, "--batch", "7",
            "--impressions-columns", "request=req"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "90 impressions read, 90 stored" in first.output and "30 events read, 30 stored" in first.output
    second = CliRunner().invoke(cli, args)
    assert "90 impressions read, 0 stored, 90 already stored" in second.output
    with server.client() as c:
        status = c.ingest_status("cli")
    assert (status["impressions"], status["events"], status["requests"], status["clock_skew_events"]) == (90, 30, 30, 0)


def test_cli_ingest_names_refused_rows(server: ServerProcess, tmp_path: Path) -> None:
    from ranklens.cli.main import cli

    imp = tmp_path / "imp.tsv"
    imp.write_text("request\tquery\titem\tposition\tscore\ttimestamp\n"
                   "r1\tq\ta\t1\t0.5\t1767607200\nr1\tq\tb\ttwo\t0.4\t1767607200\nr1\tq\tc\t3\t0.3\tlater\n")
    res = CliRunner().invoke(cli, ["ingest", str(imp), "--project", "bad", "--url", server.url, "--token", TOKEN])
    assert res.exit_code == 2
    assert f"{imp}: row 2: position: expected a number; got 'two'" in res.output
    assert f"{imp}: row 3: timestamp: expected an ISO 8601 time or epoch seconds; got 'later'" in res.output
    assert "3 impressions read, 1 stored, 0 already stored, 2 refused" in res.output


@pytest.mark.parametrize("when", [1e18, -1, "0001-01-01T00:00:00Z", float("inf")])
def test_times_out_of_range_are_refused(app: Any, when: Any) -> None:
    """Found by the schema fuzzer: a time past year 9999 was stored and the status route failed on it."""
    body = json.dumps({"events": [_ev(1, "r1", "a", 0) | {"timestamp": when}]}, allow_nan=True)
    r = app.post("/api/v1/projects/times/ingest", content=body, headers={**AUTH, "content-type": "application/json"})
    assert r.status_code in (200, 400), r.text
    if r.status_code == 200:  # infinity is not JSON: a parser may refuse the body instead (400)
        (refusal,) = r.json()["rejected"]
        assert refusal["field"] == "timestamp" and "between 1970-01-01 and 9999-12-31" in refusal["reason"]
    assert app.get("/api/v1/projects/times/ingest", headers=AUTH).status_code in (200, 404)


def _stored(app: Any, project: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    from sqlalchemy import select

    from ranklens.monitor.models import IngestEvent, IngestImpression, Project

    i, e = IngestImpression, IngestEvent
    with app.app.state.db.read() as s:
        pid = s.scalar(select(Project.id).where(Project.name == project))
        imps = s.execute(select(i.event_id, i.request, i.query, i.item, i.position, i.score, i.ts, i.segment, i.system)
                         .where(i.project_id == pid).order_by(i.id)).all()
        evs = s.execute(select(e.event_id, e.request, e.item, e.event, e.ts, e.value).where(e.project_id == pid).order_by(e.id)).all()
    return [tuple(r) for r in imps], [tuple(r) for r in evs]


def test_texts_are_stored_exactly(app: Any) -> None:
    """Tabs, newlines, carriage returns and backslashes (COPY's escapes on PostgreSQL), quotes and non-ASCII text
    come back as sent, with every number; the batch takes the column path and the one-by-one path alike."""
    # (the requests hold backslashes and nothing else COPY escapes: a column is escaped on its own)
    odd = ["a\tb", "line\nbreak", "cr\rhere", "back\\slash", "\\N", "\\.", "quote'\"", "ünïcødé ✓", "𝄞", " "]
    imps = [_imp(k, f"r\\{k}", f"{odd[k]}-item", 1 + k, T0 + k * 0.25, query=odd[(k + 1) % 10], segment=odd[(k + 2) % 10],
                 system=odd[(k + 3) % 10]) | {"score": [0.1, 1e-300, 1.7976931348623157e308, -2.5, 3][k % 5]} for k in range(10)]
    evs = [_ev(k, f"r\\{k}", f"{odd[k]}-item", T0 + k - 0.5, event=odd[k], value=[1, 0.3, -7.25][k % 3]) for k in range(10)]
    imps[4]["position"] = "5"  # a string position: accepted one by one only (the impressions take the slow path)
    out = app.post("/api/v1/projects/texts/ingest", json={"impressions": imps, "events": evs}, headers=AUTH).json()
    assert out["impressions"]["stored"] == 10 and out["events"]["stored"] == 10
    # every event matches its impression; those before it (k - 0.5 < k * 0.25: k = 0) are in clock skew
    assert out["events"]["unmatched"] == 0 and out["events"]["clock_skew"] == sum(k - 0.5 < k * 0.25 for k in range(10))
    got_imps, got_evs = _stored(app, "texts")
    assert got_imps == [(x["id"], x["request"], x["query"], x["item"], int(x["position"]), float(x["score"]),
                         float(x["timestamp"]), x["segment"], x["system"]) for x in imps]
    assert got_evs == [(x["id"], x["request"], x["item"], x["event"], float(x["timestamp"]), float(x["value"])) for x in evs]


def test_matching_reads_stored_and_new_impressions(app: Any) -> None:
    """An event is matched with the earliest of its impressions, stored in an earlier batch or in its own;
    a repeated impression id (not stored again) does not count as shown."""
    first = {"impressions": [_imp(1, "r1", "a", 1, T0 + 100), _imp(2, "r2", "a", 1, T0 + 100)]}
    assert app.post("/api/v1/projects/match/ingest", json=first, headers=AUTH).json()["impressions"]["stored"] == 2
    body = {
        "impressions": [
            _imp(3, "r1", "a", 1, T0 + 10),    # the same request and item shown earlier: the earliest counts
            _imp(4, "r3", "b", 1, T0 + 50),    # new in this batch
            _imp(2, "r4", "c", 1, T0),         # id i2 is stored already (other content): a duplicate, not shown
        ],
        "events": [
            _ev(1, "r1", "a", T0 + 20),        # after T0 + 10 (this batch), before T0 + 100 (stored): no skew
            _ev(2, "r2", "a", T0 + 20),        # before its stored impression: skew
            _ev(3, "r3", "b", T0 + 40),        # before its impression of this batch: skew
            _ev(4, "r4", "c", T0 + 40),        # only the refused duplicate shows r4/c: unmatched
            _ev(5, "r5", "x", T0 + 40),        # unmatched
            _ev(6, "r3", "b", T0 + 50),        # at the very time of its impression: no skew
        ],
    }
    out = app.post("/api/v1/projects/match/ingest", json=body, headers=AUTH).json()
    assert out["impressions"] == {"received": 3, "stored": 2, "duplicates": 1, "rejected": 0}
    assert out["events"] == {"received": 6, "stored": 6, "duplicates": 0, "rejected": 0, "unmatched": 2, "clock_skew": 2}
    again = app.post("/api/v1/projects/match/ingest", json=body, headers=AUTH).json()  # everything stored now
    assert again["events"] == {"received": 6, "stored": 0, "duplicates": 6, "rejected": 0, "unmatched": 2, "clock_skew": 2}


def test_concurrent_overlapping_batches_store_each_id_once(app: Any) -> None:
    """Two writers send batches whose ids overlap (in opposite orders, so they may also deadlock and be
    retried): each id is stored once, and the batches' "stored" counts add up to the distinct ids."""
    import threading

    from ranklens.monitor.ingest import store_batch, validate_batch

    db = app.app.state.db
    ids = list(range(300))
    batches = [[ids[k : k + 60] for k in range(0, 300, 30)], [ids[k : k + 60][::-1] for k in range(240, -30, -30)]]
    stored: list[int] = []
    failures: list[BaseException] = []

    def writer(mine: list[list[int]]) -> None:
        try:
            for part in mine:
                body = validate_batch({"impressions": [_imp(i, f"r{i // 10}", f"d{i}", 1 + i % 10) for i in part]})
                out = db.write(lambda s, body=body: store_batch(s, "overlap", body))
                stored.append(out["impressions"]["stored"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
    assert len(stored) == len(batches[0]) + len(batches[1]) and sum(stored) == 300
    got_imps, _ = _stored(app, "overlap")
    assert sorted(r[0] for r in got_imps) == sorted(f"i{i}" for i in ids)
