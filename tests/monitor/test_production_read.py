"""Issue 29: how a refresh reads the stored logs and holds the store.

- The columnar read of a SQLite store (a child process with the ADBC driver, ``monitor/sqlite_columns.py``) gives
  the very frames the cursor gives, for one project among interleaved others; when it cannot run it falls back.
- ``refresh`` computes outside the write transaction: a writer (ingestion) is not held up by the computation, and a
  refresh whose computation fails stores nothing (not even the settings it was sent).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from ranklens.monitor import production, sqlite_columns
from ranklens.monitor.db import Database
from ranklens.monitor.errors import MonitorError
from ranklens.monitor.models import IngestImpression, ProductionSettings, Project, WindowValue

RULES = {"signals": {"click": "event"}, "grade": [{"grade": 1, "when": {"click": 0.5}}], "default_grade": 0}
T0 = 1767571200.0


def _store(path: Path, n: int = 3000) -> Database:
    """Two projects whose rows interleave (ids of one project have gaps), values that need all 17 digits."""
    db = Database(f"sqlite:///{path}")
    db.migrate()

    def fill(s: Any) -> None:
        a, b = Project(name="a"), Project(name="b")
        s.add_all([a, b])
        s.flush()
        conn = s.connection().connection.dbapi_connection
        rows = []
        for i in range(n):
            pid = a.id if i % 3 else b.id
            rows.append((f"i{i}", pid, f"r{i // 10}", f"q{i % 7}", f"d,\"{i % 50}\"\n", 1 + i % 10, 1 / (i + 3),
                         T0 + i * 0.1 + 1e-7, "é" if i % 2 else "s", "A" if i % 4 else "B", T0))
        conn.executemany("INSERT INTO ingest_impressions (event_id, project_id, request, query, item, position, score, ts, "
                         "segment, system, received) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        ev = [(f"e{i}", a.id, f"r{i // 10}", f"d,\"{i % 50}\"\n", "click", T0 + i * 0.1 + 5, 1.0 / 3, T0)
              for i in range(0, n, 4)]
        conn.executemany("INSERT INTO ingest_events (event_id, project_id, request, item, event, ts, value, received) "
                         "VALUES (?,?,?,?,?,?,?,?)", ev)
        s.add(ProductionSettings(project_id=a.id, rules='{"signals": {"click": "event"}, "grade": [{"grade": 1, "when": '
                                 '{"click": 0.5}}], "default_grade": 0}', window="1h", label_delay="1h",
                                 measures='["nDCG@10", "DCG@10"]'))

    db.write(fill)
    return db


def _frames(db: Database, pid: int, columnar: bool) -> tuple[Any, Any]:
    with db.read() as s:
        return production._frames(s, pid, columnar=columnar)


@pytest.mark.skipif(not sqlite_columns.available(), reason="adbc-driver-sqlite not installed (the monitor extra)")
def test_columnar_read_equals_the_cursor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _store(tmp_path / "m.db")
    calls: list[int] = []
    real = sqlite_columns.read_table

    def counted(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(-1 if out is None else out.num_rows)
        return out

    monkeypatch.setattr(sqlite_columns, "read_table", counted)
    monkeypatch.setattr(sqlite_columns, "MIN_ROWS", 10)
    monkeypatch.setattr(sqlite_columns, "_PART_ROWS", 300)  # several id ranges read at once, then joined in order
    for pid in (1, 2):
        cursor_imp, cursor_ev = _frames(db, pid, columnar=False)
        assert calls == []
        imp, ev = _frames(db, pid, columnar=True)
        assert imp.equals(cursor_imp) and ev.equals(cursor_ev)
        assert imp.schema == cursor_imp.schema and ev.schema == cursor_ev.schema
        assert calls.pop(0) == cursor_imp.height  # the child read the impressions ...
        if cursor_ev.height >= 10:
            assert calls.pop(0) == cursor_ev.height  # ... and the events, when there are enough
        calls.clear()
    # the interleaved project: 1,000 of 3,000 rows, read in id order with its own values only
    imp, _ = _frames(db, 2, columnar=True)
    assert imp.height == 1000 and imp["request"].head(2).to_list() == ["r0", "r0"]
    assert imp["score"].head(2).to_list() == [1 / 3, 1 / 6]


def test_the_columnar_read_falls_back_to_the_cursor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    db = _store(tmp_path / "m.db", n=600)
    expected = _frames(db, 1, columnar=False)
    monkeypatch.setattr(sqlite_columns, "MIN_ROWS", 10)
    monkeypatch.setattr(sqlite_columns, "available", lambda: True)
    monkeypatch.setattr(sqlite_columns.sys, "executable", str(tmp_path / "no-python"))  # the child cannot start
    with caplog.at_level(logging.WARNING, logger="ranklens.monitor"):
        imp, ev = _frames(db, 1, columnar=True)
    assert imp.equals(expected[0]) and ev.equals(expected[1])
    assert "reading through the cursor" in caplog.text


@pytest.mark.skipif(not sqlite_columns.available(), reason="adbc-driver-sqlite not installed (the monitor extra)")
def test_a_child_answering_other_types_is_not_trusted(tmp_path: Path) -> None:
    import pyarrow as pa

    db = _store(tmp_path / "m.db", n=100)
    sql = "SELECT request, score FROM ingest_impressions WHERE +project_id = ? AND id > ? AND id <= ? ORDER BY id"
    wanted = pa.schema([("request", pa.string()), ("score", pa.float64())])
    got = sqlite_columns.read_table(str(tmp_path / "m.db"), sql, 1, 0, 10**9, 100, wanted)
    assert got is not None and got.schema == wanted and got.num_rows == 66
    # the strings of `request` are not integers: the cast refuses and the caller reads through its cursor
    assert sqlite_columns.read_table(str(tmp_path / "m.db"), sql, 1, 0, 10**9, 100,
                                     pa.schema([("request", pa.int64()), ("score", pa.float64())])) is None
    db.dispose()


def test_refresh_computes_outside_the_write_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _store(tmp_path / "m.db", n=600)
    computing, release = threading.Event(), threading.Event()
    real = production._compute

    def slow(*args: Any, **kwargs: Any) -> Any:
        computing.set()
        assert release.wait(120), "the writer never finished while the refresh computed"
        return real(*args, **kwargs)

    monkeypatch.setattr(production, "_compute", slow)
    out: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: out.update(production.refresh(db, "a")))
    worker.start()
    assert computing.wait(120)

    def ingest(s: Any) -> None:
        s.add(IngestImpression(project_id=2, event_id="late", request="z", query="z", item="z", position=1, score=0.0,
                               ts=T0, segment="s", system="A", received=T0))

    db.write(ingest, retries=0)  # a write transaction inside the refresh's computation: not held up by it
    release.set()
    worker.join(120)
    assert not worker.is_alive() and out["windows"] > 0 and out["added"] == out["windows"]
    with db.read() as s:
        assert s.query(WindowValue).count() == out["windows"]


def test_a_failed_refresh_stores_nothing(tmp_path: Path) -> None:
    db = _store(tmp_path / "m.db", n=600)
    with pytest.raises(MonitorError, match="not the start of a window"):  # found only by the computation
        production.refresh(db, "a", {"reference_window": "2031-01-01", "window": "1d"})
    with db.read() as s:
        settings = s.get(ProductionSettings, 1)
        assert settings is not None and settings.window == "1h" and s.query(WindowValue).count() == 0
    assert production.refresh(db, "a", {"window": "1d"})["windows"] > 0
    with db.read() as s:
        assert s.get(ProductionSettings, 1).window == "1d"  # type: ignore[union-attr]
