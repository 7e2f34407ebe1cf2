"""The worked computation of one measure for one query from the compiled pass: what ``_cexpress.c`` records
while it evaluates the query (``trace_queries``/``traced``: per rank the document, score, label, discount and
DCG term, the relevant rows so far; the ideal ranking; the value, DCG and IDCG as its kernel sums them),
put into an :class:`~ranklens.explain.model.Explanation`. Nothing here computes a number the pass did not
(the running sums are the pass's terms added in rank order, as its kernel adds them, and precision is the
relevant rows so far over the rank, as the reference's table shows it). No numpy, no pyarrow."""

from __future__ import annotations

from ranklens.explain.model import TIES_TEXT, Explanation, gain_text, ideal_text, label_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ranklens.express import ExpressMeasure
    from ranklens.measures.base import Measure

__all__ = ["compiled_explanation", "explanation_of"]

#: the label the pass gives a row whose document the qrels do not judge
NOT_JUDGED = -1


def compiled_explanation(
    qrels: Any, run: Any, query: str, measure: Measure | ExpressMeasure, why: list[str], policy: Any = None
) -> Explanation | None:
    """The explanation of ``measure`` for ``query`` from the compiled pass over ``qrels`` and ``run`` (files,
    or data in memory the in-memory pass takes: :mod:`ranklens.memory`), or None when it declines (what it
    found appended to ``why``; a query it did not evaluate too: the reference then says what is wrong with it).

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "q.txt").write_text("q1 0 d1 3\\nq1 0 d2 1\\n")
    >>> _ = (d / "r.txt").write_text("q1 Q0 d2 1 2.0 s\\nq1 Q0 d1 2 1.0 s\\n")
    >>> from ranklens.express import ExpressMeasure
    >>> e = compiled_explanation(str(d / "q.txt"), str(d / "r.txt"), "q1", ExpressMeasure("nDCG", 2), [])
    >>> [r["doc"] for r in e.rows], [r["doc"] for r in e.ideal_rows], round(e.value, 6)
    (['d2', 'd1'], ['d1', 'd2'], 0.796708)
    """
    from ranklens.express import evaluate_express

    traced: dict[str, tuple[Any, ...]] = {}
    if not isinstance(query, str):
        why.append(f"query {query!r} is not a str (the reference says whether it names one)")
        return None
    if isinstance(qrels, str) and isinstance(run, str):
        results = evaluate_express(qrels, [run], [measure], why=why, trace=(query,), traced=traced)
    else:
        from ranklens.memory import evaluate_memory

        results = evaluate_memory(qrels, run, [measure], policy, why, trace=(query,), traced=traced)
    if results is None:
        return None
    got = traced.get(query)
    if got is None:
        why.append(f"query {query!r} is not among the queries it evaluated (the reference says why)")
        return None
    return explanation_of(measure, query, got)


def explanation_of(measure: Measure | ExpressMeasure, query: str, got: tuple[Any, ...]) -> Explanation:
    """The :class:`Explanation` of what the pass recorded for one query (``_cexpress.traced``'s item)."""
    (retrieved, docs, scores, labels, discounts, terms, hits, num_rel, ideal_docs, ideal_labels, ideal_terms,
     ideal_discounts, values, dcgs, idcgs) = got
    k = measure.cutoff
    limit = retrieved if k is None else min(k, retrieved)
    cutoff = f"@{k}" if k is not None else "none (all retrieved)"
    shown = [label_text(lab, NOT_JUDGED, None) for lab in labels[:limit]]  # type: ignore[arg-type]
    if measure.name not in ("nDCG", "DCG"):  # AP, P, R, RR: relevant is label >= 1
        rows = [
            {"rank": i + 1, "doc": docs[i], "score": scores[i], "label": shown[i],
             "relevant": "yes" if labels[i] >= 1 else "no", "relevant_so_far": hits[i], "precision": hits[i] / (i + 1)}
            for i in range(limit)
        ]
        settings = {"relevant": "label ≥ 1", "cutoff": cutoff, "relevant judged (R)": str(num_rel)}
        return Explanation(measure, query, rows, [], values[0], None, None, settings, [], retrieved)
    rows, running = [], 0.0
    for i in range(limit):
        running += terms[i]
        rows.append(
            {"rank": i + 1, "doc": docs[i], "score": scores[i], "label": shown[i], "gain": float(max(labels[i], 0)),
             "discount": discounts[i], "contribution": terms[i], "running": running}
        )
    ideal_rows, running = [], 0.0
    for r in range(num_rel if k is None else min(k, num_rel)):
        running += ideal_terms[r]
        ideal_rows.append(
            {"rank": r + 1, "doc": ideal_docs[r], "label": str(ideal_labels[r]), "gain": float(ideal_labels[r]),
             "discount": ideal_discounts[r], "contribution": ideal_terms[r], "running": running}
        )
    settings = {
        "gain": gain_text("linear"),
        "discount": "1/log2(rank+1)",
        "ideal": ideal_text(measure.name, "global"),
        "ties": TIES_TEXT["trec"],
        "cutoff": cutoff,
    }
    return Explanation(measure, query, rows, ideal_rows, values[0], dcgs[0], idcgs[0], settings, [], retrieved)
