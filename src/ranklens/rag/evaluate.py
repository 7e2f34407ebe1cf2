"""The RAG report of one run: :func:`evaluate_rag` over the RAG set measures, with an optional pool run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklens.engine.evaluator import Evaluator
from ranklens.errors import InputError
from ranklens.measures.base import Measure
from ranklens.measures.registry import get_family
from ranklens.results.core import Results, assemble

__all__ = ["RAG_SET_MEASURES", "evaluate_rag"]

RAG_SET_MEASURES = ("RAnWG", "NRecall4p", "NRecall5", "Precision4p", "Harm")


def evaluate_rag(
    qrels: Any,
    run: Any,
    *,
    k: int | Sequence[int] = (10,),
    pool: Any = None,
    missing: str = "skip",
    **params: Any,
) -> Results:
    """The paper's report for one run: RAnWG, NRecall4p, NRecall5, Precision4p, Harm, PROC and PctPROC at
    each K, with PROC taken over a separate candidate ``pool`` run when given.

    Args:
        qrels: graded judgements (label ``top`` = grade 5; see :mod:`ranklens.measures.rag`).
        run: the system's output; its top K per query is the context set.
        k: one or several set sizes K.
        pool: the candidate pool (a run: e.g. the first stage's Top-50 the reranker chose from). None:
            the run's own retrieved list is the pool (``PROC(depth=0)``).
        params: RA-nWG parameters (``alpha``, ``cap4``, ``top``, …) and ``ties``.

    PROC/PctPROC of a separate pool are computed on the pool's ranked lists and matched to the run by
    query id; a query missing from the pool has PROC NA. Notes count the NA queries of every measure.

    >>> grades = [5] * 2 + [4] * 4 + [3] * 6 + [2] * 4 + [1] * 4
    >>> qrels = {"q": {f"p{i:02d}": g for i, g in enumerate(grades)}}
    >>> pool = {"q": {d: 20.0 - i for i, d in enumerate(["p00", "p06", "p02", "p12", "p07", "p03", "p16", "p08", "p13", "p17"])}}
    >>> run = {"q": {d: 5.0 - i for i, d in enumerate(["p00", "p06", "p02", "p12", "p07"])}}
    >>> res = evaluate_rag(qrels, run, k=5, pool=pool)
    >>> {str(m): round(v, 6) for m, v in zip(res.measures, res.aggregates) if m.name in ("RAnWG", "PROC", "PctPROC")}
    {'RAnWG@5': 0.478788, 'PROC@5': 0.569697, 'PctPROC@5': 0.840426}
    """
    ks = [k] if isinstance(k, int) else list(k)
    ties = params.pop("ties", None)
    weight_names = {p.name for p in get_family("RAnWG").params} - {"ties"}
    unknown = set(params) - weight_names
    if unknown:
        raise InputError(f"unknown RA-nWG parameter(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(weight_names))}")
    set_params = {"top": params["top"]} if "top" in params else {}
    tie_param = {"ties": ties} if ties is not None else {}
    measures: list[Measure] = []
    for K in ks:
        measures.append(Measure.build(get_family("RAnWG"), {**params, **tie_param}, K))
        measures += [Measure.build(get_family(n), {**set_params, **tie_param}, K) for n in RAG_SET_MEASURES[1:]]
        measures.append(Measure.build(get_family("PROC"), params, K))
        measures.append(Measure.build(get_family("PctPROC"), {**params, **tie_param}, K))
    ev = Evaluator(measures, qrels, missing=missing)
    res = ev(run)
    notes = list(res.notes)
    values = res.values.copy()
    if pool is not None:
        proc_measures = [m for m in measures if m.name == "PROC"]
        pool_res = Evaluator(proc_measures, ev.qrels, missing=missing)(pool, name="pool")
        pool_index = {q: i for i, q in enumerate(pool_res.query_ids)}
        rows = np.array([pool_index.get(q, -1) for q in res.query_ids], dtype=np.int64)
        absent = int(np.count_nonzero(rows < 0))
        if absent:
            notes.append(f"{absent} quer{'y' if absent == 1 else 'ies'} of the run not in the pool {pool_res.run}: PROC NA")
        for K in ks:
            j_proc = next(j for j, m in enumerate(measures) if m.name == "PROC" and m.cutoff == K)
            j_pct = next(j for j, m in enumerate(measures) if m.name == "PctPROC" and m.cutoff == K)
            j_ra = next(j for j, m in enumerate(measures) if m.name == "RAnWG" and m.cutoff == K)
            pool_col = pool_res.values[:, proc_measures.index(measures[j_proc])]
            proc_values = np.where(rows >= 0, pool_col[np.maximum(rows, 0)], np.nan)
            values[:, j_proc] = proc_values
            with np.errstate(divide="ignore", invalid="ignore"):
                values[:, j_pct] = np.where(proc_values > 0, values[:, j_ra] / proc_values, np.nan)
        notes.append(f"PROC and PctPROC use the candidate pool {pool_res.run}")
    return assemble(res.run, res.measures, res.query_ids, values, notes, res.options)
