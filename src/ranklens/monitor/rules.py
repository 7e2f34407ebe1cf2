"""Rules, checked on every ingested snapshot, and the alert lifecycle they drive.

Three kinds (see :class:`ranklens.monitor.schemas.RuleIn`):

* ``threshold`` — the snapshot's value of ``measure`` (in ``segment``) must satisfy ``op value``;
* ``window`` — the value must not fall more than ``max_drop`` below the system's own mean over the trailing
  ``window_days`` (earlier snapshots only; at least ``min_points`` of them, else the check is skipped);
* ``significance`` — the system must not be significantly worse than the ``reference`` system's latest
  snapshot at or before this one: paired test (``ranklens.stats``) on the common queries' per-query values,
  breach when the mean difference is negative and p < ``alpha``.

Each check is stored (``rule_checks``: ok, breach or skipped). Only the newest snapshot of a system moves
alerts — a backfilled old snapshot is checked and recorded, but does not fire or resolve anything. A breach
opens an alert (``firing``) unless one is open for the same rule and system; an ``ok`` resolves it. Every
change writes one delivery per matching webhook in the same transaction (the outbox that the webhook worker
sends from), so an alert and its notifications are committed together or not at all.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.orm import Session

from ranklens.comparison.pairing import pair_values, paired_summary, query_values
from ranklens.gates import bound_holds, drop_within, rule_scopes
from ranklens.monitor.coverage import COVERAGE, on_text
from ranklens.monitor.models import (
    Alert,
    Delivery,
    Rule,
    RuleCheck,
    Snapshot,
    SnapshotQueries,
    SnapshotValue,
    System,
    Webhook,
    utcnow,
)

__all__ = [
    "OPS",
    "CheckOutcome",
    "Ref",
    "SnapRef",
    "SnapshotData",
    "describe_rule",
    "edit_rule",
    "ensure_coverage_rule",
    "evaluate_rules",
    "find_same_rule",
    "monitor_scope_key",
    "rule_json",
    "signed_change",
]

_RULES_FOR = (
    select(Rule)
    .where(Rule.project_id == bindparam("p"), Rule.enabled.is_(True))
    .where(or_(Rule.system_id.is_(None), Rule.system_id == bindparam("s")))
    .order_by(Rule.id)
)
_NEWER = select(func.count()).select_from(Snapshot).where(
    Snapshot.system_id == bindparam("s"), Snapshot.id != bindparam("id"), Snapshot.at > bindparam("at")
)
# a snapshot check sees only snapshot alerts: it never resolves a production alert (nor they one of its)
_OPEN_ALERTS = select(Alert).where(Alert.system_id == bindparam("s"), Alert.state == "firing", Alert.source == "snapshot")
_SYSTEM_NAMES = select(System.id, System.name).where(System.project_id == bindparam("p"))
_WINDOW = (
    select(func.avg(SnapshotValue.value), func.count())
    .join(Snapshot, Snapshot.id == SnapshotValue.snapshot_id)
    .where(
        Snapshot.system_id == bindparam("s"),
        Snapshot.at >= bindparam("start"),
        Snapshot.at < bindparam("at"),
        SnapshotValue.measure == bindparam("m"),
        SnapshotValue.segment == bindparam("seg"),
    )
)
_INSERT_CHECKS = RuleCheck.__table__.insert()  # type: ignore[attr-defined]

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


@dataclass(frozen=True)
class Ref:
    """A project or system: id and name."""

    id: int
    name: str


@dataclass(frozen=True)
class SnapRef:
    """The snapshot being ingested: id, client id and time."""

    id: int
    client_id: str
    at: dt.datetime


@dataclass
class SnapshotData:
    """A validated, normalised snapshot ready to store (see :mod:`ranklens.monitor.service`)."""

    client_id: str
    system: str
    at: dt.datetime
    tags: dict[str, str]
    measures: list[str]
    aggregates: dict[str, float]
    segment_values: dict[str, dict[str, float]]
    num_queries: int | None
    queries: list[str] | None
    per_query: dict[str, list[float | None]] | None
    query_segments: list[str | None] | None
    digest: str
    dataset_id: int | None = None
    #: ``{scope: (answered, expected)}`` (``""``: all queries) when the expected query set is known
    coverage: dict[str, tuple[int, int]] | None = None
    #: how unanswered expected queries count: ``zero`` or ``skip`` (None: expected set unknown)
    missing: str | None = None

    def value(self, measure: str, segment: str) -> float | None:
        if segment == "":
            return self.aggregates.get(measure)
        return self.segment_values.get(segment, {}).get(measure)


@dataclass
class CheckOutcome:
    rule_id: int
    rule: str
    status: str
    value: float | None
    detail: str
    alert: dict[str, Any] | None = None
    deliveries: int = 0
    segment: str | None = None  # the scope checked (None: all queries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "rule": self.rule,
            "segment": self.segment,
            "status": self.status,
            "value": self.value,
            "detail": self.detail,
            "alert": self.alert,
        }


def describe_rule(rule: Rule, systems: dict[int, str], scope: str = "") -> str:
    """A one-line description: ``nDCG@10 >= 0.85 [segment books] (system bm25)``; ``scope`` names the
    segment a rule without one is being checked in."""
    seg = rule.segment or scope
    seg_text = f" [segment {seg}]" if seg else ""
    who = f" (system {systems.get(rule.system_id, '?')})" if rule.system_id else ""
    if rule.kind == "threshold":
        text = f"{rule.measure} {rule.op} {rule.threshold:g}"
    elif rule.kind == "window":
        text = f"{rule.measure} >= {rule.window_days:g}-day mean − {rule.max_drop:g}"
    else:
        ref = systems.get(rule.reference_system_id or -1, "?")
        text = f"{rule.measure} not significantly below {ref} ({rule.test} test, α = {rule.alpha:g})"
    return text + seg_text + who


def monitor_scope_key(rule: Rule) -> tuple[str, str]:
    """A monitor rule's kind in the gate's terms (min, max, max_drop) and its measure: a segment's own
    rule replaces a general rule with the same key there (:func:`ranklens.gates.rule_scopes`)."""
    if rule.kind == "threshold":
        return ("min" if rule.op in (">=", ">") else "max", rule.measure)
    return ("max_drop", rule.measure)


def _open_key(rule_id: int, system_id: int, scope: str) -> str:
    """At most one open alert per rule × system × scope (all queries keep the key they always had)."""
    if not scope:
        return f"{rule_id}:{system_id}"
    return f"{rule_id}:{system_id}:{hashlib.sha256(scope.encode()).hexdigest()[:24]}"


def evaluate_rules(s: Session, project: Ref, system: Ref, snap: SnapRef, data: SnapshotData) -> list[CheckOutcome]:
    """Check every enabled rule of ``project`` that applies to ``system`` and one of the snapshot's measures,
    in every scope :func:`ranklens.gates.rule_scopes` gives it (a rule without a segment: all queries and
    every segment of the snapshot, as ``ranklens gate --segments`` does)."""
    rules = s.scalars(_RULES_FOR, {"p": project.id, "s": system.id}).all()
    segment_measures = {m for vals in data.segment_values.values() for m in vals}
    rules = [r for r in rules if r.measure in data.aggregates or r.measure in data.measures or r.measure in segment_measures]
    if not rules:
        return []
    is_latest = not s.scalar(_NEWER, {"s": system.id, "id": snap.id, "at": snap.at})
    if any(r.system_id is not None or r.reference_system_id is not None for r in rules):
        systems = {sid: name for sid, name in s.execute(_SYSTEM_NAMES, {"p": project.id})}
    else:
        systems = {system.id: system.name}
    open_alerts = {(a.rule_id, a.segment): a for a in s.scalars(_OPEN_ALERTS, {"s": system.id})}
    segments = sorted(set(data.segment_values) | {k for k in data.coverage or {} if k})
    outcomes: list[CheckOutcome] = []
    checks: list[dict[str, Any]] = []
    for rule, scope in rule_scopes(rules, segments, key=monitor_scope_key, segment_of=lambda r: r.segment or None):
        seg = scope or ""
        if rule.kind == "significance" and rule.reference_system_id == system.id:
            continue  # the reference is not compared with itself
        alert = open_alerts.get((rule.id, seg))
        if rule.kind == "threshold":
            status, value, detail = _threshold(rule, data, seg)
        elif rule.kind == "window":
            status, value, detail = _window(s, rule, system, snap, data, seg, alert if is_latest else None)
        else:
            status, value, detail = _significance(s, rule, snap, data, seg)
        if value is not None and not math.isfinite(value):
            value = None
        checks.append(
            {"snapshot_id": snap.id, "rule_id": rule.id, "segment": seg, "status": status, "value": value, "detail": detail}
        )
        outcome = CheckOutcome(rule.id, describe_rule(rule, systems, seg), status, value, detail, segment=seg or None)
        if is_latest and status in ("ok", "breach"):
            _transition(s, project, rule, system, snap, outcome, alert, seg)
        outcomes.append(outcome)
    if checks:
        s.execute(_INSERT_CHECKS, checks)
    return outcomes


#: The rule each project gets once a snapshot carries its coverage: a fall in answered / expected queries,
#: overall or in any segment, against the week before, fires by itself.
COVERAGE_RULE = {"kind": "window", "measure": COVERAGE, "window_days": 7.0, "max_drop": 0.0, "min_points": 1}
_COVERAGE_RULES = select(func.count()).select_from(Rule).where(
    Rule.project_id == bindparam("p"), Rule.measure == COVERAGE
)


def ensure_coverage_rule(s: Session, project_id: int) -> bool:
    """Add the default coverage rule (:data:`COVERAGE_RULE`) to a project that has no rule on
    ``query_coverage`` yet (a disabled or edited one counts: it is never added twice); True when added."""
    if s.scalar(_COVERAGE_RULES, {"p": project_id}):
        return False
    rule = Rule(project_id=project_id, name="", segment="", enabled=True, created_at=utcnow(), **COVERAGE_RULE)
    s.add(rule)
    s.flush()
    rule.name = "default: " + describe_rule(rule, {})
    return True


def _where(seg: str) -> str:
    return f" in segment {seg!r}" if seg else ""


def _coverage_note(data: SnapshotData, seg: str) -> str:
    """What a check says about unanswered queries: ``on 35 of 50 queries`` when they were left out
    (``missing: skip``), ``15 of 50 queries unanswered, scored 0`` when they count as 0."""
    a, e = (data.coverage or {}).get(seg, (0, 0))
    if not e or a == e:
        return ""
    if data.missing == "skip":
        return f" {on_text(a, e)}"
    return f" ({e - a} of {e} expected queries unanswered, scored 0)"


def _no_value(rule: Rule, data: SnapshotData, seg: str) -> tuple[str, float | None, str]:
    """No value in scope: a breach when the scope expected queries and none was answered (a check over
    nothing must not pass), else skipped (the snapshot does not have this measure here)."""
    a, e = (data.coverage or {}).get(seg, (0, 0))
    if e and not a and rule.measure != COVERAGE:
        return "breach", None, f"no value of {rule.measure}{_where(seg)}: none of its {e} expected queries was answered"
    return "skipped", None, f"no value of {rule.measure}{_where(seg)}"


def _threshold(rule: Rule, data: SnapshotData, seg: str) -> tuple[str, float | None, str]:
    v = data.value(rule.measure, seg)
    if v is None:
        return _no_value(rule, data, seg)
    if rule.op is None or rule.threshold is None:
        return "skipped", v, "the rule has no comparison"
    ok = bound_holds(rule.op, v, rule.threshold)  # the gate's comparison, so CI and alerts agree
    note = "" if rule.measure == COVERAGE else _coverage_note(data, seg)
    return ("ok" if ok else "breach"), v, f"{rule.measure}{_where(seg)} = {v:.4f}{note}; rule {rule.op} {rule.threshold:g}"


def _window(
    s: Session, rule: Rule, system: Ref, snap: SnapRef, data: SnapshotData, seg: str, alert: Alert | None
) -> tuple[str, float | None, str]:
    """The value against the mean of the ``window_days`` before it. While an alert of this rule fires, the
    reference stays the window before the alert started (the days under test never become their own
    baseline), so the alert resolves only when the value is back."""
    v = data.value(rule.measure, seg)
    if v is None:
        return _no_value(rule, data, seg)
    days = float(rule.window_days or 7.0)
    end = alert.started_at if alert is not None and alert.started_at < snap.at else snap.at
    mean, n = s.execute(
        _WINDOW, {"s": system.id, "start": end - dt.timedelta(days=days), "at": end, "m": rule.measure, "seg": seg}
    ).one()
    need = rule.min_points or 1
    if not n or n < need:
        return "skipped", v, f"{n} earlier snapshot(s) in the {days:g} days before; the rule needs {need}"
    mean = float(mean)
    limit = float(rule.max_drop or 0.0)
    status = "ok" if drop_within(mean - v, limit) else "breach"
    frozen = f", before the alert started {_iso(end)}" if end != snap.at else ""
    note = "" if rule.measure == COVERAGE else _coverage_note(data, seg)
    return status, v, (
        f"{rule.measure}{_where(seg)} = {v:.4f}{note}; reference: {days:g}-day mean {mean:.4f} over {n} snapshot(s)"
        f"{frozen}; {signed_change(v, mean)}; allowed fall {limit:g}"
    )


def signed_change(value: float, reference: float) -> str:
    """``change −0.0168 (fell)``: value − reference, signed, with the word.

    >>> signed_change(0.8611, 0.8779), signed_change(0.9, 0.8), signed_change(0.5, 0.5)
    ('change −0.0168 (fell)', 'change +0.1000 (rose)', 'change +0.0000 (unchanged)')
    """
    d = value - reference
    text = f"{abs(d):.4f}"
    if float(text) == 0:  # a rounding residue is no change (it must not read "−0.0000 (fell)")
        return "change +0.0000 (unchanged)"
    return f"change {'−' if d < 0 else '+'}{text} ({'fell' if d < 0 else 'rose'})"


def _significance(s: Session, rule: Rule, snap: SnapRef, data: SnapshotData, seg: str) -> tuple[str, float | None, str]:
    if data.queries is None or data.per_query is None or rule.measure not in data.per_query:
        return "skipped", None, "the snapshot has no per-query values of " + rule.measure
    ref = s.execute(
        select(Snapshot.id, Snapshot.client_id, SnapshotQueries.data)
        .join(SnapshotQueries, SnapshotQueries.snapshot_id == Snapshot.id)
        .where(Snapshot.system_id == rule.reference_system_id, Snapshot.at <= snap.at)
        .order_by(Snapshot.at.desc(), Snapshot.id.desc())
        .limit(1)
    ).first()
    if ref is None:
        return "skipped", None, "the reference system has no snapshot with per-query values at or before this one"
    ref_doc = json.loads(ref.data)
    ref_vals = ref_doc["values"].get(rule.measure)
    if ref_vals is None:
        return "skipped", None, f"the reference snapshot {ref.client_id} has no per-query {rule.measure}"
    segment = seg or None
    mine = query_values(data.queries, data.per_query[rule.measure], data.query_segments, segment)
    pairing = pair_values(mine, query_values(ref_doc["queries"], ref_vals))
    need = rule.min_queries or 2
    if pairing.n < need:
        return "skipped", None, f"{pairing.n} common queries with the reference{_where(seg)}; the rule needs {need}"
    r = paired_summary(pairing.a, pairing.b, rule.test or "t")
    breach = r.mean_diff < 0 and not math.isnan(r.p_value) and r.p_value < float(rule.alpha or 0.05)
    word = "fell" if r.mean_diff < 0 else "rose" if r.mean_diff > 0 else "unchanged"
    detail = (
        f"{rule.measure}{_where(seg)} vs reference snapshot {ref.client_id}: mean change {r.mean_diff:+.4f} ({word}; "
        f"95% CI {r.ci_low:+.4f} to {r.ci_high:+.4f}), {r.test} p = {r.p_value:.4g}, n = {r.n}"
    )
    return ("breach" if breach else "ok"), r.mean_diff, detail


def _transition(
    s: Session, project: Ref, rule: Rule, system: Ref, snap: SnapRef, out: CheckOutcome, alert: Alert | None, seg: str
) -> None:
    key = _open_key(rule.id, system.id, seg)
    now = utcnow()
    if out.status == "breach":
        if alert is not None:
            alert.last_snapshot_id = snap.id
            alert.value = out.value
            alert.message = out.detail
            alert.updated_at = now
            out.alert = {"id": alert.id, "state": "firing", "change": "still firing"}
            return
        alert = Alert(
            project_id=project.id,
            rule_id=rule.id,
            system_id=system.id,
            segment=seg,
            state="firing",
            open_key=key,
            started_at=snap.at,
            first_snapshot_id=snap.id,
            last_snapshot_id=snap.id,
            value=out.value,
            message=out.detail,
            created_at=now,
            updated_at=now,
        )
        s.add(alert)
        s.flush()
        out.alert = {"id": alert.id, "state": "firing", "change": "fired"}
        out.deliveries = _enqueue(s, project, rule, system, snap, alert, "alert.firing", out.rule)
    elif alert is not None:
        alert.state = "resolved"
        alert.open_key = None
        alert.resolved_at = snap.at
        alert.resolved_snapshot_id = snap.id
        alert.last_snapshot_id = snap.id
        alert.value = out.value
        alert.message = out.detail  # the event carries its own value and message
        alert.updated_at = now
        s.flush()
        out.alert = {"id": alert.id, "state": "resolved", "change": "resolved"}
        out.deliveries = _enqueue(s, project, rule, system, snap, alert, "alert.resolved", out.rule)


def alert_payload(
    event: str, project: Ref, rule: Rule, system: Ref, snap: SnapRef, alert: Alert, rule_text: str
) -> dict[str, Any]:
    """The JSON body POSTed to webhooks."""
    return {
        "event": event,
        "project": project.name,
        "alert": {
            "id": alert.id,
            "state": alert.state,
            "rule_id": rule.id,
            "rule": rule_text,
            "kind": rule.kind,
            "measure": rule.measure,
            "segment": alert.segment or None,
            "system": system.name,
            "value": alert.value,
            "message": alert.message,
            "started_at": _iso(alert.started_at),
            "resolved_at": _iso(alert.resolved_at),
        },
        "snapshot": {"id": snap.client_id, "at": _iso(snap.at)},
    }


def _enqueue(
    s: Session, project: Ref, rule: Rule, system: Ref, snap: SnapRef, alert: Alert, event: str, rule_text: str
) -> int:
    hooks = s.scalars(
        select(Webhook).where(Webhook.enabled.is_(True), or_(Webhook.project_id.is_(None), Webhook.project_id == project.id))
    ).all()
    if not hooks:
        return 0
    body = alert_payload(event, project, rule, system, snap, alert, rule_text)
    now = utcnow()
    for hook in hooks:
        s.add(
            Delivery(
                webhook_id=hook.id,
                alert_id=alert.id,
                event=event,
                payload=json.dumps(body, ensure_ascii=False),
                status="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )
    return len(hooks)


def _iso(t: dt.datetime | None) -> str | None:
    if t is None:
        return None
    return t.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


# ---------------------------------------------------------------------------------------------------------
# rule identity and editing in place

#: The columns that make a rule what it is, per kind (the name and ``enabled`` do not).
_IDENTITY = {
    "threshold": ("op", "threshold"),
    "window": ("window_days", "max_drop", "min_points"),
    "significance": ("reference_system_id", "alpha", "test", "min_queries"),
}


def _rule_columns(rule_in: Any, system_id: int | None, ref_id: int | None) -> dict[str, Any]:
    """The Rule columns of a resolved :class:`~ranklens.monitor.schemas.RuleIn` (kind-specific ones only)."""
    cols: dict[str, Any] = {
        "kind": rule_in.kind,
        "measure": rule_in.measure,
        "segment": rule_in.segment or "",
        "system_id": system_id,
        "op": None,
        "threshold": None,
        "window_days": None,
        "max_drop": None,
        "min_points": None,
        "reference_system_id": None,
        "alpha": None,
        "test": None,
        "min_queries": None,
    }
    if rule_in.kind == "threshold":
        cols.update(op=rule_in.op, threshold=rule_in.value)
    elif rule_in.kind == "window":
        cols.update(window_days=rule_in.window_days, max_drop=rule_in.max_drop, min_points=rule_in.min_points)
    else:
        cols.update(reference_system_id=ref_id, alpha=rule_in.alpha, test=rule_in.test, min_queries=rule_in.min_queries)
    return cols


def find_same_rule(
    s: Session, project_id: int, rule_in: Any, system_id: int | None, ref_id: int | None, *, exclude: int | None = None
) -> Rule | None:
    """The project's rule identical to ``rule_in`` (same kind, measure, segment, system and kind-specific
    settings; name and ``enabled`` aside), if any: adding a rule twice must not make two rules, or one
    breach would open two alerts."""
    cols = _rule_columns(rule_in, system_id, ref_id)
    q = select(Rule).where(
        Rule.project_id == project_id,
        Rule.kind == cols["kind"],
        Rule.measure == cols["measure"],
        Rule.segment == cols["segment"],
        Rule.system_id.is_(None) if system_id is None else Rule.system_id == system_id,
    )
    if exclude is not None:
        q = q.where(Rule.id != exclude)
    for rule in s.scalars(q.order_by(Rule.id)):
        if all(_same(getattr(rule, c), cols[c]) for c in _IDENTITY[cols["kind"]]):
            return rule
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)
    return bool(a == b)


def rule_fields(rule: Rule, systems: dict[int, str]) -> dict[str, Any]:
    """A stored rule as :class:`~ranklens.monitor.schemas.RuleIn` fields (the starting point of an edit)."""
    out: dict[str, Any] = {
        "name": rule.name or None,
        "kind": rule.kind,
        "measure": rule.measure,
        "segment": rule.segment or None,
        "system": systems.get(rule.system_id) if rule.system_id else None,
        "enabled": rule.enabled,
    }
    if rule.kind == "threshold":
        out.update(op=rule.op, value=rule.threshold)
    elif rule.kind == "window":
        out.update(window_days=rule.window_days, max_drop=rule.max_drop, min_points=rule.min_points)
    else:
        out.update(
            reference=systems.get(rule.reference_system_id or -1), alpha=rule.alpha, test=rule.test, min_queries=rule.min_queries
        )
    return out


def edit_rule(s: Session, project: str, rule_id: int, patch: dict[str, Any]) -> dict[str, Any]:
    """Change rule ``rule_id`` of ``project`` in place (``PATCH /api/v1/projects/{p}/rules/{id}``): the
    fields of ``patch`` (``RuleIn`` fields; ``expr`` replaces the comparison, kind and measure) over the
    stored ones, checked as a new rule would be. The id, the checks already stored and any open alert stay
    (the next snapshot re-checks the rule as edited). An edit that would make it identical to another rule
    of the project is refused (409)."""
    from ranklens.monitor.errors import Conflict, NotFound
    from ranklens.monitor.models import Project
    from ranklens.monitor.schemas import RuleIn
    p = s.scalar(select(Project).where(Project.name == project))
    rule = s.get(Rule, rule_id) if 0 < rule_id < 2**63 else None
    if p is None or rule is None or rule.project_id != p.id:
        raise NotFound(f"no rule {rule_id} in project {project!r}")
    names = {sid: n for sid, n in s.execute(_SYSTEM_NAMES, {"p": p.id})}
    auto_name = rule.name == describe_rule(rule, names)[:200]
    data = rule_fields(rule, names)
    if auto_name:
        data["name"] = None
    patch = {k: v for k, v in patch.items() if v is not None or k in ("segment", "system", "name")}
    if "expr" in patch:  # a new comparison: kind-specific fields come from the expression
        for k in ("kind", "op", "value", "window_days", "max_drop", "min_points", "reference", "alpha", "test", "min_queries"):
            data.pop(k, None)
    data.update(patch)
    rule_in = RuleIn.model_validate({k: v for k, v in data.items() if v is not None}).resolved()
    system_id = _system_named(s, p.id, rule_in.system) if rule_in.system else None
    ref_id = _system_named(s, p.id, rule_in.reference) if rule_in.reference else None
    other = find_same_rule(s, p.id, rule_in, system_id, ref_id, exclude=rule.id)
    if other is not None:
        raise Conflict(f"rule {other.id} of project {project!r} is already this rule")
    for col, value in _rule_columns(rule_in, system_id, ref_id).items():
        setattr(rule, col, value)
    rule.enabled = rule_in.enabled
    names = {sid: n for sid, n in s.execute(_SYSTEM_NAMES, {"p": p.id})}
    if rule_in.name or auto_name or not rule.name:
        rule.name = (rule_in.name or describe_rule(rule, names))[:200]
    s.flush()
    return rule_json(rule, names)


def _system_named(s: Session, project_id: int, name: str) -> int:
    sid = s.scalar(select(System.id).where(System.project_id == project_id, System.name == name))
    if sid is None:
        system = System(project_id=project_id, name=name, description="", created_at=utcnow())
        s.add(system)
        s.flush()
        sid = system.id
    return int(sid)


def rule_json(rule: Rule, names: dict[int, str]) -> dict[str, Any]:
    """A rule as the API shows it: its id, its fields as an edit takes them, and a description."""
    fields = rule_fields(rule, names)
    return {"id": rule.id, **fields, "name": rule.name, "description": describe_rule(rule, names)}
