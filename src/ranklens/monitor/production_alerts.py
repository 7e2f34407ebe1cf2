"""The project's rules checked on the per-window series of its production logs — the one rule model.

Only closed windows are checked: a provisional window still lacks engagement that is on its way, so its
value is low by construction (a drop rule would fire on every fresh window). The same rules (``rules`` table, :func:`ranklens.gates.rule_scopes` for where each applies: a rule for one
segment checks that segment; a rule without one checks every segment, and a segment's own rule of the same
kind and measure replaces it there) are checked on every window of the series after each refresh:

* ``threshold`` — the window's value must satisfy ``op value`` (an alert resolves when a revision satisfies it);
* ``window`` (a drop) — is this window more than ``max_drop`` below the mean of the ``min_points`` (the rule's
  default: 3) earlier windows of the same segment, system and measure? Tested with the mixture sequential probability
  ratio test (:func:`ranklens.stats.msprt`): each refresh is one more look at a window whose data is still
  arriving, and the p-value kept is the running minimum over the looks, which by Ville's inequality stays
  below α with probability ≥ 1 − α under no drop however often one looks — a window revised after it closed,
  or re-checked at every refresh, stays covered (a z-test at every look would not:
  see ``tests/monitor/test_production_alerts.py``). ``alpha`` defaults to 0.05, the mixing sd τ is the larger
  of ``max_drop`` and a tenth of the reference mean.

``significance`` rules compare two systems' per-query values of a snapshot and are not checked here. Every
check is a row of ``window_alerts`` (``ok`` or ``firing``); a window that starts firing writes one delivery per
matching webhook (event ``window_alert.firing``) in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from statistics import NormalDist
from typing import Any

import numpy as np
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from ranklens.gates import rule_scopes
from ranklens.monitor.models import Alert, Delivery, Project, Rule, System, Webhook, WindowAlert, WindowValue, utcnow
from ranklens.monitor.rules import monitor_scope_key
from ranklens.stats.sequential import msprt

__all__ = ["DEFAULT_ALPHA", "DEFAULT_REFERENCE_WINDOWS", "check_window_rules", "drop_p"]

DEFAULT_ALPHA = 0.05
DEFAULT_REFERENCE_WINDOWS = 3
_Z95 = NormalDist().inv_cdf(0.975)  # the series' intervals are 95%: half-width / z is the standard error


def drop_p(value: float, se: float, reference: float, reference_se: float, *, max_drop: float, tau: float,
           alpha: float = DEFAULT_ALPHA) -> float:
    """The mSPRT p-value of one look at "the window is more than ``max_drop`` below the reference": 1 when
    the window is not below ``reference − max_drop``.

    >>> round(drop_p(0.40, 0.01, 0.50, 0.005, max_drop=0.0, tau=0.05), 6), drop_p(0.55, 0.01, 0.5, 0.005, max_drop=0.0, tau=0.05)
    (0.0, 1.0)
    """
    diff = value - (reference - max_drop)
    if not diff < 0:
        return 1.0
    p, _ = msprt(diff, se**2 + reference_se**2, tau, alpha=alpha)
    return float(p)


def _se(v: WindowValue) -> float | None:
    if v.ci_low is None or v.ci_high is None:
        return None
    return (v.ci_high - v.ci_low) / (2 * _Z95)


def _breaches_threshold(rule: Rule, value: float) -> bool:
    import operator

    ops = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
    return not ops[rule.op or ">="](value, rule.threshold if rule.threshold is not None else -math.inf)


def check_window_rules(s: Session, pid: int) -> list[dict[str, Any]]:
    """Check every enabled threshold and window rule of the project on the current series; returns the
    windows that started firing in this check."""
    rules = [r for r in s.scalars(select(Rule).where(Rule.project_id == pid, Rule.enabled.is_(True)).order_by(Rule.id))
             if r.kind in ("threshold", "window")]
    if not rules:
        return []
    names = dict(s.execute(select(System.id, System.name).where(System.project_id == pid)).all())
    series: dict[tuple[str, str, str], list[WindowValue]] = defaultdict(list)
    for v in s.scalars(select(WindowValue).where(WindowValue.project_id == pid, WindowValue.current.is_(True))
                       .order_by(WindowValue.start)):
        series[(v.measure, v.segment, v.system)].append(v)
    segments = sorted({seg for _, seg, _ in series})
    system_ids = {name: sid for sid, name in names.items()}
    previous = {(a.rule_id, a.start, a.segment, a.system, a.measure): a for a in s.scalars(
        select(WindowAlert).where(WindowAlert.project_id == pid))}
    fired: list[dict[str, Any]] = []
    now = utcnow()
    for rule, scope in rule_scopes(rules, segments, key=monitor_scope_key):
        if scope is None:
            continue  # the series is per segment; "all" is a segment when the log has none
        for (measure, seg, system), points in series.items():
            if measure.lower() != rule.measure.lower() or seg != scope:
                continue
            if rule.system_id is not None and names.get(rule.system_id) != system:
                continue
            for i, v in enumerate(points):
                if v.value is None or v.provisional:
                    continue  # a provisional value lacks engagement still to come: low by construction
                reference = p = None
                if rule.kind == "threshold":
                    breach = _breaches_threshold(rule, v.value)
                    message = f"{measure} = {v.value:.4f} in window {v.start} ({seg}, {system}); rule {measure} {rule.op} {rule.threshold:g}"
                else:
                    k = rule.min_points or DEFAULT_REFERENCE_WINDOWS
                    earlier = [u for u in points[max(0, i - k) : i] if u.value is not None]
                    se = _se(v)
                    if len(earlier) < k or se is None:
                        continue
                    vals = np.array([u.value for u in earlier], dtype=np.float64)
                    reference = float(vals.mean())
                    ref_se = float(vals.std(ddof=1) / math.sqrt(vals.size)) if vals.size > 1 else 0.0
                    max_drop = rule.max_drop or 0.0
                    tau = max(max_drop, 0.1 * abs(reference), 1e-9)
                    p = drop_p(v.value, se, reference, ref_se, max_drop=max_drop, tau=tau, alpha=rule.alpha or DEFAULT_ALPHA)
                    old = previous.get((rule.id, v.start, seg, system, measure))
                    if old is not None and old.p is not None:
                        p = min(p, old.p)  # the running minimum over looks: always valid
                    breach = p < (rule.alpha or DEFAULT_ALPHA)
                    message = (f"{measure} = {v.value:.4f} in window {v.start} ({seg}, {system}) vs {reference:.4f}, the mean of "
                               f"the {k} windows before; drop beyond {max_drop:g}: always-valid p = {p:.3g} (mSPRT)")
                key = (rule.id, v.start, seg, system, measure)
                state = "firing" if breach else "ok"
                row = previous.get(key)
                if row is None:
                    row = WindowAlert(project_id=pid, rule_id=rule.id, start=v.start, segment=seg, system=system, measure=measure,
                                      state=state, created_at=now, updated_at=now, message="")
                    s.add(row)
                    previous[key] = row
                    started = breach
                else:
                    started = breach and row.state != "firing"
                    row.updated_at = now
                row.state, row.value, row.reference, row.p, row.message = state, v.value, reference, p, message
                _monitor_alert(s, pid, rule, system, seg, v.start, measure, breach, v.value, message, now,
                               system_ids)
                if started:
                    alert = {"rule": rule.id, "start": v.start, "segment": seg, "system": system, "measure": measure,
                             "value": v.value, "reference": reference, "p": p, "message": message}
                    fired.append(alert)
                    _enqueue(s, pid, alert)
    s.flush()
    return fired


def open_key(rule_id: int, system_id: int, segment: str, start: str, measure: str) -> str:
    """The open-alert key of a production alert: its own namespace (``prod:``), so a snapshot check — whose
    keys are ``RULE:SYSTEM[:SCOPE]`` and which only looks at ``source = 'snapshot'`` alerts — never resolves it.

    >>> open_key(3, 7, "books", "2026-01-05T00:00:00Z", "nDCG@10")[:9]
    'prod:3:7:'
    """
    scope = hashlib.sha256(f"{segment}\x1f{start}\x1f{measure}".encode()).hexdigest()[:24]
    return f"prod:{rule_id}:{system_id}:{scope}"


def _monitor_alert(s: Session, pid: int, rule: Rule, system: str, segment: str, start: str, measure: str, breach: bool,
                   value: float, message: str, now: Any, system_ids: dict[str, int]) -> None:
    """Mirror one window check into the monitor's alert table (``/projects/{p}/alerts``): a breach opens a
    production alert (one per rule × system × segment × window × measure), a check that passes resolves it."""
    sid = system_ids.get(system)
    if sid is None:
        if not breach:
            return
        sys_row = System(project_id=pid, name=system, description="production logs")
        s.add(sys_row)
        s.flush()
        sid = system_ids[system] = sys_row.id
    key = open_key(rule.id, sid, segment, start, measure)
    alert = s.scalar(select(Alert).where(Alert.open_key == key))
    if breach:
        if alert is None:
            s.add(Alert(project_id=pid, rule_id=rule.id, system_id=sid, segment=segment, state="firing", open_key=key,
                        source="production", window_start=start, started_at=now, value=value, message=message,
                        created_at=now, updated_at=now))
        else:
            alert.value, alert.message, alert.updated_at = value, message, now
    elif alert is not None:
        alert.state, alert.open_key, alert.resolved_at = "resolved", None, now
        alert.value, alert.message, alert.updated_at = value, message, now


def _enqueue(s: Session, pid: int, alert: dict[str, Any]) -> None:
    hooks = s.scalars(select(Webhook).where(Webhook.enabled.is_(True), or_(Webhook.project_id.is_(None), Webhook.project_id == pid))).all()
    if not hooks:
        return
    project = s.scalar(select(Project.name).where(Project.id == pid))
    body = json.dumps({"event": "window_alert.firing", "project": project, "window_alert": alert}, ensure_ascii=False)
    now = utcnow()
    for hook in hooks:
        s.add(Delivery(webhook_id=hook.id, alert_id=None, event="window_alert.firing", payload=body, status="pending",
                       attempts=0, next_attempt_at=now, created_at=now))
