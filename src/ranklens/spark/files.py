"""Files on the Spark engine, for ``ranklens eval --engine spark`` (and ``compare``/``gate``).

A file the in-memory engine can read — a local path, in any format it reads, gzipped or not — is read by the
data layer's own readers on the driver (:func:`ranklens.data.io.read_qrels`, :func:`~ranklens.data.io.read_run`)
and handed to Spark through Arrow: every input is accepted or refused exactly as on the in-memory engine,
with the same message (file, line, expected, found) and the same notes, and the readers' duplicate check makes
Spark's unnecessary. What only Spark can read — a directory of Parquet parts, or a URI (``s3a://``,
``hdfs://``, ``gs://``, ``file://``…) — is read by Spark's Parquet reader and checked on the cluster by the
same rules (ids, NaN scores, integer labels in the 32-bit range, duplicates), the messages naming the path
(rows read by Spark have no line number). Spark's own failures are one line (:mod:`ranklens.spark.runtime`).
"""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError
from ranklens.spark.runtime import arrow_frame as _frame
from ranklens.spark.runtime import check_master, session, spark_errors

__all__ = ["PLAN", "evaluate_files", "evaluate_run_paths", "read_qrels_df", "read_run_df", "session", "spark_reads"]

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

#: the plan of the command line's ``--spark-plan`` (``auto``, ``scan``, ``shuffle``), the default of
#: :func:`evaluate_run_paths` while a command runs (``eval``, ``compare`` and ``gate`` share the option)
PLAN: contextvars.ContextVar[str] = contextvars.ContextVar("ranklens_spark_plan", default="auto")


def spark_reads(path: str) -> bool:
    """Whether ``path`` is read by Spark (a URI, or a directory of Parquet parts) rather than by the data
    layer on the driver (a file on this machine).

    >>> spark_reads("runs/bm25.run.gz"), spark_reads("s3a://bucket/runs/bm25.parquet")
    (False, True)
    """
    return bool(_URI.match(path)) or os.path.isdir(path)


class Input:
    """One input as a DataFrame of ``query_id, doc_id, score|relevance`` (made when first used: a file refused
    later costs no Spark job): ``checked`` when the data layer read it (its rules applied, duplicates
    refused), ``name`` the run's name (tag or file stem), ``notes`` the reader's (a sniffed layout, words
    after the tag)."""

    def __init__(
        self, make: Callable[[], Any], source: str, checked: bool, name: str | None = None, notes: tuple[str, ...] = ()
    ) -> None:
        self._make, self._frame = make, None
        self.source, self.checked, self.name, self.notes = source, checked, name, notes

    @property
    def frame(self) -> Any:
        if self._frame is None:
            self._frame = self._make()
        return self._frame


def _session_of(spark: Any) -> Any:
    """The SparkSession behind an :class:`_OnFirstUse` (started now)."""
    if isinstance(spark, _OnFirstUse):
        if spark._spark is None:
            spark._spark = session(spark._master)
        return spark._spark
    return spark


class _OnFirstUse:
    """The session of ``master``, started when first used."""

    def __init__(self, master: str) -> None:
        self._master = master
        self._spark: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._spark is None:
            self._spark = session(self._master)
        return getattr(self._spark, name)


def _spark_parquet(spark: Any, path: str, fmt: str | None, what: str) -> Any:
    if fmt not in (None, "parquet"):
        raise InputError(
            f"{path}: --engine spark reads {fmt} files from a path on this machine (by the in-memory engine's reader); "
            f"from a URI or a directory it reads Parquet (--{what}-format parquet)"
        )
    with spark_errors(path, spark):
        return spark.read.parquet(path)


def read_qrels_df(spark: Any, path: str, policy: EvalPolicy) -> Input:
    """The qrels at ``path`` as an :class:`Input` (``query_id, doc_id, relevance``)."""
    if spark_reads(path):
        frame = _spark_parquet(spark, path, policy.qrels_format, "qrels")
        return Input(lambda: frame, path, False)
    from ranklens.data.io import read_qrels

    q = read_qrels(path, format=policy.qrels_format, columns=policy.qrels_columns, labels=policy.labels or "int")
    return Input(lambda: _frame(spark, q.to_arrow()), path, True, notes=q.notes)


def read_run_df(spark: Any, path: str, policy: EvalPolicy) -> Input:
    """The run at ``path`` as an :class:`Input` (``query_id, doc_id, score``)."""
    if spark_reads(path):
        frame = _spark_parquet(spark, path, policy.run_format, "run")
        return Input(lambda: frame, path, False)
    from ranklens.data.io import read_run

    r = read_run(path, format=policy.run_format, columns=policy.run_columns)
    return Input(lambda: _frame(spark, r.to_arrow()), path, True, r.name, r.notes)


def evaluate_run_paths(
    qrels: str,
    runs: Sequence[str],
    measures: Sequence[Any] | str,
    policy: EvalPolicy | None = None,
    *,
    master: str = "local[2]",
    path: str = "arrow",
    require_shared: bool = False,
    on_note: Callable[[str], None] | None = None,
    plan: str | None = None,
) -> list[Any]:
    """The Results of every run file of ``runs`` on Spark, the qrels read once: each named by its TREC tag
    (or its file stem) and holding its own notes, as the in-memory engine's Results of a file are before the
    naming rule (:func:`ranklens.data.names.unique_names`) runs over several. ``on_note`` gets the qrels'
    notes (``"QRELS: note"``), as the in-memory engine gives them.

    ``require_shared``: a run sharing no query with the qrels is an :class:`InputError` under any policy
    (the gate's rule: with ``missing="zero"`` it would otherwise score 0 everywhere).

    ``plan`` (``--spark-plan``; default :data:`PLAN`): ``auto`` reads Parquet inputs with the scan plan where :func:`scannable` says
    so (the Python workers read the row groups; :mod:`ranklens.spark.scan`), ``scan`` also any Parquet file
    by its column names, ``shuffle`` never (the shuffle plan, as before).

    >>> evaluate_run_paths("qrels.txt", ["bm25.run"], ["nDCG@10"])[0]["nDCG@10"]  # doctest: +SKIP
    0.5939
    """
    policy = policy if policy is not None else EvalPolicy()
    check_master(master)
    plan = plan if plan is not None else PLAN.get()
    if plan not in ("auto", "scan", "shuffle"):
        raise InputError(f"--spark-plan must be auto, scan or shuffle; got {plan!r}")
    spark = _OnFirstUse(master)  # (a local file the data layer refuses starts no Spark: its error is the one line)
    found: list[Input] = []

    def qrels_input() -> Input:
        if not found:
            with spark_errors(qrels, spark):
                found.append(read_qrels_df(spark, qrels, policy))
            for note in found[0].notes if on_note else ():
                on_note(f"{qrels}: {note}")  # type: ignore[misc]
        return found[0]

    scan = path == "arrow" and plan != "shuffle" and not require_shared and scannable(qrels, "qrels", policy, plan == "scan")
    if not scan:  # (read first, as ever: its refusal before any run's)
        qrels_input()
    return [
        _evaluate_run(spark, qrels_input, qrels, run_path, measures, policy, path, require_shared, scan, plan)
        for run_path in runs
    ]


def scannable(path: str, what: str, policy: EvalPolicy, forced: bool = False) -> bool:
    """Whether the scan plan may read the input ``path`` (:mod:`ranklens.spark.scan`): Parquet that Spark reads
    (a directory of parts, a URI), or a Parquet file on this machine whose columns the data layer finds under
    their role names with no column map (``forced``, ``--spark-plan scan``: any Parquet file, its columns by
    name as Spark reads them). Anything else, and anything the scan then refuses, takes the route it took
    before (the data layer's reader on the driver, or Spark's)."""
    fmt = policy.run_format if what == "run" else policy.qrels_format
    if fmt not in (None, "parquet"):
        return False
    if spark_reads(path):
        return True
    if not (os.path.isfile(path) and (fmt == "parquet" or path.lower().endswith(".parquet"))):
        return False
    if forced:
        return True
    if (policy.run_columns if what == "run" else policy.qrels_columns) is not None:
        return False
    from ranklens.data.columns import QRELS, RUN
    from ranklens.data.parquet_batches import _open, needed_columns

    roles = ["query_id", "doc_id", "score" if what == "run" else "relevance"]
    try:
        handle = _open(path)
        try:
            return needed_columns(handle, RUN if what == "run" else QRELS, path, None) == roles
        finally:
            handle.close()
    except Exception:  # (the data layer's reader says what is wrong with it)
        return False


def _evaluate_run(
    spark: Any, qrels_input: Callable[[], Input], qrels_path: str, run_path: str, measures: Sequence[Any] | str,
    policy: EvalPolicy, path: str, require_shared: bool, scan: bool = False, plan: str = "auto",
) -> Any:

    from ranklens.data.names import file_stem
    from ranklens.engine.evaluator import nothing_evaluated
    from ranklens.spark.core import QRELS_ROLES, RUN_ROLES, evaluate, select_roles
    from ranklens.spark.sql import validate_frames

    if scan and scannable(run_path, "run", policy, plan == "scan"):
        from ranklens.spark.scan import Fallback

        try:
            with spark_errors(run_path, spark):
                ev = evaluate(
                    run_path, qrels_path, measures, policy=policy.replace(qrels_format=None, run_format=None),
                    path="arrow", plan="scan", name=file_stem(run_path), warn=False, sources=(run_path, qrels_path),
                    spark=_session_of(spark), fallback=False,
                )
            res = ev.results
            ev.unpersist()
            return res
        except Fallback:
            pass  # (the route of before, which words every refusal as before)
    q = qrels_input()
    with spark_errors(run_path, spark):
        r = read_run_df(spark, run_path, policy)
        # what the data layer read has its columns named; what Spark read is mapped by the policy's columns
        run_columns = None if r.checked else policy.run_columns
        qrels_columns = None if q.checked else policy.qrels_columns
        df_policy = policy.replace(qrels_format=None, run_format=None, run_columns=run_columns, qrels_columns=qrels_columns)
        if not (r.checked and q.checked):  # the data layer's rules, on the cluster, for what Spark read
            validate_frames(
                select_roles(r.frame, run_columns, RUN_ROLES, "run", run_path),
                select_roles(q.frame, qrels_columns, QRELS_ROLES, "qrels", q.source), df_policy, (run_path, q.source),
            )
        if require_shared:
            run_q = select_roles(r.frame, run_columns, RUN_ROLES, "run", run_path).select("query_id").distinct()
            qrels_q = select_roles(q.frame, qrels_columns, QRELS_ROLES, "qrels", q.source).select("query_id").distinct()
            if run_q.join(qrels_q, "query_id").limit(1).count() == 0:
                raise InputError(nothing_evaluated(run_path, qrels_q.count(), run_q.count()))
        ev = evaluate(
            r.frame, q.frame, measures, policy=df_policy, path=path, name=r.name or file_stem(run_path), warn=False,
            check_duplicates=not (r.checked and q.checked), sources=(run_path, q.source),
        )
        res = ev.results
        ev.unpersist()
    if r.notes:  # the reader's notes first, as the Evaluator puts a Run's
        res = res.replace(notes=(*r.notes, *(n for n in res.notes if n not in r.notes)))
    return res


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
    plan: str | None = None,
) -> Any:
    """Evaluate run files against a qrels file on Spark, as ``ranklens eval --engine spark`` does: a
    :class:`ranklens.results.files.FileEvaluation` with the same Results, names and notes as the in-memory engine's
    (``stream`` and ``progress`` are accepted for the same call shape and ignored: Spark reads in partitions).

    >>> evaluate_files("qrels.txt", [(None, "bm25.run")], ["nDCG@10"]).results[0].run  # doctest: +SKIP
    'bm25'
    """
    from ranklens.results.files import FileEvaluation, label_runs, pass_notes

    notes: list[str] = []

    def qrels_note(note: str) -> None:
        notes.append(note)
        if on_note:
            on_note(note)

    found = evaluate_run_paths(
        qrels, [p for _, p in runs], measures, policy, master=master, path=path, on_note=qrels_note, plan=plan
    )
    for (_, run_path), res in zip(runs, found):
        pass_notes(run_path, res, notes, on_note)
    return FileEvaluation(label_runs(runs, found), notes, [])
