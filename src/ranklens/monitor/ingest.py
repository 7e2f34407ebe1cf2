"""Ingesting production logs into the store: impressions and engagement events, one batch per request.

Every event of a batch is validated on its own (:mod:`ranklens.production.events`); a bad one is answered
with its kind, index, id, field and reason and counted, the others are stored. A batch whose events are all
plainly valid is checked a column at a time instead (:mod:`ranklens.production.columns`, the same verdict at
about half the cost); any other goes event by event, which names each refusal. Storage is idempotent by event
id within the project (an id already stored, or seen earlier in the batch, is a duplicate: counted, not
stored again), and the batch is one transaction: acknowledged means committed.

The status (:func:`ingest_status`) counts the engagement events whose impression is not (yet) stored:
*pending* while their label window may still see the impression arrive (event time + label delay after the
latest time in the log), *orphans* after; and *clock skew*: events before their impression.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from sqlalchemy import Table, and_, exists, func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from ranklens.monitor.errors import MonitorError, NotFound, PayloadTooLarge
from ranklens.monitor.models import IngestEvent, IngestImpression, ProductionSettings, Project
from ranklens.production.columns import event_columns, impression_columns
from ranklens.production.events import iso_time as _iso
from ranklens.production.events import validate_event, validate_impression

__all__ = ["DEFAULT_LABEL_DELAY", "MAX_BATCH", "Batch", "ingest_batch", "ingest_status", "store_batch", "validate_batch"]

#: the most events (impressions + engagement) one request may carry
MAX_BATCH = 50_000
DEFAULT_LABEL_DELAY = "24h"
_IN_CHUNK = 500  # ids per IN (...) lookup: well inside SQLite's and PostgreSQL's parameter limits

_IMP_COLUMNS = ("event_id", "request", "query", "item", "position", "score", "ts", "segment", "system")
_EV_COLUMNS = ("event_id", "request", "item", "event", "ts", "value")
_IMP_NAMES = ", ".join(("project_id", *_IMP_COLUMNS, "received"))  # as COPY and INSERT name them
_EV_NAMES = ", ".join(("project_id", *_EV_COLUMNS, "received"))


def _table(model: Any) -> Table:
    return model.__table__  # type: ignore[no-any-return]


@dataclass
class Rows:
    """The valid events of one kind in a batch, as columns in the stored order (ids unique within the batch)."""

    columns: tuple[list[Any], ...]

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def _validated(kind: str, events: Any, check: Any, columns: Any) -> tuple[Rows, list[dict[str, Any]], int]:
    """The valid events (the first of a repeated id), the rejections, the repeats within the batch. A batch
    whose every event is plainly valid and whose ids are distinct is checked a column at a time
    (:mod:`ranklens.production.columns`); any other goes event by event, which names each refusal."""
    if events is None:
        return Rows(()), [], 0
    if not isinstance(events, list):
        raise MonitorError(f"'{kind}s' must be a list of objects; got {type(events).__name__}")
    cols = columns(events)
    if cols is not None and len(set(cols[0])) == len(cols[0]):
        return Rows(cols), [], 0
    rows: dict[str, tuple[Any, ...]] = {}
    rejected: list[dict[str, Any]] = []
    repeats = 0
    for i, event in enumerate(events):
        row, bad = check(event, i)
        if bad is not None:
            rejected.append(bad.to_dict())
        elif row is not None:
            if row[0] in rows:
                repeats += 1
            else:
                rows[row[0]] = row
    return Rows(tuple(map(list, zip(*rows.values())))), rejected, repeats


def _store_sqlite(s: Session, model: Any, columns: tuple[str, ...], project_id: int, rows: Rows, now: float) -> int:
    """Insert the rows whose id is not stored yet (``ON CONFLICT DO NOTHING``, so a concurrent writer's row
    wins quietly); the number inserted. The rows go to the driver's ``executemany`` as tuples zipped from the
    columns (building a SQLAlchemy parameter set per row cost more than the insert itself)."""
    if not rows:
        return 0
    table = _table(model).name
    names = ("project_id", *columns, "received")
    sql = (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
           "ON CONFLICT (project_id, event_id) DO NOTHING")
    n = len(rows)
    cursor = s.connection().exec_driver_sql(sql, list(zip(repeat(project_id, n), *rows.columns, repeat(now, n))))
    return int(cursor.rowcount)  # SQLite counts the rows executemany inserted (the ignored ones are not counted)


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(project_id: int, rows: Rows, now: float) -> str:
    """The rows in COPY's text format (tab-separated, one line a row; backslash, tab, newline and carriage
    return escaped), built a column at a time. Texts never hold NUL (validation refuses it), so a column
    joined by NUL is escaped in one pass and split back."""
    out: list[list[str]] = []
    for col in rows.columns:
        if type(col[0]) is str:
            joined = "\x00".join(col)
            if "\\" in joined or "\t" in joined or "\n" in joined or "\r" in joined:
                col = joined.translate(_COPY_ESCAPES).split("\x00")
            out.append(col)
        else:  # positions (int) and finite floats: repr round-trips exactly
            out.append(list(map(repr, col)))
    n = len(rows)
    return "\n".join(map("\t".join, zip(repeat(str(project_id), n), *out, repeat(repr(now), n)))) + "\n"


def _store_postgresql(s: Session, project_id: int, batch: Batch, now: float) -> tuple[int, int, int, int]:
    """Store a batch on PostgreSQL: impressions stored, events stored, events unmatched, events in clock skew.

    The impressions are COPYed (text built a column at a time, :func:`_copy_text`) straight into the store
    under a savepoint: a batch of new ids, the usual case, is stored by that alone. If an id is stored already
    (or by a concurrent writer), the COPY fails on the unique key, is rolled back to the savepoint, and the
    impressions go by the idempotent path instead: COPY into a temporary table of the session (emptied at
    commit), then ``INSERT … SELECT … ON CONFLICT DO NOTHING`` (a row whose id is stored is not inserted). The
    events always take that path. One statement then moves the temporary rows and matches the batch's events
    with their impressions, stored earlier or in this very statement (the rows the insert returns: a statement
    does not see its own inserts), looking each event up by the ``(project_id, request, item)`` index. (The
    per-request ``IN (…)`` query it replaced got a generic plan on the ``(project_id, ts)`` index from psycopg's
    prepared statements and read every row of the project per batch; the direct COPY saves the temporary
    table's detour, about a third of the database's CPU for a batch of new impressions.)"""
    from psycopg import OperationalError as PgOperationalError  # the postgres extra: only here
    from psycopg.errors import UniqueViolation

    try:
        return _copy_and_move(s, project_id, batch, now, UniqueViolation)
    except PgOperationalError as exc:  # a deadlock or serialisation failure: Database.write retries those
        raise OperationalError("ingest batch", None, exc) from exc


def _copy_and_move(s: Session, project_id: int, batch: Batch, now: float, unique_violation: type[Exception]) -> tuple[int, int, int, int]:
    dbapi = s.connection().connection.dbapi_connection
    direct = 0
    with dbapi.cursor() as cur:  # type: ignore[union-attr]
        cur.execute(_PG_TEMP)
        if batch.impressions:
            text = _copy_text(project_id, batch.impressions, now)
            cur.execute("SAVEPOINT ingest_direct")
            try:
                with cur.copy(f"COPY ingest_impressions ({_IMP_NAMES}) FROM STDIN") as copy:
                    copy.write(text)
                direct = len(batch.impressions)
            except unique_violation:  # an id stored already: the idempotent path, below
                cur.execute("ROLLBACK TO SAVEPOINT ingest_direct")
                with cur.copy(f"COPY _incoming_ingest_impressions ({_IMP_NAMES}) FROM STDIN") as copy:
                    copy.write(text)
        if batch.events:
            with cur.copy(f"COPY _incoming_ingest_events ({_EV_NAMES}) FROM STDIN") as copy:
                copy.write(_copy_text(project_id, batch.events, now))
        cur.execute(_PG_MOVE)
        got = cur.fetchone()
    return direct + int(got[0]), int(got[1]), int(got[2]), int(got[3])


def _pg_statements() -> tuple[str, str]:
    temp = [f"CREATE TEMPORARY TABLE IF NOT EXISTS _incoming_{table} ON COMMIT DELETE ROWS "
            f"AS SELECT {cols} FROM {table} WITH NO DATA"
            for table, cols in (("ingest_impressions", _IMP_NAMES), ("ingest_events", _EV_NAMES))]
    imp, ev = _IMP_NAMES, _EV_NAMES
    move = f"""
WITH imp AS (
  INSERT INTO ingest_impressions ({imp}) SELECT {imp} FROM _incoming_ingest_impressions
  ON CONFLICT (project_id, event_id) DO NOTHING RETURNING request, item, ts
), ev AS (
  INSERT INTO ingest_events ({ev}) SELECT {ev} FROM _incoming_ingest_events
  ON CONFLICT (project_id, event_id) DO NOTHING RETURNING 1
), fresh AS (
  SELECT request, item, min(ts) AS ts FROM imp GROUP BY request, item
), matched AS MATERIALIZED (  -- once per event: the FILTERs below read it twice; min(ts + 0), not min(ts): the
  -- planner may turn min(ts) into a walk of the (project_id, ts) index until a row of the request and item turns up
  SELECT e.ts, LEAST(f.ts, (SELECT min(i.ts + 0) FROM ingest_impressions i
                            WHERE i.project_id = e.project_id AND i.request = e.request AND i.item = e.item)) AS shown
  FROM _incoming_ingest_events e LEFT JOIN fresh f ON f.request = e.request AND f.item = e.item
)
SELECT (SELECT count(*) FROM imp), (SELECT count(*) FROM ev),
       count(*) FILTER (WHERE shown IS NULL), count(*) FILTER (WHERE ts < shown)
FROM matched"""
    return "; ".join(temp), move


_PG_TEMP, _PG_MOVE = _pg_statements()


def _project(s: Session, name: str) -> int:
    """The project's id, made on first use. On PostgreSQL its row is locked ``FOR KEY SHARE`` until the batch
    commits: what the foreign key's check took once per row (migration 0007), so a project deleted meanwhile
    waits for the batch (whose rows its trigger then deletes) or is gone before it (the project is made anew)."""
    pid = s.scalar(select(Project.id).where(Project.name == name).with_for_update(read=True, key_share=True))
    if pid is None:
        project = Project(name=name, description="")
        s.add(project)
        s.flush()
        pid = project.id
    return int(pid)


@dataclass
class Batch:
    """A validated batch, ready to store: the valid rows (ids distinct), the refusals and the repeated ids."""

    received_impressions: int
    received_events: int
    impressions: Rows
    events: Rows
    rejected_impressions: list[dict[str, Any]]
    rejected_events: list[dict[str, Any]]
    repeats: tuple[int, int]


def validate_batch(body: Any) -> Batch:
    """Check the shape of a batch ``{"impressions": [...], "events": [...]}`` (either may be absent) and
    every event in it. Done before the write transaction, so the database is held only to store."""
    if not isinstance(body, dict) or not set(body) <= {"impressions", "events"}:
        extra = sorted(set(body) - {"impressions", "events"}) if isinstance(body, dict) else None
        raise MonitorError(
            f"the body must be an object with 'impressions' and/or 'events' lists; got {'keys ' + ', '.join(extra) if extra else type(body).__name__}"
        )
    total = sum(len(v) for v in body.values() if isinstance(v, list))
    if total > MAX_BATCH:
        raise PayloadTooLarge(f"a batch holds at most {MAX_BATCH} events; got {total} (send several batches)")
    imps, bad_imps, imp_repeats = _validated("impression", body.get("impressions"), validate_impression, impression_columns)
    evs, bad_evs, ev_repeats = _validated("event", body.get("events"), validate_event, event_columns)
    return Batch(len(body.get("impressions") or []), len(body.get("events") or []), imps, evs, bad_imps, bad_evs,
                 (imp_repeats, ev_repeats))


def store_batch(s: Session, project: str, batch: Batch) -> dict[str, Any]:
    """Store a validated batch in the session's transaction (creating the project on first use). Returns
    what was received, stored, repeated and refused, and the batch's engagement events whose impression is
    not stored (``unmatched``) or was shown after them (``clock_skew``)."""
    now = time.time()
    pid = _project(s, project)
    if s.connection().dialect.name == "postgresql":
        stored_imps, stored_evs, unmatched, skew = _store_postgresql(s, pid, batch, now)
    else:
        stored_imps = _store_sqlite(s, IngestImpression, _IMP_COLUMNS, pid, batch.impressions, now)
        stored_evs = _store_sqlite(s, IngestEvent, _EV_COLUMNS, pid, batch.events, now)
        unmatched, skew = _match_sqlite(s, pid, batch.events)
    return {
        "project": project,
        "impressions": {"received": batch.received_impressions, "stored": stored_imps,
                        "duplicates": len(batch.impressions) - stored_imps + batch.repeats[0],
                        "rejected": len(batch.rejected_impressions)},
        "events": {"received": batch.received_events, "stored": stored_evs,
                   "duplicates": len(batch.events) - stored_evs + batch.repeats[1], "rejected": len(batch.rejected_events),
                   "unmatched": unmatched, "clock_skew": skew},
        "rejected": (batch.rejected_impressions + batch.rejected_events)[:1000],
    }


def ingest_batch(s: Session, project: str, body: Any) -> dict[str, Any]:
    """:func:`validate_batch` then :func:`store_batch` in one call (the server validates first, outside
    the write transaction)."""
    return store_batch(s, project, validate_batch(body))


def _match_sqlite(s: Session, pid: int, events: Rows) -> tuple[int, int]:
    """Of a batch's events: how many have no stored impression, how many precede theirs (SQLite; PostgreSQL
    counts them in its storing statement, :func:`_store_postgresql`)."""
    if not events:
        return 0, 0
    _, requests_col, items_col, _, ts_col, _ = events.columns
    shown: dict[tuple[str, str], float] = {}
    wanted = set(zip(requests_col, items_col))
    requests = sorted(set(requests_col))
    conn = s.connection()
    for i in range(0, len(requests), _IN_CHUNK):
        part = requests[i : i + _IN_CHUNK]
        sql = (f"SELECT request, item, ts FROM ingest_impressions WHERE project_id = ? "
               f"AND request IN ({', '.join('?' * len(part))})")  # raw: expanding IN through SQLAlchemy cost more than the query
        for request, item, ts in conn.exec_driver_sql(sql, (pid, *part)).fetchall():
            if (request, item) in wanted:
                shown[(request, item)] = min(ts, shown.get((request, item), ts))
    keys = list(zip(requests_col, items_col))
    unmatched = sum(1 for k in keys if k not in shown)
    skew = sum(1 for k, t in zip(keys, ts_col) if k in shown and t < shown[k])
    return unmatched, skew


def ingest_status(s: Session, project: str) -> dict[str, Any]:
    """Totals of a project's production logs: impressions, requests, events, pending and orphan events,
    clock skew, the time span, and throughput (rows received per minute over the last hour)."""
    from ranklens.production.logs import parse_duration

    pid = s.scalar(select(Project.id).where(Project.name == project))
    if pid is None:
        raise NotFound(f"no such project: {project!r}")
    settings = s.get(ProductionSettings, pid)
    delay = parse_duration(settings.label_delay if settings else DEFAULT_LABEL_DELAY)
    imp, ev = IngestImpression, IngestEvent
    n_imp, first_imp, last_imp = s.execute(select(func.count(), func.min(imp.ts), func.max(imp.ts)).where(imp.project_id == pid)).one()
    n_ev, last_ev = s.execute(select(func.count(), func.max(ev.ts)).where(ev.project_id == pid)).one()
    n_req = s.scalar(select(func.count(func.distinct(imp.request))).where(imp.project_id == pid)) or 0
    as_of = max([t for t in (last_imp, last_ev) if t is not None], default=None)
    same = and_(imp.project_id == ev.project_id, imp.request == ev.request, imp.item == ev.item)
    unmatched = select(ev.ts).where(ev.project_id == pid, ~exists().where(same))
    pending = orphans = 0
    if as_of is not None:
        pending = s.scalar(select(func.count()).select_from(unmatched.where(ev.ts + delay >= as_of).subquery())) or 0
        orphans = s.scalar(select(func.count()).select_from(unmatched.where(ev.ts + delay < as_of).subquery())) or 0
    skew = s.scalar(
        select(func.count()).select_from(ev).where(ev.project_id == pid, exists().where(same, imp.ts > ev.ts))
    ) or 0
    since = time.time() - 3600
    per_minute: dict[int, list[int]] = {}
    for model, slot in ((imp, 0), (ev, 1)):
        minute = func.floor(model.received / 60)
        q = select(minute, func.count()).where(model.project_id == pid, model.received >= since).group_by(minute)
        for m, n in s.execute(q):
            per_minute.setdefault(int(m), [0, 0])[slot] = int(n)
    return {
        "project": project,
        "impressions": int(n_imp), "requests": int(n_req), "events": int(n_ev),
        "pending_events": int(pending), "orphan_events": int(orphans), "clock_skew_events": int(skew),
        "first": _iso(first_imp) if first_imp is not None else None,
        "as_of": _iso(as_of) if as_of is not None else None,
        "label_delay": settings.label_delay if settings else DEFAULT_LABEL_DELAY,
        "throughput": [{"minute": _iso(m * 60), "impressions": v[0], "events": v[1]} for m, v in sorted(per_minute.items())],
    }

