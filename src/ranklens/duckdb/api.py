"""``ranklens.duckdb.evaluate``: one run against qrels on DuckDB, from paths, globs, directories, DuckDB
relations, Arrow tables and frames."""

from __future__ import annotations

from typing import Any

from ranklens.engine.policy import EvalPolicy
from ranklens.errors import warn_notes
from ranklens.results.core import Results

__all__ = ["evaluate"]


def evaluate(
    run: Any,
    qrels: Any,
    measures: Any,
    *,
    policy: EvalPolicy | None = None,
    memory_limit: str | None = None,
    threads: int | None = None,
    name: str | None = None,
    warn: bool = True,
) -> Results:
    """Evaluate ``run`` against ``qrels`` on DuckDB with the in-memory engine's numbers and notes.

    Args:
        run: a path (any format the data layer reads; Parquet is read by DuckDB itself), a directory of
            Parquet parts (hive partitions included), a glob, a DuckDB relation, an Arrow table, a pandas or
            Polars frame, a ``{query: {doc: score}}`` dict or a :class:`~ranklens.data.run.Run`.
        qrels: the same kinds (``relevance`` for the value).
        measures: measure names or values that the SQL formulation expresses (:data:`ranklens.sql.SQL_MEASURES`).
        policy: the :class:`~ranklens.engine.policy.EvalPolicy` (missing queries, negative labels, ``-J``,
            ``-M``, ``rel_level``, labels, formats and column maps).
        memory_limit: DuckDB's memory limit (``"4GB"``), spilling beyond it.
        threads: DuckDB's threads (default: one per core).
        name: the run's name (default: its TREC tag or file stem, else ``"run"``).
        warn: warn once per note, as the Evaluator does.

    Raises:
        InputError: bad input (the in-memory engine's message), a measure or policy the SQL formulation
            does not express (the reason), or nothing to evaluate.

    >>> import ranklens.duckdb
    >>> qrels = {"q1": {"d1": 1, "d3": 1}}
    >>> run = {"q1": {"d1": 2.0, "d2": 1.0, "d3": 1.0}}  # (d2 and d3 tie: d3 ranks first, as trec_eval)
    >>> res = ranklens.duckdb.evaluate(run, qrels, ["AP", "P@2"])
    >>> res["AP"], res["P@2"]
    (1.0, 1.0)
    """
    from ranklens.backends import duckdb_declines
    from ranklens.duckdb.files import evaluate_run_paths
    from ranklens.errors import InputError

    policy = policy if policy is not None else EvalPolicy()
    from ranklens.duckdb.engine import probe

    reason = duckdb_declines(list(probe(measures, policy).measures), policy)
    if reason is not None:
        raise InputError(f"the DuckDB engine declines: {reason}")
    (res,) = evaluate_run_paths(qrels, [run], measures, policy, memory_limit=memory_limit, threads=threads, names=[name])
    if warn:
        warn_notes(res.notes, f"{res.run}: ")
    return res
