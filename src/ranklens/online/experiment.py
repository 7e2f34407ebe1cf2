"""``ab``: the between-subjects analysis of an online experiment — users split between a control and a
treatment arm, each user's measure computed from that user's own engagement in that arm.

Offline comparison over shared queries is paired; an online experiment over users is not: the arms are
compared with Welch's t-test (default), Mann–Whitney and a bootstrap, after a sample-ratio-mismatch check,
optionally with CUPED variance reduction and an always-valid (peeking-safe) p-value."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens import stats
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError, did_you_mean, warn_notes
from ranklens.measures.base import Measure
from ranklens.online.arms import Arm, load_arm, pre_values
from ranklens.stats.sequential import DEFAULT_TAU_SD, PVALUE_KIND, msprt_path
from ranklens.stats.srm import srm_test
from ranklens.stats.unpaired import (
    bootstrap_unpaired,
    mann_whitney_test,
    relative_lift,
    welch_interval,
    welch_test,
)
from ranklens.stats.variance_reduction import cuped

__all__ = ["ABResult", "ab", "compare_groups"]

TESTS = ("welch", "mannwhitney", "bootstrap")
CIS = ("welch", "bootstrap")
OVERLAP = ("drop", "keep")
DESIGN = "between-subjects (unpaired): each user saw one arm; Welch's t-test on the arms' per-user values"


@dataclass(frozen=True, eq=False)
class ABResult:
    """What :func:`ab` returns. :meth:`to_dict` is the JSON of ``ranklens ab -f json``; ``result[measure]``
    is the dict of one measure (``control``, ``treatment``, ``difference``, ``ci``, ``relative_lift``,
    ``p``, and ``cuped``/``sequential``/``segments`` when asked for).

    Attributes:
        arms: ``{"control": name, "treatment": name}``.
        measures: per measure, its statistics (the dicts described above).
        srm: the sample-ratio-mismatch test (``p``, ``chi2``, ``counts``, ``expected_split``, ``source``,
            ``mismatch``).
        warnings: loud warnings (a sample-ratio mismatch) that every output shows first.
        counts: per arm, the users analysed, left out and unlabelled.
        excluded: system-level measures left out (one value per run: no per-user values to compare).
        notes: everything else left out or assumed.
        options: the test, interval, correction, alpha, samples, seed and policy used.
        values: per measure, the per-user values compared (control, treatment), for plots; not in the JSON.
    """

    arms: dict[str, str]
    measures: dict[str, dict[str, Any]]
    srm: dict[str, Any]
    warnings: tuple[str, ...]
    counts: dict[str, dict[str, int]]
    excluded: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    values: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def __getitem__(self, measure: str) -> dict[str, Any]:
        if measure not in self.measures:
            raise InputError(f"no measure {measure!r} in this A/B result; it has {', '.join(self.measures)}")
        return self.measures[measure]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready structure (non-finite numbers as ``None``)."""
        from ranklens import __version__

        return _clean({
            "ranklens_version": __version__,
            "design": DESIGN,
            "warnings": list(self.warnings),
            "arms": self.arms,
            "srm": self.srm,
            "counts": self.counts,
            "measures": self.measures,
            "excluded_measures": list(self.excluded),
            "notes": list(self.notes),
            "options": self.options,
        })

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as text."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def __repr__(self) -> str:
        parts = [f"{m}: Δ {v['difference']:+.4f}, p {v['p'][self.options.get('test', 'welch')]:.3g}" for m, v in self.measures.items()]
        return f"ABResult({self.arms['control']} vs {self.arms['treatment']}; {'; '.join(parts)})"


def ab(
    control_qrels: Any,
    control_run: Any,
    treatment_qrels: Any,
    treatment_run: Any,
    measures: Iterable[Measure | str] | str,
    *,
    assignment: Any = None,
    expected_split: float = 0.5,
    pre: tuple[Any, Any] | None = None,
    sequential: bool = False,
    exposure: Any = None,
    tau: float | None = None,
    test: str = "welch",
    ci: str = "welch",
    correction: str = "holm",
    segments: Any = None,
    allow_overlap: str | None = None,
    names: tuple[str, str] = ("control", "treatment"),
    alpha: float = 0.05,
    samples: int = 10_000,
    seed: int | None = 0,
    policy: EvalPolicy | None = None,
    **policy_options: Any,
) -> ABResult:
    """Analyse an A/B test of two rankers between users (each user in one arm).

    Each arm is its own qrels (labels from the engagement of its users in that arm) and run (what it
    showed them), evaluated by the engine; or a per-user results file (``eval -q -f json``) in place of the
    run. Per measure: each arm's n, mean and sd; the difference treatment − control with its interval; the
    relative lift with its delta-method interval; p-values of Welch (default), Mann–Whitney and the
    bootstrap, the chosen ``test``'s corrected over the measures (and over measures × segments).

    Args:
        control_qrels, control_run, treatment_qrels, treatment_run: the arms (paths, frames, dicts, Qrels/Run;
            a run may be a per-user results file or Results, its qrels then ``None``).
        measures: per-user measures (``nDCG@4``); system-level ones are left out with a note.
        assignment: ``user → arm`` (a file of ``user arm`` lines, CSV/TSV, JSON or a mapping); arms named
            ``control``/``treatment`` or by ``names``. Its counts give the sample-ratio check.
        expected_split: the planned share of the control arm.
        pre: ``(control_pre, treatment_pre)`` per-user results of the pre-period: CUPED.
        sequential: add the always-valid p-value and confidence sequence (mSPRT).
        exposure: ``user → time`` of first exposure (ISO dates sort): the sequential result looks once per
            distinct time, cumulatively (without it there is one look, at the end).
        tau: the mSPRT mixing sd on the scale of the difference (default: 0.1 × the pooled per-user sd).
        test: the test behind ``significant`` and the correction: ``welch``, ``mannwhitney``, ``bootstrap``.
        ci: ``welch`` or ``bootstrap`` interval of the difference at level ``1 − alpha``.
        correction: ``holm``, ``bonferroni``, ``bh`` or ``none`` (as ``compare``).
        segments: ``user → segment``: every statistic per segment as well.
        allow_overlap: users found in both arms are refused unless ``drop`` (left out of both) or ``keep``
            (kept in both: the arms are then not independent).
        names: the arms' names.
        policy, **policy_options: the evaluation policy (``missing``, ``max_docs`` …, as
            :class:`~ranklens.EvalPolicy`); ``missing`` also scores users without any engagement label.

    Raises:
        InputError: an arm with fewer than 2 users; users in both arms (without ``allow_overlap``); a
            pre-period file sharing no user with its arm; an assignment naming arms that are not given.

    >>> qc = {"u1": {"a": 1}, "u2": {"a": 1}, "u3": {"b": 1}}
    >>> rc = {"u1": {"a": 2.0, "b": 1.0}, "u2": {"b": 2.0, "a": 1.0}, "u3": {"a": 2.0, "b": 1.0}}
    >>> qt = {"u4": {"a": 1}, "u5": {"b": 1}, "u6": {"a": 1}}
    >>> rt = {"u4": {"a": 2.0, "b": 1.0}, "u5": {"b": 2.0, "a": 1.0}, "u6": {"b": 2.0, "a": 1.0}}
    >>> r = ab(qc, rc, qt, rt, ["P@1"], samples=200)
    >>> r["P@1"]["control"], round(r["P@1"]["difference"], 4), r.srm["counts"]
    ({'n': 3, 'mean': 0.3333333333333333, 'sd': 0.5773502691896258}, 0.3333, {'control': 3, 'treatment': 3})
    """
    from ranklens.comparison.rows import is_system
    from ranklens.measures.language import parse_many

    test_key, ci_key = _choice(test, TESTS, "test"), _choice(ci, CIS, "ci")
    correction_key = stats.canonical_correction(correction)
    if not 0.0 < float(alpha) < 1.0:
        raise InputError(f"alpha must be between 0 and 1 (e.g. 0.05); got {alpha!r}")
    if not 0.0 < float(expected_split) < 1.0:
        raise InputError(f"the expected split (control's share) must lie between 0 and 1; got {expected_split!r}")
    if allow_overlap is not None:
        allow_overlap = _choice(allow_overlap, OVERLAP, "allow_overlap")
    policy = policy.replace(**policy_options) if policy is not None else EvalPolicy(**policy_options)
    parsed = [m.validate() for m in parse_many(measures, rel_level=policy.rel_level)]
    if not parsed:
        raise InputError("no measure given; e.g. nDCG@4")
    excluded = tuple(str(m) for m in parsed if is_system(str(m)))
    wanted = [m for m in parsed if str(m) not in excluded]
    notes: list[str] = []
    if excluded:
        notes.append(
            f"{', '.join(excluded)}: system-level (one value per run, no per-user values): left out of the A/B test"
        )
    if not wanted:
        raise InputError(f"no per-user measure to compare: {', '.join(excluded)} {'is' if len(excluded) == 1 else 'are'} system-level")
    cname, tname = (str(n) for n in names)
    control = load_arm(cname, control_qrels, control_run, wanted, policy, where=cname)
    treatment = load_arm(tname, treatment_qrels, treatment_run, wanted, policy, where=tname)
    control, treatment = _overlap(control, treatment, allow_overlap, notes)
    for arm in (control, treatment):
        notes.extend(arm.notes)
        if len(arm.users) < 2:
            raise InputError(f"{arm.name}: {len(arm.users)} user{'' if len(arm.users) == 1 else 's'} to analyse; an arm needs at least 2")
    srm = _srm(control, treatment, assignment, float(expected_split), notes)
    warnings = (srm.pop("message"),) if srm.get("message") else ()
    segment_of = _segments(segments, control, treatment, notes)
    times = _exposure(exposure, control, treatment, notes) if exposure is not None else None
    entropy = np.random.SeedSequence(seed).entropy
    out: dict[str, dict[str, Any]] = {}
    compared: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for m in (str(w) for w in wanted):
        pre_c = pre_t = None
        if pre is not None:
            pre_c, pre_t = _pre(control, treatment, pre, m, notes)
        scopes: list[str | None] = [None, *sorted(set(segment_of.values()))] if segment_of else [None]
        for seg in scopes:
            keep_c = _in(control, segment_of, seg)
            keep_t = _in(treatment, segment_of, seg)
            xc, xt = control.values[m][keep_c], treatment.values[m][keep_t]
            na_c, na_t = np.isnan(xc), np.isnan(xt)
            where = m if seg is None else f"{m} in segment {seg!r}"
            if na_c.any() or na_t.any():
                notes.append(f"{where}: undefined for {int(na_c.sum())} {cname} and {int(na_t.sum())} {tname} users; left out")
            if (~na_c).sum() < 2 or (~na_t).sum() < 2:
                if seg is None:
                    raise InputError(f"{where}: fewer than 2 users with a value in an arm ({int((~na_c).sum())} {cname}, {int((~na_t).sum())} {tname})")
                notes.append(f"{where}: fewer than 2 users in an arm; no row")
                continue
            rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(len(out), scopes.index(seg))))
            row = _compare(xc[~na_c], xt[~na_t], ci_key, float(alpha), int(samples), rng)
            if pre_c is not None and pre_t is not None:
                row["cuped"] = _cuped(xc[~na_c], xt[~na_t], pre_c[keep_c][~na_c], pre_t[keep_t][~na_t], float(alpha))
            if sequential:
                tc = times[0][keep_c][~na_c] if times else None
                tt = times[1][keep_t][~na_t] if times else None
                row["sequential"] = _sequential(xc[~na_c], xt[~na_t], tc, tt, tau, float(alpha))
            if seg is None:
                out[m] = row
                compared[m] = (xc[~na_c], xt[~na_t])
            else:
                out.setdefault(m, {}).setdefault("segments", {})[seg] = row
    _correct(out, test_key, correction_key, float(alpha))
    options = {
        "test": test_key, "ci": ci_key, "correction": correction_key, "alpha": float(alpha), "samples": int(samples),
        "seed": seed, "expected_split": float(expected_split), "sequential": bool(sequential),
        "allow_overlap": allow_overlap, **policy.options(),
    }
    warn_notes([*warnings, *notes])
    counts = {
        a.name: {"users": len(a.users), "unlabelled": a.unlabelled, "shown": len(a.shown)} for a in (control, treatment)
    }
    return ABResult(
        arms={"control": cname, "treatment": tname}, measures=out, srm=srm, warnings=warnings, counts=counts,
        excluded=excluded, notes=tuple(dict.fromkeys(notes)), options=options, values=compared,
    )


def _pre(control: Arm, treatment: Arm, pre: tuple[Any, Any], measure: str, notes: list[str]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Both arms' pre-period values of ``measure``; ``(None, None)`` with a note when a pre-period file does
    not hold the measure."""
    from ranklens.errors import MeasureError

    out = []
    for arm, source in ((control, pre[0]), (treatment, pre[1])):
        where = str(source) if isinstance(source, (str, os.PathLike)) else f"{arm.name} pre-period"
        try:
            out.append(pre_values(arm, source, measure, where=where))
        except MeasureError:
            notes.append(f"{where}: holds no {measure}; {measure} is shown without CUPED")
            return None, None
    return out[0], out[1]


def _choice(value: str, choices: Sequence[str], what: str) -> str:
    key = str(value).strip().lower().replace("-", "").replace("_", "")
    for c in choices:
        if key == c.replace("-", ""):
            return c
    raise InputError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}" + did_you_mean(str(value), choices))


def _arm_stats(x: np.ndarray) -> dict[str, Any]:
    return {"n": int(x.size), "mean": float(x.mean()), "sd": float(x.std(ddof=1))}


def compare_groups(
    control: Any, treatment: Any, *, alpha: float = 0.05, ci: str = "welch", samples: int = 10_000, seed: Any = 0,
    bootstrap: bool = True,
) -> dict[str, Any]:
    """The between-subjects statistics of two groups of per-user values, as one measure's entry of
    :meth:`ABResult.to_dict` (``control``, ``treatment``, ``difference``, ``ci``, ``relative_lift``, ``p`` …):
    the one implementation behind ``ranklens ab``, :func:`ab` and the monitor's A/B page. ``bootstrap=False``
    leaves the bootstrap out (its p-value NaN; the interval must then be ``welch``).

    >>> r = compare_groups([0.5, 0.4, 0.6, 0.3, 0.5], [0.9, 0.7, 0.8, 0.6], bootstrap=False)
    >>> round(r["difference"], 2), round(r["p"]["welch"], 4), r["ci_method"]
    (0.29, 0.012, 'welch')
    """
    xc, xt = (np.asarray(v, dtype=np.float64) for v in (control, treatment))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return _compare(xc, xt, _choice(ci, CIS, "ci"), float(alpha), int(samples), rng, bootstrap=bootstrap)


def _compare(
    xc: np.ndarray, xt: np.ndarray, ci: str, alpha: float, samples: int, rng: np.random.Generator, *, bootstrap: bool = True
) -> dict[str, Any]:
    level = 1.0 - alpha
    if bootstrap:
        boot_ci, boot = bootstrap_unpaired(xt, xc, level=level, samples=samples, seed=rng)
    elif ci != "welch":
        raise InputError("a bootstrap interval needs the bootstrap (bootstrap=True)")
    interval = welch_interval(xt, xc, level=level) if ci == "welch" else boot_ci
    lift, lift_low, lift_high = relative_lift(xt, xc, level=level)
    return {
        "control": _arm_stats(xc),
        "treatment": _arm_stats(xt),
        "difference": float(xt.mean() - xc.mean()),
        "ci": [interval.low, interval.high],
        "ci_method": interval.method,
        "relative_lift": lift,
        "relative_lift_ci": [lift_low, lift_high],
        "p": {
            "welch": welch_test(xt, xc).p_value,
            "mannwhitney": mann_whitney_test(xt, xc).p_value,
            "bootstrap": boot.p_value if bootstrap else math.nan,
        },
    }


def _cuped(xc: np.ndarray, xt: np.ndarray, pc: np.ndarray, pt: np.ndarray, alpha: float) -> dict[str, Any]:
    r = cuped(xc, xt, pc, pt, level=1.0 - alpha)
    return {
        "difference": r.difference, "ci": [r.ci.low, r.ci.high], "p": r.p, "variance_reduction": r.variance_reduction,
        "theta": list(r.theta), "users_with_pre": {"control": r.n_with_pre[0], "treatment": r.n_with_pre[1]},
        "users_without_pre": {"control": r.n_without_pre[0], "treatment": r.n_without_pre[1]},
        "missing_pre": "adjusted with the indicator of having a pre-period value as a second covariate (Deng et al. 2013)"
        if sum(r.n_without_pre) else "none",
    }


def _sequential(
    xc: np.ndarray, xt: np.ndarray, tc: np.ndarray | None, tt: np.ndarray | None, tau: float | None, alpha: float
) -> dict[str, Any]:
    pooled_sd = float(np.sqrt((xc.var(ddof=1) * (xc.size - 1) + xt.var(ddof=1) * (xt.size - 1)) / (xc.size + xt.size - 2)))
    t = float(tau) if tau is not None else DEFAULT_TAU_SD * pooled_sd
    if not t > 0:
        t = DEFAULT_TAU_SD  # every value equal: any positive tau gives p = 1
    looks: list[str] = []
    diffs, variances = [], []
    if tc is None or tt is None:
        diffs.append(float(xt.mean() - xc.mean()))
        variances.append(float(xt.var(ddof=1) / xt.size + xc.var(ddof=1) / xc.size))
    else:
        for when in sorted(set(tc.tolist()) | set(tt.tolist())):
            c, tr = xc[tc <= when], xt[tt <= when]
            if c.size < 2 or tr.size < 2:
                continue
            looks.append(str(when))
            diffs.append(float(tr.mean() - c.mean()))
            variances.append(float(tr.var(ddof=1) / tr.size + c.var(ddof=1) / c.size))
    p, low, high = msprt_path(np.asarray(diffs), np.asarray(variances), t, alpha=alpha)
    out: dict[str, Any] = {"p": float(p[-1]), "ci": [float(low[-1]), float(high[-1])], "kind": PVALUE_KIND, "tau": t, "looks": len(diffs)}
    if looks:
        out["path"] = [
            {"time": w, "difference": d, "p": float(pp), "ci": [float(lo), float(hi)]}
            for w, d, pp, lo, hi in zip(looks, diffs, p.tolist(), low.tolist(), high.tolist())
        ]
    return out


def _correct(out: dict[str, dict[str, Any]], test: str, correction: str, alpha: float) -> None:
    """The chosen test's p-values corrected over the measures (overall rows) and over measures × segments."""
    overall = [(m, row) for m, row in out.items() if "p" in row]
    seg = [(m, row) for m, r in out.items() for row in r.get("segments", {}).values()]
    for family in (overall, seg):
        if not family:
            continue
        raw = np.array([row["p"][test] for _, row in family], dtype=np.float64)
        adjusted = stats.adjust_p_values(raw, correction)
        for (_, row), p in zip(family, adjusted.tolist()):
            row["p_adjusted"] = p
            row["significant"] = bool(p <= alpha)


def _overlap(control: Arm, treatment: Arm, allow: str | None, notes: list[str]) -> tuple[Arm, Arm]:
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


def _srm(control: Arm, treatment: Arm, assignment: Any, split: float, notes: list[str]) -> dict[str, Any]:
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


def _segments(source: Any, control: Arm, treatment: Arm, notes: list[str]) -> dict[str, str] | None:
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


def _exposure(source: Any, control: Arm, treatment: Arm, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
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


def _in(arm: Arm, segment_of: Mapping[str, str] | None, segment: str | None) -> np.ndarray:
    if segment is None or segment_of is None:
        return np.ones(len(arm.users), dtype=bool)
    return np.array([segment_of.get(u) == segment for u in arm.users], dtype=bool)


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value
