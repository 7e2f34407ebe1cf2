"""The read side: each dashboard page is a function returning a JSON-ready dict. The HTML page renders
that dict; its JSON twin (``/api/v1/...``) returns it as it is, so both always show the same data."""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from ranklens import stats
from ranklens.comparison.pairing import looks_between_subjects, pair_values, paired_summary, query_values
from ranklens.monitor.coverage import COVERAGE, coverage_json, on_text, stored_coverage
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
from ranklens.monitor.readcache import BoundedCache
from ranklens.monitor.rules import describe_rule, monitor_scope_key, rule_json
from ranklens.monitor.service import iso

__all__ = [
    "HEADLINE_MEASURES",
    "ab_view",
    "alerts_view",
    "deliveries_view",
    "headline_measure",
    "overview_view",
    "projects_view",
    "rules_view",
    "segments_view",
    "series_view",
    "set_headline_measure",
    "snapshot_view",
    "snapshots_view",
]


#: The measure a page opens on when none is asked for: the first of these the project has, else the
#: first nDCG cut-off, else the first measure alphabetically.
HEADLINE_MEASURES = ("nDCG@10", "nDCG", "nDCG@20", "nDCG@5")


def headline_measure(measures: Sequence[str], preferred: str | None = None) -> str:
    """The measure the pages open on: ``preferred`` (the project's headline setting) when the project has
    it, else the first of :data:`HEADLINE_MEASURES` present, else the first ``nDCG@k``, else the first.

    >>> headline_measure(["AP", "RR", "nDCG@10"]), headline_measure(["AP", "nDCG@5"]), headline_measure(["AP", "RR"])
    ('nDCG@10', 'nDCG@5', 'AP')
    >>> headline_measure(["AP", "nDCG@10"], preferred="AP"), headline_measure([])
    ('AP', '')
    """
    if preferred and preferred in measures:
        return preferred
    for m in HEADLINE_MEASURES:
        if m in measures:
            return m
    ndcg = [m for m in measures if m.lower().startswith("ndcg@")]
    if ndcg:
        return sorted(ndcg)[0]
    return sorted(measures)[0] if measures else ""


def _headline_first(measures: Sequence[str], preferred: str | None = None) -> list[str]:
    head = headline_measure(measures, preferred)
    return sorted(measures, key=lambda m: (m != head, m))


class _LRU:
    """A small thread-safe LRU cache of computed read results (keys name immutable inputs: snapshot ids)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = compute()
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


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
    checks: dict[tuple[int, int], list[RuleCheck]] = defaultdict(list)  # (rule, system) → its checks per scope
    if latest:
        for c, sid in s.execute(
            select(RuleCheck, Snapshot.system_id)
            .join(Snapshot, Snapshot.id == RuleCheck.snapshot_id)
            .where(RuleCheck.snapshot_id.in_([x.id for x in latest.values()]))
        ):
            checks[(c.rule_id, sid)].append(c)
    firing = alerts_view(s, name, state="firing")["alerts"]
    rows = []
    measures = _headline_first(measures, p.headline_measure)
    for sid, sname in systems.items():
        snap = latest.get(sid)
        cells = []
        for m in measures:
            # the cell's status is that of the rules on this value (all queries); a segment rule's status
            # belongs to its segment, shown apart, never to the total
            status = None
            seg_status: dict[str, str] = {}
            for r in rules:
                if not (r.enabled and r.measure == m):
                    continue
                for check in checks.get((r.id, sid), []):
                    if check.status == "skipped":
                        continue
                    if check.segment:
                        old = seg_status.get(check.segment)
                        seg_status[check.segment] = "breach" if check.status == "breach" or old == "breach" else "ok"
                    else:
                        status = "breach" if check.status == "breach" or status == "breach" else "ok"
            cells.append(
                {
                    "measure": m,
                    "value": values[sid].get(m),
                    "status": status,
                    "segments": [{"segment": k, "status": v} for k, v in sorted(seg_status.items())],
                    "on": _on(snap, "") if m != COVERAGE else None,
                }
            )
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
            systems[sid]: _worst(c.status for c in cs) for (rid, sid), cs in checks.items() if rid == r.id and sid in systems
        }
        rule_rows.append(d)
    n_snaps = s.scalar(select(func.count()).select_from(Snapshot).where(Snapshot.project_id == p.id)) or 0
    return {
        "project": p.name,
        "description": p.description,
        "headline_measure": p.headline_measure,
        "measures": measures,
        "segments": sorted(segments),
        "systems": rows,
        "rules": rule_rows,
        "firing_alerts": firing,
        "snapshots": n_snaps,
    }


def _on(snap: Snapshot | None, segment: str) -> str | None:
    """``on 35 of 50 queries`` when the snapshot's values leave unanswered queries out (``missing: skip``)."""
    if snap is None or snap.missing != "skip":
        return None
    a, e = (stored_coverage(snap.coverage) or {}).get(segment, (0, 0))
    return on_text(a, e) if e and a < e else None


def _worst(statuses: Any) -> str:
    """One status for a rule checked in several scopes: breach over ok over skipped."""
    found = set(statuses)
    return next((st for st in ("breach", "ok", "skipped") if st in found), "skipped")


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
    band: bool = True,
) -> dict[str, Any]:
    """``/projects/{p}/series``: values over time per system, threshold lines and alert markers; points of
    snapshots with per-query values carry ``ci_low``/``ci_high`` (the 95% t interval of the mean over the
    ``n`` queries, :func:`ranklens.stats.t_interval`), drawn as a band so that a dip inside it is not read
    as a regression."""
    p = _project(s, name)
    names = _systems(s, p)
    filt = _filters(s, p)
    if measure is None:
        measure = headline_measure(filt["measures"], p.headline_measure)
    chosen = {sid: n for sid, n in names.items() if not systems or n in systems}
    if systems:
        for n in systems:
            _system_id(names, n)
    series = []
    budget = [BAND_BUDGET]  # per-query values this read may parse for bands not cached yet
    for sid, sname in chosen.items():
        q = (
            select(Snapshot.at, SnapshotValue.value, Snapshot.client_id, Snapshot.id, Snapshot.has_per_query,
                   Snapshot.missing, Snapshot.coverage, Snapshot.num_queries)
            .join(SnapshotValue, SnapshotValue.snapshot_id == Snapshot.id)
            .where(Snapshot.system_id == sid, SnapshotValue.measure == measure, SnapshotValue.segment == segment)
        )
        if since is not None:
            q = q.where(Snapshot.at >= since)
        rows = s.execute(q.order_by(Snapshot.at.desc(), Snapshot.id.desc()).limit(limit)).all()[::-1]
        points: list[dict[str, Any]] = [{"at": iso(at), "value": v, "snapshot": cid} for at, v, cid, *_ in rows]
        if measure != COVERAGE:
            for point, row in zip(points, rows):
                if row.missing == "skip":  # values over the answered queries: say on how many
                    answered, expected = (stored_coverage(row.coverage) or {}).get(segment, (0, 0))
                    if expected and answered < expected:
                        point["on"] = on_text(answered, expected)
        if band:
            # the 95% interval of the mean over the queries, for the newest BAND_POINTS snapshots that
            # stored per-query values (cached per snapshot: snapshots do not change)
            with_queries = [i for i, r in enumerate(rows) if r[4]][-BAND_POINTS:]
            for i in reversed(with_queries):  # the newest first: a read out of budget leaves the oldest bare
                key = (_db_key(s), rows[i][3], measure, segment)
                if key not in _BANDS:
                    if budget[0] <= 0:
                        continue  # computed by a later read: one read parses at most BAND_BUDGET values
                    budget[0] -= rows[i].num_queries or 1
                ci = _mean_interval(s, rows[i][3], measure, segment)
                if ci is not None:
                    points[i]["ci_low"], points[i]["ci_high"], points[i]["n"] = ci
        series.append({"system": sname, "points": points})
    thresholds = []
    for r in s.scalars(
        select(Rule).where(
            Rule.project_id == p.id, Rule.kind == "threshold", Rule.measure == measure, Rule.segment.in_({segment, ""})
        )
    ):
        if segment and not r.segment and _replaced_in(s, p, r, segment):
            continue  # the segment's own rule of this kind replaces the general one there
        if r.system_id is None or r.system_id in chosen:
            thresholds.append(
                {"rule_id": r.id, "value": r.threshold, "op": r.op, "system": names.get(r.system_id) if r.system_id else None, "enabled": r.enabled}
            )
    alerts = []
    for a, r in s.execute(
        select(Alert, Rule).join(Rule, Rule.id == Alert.rule_id).where(Alert.project_id == p.id, Rule.measure == measure, Alert.segment == segment,
                                                                  Alert.source == "snapshot")
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
                    "rule": describe_rule(r, names, a.segment),
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


#: How many of a series' newest snapshots get a confidence band.
BAND_POINTS = 400
#: The per-query values one series read may parse to draw bands not cached yet (some 2 s of work): a
#: long history of large snapshots gets its band over several reads, the newest points first.
BAND_BUDGET = 2_000_000
_BANDS = _LRU(4096)


def _mean_interval(s: Session, snapshot_id: int, measure: str, segment: str) -> tuple[float, float, int] | None:
    def compute() -> tuple[float, float, int] | None:
        doc = _load_queries(s, snapshot_id)
        if not doc or measure not in doc["values"]:
            return None
        vals = np.asarray(list(_query_map(doc, measure, segment).values()), dtype=np.float64)
        if vals.size < 2:
            return None
        ci = stats.t_interval(vals, np.zeros_like(vals))  # the interval of mean(vals − 0): of the mean
        if not (math.isfinite(ci.low) and math.isfinite(ci.high)):
            return None
        return float(ci.low), float(ci.high), int(vals.size)

    return _BANDS.get((_db_key(s), snapshot_id, measure, segment), compute)  # type: ignore[no-any-return]


def segments_view(s: Session, name: str, *, measure: str | None = None) -> dict[str, Any]:
    """``/projects/{p}/segments``: the latest value of every segment per system, with the thresholds that
    apply in each segment (a rule without a segment applies in every one, :func:`ranklens.gates.rule_scopes`),
    each value's status under them, and each segment's coverage (answered / expected queries)."""
    p = _project(s, name)
    names = _systems(s, p)
    filt = _filters(s, p)
    if measure is None:
        measure = headline_measure(filt["measures"], p.headline_measure)
    latest = _latest_snapshots(s, p)
    table: dict[str, dict[str, float]] = defaultdict(dict)
    status: dict[str, dict[str, str]] = defaultdict(dict)
    coverage: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    on: dict[str, dict[str, str]] = defaultdict(dict)
    if latest:
        ids = [x.id for x in latest.values()]
        for sid, seg, v in s.execute(
            select(Snapshot.system_id, SnapshotValue.segment, SnapshotValue.value)
            .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
            .where(SnapshotValue.snapshot_id.in_(ids), SnapshotValue.measure == measure)
        ):
            table[seg or "(all)"][names[sid]] = v
        for c, sid in s.execute(
            select(RuleCheck, Snapshot.system_id)
            .join(Snapshot, Snapshot.id == RuleCheck.snapshot_id)
            .join(Rule, Rule.id == RuleCheck.rule_id)
            .where(RuleCheck.snapshot_id.in_(ids), Rule.measure == measure, Rule.enabled.is_(True))
        ):
            if c.status in ("ok", "breach"):
                key = c.segment or "(all)"
                old = status[key].get(names[sid])
                status[key][names[sid]] = "breach" if "breach" in (c.status, old) else "ok"
        for snap in latest.values():
            for seg, (a, e) in (stored_coverage(snap.coverage) or {}).items():
                key = seg or "(all)"
                coverage[key][names[snap.system_id]] = {"answered": a, "expected": e}
                if snap.missing == "skip" and a < e and measure != COVERAGE:
                    on[key][names[snap.system_id]] = on_text(a, e)
    segs = sorted(set(table) | set(coverage), key=lambda k: (k != "(all)", k))
    bounds = _segment_thresholds(s, p, measure, [g for g in segs if g != "(all)"])
    return {
        "project": p.name,
        "measure": measure,
        "systems": sorted(names.values()),
        "segments": [
            {"segment": seg, "values": table[seg], "thresholds": bounds.get(seg, []), "status": status[seg],
             "coverage": coverage[seg], "on": on[seg]}
            for seg in segs
        ],
        "filters": filt,
    }


def _segment_thresholds(s: Session, p: Project, measure: str, segments: list[str]) -> dict[str, list[str]]:
    """The bounds (``> 0.85``) of the enabled threshold rules on ``measure`` that apply in each scope
    (``(all)`` and every segment), expanded as the checks are (:func:`ranklens.gates.rule_scopes`)."""
    from ranklens.gates import rule_scopes
    rules = s.scalars(
        select(Rule).where(Rule.project_id == p.id, Rule.enabled.is_(True), Rule.measure == measure).order_by(Rule.id)
    ).all()
    out: dict[str, list[str]] = defaultdict(list)
    for r, scope in rule_scopes(rules, segments, key=monitor_scope_key, segment_of=lambda r: r.segment or None):
        if r.kind == "threshold" and r.threshold is not None:
            text = f"{r.op} {r.threshold:g}"
            if text not in out[scope or "(all)"]:
                out[scope or "(all)"].append(text)
    return out


def _replaced_in(s: Session, p: Project, rule: Rule, segment: str) -> bool:
    """Whether ``segment`` has its own rule that replaces the general ``rule`` there."""
    own = s.scalars(select(Rule).where(Rule.project_id == p.id, Rule.segment == segment, Rule.measure == rule.measure))
    return any(monitor_scope_key(o) == monitor_scope_key(rule) for o in own)


def _load_queries(s: Session, snapshot_id: int) -> dict[str, Any] | None:
    text = s.scalar(select(SnapshotQueries.data).where(SnapshotQueries.snapshot_id == snapshot_id))
    return json.loads(text) if text else None


def _snapshot(s: Session, p: Project, client_id: str) -> Snapshot:
    snap = s.scalar(select(Snapshot).where(Snapshot.project_id == p.id, Snapshot.client_id == client_id))
    if snap is None:
        raise NotFound(f"no snapshot {client_id!r} in project {p.name!r}")
    return snap


#: Above this many paired queries, the resampling tests (bootstrap, randomisation) run on a fixed random
#: sample of this many; the mean difference, its t interval and wins/ties/losses always use every query.
AB_SAMPLE_CAP = 5_000
#: The A/B cache's budget: the paired per-query values of about two 200,000-query comparisons.
AB_CACHE_BYTES = 32 * 1024 * 1024
_AB_CACHE = BoundedCache(max_bytes=AB_CACHE_BYTES)
#: The per-query rows of one A/B answer (``limit``) by default; at most :data:`ranklens.monitor.schemas.MAX_PAGE`.
AB_PAGE = 1000
_RESAMPLING = ("bootstrap", "randomisation")


def _db_key(s: Session) -> tuple[int, str]:
    bind = s.get_bind()
    return id(bind), str(getattr(bind, "url", ""))


def ab_view(
    s: Session,
    name: str,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    measure: str | None = None,
    segment: str = "",
    test: str = "t",
    a: str | None = None,
    b: str | None = None,
    limit: int = AB_PAGE,
    offset: int = 0,
    pre: Sequence[str] = (),
    expected_split: float = 0.5,
) -> dict[str, Any]:
    """``/projects/{p}/ab``: the ``candidate`` system against the ``baseline`` on their latest snapshots,
    always as **candidate − baseline** (the orientation of ``ranklens compare``: positive = the candidate is
    better): difference, CI, p-value from the per-query values when both have them, and both series.

    The design follows the snapshots: **paired** when they share most queries (evaluated on the same
    queries), **unpaired** when most users were served by one system only (an online A/B test): then the
    comparison is ``ranklens ab``'s (:mod:`ranklens.monitor.ab_unpaired`): Welch, CUPED with the ``pre``
    snapshot (one for both arms, or baseline's then candidate's), the always-valid interval with one look per
    UTC day, the sample-ratio check against ``expected_split`` (the baseline's planned share). An unknown
    ``pre`` snapshot is a 404, one sharing no user with an arm a 400.

    The old parameters still work: ``a`` is the candidate and ``b`` the baseline (the page showed A − B).
    The resampling tests run on at most :data:`AB_SAMPLE_CAP` queries, and the result is cached per
    snapshot pair, measure, segment and test (in at most :data:`AB_CACHE_BYTES`). ``per_query`` is one page
    of the per-query differences in ascending order (``limit`` rows from ``offset``; ``per_query_total``
    says how many there are)."""
    p = _project(s, name)
    if len(pre) > 2:
        raise MonitorError(f"pre names one pre-period snapshot for both arms, or two (baseline's, candidate's); got {len(pre)}")
    if not 0.0 < expected_split < 1.0:
        raise MonitorError(f"expected_split (the baseline's planned share) must lie between 0 and 1; got {expected_split!r}")
    pre_snaps = [_snapshot(s, p, pid) for pid in pre]  # an unknown id: 404 before any work
    names = _systems(s, p)
    filt = _filters(s, p)
    all_names = sorted(names.values())
    baseline = baseline or b
    candidate = candidate or a
    if baseline is None or candidate is None:
        # by default the longest-running system (production) is the baseline and the newest one the
        # candidate — never production painted as the candidate because of its name's place in the alphabet
        all_names = _by_first_snapshot(s, p, names) or all_names
    if baseline is None:
        rest = [n for n in all_names if n != candidate]
        baseline = rest[0] if rest else (all_names[0] if all_names else None)
    if candidate is None:
        rest = [n for n in all_names if n != baseline]
        candidate = rest[-1] if rest else baseline
    if measure is None:
        measure = headline_measure(filt["measures"], p.headline_measure)
    out: dict[str, Any] = {
        "project": p.name,
        "baseline": baseline,
        "candidate": candidate,
        "orientation": "candidate − baseline",
        "a": candidate,
        "b": baseline,
        "measure": measure,
        "segment": segment or None,
        "test": test,
        "pre": list(pre) or None,
        "expected_split": expected_split,
        "filters": filt,
    }
    if baseline is None or candidate is None:
        out.update(comparison=None, per_query=[], per_query_total=0, limit=limit, offset=offset, series=[])  # the key order below
        return out
    latest = _latest_snapshots(s, p)
    snaps = {label: latest.get(_system_id(names, sys_name)) for label, sys_name in (("candidate", candidate), ("baseline", baseline))}
    comparison: dict[str, Any] = {f"{label}_snapshot": snap.client_id if snap else None for label, snap in snaps.items()}
    for label, snap in snaps.items():
        comparison[f"{label}_value"] = (
            s.scalar(
                select(SnapshotValue.value).where(
                    SnapshotValue.snapshot_id == snap.id, SnapshotValue.measure == measure, SnapshotValue.segment == segment
                )
            )
            if snap
            else None
        )
    cv, bv = comparison["candidate_value"], comparison["baseline_value"]
    comparison["difference"] = cv - bv if cv is not None and bv is not None else None
    per_query: list[dict[str, Any]] = []
    total = 0
    sc, sb = snaps["candidate"], snaps["baseline"]
    # a measure or segment the project does not have pairs nothing: answered without reading the per-query
    # values (an unknown name must cost no parsing)
    known = measure in filt["measures"] and (not segment or segment in filt["segments"])
    if known and sc and sb and sc.has_per_query and sb.has_per_query:
        from ranklens.monitor.ab_unpaired import exposure_signature

        arms = _Arms(sc, sb, (baseline, candidate), tuple(pre_snaps), expected_split)
        shown = (exposure_signature(s, sc, pre_snaps), exposure_signature(s, sb, pre_snaps))
        key = (_db_key(s), sc.id, sb.id, measure, segment, test, tuple(x.id for x in pre_snaps), expected_split, shown)
        paired = _cached_pairs(s, key, arms, measure, segment, test)
        comparison.update(paired.stats)
        per_query, total = paired.page(offset, limit), len(paired.queries)
    # the old names, same values (a = candidate, b = baseline)
    comparison.update(
        a_snapshot=comparison["candidate_snapshot"],
        b_snapshot=comparison["baseline_snapshot"],
        a_value=comparison["candidate_value"],
        b_value=comparison["baseline_value"],
    )
    out["comparison"] = comparison
    out["per_query"] = per_query
    out["per_query_total"] = total
    out["limit"] = limit
    out["offset"] = offset
    out["series"] = series_view(s, name, measure=measure, systems=sorted({baseline, candidate}), segment=segment, band=False)["series"]
    return out


def _by_first_snapshot(s: Session, p: Project, names: dict[int, str]) -> list[str]:
    """The project's systems with snapshots, oldest first snapshot first (then by name)."""
    firsts = s.execute(
        select(Snapshot.system_id, func.min(Snapshot.at)).where(Snapshot.project_id == p.id).group_by(Snapshot.system_id)
    ).all()
    return [names[sid] for sid, _ in sorted(firsts, key=lambda r: (r[1], names[r[0]])) if sid in names]


@dataclass(frozen=True)
class _Paired:
    """One A/B comparison: its statistics and the paired per-query values in ascending order of the
    difference (compact: the cache holds these)."""

    stats: dict[str, Any]
    queries: list[str]
    candidate: np.ndarray
    baseline: np.ndarray

    def page(self, offset: int, limit: int) -> list[dict[str, Any]]:
        rows = []
        for i in range(offset, min(offset + limit, len(self.queries))):
            c, b = float(self.candidate[i]), float(self.baseline[i])
            rows.append({"query": self.queries[i], "candidate": c, "baseline": b, "a": c, "b": b, "difference": c - b})
        return rows


_NO_PAIRS = _Paired({}, [], np.zeros(0), np.zeros(0))


def _paired_bytes(p: _Paired) -> int:
    """The estimated memory of one cached comparison."""
    extra = len(json.dumps(p.stats, default=str)) * 2 if "ab" in p.stats else 0  # the unpaired answer: its daily path
    return 1024 + extra + sum(sys.getsizeof(q) + 8 for q in p.queries) + p.candidate.nbytes + p.baseline.nbytes


#: One A/B computation at a time: a cache miss holds one snapshot's parsed per-query document and two
#: query maps (some 70 MB at 200,000 queries); concurrent misses wait instead of adding up.
_AB_COMPUTE = threading.Lock()


@dataclass(frozen=True)
class _Arms:
    """The two latest snapshots compared, the systems' names (baseline, candidate), the pre-period
    snapshots and the planned split: what the unpaired design needs beyond the values."""

    candidate: Snapshot
    baseline: Snapshot
    names: tuple[str, str]
    pre: tuple[Snapshot, ...]
    expected_split: float


def _cached_pairs(s: Session, key: Hashable, arms: _Arms, measure: str, segment: str, test: str) -> _Paired:
    def compute() -> _Paired:
        with _AB_COMPUTE:  # another request may have computed it meanwhile
            return _AB_CACHE.get(key, lambda: _paired(s, arms, measure, segment, test), size=_paired_bytes)  # type: ignore[no-any-return]

    return _AB_CACHE.get(key, compute, size=_paired_bytes)  # type: ignore[no-any-return]


def _measure_map(s: Session, snapshot_id: int, measure: str, segment: str) -> dict[str, float] | None:
    """One snapshot's ``query → value`` of ``measure`` (in ``segment``); the parsed document is dropped at once."""
    doc = _load_queries(s, snapshot_id)
    if not doc or measure not in doc["values"]:
        return None
    return _query_map(doc, measure, segment)


def _paired(s: Session, arms: _Arms, measure: str, segment: str, test: str) -> _Paired:
    mc = _measure_map(s, arms.candidate.id, measure, segment)
    mb = _measure_map(s, arms.baseline.id, measure, segment) if mc is not None else None
    if mc is None or mb is None:
        return _NO_PAIRS
    pairing = pair_values(dict(sorted(mc.items())), mb)
    if looks_between_subjects(pairing.n, pairing.n + len(pairing.only_a) + len(pairing.only_b)):
        # users split between the systems: nothing to pair; ranklens ab's analysis (issue 25)
        from ranklens.monitor.ab_unpaired import unpaired_stats

        part = unpaired_stats(
            s, candidate=arms.candidate, baseline=arms.baseline, names=arms.names, measure=measure, segment=segment,
            values=(mc, mb), pre=arms.pre, expected_split=arms.expected_split,
        )
        return _Paired(part, [], np.zeros(0), np.zeros(0))
    if not pairing.n:
        return _NO_PAIRS
    sampled = None
    if test in _RESAMPLING and pairing.n > AB_SAMPLE_CAP:
        r = paired_summary(pairing.a, pairing.b, "t")  # mean, t interval, wins/ties/losses: every query
        idx = np.sort(np.random.default_rng(0).choice(pairing.n, AB_SAMPLE_CAP, replace=False))
        p_value = paired_summary(pairing.a[idx], pairing.b[idx], test).p_value
        sampled = AB_SAMPLE_CAP
    else:
        r = paired_summary(pairing.a, pairing.b, test)
        p_value = r.p_value
    part = {
        "design": "paired",
        "n": r.n,
        "mean_difference": r.mean_diff,
        "ci_low": _num(r.ci_low),
        "ci_high": _num(r.ci_high),
        "p_value": _num(p_value),
        "test": test if sampled else r.test,
        "test_sample": sampled,
        "wins": r.wins,
        "ties": r.ties,
        "losses": r.losses,
    }
    if arms.pre:
        part["notes"] = ["pre-period snapshot ignored: the systems were evaluated on the same queries (paired design; CUPED is for users split between them)"]
    order = sorted(pairing.queries, key=lambda q: mc[q] - mb[q])
    cand = np.fromiter((mc[q] for q in order), dtype=np.float64, count=len(order))
    base = np.fromiter((mb[q] for q in order), dtype=np.float64, count=len(order))
    return _Paired(part, list(order), cand, base)


def _num(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _query_map(doc: dict[str, Any], measure: str, segment: str) -> dict[str, float]:
    return query_values(doc["queries"], doc["values"][measure], doc.get("segments"), segment or None)


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
    measures: list[str] = _headline_first(json.loads(snap.measures), p.headline_measure)
    measure = measure or headline_measure(measures, p.headline_measure)
    values = _values_by_segment(s, snap.id)
    cov = stored_coverage(snap.coverage)
    checks = [
        {"rule_id": r.id, "rule": describe_rule(r, names, c.segment), "segment": c.segment or None, "status": c.status,
         "value": c.value, "detail": c.detail}
        for c, r in s.execute(
            select(RuleCheck, Rule).join(Rule, Rule.id == RuleCheck.rule_id).where(RuleCheck.snapshot_id == snap.id)
            .order_by(Rule.id, RuleCheck.segment)
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
        "values": [
            {"segment": seg, "values": values[seg], "coverage": _cov(cov, seg)}
            for seg in sorted(values.keys() | {k or "(all)" for k in cov or {}}, key=lambda k: (k != "(all)", k))
        ],
        **coverage_json(cov, snap.missing),
        "rules": checks,
        "worst_queries": [],
        "compare": None,
        "changes": [],
        "segment_changes": [],
        "previous": _previous(s, snap),
        "choices": _choices(s, p, names, snap),
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
        out["segment_changes"] = _segment_changes(values, cov, _values_by_segment(s, other.id), stored_coverage(other.coverage), measure)
        odoc = _load_queries(s, other.id) if other.has_per_query else None
        if doc and odoc and measure in doc["values"] and measure in odoc["values"]:
            mine, theirs = _query_map(doc, measure, ""), _query_map(odoc, measure, "")
            common = set(mine) & set(theirs)
            ordered = sorted(common, key=lambda q: (-abs(mine[q] - theirs[q]), q))[: max(1, min(worst, 1000))]
            out["changes"] = [{"query": q, "value": mine[q], "other": theirs[q], "change": mine[q] - theirs[q]} for q in ordered]
    return out


def _values_by_segment(s: Session, snapshot_id: int) -> dict[str, dict[str, float]]:
    """``{segment or "(all)": {measure: value}}`` of one snapshot."""
    values: dict[str, dict[str, float]] = defaultdict(dict)
    for m, seg, v in s.execute(
        select(SnapshotValue.measure, SnapshotValue.segment, SnapshotValue.value).where(SnapshotValue.snapshot_id == snapshot_id)
    ):
        values[seg or "(all)"][m] = v
    return values


def _cov(cov: dict[str, tuple[int, int]] | None, seg: str) -> dict[str, int] | None:
    found = (cov or {}).get("" if seg == "(all)" else seg)
    return None if found is None else {"answered": found[0], "expected": found[1]}


def _segment_changes(
    mine: dict[str, dict[str, float]], cov: dict[str, tuple[int, int]] | None,
    theirs: dict[str, dict[str, float]], other_cov: dict[str, tuple[int, int]] | None, measure: str,
) -> list[dict[str, Any]]:
    """The change of ``measure`` in every scope both snapshots have: this − other, with both coverages."""
    out = []
    for seg in sorted(mine.keys() & theirs.keys(), key=lambda k: (k != "(all)", k)):
        v, o = mine[seg].get(measure), theirs[seg].get(measure)
        if v is None or o is None:
            continue
        out.append({"segment": seg, "value": v, "other": o, "change": v - o, "coverage": _cov(cov, seg),
                    "other_coverage": _cov(other_cov, seg)})
    return out


#: How many snapshots the "compare with" list offers (newest first; the previous one of the system always).
CHOICES = 200


def _previous(s: Session, snap: Snapshot) -> str | None:
    """The client id of the system's snapshot just before ``snap`` (by time, then id)."""
    return s.scalar(
        select(Snapshot.client_id)
        .where(
            Snapshot.system_id == snap.system_id,
            Snapshot.id != snap.id,
            (Snapshot.at < snap.at) | ((Snapshot.at == snap.at) & (Snapshot.id < snap.id)),
        )
        .order_by(Snapshot.at.desc(), Snapshot.id.desc())
        .limit(1)
    )


def _choices(s: Session, p: Project, names: dict[int, str], snap: Snapshot) -> list[dict[str, Any]]:
    """The snapshots to compare ``snap`` with, for the picker: time, system and id, newest first."""
    rows = s.execute(
        select(Snapshot.client_id, Snapshot.system_id, Snapshot.at, Snapshot.has_per_query)
        .where(Snapshot.project_id == p.id, Snapshot.id != snap.id)
        .order_by(Snapshot.at.desc(), Snapshot.id.desc())
        .limit(CHOICES)
    ).all()
    return [{"id": cid, "system": names.get(sid), "at": iso(at), "has_per_query": hpq} for cid, sid, at, hpq in rows]


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
    snap_ids = {a.first_snapshot_id for a, _ in rows if a.first_snapshot_id} | {a.resolved_snapshot_id for a, _ in rows if a.resolved_snapshot_id}
    cids = dict(s.execute(select(Snapshot.id, Snapshot.client_id).where(Snapshot.id.in_(snap_ids))).all()) if snap_ids else {}
    return {
        "project": p.name,
        "state": state,
        "alerts": [
            {
                "id": a.id,
                "state": a.state,
                "rule_id": r.id,
                "rule": describe_rule(r, names, a.segment),
                "measure": r.measure,
                "segment": a.segment or None,
                "system": names[a.system_id],
                "value": a.value,
                "message": a.message,
                "started_at": iso(a.started_at),
                "resolved_at": iso(a.resolved_at),
                "first_snapshot": cids.get(a.first_snapshot_id) if a.first_snapshot_id else None,
                "resolved_snapshot": cids.get(a.resolved_snapshot_id) if a.resolved_snapshot_id else None,
                "source": a.source,
                "window": a.window_start,
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


def set_headline_measure(s: Session, name: str, measure: str | None) -> dict[str, Any]:
    """Set (``None``: clear) the measure project ``name``'s pages open on; the write behind
    ``PATCH /api/v1/projects/{p}`` and ``ranklens rules headline``."""
    from ranklens.monitor.schemas import canonical_measure

    p = _project(s, name)
    p.headline_measure = canonical_measure(measure) if measure else None
    s.flush()
    return {"name": p.name, "description": p.description, "headline_measure": p.headline_measure, "created_at": iso(p.created_at)}
