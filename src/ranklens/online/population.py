"""Which users an A/B test compares: users served by both arms, the assignment and its sample-ratio check,
segments, exposure times and pre-period values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ranklens.errors import InputError, did_you_mean
from ranklens.online.arms import Arm, pre_values
from ranklens.stats.srm import srm_test

__all__ = ["exposure_times", "in_segment", "overlap", "pre_period", "srm_check", "user_segments"]

def pre_period(
    control: Arm, treatment: Arm, pre: tuple[Any, Any], measure: str, notes: list[str], labels: tuple[str, str] | None = None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Both arms' pre-period values of ``measure``; ``(None, None)`` with a note when a pre-period source does
    not hold the measure. ``labels`` name the sources in messages (default: the path, or the arm's name)."""
    from ranklens.errors import MeasureError

    out = []
    for i, (arm, source) in enumerate(((control, pre[0]), (treatment, pre[1]))):
        where = labels[i] if labels else str(source) if isinstance(source, (str, os.PathLike)) else f"{arm.name} pre-period"
        try:
            out.append(pre_values(arm, source, measure, where=where))
        except MeasureError:
            notes.append(f"{where}: holds no {measure}; {measure} is shown without CUPED")
            return None, None
    return out[0], out[1]


def overlap(control: Arm, treatment: Arm, allow: str | None, notes: list[str]) -> tuple[Arm, Arm]:
    # a user served by both arms breaks the assignment whether or not they engaged (and so were analysed)
    both = (set(control.users) | control.shown) & (set(treatment.users) | treatment.shown)
    if not both:
        return control, treatment
    shown = ", ".join(sorted(both)[:3]) + (", …" if len(both) > 3 else "")
    what = f"{len(both)} user{'' if len(both) == 1 else 's'} in both arms ({shown})"
    if allow is None:
        raise InputError(
            f"{what}: a broken assignment (each user must see one arm); --allow-overlap drop leaves them out, "
            "--allow-overlap keep keeps them in both"
        )
    if allow == "keep":
        notes.append(f"{what}: kept in both arms (allow_overlap=keep); the arms are not independent")
        return control, treatment
    notes.append(f"{what}: left out of both arms (allow_overlap=drop)")
    return (
        control.subset([u not in both for u in control.users]),
        treatment.subset([u not in both for u in treatment.users]),
    )


def srm_check(control: Arm, treatment: Arm, assignment: Any, split: float, notes: list[str]) -> dict[str, Any]:
    source = "users analysed per arm"
    counts = [len(control.users), len(treatment.users)]
    if assignment is not None:
        from ranklens.data.segments import read_segments

        where = str(assignment) if isinstance(assignment, (str, os.PathLike)) else "assignment"
        arm_of = read_segments(assignment)
        labels = {control.name: control.name, treatment.name: treatment.name, "control": control.name, "treatment": treatment.name}
        unknown = sorted({a for a in arm_of.values() if a not in labels})
        if unknown:
            raise InputError(
                f"{where}: names arm{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown[:5])} that "
                f"{'are' if len(unknown) > 1 else 'is'} not given; the arms are {control.name!r} and {treatment.name!r}"
                + did_you_mean(unknown[0], list(labels))
            )
        counts = [sum(1 for a in arm_of.values() if labels[a] == arm.name) for arm in (control, treatment)]
        source = f"assignment ({where})"
        for arm, other in ((control, treatment), (treatment, control)):
            crossed = sum(1 for u in arm.users if u in arm_of and labels[arm_of[u]] == other.name)
            unassigned = sum(1 for u in arm.users if u not in arm_of)
            if crossed:
                notes.append(f"{arm.name}: {crossed} user{'' if crossed == 1 else 's'} assigned to {other.name} by {where}")
            if unassigned:
                notes.append(f"{arm.name}: {unassigned} user{'' if unassigned == 1 else 's'} not in {where}")
    r = srm_test(counts, [split, 1.0 - split])
    out: dict[str, Any] = {
        "p": r.p, "chi2": r.chi2, "counts": {control.name: counts[0], treatment.name: counts[1]},
        "expected_split": [split, 1.0 - split], "source": source, "mismatch": r.mismatch,
    }
    if r.mismatch:
        out["message"] = r.message([control.name, treatment.name])
    return out


def user_segments(source: Any, control: Arm, treatment: Arm, notes: list[str]) -> dict[str, str] | None:
    if source is None:
        return None
    from ranklens.data.segments import read_segments

    segment_of = read_segments(source)
    users = [*control.users, *treatment.users]
    without = sum(1 for u in users if u not in segment_of)
    if without == len(users):
        raise InputError(f"{source if isinstance(source, (str, os.PathLike)) else 'segments'}: labels none of the arms' users")
    if without:
        notes.append(f"segments: {without} user{'' if without == 1 else 's'} without a segment; counted overall only")
    return segment_of


def exposure_times(source: Any, control: Arm, treatment: Arm, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from ranklens.data.segments import read_segments

    when = read_segments(source)
    out = []
    for arm in (control, treatment):
        missing = [u for u in arm.users if u not in when]
        if len(missing) == len(arm.users):
            raise InputError(f"exposure: no time for any user of the {arm.name} arm")
        if missing:
            notes.append(f"exposure: {len(missing)} {arm.name} users without a time; counted at the last look")
        last = max(when.values())
        out.append(np.array([when.get(u, last) for u in arm.users], dtype=object))
    return out[0], out[1]


def in_segment(arm: Arm, segment_of: Mapping[str, str] | None, segment: str | None) -> np.ndarray:
    if segment is None or segment_of is None:
        return np.ones(len(arm.users), dtype=bool)
    return np.array([segment_of.get(u) == segment for u in arm.users], dtype=bool)
