"""``ab``: the between-subjects analysis of an online experiment — users split between a control and a
treatment arm, each user's measure computed from that user's own engagement in that arm.

Offline comparison over shared queries is paired; an online experiment over users is not: the arms are
compared with Welch's t-test (default), Mann–Whitney and a bootstrap, after a sample-ratio-mismatch check,
optionally with CUPED variance reduction and an always-valid (peeking-safe) p-value."""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens import stats
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError, warn_notes
from ranklens.measures.base import Measure
from ranklens.measures.language import MeasuresArg
from ranklens.online.arms import Arm, load_arm
from ranklens.online.groups import CIS, choice, compare_row, cuped_row, sequential_row
from ranklens.online.population import exposure_times, in_segment, overlap, pre_period, srm_check, user_segments
from ranklens.results.core import Results, assemble

__all__ = ["ABResult", "ab", "analyse_arms", "check_options"]

TESTS = ("welch", "mannwhitney", "bootstrap")
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
        per_user: each arm's per-user values of every measure as a :class:`~ranklens.Results` (control, then
            treatment; the users analysed, after the ``missing`` rule and the overlap rule): what
            ``ranklens ab --per-user FILE`` writes, a pilot for ``ranklens plan``.
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
    per_user: tuple[Results, ...] = field(default=(), repr=False)

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
    measures: MeasuresArg,
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

    checked = check_options(test=test, ci=ci, correction=correction, alpha=alpha, expected_split=expected_split, allow_overlap=allow_overlap)
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
    return analyse_arms(
        control, treatment, wanted, notes=notes, excluded=excluded, assignment=assignment, pre=pre,
        sequential=sequential, exposure=exposure, tau=tau, segments=segments, samples=samples, seed=seed,
        options=policy.options(), **checked,
    )


def check_options(
    *, test: str = "welch", ci: str = "welch", correction: str = "holm", alpha: float = 0.05, expected_split: float = 0.5,
    allow_overlap: str | None = None, bootstrap: bool = True,
) -> dict[str, Any]:
    """The analysis options of :func:`ab` and :func:`~ranklens.online.ab_values` in their canonical form, or
    one :class:`InputError` naming the bad one.

    >>> check_options(test="Mann-Whitney", correction="BH")["test"], check_options()["alpha"]
    ('mannwhitney', 0.05)
    """
    test_key, ci_key = choice(test, TESTS, "test"), choice(ci, CIS, "ci")
    if not bootstrap and "bootstrap" in (test_key, ci_key):
        raise InputError("the bootstrap test and interval need the bootstrap, which is not computed here; use welch or mannwhitney")
    if not 0.0 < float(alpha) < 1.0:
        raise InputError(f"alpha must be between 0 and 1 (e.g. 0.05); got {alpha!r}")
    if not 0.0 < float(expected_split) < 1.0:
        raise InputError(f"the expected split (control's share) must lie between 0 and 1; got {expected_split!r}")
    return {
        "test": test_key, "ci": ci_key, "correction": stats.canonical_correction(correction), "alpha": float(alpha),
        "expected_split": float(expected_split), "bootstrap": bool(bootstrap),
        "allow_overlap": choice(allow_overlap, OVERLAP, "allow_overlap") if allow_overlap is not None else None,
    }


def analyse_arms(
    control: Arm,
    treatment: Arm,
    measures: Sequence[Measure | str],
    *,
    notes: list[str],
    excluded: tuple[str, ...] = (),
    assignment: Any = None,
    expected_split: float = 0.5,
    pre: tuple[Any, Any] | None = None,
    pre_labels: tuple[str, str] | None = None,
    sequential: bool = False,
    exposure: Any = None,
    tau: float | None = None,
    test: str = "welch",
    ci: str = "welch",
    correction: str = "holm",
    segments: Any = None,
    allow_overlap: str | None = None,
    alpha: float = 0.05,
    samples: int = 10_000,
    seed: int | None = 0,
    bootstrap: bool = True,
    options: Mapping[str, Any] | None = None,
    warn: bool = True,
) -> ABResult:
    """The analysis of two loaded arms (options already checked by :func:`check_options`): the one
    implementation behind :func:`ab` (arms evaluated by the engine) and :func:`~ranklens.online.ab_values`
    (arms given as per-user values: the monitor). ``measures`` that are :class:`Measure` objects also give
    the ``per_user`` Results; ``bootstrap=False`` leaves the bootstrap out (its p-value ``None``); ``warn=False``
    keeps the warnings and notes in the result only (a server's answer) instead of also issuing them."""
    control, treatment = overlap(control, treatment, allow_overlap, notes)
    cname, tname = control.name, treatment.name
    for arm in (control, treatment):
        notes.extend(arm.notes)
        if len(arm.users) < 2:
            raise InputError(f"{arm.name}: {len(arm.users)} user{'' if len(arm.users) == 1 else 's'} to analyse; an arm needs at least 2")
    objects = [m for m in measures if isinstance(m, Measure)]
    per_user = tuple(
        assemble(arm.name, objects, arm.users, np.column_stack([arm.values[str(m)] for m in objects]), options=dict(options or {}))
        for arm in (control, treatment)
    ) if objects and len(objects) == len(measures) else ()
    srm = srm_check(control, treatment, assignment, float(expected_split), notes)
    warnings = (srm.pop("message"),) if srm.get("message") else ()
    segment_of = user_segments(segments, control, treatment, notes)
    times = exposure_times(exposure, control, treatment, notes) if exposure is not None else None
    entropy = np.random.SeedSequence(seed).entropy
    out: dict[str, dict[str, Any]] = {}
    compared: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for m in (str(w) for w in measures):
        pre_c = pre_t = None
        if pre is not None:
            pre_c, pre_t = pre_period(control, treatment, pre, m, notes, pre_labels)
        scopes: list[str | None] = [None, *sorted(set(segment_of.values()))] if segment_of else [None]
        for seg in scopes:
            keep_c = in_segment(control, segment_of, seg)
            keep_t = in_segment(treatment, segment_of, seg)
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
            # a generator keyed by the measure and segment (not their positions): a row's bootstrap does not
            # change with the other measures or segments asked for
            key = tuple(zlib.crc32(str(k).encode("utf-8")) for k in (m, seg))
            rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=key))
            row = compare_row(xc[~na_c], xt[~na_t], ci, float(alpha), int(samples), rng, bootstrap=bootstrap)
            if pre_c is not None and pre_t is not None:
                row["cuped"] = cuped_row(xc[~na_c], xt[~na_t], pre_c[keep_c][~na_c], pre_t[keep_t][~na_t], float(alpha))
            if sequential:
                tc = times[0][keep_c][~na_c] if times else None
                tt = times[1][keep_t][~na_t] if times else None
                row["sequential"] = sequential_row(xc[~na_c], xt[~na_t], tc, tt, tau, float(alpha))
            if seg is None:
                out[m] = row
                compared[m] = (xc[~na_c], xt[~na_t])
            else:
                out.setdefault(m, {}).setdefault("segments", {})[seg] = row
    _correct(out, test, correction, float(alpha))
    opts = {
        "test": test, "ci": ci, "correction": correction, "alpha": float(alpha), "samples": int(samples) if bootstrap else 0,
        "seed": seed, "expected_split": float(expected_split), "sequential": bool(sequential),
        "allow_overlap": allow_overlap, **dict(options or {}),
    }
    if warn:
        warn_notes([*warnings, *notes])
    counts = {
        a.name: {"users": len(a.users), "unlabelled": a.unlabelled, "shown": len(a.shown)} for a in (control, treatment)
    }
    return ABResult(
        arms={"control": cname, "treatment": tname}, measures=out, srm=srm, warnings=warnings, counts=counts,
        excluded=excluded, notes=tuple(dict.fromkeys(notes)), options=opts, values=compared,
        per_user=per_user,
    )


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


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value
