"""The per-window series of a project's production logs, stored with its revision history.

A refresh (``POST /api/v1/projects/{p}/windows/refresh``, e.g. from cron) reads the stored impressions and
engagement events and calls :func:`ranklens.production.compute_windows` — the function behind ``ranklens
windows``, so the monitor and the command cannot disagree — with the project's settings (label rules, window,
label delay, measures, drift reference). Each window × segment × system × measure whose value, interval,
``n`` or provisional flag changed gets a new revision; the old one stays, no longer current
(``GET …/windows?history=true`` lists them all). Late events therefore revise provisional windows in the open.
The drift checks of the latest refresh replace the previous ones. The project's rules are then checked on
the series (:mod:`ranklens.monitor.production_alerts`).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from typing import Any

from sqlalchemy import Table, select, update
from sqlalchemy.orm import Session

from ranklens.errors import InputError
from ranklens.monitor import sqlite_columns
from ranklens.monitor.db import Database
from ranklens.monitor.errors import MonitorError, NotFound
from ranklens.monitor.models import (
    ProductionSettings,
    Project,
    WindowAlert,
    WindowDrift,
    WindowRefresh,
    WindowValue,
    utcnow,
)

__all__ = ["DEFAULT_MEASURES", "production_view", "refresh", "set_settings", "windows_view"]

DEFAULT_MEASURES = ("nDCG@10", "DCG@10", "IPS-DCG@10")
_SETTINGS_KEYS = {"labels", "window", "label_delay", "measures", "reference_window", "position_bias"}
_POSITION_BIAS = ("em", "intervention")


def _table(model: Any) -> Table:
    return model.__table__  # type: ignore[no-any-return]


def _project_id(s: Session, project: str) -> int:
    pid = s.scalar(select(Project.id).where(Project.name == project))
    if pid is None:
        raise NotFound(f"no such project: {project!r}")
    return int(pid)


@dataclasses.dataclass(frozen=True)
class _Config:
    """The settings a refresh computes with (the stored ones, with a request's changes applied)."""

    rules: dict[str, Any]
    window: str
    label_delay: str
    measures: list[str]
    reference_window: str | None
    position_bias: str | None


def _check_settings(s: Session, pid: int, body: dict[str, Any]) -> ProductionSettings | None:
    """Check every given field of ``body``; answer the stored settings (None: none yet)."""
    from ranklens.labels import load_rules
    from ranklens.production.logs import parse_duration
    from ranklens.production.windows import _split_measures

    unknown = set(body) - _SETTINGS_KEYS
    if unknown:
        raise MonitorError(f"unknown production setting(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(_SETTINGS_KEYS))}")
    current = s.get(ProductionSettings, pid)
    if current is None and "labels" not in body:
        raise MonitorError("the project has no production settings yet: send at least 'labels' (the label rules)")
    if "labels" in body:
        if not isinstance(body["labels"], dict):
            raise MonitorError("'labels' must be the label rules as a JSON object (the TOML file's tables)")
        load_rules(body["labels"])
    for key in ("window", "label_delay"):
        if key in body:
            parse_duration(str(body[key]))
    if "measures" in body:
        if not isinstance(body["measures"], list) or not body["measures"]:
            raise MonitorError("'measures' must be a non-empty list such as [\"nDCG@10\", \"IPS-DCG@10\"]")
        _split_measures([str(m) for m in body["measures"]])
    if body.get("position_bias") not in (None, *_POSITION_BIAS):
        raise MonitorError(f"'position_bias' must be \"em\", \"intervention\" or null; got {body['position_bias']!r}")
    return current


def _config(current: ProductionSettings | None, body: dict[str, Any]) -> _Config:
    """The stored settings (or the defaults) with ``body``'s fields applied; ``body`` is checked already."""
    base = _Config(rules={}, window="1d", label_delay="24h", measures=list(DEFAULT_MEASURES), reference_window=None,
                   position_bias=None) if current is None else _Config(
        rules=json.loads(current.rules), window=current.window, label_delay=current.label_delay,
        measures=json.loads(current.measures), reference_window=current.reference_window, position_bias=current.position_bias)
    changes: dict[str, Any] = {}
    if "labels" in body:
        changes["rules"] = body["labels"]
    for key in ("window", "label_delay"):
        if key in body:
            changes[key] = str(body[key])
    if "measures" in body:
        changes["measures"] = [str(m) for m in body["measures"]]
    if "reference_window" in body:
        changes["reference_window"] = body["reference_window"] or None
    if "position_bias" in body:
        changes["position_bias"] = body["position_bias"]
    return dataclasses.replace(base, **changes)


def set_settings(s: Session, project: str, body: dict[str, Any]) -> ProductionSettings:
    """Store (or update) the project's production settings; every given field is checked before it is
    stored: ``labels`` (the rules of ``labels from-events`` as a JSON object), ``window`` (``1h``, ``1d``),
    ``label_delay``, ``measures``, ``reference_window`` and ``position_bias`` (``em`` or ``intervention``: θ of
    IPS refitted on every window; null: the DCG discount)."""
    pid = _project_id(s, project)
    current = _check_settings(s, pid, body)
    config = _config(current, body)
    if current is None:
        current = ProductionSettings(project_id=pid)
        s.add(current)
    current.rules = json.dumps(config.rules)
    current.window = config.window
    current.label_delay = config.label_delay
    current.measures = json.dumps(config.measures)
    current.reference_window = config.reference_window
    current.position_bias = config.position_bias
    current.updated_at = utcnow()
    s.flush()
    return current


def _frames(s: Session, pid: int, *, columnar: bool = False) -> tuple[Any, Any]:
    """The project's impressions and events as polars frames, as the session's transaction sees them.

    On PostgreSQL by ``COPY … TO STDOUT`` (CSV read by polars: no Python object per value). On SQLite the rows are
    scanned in rowid order between the smallest and largest id of the project (not through the timestamp index
    and a sort); with ``columnar`` and a large project, a child process reads them as Arrow columns
    (:mod:`ranklens.monitor.sqlite_columns`: the caller must not have written to these tables in this
    transaction, the child sees committed rows only), else the driver's cursor in blocks of :data:`_READ_BLOCK`
    rows (one block of Python tuples at a time bounds the memory)."""
    conn = s.connection()
    postgres = conn.dialect.name == "postgresql"
    path = (conn.engine.url.database or "") if columnar and not postgres else ""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        impressions = _read(cursor, "request, query, item, position, score, ts, segment, system", "ingest_impressions",
                            pid, _IMP_TYPES, postgres, path)
        events = _read(cursor, "request, item, event, ts, value", "ingest_events", pid, _EV_TYPES, postgres, path)
    finally:
        cursor.close()
    return impressions, events


_READ_BLOCK = 200_000


def _read(cursor: Any, columns: str, table: str, pid: int, names: dict[str, str], postgres: bool, path: str) -> Any:
    import polars as pl

    schema = {k: {"str": pl.Utf8, "int": pl.Int64, "float": pl.Float64}[v] for k, v in names.items()}
    if postgres:
        out = io.BytesIO()
        sql = f"SELECT {columns} FROM {table} WHERE project_id = {int(pid)} ORDER BY id"
        with cursor.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)") as copy:
            for block in copy:
                out.write(block)
        if not out.tell():
            return pl.DataFrame(schema=schema)
        # quoted fields keep commas, quotes and newlines; an empty unquoted field is NULL, as PostgreSQL wrote it
        return pl.read_csv(out.getvalue(), has_header=False, new_columns=list(schema), schema=schema)
    cursor.execute(f"SELECT count(*), min(id), max(id) FROM {table} WHERE project_id = ?", (pid,))
    count, low, high = cursor.fetchone()
    if not count:
        return pl.DataFrame(schema=schema)
    sql = f"SELECT {columns} FROM {table} WHERE +project_id = ? AND id > ? AND id <= ? ORDER BY id"
    if path and count >= sqlite_columns.MIN_ROWS:
        table_read = sqlite_columns.read_table(path, sql, pid, low - 1, high, count, pl.DataFrame(schema=schema).to_arrow().schema)
        if table_read is not None:
            return pl.from_arrow(table_read)
    cursor.execute(sql, (pid, low - 1, high))
    frames = []
    while rows := cursor.fetchmany(_READ_BLOCK):
        frames.append(pl.DataFrame(rows, schema=schema, orient="row"))
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


_IMP_TYPES = {"request": "str", "query": "str", "item": "str", "position": "int", "score": "float", "timestamp": "float",
              "segment": "str", "system": "str"}
_EV_TYPES = {"request": "str", "item": "str", "event": "str", "timestamp": "float", "value": "float"}


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _clean(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _compute(project: str, config: _Config, impressions: Any, events: Any, n_boot: int) -> Any:
    from ranklens.production import compute_windows

    if impressions.height == 0:
        raise MonitorError(f"project {project!r} has no impressions yet: send them to /api/v1/projects/{project}/ingest")
    try:
        return compute_windows(
            impressions, events, config.rules, window=config.window, measures=config.measures,
            segment_col="segment", system_col="system", label_delay=config.label_delay,
            reference_window=config.reference_window, n_boot=n_boot, position_bias=config.position_bias,
        )
    except InputError as exc:
        raise MonitorError(str(exc)) from None


def _settings_or_refuse(s: Session, pid: int, body: dict[str, Any] | None) -> _Config:
    """The settings a refresh computes with: the stored ones with ``body``'s changes (checked; without stored
    settings ``body`` must carry the labels)."""
    return _config(_check_settings(s, pid, body or {}), body or {})


def refresh(db: Database, project: str, body: dict[str, Any] | None = None, *, n_boot: int = 0) -> dict[str, Any]:
    """Recompute the series (with the settings ``body`` changes, if any), store what changed as new revisions,
    replace the drift checks and check the rules; returns the refresh: counts, windows added and revised,
    alerts. The settings are checked, the logs read and the series computed in a read transaction (ingestion goes on meanwhile: on SQLite a write transaction would hold the
    only write lock for the whole computation); then one short write transaction stores the settings of
    ``body``, the revisions, the drift checks and the alerts. A refresh whose computation fails stores nothing.
    The series is that of the logs committed when the read began.

    >>> db = Database("sqlite://")
    >>> db.migrate()
    >>> refresh(db, "nope")
    Traceback (most recent call last):
    ranklens.monitor.errors.NotFound: no such project: 'nope'
    """
    with db.read() as s:
        pid = _project_id(s, project)
        config = _settings_or_refuse(s, pid, body)
        impressions, events = _frames(s, pid, columnar=True)
    report = _compute(project, config, impressions, events, n_boot)
    del impressions, events

    def store(s: Session) -> dict[str, Any]:
        if body:
            set_settings(s, project, body)
        return _store(s, project, pid, report)

    return db.write(store)


def _store(s: Session, project: str, pid: int, report: Any) -> dict[str, Any]:
    """Store the computed series' changes as revisions, replace the drift checks, check the rules."""
    stored = WindowRefresh(project_id=pid, as_of=report.as_of, counts=json.dumps(report.counts), revised=0)
    s.add(stored)
    s.flush()
    current = {(v.start, v.segment, v.system, v.measure): v for v in s.scalars(
        select(WindowValue).where(WindowValue.project_id == pid, WindowValue.current.is_(True)))}
    added = revised = 0
    new_rows: list[dict[str, Any]] = []
    stale: list[int] = []
    for w in report.windows:
        key = (w.start, w.segment, w.system, w.measure)
        value, lo, hi = _clean(w.value), _clean(w.ci[0]), _clean(w.ci[1])
        old = current.get(key)
        if old is not None and _same(old.value, value) and _same(old.ci_low, lo) and _same(old.ci_high, hi) \
                and old.n == w.n and old.provisional == w.provisional:
            continue
        if old is None:
            added += 1
        else:
            revised += 1
            stale.append(old.id)
        new_rows.append({"project_id": pid, "refresh_id": stored.id, "start": w.start, "end": w.end, "segment": w.segment,
                         "system": w.system, "measure": w.measure, "value": value, "ci_low": lo, "ci_high": hi, "n": w.n,
                         "provisional": w.provisional, "revision": (old.revision + 1) if old else 1, "current": True})
    for i in range(0, len(stale), 500):
        s.execute(update(WindowValue).where(WindowValue.id.in_(stale[i : i + 500])).values(current=False))
    if new_rows:
        s.execute(_table(WindowValue).insert(), new_rows)
    stored.revised = revised
    s.execute(_table(WindowDrift).delete().where(_table(WindowDrift).c.project_id == pid))
    drift = [{"project_id": pid, "start": d.start, "segment": d.segment, "system": d.system, "what": d.what,
              "psi": _clean(d.psi), "ks_p": _clean(d.ks_p), "flag": d.flag} for d in report.drift]
    if drift:
        s.execute(_table(WindowDrift).insert(), drift)
    from ranklens.monitor.production_alerts import check_window_rules

    alerts = check_window_rules(s, pid)
    return {"project": project, "refresh": stored.id, "as_of": report.as_of, "counts": report.counts,
            "windows": len(report.windows), "added": added, "revised": revised, "drift_flags": sum(d["flag"] for d in drift),
            "alerts": alerts}




def _value_json(v: WindowValue, *, history: bool = False) -> dict[str, Any]:
    out = {"start": v.start, "end": v.end, "segment": v.segment, "system": v.system, "measure": v.measure,
           "value": v.value, "ci": [v.ci_low, v.ci_high], "n": v.n, "provisional": v.provisional, "revision": v.revision}
    if history:
        out["current"] = v.current
        out["refresh"] = v.refresh_id
    return out


def windows_view(s: Session, project: str, *, history: bool = False, measure: str | None = None,
                 segment: str | None = None, system: str | None = None) -> dict[str, Any]:
    """The stored series: the current revision of every window, or (``history``) every revision, oldest first."""
    pid = _project_id(s, project)
    q = select(WindowValue).where(WindowValue.project_id == pid)
    if not history:
        q = q.where(WindowValue.current.is_(True))
    for column, wanted in ((WindowValue.measure, measure), (WindowValue.segment, segment), (WindowValue.system, system)):
        if wanted:
            q = q.where(column == wanted)
    rows = s.scalars(q.order_by(WindowValue.measure, WindowValue.segment, WindowValue.system, WindowValue.start,
                                WindowValue.revision)).all()
    return {"project": project, "history": history, "windows": [_value_json(v, history=history) for v in rows]}


def production_view(s: Session, project: str) -> dict[str, Any]:
    """The live page's data: settings, the latest refresh (as-of time, counts), the current series, drift,
    alerts of the series and the ingestion status (pending, orphans, clock skew, throughput)."""
    from ranklens.monitor.ingest import ingest_status

    pid = _project_id(s, project)
    settings = s.get(ProductionSettings, pid)
    last = s.scalars(select(WindowRefresh).where(WindowRefresh.project_id == pid).order_by(WindowRefresh.id.desc()).limit(1)).first()
    drift = s.scalars(select(WindowDrift).where(WindowDrift.project_id == pid)
                      .order_by(WindowDrift.what, WindowDrift.segment, WindowDrift.system, WindowDrift.start)).all()
    alerts = s.scalars(select(WindowAlert).where(WindowAlert.project_id == pid)
                       .order_by(WindowAlert.start, WindowAlert.segment, WindowAlert.system, WindowAlert.id)).all()
    return {
        "project": project,
        "settings": None if settings is None else {
            "labels": json.loads(settings.rules), "window": settings.window, "label_delay": settings.label_delay,
            "measures": json.loads(settings.measures), "reference_window": settings.reference_window,
            "position_bias": settings.position_bias},
        "refreshed": None if last is None else {"id": last.id, "at": last.at.strftime("%Y-%m-%dT%H:%M:%SZ"), "as_of": last.as_of,
                                                  "counts": json.loads(last.counts), "revised": last.revised},
        "windows": windows_view(s, project)["windows"],
        "drift": [{"start": d.start, "segment": d.segment, "system": d.system, "what": d.what, "psi": d.psi,
                   "ks_p": d.ks_p, "flag": d.flag} for d in drift],
        "alerts": [{"rule": a.rule_id, "start": a.start, "segment": a.segment, "system": a.system, "measure": a.measure,
                    "state": a.state, "value": a.value, "reference": a.reference, "p": a.p, "message": a.message} for a in alerts],
        "ingest": ingest_status(s, project),
    }
