"""The results a gate checks: a run file evaluated under the gate's policy, or saved per-query results
(``ranklens eval --per-query -f json``, ``-o FILE.parquet``) fitted to the qrels as a run would be."""

from __future__ import annotations

import functools
import os

from ranklens.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ranklens.backends import Choice
    from ranklens.engine.evaluator import Evaluator
    from ranklens.engine.policy import EvalPolicy
    from ranklens.hooks import ProgressHook
    from ranklens.results import Results

__all__ = ["compiled_gate_results", "gate_results", "saved_as_run"]


def compiled_gate_results(
    qrels_path: str,
    paths: Sequence[str],
    measures: Sequence[Any],
    policy: EvalPolicy,
    *,
    progress: ProgressHook | None = None,
    engine: str = "memory",
) -> tuple[list[Results] | None, Choice | None]:
    """The Results of the run files ``paths`` from the compiled backend, when the dispatcher chooses it, without
    reading the qrels into the reference engine at all (``ranklens gate``'s quick way: under the gate's default
    ``missing="zero"`` every run's Results hold every qrels query, so they also give the gate its universe of
    queries); else ``(None, choice)``, the choice to pass on to :func:`gate_results` (None: ask again).
    Saved results, standard input, ``missing`` other than ``"zero"`` and Spark go the general way."""
    from ranklens.results import looks_like_results

    if policy.missing != "zero" or engine != "memory" or any(
        p == "-" or (os.path.isfile(p) and looks_like_results(p)) for p in paths
    ):
        return None, None
    from ranklens.backends import Choice, choose_backend, run_compiled
    from ranklens.evaluation import compiled_results

    choice = choose_backend(list(measures), policy, qrels_path, list(paths), note=False)
    if choice.name != "compiled":
        return None, None  # (the general way asks again, and says which backend ran)
    out: list[Results] = []
    for path in paths:
        one: list[tuple[str | None, str]] = [(None, path)]
        got = run_compiled(choice, functools.partial(compiled_results, qrels_path, one, list(measures), policy, progress))
        if got is None:  # (it declined while reading, and said so: the reference evaluates every run)
            return None, Choice("reference", "it takes everything", (("compiled", "it declined while reading"),))
        out.append(got[0][0])
    return out, choice


def gate_results(
    evaluator: Evaluator,
    path: str,
    *,
    progress: ProgressHook | None = None,
    engine: str = "memory",
    spark_master: str = "local[2]",
    qrels_path: str | None = None,
    policy: Any = None,
    choice: Choice | None = None,
    memory_limit: str | None = None,
) -> Results:
    """The Results of the run at ``path`` (read whole, with the run format and columns of
    ``evaluator.policy``) or of the saved results there (:func:`saved_as_run`). A run that answers no qrels
    query is bad input under any policy (with ``missing="zero"`` it would score 0 everywhere, and a lenient
    rule would pass it).

    ``engine="spark"`` evaluates a run file on Spark (master ``spark_master``) against the qrels file
    ``qrels_path`` read with ``policy`` (its formats and column maps): the same Results as the in-memory
    engine's; ``engine="duckdb"`` on DuckDB (``memory_limit`` its limit). Saved results are fitted to
    ``evaluator``'s qrels either way. Which backend evaluates a run file is :func:`ranklens.backends.choose_backend`'s choice, as for ``eval`` (the compiled one needs
    ``qrels_path``), unless ``choice`` gives it already (:func:`compiled_gate_results`)."""
    from ranklens.data.io import read_run
    from ranklens.engine.evaluator import nothing_evaluated
    from ranklens.evaluation import no_progress
    from ranklens.results import looks_like_results

    if path != "-" and os.path.isfile(path) and looks_like_results(path):
        return saved_as_run(evaluator, path)
    from ranklens.backends import choose_backend, run_compiled

    policy = policy if policy is not None else evaluator.policy
    if choice is None:
        choice = choose_backend(list(evaluator.measures), policy, qrels_path, [path], engine=engine)
    if choice.name == "spark":
        from ranklens.spark.files import evaluate_run_paths

        if qrels_path is None:
            raise InputError("engine='spark' needs qrels_path (the qrels file Spark reads)")
        (res,) = evaluate_run_paths(
            qrels_path, [path], list(evaluator.measures), policy, master=spark_master, require_shared=True
        )
        return res
    if choice.name == "duckdb":
        from ranklens.duckdb.files import evaluate_run_paths as on_duckdb

        if qrels_path is None:
            raise InputError("engine='duckdb' needs qrels_path (the qrels file DuckDB reads)")
        (res,) = on_duckdb(qrels_path, [path], list(evaluator.measures), policy, memory_limit=memory_limit, require_shared=True)
        return res
    from ranklens.evaluation import compiled_results

    compiled = run_compiled(
        choice, lambda why: compiled_results(qrels_path, [(None, path)], list(evaluator.measures), policy, progress, why)  # type: ignore[arg-type]
    )
    if compiled is not None:
        return compiled[0][0]
    hook = progress or no_progress
    with hook(f"reading {path}", None):
        r = read_run(path, format=evaluator.policy.run_format, columns=evaluator.policy.run_columns)
    judged = set(evaluator.qrels.query_ids.to_pylist())
    if not any(q in judged for q in r.query_ids.to_pylist()):
        raise InputError(nothing_evaluated(r.source, evaluator.qrels.num_queries, r.num_queries))
    with hook(f"evaluating {os.path.basename(path)} ({len(r):,} rows)", None):
        return evaluator(r, warn=False)


def saved_as_run(evaluator: Evaluator, path: str) -> Results:
    """Saved per-query results used as the run: they must hold every measure of ``evaluator``; qrels
    queries they lack score 0 under ``missing="zero"`` (the gate's default), fail under ``"error"``, and
    are left out under ``"skip"``, as for a run; queries the qrels lack are ignored."""
    import numpy as np

    from ranklens.errors import QuerySetError
    from ranklens.results import Results, aggregate, read_results

    found = read_results(path)
    if len(found) != 1:
        raise InputError(f"{path}: holds the results of {len(found)} runs ({', '.join(r.run for r in found)}); "
                         "the gate checks one")
    res = found[0]
    if not res.query_ids:
        raise InputError(f"{path}: holds aggregates only; the gate needs per-query values: write them with "
                         "ranklens eval … --per-query -o FILE (.json, .csv or .parquet)")
    absent_from = [m for m in evaluator.measures if m not in res.measures]
    if absent_from:
        raise InputError(f"{path}: the saved results have no {', '.join(map(str, absent_from))}; they hold "
                         f"{', '.join(map(str, res.measures))}")
    qrels_ids = evaluator.qrels.query_ids.to_pylist()
    if not set(qrels_ids) & set(res.query_ids):
        raise InputError(f"{path}: the saved results share no query with the qrels")
    cols = [res.measures.index(m) for m in evaluator.measures]
    index = {q: i for i, q in enumerate(res.query_ids)}
    absent = [q for q in qrels_ids if q not in index]
    notes = list(res.notes)
    if absent and evaluator.query_set == "error":
        raise QuerySetError(f"{path}: {len(absent)} qrels queries have no saved result ({', '.join(absent[:5])})")
    judged = set(qrels_ids)
    keep = [q for q in res.query_ids if q in judged]
    rows = [res.values[index[q], cols] for q in keep]
    if absent and evaluator.query_set == "qrels":
        rows.extend(np.zeros(len(cols)) for _ in absent)
        keep = keep + absent
        notes.append(f"{len(absent)} qrels quer{'y' if len(absent) == 1 else 'ies'} without a saved result: scored 0")
    order = sorted(range(len(keep)), key=lambda i: keep[i].encode("utf-8"))
    values = np.array([rows[i] for i in order], dtype=np.float64).reshape(len(keep), len(cols))
    measures = tuple(evaluator.measures)
    aggs = tuple(aggregate(m, values[:, j]) for j, m in enumerate(measures))
    return Results(res.run, measures, tuple(keep[i] for i in order), values, aggs, tuple(notes), res.options)
