"""The rows of a comparison: one :class:`ComparisonRow` per (measure, segment, pair) with its test, interval
and corrected p-value, the per-system :class:`SummaryRow` means and the per-query :class:`QueryDelta`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace

from ranklens import stats
from ranklens.comparison.pairing import (
    BETWEEN_SUBJECTS,
    common_queries,
    dropped_all_note,
    pair_results,
    value_list,
    win_tie_loss,
)
from ranklens.errors import InputError
from ranklens.results.core import Results
from ranklens.stats.corrections import adjust_p_list
from ranklens.stats.sums import np_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy: the Monte Carlo tests, Tukey and percentiles import it when asked for)
    from typing import Any

    import numpy as np

__all__ = ["ComparisonRow", "QueryDelta", "SummaryRow"]


@dataclass(frozen=True)
class ComparisonRow:
    """One system against one baseline on one measure, over all queries (``segment is None``) or one segment.

    ``diff = mean_system − mean_baseline`` over the ``n`` queries both answered; ``rel_diff = diff /
    mean_baseline``; ``[ci_low, ci_high]`` is the ``ci_method`` confidence interval of ``diff`` at level
    ``1 − alpha``; ``p_value`` is the ``test``'s two-sided p-value and ``p_value_adjusted`` the corrected one
    (its family: every pair of one measure, over all queries or over all segments); ``effect_size`` is the
    paired Cohen's d; ``wins``/``ties``/``losses`` count queries where the system beats/equals/trails the
    baseline; ``significant`` is ``p_value_adjusted <= alpha``.

    ``aggregate`` is how the measure combines queries: ``mean`` (the above), or for ``agg=median``, ``pNN``,
    ``min``, ``max`` (``--aggregate``) that statistic: ``mean_baseline``/``mean_system`` then hold each
    system's median (or percentile …), ``diff`` their difference, ``p_value`` the paired randomisation test of
    that difference and ``[ci_low, ci_high]`` its paired bootstrap percentile interval (``test`` and
    ``ci_method`` say so); ``effect_size`` (a statement about means) is NaN (docs/compare.md).
    """

    baseline: str
    system: str
    measure: str
    segment: str | None
    n: int
    mean_baseline: float
    mean_system: float
    diff: float
    rel_diff: float
    ci_low: float
    ci_high: float
    ci_method: str
    p_value: float
    p_value_adjusted: float
    test: str
    effect_size: float
    wins: int
    ties: int
    losses: int
    significant: bool
    aggregate: str = "mean"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: non-finite numbers become ``None``."""
        return {k: json_value(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class SummaryRow:
    """The mean of one system on one measure over the queries every system answered (``n`` of them); for a
    measure aggregated otherwise (``aggregate``: ``median``, ``pNN``, ``min``, ``max``) ``mean`` holds that
    aggregate."""

    system: str
    measure: str
    segment: str | None
    n: int
    mean: float
    aggregate: str = "mean"

    def to_dict(self) -> dict[str, Any]:
        return {k: json_value(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class QueryDelta:
    """One query of one pair on one measure: ``delta = value_system − value_baseline`` (negative: the
    system is worse on this query)."""

    baseline: str
    system: str
    measure: str
    query_id: str | int
    """the query id with the type the runs gave it (integer ids stay integers)"""
    value_baseline: float
    value_system: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        return {k: json_value(v) for k, v in asdict(self).items()}


#: the tests and intervals that draw random numbers (the others are analytic, or exact: no generator)
MONTE_CARLO = ("randomisation", "bootstrap", "randomised-tukey")


@dataclass(frozen=True)
class Plan:
    """How every row is computed: the test, the interval, alpha, Monte Carlo samples and the seed (the
    entropy of ``numpy.random.SeedSequence(seed)``, drawn once when the first generator is asked for: an
    analytic test and interval never import numpy)."""

    test: str
    ci: str
    alpha: float
    samples: int
    seed: Any
    _entropy: list[Any] = field(default_factory=list, repr=False)

    @property
    def entropy(self) -> Any:
        """``numpy.random.SeedSequence(seed).entropy`` (for ``seed=None``: fresh, drawn once per plan)."""
        if not self._entropy:
            import numpy as np

            self._entropy.append(np.random.SeedSequence(self.seed).entropy)
        return self._entropy[0]

    def rng(self, *key: str | None) -> np.random.Generator:
        """A generator keyed by what a row compares (not by its position), so a row's Monte Carlo numbers do
        not change with the other runs or measures compared; the same key gives the test and the interval
        the same resamples."""
        import zlib

        import numpy as np

        words = tuple(zlib.crc32(str(k).encode("utf-8")) for k in key)
        return np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=words))

    def rng_for(self, method: str, *key: str | None) -> np.random.Generator | None:
        """:meth:`rng` when ``method`` draws random numbers (:data:`MONTE_CARLO`), else None."""
        return self.rng(*key) if method in MONTE_CARLO else None


def compare_segment(
    results: Mapping[str, Results],
    pairs: list[tuple[str, str]],
    measure: str,
    segment_of: Mapping[str, str] | None,
    segment: str | None,
    plan: Plan,
    notes: list[str],
) -> list[ComparisonRow]:
    """The rows of one measure over all queries (``segment`` None) or one segment, before correction.

    A measure aggregated by a median, percentile, minimum or maximum is compared on that statistic (a
    randomisation test and a bootstrap interval of the difference, :func:`aggregate_plan`), whatever the
    plan's test and interval."""
    agg = aggregate_name(measure)
    if agg != "mean":
        plan = aggregate_plan(plan)
    all_pairs = plan.test in stats.ALL_PAIRS_TESTS
    tukey: stats.TukeyResult | None = None
    order: dict[str, int] = {}
    common: list[str] = []
    if all_pairs:
        tukey, order, common = _all_pairs(results, measure, segment_of, segment, plan)
        if segment is None:
            _note(notes, dropped_all_note(results, common))
    rows = []
    for b, s in pairs:
        if all_pairs:
            xb, xs = value_list(results[b], measure, common), value_list(results[s], measure, common)
        else:
            pairing = pair_results(results[s], results[b], measure, segment_of, segment)
            xs, xb = pairing.values_a, pairing.values_b
            if segment is None:
                _note(notes, pairing.swapped().dropped_note(b, s))
            na = sum(1 for x, y in zip(xs, xb) if x != x or y != y)
            if na:  # a measure NA on some queries (Novelty, ILD, AUC …): paired on the queries both define
                kept = [(x, y) for x, y in zip(xs, xb) if x == x and y == y]
                xs, xb = [x for x, _ in kept], [y for _, y in kept]
                where = "" if segment is None else f" in segment {segment!r}"
                _note(notes, f"{b} vs {s} on {measure}{where}: {na} quer{'y' if na == 1 else 'ies'} NA in either system left out of the pairing")
        if not xs:
            if segment is None:  # a comparison over no query is an error, never a NaN or a silent gap
                raise InputError(f"{b} vs {s}: no query both answered, so nothing to compare on {measure}; {BETWEEN_SUBJECTS}")
            _note(notes, f"{b} vs {s} on {measure} in segment {segment!r}: no query in common; no row")
            continue
        key = (measure, segment, *sorted((b, s)))
        if all_pairs:
            p = tukey.pair(order[s], order[b]).p_value if tukey is not None else math.nan
        elif agg != "mean":
            p = stats.aggregate_randomisation_test(xs, xb, agg, samples=plan.samples, seed=plan.rng(*key)).p_value
        else:
            p = stats.paired_test(xs, xb, plan.test, samples=plan.samples, seed=plan.rng_for(plan.test, *key)).p_value
        if agg != "mean":
            interval = stats.aggregate_bootstrap_interval(
                xs, xb, agg, level=1.0 - plan.alpha, samples=plan.samples, seed=plan.rng(*key)
            )
        else:
            interval = stats.confidence_interval(
                xs, xb, plan.ci, level=1.0 - plan.alpha, samples=plan.samples, seed=plan.rng_for(plan.ci, *key)
            )
        rows.append(_row(b, s, measure, segment, xb, xs, p, plan.test, interval, agg))
    return rows


def aggregate_name(measure: str) -> str:
    """How ``measure`` combines its per-query values in a comparison: ``mean`` (also for the families that
    sum or skip NaN: the paired tests compare means), or its ``agg=`` (``median``, ``p90``, ``min`` …).

    >>> aggregate_name("nDCG@10"), aggregate_name("nDCG(agg=median)@10")
    ('mean', 'median')
    """
    from ranklens.measures import parse
    from ranklens.measures.recsys import agg_param

    return agg_param(parse(measure))


def aggregate_plan(plan: Plan) -> Plan:
    """The plan of the rows of a measure aggregated by a median or percentile: the paired randomisation test
    and the bootstrap interval of the difference of that statistic (the other tests are about means)."""
    return replace(plan, test="randomisation", ci="bootstrap")


def aggregate_note(measure: str, requested_test: str, requested_ci: str) -> str | None:
    """The note saying how the rows of ``measure`` were compared when it is not aggregated by its mean."""
    agg = aggregate_name(measure)
    if agg == "mean":
        return None
    what = "medians" if agg == "median" else f"{agg} values"
    changed = "" if (requested_test, requested_ci) == ("randomisation", "bootstrap") else (
        f" (not the {requested_test} test and {requested_ci} interval asked for: they compare means)"
    )
    return (f"{measure}: compared by the difference of the systems' {what}: paired randomisation test and "
            f"bootstrap percentile interval of that difference{changed}")


def is_system(measure: str) -> bool:
    """True for a system-level measure (one value per run: ``Coverage@10``), which has no paired test."""
    from ranklens.measures import parse

    m = parse(measure)
    return m.family.is_system(m)


def system_rows(results: Mapping[str, Results], pairs: list[tuple[str, str]], measure: str, notes: list[str]) -> list[ComparisonRow]:
    """The rows of a system-level measure: the two runs' values and their difference, without a p-value,
    an interval or wins/ties/losses (there are no per-query values to pair), and a note saying so."""
    _note(notes, f"{measure} is a system-level measure (one value per run): shown without a p-value or interval")
    rows = []
    for b, s in pairs:
        mb, ms = float(results[b][measure]), float(results[s][measure])
        diff = ms - mb
        rows.append(ComparisonRow(
            baseline=b, system=s, measure=measure, segment=None, n=0, mean_baseline=mb, mean_system=ms, diff=diff,
            rel_diff=diff / mb if mb != 0 else math.nan, ci_low=math.nan, ci_high=math.nan, ci_method="none",
            p_value=math.nan, p_value_adjusted=math.nan, test="none (system-level)", effect_size=math.nan,
            wins=0, ties=0, losses=0, significant=False,
        ))
    return rows


def _row(
    baseline: str,
    system: str,
    measure: str,
    segment: str | None,
    xb: list[float],
    xs: list[float],
    p: float,
    test: str,
    interval: stats.Interval,
    agg: str = "mean",
) -> ComparisonRow:
    if agg == "mean":  # (numpy's floats, without numpy: stats.sums)
        mb, ms = np_mean(xb), np_mean(xs)
        diff = np_mean([x - y for x, y in zip(xs, xb)])
        effect = stats.cohens_d_paired(xs, xb)
    else:
        import numpy as np

        mb, ms = float(stats.aggregate_of(np.asarray(xb), agg)), float(stats.aggregate_of(np.asarray(xs), agg))
        diff, effect = ms - mb, math.nan
    wins, ties, losses = win_tie_loss(xs, xb)
    return ComparisonRow(
        baseline=baseline,
        system=system,
        measure=measure,
        segment=segment,
        n=len(xs),
        mean_baseline=mb,
        mean_system=ms,
        diff=diff,
        rel_diff=diff / mb if mb != 0 else math.nan,
        ci_low=interval.low,
        ci_high=interval.high,
        ci_method=interval.method,
        p_value=p,
        p_value_adjusted=p,
        test=test,
        effect_size=effect,
        wins=wins,
        ties=ties,
        losses=losses,
        significant=False,
        aggregate=agg,
    )


def _note(notes: list[str], note: str | None) -> None:
    if note and note not in notes:
        notes.append(note)


def _all_pairs(
    results: Mapping[str, Results],
    measure: str,
    segment_of: Mapping[str, str] | None,
    segment: str | None,
    plan: Plan,
) -> tuple[stats.TukeyResult | None, dict[str, int], list[str]]:
    """The all-pairs test on the queries every system answered (None with fewer than 2 of them)."""
    common = common_queries(results, segment_of, segment)
    order = {name: i for i, name in enumerate(results)}
    if len(common) < 2:
        return None, order, common
    import numpy as np

    matrix = np.column_stack([value_list(r, measure, common) for r in results.values()]).astype(np.float64)
    if plan.test == "tukey":
        return stats.tukey_hsd(matrix), order, common
    seed = plan.rng(measure, segment, *sorted(results))
    return stats.randomised_tukey_hsd(matrix, samples=plan.samples, seed=seed), order, common


def correct(
    family: list[ComparisonRow], correction: str, test: str, alpha: float, *, within_test: bool
) -> list[ComparisonRow]:
    """Adjust one family's p-values. Tukey p-values already cover all pairs of a segment: they are only
    adjusted across segments."""
    if not family:
        return family
    raw = [float(r.p_value) for r in family]
    if test in stats.ALL_PAIRS_TESTS and within_test:
        adjusted = raw
    elif test in stats.ALL_PAIRS_TESTS:
        # each segment's Tukey p-values cover its pairs; correct each pair across the segments
        adjusted = list(raw)
        for pair in {(r.baseline, r.system) for r in family}:
            idx = [i for i, r in enumerate(family) if (r.baseline, r.system) == pair]
            for i, p in zip(idx, adjust_p_list([raw[i] for i in idx], correction)):
                adjusted[i] = p
    else:
        adjusted = adjust_p_list(raw, correction)
    out = []
    for r, p in zip(family, adjusted):
        out.append(replace(r, p_value_adjusted=p, significant=bool(p <= alpha)))
    return out


def summary_rows(
    results: Mapping[str, Results],
    measures: tuple[str, ...],
    segment_of: Mapping[str, str] | None,
    seg_names: list[str],
) -> list[SummaryRow]:
    out = []
    for seg in [None, *seg_names]:
        common = common_queries(results, segment_of, seg)
        for m in measures:
            system = is_system(m)
            for name, res in results.items():
                if system:  # one value per run: over all queries only
                    out.append(SummaryRow(name, m, seg, len(res.query_ids), float(res[m]) if seg is None else math.nan))
                    continue
                vals = [v for v in value_list(res, m, common) if v == v]
                agg = aggregate_name(m)
                value = (np_mean(vals) if agg == "mean" else _aggregate(vals, agg)) if vals else math.nan
                out.append(SummaryRow(name, m, seg, len(common), value, agg))
    return out


def _aggregate(values: list[float], agg: str) -> float:
    """``agg`` (median, pNN, min, max) of ``values`` (:func:`ranklens.stats.aggregate_of`: numpy)."""
    import numpy as np

    return float(stats.aggregate_of(np.asarray(values, dtype=np.float64), agg))


def json_value(v: Any) -> Any:
    """A JSON-ready value: non-finite floats become ``None``."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
