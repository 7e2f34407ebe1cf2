"""Which documents changed the number: the exact decomposition of B − A into per-document contributions.

Every supported measure is a sum of one term per ranked document (:mod:`.terms`); a document's contribution
is its term in run B minus its term in run A, so the contributions of a query add up to the query's change
*exactly* (to rounding), and their mean over queries to the change of the mean. For RR, which is not
additive, the term of a document is 1/rank when it is the first relevant document and 0 otherwise: the
change is attributed to the first relevant documents of A and of B (+1/rank_B to B's, −1/rank_A to A's,
their difference to one document when it is the same). For AP it is each relevant document's precision at
its rank over R: a document that did not move still contributes when the documents above it changed.

``kind``: ``entered`` (within the measure's cutoff in B, not in A), ``left`` (in A, not in B), ``moved``
(in both; its rank, or for AP its precision, changed). The ranking of each run is the engine's own
(:meth:`ranklens.Evaluator.align`: score descending, then document id descending, as trec_eval), and the
values are :func:`ranklens.evaluate`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.engine.evaluator import Evaluator, _as_run
from ranklens.engine.ranked import RankedLists
from ranklens.errors import InputError
from ranklens.measures.base import Measure
from ranklens.measures.language import parse_many
from ranklens.research.overlap import kendall_tau, rbo
from ranklens.research.terms import check_supported, document_terms

__all__ = ["Contribution", "MeasureDiff", "RunDiff", "diff_runs"]


@dataclass(frozen=True)
class Contribution:
    """One document's share of a query's change."""

    doc: str
    kind: str
    value: float
    rank_a: int | None
    rank_b: int | None


@dataclass(frozen=True)
class MeasureDiff:
    """The change of one measure: means over the compared queries, and per query."""

    measure: str
    value_a: float
    value_b: float
    delta: float
    by_kind: dict[str, float]
    per_query: dict[str, tuple[float, list[Contribution]]]


@dataclass(frozen=True)
class RunDiff:
    """What :func:`diff_runs` returns."""

    measures: list[MeasureDiff]
    overlap: dict[str, dict[str, Any]]
    compared: list[str]
    only_a: list[str]
    only_b: list[str]
    k: int
    p: float
    notes: list[str] = field(default_factory=list)
    #: per run (``a``, ``b``): the qrels' queries it has no results for, and its queries the qrels do not judge
    unanswered: dict[str, list[str]] = field(default_factory=dict)
    not_in_qrels: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``ranklens diff -f json`` document."""
        out: dict[str, Any] = {
            "k": self.k, "rbo_p": self.p, "queries_compared": len(self.compared), "queries": self.compared,
            "unanswered": self.unanswered, "not_in_qrels": self.not_in_qrels,
            "only_in_a": self.only_a, "only_in_b": self.only_b, "notes": self.notes, "measures": {},
        }
        for md in self.measures:
            out["measures"][md.measure] = {
                "a": md.value_a, "b": md.value_b, "delta": md.delta, "by_kind": md.by_kind,
                "per_query": {
                    q: {"delta": d, "contributions": [c.__dict__ for c in cs]} for q, (d, cs) in md.per_query.items()
                },
            }
        out["per_query"] = self.overlap
        return out


def _ranking(lists: RankedLists, qi: int) -> tuple[list[str], np.ndarray, int, int]:
    lo, hi = int(lists.offsets[qi]), int(lists.offsets[qi + 1])
    docs = lists.doc_ids.take(lists.docs[lo:hi]).to_pylist()
    return [str(d) for d in docs], lists.scores[lo:hi], lo, hi


def diff_runs(qrels: Any, run_a: Any, run_b: Any, measures: Any, *, k: int = 10, p: float = 0.9,
              **options: Any) -> RunDiff:
    """Decompose the change from ``run_a`` to ``run_b`` of each measure into per-document contributions,
    with the tie-aware RBO and Kendall's τ of the two rankings at ``k`` per query.

    >>> qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    >>> d = diff_runs(qrels, {"q": {"a": 3.0, "b": 2.0}}, {"q": {"c": 3.0, "a": 2.0}}, "P@2")
    >>> md = d.measures[0]
    >>> md.delta, [(c.doc, c.kind, c.value) for c in md.per_query["q"][1]]
    (0.5, [('c', 'entered', 0.5)])
    """
    parsed = parse_many(measures)
    for m in parsed:
        check_supported(m)
    if k < 1:
        raise InputError(f"diff: -k must be a positive integer; got {k}")
    ev = Evaluator(parsed, qrels, **options)
    run_a, run_b = (_as_run(r, columns=ev.run_columns, format=ev.run_format) for r in (run_a, run_b))
    res_a, res_b = ev(run_a, warn=False), ev(run_b, warn=False)
    notes = [f"A: {n}" for n in res_a.notes] + [f"B: {n}" for n in res_b.notes]
    whole = Evaluator(parsed, qrels, **options)
    whole.depth = None  # the whole rankings (not only the rows the measures read): true ranks, ties past k
    lists: dict[str, tuple[RankedLists, RankedLists]] = {}
    for order in sorted({_order(m) for m in parsed}, reverse=True):  # "score" first
        lists[order] = (whole.align(run_a, order=order)[0], whole.align(run_b, order=order)[0])
    first = lists[next(iter(lists))]
    ids_a = [str(q) for q in first[0].query_ids.to_pylist()]
    ids_b = [str(q) for q in first[1].query_ids.to_pylist()]
    compared = sorted(set(ids_a) & set(ids_b))
    if not compared:
        raise InputError("diff: the two runs share no evaluated query")
    only_a, only_b = sorted(set(ids_a) - set(ids_b)), sorted(set(ids_b) - set(ids_a))
    if only_a or only_b:
        notes.append(f"compared the {len(compared)} queries both runs answer; left out: "
                     f"{len(only_a)} only in A{_listed(only_a)}, {len(only_b)} only in B{_listed(only_b)}")
    out = [_measure_diff(m, res_a, res_b, *lists[_order(m)], compared) for m in parsed]
    la, lb = first
    index_a, index_b = {q: i for i, q in enumerate(ids_a)}, {q: i for i, q in enumerate(ids_b)}
    overlap: dict[str, dict[str, Any]] = {}
    for q in compared:
        da, sa, _, _ = _ranking(la, index_a[q])
        db, sb, _, _ = _ranking(lb, index_b[q])
        top_a, top_b = set(da[:k]), set(db[:k])
        overlap[q] = {
            "rbo": rbo(da, sa, db, sb, k, p), "kendall_tau": kendall_tau(da, sa, db, sb, k),
            "entered": [d for d in db[:k] if d not in top_a], "left": [d for d in da[:k] if d not in top_b],
        }
    judged = {str(q) for q in ev.qrels.query_ids.to_pylist()}
    asked = {"a": {str(q) for q in run_a.query_ids.to_pylist()}, "b": {str(q) for q in run_b.query_ids.to_pylist()}}
    unanswered = {r: sorted(judged - qs) for r, qs in asked.items()}
    not_in_qrels = {r: sorted(qs - judged) for r, qs in asked.items()}
    for r in ("a", "b"):
        if unanswered[r]:
            n = len(unanswered[r])
            notes.append(f"{r.upper()} has no results for {n} qrels quer{'y' if n == 1 else 'ies'}{_listed(unanswered[r])}")
        if not_in_qrels[r]:
            n = len(not_in_qrels[r])
            notes.append(f"{r.upper()} has {n} quer{'y' if n == 1 else 'ies'} the qrels do not judge{_listed(not_in_qrels[r])}")
    return RunDiff(out, overlap, compared, only_a, only_b, k, p, notes, unanswered, not_in_qrels)


def _listed(ids: list[str], most: int = 10) -> str:
    if not ids:
        return ""
    return " (" + ", ".join(ids[:most]) + (", …" if len(ids) > most else "") + ")"


def _order(m: Measure) -> str:
    return "input" if dict(m.params).get("ties") == "input" else "score"


def _measure_diff(m: Measure, res_a: Any, res_b: Any, la: RankedLists, lb: RankedLists,
                  compared: list[str]) -> MeasureDiff:
    va = {str(q): v for q, v in res_a.per_query(m).items()}
    vb = {str(q): v for q, v in res_b.per_query(m).items()}
    ta, tb = document_terms(la, m), document_terms(lb, m)
    index_a = {str(q): i for i, q in enumerate(la.query_ids.to_pylist())}
    index_b = {str(q): i for i, q in enumerate(lb.query_ids.to_pylist())}
    per_query: dict[str, tuple[float, list[Contribution]]] = {}
    by_kind = {"entered": 0.0, "left": 0.0, "moved": 0.0}
    for q in compared:
        contributions = _contributions(m, la, ta, index_a[q], lb, tb, index_b[q])
        for c in contributions:
            by_kind[c.kind] += c.value / len(compared)
        per_query[q] = (vb[q] - va[q], contributions)
    mean_a = float(np.mean([va[q] for q in compared]))
    mean_b = float(np.mean([vb[q] for q in compared]))
    return MeasureDiff(str(m), mean_a, mean_b, mean_b - mean_a, by_kind, per_query)


def _contributions(m: Measure, la: RankedLists, ta: np.ndarray, qa: int, lb: RankedLists, tb: np.ndarray,
                   qb: int) -> list[Contribution]:
    docs_a, _, lo_a, _ = _ranking(la, qa)
    docs_b, _, lo_b, _ = _ranking(lb, qb)
    depth = m.cutoff if m.cutoff is not None else max(len(docs_a), len(docs_b))
    rank_a = {d: i for i, d in enumerate(docs_a)}
    rank_b = {d: i for i, d in enumerate(docs_b)}
    out = []
    for doc in dict.fromkeys(docs_b + docs_a):  # B's order first, then what only A has
        ia, ib = rank_a.get(doc), rank_b.get(doc)
        term_a = float(ta[lo_a + ia]) if ia is not None else 0.0
        term_b = float(tb[lo_b + ib]) if ib is not None else 0.0
        if term_a == term_b:
            continue
        in_a, in_b = ia is not None and ia < depth, ib is not None and ib < depth
        kind = "moved" if in_a and in_b else "entered" if in_b else "left"
        out.append(Contribution(doc, kind, term_b - term_a, None if ia is None else ia + 1,
                                None if ib is None else ib + 1))
    return out
