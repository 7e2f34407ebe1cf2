"""The read side: each dashboard page is a function returning a JSON-ready dict. The HTML page renders
that dict; its JSON twin (``/api/v1/...``) returns it as it is, so both always show the same data."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import defaultdict
from typing import Any

import numpy as np
from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from ranklens.monitor._stats import paired
from ranklens.monitor.errors import MonitorError, NotFound
from ranklens.monitor.models import (
    Alert,
    Dataset,
    Delivery,
    DeliveryAttempt,
    Project,
    Rule,
    RuleCheck,
    Snapshot,
    SnapshotQueries,
    SnapshotValue,
    System,
    Webhook,
)
from ranklens.monitor.rules import describe_rule
from ranklens.monitor.service import iso, rule_json

__all__ = [
    "ab_view",
    "alerts_view",
    "deliveries_view",
    "overview_view",
    "projects_view",
    "rules_view",
    "segments_view",
    "series_view",
    "snapshot_view",
    "snapshots_view",
]


def _project(s: Session, name: str) -> Project:
    p = s.scalar(select(Project).where(Project.name == name))
    if p is None:
        raise NotFound(f"no project {name!r}")
    return p


def _systems(s: Session, project: Project) -> dict[int, str]:
    return dict(s.execute(select(System.id, System.name).where(System.project_id == project.id).order_by(System.name)).all())


def _system_id(systems: dict[int, str], name: str) -> int:
    for sid, n in systems.items():
        if n == name:
            return sid
    raise NotFound(f"no system {name!r}")


def projects_view(s: Session) -> dict[str, Any]:
    """``/``: every project with its counts and latest snapshot time."""
    snaps = {
        pid: (n, last)
        for pid, n, last in s.execute(
            select(Snapshot.project_id, func.count(), func.max(Snapshot.at)).group_by(Snapshot.project_id)
        )
    }
    systems = dict(s.execute(select(System.project_id, func.count()).group_by(System.project_id)).all())
    firing = dict(
        s.execute(select(Alert.project_id, func.count()).where(Alert.state == "firing").group_by(Alert.project_id)).all()
    )
    out = []
    for p in s.scalars(select(Project).order_by(Project.name)):
        n, last = snaps.get(p.id, (0, None))
        out.append(
            {
                "name": p.name,
                "description": p.description,
                "systems": systems.get(p.id, 0),
                "snapshots": n,
                "firing_alerts": firing.get(p.id, 0),
                "latest_at": iso(last),
            }
        )
    return {"projects": out}


def _latest_snapshots(s: Session, project: Project) -> dict[int, Snapshot]:
    """The newest snapshot of every system of ``project``."""
    newest = (
        select(Snapshot.system_id, func.max(Snapshot.at).label("at"))
        .where(Snapshot.project_id == project.id)
        .group_by(Snapshot.system_id)
        .subquery()
    )
    rows = s.scalars(
        select(Snapshot)
        .join(newest, and_(Snapshot.system_id == newest.c.system_id, Snapshot.at == newest.c.at))
        .order_by(Snapshot.id)
    ).all()
    return {r.system_id: r for r in rows}  # the last id wins among equal times


def overview_view(s: Session, name: str) -> dict[str, Any]:
    """``/projects/{p}``: latest value per system and measure, with rule status; firing alerts."""
    p = _project(s, name)
    systems = _systems(s, p)
    latest = _latest_snapshots(s, p)
    values: dict[int, dict[str, float]] = defaultdict(dict)
    segments: set[str] = set()
    if latest:
        for sid, m, seg, v in s.execute(
            select(Snapshot.system_id, SnapshotValue.measure, SnapshotValue.segment, SnapshotValue.value)
            .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
            .where(SnapshotValue.snapshot_id.in_([x.id for x in latest.values()]))
        ):
            if seg:
                segments.add(seg)
            else:
                values[sid][m] = v
    measures = sorted({m for vals in values.values() for m in vals})
    rules = s.scalars(select(Rule).where(Rule.project_id == p.id).order_by(Rule.id)).all()
    checks: dict[tuple[int, int], RuleCheck] = {}
    if latest:
        for c, sid in s.execute(
            select(RuleCheck, Snapshot.system_id)
            .join(Snapshot, Snapshot.id == RuleCheck.snapshot_id)
            .where(RuleCheck.snapshot_id.in_([x.id for x in latest.values()]))
        ):
            checks[(c.rule_id, sid)] = c
    firing = alerts_view(s, name, state="firing")["alerts"]
    rows = []
    for sid, sname in systems.items():
        snap = latest.get(sid)
        cells = []
        for m in measures:
            status = None
            for r in rules:
                check = checks.get((r.id, sid))
                if r.enabled and r.measure == m and check is not None and check.status != "skipped":
                    status = "breach" if check.status == "breach" or status == "breach" else "ok"
            cells.append({"measure": m, "value": values[sid].get(m), "status": status})
        rows.append(
            {
                "system": sname,
                "latest_snapshot": snap.client_id if snap else None,
                "latest_at": iso(snap.at) if snap else None,
                "values": cells,
                "firing": sum(1 for a in firing if a["system"] == sname),
            }
        )
    rule_rows = []
    for r in rules:
        d = rule_json(r, systems)
        d["status"] = {
            systems[sid]: c.status for (rid, sid), c in checks.items() if rid == r.id and sid in systems
        }
        rule_rows.append(d)
    n_snaps = s.scalar(select(func.count()).select_from(Snapshot).where(Snapshot.project_id == p.id)) or 0
    return {
        "project": p.name,
        "description": p.description,
        "measures": measures,
        "segments": sorted(segments),
        "systems": rows,
        "rules": rule_rows,
        "firing_alerts": firing,
        "snapshots": n_snaps,
    }


def _filters(s: Session, p: Project) -> dict[str, list[str]]:
    measures = s.scalars(
        select(SnapshotValue.measure)
        .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
        .where(Snapshot.project_id == p.id)
        .distinct()
    ).all()
    segs = s.scalars(
        select(SnapshotValue.segment)
        .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
        .where(Snapshot.project_id == p.id, SnapshotValue.segment != "")
        .distinct()
    ).all()
    return {"measures": sorted(measures), "segments": sorted(segs), "systems": sorted(_systems(s, p).values())}


def series_view(
    s: Session,
    name: str,
    *,
    measure: str | None = None,
    systems: list[str] | None = None,
    segment: str = "",
    since: dt.datetime | None = None,
    limit: int = 5000,
) -> dict[str, Any]:
    """``/projects/{p}/series``: values over time per system, threshold lines and alert markers."""
    p = _project(s, name)
    names = _systems(s, p)
    filt = _filters(s, p)
    if measure is None:
        measure = filt["measures"][0] if filt["measures"] else ""
    chosen = {sid: n for sid, n in names.items() if not systems or n in systems}
    if systems:
        for n in systems:
            _system_id(names, n)
    series = []
    for sid, sname in chosen.items():
        q = (
            select(Snapshot.at, SnapshotValue.value, Snapshot.client_id)
            .join(SnapshotValue, SnapshotValue.snapshot_id == Snapshot.id)
            .where(Snapshot.system_id == sid, SnapshotValue.measure == measure, SnapshotValue.segment == segment)
        )
        if since is not None:
            q = q.where(Snapshot.at >= since)
        rows = s.execute(q.order_by(Snapshot.at.desc(), Snapshot.id.desc()).limit(limit)).all()[::-1]
        series.append(
            {
                "system": sname,
                "points": [{"at": iso(at), "value": v, "snapshot": cid} for at, v, cid in rows],
            }
        )
    thresholds = []
    for r in s.scalars(
        select(Rule).where(Rule.project_id == p.id, Rule.kind == "threshold", Rule.measure == measure, Rule.segment == segment)
    ):
        if r.system_id is None or r.system_id in chosen:
            thresholds.append(
                {"rule_id": r.id, "value": r.threshold, "op": r.op, "system": names.get(r.system_id) if r.system_id else None, "enabled": r.enabled}
            )
    alerts = []
    for a, r in s.execute(
        select(Alert, Rule).join(Rule, Rule.id == Alert.rule_id).where(Alert.project_id == p.id, Rule.measure == measure, Alert.segment == segment)
    ):
        if a.system_id in chosen:
            first_value = s.scalar(
                select(SnapshotValue.value).where(
                    SnapshotValue.snapshot_id == a.first_snapshot_id, SnapshotValue.measure == measure, SnapshotValue.segment == segment
                )
            )
            alerts.append(
                {
                    "id": a.id,
                    "system": names[a.system_id],
                    "state": a.state,
                    "started_at": iso(a.started_at),
                    "resolved_at": iso(a.resolved_at),
                    "value": first_value,
                    "rule": describe_rule(r, names),
                }
            )
    return {
        "project": p.name,
        "measure": measure,
        "segment": segment or None,
        "systems": [n for n in chosen.values()],
        "series": series,
        "thresholds": thresholds,
        "alerts": alerts,
        "filters": filt,
    }


def segments_view(s: Session, name: str, *, measure: str | None = None) -> dict[str, Any]:
    """``/projects/{p}/segments``: the latest value of every segment per system."""
    p = _project(s, name)
    names = _systems(s, p)
    filt = _filters(s, p)
    if measure is None:
        measure = filt["measures"][0] if filt["measures"] else ""
    latest = _latest_snapshots(s, p)
    table: dict[str, dict[str, float]] = defaultdict(dict)
    if latest:
        for sid, seg, v in s.execute(
            select(Snapshot.system_id, SnapshotValue.segment, SnapshotValue.value)
            .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
            .where(SnapshotValue.snapshot_id.in_([x.id for x in latest.values()]), SnapshotValue.measure == measure)
        ):
            table[seg or "(all)"][names[sid]] = v
    segs = sorted(table, key=lambda k: (k != "(all)", k))
    return {
        "project": p.name,
        "measure": measure,
        "systems": sorted(names.values()),
        "segments": [{"segment": seg, "values": table[seg]} for seg in segs],
        "filters": filt,
    }


def _load_queries(s: Session, snapshot_id: int) -> dict[str, Any] | None:
    text = s.scalar(select(SnapshotQueries.data).where(SnapshotQueries.snapshot_id == snapshot_id))
    return json.loads(text) if text else None


def _snapshot(s: Session, p: Project, client_id: str) -> Snapshot:
    snap = s.scalar(select(Snapshot).where(Snapshot.project_id == p.id, Snapshot.client_id == client_id))
    if snap is None:
        raise NotFound(f"no snapshot {client_id!r} in project {p.name!r}")
    return snap


def ab_view(
    s: Session,
    name: str,
    *,
    a: str | None = None,
    b: str | None = None,
    measure: str | None = None,
    segment: str = "",
    test: str = "t",
) -> dict[str, Any]:
    """``/projects/{p}/ab``: system A against system B on their latest snapshots (difference, CI, p-value
    from the per-query values when both have them), and both series over time."""
    p = _project(s, name)
    names = _systems(s, p)
    filt = _filters(s, p)
    all_names = sorted(names.values())
    a = a or (all_names[0] if all_names else None)
    b = b or (all_names[1] if len(all_names) > 1 else a)
    if measure is None:
        measure = filt["measures"][0] if filt["measures"] else ""
    out: dict[str, Any] = {"project": p.name, "a": a, "b": b, "measure": measure, "segment": segment or None, "filters": filt}
    if a is None or b is None:
        out.update(comparison=None, series=[], per_query=[])
        return out
    latest = _latest_snapshots(s, p)
    snaps = {}
    for label, sys_name in (("a", a), ("b", b)):
        sid = _system_id(names, sys_name)
        snaps[label] = latest.get(sid)
    comparison: dict[str, Any] = {
        "a_snapshot": snaps["a"].client_id if snaps["a"] else None,
        "b_snapshot": snaps["b"].client_id if snaps["b"] else None,
    }
    for label in ("a", "b"):
        snap = snaps[label]
        comparison[f"{label}_value"] = (
            s.scalar(
                select(SnapshotValue.value).where(
                    SnapshotValue.snapshot_id == snap.id, SnapshotValue.measure == measure, SnapshotValue.segment == segment
                )
            )
            if snap
            else None
        )
    av, bv = comparison["a_value"], comparison["b_value"]
    comparison["difference"] = av - bv if av is not None and bv is not None else None
    per_query: list[dict[str, Any]] = []
    if snaps["a"] and snaps["b"] and snaps["a"].has_per_query and snaps["b"].has_per_query:
        da, db_ = _load_queries(s, snaps["a"].id), _load_queries(s, snaps["b"].id)
        if da and db_ and measure in da["values"] and measure in db_["values"]:
            ma = _query_map(da, measure, segment)
            mb = _query_map(db_, measure, segment)
            common = sorted(set(ma) & set(mb))
            if common:
                xa = np.array([ma[q] for q in common])
                xb = np.array([mb[q] for q in common])
                r = paired(xa, xb, test)
                comparison.update(
                    n=r.n,
                    mean_difference=r.mean_diff,
                    ci_low=_num(r.ci_low),
                    ci_high=_num(r.ci_high),
                    p_value=_num(r.p_value),
                    test=r.test,
                    wins=r.wins,
                    ties=r.ties,
                    losses=r.losses,
                )
                per_query = sorted(
                    ({"query": q, "a": ma[q], "b": mb[q], "difference": ma[q] - mb[q]} for q in common),
                    key=lambda d: d["difference"],
                )
    out["comparison"] = comparison
    out["per_query"] = per_query
    out["series"] = series_view(s, name, measure=measure, systems=sorted({a, b}), segment=segment)["series"]
    return out


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _query_map(doc: dict[str, Any], measure: str, segment: str) -> dict[str, float]:
    vals = doc["values"][measure]
    segs = doc.get("segments")
    out = {}
    for i, q in enumerate(doc["queries"]):
        if segment and (segs is None or segs[i] != segment):
            continue
        if vals[i] is not None:
            out[q] = vals[i]
    return out


def snapshots_view(s: Session, name: str, *, system: str | None = None, limit: int = 100, offset: int = 0) -> dict[str, Any]:
    """``/projects/{p}/snapshots``: the snapshots, newest first."""
    p = _project(s, name)
    names = _systems(s, p)
    if not 1 <= limit <= 1000 or offset < 0:
        raise MonitorError("limit must be between 1 and 1000 and offset at least 0")
    q = select(Snapshot).where(Snapshot.project_id == p.id)
    if system is not None:
        q = q.where(Snapshot.system_id == _system_id(names, system))
    total = s.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = s.scalars(q.order_by(Snapshot.at.desc(), Snapshot.id.desc()).limit(limit).offset(offset)).all()
    return {
        "project": p.name,
        "system": system,
        "total": total,
        "limit": limit,
        "offset": offset,
        "snapshots": [
            {
                "id": r.client_id,
                "system": names[r.system_id],
                "at": iso(r.at),
                "created_at": iso(r.created_at),
                "measures": json.loads(r.measures),
                "tags": json.loads(r.tags),
                "has_per_query": r.has_per_query,
                "source": r.source,
            }
            for r in rows
        ],
    }


def snapshot_view(
    s: Session, name: str, client_id: str, *, measure: str | None = None, compare: str | None = None, worst: int = 20
) -> dict[str, Any]:
    """``/projects/{p}/snapshots/{id}``: values per measure and segment, the rule checks, the worst queries
    and — with ``compare`` — the biggest per-query changes from another snapshot."""
    p = _project(s, name)
    names = _systems(s, p)
    snap = _snapshot(s, p, client_id)
    measures: list[str] = json.loads(snap.measures)
    measure = measure or (measures[0] if measures else "")
    values: dict[str, dict[str, float]] = defaultdict(dict)
    for m, seg, v in s.execute(
        select(SnapshotValue.measure, SnapshotValue.segment, SnapshotValue.value).where(SnapshotValue.snapshot_id == snap.id)
    ):
        values[seg or "(all)"][m] = v
    checks = [
        {"rule_id": r.id, "rule": describe_rule(r, names), "status": c.status, "value": c.value, "detail": c.detail}
        for c, r in s.execute(
            select(RuleCheck, Rule).join(Rule, Rule.id == RuleCheck.rule_id).where(RuleCheck.snapshot_id == snap.id).order_by(Rule.id)
        )
    ]
    out: dict[str, Any] = {
        "project": p.name,
        "id": snap.client_id,
        "system": names[snap.system_id],
        "at": iso(snap.at),
        "created_at": iso(snap.created_at),
        "tags": json.loads(snap.tags),
        "num_queries": snap.num_queries,
        "measures": measures,
        "measure": measure,
        "values": [{"segment": seg, "values": values[seg]} for seg in sorted(values, key=lambda k: (k != "(all)", k))],
        "rules": checks,
        "worst_queries": [],
        "compare": None,
        "changes": [],
    }
    doc = _load_queries(s, snap.id) if snap.has_per_query else None
    if doc and measure in doc["values"]:
        segs = doc.get("segments")
        rows = [
            {"query": q, "value": v, "segment": segs[i] if segs else None}
            for i, (q, v) in enumerate(zip(doc["queries"], doc["values"][measure]))
            if v is not None
        ]
        out["worst_queries"] = sorted(rows, key=lambda d: (d["value"], d["query"]))[: max(1, min(worst, 1000))]
    if compare:
        other = _snapshot(s, p, compare)
        out["compare"] = {"id": other.client_id, "system": names[other.system_id], "at": iso(other.at)}
        odoc = _load_queries(s, other.id) if other.has_per_query else None
        if doc and odoc and measure in doc["values"] and measure in odoc["values"]:
            mine, theirs = _query_map(doc, measure, ""), _query_map(odoc, measure, "")
            common = set(mine) & set(theirs)
            ordered = sorted(common, key=lambda q: (-abs(mine[q] - theirs[q]), q))[: max(1, min(worst, 1000))]
            out["changes"] = [{"query": q, "value": mine[q], "other": theirs[q], "change": mine[q] - theirs[q]} for q in ordered]
    return out


def alerts_view(s: Session, name: str, *, state: str | None = None, limit: int = 200) -> dict[str, Any]:
    """``/projects/{p}/alerts``: alerts, newest first; ``state`` = firing or resolved."""
    p = _project(s, name)
    names = _systems(s, p)
    if state not in (None, "firing", "resolved"):
        raise MonitorError(f"state must be firing or resolved; got {state!r}")
    q = select(Alert, Rule).join(Rule, Rule.id == Alert.rule_id).where(Alert.project_id == p.id)
    if state:
        q = q.where(Alert.state == state)
    rows = s.execute(q.order_by(Alert.started_at.desc(), Alert.id.desc()).limit(limit)).all()
    snap_ids = {a.first_snapshot_id for a, _ in rows} | {a.resolved_snapshot_id for a, _ in rows if a.resolved_snapshot_id}
    cids = dict(s.execute(select(Snapshot.id, Snapshot.client_id).where(Snapshot.id.in_(snap_ids))).all()) if snap_ids else {}
    return {
        "project": p.name,
        "state": state,
        "alerts": [
            {
                "id": a.id,
                "state": a.state,
                "rule_id": r.id,
                "rule": describe_rule(r, names),
                "measure": r.measure,
                "segment": a.segment or None,
                "system": names[a.system_id],
                "value": a.value,
                "message": a.message,
                "started_at": iso(a.started_at),
                "resolved_at": iso(a.resolved_at),
                "first_snapshot": cids.get(a.first_snapshot_id),
                "resolved_snapshot": cids.get(a.resolved_snapshot_id) if a.resolved_snapshot_id else None,
            }
            for a, r in rows
        ],
    }


def rules_view(s: Session, name: str) -> dict[str, Any]:
    p = _project(s, name)
    names = _systems(s, p)
    return {"project": p.name, "rules": [rule_json(r, names) for r in s.scalars(select(Rule).where(Rule.project_id == p.id).order_by(Rule.id))]}


def datasets_view(s: Session, name: str) -> dict[str, Any]:
    p = _project(s, name)
    return {
        "project": p.name,
        "datasets": [
            {"name": d.name, "version": d.version, "num_queries": d.num_queries, "num_judgements": d.num_judgements, "created_at": iso(d.created_at)}
            for d in s.scalars(select(Dataset).where(Dataset.project_id == p.id).order_by(Dataset.name, Dataset.created_at))
        ],
    }


def deliveries_view(s: Session, *, webhook: int | None = None, limit: int = 200) -> dict[str, Any]:
    """``/webhooks``: webhooks and their delivery log (attempts included)."""
    projects = dict(s.execute(select(Project.id, Project.name)).all())
    hooks = [
        {"id": h.id, "url": h.url, "project": projects.get(h.project_id) if h.project_id else None, "enabled": h.enabled, "has_secret": bool(h.secret)}
        for h in s.scalars(select(Webhook).order_by(Webhook.id))
    ]
    q = select(Delivery)
    if webhook is not None:
        q = q.where(Delivery.webhook_id == webhook)
    rows = s.scalars(q.order_by(Delivery.id.desc()).limit(limit)).all()
    attempts: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if rows:
        for at in s.scalars(
            select(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_([d.id for d in rows])).order_by(DeliveryAttempt.id)
        ):
            attempts[at.delivery_id].append(
                {"at": iso(at.at), "status_code": at.status_code, "error": at.error, "duration_ms": round(at.duration_ms, 1)}
            )
    return {
        "webhooks": hooks,
        "deliveries": [
            {
                "id": d.id,
                "webhook_id": d.webhook_id,
                "alert_id": d.alert_id,
                "event": d.event,
                "status": d.status,
                "attempts": d.attempts,
                "last_status_code": d.last_status_code,
                "last_error": d.last_error,
                "created_at": iso(d.created_at),
                "delivered_at": iso(d.delivered_at),
                "next_attempt_at": iso(d.next_attempt_at) if d.status == "pending" else None,
                "log": attempts.get(d.id, []),
            }
            for d in rows
        ],
    }
