"""Evaluate a RAG sample file: any ranklens measures over its qrels/run, plus RAGAS context precision/recall."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ranklens.engine.evaluator import Evaluator
from ranklens.measures.base import Measure
from ranklens.rag.context import CONTEXT_MEASURES
from ranklens.rag.convert import Judge, RagData, load_rag
from ranklens.results.core import Results, assemble

__all__ = ["DEFAULT_RAG_MEASURES", "evaluate_rag_data", "evaluate_rag_file"]

DEFAULT_RAG_MEASURES = ("P@5", "R@5", "RR", "nDCG@10")


def evaluate_rag_data(
    data: RagData, measures: Sequence[str | Measure] = DEFAULT_RAG_MEASURES, *, context: bool = True
) -> Results:
    """The ``measures`` of ``data`` (a query with an empty retrieved list scores 0), followed by
    ``ContextPrecision`` and ``ContextRecall`` when ``context``. The notes of the file come first.

    >>> from ranklens.rag.inputs import parse_samples
    >>> from ranklens.rag.convert import build_rag
    >>> data = build_rag(parse_samples("s.jsonl", '{"query": "x", "expected_ids": ["a"], "retrieved_ids": ["b", "a"]}'))
    >>> res = evaluate_rag_data(data, ["RR", "P@2"])
    >>> [str(m) for m in res.measures], res.aggregates
    (['RR', 'P@2', 'ContextPrecision', 'ContextRecall'], (0.5, 0.5, 0.5, 1.0))
    """
    res = Evaluator(list(measures), data.qrels, missing="zero")(data.run, warn=False)
    notes = [*data.notes, *(n for n in res.notes if "scored 0" not in n)]
    if not context:
        return assemble(res.run, res.measures, res.query_ids, res.values, notes, res.options)
    extra = np.array([data.context.get(q, (np.nan, np.nan)) for q in res.query_ids], dtype=np.float64).reshape(-1, 2)
    values = np.hstack([res.values, extra])
    return assemble(res.run, (*res.measures, *CONTEXT_MEASURES), res.query_ids, values, notes, res.options)


def evaluate_rag_file(
    path: str | os.PathLike[str],
    measures: Sequence[str | Measure] = DEFAULT_RAG_MEASURES,
    *,
    layout: str | None = None,
    match: str = "auto",
    grade: int | None = None,
    judge: Judge | None = None,
    context: bool = True,
) -> Results:
    """:func:`evaluate_rag_data` of the RAG sample file at ``path`` (see :func:`ranklens.rag.read_rag`).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = p.write_text('{"query": "x", "expected_ids": ["a"], "retrieved_ids": ["b", "a"]}\\n')
    >>> evaluate_rag_file(p, ["RR"]).aggregates
    (0.5, 0.5, 1.0)
    """
    data = load_rag(path, layout=layout, match=match, grade=grade, judge=judge)
    return evaluate_rag_data(data, measures, context=context)
