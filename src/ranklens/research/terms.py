"""Each supported measure written as a sum over ranked documents: one term per retrieved row, summing per
query to the engine's value. The decomposition of a change (:mod:`.diff`) is the change of each document's
term, so the terms must add up to what :func:`ranklens.evaluate` computes (checked by the tests).

- DCG@k: term = g(label)/discount(rank) within k.  nDCG@k: the DCG term over the query's IDCG@k (the
  engine's own :func:`~ranklens.engine.kernels.dcg.idcg`).
- P@k: 1/k for each relevant document within k.
- RR@k: 1/rank for the first relevant document within k, 0 for every other document.
- AP@k: for each relevant document within k, its precision at its rank over R (trec_eval's sum).
"""

from __future__ import annotations

import numpy as np

from ranklens.engine.kernels._common import discount_divisors, rel_threshold, relevant, segment_cumsum, within
from ranklens.engine.kernels.dcg import idcg, row_gains
from ranklens.engine.ranked import RankedLists
from ranklens.errors import InputError
from ranklens.measures.base import Measure

__all__ = ["SUPPORTED", "document_terms", "check_supported"]

#: the measure families whose change is decomposed into documents
SUPPORTED = ("nDCG", "DCG", "P", "RR", "AP")


def check_supported(m: Measure) -> None:
    """Raise :class:`InputError` (one line) when ``m`` cannot be decomposed into per-document terms.

    >>> from ranklens.measures import parse
    >>> check_supported(parse("R@10"))
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: diff: R@10 cannot be decomposed into documents; supported: nDCG, DCG, P, RR, AP
    """
    if m.name not in SUPPORTED:
        raise InputError(f"diff: {m} cannot be decomposed into documents; supported: {', '.join(SUPPORTED)}")
    params = dict(m.params)
    if params.get("ties") == "average":
        raise InputError(f"diff: {m}: ties=average is an expectation over orderings, not a sum over ranked documents")
    if params.get("norm") == "minmax" or params.get("judged_only"):
        raise InputError(f"diff: {m}: this parameter is not supported by the decomposition")


def document_terms(lists: RankedLists, m: Measure) -> np.ndarray:
    """The term of every retrieved row of ``lists`` for measure ``m`` (see the module's docstring).

    >>> from ranklens import Evaluator
    >>> from ranklens.measures import parse
    >>> lists, _ = Evaluator("AP", {"q": {"a": 1, "c": 1}}).align({"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    >>> document_terms(lists, parse("AP")).round(4).tolist()  # 1/1/2, 0, (2/3)/2
    [0.5, 0.0, 0.3333]
    """
    check_supported(m)
    top = within(lists, m.cutoff)
    if m.name in ("DCG", "nDCG"):
        terms = np.where(top, row_gains(lists, m) / discount_divisors(lists.rank0, m), 0.0)
        if m.name == "DCG":
            return terms
        ideal = idcg(lists, m)[lists.row_query]
        out = np.zeros_like(terms)
        np.divide(terms, ideal, out=out, where=ideal > 0)
        return out
    rel = rel_threshold(m)
    hit = relevant(lists.labels, rel) & top
    if m.name == "P":
        return np.where(hit, 1.0 / float(m.cutoff), 0.0)  # type: ignore[arg-type]
    if m.name == "RR":
        rows = np.flatnonzero(hit)
        first = rows[np.unique(lists.row_query[rows], return_index=True)[1]]
        out = np.zeros(lists.labels.shape[0])
        out[first] = 1.0 / (lists.rank0[first] + 1.0)
        return out
    r = relevant(lists.labels, rel)
    cum = segment_cumsum(r.astype(np.float64), lists.offsets)
    big_r = lists.num_relevant(rel).astype(np.float64)[lists.row_query]
    out = np.zeros(lists.labels.shape[0])
    np.divide(cum / (lists.rank0 + 1.0), big_r, out=out, where=hit & (big_r > 0))
    return out
