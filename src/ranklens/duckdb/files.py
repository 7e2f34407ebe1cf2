"""Files on the DuckDB engine, for ``ranklens eval|compare|gate --engine duckdb``: the qrels read once, each
run evaluated against them in one connection (:mod:`ranklens.duckdb.inputs` says who reads what)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ranklens.duckdb.engine import evaluate_inputs, probe
from ranklens.duckdb.inputs import read_input
from ranklens.duckdb.runtime import connect
from ranklens.engine.policy import EvalPolicy
from ranklens.results.core import Results

__all__ = ["evaluate_run_paths"]


def evaluate_run_paths(
    qrels: Any,
    runs: Sequence[Any],
    measures: Sequence[Any] | str,
    policy: EvalPolicy | None = None,
    *,
    memory_limit: str | None = None,
    threads: int | None = None,
    require_shared: bool = False,
    on_note: Callable[[str], None] | None = None,
    names: Sequence[str | None] | None = None,
) -> list[Results]:
    """The Results of every run of ``runs`` on DuckDB, the qrels read once: each named by its TREC tag (or
    its file stem) and holding its own notes, as the in-memory engine's Results of a file are. ``on_note``
    gets the qrels' notes (``"QRELS: note"``). ``memory_limit``, ``threads``: DuckDB's (default: 80% of the
    memory, every core). ``require_shared``: a run sharing no query with the qrels is an
    :class:`~ranklens.errors.InputError` under any policy (the gate's rule).

    >>> evaluate_run_paths("qrels.txt", ["bm25.run"], ["nDCG@10"])[0]["nDCG@10"]  # doctest: +SKIP
    0.5939
    """
    policy = policy if policy is not None else EvalPolicy()
    ev = probe(measures, policy)  # (bad measures or policy: refused before anything is read)
    con = connect(memory_limit, threads)
    try:
        q = read_input(con, qrels, "qrels", policy, "qrels_0")
        for note in q.notes if on_note else ():
            on_note(f"{q.source}: {note}")  # type: ignore[misc]
        out = []
        for i, run in enumerate(runs):
            r = read_input(con, run, "run", policy, f"run_{i}")
            given = names[i] if names is not None else None
            out.append(evaluate_inputs(
                con, r, q, list(ev.measures), policy, name=given or r.name or "run", require_shared=require_shared
            ))
        return out
    finally:
        con.close()
