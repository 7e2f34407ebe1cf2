"""Compare systems like a careful researcher: paired tests over queries, confidence intervals, corrected
p-values, effect sizes, wins/ties/losses, per-segment breakdowns and the cost–quality Pareto front.

:func:`compare` evaluates every run once, pairs them on the queries they have in common (saying how many
were dropped: never silently) and returns a :class:`Comparison`, which the ``ranklens.report`` renderers
turn into a terminal table, Markdown, LaTeX, JSON or an HTML report.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from ranklens import stats
from ranklens.data.names import file_stem, unique_names
from ranklens.errors import FormatError, InputError, did_you_mean, warn_notes
from ranklens.measures.base import Measure
from ranklens.results import Results

__all__ = [
    "Comparison",
    "ComparisonRow",
    "ParetoPoint",
    "QueryDelta",
    "SummaryRow",
    "compare",
    "evaluation_measures",
    "load_costs",
    "load_segments",
    "unique_names",
]

#: How many dropped query ids a note lists before "…".
_SHOW_IDS = 5


@dataclass(frozen=True)
class ComparisonRow:
    """One system against one baseline on one measure, over all queries (``segment is None``) or one segment.

    ``diff = mean_system − mean_baseline`` over the ``n`` queries both answered; ``rel_diff = diff /
    mean_baseline``; ``[ci_low, ci_high]`` is the ``ci_method`` confidence interval of ``diff`` at level
    ``1 − alpha``; ``p_value`` is the ``test``'s two-sided p-value and ``p_value_adjusted`` the corrected one
    (its family: every pair of one measure, over all queries or over all segments); ``effect_size`` is the
    paired Cohen's d; ``wins``/``ties``/``losses`` count queries where the system beats/equals/trails the
    baseline; ``significant`` is ``p_value_adjusted <= alpha``.
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: non-finite numbers become ``None``."""
        return {k: _json_value(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class SummaryRow:
    """The mean of one system on one measure over the queries every system answered (``n`` of them)."""

    system: str
    measure: str
    segment: str | None
    n: int
    mean: float

    def to_dict(self) -> dict[str, Any]:
        return {k: _json_value(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class QueryDelta:
    """One query of one pair on one measure: ``delta = value_system − value_baseline`` (negative: the
    system is worse on this query)."""

    baseline: str
    system: str
    measure: str
    query_id: str
    value_baseline: float
    value_system: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        return {k: _json_value(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class ParetoPoint:
    """One system's quality on one measure against its costs (lower is better), and who dominates it."""

    system: str
    measure: str
    quality: float
    costs: tuple[tuple[str, float], ...]
    dominated_by: tuple[str, ...]

    @property
    def dominated(self) -> bool:
        """True when another system is at least as good on quality and every cost, and better on one."""
        return bool(self.dominated_by)

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "measure": self.measure,
            "quality": _json_value(self.quality),
            "costs": {k: _json_value(v) for k, v in self.costs},
            "dominated": self.dominated,
            "dominated_by": list(self.dominated_by),
        }


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` returns: every pairwise row, the per-system summary, the Pareto analysis.

    Attributes:
        systems: system names, in the order given.
        measures: canonical measure names.
        baseline: the baseline's name, or ``None`` when every pair was compared (the earlier system of each
            pair is its baseline).
        rows: one :class:`ComparisonRow` per (measure, segment, pair), overall rows (segment ``None``) first.
        summary: per-system means over the queries every system answered, overall and per segment.
        segments: ``(segment, number of evaluated queries)`` in sorted order; empty without segments.
        pareto: cost–quality points per measure; empty without costs.
        results: each system's :class:`~ranklens.Results` (per-query values for the plots).
        segment_of: the query → segment mapping used (``None`` without segments).
        notes: everything left out and why (dropped queries, queries without a segment …).
        options: test, correction, ci, alpha, samples, seed and the evaluation policy.
    """

    systems: tuple[str, ...]
    measures: tuple[str, ...]
    baseline: str | None
    rows: tuple[ComparisonRow, ...]
    summary: tuple[SummaryRow, ...]
    segments: tuple[tuple[str, int], ...]
    pareto: tuple[ParetoPoint, ...]
    results: Mapping[str, Results]
    segment_of: Mapping[str, str] | None = None
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def alpha(self) -> float:
        return float(self.options.get("alpha", 0.05))

    def select(
        self, *, measure: str | None = None, segment: str | None = None, system: str | None = None, overall: bool = True
    ) -> list[ComparisonRow]:
        """Rows of one measure and/or one system; over all queries (default) or, with ``overall=False``, of
        ``segment`` (every segment when ``segment`` is ``None``)."""
        out = []
        for r in self.rows:
            if measure is not None and r.measure != measure:
                continue
            if system is not None and r.system != system:
                continue
            if overall and r.segment is not None:
                continue
            if not overall and (r.segment is None or (segment is not None and r.segment != segment)):
                continue
            out.append(r)
        return out

    def row(self, baseline: str, system: str, measure: str, segment: str | None = None) -> ComparisonRow:
        """The row of one pair on one measure (and segment)."""
        for r in self.rows:
            if (r.baseline, r.system, r.measure, r.segment) == (baseline, system, measure, segment):
                return r
        raise InputError(f"no comparison of {system!r} against {baseline!r} on {measure!r} (segment {segment!r})")

    def mean(self, system: str, measure: str, segment: str | None = None) -> float:
        """The :attr:`summary` mean of ``system`` on ``measure``."""
        for s in self.summary:
            if (s.system, s.measure, s.segment) == (system, measure, segment):
                return s.mean
        raise InputError(f"no summary of {system!r} on {measure!r} (segment {segment!r})")

    def paired_scores(
        self, baseline: str, system: str, measure: str, segment: str | None = None
    ) -> tuple[list[str], np.ndarray, np.ndarray]:
        """``(query_ids, baseline values, system values)`` on the queries both answered (within ``segment``)."""
        return _paired(self.results[baseline], self.results[system], measure, self.segment_of, segment)

    def deltas(self, *, measure: str | None = None, system: str | None = None) -> list[QueryDelta]:
        """Per-query differences ``system − baseline`` of every compared pair (or one measure / system), on
        the queries both answered, in query order."""
        out: list[QueryDelta] = []
        for b, s in self.pairs:
            if system is not None and s != system:
                continue
            for m in self.measures:
                if measure is not None and m != measure:
                    continue
                qids, xb, xs = self.paired_scores(b, s, m)
                out.extend(
                    QueryDelta(b, s, m, q, float(vb), float(vs), float(vs - vb))
                    for q, vb, vs in zip(qids, xb.tolist(), xs.tolist())
                )
        return out

    def worst(self, n: int, *, measure: str | None = None, system: str | None = None) -> list[QueryDelta]:
        """The ``n`` queries with the largest drop (most negative delta; ties by query id) of every pair and
        measure; queries that did not drop are not listed.

        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
        >>> old = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0}}
        >>> new = {"q1": {"x": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}
        >>> [(d.query_id, d.delta) for d in compare(qrels, {"old": old, "new": new}, "P@1").worst(5)]
        [('q1', -1.0)]
        """
        groups: dict[tuple[str, str, str], list[QueryDelta]] = {}
        for d in self.deltas(measure=measure, system=system):
            if d.delta < 0:
                groups.setdefault((d.baseline, d.system, d.measure), []).append(d)
        out: list[QueryDelta] = []
        for items in groups.values():
            out.extend(sorted(items, key=lambda d: (d.delta, d.query_id))[: max(int(n), 0)])
        return out

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The (baseline, system) pairs compared, in order."""
        seen: dict[tuple[str, str], None] = {}
        for r in self.rows:
            seen.setdefault((r.baseline, r.system), None)
        return list(seen)

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: options, systems, measures, segments, rows, summary, pareto, per_query (the
        :meth:`deltas` of every pair), notes."""
        from ranklens import __version__

        return {
            "ranklens_version": __version__,
            "options": self.options,
            "systems": list(self.systems),
            "measures": list(self.measures),
            "baseline": self.baseline,
            "segments": dict(self.segments),
            "rows": [r.to_dict() for r in self.rows],
            "summary": [s.to_dict() for s in self.summary],
            "pareto": [p.to_dict() for p in self.pareto],
            "per_query": [d.to_dict() for d in self.deltas()],
            "notes": list(self.notes),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The :meth:`to_json_dict` form as text (``NaN`` written as ``null``)."""
        return json.dumps(self.to_json_dict(), indent=indent, allow_nan=False)

    def to_records(self) -> list[dict[str, Any]]:
        """The rows as plain dicts (e.g. for ``pandas.DataFrame(comparison.to_records())``)."""
        return [r.to_dict() for r in self.rows]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame, one row per (measure, segment, pair); :meth:`deltas` has the
        per-query differences (``pandas.DataFrame([d.to_dict() for d in cmp.deltas()])``)."""
        try:
            import pandas as pd
        except ImportError:
            from ranklens.errors import MissingDependencyError

            raise MissingDependencyError("pandas", "pandas", "Comparison.to_pandas()") from None
        columns = [f.name for f in fields(ComparisonRow)]
        return pd.DataFrame([asdict(r) for r in self.rows], columns=columns)

    def __repr__(self) -> str:
        n_sig = sum(r.significant for r in self.rows)
        return (
            f"Comparison(systems={list(self.systems)}, measures={list(self.measures)}, "
            f"rows={len(self.rows)}, significant={n_sig}, test={self.options.get('test')!r})"
        )


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    measures: Iterable[Measure | str] | str,
    *,
    baseline: str | int | None = None,
    test: str = "t",
    correction: str = "holm",
    ci: str = "t",
    segments: Any = None,
    alpha: float = 0.05,
    samples: int = 10_000,
    seed: int | None = 0,
    costs: Any = None,
    **policy: Any,
) -> Comparison:
    """Compare systems on paired per-query scores.

    Every run is evaluated once (``**policy`` goes to :class:`~ranklens.Evaluator`: ``missing``,
    ``negative``, ``judged_only``, ``max_docs``, ``rel_level``); each pair is compared on the queries both
    answered, and the number dropped is written to :attr:`Comparison.notes` (``missing="zero"`` scores a
    query a run never answered 0 instead, as trec_eval ``-c`` does).

    Args:
        qrels: judgements (path, frame, dict or Qrels); may be ``None`` when every run is a ``Results``.
        runs: runs as a ``{name: run}`` mapping or a sequence (named by their tags, or their file stems
            when tags collide). A run may be a path, frame, dict, Run or an already computed Results.
        measures: measure names (``"nDCG@10"``, ``"ndcg_cut.10"``) or Measure values.
        baseline: a system's name or index: compare every other system against it. ``None`` compares
            every pair, the earlier system of each pair being its baseline.
        test: ``t`` (paired Student t, default), ``randomisation`` (Fisher; exact up to 20 queries),
            ``bootstrap`` (Sakai's studentised shifted bootstrap), ``wilcoxon``, ``sign``, or for all pairs
            of many systems ``tukey`` (blocked two-way Tukey HSD) and ``randomised-tukey``.
        correction: ``holm`` (default), ``bonferroni``, ``bh`` (Benjamini–Hochberg) or ``none``. The family
            is every pair on one measure over all queries; for segment rows, every pair × segment of one
            measure. Tukey p-values already control the family-wise error and are not adjusted again
            (segment rows of Tukey are adjusted across segments).
        ci: ``t`` or ``bootstrap`` (percentile) interval of the mean difference, at level ``1 - alpha``.
        segments: a query → segment mapping: a dict, a file (``query_id segment`` lines, CSV/TSV with a
            header, or JSON ``{query_id: segment}``) or a frame; see :func:`ranklens.read_segments`.
        alpha: significance level.
        samples: Monte Carlo samples (randomisation beyond 20 queries, bootstrap, randomised Tukey).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same result. ``None`` = fresh.
        costs: per-system costs (lower is better), e.g. ``{"bm25": {"latency_ms": 12}}``, a CSV/TSV file
            with a ``system`` column, or a frame; gives :attr:`Comparison.pareto`.

    Raises:
        InputError: two systems share no query (a comparison over nothing), or ``segments`` label none of
            the evaluated queries.

    Warns:
        RanklensWarning: once per entry of :attr:`Comparison.notes` (dropped queries, queries without a
            segment, the runs' own notes prefixed with the system's name).

    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
    >>> good = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0, "x": 2.0}}
    >>> poor = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"x": 1.0, "c": 0.5}, "q3": {"x": 1.0}}
    >>> cmp = compare(qrels, {"poor": poor, "good": good}, ["P@1"], test="sign")
    >>> r = cmp.rows[0]
    >>> r.baseline, r.system, r.diff, (r.wins, r.ties, r.losses), r.p_value
    ('poor', 'good', 0.6666666666666666, (2, 1, 0), 0.5)
    """
    test_key = stats.canonical_test(test)
    correction_key = stats.canonical_correction(correction)
    ci_key = stats.canonical_interval(ci)
    if not 0.0 < float(alpha) < 1.0:
        raise InputError(f"alpha must be between 0 and 1 (e.g. 0.05); got {alpha!r}")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InputError(f"samples must be a positive integer; got {samples!r}")
    measure_values, results, notes = _evaluate(qrels, runs, measures, policy)
    names = tuple(results)
    if len(names) < 2:
        raise InputError(f"compare needs at least two systems; got {len(names)}")
    base = _resolve_baseline(baseline, names)
    pairs = [(base, s) for s in names if s != base] if base is not None else list(itertools.combinations(names, 2))
    segment_of = load_segments(segments)
    where = str(segments) if isinstance(segments, (str, os.PathLike)) else "segments"
    seg_names, seg_counts = _segment_counts(segment_of, results, notes, where)
    mnames = tuple(str(m) for m in measure_values)
    plan = _Plan(test_key, ci_key, float(alpha), int(samples), np.random.SeedSequence(seed).entropy)

    rows: list[ComparisonRow] = []
    for m in mnames:
        for scope in (None, "segments"):
            scope_segments: list[str | None] = [None] if scope is None else list(seg_names)
            family: list[ComparisonRow] = []
            for seg in scope_segments:
                family.extend(_compare_segment(results, pairs, m, segment_of, seg, plan, notes))
            rows.extend(_correct(family, correction_key, test_key, alpha, within_test=scope is None))

    summary = _summary(results, mnames, segment_of, seg_names)
    cost_table = load_costs(costs)
    pareto = _pareto(summary, mnames, names, cost_table, notes)
    options = {
        "test": test_key,
        "correction": correction_key,
        "ci": ci_key,
        "alpha": float(alpha),
        "samples": int(samples),
        "seed": seed,
        **{k: v for k, v in policy.items()},
    }
    warn_notes(notes)
    return Comparison(
        systems=names,
        measures=mnames,
        baseline=base,
        rows=tuple(rows),
        summary=tuple(summary),
        segments=tuple(zip(seg_names, seg_counts)),
        pareto=tuple(pareto),
        results=results,
        segment_of=segment_of,
        notes=tuple(notes),
        options=options,
    )


# --------------------------------------------------------------------------------------------- evaluation


def _evaluate(
    qrels: Any, runs: Mapping[str, Any] | Sequence[Any], measures: Iterable[Measure | str] | str, policy: dict[str, Any]
) -> tuple[list[Measure], dict[str, Results], list[str]]:
    from ranklens.engine.evaluator import Evaluator
    from ranklens.measures.parse import parse_many

    items = list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]
    if not items:
        raise InputError("compare needs at least two runs; got none")
    evaluator = Evaluator(measures, qrels, **policy) if qrels is not None else None
    measure_values = list(evaluator.measures) if evaluator else [m.validate() for m in parse_many(measures)]
    checks = _consistency_pairs(measure_values)
    if evaluator is not None and checks:
        # also evaluate the DCG behind every nDCG, to check that both order the systems alike (spec §5)
        extra = [u for _, u in checks if u not in measure_values]
        evaluator = Evaluator([*measure_values, *extra], evaluator.qrels, **policy)
    if not measure_values:
        raise InputError("no measure given; e.g. nDCG@10")
    evaluated: list[tuple[str | None, Any, Results]] = []
    notes: list[str] = []
    for name, run in items:
        if isinstance(run, (str, os.PathLike)) and _is_results_file(run):
            run = _one_results(run)
        if isinstance(run, Results):
            for m in measure_values:
                run.column(m)  # raises MeasureError naming the measures it has
            res = run
        elif evaluator is None:
            raise InputError("qrels are needed to evaluate runs (only precomputed Results may omit them)")
        else:
            res = evaluator(run, name=name, warn=False)  # compare warns the notes once, with the system's name
        evaluated.append((name, run, res))
    labels = unique_names([(n if n is not None else r.run, src) for n, src, r in evaluated])
    results: dict[str, Results] = {}
    for label, (_, _, res) in zip(labels, evaluated):
        results[label] = res
        notes.extend(f"{label}: {note}" for note in res.notes)
    notes.extend(_consistency_notes(results, checks))
    return measure_values, results, notes


def _is_results_file(path: str | os.PathLike[str]) -> bool:
    from ranklens.results_io import looks_like_results

    return os.path.isfile(path) and looks_like_results(path)


def _one_results(path: str | os.PathLike[str]) -> Results:
    """The one run of a results file (``eval --per-query -f json`` or ``-o FILE``), with per-query
    values."""
    from ranklens.results_io import read_results

    found = read_results(path)
    if len(found) != 1:
        raise InputError(
            f"{path}: holds the results of {len(found)} runs ({', '.join(r.run for r in found)}); "
            "give each run's results file, or pass the Results objects"
        )
    if not found[0].query_ids:
        raise InputError(
            f"{path}: holds aggregates only; comparing needs per-query values: write them with "
            "ranklens eval … --per-query -o FILE (.json, .csv or .parquet)"
        )
    return found[0]


def evaluation_measures(measures: Sequence[Measure]) -> list[Measure]:
    """What :func:`compare` evaluates for ``measures``: them, then the DCG behind every nDCG (to check that
    both order the systems alike); for callers that evaluate runs themselves and pass Results."""
    extra = [u for _, u in _consistency_pairs(measures) if u not in measures]
    return [*measures, *extra]


def _consistency_pairs(measures: Sequence[Measure]) -> list[tuple[Measure, Measure]]:
    """(nDCG measure, its unnormalised DCG) for every nDCG measure compared."""
    from ranklens.unbiased.consistency import unnormalised_of

    return [(m, unnormalised_of(m)) for m in measures if m.name == "nDCG"]


def _consistency_notes(results: Mapping[str, Results], checks: Sequence[tuple[Measure, Measure]]) -> list[str]:
    """Say when mean nDCG and mean DCG order the systems differently (normalisation can invert them)."""
    from ranklens.unbiased.consistency import ordering_consistency

    out: list[str] = []
    for primary, dcg in checks:
        if len(results) < 2 or not all(primary in r.measures and dcg in r.measures for r in results.values()):
            continue  # precomputed Results without the DCG: nothing to check
        out.extend(ordering_consistency(results, primary, dcg).messages())
    return out


def _resolve_baseline(baseline: str | int | None, names: tuple[str, ...]) -> str | None:
    if baseline is None:
        return None
    if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
        if not -len(names) <= int(baseline) < len(names):
            raise InputError(f"baseline index {baseline} out of range for {len(names)} systems")
        return names[int(baseline)]
    if baseline in names:
        return str(baseline)
    if isinstance(baseline, (str, os.PathLike)) and file_stem(baseline) in names:
        return file_stem(baseline)
    raise InputError(
        f"unknown baseline {baseline!r}; the systems are {', '.join(names)}" + did_you_mean(str(baseline), names)
    )


# ----------------------------------------------------------------------------------------------- pairing


def _paired(
    a: Results, b: Results, measure: str, segment_of: Mapping[str, str] | None, segment: str | None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    ia = {q: i for i, q in enumerate(a.query_ids)}
    ib = {q: i for i, q in enumerate(b.query_ids)}
    common = [q for q in a.query_ids if q in ib and _in_segment(q, segment_of, segment)]
    xa = a.column(measure)[[ia[q] for q in common]] if common else np.zeros(0)
    xb = b.column(measure)[[ib[q] for q in common]] if common else np.zeros(0)
    return common, np.asarray(xa, dtype=np.float64), np.asarray(xb, dtype=np.float64)


def _in_segment(query: str, segment_of: Mapping[str, str] | None, segment: str | None) -> bool:
    return segment is None or (segment_of is not None and segment_of.get(query) == segment)


def _common_all(results: Mapping[str, Results], segment_of: Mapping[str, str] | None, segment: str | None) -> list[str]:
    sets = [set(r.query_ids) for r in results.values()]
    first = next(iter(results.values()))
    both = set.intersection(*sets)
    return [q for q in first.query_ids if q in both and _in_segment(q, segment_of, segment)]


def _dropped_note(a: str, b: str, ra: Results, rb: Results) -> str | None:
    qa, qb = set(ra.query_ids), set(rb.query_ids)
    parts = []
    for who, only in ((a, sorted(qa - qb)), (b, sorted(qb - qa))):
        if only:
            shown = ", ".join(only[:_SHOW_IDS]) + (", …" if len(only) > _SHOW_IDS else "")
            parts.append(f"{len(only)} quer{'y' if len(only) == 1 else 'ies'} only in {who} ({shown})")
    if not parts:
        return None
    return (
        f"{a} vs {b}: paired on {len(qa & qb)} common queries; dropped {' and '.join(parts)}; "
        "score unanswered qrels queries 0 with missing=zero (--missing zero) to keep them"
    )


# ------------------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class _Plan:
    """How every row is computed: the test, the interval, alpha, Monte Carlo samples and the seed entropy."""

    test: str
    ci: str
    alpha: float
    samples: int
    entropy: Any

    def rng(self, *key: str | None) -> np.random.Generator:
        """A generator keyed by what a row compares (not by its position), so a row's Monte Carlo numbers do
        not change with the other runs or measures compared; the same key gives the test and the interval
        the same resamples."""
        words = tuple(zlib.crc32(str(k).encode("utf-8")) for k in key)
        return np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=words))


def _compare_segment(
    results: Mapping[str, Results],
    pairs: list[tuple[str, str]],
    measure: str,
    segment_of: Mapping[str, str] | None,
    segment: str | None,
    plan: _Plan,
    notes: list[str],
) -> list[ComparisonRow]:
    """The rows of one measure over all queries (``segment`` None) or one segment, before correction."""
    all_pairs = plan.test in stats.ALL_PAIRS_TESTS
    tukey: stats.TukeyResult | None = None
    order: dict[str, int] = {}
    common: list[str] = []
    if all_pairs:
        tukey, order, common = _all_pairs(results, measure, segment_of, segment, plan)
        if segment is None:
            _note(notes, _dropped_all_note(results, common))
    rows = []
    for b, s in pairs:
        if all_pairs:
            xb, xs = _values(results[b], measure, common), _values(results[s], measure, common)
        else:
            _, xs, xb = _paired(results[s], results[b], measure, segment_of, segment)
            if segment is None:
                _note(notes, _dropped_note(b, s, results[b], results[s]))
        if xs.size == 0:
            if segment is None:  # a comparison over no query is an error, never a NaN or a silent gap
                raise InputError(
                    f"{b} vs {s}: no query both answered, so nothing to compare on {measure}; score unanswered "
                    "qrels queries 0 with missing=zero (--missing zero) to pair them on every qrels query"
                )
            _note(notes, f"{b} vs {s} on {measure} in segment {segment!r}: no query in common; no row")
            continue
        key = (measure, segment, *sorted((b, s)))
        if all_pairs:
            p = tukey.pair(order[s], order[b]).p_value if tukey is not None else math.nan
        else:
            p = stats.paired_test(xs, xb, plan.test, samples=plan.samples, seed=plan.rng(*key)).p_value
        interval = stats.confidence_interval(
            xs, xb, plan.ci, level=1.0 - plan.alpha, samples=plan.samples, seed=plan.rng(*key)
        )
        rows.append(_row(b, s, measure, segment, xb, xs, p, plan.test, interval))
    return rows


def _row(
    baseline: str,
    system: str,
    measure: str,
    segment: str | None,
    xb: np.ndarray,
    xs: np.ndarray,
    p: float,
    test: str,
    interval: stats.Interval,
) -> ComparisonRow:
    mb, ms = float(xb.mean()), float(xs.mean())
    diff = float((xs - xb).mean())
    wins, ties, losses = stats.win_tie_loss(xs, xb)
    return ComparisonRow(
        baseline=baseline,
        system=system,
        measure=measure,
        segment=segment,
        n=int(xs.size),
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
        effect_size=stats.cohens_d_paired(xs, xb),
        wins=wins,
        ties=ties,
        losses=losses,
        significant=False,
    )


def _note(notes: list[str], note: str | None) -> None:
    if note and note not in notes:
        notes.append(note)


def _dropped_all_note(results: Mapping[str, Results], common: list[str]) -> str | None:
    every = set().union(*(set(r.query_ids) for r in results.values()))
    dropped = sorted(every - set(common))
    if not dropped:
        return None
    shown = ", ".join(dropped[:_SHOW_IDS]) + (", …" if len(dropped) > _SHOW_IDS else "")
    return (
        f"all-pairs test: paired on the {len(common)} queries every system answered; dropped "
        f"{len(dropped)} ({shown}); score unanswered qrels queries 0 with missing=zero (--missing zero) to keep them"
    )


def _all_pairs(
    results: Mapping[str, Results],
    measure: str,
    segment_of: Mapping[str, str] | None,
    segment: str | None,
    plan: _Plan,
) -> tuple[stats.TukeyResult | None, dict[str, int], list[str]]:
    """The all-pairs test on the queries every system answered (None with fewer than 2 of them)."""
    common = _common_all(results, segment_of, segment)
    order = {name: i for i, name in enumerate(results)}
    if len(common) < 2:
        return None, order, common
    matrix = np.column_stack([_values(r, measure, common) for r in results.values()])
    if plan.test == "tukey":
        return stats.tukey_hsd(matrix), order, common
    seed = plan.rng(measure, segment, *sorted(results))
    return stats.randomised_tukey_hsd(matrix, samples=plan.samples, seed=seed), order, common


def _values(res: Results, measure: str, queries: list[str]) -> np.ndarray:
    index = {q: i for i, q in enumerate(res.query_ids)}
    col = res.column(measure)
    return np.asarray([col[index[q]] for q in queries], dtype=np.float64)


def _correct(
    family: list[ComparisonRow], correction: str, test: str, alpha: float, *, within_test: bool
) -> list[ComparisonRow]:
    """Adjust one family's p-values. Tukey p-values already cover all pairs of a segment: they are only
    adjusted across segments."""
    if not family:
        return family
    raw = np.array([r.p_value for r in family], dtype=np.float64)
    if test in stats.ALL_PAIRS_TESTS and within_test:
        adjusted = raw
    elif test in stats.ALL_PAIRS_TESTS:
        # each segment's Tukey p-values cover its pairs; correct each pair across the segments
        adjusted = raw.copy()
        for pair in {(r.baseline, r.system) for r in family}:
            idx = [i for i, r in enumerate(family) if (r.baseline, r.system) == pair]
            adjusted[idx] = stats.adjust_p_values(raw[idx], correction)
    else:
        adjusted = stats.adjust_p_values(raw, correction)
    out = []
    for r, p in zip(family, adjusted.tolist()):
        out.append(replace(r, p_value_adjusted=p, significant=bool(p <= alpha)))
    return out


# ---------------------------------------------------------------------------------------------- summary


def _summary(
    results: Mapping[str, Results],
    measures: tuple[str, ...],
    segment_of: Mapping[str, str] | None,
    seg_names: list[str],
) -> list[SummaryRow]:
    out = []
    for seg in [None, *seg_names]:
        common = _common_all(results, segment_of, seg)
        for m in measures:
            for name, res in results.items():
                vals = _values(res, m, common)
                out.append(SummaryRow(name, m, seg, len(common), float(vals.mean()) if vals.size else math.nan))
    return out


# --------------------------------------------------------------------------------------------- segments


def load_segments(source: Any) -> dict[str, str] | None:
    """A query → segment mapping (``None`` stays ``None``): :func:`ranklens.data.segments.read_segments`.

    It takes text lines ``query_id segment``, CSV/TSV with a header naming the columns, JSON
    ``{query_id: segment}``, mappings and frames; errors name the file and line.

    >>> load_segments({"q1": "nav", "q2": "info"})
    {'q1': 'nav', 'q2': 'info'}
    """
    from ranklens.data.segments import read_segments

    return None if source is None else read_segments(source)


def _segment_counts(
    segment_of: Mapping[str, str] | None, results: Mapping[str, Results], notes: list[str], where: str = "segments"
) -> tuple[list[str], list[int]]:
    if segment_of is None:
        return [], []
    evaluated: dict[str, None] = {}
    for r in results.values():
        evaluated.update(dict.fromkeys(r.query_ids))
    names = sorted({segment_of[q] for q in evaluated if q in segment_of})
    if not names:
        from ranklens.data.segments import check_overlap

        check_overlap(segment_of, evaluated, source=where)
    counts = [sum(1 for q in evaluated if segment_of.get(q) == s) for s in names]
    unlabelled = [q for q in evaluated if q not in segment_of]
    if unlabelled:
        shown = ", ".join(unlabelled[:_SHOW_IDS]) + (", …" if len(unlabelled) > _SHOW_IDS else "")
        notes.append(
            f"segments: {len(unlabelled)} evaluated quer{'y has' if len(unlabelled) == 1 else 'ies have'} "
            f"no segment ({shown}); counted overall only"
        )
    return names, counts


# ------------------------------------------------------------------------------------------------ costs


def load_costs(source: Any) -> dict[str, dict[str, float]] | None:
    """Per-system costs (lower is better) from a mapping, a CSV/TSV file or a frame.

    ``{"bm25": {"latency_ms": 12, "cost_per_1k": 0.1}}`` or ``{"bm25": 12}`` (one cost named ``cost``);
    files and frames have a ``system`` column (or the first column) and one numeric column per cost.

    >>> load_costs({"bm25": 12, "dense": 40})
    {'bm25': {'cost': 12.0}, 'dense': {'cost': 40.0}}
    """
    if source is None:
        return None
    if isinstance(source, (str, os.PathLike)):
        columns = _columns_from_file(Path(source))
        where = str(source)
    elif isinstance(source, Mapping) and all(not isinstance(v, (list, tuple, np.ndarray)) for v in source.values()):
        out: dict[str, dict[str, float]] = {}
        for system, value in source.items():
            entry = value if isinstance(value, Mapping) else {"cost": value}
            out[str(system)] = {str(k): parse_number(v, f"costs of {system!r}") for k, v in entry.items()}
        return out
    else:
        columns = _columns(source, "costs")
        where = "costs"
    names = list(columns)
    if len(names) < 2:
        raise InputError(f"{where}: expected a system column and at least one cost column; got {names}")
    lowered = [n.lower() for n in names]
    scol = names[lowered.index("system")] if "system" in lowered else names[0]
    out = {}
    for i, system in enumerate(columns[scol]):
        out[str(system)] = {c: parse_number(columns[c][i], f"{where}: {c} of {system!r}") for c in names if c != scol}
    return out


def parse_number(value: Any, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected a number, got {value!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{what}: expected a finite number, got {value!r}")
    return x


def _columns_from_file(path: Path) -> dict[str, list[Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(str(path), "no such file") from None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise FormatError(str(path), "empty file")
    delimiter = "\t" if "\t" in lines[0] else ","
    rows = list(csv.reader(lines, delimiter=delimiter))
    header = [h.strip() for h in rows[0]]
    columns: dict[str, list[Any]] = {h: [] for h in header}
    for lineno, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise FormatError(
                str(path), f"expected {len(header)} columns ({', '.join(header)}), got {len(row)}", lineno
            )
        for h, v in zip(header, row):
            columns[h].append(v.strip())
    return columns


def _columns(obj: Any, what: str) -> dict[str, list[Any]]:
    """Columns of a pyarrow Table, pandas or polars DataFrame, or a mapping of equal-length columns."""
    import pyarrow as pa

    library = type(obj).__module__.split(".")[0]
    if isinstance(obj, pa.Table):
        return {n: obj.column(n).to_pylist() for n in obj.column_names}
    if library == "polars" and hasattr(obj, "to_arrow"):
        return _columns(obj.to_arrow(), what)
    if library == "pandas" and hasattr(obj, "columns"):
        return {str(c): obj[c].tolist() for c in obj.columns}
    if isinstance(obj, Mapping):
        return {str(k): list(v) for k, v in obj.items()}
    raise InputError(f"{what}: expected a dict, a file or a DataFrame/Arrow table; got {type(obj).__name__}")


def _pareto(
    summary: list[SummaryRow],
    measures: tuple[str, ...],
    names: tuple[str, ...],
    costs: dict[str, dict[str, float]] | None,
    notes: list[str],
) -> list[ParetoPoint]:
    if not costs:
        return []
    unknown = sorted(set(costs) - set(names))
    if unknown:
        raise InputError(
            f"costs name unknown systems {', '.join(unknown)}; the systems are {', '.join(names)}"
            + did_you_mean(unknown[0], names)
        )
    with_costs = [s for s in names if s in costs]
    missing = [s for s in names if s not in costs]
    if missing:
        notes.append(f"costs: no cost for {', '.join(missing)}; left out of the Pareto analysis")
    cost_names = sorted({c for s in with_costs for c in costs[s]})
    incomplete = [s for s in with_costs if set(costs[s]) != set(cost_names)]
    if incomplete:
        raise InputError(f"costs: every system needs every cost ({', '.join(cost_names)}); {incomplete[0]!r} does not")
    out = []
    matrix = np.array([[costs[s][c] for c in cost_names] for s in with_costs], dtype=np.float64).reshape(
        len(with_costs), len(cost_names)
    )
    means = {(r.system, r.measure): r.mean for r in summary if r.segment is None}
    for m in measures:
        quality = np.array([means[(s, m)] for s in with_costs])
        if not np.isfinite(quality).all():
            continue
        doms = stats.dominators(quality, matrix)
        for i, s in enumerate(with_costs):
            out.append(
                ParetoPoint(
                    system=s,
                    measure=m,
                    quality=float(quality[i]),
                    costs=tuple((c, float(matrix[i, k])) for k, c in enumerate(cost_names)),
                    dominated_by=tuple(with_costs[j] for j in doms[i]),
                )
            )
    return out


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
