"""Per-query values of the selected measures, the way trec_eval 10.0's main loop produces them.

trec_eval evaluates every query of the qrels, in ``strcmp`` order of query ids (``trec_eval.c``). A query
the run lacks is an error unless ``-c``; with ``-c`` it is ranked against a placeholder document that no
qrels lists (see :mod:`ranklens.trec_eval.inputs`), after which trec_eval clears a few values computed
from that placeholder: ``num_ret``, ``utility``, ``relstring`` (only under these exact printed names),
every ``unj*`` value and ``rbp_resid``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.alignment import align
from ranklens.engine.kernels import kernel_for
from ranklens.engine.kernels._common import segment_cumsum
from ranklens.engine.ranked import NONPOOL, UNJUDGED, RankedLists
from ranklens.measures.base import Measure
from ranklens.trec_eval.table import Selected
from ranklens.trec_eval.values import QueryValues

__all__ = ["QueryValues", "compute", "relstrings"]

_RESET_EXACT = frozenset({"num_ret", "utility", "rbp_resid"})


def compute(
    qrels: Qrels,
    run: Run,
    selected: Sequence[Selected],
    *,
    placeholder_queries: Sequence[str] = (),
    judged_only: bool = False,
    max_docs: int | None = None,
    rel_level: int = 1,
    skip: frozenset[str] = frozenset(),
) -> QueryValues:
    """Align ``run`` with ``qrels`` (queries of both) and compute every selected column (``rel_level``
    is ``-l``, which the measures already carry; ``yaap`` has no ranklens measure and takes it here). The
    printed columns in ``skip`` are left out (another backend computed them)."""
    lists, _ = align(qrels, run, query_set="intersect", judged_only=judged_only, max_docs=max_docs)
    query_ids = lists.query_ids.to_pylist()
    placeholder = np.isin(np.asarray(query_ids, dtype=object), np.asarray(list(placeholder_queries), dtype=object))
    cache: dict[Measure, np.ndarray] = {}
    numbers: dict[str, np.ndarray] = {}
    texts: dict[str, list[str]] = {}
    for sel in selected:
        if sel.entry.value == "runid":
            continue
        for printed, m in sel.columns:
            if printed in skip:
                continue
            if sel.entry.name == "yaap":
                numbers[printed] = yaap(lists, rel_level)
                continue
            if m is None:
                strings = relstrings(lists, sel.relstring_len)
                if printed == "relstring":
                    strings = ["" if p else s for s, p in zip(strings, placeholder.tolist())]
                texts[printed] = strings
                continue
            if m not in cache:
                cache[m] = np.asarray(kernel_for(m)(lists, m), dtype=np.float64)
            values = cache[m]
            if placeholder.any() and (printed in _RESET_EXACT or printed.startswith("unj")):
                values = np.where(placeholder, 0.0, values)
            numbers[printed] = values
    return QueryValues(query_ids, numbers, texts, placeholder)


def yaap(lists: RankedLists, rel_level: int) -> np.ndarray:
    """trec_eval's ``yaap`` per query (``m_yaap.c``): ``log((1 + S) / (1 + R - S))`` with ``S`` the sum of
    precision at each relevant retrieved rank (AP before dividing by R).

    Relevant means a code ``>= rel_level`` as in the C comparison (with ``-l`` at or below -1 a document
    outside the qrels counts); R counts the judged labels that are ``>= 0`` and ``>= rel_level``.
    """
    relevant = lists.labels >= rel_level  # the C comparison on relevance codes (not kernels' `relevant`)
    hits = segment_cumsum(relevant.astype(np.float64), lists.offsets)
    s = lists.per_query_sum(np.where(relevant, hits / (lists.rank0 + 1.0), 0.0))
    big_r = lists.per_query_count((lists.ideal_labels >= 0) & (lists.ideal_labels >= rel_level), ideal=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log((1.0 + s) / (1.0 + big_r - s))


_CHARS = np.frombuffer(b"0123456789", dtype=np.uint8)


def relstrings(lists: RankedLists, length: int) -> list[str]:
    """trec_eval's relstring per query (m_relstring.c): one character per document of the top ``length``:
    the label if 0–9, ``>`` above 9, ``-`` not in the qrels, ``.`` pooled but unjudged, ``<`` otherwise."""
    top = lists.rank0 < length
    lab = lists.labels[top]
    code = np.full(lab.shape, ord("<"), dtype=np.uint8)
    digit = (lab >= 0) & (lab <= 9)
    code[digit] = _CHARS[lab[digit]]
    code[lab > 9] = ord(">")
    code[lab == NONPOOL] = ord("-")
    code[lab == UNJUDGED] = ord(".")
    text = code.tobytes().decode("ascii")
    counts = np.bincount(lists.row_query[top], minlength=lists.num_queries)
    ends = np.cumsum(counts)
    return [text[e - c : e] for c, e in zip(counts.tolist(), ends.tolist())]
