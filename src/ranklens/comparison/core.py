"""The :class:`Comparison` and :func:`compare`: evaluate every run once, pair each two systems on their common
queries, test, correct, summarise and add the Pareto analysis."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

from ranklens import stats
from ranklens.comparison.evaluation import evaluate_runs, resolve_baseline
from ranklens.comparison.inputs import load_costs, load_segments, segment_counts
from ranklens.comparison.pairing import pair_results
from ranklens.comparison.rows import (
    ComparisonRow,
    Plan,
    QueryDelta,
    SummaryRow,
    aggregate_name,
    aggregate_note,
    compare_segment,
    correct,
    is_system,
    summary_rows,
    system_rows,
)
from ranklens.errors import InputError, warn_notes
from ranklens.measures.language import MeasuresArg
from ranklens.results.core import QueryId, Results, given_id
from ranklens.stats.lists import check_samples

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy: only for the callers that ask for arrays, and the Monte Carlo tests)
    from typing import Any

    import numpy as np

    from ranklens.comparison.pareto import ParetoPoint  # (imported by compare only with costs)

__all__ = ["Comparison", "compare"]


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
    ) -> tuple[list[QueryId], np.ndarray, np.ndarray]:
        """``(query_ids, baseline values, system values)`` on the queries both answered (within ``segment``);
        ids of the type the runs gave them (integers stay integers)."""
        p = pair_results(self.results[baseline], self.results[system], measure, self.segment_of, segment)
        return self._ids(baseline, system, p.queries), p.a, p.b

    def _ids(self, baseline: str, system: str, queries: Sequence[str]) -> list[QueryId]:
        """Query ids of the type the two runs gave them (integers stay integers)."""
        if all(r.id_kind == "int" for r in (self.results[baseline], self.results[system])):
            return [given_id(q) for q in queries]
        return list(queries)

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
                p = pair_results(self.results[b], self.results[s], m, self.segment_of, None)
                qids = self._ids(b, s, p.queries)
                out.extend(
                    QueryDelta(b, s, m, q, vb, vs, vs - vb) for q, vb, vs in zip(qids, p.values_a, p.values_b)
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
        import json

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

    def _repr_html_(self) -> str:
        """The notebook view: every pairwise row (means, difference, interval, adjusted p, significant), then
        the notes."""
        from ranklens.results.html import html_table

        headers = ["measure", "segment", "baseline", "system", "n", "baseline mean", "system mean", "diff",
                   "ci low", "ci high", "p (adjusted)", "significant"]
        rows = [[r.measure, r.segment or "all", r.baseline, r.system, r.n, r.mean_baseline, r.mean_system, r.diff,
                 r.ci_low, r.ci_high, r.p_value_adjusted, r.significant] for r in self.rows]
        caption = (f"{len(self.systems)} systems, test {self.options.get('test')}, correction "
                   f"{self.options.get('correction')}, alpha {self.alpha:g}")
        return html_table(caption, headers, rows, notes=self.notes)

    def __repr__(self) -> str:
        n_sig = sum(r.significant for r in self.rows)
        return (
            f"Comparison(systems={list(self.systems)}, measures={list(self.measures)}, "
            f"rows={len(self.rows)}, significant={n_sig}, test={self.options.get('test')!r})"
        )


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    measures: MeasuresArg,
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
    try:
        check_samples(samples)
    except InputError:
        raise InputError(f"samples must be a positive integer; got {samples!r}") from None
    measure_values, results, notes = evaluate_runs(qrels, runs, measures, policy)
    names = tuple(results)
    if len(names) < 2:
        raise InputError(f"compare needs at least two systems; got {len(names)}")
    base = resolve_baseline(baseline, names)
    pairs = [(base, s) for s in names if s != base] if base is not None else list(itertools.combinations(names, 2))
    segment_of = load_segments(segments)
    where = str(segments) if isinstance(segments, (str, os.PathLike)) else "segments"
    seg_names, seg_counts = segment_counts(segment_of, results, notes, where)
    mnames = tuple(str(m) for m in measure_values)
    plan = Plan(test_key, ci_key, float(alpha), int(samples), seed)

    rows: list[ComparisonRow] = []
    for m in mnames:
        if is_system(m):
            rows.extend(system_rows(results, pairs, m, notes))
            continue
        note = aggregate_note(m, test_key, ci_key)
        if note and note not in notes:
            notes.append(note)
        row_test = test_key if aggregate_name(m) == "mean" else "randomisation"
        for scope in (None, "segments"):
            scope_segments: list[str | None] = [None] if scope is None else list(seg_names)
            family: list[ComparisonRow] = []
            for seg in scope_segments:
                family.extend(compare_segment(results, pairs, m, segment_of, seg, plan, notes))
            rows.extend(correct(family, correction_key, row_test, alpha, within_test=scope is None))

    summary = summary_rows(results, mnames, segment_of, seg_names)
    cost_table = load_costs(costs)
    pareto: list[ParetoPoint] = []
    if cost_table:  # (the Pareto analysis, and its module, only with costs)
        from ranklens.comparison.pareto import pareto_points

        pareto = pareto_points(summary, mnames, names, cost_table, notes)
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
