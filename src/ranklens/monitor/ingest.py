"""Ingesting production logs into the store: impressions and engagement events, one batch per request.

Every event of a batch is validated on its own (:mod:`ranklens.production.events`); a bad one is answered
with its kind, index, id, field and reason and counted, the others are stored. Storage is idempotent by event
id within the project (an id already stored, or seen earlier in the batch, is a duplicate: counted, not
stored again), and the batch is one transaction: acknowledged means committed.

The status (:func:`ingest_status`) counts the engagement events whose impression is not (yet) stored:
*pending* while their label window may still see the impression arrive (event time + label delay after the
latest time in the log), *orphans* after; and *clock skew*: events before their impression.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, and_, exists, func, select
from sqlalchemy.orm import Session

from ranklens.monitor.errors import MonitorError, NotFound, PayloadTooLarge
from ranklens.monitor.models import IngestEvent, IngestImpression, ProductionSettings, Project
from ranklens.production.events import iso_time as _iso
from ranklens.production.events import validate_event, validate_impression

__all__ = ["DEFAULT_LABEL_DELAY", "MAX_BATCH", "Batch", "ingest_batch", "ingest_status", "store_batch", "validate_batch"]

#: the most events (impressions + engagement) one request may carry
MAX_BATCH = 50_000
DEFAULT_LABEL_DELAY = "24h"
_IN_CHUNK = 500  # ids per IN (...) lookup: well inside SQLite's and PostgreSQL's parameter limits

_IMP_COLUMNS = ("event_id", "request", "query", "item", "position", "score", "ts", "segment", "system")
_EV_COLUMNS = ("event_id", "request", "item", "event", "ts", "value")


def _table(model: Any) -> Table:
    return model.__table__  # type: ignore[no-any-return]


def _validated(kind: str, events: Any, check: Any) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, Any]], int]:
    """Valid events by id (the first of a repeated id), the rejections, the repeats within the batch."""
    rows: dict[str, tuple[Any, ...]] = {}
    rejected: list[dict[str, Any]] = []
    repeats = 0
    if events is None:
        return rows, rejected, 0
    if not isinstance(events, list):
        raise MonitorError(f"'{kind}s' must be a list of objects; got {type(events).__name__}")
    for i, event in enumerate(events):
        row, bad = check(event, i)
        if bad is not None:
            rejected.append(bad.to_dict())
        elif row is not None:
            if row[0] in rows:
                repeats += 1
            else:
                rows[row[0]] = row
    return rows, rejected, repeats


def _store(s: Session, model: Any, columns: tuple[str, ...], project_id: int, rows: dict[str, tuple[Any, ...]], now: float) -> int:
    """Insert the rows whose id is not stored yet (``ON CONFLICT DO NOTHING``, so a concurrent writer's row
    wins quietly); the number inserted. SQLite: the rows go to the driver's ``executemany`` as tuples (building
    a SQLAlchemy parameter set per row cost more than the insert itself); PostgreSQL: COPY, below."""
    if not rows:
        return 0
    conn = s.connection()
    table = _table(model).name
    names = ("project_id", *columns, "received")
    postgres = conn.dialect.name == "postgresql"
    mark = "%s" if postgres else "?"
    sql = (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join([mark] * len(names))}) "
           "ON CONFLICT (project_id, event_id) DO NOTHING")
    if not postgres:  # SQLite counts the rows executemany inserted (the ignored ones are not counted)
        cursor = conn.exec_driver_sql(sql, [(project_id, *row, now) for row in rows.values()])
        return int(cursor.rowcount)
    # PostgreSQL: the rows are COPYed (psycopg's copy, rows written in C) into a temporary table of the session that
    # empties itself at commit, then moved by one INSERT … SELECT … ON CONFLICT DO NOTHING, whose row count is the
    # rows inserted (a row whose id is stored already, or a concurrent writer's, is not). Three statements per batch
    # in the batch's one transaction; the arrays-and-unnest form it replaced spent twice the server's CPU building
    # and dumping the arrays (bench.ingest_bench).
    tmp = f"_incoming_{table}"
    cols = ", ".join(names)
    with conn.connection.dbapi_connection.cursor() as cur:  # type: ignore[union-attr]
        cur.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {tmp} ON COMMIT DELETE ROWS AS SELECT {cols} FROM {table} WITH NO DATA")
        with cur.copy(f"COPY {tmp} ({cols}) FROM STDIN") as copy:
            for row in rows.values():
                copy.write_row((project_id, *row, now))
        cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {tmp} ON CONFLICT (project_id, event_id) DO NOTHING")
        return int(cur.rowcount)


def _project(s: Session, name: str) -> int:
    pid = s.scalar(select(Project.id).where(Project.name == name))
    if pid is None:
        project = Project(name=name, description="")
        s.add(project)
        s.flush()
        pid = project.id
    return int(pid)


@dataclass
class Batch:
    """A validated batch, ready to store: the valid rows by id, the refusals and the repeated ids."""

    received_impressions: int
    received_events: int
    impressions: dict[str, tuple[Any, ...]]
    events: dict[str, tuple[Any, ...]]
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
    imps, bad_imps, imp_repeats = _validated("impression", body.get("impressions"), validate_impression)
    evs, bad_evs, ev_repeats = _validated("event", body.get("events"), validate_event)
    return Batch(len(body.get("impressions") or []), len(body.get("events") or []), imps, evs, bad_imps, bad_evs,
                 (imp_repeats, ev_repeats))


def store_batch(s: Session, project: str, batch: Batch) -> dict[str, Any]:
    """Store a validated batch in the session's transaction (creating the project on first use). Returns
    what was received, stored, repeated and refused, and the batch's engagement events whose impression is
    not stored (``unmatched``) or was shown after them (``clock_skew``)."""
    now = time.time()
    pid = _project(s, project)
    stored_imps = _store(s, IngestImpression, _IMP_COLUMNS, pid, batch.impressions, now)
    stored_evs = _store(s, IngestEvent, _EV_COLUMNS, pid, batch.events, now)
    unmatched, skew = _match(s, pid, list(batch.events.values()))
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


def _match(s: Session, pid: int, events: list[tuple[Any, ...]]) -> tuple[int, int]:
    """Of a batch's events: how many have no stored impression, how many precede theirs."""
    if not events:
        return 0, 0
    shown: dict[tuple[str, str], float] = {}
    wanted = {(e[1], e[2]) for e in events}
    requests = sorted({e[1] for e in events})
    conn = s.connection()
    mark = "%s" if conn.dialect.name == "postgresql" else "?"
    for i in range(0, len(requests), _IN_CHUNK):
        part = requests[i : i + _IN_CHUNK]
        sql = (f"SELECT request, item, ts FROM ingest_impressions WHERE project_id = {mark} "
               f"AND request IN ({', '.join([mark] * len(part))})")  # raw: expanding IN through SQLAlchemy cost more than the query
        for request, item, ts in conn.exec_driver_sql(sql, (pid, *part)).fetchall():
            if (request, item) in wanted:
                shown[(request, item)] = min(ts, shown.get((request, item), ts))
    unmatched = sum(1 for e in events if (e[1], e[2]) not in shown)
    skew = sum(1 for e in events if (e[1], e[2]) in shown and e[4] < shown[(e[1], e[2])])
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

