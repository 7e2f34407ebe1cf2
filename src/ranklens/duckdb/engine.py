"""One run against one qrels on DuckDB: the inputs' checks, the SQL formulation, the one ``assemble``.

The values are the SQL formulation's (:mod:`ranklens.sql`), the notes the in-memory engine's (its
:class:`~ranklens.engine.alignment.AlignReport`, from counts the same query returns), the Results built by
:func:`ranklens.results.core.assemble` from the per-query values, queries in bytewise order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklens.data.qrels import LABEL_RANGE
from ranklens.duckdb.inputs import Input
from ranklens.duckdb.runtime import duckdb_errors
from ranklens.duckdb.runtime import run as fetch
from ranklens.engine.alignment import AlignReport
from ranklens.engine.evaluator import Evaluator, nothing_evaluated
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import DuplicateError, FormatError, InputError, QuerySetError
from ranklens.results.core import Results, assemble

__all__ = ["PAIR_KEY", "check_inputs", "evaluate_inputs", "probe"]

#: what the input checks count distinct values of, one per (query, document) pair: its 64-bit hash
PAIR_KEY = "hash(query_id, doc_id)"


def probe(measures: Any, policy: EvalPolicy) -> Evaluator:
    """The measures and the policy checked exactly as the engine checks them (an Evaluator on no qrels):
    its ``measures`` (resolved, ``aggregate`` applied) and ``options()`` are the Results'."""
    from ranklens.data.qrels import Qrels

    return Evaluator(
        measures, Qrels.from_arrays([], [], [], label_kind=policy.labels or "int"),
        policy=policy.replace(qrels_columns=None, run_columns=None, qrels_format=None, run_format=None),
    )


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


def _refuse(inp: Input, message: str, error: type[FormatError] = FormatError) -> None:
    """The data layer's message for what DuckDB found wrong in ``inp`` (it re-reads the file), else
    ``message``."""
    if inp.reread is not None:
        inp.reread()
    raise error(inp.source, message)


def check_inputs(con: Any, run: Input, qrels: Input, policy: EvalPolicy, *, duplicates: bool = True) -> None:
    """The data layer's rules on what DuckDB read (the data layer applied them to the rest), and the
    policy's on the qrels: ``negative="error"`` refuses a negative label, as the engine does."""
    integer = (policy.labels or "int") == "int"
    nan = "(NOT isfinite({0}) AND NOT isinf({0}))"  # (not isnan(): DuckDB prunes it with Parquet statistics)
    ids = "query_id IS NULL OR doc_id IS NULL OR query_id = '' OR doc_id = ''"
    # distinct pairs in the same pass as the row checks, counted by their 64-bit hashes (a hash table of integers,
    # not of string pairs): fewer than the rows is a duplicate or, rarely, two pairs of one hash, which the second
    # query (exact, by the pairs themselves) tells apart
    distinct = f"COUNT(DISTINCT {PAIR_KEY})" if duplicates else "COUNT(*)"
    if not run.checked:
        with duckdb_errors(run.source):
            n, bad_ids, bad_scores, pairs = _first(fetch(con,
                f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {ids} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN score IS NULL OR {nan.format('score')} THEN 1 ELSE 0 END), 0), {distinct} "
                f"FROM {run.view}"
            ))
        if n == 0:
            _refuse(run, "expected at least one row, got none")
        if bad_ids:
            _refuse(run, "empty query or document id")
        if bad_scores:
            _refuse(run, f"score is NaN ({bad_scores} row(s) in all); give every document a number")
        if duplicates and pairs != n:
            _duplicates(con, run, "appears twice for query", "A ranking lists each document once: remove the duplicates")
    if not qrels.checked:
        lab = "relevance"
        bad = f"{lab} IS NULL OR {nan.format(lab)} OR isinf({lab})" + (f" OR {lab} <> round({lab})" if integer else "")
        with duckdb_errors(qrels.source):
            n, bad_ids, n_bad, huge, pairs = _first(fetch(con,
                f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {ids} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN {bad} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN {'TRUE' if integer else 'FALSE'} AND ({lab} < -2147483647 OR {lab} > 2147483647) "
                f"THEN 1 ELSE 0 END), 0), {distinct} FROM {qrels.view}"
            ))
        if n == 0:
            _refuse(qrels, "expected at least one row, got none")
        if bad_ids:
            _refuse(qrels, "empty query or document id")
        if n_bad:
            _refuse(qrels, f"relevance label must be {'an integer' if integer else 'a finite number'}")
        if huge:
            _refuse(qrels, LABEL_RANGE)
        if duplicates and pairs != n:
            _duplicates(con, qrels, "is judged twice for query", "Remove the duplicates")
    if policy.negative == "error":
        with duckdb_errors(qrels.source):
            low = _first(fetch(con,
                f"SELECT relevance, query_id FROM {qrels.view} WHERE relevance < 0 ORDER BY relevance, query_id LIMIT 1"
            ))
        if low is not None:
            value = int(low[0]) if integer else low[0]
            raise InputError(
                f"{qrels.source}: negative relevance label {value} (query '{low[1]}'); choose a negative-label "
                "policy (trec, zero)"
            )


def _duplicates(con: Any, inp: Input, verb: str, advice: str) -> None:
    """The duplicates of ``inp`` refused (the first pair in byte order named, the others counted); none found
    (two pairs of one hash): nothing."""
    with duckdb_errors(inp.source):
        row = _first(fetch(con,
            f"SELECT COUNT(*), SUM(c - 1), MIN(query_id || chr(0) || doc_id) FROM (SELECT query_id, doc_id, COUNT(*) AS c "
            f"FROM {inp.view} GROUP BY query_id, doc_id HAVING COUNT(*) > 1) AS d"
        ))
    if row[0]:
        q, d = str(row[2]).split("\0", 1)
        kind = "row(s)" if inp.view.startswith("run") else "pair(s)"
        _refuse(inp, f"document '{d}' {verb} '{q}'; {row[1]} duplicate {kind} in all. {advice}", DuplicateError)


def evaluate_inputs(
    con: Any, run: Input, qrels: Input, measures: Sequence[Any], policy: EvalPolicy, *, name: str,
    require_shared: bool = False,
) -> Results:
    """The Results of ``run`` against ``qrels`` (views of ``con``), checked first (:func:`check_inputs`)."""
    from ranklens.sql import per_query_sql

    ev = probe(measures, policy)
    check_inputs(con, run, qrels, policy)
    text = per_query_sql(ev.measures, policy, run_table=run.view, qrels_table=qrels.view, top="aggregate")
    with duckdb_errors(run.source):
        # (numpy from DuckDB itself, no NULL: pyarrow's to_numpy imports pandas, a second of start-up)
        cols = con.sql(f"SELECT * REPLACE (COALESCE(n_run, -1) AS n_run) FROM ({text}) AS v").fetchnumpy()
    qids = np.asarray(cols["query_id"], dtype=object)
    has_run = cols["n_run"] >= 0
    n_run = np.where(has_run, cols["n_run"], 0)
    in_qrels = cols["in_qrels"].astype(bool)
    evaluated = cols["evaluated"].astype(bool)
    qrels_only = int(np.count_nonzero(in_qrels & ~has_run))
    if require_shared and not np.any(in_qrels & has_run):
        raise InputError(nothing_evaluated(run.source, int(in_qrels.sum()), int(has_run.sum())))
    if policy.missing == "error" and qrels_only:
        missing = sorted((str(q) for q in qids[in_qrels & ~has_run]), key=lambda s: s.encode("utf-8"))
        raise QuerySetError(
            f"{qrels_only} qrels quer{'y' if qrels_only == 1 else 'ies'} not in the run {run.source} "
            f"(e.g. {missing[:3]}); use query set 'intersect' or 'qrels'"
        )
    if not evaluated.any():
        raise InputError(nothing_evaluated(run.source, int(in_qrels.sum()), int(has_run.sum())))
    report = AlignReport(
        run_only_queries=int(np.count_nonzero(has_run & ~in_qrels)),
        run_only_rows=int(n_run[has_run & ~in_qrels].sum()),
        qrels_only_queries=qrels_only,
        qrels_only_scored_zero=policy.missing == "zero",
        truncated_rows=int(cols["truncated"][in_qrels].sum()),
        removed_unjudged_rows=int(cols["removed"][in_qrels].sum()),
    )
    keep = np.flatnonzero(evaluated)
    order = sorted(keep.tolist(), key=lambda i: str(qids[i]).encode("utf-8"))
    values = np.column_stack([cols[f"m{j}"].astype(np.float64)[order] for j in range(len(ev.measures))]).reshape(len(order), len(ev.measures))
    notes = [*run.notes, *(n for n in report.messages() if n not in run.notes)]
    return assemble(name, ev.measures, [str(qids[i]) for i in order], values, notes, ev.options())
