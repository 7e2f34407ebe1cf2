"""``ranklens.spark.evaluate``: inputs, checks and the driver-side Results shared by both paths; the Arrow path."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.engine.alignment import AlignReport
from ranklens.engine.evaluator import Evaluator, nothing_evaluated
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import DuplicateError, InputError, MissingDependencyError, QuerySetError, warn_notes
from ranklens.measures.base import Measure
from ranklens.results.core import Results, assemble

__all__ = ["SparkEvaluation", "evaluate"]

PATHS = ("arrow", "sql")
RUN_ROLES = ("query_id", "doc_id", "score")
QRELS_ROLES = ("query_id", "doc_id", "relevance")
#: the counts every path reports per evaluation (the AlignReport's, plus the query counts of both inputs)
STATS = (
    "run_only_queries", "run_only_rows", "qrels_only_queries", "truncated_rows", "removed_unjudged_rows",
    "qrels_queries", "run_queries",
)


@dataclasses.dataclass(frozen=True, eq=False)
class SparkEvaluation:
    """What :func:`evaluate` returns.

    Attributes:
        per_query: a Spark DataFrame ``query_id, measure, value`` (one row per evaluated query and measure;
            ``measure`` is the canonical name); persisted: :meth:`unpersist` frees it.
        results: the driver-side :class:`~ranklens.results.core.Results` (aggregates, notes, options),
            identical to the in-memory engine's.
        path: ``"arrow"`` or ``"sql"``.
        segment_of: the query → segment map given as ``segments`` (or None).
    """

    per_query: Any
    results: Results
    path: str
    segment_of: Mapping[str, str] | None = None
    _persisted: Any = dataclasses.field(default=None, repr=False)

    @property
    def aggregates(self) -> dict[str, float]:
        """``{measure name: aggregate value}``."""
        return {str(m): v for m, v in zip(self.results.measures, self.results.aggregates)}

    @property
    def notes(self) -> tuple[str, ...]:
        return self.results.notes

    def __getitem__(self, measure: Measure | str) -> float:
        return self.results[measure]

    def by_segment(self) -> dict[str, Results]:
        """The Results of every segment (needs ``segments=``)."""
        if self.segment_of is None:
            raise InputError("no segments given: evaluate(..., segments={query: segment} or a DataFrame)")
        return self.results.by_segment(self.segment_of)

    def unpersist(self) -> None:
        if self._persisted is not None:
            self._persisted.unpersist()


def require_pyspark() -> Any:
    """The pyspark module, or :class:`MissingDependencyError` with the install hint."""
    try:
        import pyspark
    except ImportError:
        raise MissingDependencyError("pyspark", "spark", "the Spark engine") from None
    return pyspark


def evaluate(
    run_df: Any,
    qrels_df: Any,
    measures: Iterable[Measure | str] | str,
    *,
    policy: EvalPolicy | None = None,
    segments: Any = None,
    path: str = "arrow",
    name: str = "run",
    buckets: int | None = None,
    check_duplicates: bool = True,
    warn: bool = True,
) -> SparkEvaluation:
    """Evaluate a run DataFrame against a qrels DataFrame on Spark, with the in-memory engine's numbers.

    Args:
        run_df: columns ``query_id, doc_id, score`` (other names through ``policy.run_columns``).
        qrels_df: columns ``query_id, doc_id, relevance`` (``policy.qrels_columns``).
        measures: measure names or values, as for :class:`~ranklens.engine.evaluator.Evaluator`.
        policy: the :class:`EvalPolicy` (missing queries, negative labels, ``-J``, ``-M``, labels, column maps).
        segments: a ``{query: segment}`` mapping or a Spark DataFrame ``query_id, segment``
            (:meth:`SparkEvaluation.by_segment`).
        path: ``"arrow"`` (the engine per hash bucket: every measure) or ``"sql"`` (pure Spark SQL: nDCG,
            DCG, P, R, AP, RR, Success; no Python workers).
        name: the run's name in the Results.
        buckets: hash buckets of the query id for the Arrow path (default: ``spark.sql.shuffle.partitions``);
            one bucket's rows are evaluated in one Python worker's memory.
        check_duplicates: reject a (query, document) pair listed twice in the run or the qrels (a
            ``groupBy`` count; one shuffle each).
        warn: warn once per note (as the Evaluator does); the notes are in ``results.notes`` either way.

    Raises:
        DuplicateError: a duplicated pair (the message names it).
        InputError: no query is evaluated (empty inputs included): an error, never NaN.
        MeasureError: ``path="sql"`` and a measure the SQL path does not compute (use ``path="arrow"``).
    """
    require_pyspark()
    if path not in PATHS:
        raise InputError(f"path must be 'arrow' or 'sql'; got {path!r}")
    policy = policy if policy is not None else EvalPolicy()
    label_kind = policy.labels or "int"
    # the measures and the policy are checked on the driver, before any job, exactly as the engine checks them
    probe = Evaluator(
        measures, Qrels.from_arrays([], [], [], label_kind=label_kind),
        policy=policy.replace(qrels_columns=None, run_columns=None, qrels_format=None, run_format=None),
    )
    run = select_roles(run_df, policy.run_columns, RUN_ROLES, "run")
    qrels = select_roles(qrels_df, policy.qrels_columns, QRELS_ROLES, "qrels")
    if check_duplicates:
        reject_duplicates(run, "run", "appears twice for query", "A ranking lists each document once")
        reject_duplicates(qrels, "qrels", "is judged twice for query", "Remove the duplicates")
    if path == "sql":
        from ranklens.spark.sql import evaluate_sql

        per_query, qids, values, stats, persisted = evaluate_sql(run, qrels, probe, policy)
    else:
        per_query, qids, values, stats, persisted = evaluate_arrow(run, qrels, probe, policy, buckets)
    stats = stats if isinstance(stats, list) else [stats]  # one per ranking order (the Arrow path)
    if policy.missing == "error" and stats[0]["qrels_only_queries"]:
        raise_missing(run, qrels, stats[0]["qrels_only_queries"], name)
    res = finish(name, probe, policy, qids, values, stats)
    if warn:
        warn_notes(res.notes, f"{res.run}: ")
    segment_of = None
    if segments is not None:
        from ranklens.data.segments import read_segments

        if hasattr(segments, "toPandas"):
            segments = {str(r[0]): str(r[1]) for r in segments.select(segments.columns[:2]).collect()}
        segment_of = read_segments(segments)
    return SparkEvaluation(per_query, res, path, segment_of, persisted)


def select_roles(df: Any, columns: Mapping[str, str] | None, roles: tuple[str, ...], what: str) -> Any:
    """``df`` with exactly the columns ``roles`` (renamed by ``{column: role}``); ids as strings."""
    from pyspark.sql import functions as F

    by_role = {role: col for col, role in (columns or {}).items()}
    cols = []
    for role in roles:
        col = by_role.get(role, role)
        if col not in df.columns:
            raise InputError(
                f"{what} DataFrame has no column '{col}' for {role} (columns: {', '.join(df.columns)}); "
                f"map columns with EvalPolicy({what}_columns={{name: role}})"
            )
        c = F.col(f"`{col}`")
        cols.append((c.cast("string") if role in ("query_id", "doc_id") else c.cast("double") if role == "score" else c).alias(role))
    return df.select(*cols)


def reject_duplicates(df: Any, what: str, verb: str, advice: str) -> None:
    """A (query, document) pair counted more than once: :class:`DuplicateError` naming it."""
    from pyspark.sql import functions as F

    dups = df.groupBy("query_id", "doc_id").count().filter(F.col("count") > 1)
    row = dups.agg(
        F.sum(F.col("count") - 1).alias("extra"), F.min(F.struct("query_id", "doc_id")).alias("first")
    ).collect()[0]
    if row["extra"]:
        q, d = row["first"]["query_id"], row["first"]["doc_id"]
        kind = "row(s)" if what == "run" else "pair(s)"
        raise DuplicateError(
            f"<{what} DataFrame>", f"document '{d}' {verb} '{q}'; {row['extra']} duplicate {kind} in all. {advice}"
        )


def raise_missing(run: Any, qrels: Any, count: int, name: str) -> None:
    """The engine's QuerySetError for ``missing="error"``, with up to three of the missing queries."""
    q = qrels.select("query_id").distinct()
    missing = sorted(r[0] for r in q.join(run.select("query_id").distinct(), "query_id", "left_anti").limit(3).collect())
    raise QuerySetError(
        f"{count} qrels quer{'y' if count == 1 else 'ies'} not in the run <{name} DataFrame> "
        f"(e.g. {missing[:3]}); use query set 'intersect' or 'qrels'"
    )


def finish(
    name: str, probe: Evaluator, policy: EvalPolicy, qids: list[str], values: np.ndarray,
    stats: list[Mapping[str, int]],
) -> Results:
    """The driver-side Results: queries in bytewise order, the AlignReports' notes (one report per ranking
    order, merged as the Evaluator merges them), the one ``assemble``."""
    if not qids:
        first = stats[0]
        raise InputError(nothing_evaluated(f"<{name} DataFrame>", int(first["qrels_queries"]), int(first["run_queries"])))
    order = sorted(range(len(qids)), key=lambda i: qids[i].encode("utf-8"))
    notes: list[str] = []
    for counts in stats:
        report = AlignReport(
            run_only_queries=int(counts["run_only_queries"]),
            run_only_rows=int(counts["run_only_rows"]),
            qrels_only_queries=int(counts["qrels_only_queries"]),
            qrels_only_scored_zero=policy.missing == "zero",
            truncated_rows=int(counts["truncated_rows"]),
            removed_unjudged_rows=int(counts["removed_unjudged_rows"]),
        )
        notes.extend(msg for msg in report.messages() if msg not in notes)
    return assemble(name, probe.measures, [qids[i] for i in order], values[order], notes, probe.options())


# ── the Arrow path ──────────────────────────────────────────────────────────────────────────────────────


def evaluate_arrow(run: Any, qrels: Any, probe: Evaluator, policy: EvalPolicy, buckets: int | None) -> tuple[Any, ...]:
    from pyspark.sql import functions as F

    spark = run.sparkSession
    n = int(buckets or int(spark.conf.get("spark.sql.shuffle.partitions")))
    names = [str(m) for m in probe.measures]
    # missing="error" is decided on the driver over all buckets (a bucket sees only its own queries)
    bucket_policy = policy.replace(
        missing="skip" if policy.missing == "error" else policy.missing,
        qrels_columns=None, run_columns=None, qrels_format=None, run_format=None,
    )
    bucket = F.pmod(F.xxhash64("query_id"), F.lit(n)).alias("_bucket")
    r = run.select(bucket, "*", F.monotonically_increasing_id().alias("_row"))
    q = qrels.select(bucket, "*")
    schema = "kind int, query_id string, measure int, value double"
    # the top of the grade scale is taken over the whole qrels (RankedLists.max_label), not one bucket's
    top = qrels.agg(F.max(F.col("relevance").cast("double"))).collect()[0][0]
    fn = _bucket_function(names, bucket_policy, policy.labels or "int", top)
    with warnings.catch_warnings():  # pyspark 3.5 checks the pandas version with distutils' LooseVersion
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        out = r.groupBy("_bucket").cogroup(q.groupBy("_bucket")).applyInPandas(fn, schema).persist()
    rows = out.collect()
    errors = [row for row in rows if row["kind"] == 2]
    if errors:
        raise _rebuild_error(errors[0]["query_id"])
    per_order: dict[int, dict[str, int]] = {}
    index: dict[str, int] = {}
    cells: list[tuple[int, int, float]] = []
    for row in rows:
        if row["kind"] == 1:
            o, i = divmod(row["measure"], len(STATS))
            counts = per_order.setdefault(o, dict.fromkeys(STATS, 0))
            counts[STATS[i]] += int(row["value"])
        elif row["kind"] == 0:
            i = index.setdefault(row["query_id"], len(index))
            cells.append((i, row["measure"], row["value"]))
    values = np.full((len(index), len(names)), np.nan)
    for i, j, v in cells:
        values[i, j] = np.nan if v is None else v
    label = F.element_at(F.array(*[F.lit(s) for s in names]), F.col("measure") + 1)
    per_query = out.filter(F.col("kind") == 0).select("query_id", label.alias("measure"), "value")
    stats = [per_order[o] for o in sorted(per_order)] or [dict.fromkeys(STATS, 0)]
    return per_query, list(index), values, stats, out


def _bucket_function(measures: list[str], policy: EvalPolicy, label_kind: str, top: float | None) -> Any:
    """The function applied to every co-grouped bucket (pickled to the Python workers with its closure)."""

    def evaluate_group(key: Any, run_pdf: Any, qrels_pdf: Any) -> Any:
        import pandas as pd

        from ranklens.errors import FormatError, RanklensError

        columns = ["kind", "query_id", "measure", "value"]
        try:
            return pd.DataFrame(evaluate_bucket(run_pdf, qrels_pdf, measures, policy, label_kind, top), columns=columns)
        except RanklensError as e:
            detail = (type(e).__name__, e.source, e.detail) if isinstance(e, FormatError) else (type(e).__name__, "", str(e))
            return pd.DataFrame([(2, "\x1f".join(detail), 0, 0.0)], columns=columns)

    return evaluate_group


class _GlobalTopEvaluator(Evaluator):
    """The engine's Evaluator, with the top label of the whole qrels instead of the bucket's."""

    top_label: float | None = None

    def _align(self, run: Any, order: str) -> Any:
        lists, report = super()._align(run, order)
        self.reports.append(report)  # one per ranking order (score, input), in the Evaluator's order
        if self.top_label is not None:
            top = float(self.top_label) if lists.ideal_labels.dtype.kind == "f" else int(self.top_label)
            lists = dataclasses.replace(lists, top_label=top, _cache={})
        return lists, report


def evaluate_bucket(
    run_pdf: Any, qrels_pdf: Any, measures: list[str], policy: EvalPolicy, label_kind: str, top: float | None = None
) -> list[tuple]:
    """Evaluate one bucket with the engine's Evaluator; rows ``(kind, query_id, measure, value)``:
    kind 0 = a value, kind 1 = a count of :data:`STATS` (``measure`` indexes it). ``top``: the largest
    label of the whole qrels."""
    import pyarrow as pa

    from ranklens.data.run import Run

    if len(run_pdf):
        run_pdf = run_pdf.sort_values("_row", kind="stable")  # input order, for ties=input
    rt = pa.Table.from_pandas(run_pdf[["query_id", "doc_id", "score"]], preserve_index=False)
    qt = pa.Table.from_pandas(qrels_pdf[["query_id", "doc_id", "relevance"]], preserve_index=False)
    labels = qt.column("relevance")
    if label_kind == "int" and len(labels) and pa.types.is_floating(labels.type):
        labels = labels.to_numpy()
    qrels = Qrels.from_arrays(
        qt.column("query_id").cast(pa.string()), qt.column("doc_id").cast(pa.string()), labels,
        source="<qrels DataFrame>", label_kind=label_kind,
    )
    run = Run.from_arrays(
        rt.column("query_id").cast(pa.string()), rt.column("doc_id").cast(pa.string()),
        rt.column("score").cast(pa.float64()), source="<run DataFrame>",
    )
    ev = _GlobalTopEvaluator(measures, qrels, policy=policy)
    ev.top_label, ev.reports = top, []
    res = ev.results(run, allow_empty=True)
    out: list[tuple] = []
    for qi, row in zip(res.query_ids, res.values.tolist()):
        out.extend((0, qi, j, v) for j, v in enumerate(row))
    for o, rep in enumerate(ev.reports):
        counts = (
            rep.run_only_queries, rep.run_only_rows, rep.qrels_only_queries, rep.truncated_rows,
            rep.removed_unjudged_rows, qrels.num_queries, run.num_queries,
        )
        out.extend((1, None, o * len(STATS) + i, float(c)) for i, c in enumerate(counts))
    return out


def _rebuild_error(text: str) -> Exception:
    """The engine's error raised in a worker, as the same exception class on the driver."""
    from ranklens import errors

    cls_name, source, detail = text.split("\x1f", 2)
    cls = getattr(errors, cls_name, errors.InputError)
    if isinstance(cls, type) and issubclass(cls, errors.FormatError):
        return cls(source, detail)
    try:
        return cls(detail)
    except TypeError:
        return errors.InputError(detail)
