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

import io
import json
import math
from typing import Any

from sqlalchemy import Table, select, update
from sqlalchemy.orm import Session

from ranklens.errors import InputError
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

__all__ = ["DEFAULT_MEASURES", "production_view", "refresh_windows", "set_settings", "windows_view"]

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


def set_settings(s: Session, project: str, body: dict[str, Any]) -> ProductionSettings:
    """Store (or update) the project's production settings; every given field is checked before it is
    stored: ``labels`` (the rules of ``labels from-events`` as a JSON object), ``window`` (``1h``, ``1d``),
    ``label_delay``, ``measures``, ``reference_window`` and ``position_bias`` (``em`` or ``intervention``: θ of
    IPS refitted on every window; null: the DCG discount)."""
    from ranklens.labels import load_rules
    from ranklens.production.logs import parse_duration
    from ranklens.production.windows import _split_measures

    unknown = set(body) - _SETTINGS_KEYS
    if unknown:
        raise MonitorError(f"unknown production setting(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(_SETTINGS_KEYS))}")
    pid = _project_id(s, project)
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
    if current is None:
        current = ProductionSettings(project_id=pid, rules="{}", window="1d", label_delay="24h",
                                     measures=json.dumps(list(DEFAULT_MEASURES)))
        s.add(current)
    if "labels" in body:
        current.rules = json.dumps(body["labels"])
    if "window" in body:
        current.window = str(body["window"])
    if "label_delay" in body:
        current.label_delay = str(body["label_delay"])
    if "measures" in body:
        current.measures = json.dumps([str(m) for m in body["measures"]])
    if "reference_window" in body:
        current.reference_window = body["reference_window"] or None
    if "position_bias" in body:
        current.position_bias = body["position_bias"]
    current.updated_at = utcnow()
    s.flush()
    return current


def _frames(s: Session, pid: int) -> tuple[Any, Any]:
    """The project's impressions and events as polars frames: on PostgreSQL by ``COPY … TO STDOUT`` (CSV read by
    polars: no Python object per value), on SQLite through the driver's cursor in blocks of :data:`_READ_BLOCK`
    rows (SQLAlchemy rows cost more than the query; one block of Python tuples at a time bounds the memory)."""
    conn = s.connection()
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    postgres = conn.dialect.name == "postgresql"
    try:
        impressions = _read(cursor, "SELECT request, query, item, position, score, ts, segment, system FROM ingest_impressions "
                            f"WHERE project_id = {int(pid)} ORDER BY id", _IMP_TYPES, postgres)
        events = _read(cursor, f"SELECT request, item, event, ts, value FROM ingest_events WHERE project_id = {int(pid)} ORDER BY id",
                       _EV_TYPES, postgres)
    finally:
        cursor.close()
    return impressions, events


_READ_BLOCK = 200_000


def _read(cursor: Any, sql: str, names: dict[str, str], postgres: bool) -> Any:
    import polars as pl

    schema = {k: {"str": pl.Utf8, "int": pl.Int64, "float": pl.Float64}[v] for k, v in names.items()}
    if postgres:
        out = io.BytesIO()
        with cursor.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)") as copy:
            for block in copy:
                out.write(block)
        if not out.tell():
            return pl.DataFrame(schema=schema)
        # quoted fields keep commas, quotes and newlines; an empty unquoted field is NULL, as PostgreSQL wrote it
        return pl.read_csv(out.getvalue(), has_header=False, new_columns=list(schema), schema=schema)
    cursor.execute(sql)
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


def refresh_windows(s: Session, project: str, body: dict[str, Any] | None = None, *, n_boot: int = 0) -> dict[str, Any]:
    """Recompute the series (updating the settings first when ``body`` has some), store what changed as new
    revisions, replace the drift checks and check the rules. Returns the refresh: counts, windows added and
    revised, alerts."""
    from ranklens.production import compute_windows

    if body:
        settings = set_settings(s, project, body)
    pid = _project_id(s, project)
    settings = s.get(ProductionSettings, pid)  # type: ignore[assignment]
    if settings is None:
        raise MonitorError("the project has no production settings yet: send at least 'labels' (the label rules)")
    impressions, events = _frames(s, pid)
    if impressions.height == 0:
        raise MonitorError(f"project {project!r} has no impressions yet: send them to /api/v1/projects/{project}/ingest")
    try:
        report = compute_windows(
            impressions, events, json.loads(settings.rules), window=settings.window, measures=json.loads(settings.measures),
            segment_col="segment", system_col="system", label_delay=settings.label_delay,
            reference_window=settings.reference_window, n_boot=n_boot, position_bias=settings.position_bias,
        )
    except InputError as exc:
        raise MonitorError(str(exc)) from None
    refresh = WindowRefresh(project_id=pid, as_of=report.as_of, counts=json.dumps(report.counts), revised=0)
    s.add(refresh)
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
        new_rows.append({"project_id": pid, "refresh_id": refresh.id, "start": w.start, "end": w.end, "segment": w.segment,
                         "system": w.system, "measure": w.measure, "value": value, "ci_low": lo, "ci_high": hi, "n": w.n,
                         "provisional": w.provisional, "revision": (old.revision + 1) if old else 1, "current": True})
    for i in range(0, len(stale), 500):
        s.execute(update(WindowValue).where(WindowValue.id.in_(stale[i : i + 500])).values(current=False))
    if new_rows:
        s.execute(_table(WindowValue).insert(), new_rows)
    refresh.revised = revised
    s.execute(_table(WindowDrift).delete().where(_table(WindowDrift).c.project_id == pid))
    drift = [{"project_id": pid, "start": d.start, "segment": d.segment, "system": d.system, "what": d.what,
              "psi": _clean(d.psi), "ks_p": _clean(d.ks_p), "flag": d.flag} for d in report.drift]
    if drift:
        s.execute(_table(WindowDrift).insert(), drift)
    from ranklens.monitor.production_alerts import check_window_rules

    alerts = check_window_rules(s, pid)
    return {"project": project, "refresh": refresh.id, "as_of": report.as_of, "counts": report.counts,
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
