"""Under load and under a crash, against a real server on loopback (SQLite; PostgreSQL with RANKLENS_TEST_PG_URL).

* Load: 20 concurrent clients push 5,000 snapshots (plus 5% repeated ids): every snapshot is stored exactly
  once, the rule is checked for each, no request fails. Throughput and latency are printed (and written to
  ``load-<backend>.json`` in the artifacts folder), never asserted.
* Crash: the server is SIGKILLed while clients push; after a restart on the same database every
  acknowledged snapshot is there, complete, and pushing everything again stores nothing twice.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, func, select, text

from ranklens.monitor.models import Project, RuleCheck, Snapshot, SnapshotValue

from .conftest import TOKEN, ServerProcess, backends, make_db_url

CLIENTS = 20
SNAPSHOTS = 5_000
REPEAT_EVERY = 20  # every 20th request repeats an earlier id: 5% replays


def _body(cid: str, system: str, day: int, k: int) -> dict[str, Any]:
    v = 0.45 + ((k * 37) % 20) / 100.0  # crosses the 0.5 threshold now and then
    return {
        "id": cid,
        "system": system,
        "at": f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{k % 24:02d}:{k % 60:02d}:00Z",
        "values": {"nDCG@10": v, "AP": v - 0.1},
        "segments": {"books": {"nDCG@10": v + 0.01}, "toys": {"nDCG@10": v - 0.01}},
        "tags": {"client": system},
    }


def _counts(db_url: str, project: str) -> dict[str, int]:
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as c:
            pid = c.scalar(select(Project.id).where(Project.name == project))
            snaps = c.scalar(select(func.count()).select_from(Snapshot).where(Snapshot.project_id == pid))
            distinct = c.scalar(select(func.count(func.distinct(Snapshot.client_id))).where(Snapshot.project_id == pid))
            checks = c.scalar(
                select(func.count()).select_from(RuleCheck).join(Snapshot, Snapshot.id == RuleCheck.snapshot_id).where(Snapshot.project_id == pid)
            )
            checked = c.scalar(
                select(func.count(func.distinct(RuleCheck.snapshot_id))).join(Snapshot, Snapshot.id == RuleCheck.snapshot_id).where(Snapshot.project_id == pid)
            )
            values = c.scalar(
                select(func.count()).select_from(SnapshotValue).join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id).where(Snapshot.project_id == pid)
            )
            return {"snapshots": snaps or 0, "distinct": distinct or 0, "checks": checks or 0, "checked": checked or 0, "values": values or 0}
    finally:
        engine.dispose()


@pytest.mark.load
@pytest.mark.parametrize("backend_name", backends())
def test_load_20_clients_5000_snapshots(backend_name: str, tmp_path: Path, artifacts_dir: Path) -> None:
    url, pg = make_db_url(backend_name, tmp_path)
    srv = ServerProcess(url).start()
    project = "load"
    try:
        with srv.client() as c:
            c.add_rule(project, "nDCG@10 >= 0.5")
        latencies: list[float] = []
        errors: list[str] = []
        created = [0]
        replays = [0]
        lock = threading.Lock()
        per_client = SNAPSHOTS // CLIENTS
        start = threading.Barrier(CLIENTS)

        def worker(n: int) -> None:
            mine: list[float] = []
            made = again = 0
            with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
                start.wait()
                sent: list[dict[str, Any]] = []
                k = 0
                while made < per_client:
                    if sent and k % REPEAT_EVERY == REPEAT_EVERY - 1:
                        body = sent[(k * 7) % len(sent)]
                    else:
                        body = _body(f"c{n}-{made}", f"sys-{n % 5}", made % 300, n * 1000 + made)
                    k += 1
                    t0 = time.perf_counter()
                    r = http.post(f"/api/v1/projects/{project}/snapshots", json=body)
                    mine.append(time.perf_counter() - t0)
                    if r.status_code == 201:
                        made += 1
                        sent.append(body)
                    elif r.status_code == 200 and r.json()["created"] is False:
                        again += 1
                    else:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                        return
            with lock:
                latencies.extend(mine)
                created[0] += made
                replays[0] += again

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(CLIENTS)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        elapsed = time.perf_counter() - t0
        assert not errors, errors[:5]
        assert created[0] == SNAPSHOTS
        counts = _counts(url, project)
        assert counts["snapshots"] == SNAPSHOTS and counts["distinct"] == SNAPSHOTS  # stored exactly once
        # the rule checked for each, on all queries and in both segments (a rule without a segment checks every one)
        assert counts["checks"] == 3 * SNAPSHOTS and counts["checked"] == SNAPSHOTS
        assert counts["values"] == SNAPSHOTS * 4
        lat = sorted(latencies)
        report = {
            "backend": backend_name,
            "clients": CLIENTS,
            "snapshots": SNAPSHOTS,
            "requests": len(lat),
            "replays": replays[0],
            "seconds": round(elapsed, 2),
            "snapshots_per_s": round(SNAPSHOTS / elapsed, 1),
            "requests_per_s": round(len(lat) / elapsed, 1),
            "p50_ms": round(1000 * lat[len(lat) // 2], 1),
            "p95_ms": round(1000 * lat[int(len(lat) * 0.95)], 1),
            "p99_ms": round(1000 * lat[int(len(lat) * 0.99)], 1),
            "mean_ms": round(1000 * statistics.fmean(lat), 1),
        }
        (artifacts_dir / f"load-{backend_name}.json").write_text(json.dumps(report, indent=2))
        print(f"\nload test ({backend_name}): {report}")
    finally:
        srv.stop()
        if pg is not None:
            pg.drop()


@pytest.mark.parametrize("backend_name", backends())
def test_kill_mid_ingest_loses_nothing_acknowledged(backend_name: str, tmp_path: Path) -> None:
    url, pg = make_db_url(backend_name, tmp_path)
    srv = ServerProcess(url).start()
    project = "crash"
    acked: dict[str, dict[str, Any]] = {}
    attempted: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    stop = threading.Event()
    try:
        with srv.client() as c:
            c.add_rule(project, "nDCG@10 >= 0.5")

        def worker(n: int) -> None:
            with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
                for i in range(10_000):
                    if stop.is_set():
                        return
                    body = _body(f"k{n}-{i}", f"sys-{n}", i % 300, i)
                    with lock:
                        attempted[body["id"]] = body
                    try:
                        r = http.post(f"/api/v1/projects/{project}/snapshots", json=body)
                    except httpx.HTTPError:
                        return  # the server died under us
                    if r.status_code == 201:
                        with lock:
                            acked[body["id"]] = body

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while len(acked) < 150 and time.monotonic() < deadline:
            time.sleep(0.02)
        srv.kill()  # SIGKILL mid-ingest
        stop.set()
        for t in threads:
            t.join(timeout=30)
        assert len(acked) >= 150
        srv = ServerProcess(url).start()
        counts = _counts(url, project)
        # every acknowledged snapshot survived, with all its values and its rule check
        assert counts["snapshots"] >= len(acked)
        assert counts["values"] == counts["snapshots"] * 4 and counts["checks"] == counts["snapshots"] * 3  # (all, books, toys)
        with srv.client(retries=0) as c:
            for cid in list(acked)[:: max(1, len(acked) // 25)]:
                snap = c.snapshot(project, cid)
                assert snap["id"] == cid and len(snap["values"]) == 3
        # pushing everything again (the in-flight ones included) stores each exactly once
        with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            for cid, body in attempted.items():
                r = http.post(f"/api/v1/projects/{project}/snapshots", json=body)
                assert r.status_code in (200, 201), r.text
                if cid in acked:
                    assert r.status_code == 200 and r.json()["created"] is False
        after = _counts(url, project)
        assert after["snapshots"] == after["distinct"] == len(attempted)
        if backend_name == "sqlite":
            engine = create_engine(url)
            with engine.connect() as conn:
                assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            engine.dispose()
    finally:
        stop.set()
        srv.stop()
        if pg is not None:
            pg.drop()


def _ingest_counts(db_url: str, project: str) -> tuple[int, int, set[str]]:
    from ranklens.monitor.models import IngestEvent, IngestImpression

    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as c:
            pid = c.scalar(select(Project.id).where(Project.name == project))
            ids = set(c.scalars(select(IngestImpression.event_id).where(IngestImpression.project_id == pid)))
            n_imp = c.scalar(select(func.count()).select_from(IngestImpression).where(IngestImpression.project_id == pid)) or 0
            n_ev = c.scalar(select(func.count()).select_from(IngestEvent).where(IngestEvent.project_id == pid)) or 0
            return int(n_imp), int(n_ev), ids
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend_name", backends())
def test_kill_mid_log_ingest_loses_nothing_acknowledged(backend_name: str, tmp_path: Path) -> None:
    """Production-log batches (issue 29): after a SIGKILL every acknowledged impression and event is stored,
    and sending every attempted batch again stores each exactly once."""
    url, pg = make_db_url(backend_name, tmp_path)
    srv = ServerProcess(url).start()
    project = "crash-logs"
    acked: list[dict[str, Any]] = []
    attempted: list[dict[str, Any]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def batch(n: int, i: int) -> dict[str, Any]:
        imps = [{"id": f"i{n}-{i}-{k}", "request": f"r{n}-{i}-{k // 10}", "query": f"q{k % 7}", "item": f"d{k % 10}",
                 "position": 1 + k % 10, "score": 1.0 / (1 + k % 10), "timestamp": 1767607200 + i} for k in range(200)]
        evs = [{"id": f"e{n}-{i}-{k}", "request": f"r{n}-{i}-{k}", "item": "d0", "event": "click",
                "timestamp": 1767607260 + i} for k in range(20)]
        return {"impressions": imps, "events": evs}

    try:
        def worker(n: int) -> None:
            with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
                for i in range(10_000):
                    if stop.is_set():
                        return
                    body = batch(n, i)
                    with lock:
                        attempted.append(body)
                    try:
                        r = http.post(f"/api/v1/projects/{project}/ingest", json=body)
                    except httpx.HTTPError:
                        return
                    if r.status_code == 200:
                        with lock:
                            acked.append(body)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while len(acked) < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
        srv.kill()
        stop.set()
        for t in threads:
            t.join(timeout=30)
        assert len(acked) >= 40
        srv = ServerProcess(url).start()
        n_imp, n_ev, ids = _ingest_counts(url, project)
        acked_ids = {e["id"] for b in acked for e in b["impressions"]}
        assert acked_ids <= ids  # every acknowledged impression survived
        # a batch is one transaction: stored whole or not at all
        assert n_imp % 200 == 0 and n_ev == n_imp // 10
        with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            for body in attempted:
                r = http.post(f"/api/v1/projects/{project}/ingest", json=body)
                assert r.status_code == 200, r.text
        n_imp, n_ev, ids = _ingest_counts(url, project)
        assert n_imp == len(ids) == 200 * len(attempted) and n_ev == 20 * len(attempted)
    finally:
        stop.set()
        srv.stop()
        if pg is not None:
            pg.drop()
