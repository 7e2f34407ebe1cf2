"""The A/B page's unpaired design (issue 25 §4): two systems that served different users, compared by the
library's own A/B analysis (:func:`ranklens.online.ab_values`, the implementation behind ``ranklens ab``).

From the snapshots: each user's value is the one in the **latest** snapshot of its system; each user counts
from the UTC day of the **first** snapshot of its system that holds it (its exposure), so the always-valid
(mSPRT) interval looks once per UTC day — what ``ranklens ab --sequential --exposure FILE`` computes from a
``user day`` file. A named pre-period snapshot (one for both arms, or one per arm) gives CUPED; the planned
split gives the sample-ratio check. Users in both arms are left out of both, with a note (a dashboard must not
fail on a broken split). The bootstrap is not computed here (its cost per request); Welch's test is the
page's test.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ranklens.comparison.pairing import query_values
from ranklens.errors import InputError
from ranklens.monitor.errors import MonitorError
from ranklens.monitor.models import Snapshot, SnapshotQueries

__all__ = ["DESIGN", "exposure_days", "exposure_signature", "exposure_snapshots", "snapshot_doc", "unpaired_stats", "utc_day"]

DESIGN = (
    "unpaired: the systems served different users (a between-subjects A/B test); Welch's t-test on the two "
    "arms' per-user values, CUPED with a pre-period snapshot, the always-valid (mSPRT) interval with one look per "
    "UTC day and the sample-ratio check — ranklens ab's analysis"
)


def snapshot_doc(s: Session, snapshot_id: int) -> dict[str, Any] | None:
    """One snapshot's stored per-query document (``queries``, ``values``, ``segments``), or ``None``."""
    text = s.scalar(select(SnapshotQueries.data).where(SnapshotQueries.snapshot_id == snapshot_id))
    return json.loads(text) if text else None


def utc_day(at: dt.datetime) -> str:
    """The UTC day of a time, as an ISO date (naive times are UTC).

    >>> utc_day(dt.datetime(2026, 8, 1, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2))))
    '2026-08-02'
    """
    if at.tzinfo is not None:
        at = at.astimezone(dt.timezone.utc)
    return at.date().isoformat()


def _exposure_where(latest: Snapshot, exclude: Sequence[Snapshot]) -> list[Any]:
    where = [Snapshot.system_id == latest.system_id, Snapshot.has_per_query.is_(True), Snapshot.at <= latest.at]
    own = [p for p in exclude if p.system_id == latest.system_id]
    if own:
        where.append(Snapshot.at > max(p.at for p in own))
    if exclude:
        where.append(Snapshot.id.not_in([p.id for p in exclude]))
    return where


def exposure_snapshots(s: Session, latest: Snapshot, exclude: Sequence[Snapshot] = ()) -> list[Snapshot]:
    """The snapshots with per-user values of ``latest``'s system up to ``latest``, oldest first; a pre-period
    snapshot in ``exclude`` is left out, and when it is of that system so is every snapshot up to it."""
    return list(s.scalars(select(Snapshot).where(*_exposure_where(latest, exclude)).order_by(Snapshot.at, Snapshot.id)).all())


def exposure_signature(s: Session, latest: Snapshot, exclude: Sequence[Snapshot] = ()) -> tuple[Any, ...]:
    """What identifies :func:`exposure_snapshots` without loading them (a cache key part): their count and
    the largest and summed ids (a snapshot pushed later with an earlier time changes it)."""
    row = s.execute(select(func.count(), func.max(Snapshot.id), func.sum(Snapshot.id)).where(*_exposure_where(latest, exclude))).one()
    return tuple(row)


def exposure_days(s: Session, snapshots: Sequence[Snapshot], users: Sequence[str]) -> dict[str, str]:
    """``user → UTC day`` of the first of ``snapshots`` (oldest first) that holds each of ``users``."""
    wanted = set(users)
    first: dict[str, str] = {}
    for snap in snapshots:
        doc = snapshot_doc(s, snap.id)
        if not doc:
            continue
        day = utc_day(snap.at)
        for u in doc["queries"]:
            if u in wanted and u not in first:
                first[u] = day
        if len(first) == len(wanted):
            break
    return first


def unpaired_stats(
    s: Session,
    *,
    candidate: Snapshot,
    baseline: Snapshot,
    names: tuple[str, str],
    measure: str,
    segment: str,
    values: tuple[dict[str, float], dict[str, float]],
    pre: Sequence[Snapshot] = (),
    expected_split: float = 0.5,
) -> dict[str, Any]:
    """The comparison of the A/B page for two snapshots over different users: ``values`` are the latest
    snapshots' ``user → value`` (candidate, baseline) of ``measure`` in ``segment``; ``names`` the (baseline,
    candidate) systems. The page's keys (``design`` … ``n_baseline``) plus ``ab``: the JSON of ``ranklens
    ab`` for this measure (baseline = control, candidate = treatment), without the bootstrap.

    Raises:
        MonitorError: a pre-period snapshot without per-user values, sharing no user with an arm, or one of the
            two compared (400).
    """
    from ranklens.online import ab_values

    cand, base = values
    both = cand.keys() & base.keys()
    n_c, n_b = len(cand) - len(both), len(base) - len(both)
    if n_c < 2 or n_b < 2:
        return {
            "design": "unpaired", "n_candidate": n_c, "n_baseline": n_b,
            "notes": [f"fewer than 2 users in an arm ({n_c} {names[1]}, {n_b} {names[0]}, after leaving out the "
                      f"{len(both)} in both): no test"],
        }
    pre_values = pre_labels = None
    for snap in pre:
        if snap.id in (candidate.id, baseline.id):
            raise MonitorError(
                f"pre-period snapshot {snap.client_id!r} is the latest snapshot compared; name one from before the experiment"
            )
    if pre:
        docs = []
        for snap in pre:
            doc = snapshot_doc(s, snap.id)
            if not doc:
                raise MonitorError(f"pre-period snapshot {snap.client_id!r} has no per-user values; push it with per-query values")
            docs.append({m: query_values(doc["queries"], v) for m, v in doc["values"].items() if m == measure})
        pair = (docs[0], docs[-1])
        pre_values = pair
        pre_labels = (f"pre-period snapshot {pre[0].client_id!r}", f"pre-period snapshot {pre[-1].client_id!r}")
    snaps = {c.id: c for c in (candidate, baseline)}
    first = {
        sid: exposure_days(s, exposure_snapshots(s, snap, pre), list(cand if snap is candidate else base))
        for sid, snap in snaps.items()
    }
    exposure = {**first[baseline.id], **first[candidate.id]}
    try:
        r = ab_values(
            {measure: base}, {measure: cand}, [measure], names=names, expected_split=expected_split, pre=pre_values,
            pre_labels=pre_labels, sequential=True, exposure=exposure, allow_overlap="drop", bootstrap=False, warn=False,
        )
    except InputError as e:
        raise MonitorError(str(e)) from None
    doc = r.to_dict()
    doc.pop("ranklens_version", None)
    row = doc["measures"][measure]
    return {
        "design": "unpaired",
        "n": row["control"]["n"] + row["treatment"]["n"],
        "mean_difference": row["difference"],
        "ci_low": row["ci"][0],
        "ci_high": row["ci"][1],
        "p_value": row["p"]["welch"],
        "test": "welch",
        "test_sample": None,
        "wins": None,
        "ties": None,
        "losses": None,
        "n_candidate": row["treatment"]["n"],
        "n_baseline": row["control"]["n"],
        "design_text": DESIGN,
        "notes": list(doc["notes"]),
        "ab": doc,
    }
