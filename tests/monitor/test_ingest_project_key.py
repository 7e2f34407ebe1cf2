"""Migration 0007: the production-log tables lost their foreign key to ``projects`` (a per-row check, half of
PostgreSQL's cost of a batch); what it did is kept: a project's logs go with it (a trigger), and a batch holds
the project's row so a concurrent delete cannot leave rows of a deleted project behind.

Counted by hand: every expectation is the rows the test itself wrote.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, text

from .conftest import backends, make_db_url


def _count(conn: Any, table: str, pid: int) -> int:
    return int(conn.execute(text(f"SELECT count(*) FROM {table} WHERE project_id = :p"), {"p": pid}).scalar())


@pytest.mark.parametrize("backend_name", backends())
def test_logs_survive_the_migration_and_go_with_their_project(backend_name: str, tmp_path: Path) -> None:
    from ranklens.monitor.db import Database, migrate

    url, pg = make_db_url(backend_name, tmp_path)
    try:
        db = Database(url)
        migrate(db.engine, "0006_position_bias_setting")
        with db.engine.begin() as c:
            for pid in (1, 2):
                c.execute(text("INSERT INTO projects (id, name, description, created_at) VALUES (:p, :n, '', CURRENT_TIMESTAMP)"),
                          {"p": pid, "n": f"p{pid}"})
                for k in range(3):
                    c.execute(text("INSERT INTO ingest_impressions (project_id, event_id, request, query, item, position, score, ts, "
                                   "segment, system, received) VALUES (:p, :e, 'r', 'q', :i, 1, 0.5, 0, 'all', 'all', 0)"),
                              {"p": pid, "e": f"i{k}", "i": f"d{k}"})
                c.execute(text("INSERT INTO ingest_events (project_id, event_id, request, item, event, ts, value, received) "
                               "VALUES (:p, 'e1', 'r', 'd1', 'click', 1, 1, 0)"), {"p": pid})
        db.migrate()
        for table in ("ingest_impressions", "ingest_events"):
            assert inspect(db.engine).get_foreign_keys(table) == []
        with db.engine.begin() as c:
            assert [_count(c, t, p) for t in ("ingest_impressions", "ingest_events") for p in (1, 2)] == [3, 3, 1, 1]
            c.execute(text("DELETE FROM projects WHERE id = 1"))
        with db.engine.begin() as c:
            assert [_count(c, t, p) for t in ("ingest_impressions", "ingest_events") for p in (1, 2)] == [0, 3, 0, 1]
        db.dispose()
    finally:
        if pg is not None:
            pg.drop()


@pytest.mark.parametrize("backend_name", [b for b in backends() if getattr(b, "values", (b,))[0] == "postgresql"])
def test_a_batch_holds_its_project_against_a_delete(backend_name: str, tmp_path: Path) -> None:
    """While a batch is stored, a DELETE of its project waits (here: gives up at its lock timeout); once the
    batch commits, the delete takes the batch's rows with it."""
    from sqlalchemy.exc import OperationalError

    from ranklens.monitor.db import Database
    from ranklens.monitor.ingest import store_batch, validate_batch

    url, pg = make_db_url(backend_name, tmp_path)
    try:
        db = Database(url)
        db.migrate()
        body = {"impressions": [{"id": f"i{k}", "request": "r", "query": "q", "item": f"d{k}", "position": 1 + k,
                                 "score": 1.0, "timestamp": 5} for k in range(4)]}
        db.write(lambda s: store_batch(s, "held", validate_batch(body)))  # the project exists
        stored, go_on = threading.Event(), threading.Event()
        refused: list[str] = []

        def batch(s: Any) -> Any:
            out = store_batch(s, "held", validate_batch({"impressions": [{**e, "id": e["id"] + "b"} for e in body["impressions"]]}))
            stored.set()
            go_on.wait(60)
            return out

        writer = threading.Thread(target=lambda: db.write(batch))
        writer.start()
        assert stored.wait(60)
        with db.engine.connect() as c:
            c.execute(text("SET lock_timeout = '300ms'"))
            try:
                c.execute(text("DELETE FROM projects WHERE name = 'held'"))
            except OperationalError as exc:
                refused.append(type(exc.orig).__name__)
        go_on.set()
        writer.join(60)
        assert refused == ["LockNotAvailable"]
        with db.engine.begin() as c:
            pid = c.execute(text("SELECT id FROM projects WHERE name = 'held'")).scalar()
            assert _count(c, "ingest_impressions", pid) == 8
            c.execute(text("DELETE FROM projects WHERE id = :p"), {"p": pid})
        with db.engine.begin() as c:
            assert c.execute(text("SELECT count(*) FROM ingest_impressions")).scalar() == 0
        db.dispose()
    finally:
        if pg is not None:
            pg.drop()
