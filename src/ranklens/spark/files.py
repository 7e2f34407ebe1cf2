"""Files on the Spark engine: Parquet (Spark's reader) and TREC text (Spark's text reader, split on whitespace),
for ``ranklens eval --engine spark``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError

__all__ = ["evaluate_files", "evaluate_run_paths", "read_qrels_df", "read_run_df", "session"]


def session(master: str = "local[2]", *, shuffle_partitions: int = 4, app_name: str = "ranklens") -> Any:
    """A SparkSession (``getOrCreate``: an active one is reused) with the UI off and quiet logs."""
    from ranklens.spark.core import require_pyspark

    require_pyspark()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master).appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.extraJavaOptions", "-Dlog4j.rootLogger=ERROR")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _is_parquet(path: str, fmt: str | None) -> bool:
    return fmt == "parquet" or (fmt is None and (path.endswith(".parquet") or os.path.isdir(path)))


def read_qrels_df(spark: Any, path: str, policy: EvalPolicy) -> Any:
    """Qrels as a DataFrame ``query_id, doc_id, relevance`` (TREC ``qid iter docid rel``, or Parquet)."""
    if _is_parquet(path, policy.qrels_format):
        return spark.read.parquet(path)
    if policy.qrels_format not in (None, "trec"):
        raise InputError(f"--engine spark reads Parquet and TREC text; got qrels format {policy.qrels_format!r}")
    f = _fields(spark, path)
    return f.select(f.w[0].alias("query_id"), f.w[2].alias("doc_id"), f.w[3].cast("double").alias("relevance"))


def read_run_df(spark: Any, path: str, policy: EvalPolicy) -> tuple[Any, str | None]:
    """A run as a DataFrame ``query_id, doc_id, score`` and its TREC tag (first row's; None for Parquet)."""
    if _is_parquet(path, policy.run_format):
        return spark.read.parquet(path), None
    if policy.run_format not in (None, "trec"):
        raise InputError(f"--engine spark reads Parquet and TREC text; got run format {policy.run_format!r}")
    f = _fields(spark, path)
    df = f.select(f.w[0].alias("query_id"), f.w[2].alias("doc_id"), f.w[4].cast("double").alias("score"), f.w[5].alias("tag"))
    first = df.select("tag").limit(1).collect()
    return df.select("query_id", "doc_id", "score"), (first[0][0] if first else None)


def _fields(spark: Any, path: str) -> Any:
    from pyspark.sql import functions as F

    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    lines = spark.read.text(path).select(F.trim(F.col("value")).alias("line"))
    lines = lines.filter((F.col("line") != "") & ~F.col("line").startswith("#"))
    return lines.select(F.split(F.col("line"), r"\s+").alias("w"))


def evaluate_run_paths(
    qrels: str,
    runs: Sequence[str],
    measures: Sequence[Any] | str,
    policy: EvalPolicy | None = None,
    *,
    master: str = "local[2]",
    path: str = "arrow",
    require_shared: bool = False,
) -> list[Any]:
    """The Results of every run file of ``runs`` on Spark, the qrels read once: each named by its TREC tag
    (or its file stem: Parquet has no tag) and holding its own notes, as the in-memory engine's Results of a
    file are before the naming rule (:func:`ranklens.data.names.unique_names`) runs over several.

    ``require_shared``: a run sharing no query with the qrels is an :class:`InputError` under any policy
    (the gate's rule: with ``missing="zero"`` it would otherwise score 0 everywhere)."""
    from ranklens.data.names import file_stem
    from ranklens.engine.evaluator import nothing_evaluated
    from ranklens.spark.core import QRELS_ROLES, RUN_ROLES, evaluate, select_roles

    policy = policy if policy is not None else EvalPolicy()
    spark = session(master)
    qdf = read_qrels_df(spark, qrels, policy)
    df_policy = policy.replace(qrels_format=None, run_format=None)
    results = []
    for run_path in runs:
        rdf, tag = read_run_df(spark, run_path, policy)
        if require_shared:
            run_q = select_roles(rdf, policy.run_columns, RUN_ROLES, "run").select("query_id").distinct()
            qrels_q = select_roles(qdf, policy.qrels_columns, QRELS_ROLES, "qrels").select("query_id").distinct()
            if run_q.join(qrels_q, "query_id").limit(1).count() == 0:
                raise InputError(nothing_evaluated(run_path, qrels_q.count(), run_q.count()))
        ev = evaluate(rdf, qdf, measures, policy=df_policy, path=path, name=tag or file_stem(run_path), warn=False)
        results.append(ev.results)
        ev.unpersist()
    return results


def evaluate_files(
    qrels: str,
    runs: Sequence[tuple[str | None, str]],
    measures: Sequence[Any] | str,
    policy: EvalPolicy | None = None,
    *,
    master: str = "local[2]",
    path: str = "arrow",
    on_note: Callable[[str], None] | None = None,
    stream: bool | None = None,
    progress: Any = None,
) -> Any:
    """Evaluate run files against a qrels file on Spark, as ``ranklens eval --engine spark`` does: a
    :class:`ranklens.evaluation.FileEvaluation` with the same Results, names and notes as the in-memory engine's
    (``stream`` and ``progress`` are accepted for the same call shape and ignored: Spark reads in partitions)."""
    from ranklens.evaluation import FileEvaluation, label_runs, pass_notes

    found = evaluate_run_paths(qrels, [p for _, p in runs], measures, policy, master=master, path=path)
    notes: list[str] = []
    for (_, run_path), res in zip(runs, found):
        pass_notes(run_path, res, notes, on_note)
    return FileEvaluation(label_runs(runs, found), notes, [])
