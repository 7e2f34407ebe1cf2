"""``ranklens.spark.evaluate``: inputs, checks and the driver-side Results shared by both paths; the Arrow path."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.engine.alignment import AlignReport
from ranklens.engine.evaluator import Evaluator, nothing_evaluated
from ranklens.engine.policy import EvalPolicy
from ranklens.engine.pool import SelfPool, self_pool_note
from ranklens.errors import (
    DuplicateError,
    FormatError,
    InputError,
    Note,
    QuerySetError,
    warn_notes,
)
from ranklens.measures.base import Measure
from ranklens.measures.language import MeasuresArg
from ranklens.results.core import Results, assemble
from ranklens.spark.rows import STATS, collect_arrow
from ranklens.spark.rows import rows_out as _rows_out
from ranklens.spark.runtime import pandas_checks_quiet, require_pyspark

__all__ = ["SparkEvaluation", "evaluate"]

PATHS = ("arrow", "sql")
RUN_ROLES = ("query_id", "doc_id", "score")
QRELS_ROLES = ("query_id", "doc_id", "relevance")


@dataclasses.dataclass(frozen=True, eq=False)
class SparkEvaluation:
    """What :func:`evaluate` returns.

    Attributes:
        per_query: a Spark DataFrame ``query_id, measure, value`` (one row per evaluated query and measure;
            ``measure`` is the canonical name); persisted: :meth:`unpersist` frees it (the scan plan's is made
            from the driver's values when first used).
        results: the driver-side :class:`~ranklens.results.core.Results` (aggregates, notes, options),
            identical to the in-memory engine's.
        path: ``"arrow"`` or ``"sql"``.
        segment_of: the query → segment map given as ``segments`` (or None).
        plan: the Arrow path's plan that ran: ``"scan"`` or ``"shuffle"`` (``"sql"`` for the SQL path).
        plan_note: why the shuffle plan ran for paths (the scan did not apply), else "".
        scan_counts: the scan plan's ``tasks``, ``deferred_queries`` (evaluated on the driver) and ``scans``
            (2: the run was not grouped by query), else None.
    """

    per_query: Any
    results: Results
    path: str
    segment_of: Mapping[str, str] | None = None
    _persisted: Any = dataclasses.field(default=None, repr=False)
    plan: str = "shuffle"
    plan_note: str = ""
    scan_counts: Mapping[str, int] | None = None

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


def evaluate(
    run_df: Any,
    qrels_df: Any,
    measures: MeasuresArg,
    *,
    policy: EvalPolicy | None = None,
    segments: Any = None,
    path: str = "arrow",
    name: str = "run",
    buckets: int | None = None,
    check_duplicates: bool = True,
    warn: bool = True,
    sources: tuple[str, str] | None = None,
    plan: str = "auto",
    spark: Any = None,
    fallback: bool = True,
) -> SparkEvaluation:
    """Evaluate a run DataFrame against a qrels DataFrame on Spark, with the in-memory engine's numbers.

    Args:
        run_df: columns ``query_id, doc_id, score`` (other names through ``policy.run_columns``).
        qrels_df: columns ``query_id, doc_id, relevance`` (``policy.qrels_columns``).
        measures: measure names or values, as for :class:`~ranklens.engine.evaluator.Evaluator`.
        policy: the :class:`EvalPolicy` (missing queries, negative labels, ``-J``, ``-M``, labels, column maps;
            the recommender side: ``train``, ``items``, ``exclude_seen``, ``empty``, ``aggregate``, read once on
            the driver and broadcast with the statistics derived from them; system-level measures are computed
            on the driver over every user's top-k list — the Arrow path only).
        segments: a ``{query: segment}`` mapping or a Spark DataFrame ``query_id, segment``
            (:meth:`SparkEvaluation.by_segment`).
        path: ``"arrow"`` (the engine per hash bucket: every measure) or ``"sql"`` (pure Spark SQL: nDCG,
            DCG, P, R, AP, RR, Success; no Python workers).
        name: the run's name in the Results.
        buckets: hash partitions of the query id for the Arrow path (default: ``spark.sql.shuffle.partitions``,
            at most twice the session's cores: :func:`default_buckets`); one bucket's rows are evaluated in one
            Python worker's memory.
        check_duplicates: reject a (query, document) pair listed twice in the run or the qrels (the SQL
            path: a ``groupBy`` count, one shuffle each; the Arrow path: in its buckets, no job of its own).
        warn: warn once per note (as the Evaluator does); the notes are in ``results.notes`` either way.
        sources: the names of the run and the qrels in messages (the files they were read from); by default
            ``<run DataFrame>`` and ``<qrels DataFrame>`` (the paths, for paths).
        plan: how the Arrow path reads its inputs. ``"scan"``: run and qrels are Parquet paths (a file, a
            directory of parts, a glob, a URI pyarrow opens) read by the Python workers themselves, row groups
            split into tasks, no row through the JVM (:mod:`ranklens.spark.scan`; where it does not apply —
            side tables, system-level measures, a refusal to word, a run not grouped by query beyond
            :data:`~ranklens.spark.scan.REPAIR_LIMIT` queries — the shuffle plan runs and
            :attr:`SparkEvaluation.plan_note` says why); ``"shuffle"``: both inputs hash-partitioned by query
            in one Spark shuffle (DataFrames, or paths read by Spark); ``"auto"`` (default): the scan for
            paths, the shuffle for DataFrames.
        spark: the SparkSession for paths (default: the active one, else :func:`ranklens.spark.session`).
        fallback: False: where the scan plan does not apply to paths, raise
            :class:`~ranklens.spark.scan.Fallback` (saying why) instead of running the shuffle plan.

    Raises:
        DuplicateError: a duplicated pair (the message names it).
        InputError: no query is evaluated (empty inputs included): an error, never NaN.
        MeasureError: ``path="sql"`` and a measure the SQL path does not compute, or the recommender side
            tables and policies (use ``path="arrow"``).
    """
    require_pyspark()
    if path not in PATHS:
        raise InputError(f"path must be 'arrow' or 'sql'; got {path!r}")
    if plan not in PLANS:
        raise InputError(f"plan must be 'auto', 'scan' or 'shuffle'; got {plan!r}")
    from ranklens.spark.scan import is_parquet_path

    paths = is_parquet_path(run_df) and is_parquet_path(qrels_df)
    if plan == "scan" and not paths:
        raise InputError("plan='scan' reads Parquet paths (the run and the qrels as paths, not DataFrames)")
    if plan == "scan" and path == "sql":
        raise InputError("plan='scan' is a plan of the Arrow path: use path='arrow'")
    if is_parquet_path(run_df) != is_parquet_path(qrels_df):
        raise InputError("give the run and the qrels both as paths or both as DataFrames")
    policy = policy if policy is not None else EvalPolicy()
    label_kind = policy.labels or "int"
    # the measures and the policy are checked on the driver, before any job, exactly as the engine checks them
    probe = Evaluator(
        measures, Qrels.from_arrays([], [], [], label_kind=label_kind),
        policy=policy.replace(qrels_columns=None, run_columns=None, qrels_format=None, run_format=None),
    )
    if policy.intents is not None:  # (the intent qrels would be re-read by every bucket's evaluator)
        raise InputError(
            "the intent-aware measures (--intents) are computed in memory: drop --engine spark (ranklens.evaluate)"
        )
    own = [str(m) for m in probe.measures if m.get("judged_only")]
    if own:  # (one ranking per tie order on Spark; a measure's own judged_only would need another)
        raise InputError(
            f"{', '.join(own)}: a measure's own judged_only is computed in memory (ranklens.evaluate); on Spark "
            "pass judged_only=True for every measure (trec_eval -J)"
        )
    if path == "sql":
        from ranklens.spark.sql import check_sql_side

        check_sql_side(probe, policy)
    if paths and sources is None:
        sources = (str(run_df), str(qrels_df))
    run_source, qrels_source = sources or DATAFRAMES
    used, plan_note, scanned = "shuffle", "", None
    if paths:
        spark = spark if spark is not None else active_session()
        if path == "arrow" and plan != "shuffle":
            scanned, plan_note = try_scan(spark, str(run_df), str(qrels_df), probe, policy, check_duplicates, (run_source, qrels_source))
            used = "scan" if scanned is not None else "shuffle"
            if scanned is None and not fallback:
                from ranklens.spark.scan import Fallback

                raise Fallback(plan_note)
        else:
            plan_note = "the shuffle plan was asked for" if plan == "shuffle" else "the SQL path reads through Spark"
        run_df, qrels_df = read_parquet_paths(spark, str(run_df), str(qrels_df))

    def roles() -> tuple[Any, Any]:
        return (select_roles(run_df, policy.run_columns, RUN_ROLES, "run", run_source),
                select_roles(qrels_df, policy.qrels_columns, QRELS_ROLES, "qrels", qrels_source))

    run, qrels = roles() if scanned is None else (None, None)
    if paths and scanned is None:  # (the checks of the files Spark reads, as for the command line's)
        from ranklens.spark.sql import validate_frames

        validate_frames(run, qrels, policy, (run_source, qrels_source))
    if check_duplicates and path == "sql":  # (the Arrow path checks in its buckets: no job of its own)
        reject_duplicates(run, "run", *DUPLICATE_WORDS["run"], run_source)
        reject_duplicates(qrels, "qrels", *DUPLICATE_WORDS["qrels"], qrels_source)
    scan_counts = None
    if scanned is not None:
        per_query, qids, values, stats, persisted, *side, scan_counts = scanned
    elif path == "sql":
        from ranklens.spark.sql import evaluate_sql

        per_query, qids, values, stats, persisted = evaluate_sql(run, qrels, probe, policy, (run_source, qrels_source))
        side = []
    else:  # (and the bucket notes merged, the system-level values computed on the driver)
        per_query, qids, values, stats, persisted, *side = evaluate_arrow(
            run, qrels, probe, policy, buckets, check_duplicates, (run_source, qrels_source)
        )
    stats = stats if isinstance(stats, list) else [stats]  # one per ranking order (the Arrow path)
    if policy.missing == "error" and stats[0]["qrels_only_queries"]:
        if run is None:
            run, qrels = roles()
        raise_missing(run, qrels, stats[0]["qrels_only_queries"], run_source if sources else f"<{name} DataFrame>")
    res = finish(name, probe, policy, qids, values, stats, *side, run_source=run_source if sources else None)
    if warn:
        warn_notes(res.notes, f"{res.run}: ")
    segment_of = None
    if segments is not None:
        from ranklens.data.segments import read_segments

        if hasattr(segments, "toPandas"):
            segments = {str(r[0]): str(r[1]) for r in segments.select(segments.columns[:2]).collect()}
        segment_of = read_segments(segments)
    return SparkEvaluation(
        per_query, res, path, segment_of, persisted, plan=used if path == "arrow" else "sql", plan_note=plan_note,
        scan_counts=scan_counts,
    )


def read_parquet_paths(spark: Any, run_path: str, qrels_path: str) -> tuple[Any, Any]:
    """Spark's DataFrames of two Parquet paths (read when first used: the scan plan never reads them), its
    failures one line each."""
    return (_Later(lambda: _read_parquet(spark, run_path)), _Later(lambda: _read_parquet(spark, qrels_path)))


def _read_parquet(spark: Any, path: str) -> Any:
    from ranklens.spark.runtime import spark_errors

    with spark_errors(path, spark):
        return spark.read.parquet(path)


class _Later:
    """A DataFrame made when first used."""

    def __init__(self, make: Any) -> None:
        self._make, self._df = make, None

    def __getattr__(self, name: str) -> Any:
        if self.__dict__.get("_df") is None:
            self.__dict__["_df"] = self._make()
        return getattr(self.__dict__["_df"], name)


#: the plans of the Arrow path
PLANS = ("auto", "scan", "shuffle")


def active_session() -> Any:
    """The active SparkSession, else a new one (:func:`ranklens.spark.session`)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from ranklens.spark.runtime import session

    return session()


def try_scan(
    spark: Any, run_path: str, qrels_path: str, probe: Evaluator, policy: EvalPolicy, check_duplicates: bool,
    sources: tuple[str, str], run_columns: Mapping[str, str] | None = None, qrels_columns: Mapping[str, str] | None = None,
) -> tuple[tuple[Any, ...] | None, str]:
    """The scan plan's rows (:func:`evaluate_scan`) and "", or None and why it did not apply."""
    from ranklens.spark.scan import Fallback, plan_input

    labels = policy.labels or "int"
    try:
        run = plan_input(run_path, run_columns if run_columns is not None else policy.run_columns, RUN_ROLES, labels)  # type: ignore[arg-type]
        qrels = plan_input(qrels_path, qrels_columns if qrels_columns is not None else policy.qrels_columns, QRELS_ROLES, labels)  # type: ignore[arg-type]
        return evaluate_scan(spark, run, qrels, probe, policy, check_duplicates, sources), ""
    except Fallback as e:
        if os.environ.get("RANKLENS_DEBUG", "") not in ("", "0"):
            sys.stderr.write(f"ranklens: debug: spark: the shuffle plan, not the scan: {e}\n")
        return None, str(e)


#: the names of a run and a qrels DataFrame in messages
DATAFRAMES = ("<run DataFrame>", "<qrels DataFrame>")


def select_roles(
    df: Any, columns: Mapping[str, str] | None, roles: tuple[str, ...], what: str, source: str | None = None
) -> Any:
    """``df`` with exactly the columns ``roles`` (renamed by ``{column: role}``); ids as strings. ``source``:
    the file it was read from (named in the message), else "the {what} DataFrame"."""
    from pyspark.sql import functions as F

    by_role = {role: col for col, role in (columns or {}).items()}
    cols = []
    for role in roles:
        col = by_role.get(role, role)
        if col not in df.columns:
            if source is not None and source not in DATAFRAMES:
                raise FormatError(
                    source, f"expected a column '{col}' for {role}, got columns {', '.join(df.columns)} "
                    f"(map columns with --{what}-columns)"
                )
            raise InputError(
                f"{what} DataFrame has no column '{col}' for {role} (columns: {', '.join(df.columns)}); "
                f"map columns with EvalPolicy({what}_columns={{name: role}})"
            )
        c = F.col(f"`{col}`")
        cols.append((c.cast("string") if role in ("query_id", "doc_id") else c.cast("double") if role == "score" else c).alias(role))
    return df.select(*cols)


#: how a duplicated pair of the run and of the qrels is worded (the verb, the advice)
DUPLICATE_WORDS = {
    "run": ("appears twice for query", "A ranking lists each document once"),
    "qrels": ("is judged twice for query", "Remove the duplicates"),
}


def reject_duplicates(df: Any, what: str, verb: str, advice: str, source: str | None = None) -> None:
    """A (query, document) pair counted more than once: :class:`DuplicateError` naming it (the SQL path's
    check, one aggregate per input; the Arrow path counts in its buckets: :func:`duplicate_error`)."""
    from pyspark.sql import functions as F

    dups = df.groupBy("query_id", "doc_id").count().filter(F.col("count") > 1)
    row = dups.agg(
        F.sum(F.col("count") - 1).alias("extra"), F.min(F.struct("query_id", "doc_id")).alias("first")
    ).collect()[0]
    if row["extra"]:
        raise duplicate_error(what, row["first"]["query_id"], row["first"]["doc_id"], int(row["extra"]), source)


def duplicate_error(what: str, q: Any, d: Any, extra: int, source: str | None = None) -> DuplicateError:
    """The :class:`DuplicateError` of ``extra`` duplicates in the ``what`` input, the first being (q, d).

    >>> str(duplicate_error("run", "q1", "d3", 2))
    "<run DataFrame>: document 'd3' appears twice for query 'q1'; 2 duplicate row(s) in all. A ranking lists each document once"
    """
    verb, advice = DUPLICATE_WORDS[what]
    kind = "row(s)" if what == "run" else "pair(s)"
    return DuplicateError(source or f"<{what} DataFrame>", f"document '{d}' {verb} '{q}'; {extra} duplicate {kind} in all. {advice}")


def raise_missing(run: Any, qrels: Any, count: int, source: str) -> None:
    """The engine's QuerySetError for ``missing="error"``, with up to three of the missing queries."""
    q = qrels.select("query_id").distinct()
    missing = sorted(r[0] for r in q.join(run.select("query_id").distinct(), "query_id", "left_anti").limit(3).collect())
    raise QuerySetError(
        f"{count} qrels quer{'y' if count == 1 else 'ies'} not in the run {source} "
        f"(e.g. {missing[:3]}); use query set 'intersect' or 'qrels'"
    )


def finish(
    name: str, probe: Evaluator, policy: EvalPolicy, qids: list[str], values: np.ndarray,
    stats: list[Mapping[str, int]], side_notes: Mapping[str, list[str]] | None = None,
    system: Mapping[int, float] | None = None, *, run_source: str | None = None,
) -> Results:
    """The driver-side Results: queries in bytewise order, the notes in the Evaluator's order (the side
    tables' and exclude-seen's, then per ranking order its AlignReport's, merged as the Evaluator merges them,
    and the recommender notes; the empty-user note last), the system-level values, the one ``assemble``.
    ``side_notes``: the merged bucket notes by phase (``"pre"``, ``"recsys:<order>"``, ``"empty"``); ``run_source``:
    the run's file (named when nothing is evaluated), else ``<name DataFrame>``."""
    if not qids:
        first = stats[0]
        where = run_source or f"<{name} DataFrame>"
        raise InputError(nothing_evaluated(where, int(first["qrels_queries"]), int(first["run_queries"])))
    order = sorted(range(len(qids)), key=lambda i: qids[i].encode("utf-8"))
    phases = side_notes or {}
    notes: list[str] = []

    def add(msgs: Iterable[str]) -> None:
        notes.extend(m for m in msgs if m not in notes)

    if probe._side.active:
        add(probe._side.notes)
    add(phases.get("pre", ()))
    for o, counts in enumerate(stats):
        report = AlignReport(
            run_only_queries=int(counts["run_only_queries"]),
            run_only_rows=int(counts["run_only_rows"]),
            qrels_only_queries=int(counts["qrels_only_queries"]),
            qrels_only_scored_zero=policy.missing == "zero",
            truncated_rows=int(counts["truncated_rows"]),
            removed_unjudged_rows=int(counts["removed_unjudged_rows"]),
        )
        add(report.messages())
        add(phases.get(f"recsys:{o}", ()))
    add(phases.get("pool", ()))
    add(phases.get("empty", ()))
    return assemble(name, probe.measures, [qids[i] for i in order], values[order], notes, probe.options(), system)


# ── the Arrow path ──────────────────────────────────────────────────────────────────────────────────────


def evaluate_arrow(
    run: Any, qrels: Any, probe: Evaluator, policy: EvalPolicy, buckets: int | None, check_duplicates: bool = True,
    sources: tuple[str, str] = ("<run DataFrame>", "<qrels DataFrame>"),
) -> tuple[Any, ...]:
    """The Arrow path: both inputs in one shuffle, hash-partitioned by the query id into ``buckets``
    partitions (:func:`default_buckets`), each partition evaluated in a Python worker from its Arrow batches
    (``mapInArrow``; the compiled pass when the dispatcher chose it, else or where it declines the reference
    engine), the duplicate check folded into the buckets (:mod:`ranklens.spark.worker`); the rows collected
    as Arrow."""
    from pyspark.sql import functions as F

    spark = run.sparkSession
    n = int(buckets or default_buckets(spark))
    names = [str(m) for m in probe.measures]
    bucket_policy, shared, plan, specs = bucket_setup(spark, probe, policy)
    # one DataFrame of both inputs (a flag tells the qrels rows), hash-partitioned by the query id into n
    # partitions: a partition holds whole queries of both sides and is a bucket; the Python worker reads it
    # as Arrow batches (mapInArrow: no sort of the rows by a group key, no pandas; pyspark 3.5 and 4, Connect).
    # The input row number (ties=input) is only kept for the reference engine's buckets.
    rel_type = qrels.schema["relevance"].dataType
    row_col = [] if specs is not None else [F.monotonically_increasing_id().alias("_row")]
    r = run.select(
        "query_id", "doc_id", "score", F.lit(None).cast(rel_type).alias("relevance"), F.lit(False).alias("_qrels"),
        *row_col,
    )
    no_row = [] if specs is not None else [F.lit(None).cast("long").alias("_row")]
    q = qrels.select(
        "query_id", "doc_id", F.lit(None).cast("double").alias("score"), "relevance", F.lit(True).alias("_qrels"),
        *no_row,
    )
    schema = "kind int, query_id string, measure int, value double, doc_id string, label double"
    # the top of the grade scale is taken over the whole qrels (RankedLists.max_label), not one bucket's (the
    # compiled pass's measures do not read it: no job for it then)
    top = None if specs is not None else qrels.agg(F.max(F.col("relevance").cast("double"))).collect()[0][0]
    fn = _bucket_function(names, bucket_policy, policy.labels or "int", top, shared, plan, specs, check_duplicates)
    parts = r.unionByName(q).repartition(n, "query_id")
    with pandas_checks_quiet():
        out = parts.mapInArrow(_partition_function(fn), schema).persist()
        table = collect_arrow(out)
    if shared is not None:
        shared.unpersist()
    qids, values, stats, merged, system = gather_rows(table, probe, plan, specs, sources)
    label = F.element_at(F.array(*[F.lit(s) for s in names]), F.col("measure") + 1)
    per_query = out.filter(F.col("kind") == 0).select("query_id", label.alias("measure"), "value")
    return per_query, qids, values, stats, out, merged, system


def evaluate_scan(
    spark: Any, run: Any, qrels: Any, probe: Evaluator, policy: EvalPolicy, check_duplicates: bool = True,
    sources: tuple[str, str] = ("<run DataFrame>", "<qrels DataFrame>"),
) -> tuple[Any, ...]:
    """The scan plan (:mod:`ranklens.spark.scan`): ``run`` and ``qrels`` are :class:`~ranklens.spark.scan.ScanInput`;
    the Python workers read their row groups and evaluate them with the buckets' function; the same rows as
    :func:`evaluate_arrow`'s, gathered by :func:`gather_rows`. :class:`~ranklens.spark.scan.Fallback` when the
    plan does not apply (the caller runs the shuffle plan)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from ranklens.spark import scan

    if probe._side.train is not None or probe._side.catalog is not None or system_plan(probe.measures):
        raise scan.Fallback("side tables or system-level measures: the shuffle plan")
    names = [str(m) for m in probe.measures]
    bucket_policy, _, plan, specs = bucket_setup(spark, probe, policy)
    top = None if specs is not None else scan.top_label(qrels)
    fn = _bucket_function(names, bucket_policy, policy.labels or "int", top, None, plan, specs, check_duplicates)
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # (a Connect session has no SparkContext here)
        cores = int(spark.conf.get("spark.sql.shuffle.partitions"))
    got = scan.scan_evaluate(spark, run, qrels, fn, policy, policy.labels or "int", cores)
    table = got.table if got.repaired is None else pa.concat_tables([got.table, got.repaired])
    qids, values, stats, merged, system = gather_rows(table, probe, plan, specs, sources)
    if os.environ.get("RANKLENS_DEBUG", "") not in ("", "0"):
        sys.stderr.write(
            f"ranklens: debug: spark scan plan: {got.tasks} tasks, {got.deferred_queries} deferred queries evaluated "
            f"on the driver{', a second scan (the run is not grouped by query)' if got.second_scan else ''}\n"
        )
    # the per-query DataFrame, made from the driver's values when first used (the tasks' rows are not kept
    # in Spark: they came back once, as Arrow)
    kinds = table.column("kind").to_numpy(zero_copy_only=False)
    long = table.filter(pa.array(kinds == 0)).select(["query_id", "measure", "value"])
    label = F.element_at(F.array(*[F.lit(s) for s in names]), F.col("measure") + 1)

    def frame() -> Any:
        from ranklens.spark.runtime import arrow_frame

        return arrow_frame(spark, long).select("query_id", label.alias("measure"), "value")

    per_query = _Later(frame)
    counts = {"tasks": got.tasks, "deferred_queries": got.deferred_queries, "scans": 2 if got.second_scan else 1}
    return per_query, qids, values, stats, None, merged, system, counts


def bucket_setup(spark: Any, probe: Evaluator, policy: EvalPolicy) -> tuple[EvalPolicy, Any, dict[int, Any], Any]:
    """What every bucket (or scan task) is given: the policy a bucket applies, the broadcast side tables (or
    None), the system-level plan and the compiled pass's specs (None: the reference engine in the buckets)."""
    from ranklens.backends import choose_backend

    # missing="error" is decided on the driver over all buckets (a bucket sees only its own queries); the side
    # tables, read once on the driver by the probe, reach the buckets as one broadcast (not the policy's paths)
    bucket_policy = policy.replace(
        missing="skip" if policy.missing == "error" else policy.missing,
        qrels_columns=None, run_columns=None, qrels_format=None, run_format=None,
        train=None, items=None, train_columns=None, items_columns=None, exclude_seen=False,
    )
    side = probe._side
    shared = None
    if side.train is not None or side.catalog is not None:
        if type(spark).__module__.startswith("pyspark.sql.connect"):
            raise InputError(
                "the side tables (train=, items=) are broadcast from the driver's SparkContext, which a Spark "
                "Connect session does not have; evaluate them with a classic master (local[*], yarn, spark://…)"
            )
        stats_once = train_statistics(probe)
        shared = spark.sparkContext.broadcast((side.train, side.catalog, side.exclude_seen, stats_once))
    plan = system_plan(probe.measures)
    # the compiled pass in the workers when the one dispatcher takes these measures and this policy for Arrow
    # columns (a bucket it declines goes to the reference engine)
    specs = None
    if shared is None and not plan:
        choice = choose_backend(probe.measures, bucket_policy, None, [], inputs="columns")
        if choice.name == "compiled":
            from ranklens.backends import debug_note
            from ranklens.express import express_specs

            specs = express_specs(probe.measures)
            debug_note(choice)
    return bucket_policy, shared, plan, specs


def gather_rows(
    table: Any, probe: Evaluator, plan: Mapping[int, Any], specs: Any, sources: tuple[str, str],
) -> tuple[list[str], np.ndarray, list[dict[str, int]], dict[str, list[str]], dict[int, float]]:
    """The buckets' rows (one Arrow table, :data:`ROW_COLUMNS`) as the driver's values, counts, notes and
    system-level values; a duplicate or an engine error found in a bucket raised (duplicates first, as a check
    of their own was)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [str(m) for m in probe.measures]
    kinds = table.column("kind").to_numpy(zero_copy_only=False)
    values_t = table.filter(pa.array(kinds == 0))
    rows = table.filter(pa.array((kinds != 0) & (kinds < 9))).to_pylist()  # (counts, notes, errors: few; the
    # list rows of the system-level measures; kinds 9 and above are the scan plan's own)
    from ranklens.spark.worker import DUPLICATE

    for k, what in enumerate(("run", "qrels")):  # (before any other refusal, as a check of its own was)
        dups = [row for row in rows if row["kind"] == DUPLICATE and row["measure"] == k]
        if dups:
            first = min(dups, key=lambda row: _pair_key(row["query_id"], row["doc_id"]))
            extra = sum(int(row["value"]) for row in dups)
            raise duplicate_error(what, first["query_id"], first["doc_id"], extra, sources[k])
    errors = [row for row in rows if row["kind"] == 2]
    if errors:
        raise _rebuild_error(errors[0]["query_id"])
    by_backend = [row["query_id"] for row in rows if row["kind"] == BACKEND_ROW]
    if specs is not None and os.environ.get("RANKLENS_DEBUG", "") not in ("", "0"):
        sys.stderr.write(
            f"ranklens: debug: spark buckets: the compiled pass evaluated {by_backend.count('compiled')} of "
            f"{len(by_backend)} (the reference engine the others)\n"
        )
    per_order: dict[int, dict[str, int]] = {}
    listed: list[Any] = []
    notes: dict[str, dict[str, list[Any]]] = {}
    pooled: tuple[list[int], list[int]] = ([], [])
    for row in rows:
        kind = row["kind"]
        if kind == 1:
            o, i = divmod(row["measure"], len(STATS))
            counts = per_order.setdefault(o, dict.fromkeys(STATS, 0))
            counts[STATS[i]] += int(row["value"])
        elif kind in (3, 4):
            listed.append(row)
        elif kind == 6:  # the queries judged on the run's own top d (engine/pool.py): their number, each depth
            pooled[0 if row["measure"] == 0 else 1].append(int(row["value"]))
        elif kind == 5:
            entry = notes.setdefault(row["query_id"], {}).setdefault(row["doc_id"], [row["measure"], 0, 0, row["value"] is None])
            entry[0] = min(entry[0], row["measure"])
            if not entry[3]:
                entry[1] += int(row["value"])
                entry[2] += int(row["label"])
    qcol = values_t.column("query_id")
    qids = pc.unique(qcol)  # (in order of appearance, as the rows came)
    at = pc.index_in(qcol, value_set=qids).to_numpy(zero_copy_only=False)
    values = np.full((len(qids), len(names)), np.nan)
    values[at, values_t.column("measure").to_numpy(zero_copy_only=False)] = (
        values_t.column("value").to_numpy(zero_copy_only=False)  # (a null value: NaN)
    )
    stats = [per_order[o] for o in sorted(per_order)] or [dict.fromkeys(STATS, 0)]
    system = system_values(probe, plan, listed, run_name="run") if plan else {}
    merged = merge_notes(notes)
    pool_note = self_pool_note(probe.measures, SelfPool(sum(pooled[0]), tuple(sorted(pooled[1]))))
    if pool_note is not None:
        merged["pool"] = [pool_note]
    return qids.to_pylist(), values, stats, merged, system


def default_buckets(spark: Any) -> int:
    """The Arrow path's buckets when none is given: ``spark.sql.shuffle.partitions``, at most twice the
    session's cores (``defaultParallelism``; a Connect session: the setting alone). Spark's default of 200
    partitions on local[2] would start 200 Python tasks of a few rows each; two buckets a core keep both cores
    busy while the last bucket runs, and a bucket's rows are one worker's memory."""
    n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # (a Connect session has no SparkContext here)
        return n
    return max(1, min(n, 2 * cores))


# ── system-level measures: the bucket's top-k rows (and judged rows for the pooled AUC), the kernels on the driver


def measure_orders(measures: tuple[Measure, ...]) -> list[list[int]]:
    """The measure indices of every ranking order, in the Evaluator's order (``score`` / ``input`` ties)."""
    from ranklens.engine.evaluator import _ties

    by_order: dict[str, list[int]] = {}
    for j, m in enumerate(measures):
        by_order.setdefault("input" if _ties(m) == "input" else "score", []).append(j)
    return list(by_order.values())


def system_plan(measures: tuple[Measure, ...]) -> dict[int, tuple[list[int], int | None, bool, bool]]:
    """``{order: (system measures, rows kept per list (None: all), any top-k measure, a pooled AUC)}``: what a
    bucket sends the driver of every ranking order that has a system-level measure."""
    plan = {}
    for o, idx in enumerate(measure_orders(measures)):
        sys_idx = [j for j in idx if measures[j].family.is_system(measures[j])]
        if not sys_idx:
            continue
        pooled = any(measures[j].name == "AUC" for j in sys_idx)
        listed = [measures[j].cutoff for j in sys_idx if measures[j].name != "AUC"]
        depth = None if any(c is None for c in listed) else max((int(c) for c in listed if c is not None), default=0)
        plan[o] = (sys_idx, depth, bool(listed), pooled)
    return plan


def bucket_lists_rows(lists: Any, o: int, depth: int | None, top_k: bool, pooled: bool) -> list[tuple]:
    """Rows ``(3, query, position, score, doc, label)`` of the top ``depth`` of every list (and, for the pooled
    AUC, its judged rows below), in rank order; ``(4, query, order, label)`` for every judged label."""
    import pyarrow as pa

    keep = np.zeros(lists.labels.shape[0], dtype=bool)
    if top_k:
        keep |= np.ones(keep.shape, dtype=bool) if depth is None else lists.rank0 < depth
    if pooled:
        keep |= lists.labels >= 0
    rows = np.flatnonzero(keep)
    qi = lists.row_query[rows]
    # position within the kept rows of its query (kept rows stay in rank order)
    first = np.searchsorted(qi, qi, side="left")
    pos = np.arange(rows.size) - first
    qids = lists.query_ids.take(pa.array(qi)).to_pylist()
    docs = lists.doc_ids.take(pa.array(lists.docs[rows])).to_pylist()
    out: list[tuple] = list(zip(
        [3] * rows.size, qids, (pos * 64 + o).tolist(), lists.scores[rows].tolist(), docs,
        lists.labels[rows].astype(np.float64).tolist(),
    ))
    if pooled:
        iq = lists.query_ids.take(pa.array(lists.ideal_query)).to_pylist()
        out.extend((4, q, o, float(v), None, None) for q, v in zip(iq, lists.ideal_labels.tolist()))
    return out


def system_values(probe: Evaluator, plan: Mapping[int, Any], rows: list[Any], run_name: str) -> dict[int, float]:
    """The system-level values, by the engine's kernels on the ranked lists the buckets sent (every user's)."""
    import pyarrow as pa

    from ranklens.engine.kernels import SIDE_KERNELS, kernel_for
    from ranklens.engine.ranked import RankedLists

    dtype = np.float64 if probe.labels == "float" else np.int32
    out: dict[int, float] = {}
    for o, (sys_idx, _depth, _top, _pooled) in plan.items():
        listed = [(r["query_id"], r["measure"] // 64, r["value"], r["doc_id"], r["label"])
                  for r in rows if r["kind"] == 3 and r["measure"] % 64 == o]
        ideal = [(r["query_id"], r["value"]) for r in rows if r["kind"] == 4 and r["measure"] == o]
        qids = sorted({x[0] for x in listed} | {x[0] for x in ideal}, key=lambda q: q.encode("utf-8"))
        at = {q: i for i, q in enumerate(qids)}
        listed.sort(key=lambda x: (at[x[0]], x[1]))
        ideal.sort(key=lambda x: (at[x[0]], -x[1]))
        n = len(qids)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount([at[x[0]] for x in listed], minlength=n), out=offsets[1:])
        ideal_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount([at[x[0]] for x in ideal], minlength=n), out=ideal_offsets[1:])
        lists = RankedLists(
            query_ids=pa.array(qids, pa.string()), offsets=offsets,
            labels=np.array([x[4] for x in listed], dtype=np.float64).astype(dtype),
            scores=np.array([x[2] for x in listed], dtype=np.float64),
            docs=np.arange(len(listed), dtype=np.int32), doc_ids=pa.array([x[3] for x in listed], pa.string()),
            ideal_offsets=ideal_offsets, ideal_labels=np.array([x[1] for x in ideal], dtype=np.float64).astype(dtype),
            ideal_docs=np.zeros(len(ideal), dtype=np.int32), qrels_doc_ids=pa.array([], pa.string()), run_name=run_name,
        )
        wanted = [probe.measures[j] for j in sys_idx]
        side = probe._side
        inputs = side.inputs(lists, wanted, [], None) if side.active or any(m.name in SIDE_KERNELS for m in wanted) else None
        for j, m in zip(sys_idx, wanted):
            out[j] = float(kernel_for(m, inputs, side.available)(lists, m))
    return out


# ── the bucket notes: counts "X of Y" summed over the buckets (the notes' own data), the rest as they are


def note_counts(note: str) -> tuple[str, int | None, int | None]:
    """``(key, X, Y)`` of a note counting "X of Y" (:meth:`~ranklens.errors.Note.counted`: its kind and fields,
    its count and total, as data), else ``(note, None, None)`` (said as it is). Nothing is parsed out of the words.

    >>> from ranklens.errors import Note
    >>> key, x, y = note_counts(Note("seen_rows_dropped", 2, total=9))
    >>> (x, y), note_counts("as it is")
    ((2, 9), ('as it is', None, None))
    """
    counted = note.counted() if isinstance(note, Note) else None
    if counted is None:
        return str(note), None, None
    return counted


def merge_notes(phases: Mapping[str, Mapping[str, list[Any]]]) -> dict[str, list[str]]:
    """The notes of every phase, in the buckets' order, their counts summed (a recommender note only when it
    counts something: ``recsys:`` phases list every note a bucket could give, with the count it gave)."""
    out: dict[str, list[str]] = {}
    for phase, found in phases.items():
        texts: list[str] = []
        for key, (_, x, y, verbatim) in sorted(found.items(), key=lambda kv: kv[1][0]):
            if verbatim:
                texts.append(key)
            elif x or not phase.startswith("recsys:"):
                texts.append(Note.from_counted(key, x, y))
        out[phase] = texts
    return out


def _pair_key(q: Any, d: Any) -> tuple[bytes, bytes]:
    """A (query, document) pair's place in Spark's order of strings (bytewise; a null first)."""
    return tuple(b"" if v is None else b"\x00" + str(v).encode("utf-8") for v in (q, d))  # type: ignore[return-value]


#: the row kind saying which backend evaluated a bucket (counted on the driver: the ``RANKLENS_DEBUG`` note)
BACKEND_ROW = 8

def _bucket_function(
    measures: list[str], policy: EvalPolicy, label_kind: str, top: float | None, shared: Any = None,
    plan: Mapping[int, Any] | None = None, specs: tuple[tuple[float, ...], ...] | None = None,
    check_duplicates: bool = True,
) -> Any:
    """The function evaluating one bucket in a Python worker (pickled to the workers with its closure):
    ``(run, qrels)`` Arrow tables of the role columns → the bucket's rows as an Arrow table. ``specs``: the
    compiled pass's (the dispatcher chose it on the driver)."""

    def evaluate_group(run_t: Any, qrels_t: Any) -> Any:
        from ranklens.errors import FormatError, RanklensError
        from ranklens.spark.worker import compiled_bucket, duplicate_rows

        try:
            rows = None
            if specs is not None:
                rows = compiled_bucket(run_t, qrels_t, specs, len(STATS))
                if rows is not None:
                    rows.append((BACKEND_ROW, "compiled", 0, 1.0))
            if rows is None and check_duplicates:  # (the compiled pass declines on a duplicate: found here)
                rows = duplicate_rows(run_t, 0) + duplicate_rows(qrels_t, 1) or None
            if rows is None:  # the reference engine
                p, once = policy, None
                if shared is not None:
                    train, catalog, exclude_seen, once = shared.value
                    p = policy.replace(train=train, items=catalog, exclude_seen=exclude_seen)
                rows = evaluate_bucket(run_t, qrels_t, measures, p, label_kind, top, plan, once)
                rows.append((BACKEND_ROW, "reference", 0, 1.0))
        except RanklensError as e:
            detail = (type(e).__name__, e.source, e.detail) if isinstance(e, FormatError) else (type(e).__name__, "", str(e))
            rows = [(2, "\x1f".join(detail), 0, 0.0, None, None)]
        return _rows_out([row + (None,) * (6 - len(row)) for row in rows])

    return evaluate_group


def _partition_function(fn: Any) -> Any:
    """``fn`` as ``mapInArrow`` calls it on one partition (whole queries of both inputs, the qrels rows
    flagged ``_qrels``): the batches read whole, split into the run and the qrels, the rows given back as
    record batches; an empty partition gives none."""

    def evaluate_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        got = list(batches)
        if not got or not any(b.num_rows for b in got):
            return
        table = pa.Table.from_batches(got)
        del got
        flag = table.column("_qrels")
        run_cols = ["query_id", "doc_id", "score"] + (["_row"] if "_row" in table.column_names else [])
        run_t = table.filter(pc.invert(flag)).select(run_cols)
        qrels_t = table.filter(flag).select(["query_id", "doc_id", "relevance"])
        del table
        yield from fn(run_t, qrels_t).to_batches()

    return evaluate_partition


class _GlobalTopEvaluator(Evaluator):
    """The engine's Evaluator, with the top label of the whole qrels instead of the bucket's."""

    top_label: float | None = None
    reports: list[AlignReport]
    lists: list[Any]

    def _align(self, run: Any, order: str, judged_only: bool = False, judged_by: Any = None) -> Any:
        lists, report = super()._align(run, order, judged_only, judged_by)
        self.reports.append(report)  # one per ranking (score, input order; a measure's own judged_only)
        if self.top_label is not None:
            top = float(self.top_label) if lists.ideal_labels.dtype.kind == "f" else int(self.top_label)
            lists = dataclasses.replace(lists, top_label=top, _cache={})
        self.lists.append(lists)
        return lists, report


def train_statistics(probe: Evaluator) -> dict[str, Any]:
    """The statistics of the side tables alone that the kernels derive (n_i, kept on the Interactions; the
    item-item co-occurrence similarity and the user x item history; the unit feature vectors), computed once
    on the driver by the kernels' own functions, for the buckets' RecsysInputs (``_cache``): no bucket
    recomputes a global statistic. Only what the measures use."""
    from ranklens.engine.kernels import recsys as kernels

    t, c = probe._side.train, probe._side.catalog
    if t is not None:
        t.item_users()  # (cached on the Interactions: sent with them)
    features = c is not None and c.features is not None
    category = c is not None and c.category is not None
    need_sim = need_unit = False
    for m in probe.measures:
        if m.name == "ILD":
            on = str(m.get("on"))
            on = ("features" if features else "category" if category else "cooccurrence") if on == "auto" else on
            need_sim |= on == "cooccurrence"
            need_unit |= on == "features"
        elif m.name == "Serendipity":
            by_features = str(m.get("sim")) == "features"
            need_sim |= not by_features
            need_unit |= by_features
    side = kernels.RecsysInputs(
        num_users=t.num_users if t is not None else 0, item_users=t.item_users() if t is not None else None,
        train_user=t.user if t is not None else None, train_item=t.item if t is not None else None,
        features=c.features if c is not None else None,
    )
    if need_sim and t is not None:
        kernels._item_similarity(side)
    if need_unit and features:
        kernels._unit_features(side)
    return dict(side._cache)


def _watch_side(ev: _GlobalTopEvaluator, once: Mapping[str, Any] | None = None) -> list[tuple[str, list[str], list[str] | None]]:
    """The notes each step of the side tables adds in one bucket, by phase: ``pre`` (exclude-seen; the side
    tables' own notes are the driver's), ``recsys:<order>`` (with every note the step could give, all items
    absent: the counts' totals) and ``empty``."""
    from ranklens.engine.kernels.recsys import recsys_notes

    side = ev._side
    found: list[tuple[str, list[str], list[str] | None]] = []
    before_align, inputs, apply_empty = side.before_align, side.inputs, side.apply_empty

    def watched_before(r: Any, notes: list[str], tally: Any = None) -> Any:
        start = len(notes)
        out = before_align(r, notes, tally)
        found.append(("pre", [n for n in notes[start:] if n not in side.notes], None))
        return out

    def watched_inputs(lists: Any, measures: Any, notes: list[str], run: Any = None, tally: Any = None) -> Any:
        mine: list[str] = []
        out = inputs(lists, measures, mine, run, tally)
        for key, value in (once or {}).items():
            out._cache.setdefault(key, value)
        notes.extend(n for n in mine if n not in notes)
        absent = {
            f: np.full(getattr(out, f).shape, -1, dtype=getattr(out, f).dtype)
            for f in ("doc_item", "doc_catalog", "doc_attr") if getattr(out, f) is not None
        }
        every: list[str] = list(recsys_notes(lists, measures, dataclasses.replace(out, **absent))) if absent else []
        found.append((f"recsys:{len(ev.reports) - 1}", mine, every))
        return out

    def watched_empty(query_ids: Any, values: Any, has_relevant: Any, notes: list[str], tally: Any = None) -> Any:
        start = len(notes)
        out = apply_empty(query_ids, values, has_relevant, notes, tally)
        found.append(("empty", notes[start:], None))
        return out

    side.before_align, side.inputs, side.apply_empty = watched_before, watched_inputs, watched_empty  # type: ignore[method-assign]
    return found


def evaluate_bucket(
    rt: Any, qt: Any, measures: list[str], policy: EvalPolicy, label_kind: str, top: float | None = None,
    plan: Mapping[int, Any] | None = None, once: Mapping[str, Any] | None = None,
) -> list[tuple]:
    """Evaluate one bucket with the engine's Evaluator; rows ``(kind, query_id, measure, value[, doc_id, label])``:
    kind 0 = a value, kind 1 = a count of :data:`STATS` (``measure`` indexes it), kinds 3 and 4 = the list rows
    and judged labels the driver's system-level measures read (``plan``: :func:`system_plan`), kind 5 = a note
    (``query_id`` its phase, ``doc_id`` its template, ``value`` and ``label`` its counts). ``top``: the largest
    label of the whole qrels; ``once``: :func:`train_statistics`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ranklens.data.run import Run

    if "_row" in rt.column_names and rt.num_rows:
        rt = rt.take(pc.sort_indices(rt.column("_row")))  # input order, for ties=input (a stable sort)
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
    ev.top_label, ev.reports, ev.lists = top, [], []
    watched = _watch_side(ev, once) if ev._side.active or ev._side.empty is not None else []
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
    for o, (_, depth, top_k, pooled) in (plan or {}).items():
        out.extend(bucket_lists_rows(ev.lists[o], o, depth, top_k, pooled))
    if ev.last_pool is not None:  # (kind 6: the driver words the note over every bucket)
        out.append((6, None, 0, float(ev.last_pool.queries)))
        out.extend((6, None, 1, float(d)) for d in ev.last_pool.depths)
    for phase, notes, every in watched:
        if every is None:
            for i, note in enumerate(notes):
                template, x, y = note_counts(note)
                out.append((5, phase, i, None if x is None else float(x), template, None if y is None else float(y)))
            continue
        given = {note_counts(n)[0]: note_counts(n)[1] for n in notes}
        for i, note in enumerate(every):
            template, _, y = note_counts(note)
            out.append((5, phase, i, float(given.get(template) or 0), template, float(y or 0)))
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
