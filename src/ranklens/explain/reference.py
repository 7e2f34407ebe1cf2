"""The worked computation of one measure for one query on the reference engine: the numpy kernels' own
intermediates (:func:`~ranklens.engine.kernels.dcg.dcg_parts`). :func:`ranklens.explain.explain` chooses
this backend when the compiled pass declines (:func:`ranklens.backends.choose_backend`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklens.engine.evaluator import Evaluator
from ranklens.engine.kernels import kernel_for
from ranklens.engine.kernels._common import discounts
from ranklens.engine.kernels.dcg import DcgParts, dcg_parts
from ranklens.engine.ranked import NONPOOL, UNJUDGED, RankedLists
from ranklens.errors import InputError, did_you_mean
from ranklens.explain.model import TIES_TEXT, Explanation, gain_text, ideal_text, label_text
from ranklens.measures.base import Measure
from ranklens.measures.language import parse_many

__all__ = ["reference_explanation"]

_DCG_FAMILIES = ("nDCG", "DCG", "IDCG")


def reference_explanation(qrels: Any, run: Any, query: str, measure: Measure | str, **options: Any) -> Explanation:
    """Explain ``measure`` for ``query``: the per-rank table, the ideal ordering and the final value.

    >>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
    >>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
    >>> e = reference_explanation(qrels, run, "q1", "nDCG@5")
    >>> round(e.dcg, 3), round(e.idcg, 3), round(e.value, 3)
    (5.361, 5.893, 0.91)
    """
    measures = parse_many([measure])
    if len(measures) != 1:
        raise InputError(f"explain takes one measure; '{measure}' gives {len(measures)}")
    m = measures[0]
    ev = Evaluator([m], qrels, **options)
    order = "input" if dict(m.params).get("ties") == "input" else "score"
    ev.depth = None  # (every retrieved row: the table says how many the query has, not how many the cutoff reads)
    lists, _ = ev.align(run, order=order)  # notes about other queries do not concern this one
    notes: list[str] = []
    ids = lists.query_ids.to_pylist()
    if query not in ids:
        in_qrels = query in ev.qrels.query_ids.to_pylist()
        if in_qrels:  # judged, but the run has nothing for it: a suggestion of another query would mislead
            raise InputError(f"the run has no results for query '{query}' (it is in the qrels)")
        hint = did_you_mean(query, ids)
        raise InputError(f"query '{query}' is not in the qrels{hint or f'; judged queries: {ids[:5]}...'}")
    qi = ids.index(query)
    if "intents" in m.family.needs:
        from ranklens.engine.evaluator import intent_columns

        value = float(intent_columns(lists, ev.intents, [m])[0][qi])
        return _explain_intents(lists, ev.intents, qi, m, value)
    value = float(kernel_for(m)(lists, m)[qi])
    if m.name in _DCG_FAMILIES:
        return _explain_dcg(lists, qi, m, value, notes)
    return _explain_binary(lists, qi, m, value, notes)


def _label_text(label: float) -> str:
    return label_text(label, NONPOOL, UNJUDGED)


def _explain_dcg(lists: RankedLists, qi: int, m: Measure, value: float, notes: list[str]) -> Explanation:
    """The ranking and ideal tables of one query from the kernel's own intermediates (:func:`dcg_parts`)."""
    parts = dcg_parts(lists, m)
    lo, hi = int(lists.offsets[qi]), int(lists.offsets[qi + 1])
    k = m.cutoff
    labels = lists.labels[lo:hi]
    d = discounts(np.arange(hi - lo), m)
    rows = []
    running = 0.0
    limit = (hi - lo) if k is None else min(k, hi - lo)
    doc_ids = lists.doc_ids
    for i in range(limit):
        contribution = float(parts.contribution[lo + i])
        running += contribution
        rows.append(
            {
                "rank": i + 1,
                "doc": doc_ids[int(lists.docs[lo + i])].as_py(),
                "score": float(lists.scores[lo + i]),
                "label": _label_text(labels[i].item()),
                "gain": float(parts.gain[lo + i]),
                "discount": float(d[i]),
                "contribution": contribution,
                "running": running,
            }
        )
    ideal_rows = _ideal_rows(lists, qi, m, parts)
    ties = dict(m.params).get("ties", "trec") if any(p.name == "ties" for p in m.family.params) else None
    settings = {
        "gain": gain_text(m.get("gain")),
        "discount": {"log2": "1/log2(rank+1)", "log": f"1/log{m.get('base')}(rank+1)"}.get(
            m.get("discount"), f"Järvelin–Kekäläinen, base {m.get('base')}"
        ),
        "ideal": _ideal_text(m),
        "ties": "n/a" if ties is None else TIES_TEXT[ties],
        "cutoff": f"@{k}" if k is not None else "none (all retrieved)",
    }
    if ties == "average":
        notes = [*notes, "gain column shows the mean gain of each tie group (tie-averaged DCG)"]
        if parts.ideal_from == "run" and k is not None:
            pooled = int(np.count_nonzero(parts.ideal_query == qi))
            notes.append(
                "the ideal pool takes whole tie groups that start within the depth (every document within it in "
                f"some ordering of the ties): {pooled} document(s) with a positive gain"
            )
    if parts.min_dcg is not None:
        notes.append("norm=minmax: DCG counts negative labels as negative gains; nDCG = (DCG − minDCG) / (IDCG − minDCG)")
    return Explanation(
        m, lists.query_ids[qi].as_py(), rows, ideal_rows, value, float(parts.dcg[qi]), float(parts.idcg[qi]),
        settings, notes, hi - lo, None if parts.min_dcg is None else float(parts.min_dcg[qi]),
    )


def _ideal_rows(lists: RankedLists, qi: int, m: Measure, parts: DcgParts) -> list[dict[str, Any]]:
    """The entries of the kernel's ideal ranking of query ``qi`` that count (within the cutoff)."""
    k = m.cutoff
    entries = np.flatnonzero(parts.ideal_query == qi)
    if k is not None:
        entries = entries[parts.ideal_rank0[entries] < k]
    rows = []
    running = 0.0
    top = m.get("max_rel") or lists.max_label() if parts.ideal_from == "max" else None
    for j in entries:
        src = int(parts.ideal_source[j])
        if parts.ideal_from == "qrels":
            doc = lists.qrels_doc_ids[int(lists.ideal_docs[src])].as_py()
            label = _label_text(lists.ideal_labels[src].item())
        elif parts.ideal_from == "run":
            doc = lists.doc_ids[int(lists.docs[src])].as_py()
            label = _label_text(lists.labels[src].item())
        else:
            doc, label = "(max grade)", str(top)
        rank0 = int(parts.ideal_rank0[j])
        contribution = float(parts.ideal_contribution[j])
        running += contribution
        rows.append(
            {"rank": rank0 + 1, "doc": doc, "label": label, "gain": float(parts.ideal_gain[j]),
             "discount": float(discounts(np.array([rank0]), m)[0]), "contribution": contribution, "running": running}
        )
    return rows


def _explain_binary(lists: RankedLists, qi: int, m: Measure, value: float, notes: list[str]) -> Explanation:
    lo, hi = int(lists.offsets[qi]), int(lists.offsets[qi + 1])
    names = {p.name for p in m.family.params}
    rel = m.get("rel") if "rel" in names else 1
    k = m.cutoff
    limit = (hi - lo) if k is None else min(k, hi - lo)
    rows = []
    found = 0
    for i in range(limit):
        lab = lists.labels[lo + i].item()
        is_rel = lab >= rel and lab >= 0
        found += is_rel
        rows.append(
            {
                "rank": i + 1,
                "doc": lists.doc_ids[int(lists.docs[lo + i])].as_py(),
                "score": float(lists.scores[lo + i]),
                "label": _label_text(lab),
                "relevant": "yes" if is_rel else "no",
                "relevant_so_far": found,
                "precision": found / (i + 1),
            }
        )
    settings = {"relevant": f"label ≥ {rel}", "cutoff": f"@{k}" if k is not None else "none (all retrieved)",
                "relevant judged (R)": str(int(lists.num_relevant(rel)[qi]))}
    return Explanation(m, lists.query_ids[qi].as_py(), rows, [], value, None, None, settings, notes, hi - lo)


def _explain_intents(lists: RankedLists, intents: Any, qi: int, m: Measure, value: float) -> Explanation:
    """The ranking of one query with the intents each document covers and its novelty gain G[j] (from the
    kernels' own primitives: :func:`~ranklens.engine.intents.intent_pairs`, ``alpha_dcg_rows``)."""
    from ranklens.engine.intents import intent_pairs
    from ranklens.engine.kernels.diversity import alpha_dcg_rows
    from ranklens.engine.kernels.intent_aware import intents_per_query

    pairs = intent_pairs(intents, lists, int(m.get("rel")))
    alpha = float(m.get("alpha")) if any(p.name == "alpha" for p in m.family.params) else 0.5
    gain = alpha_dcg_rows(pairs.row, pairs.row_intent, lists.labels.shape[0], alpha)
    covered = np.bincount(pairs.row, minlength=lists.labels.shape[0])
    lo, hi = int(lists.offsets[qi]), int(lists.offsets[qi + 1])
    limit = (hi - lo) if m.cutoff is None else min(m.cutoff, hi - lo)
    rows = [
        {
            "rank": i + 1,
            "doc": lists.doc_ids[int(lists.docs[lo + i])].as_py(),
            "score": float(lists.scores[lo + i]),
            "intents": int(covered[lo + i]),
            "gain": float(gain[lo + i]),
        }
        for i in range(limit)
    ]
    settings = {
        "relevant": f"intent label ≥ {m.get('rel')}",
        "intents of the query (S)": str(int(intents_per_query(lists, pairs)[qi])),
        "gain": f"G_j = Σ over the document's intents of (1 − α)^(times covered above), α = {alpha:g}",
        "cutoff": f"@{m.cutoff}" if m.cutoff is not None else "none (all retrieved)",
    }
    return Explanation(m, lists.query_ids[qi].as_py(), rows, [], value, None, None, settings, [], hi - lo)


def _ideal_text(m: Measure) -> str:
    ideal = m.get("ideal") if m.name != "DCG" else "global"
    return ideal_text(m.name, ideal, m.get("depth") if ideal == "recall" else None, m.get("max_rel") if ideal == "max" else None)
