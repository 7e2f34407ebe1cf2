"""The intent-aware measures over a run and intent-level qrels (:func:`evaluate_diversity`), and α-nDCG@k
with a greedy ideal (Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher, MacKinnon, SIGIR 2008).

For intents i and J(d, i) ∈ {0, 1} (the intent label of d is ≥ ``rel``), with c_{i,j−1} the number of
documents above rank j that cover i:

    G[j] = Σ_i J(d_j, i)·(1 − α)^{c_{i,j−1}},   α-DCG@k = Σ_{j ≤ k} G[j] / log2(1 + j),
    α-nDCG@k = α-DCG@k / α-IDCG@k   (0 when α-IDCG@k = 0; the query still counts in the mean).

The ideal ranking is NP-hard; like every evaluation tool we use the greedy one: at each rank take the
judged document with the largest marginal gain given the intents already covered. **Tie-break**: among
documents whose marginal gains are equal (compared after rounding to 12 decimals, so that sums computed
in different orders tie), the largest document id in byte order wins, as ndeval's ``idealResult``. The run is ranked by the engine:
score descending, ties by document id descending (trec_eval), and queries follow the ``missing`` policy.

Vectorised: one join of retrieved rows to (document, intent) pairs and one sort give every c_{i,j−1}
(:func:`ranklens.engine.intents.intent_pairs`); the kernel (:mod:`ranklens.engine.kernels.diversity`) computes α-DCG from
them and runs the greedy ideal one numpy step per rank (k steps), each over all queries at once.
"""

from __future__ import annotations

from typing import Any

from ranklens.data.intents import read_intent_qrels
from ranklens.data.run import Run
from ranklens.engine.alignment import align
from ranklens.engine.intents import intent_values, is_intent_measure
from ranklens.errors import InputError, MeasureError
from ranklens.measures.base import Measure
from ranklens.measures.diversity import ALPHA_NDCG
from ranklens.measures.language import MeasuresArg, parse_many
from ranklens.results.core import Results, aggregate, stack_columns

__all__ = ["alpha_ndcg", "evaluate_diversity"]

_MISSING = {"skip": "intersect", "zero": "qrels", "error": "error"}


def evaluate_diversity(
    qrels: Any,
    run: Any,
    measures: MeasuresArg = ("alpha-nDCG@10",),
    *,
    missing: str = "skip",
    name: str | None = None,
) -> Results:
    """Evaluate intent-aware measures of ``run`` against intent-level ``qrels``.

    Args:
        qrels: intent qrels (a path to ``qid intent docid rel`` lines, a dict ``{qid: {intent: {doc:
            rel}}}``, a table, or :class:`IntentQrels`).
        run: a :class:`~ranklens.Run`, a path or a ``{qid: {doc: score}}`` dict.
        measures: intent-aware measures: ``alpha-nDCG@k``, ``alpha-DCG@k``, ``ERR-IA@k``, ``nERR-IA@k``,
            ``NRBP``, ``nNRBP``, ``P-IA@k``, ``AP-IA``, ``StRecall@k`` (parameters ``alpha``, default 0.5,
            ``beta`` (NRBP), default 0.5, and ``rel``, default 1).
        missing: queries of the qrels absent from the run: ``skip``, ``zero`` or ``error`` (as ``ranklens eval``).

    Spec §7.10: d1{i1,i2}, d2{i1}, d3{i3}, d4{}, d5{i2,i3}; ranking d2, d1, d4, d5, d3; α = 0.5.

    >>> qrels = {"q": {"i1": {"d1": 1, "d2": 1}, "i2": {"d1": 1, "d5": 1}, "i3": {"d3": 1, "d5": 1}}}
    >>> run = {"q": {"d2": 5.0, "d1": 4.0, "d4": 3.0, "d5": 2.0, "d3": 1.0}}
    >>> res = evaluate_diversity(qrels, run, ["alpha-nDCG@5", "alpha-nDCG@3"])
    >>> [round(v, 6) for v in res.aggregates]
    [0.816546, 0.608934]
    """
    iq = read_intent_qrels(qrels)
    ms = _measures(measures)
    if missing not in _MISSING:
        raise InputError(f"missing-query policy must be skip, zero or error; got {missing!r}")
    r = _as_run(run, name)
    lists, report = align(iq.to_qrels(), r, query_set=_MISSING[missing])  # type: ignore[arg-type]
    notes = list(dict.fromkeys(report.messages()))
    query_ids = tuple(lists.query_ids.to_pylist())
    columns = intent_values(lists, iq, ms)
    values = stack_columns(columns, len(query_ids))
    aggs = tuple(aggregate(m, values[:, j]) for j, m in enumerate(ms))
    return Results(r.name, ms, query_ids, values, aggs, tuple(notes), {"missing": missing})


def alpha_ndcg(qrels: Any, run: Any, *, k: int = 10, alpha: float = 0.5, rel: int = 1, missing: str = "skip") -> Results:
    """α-nDCG@k of ``run``: :func:`evaluate_diversity` with one measure.

    >>> qrels = {"q": {"i1": {"a": 1}, "i2": {"b": 1}}}
    >>> round(alpha_ndcg(qrels, {"q": {"a": 2.0, "c": 1.0, "b": 0.5}}, k=3, alpha=0.5)["alpha-nDCG@3"], 6)
    0.919721
    """
    m = Measure.build(ALPHA_NDCG, {"alpha": alpha, "rel": rel}, k)
    return evaluate_diversity(qrels, run, [m], missing=missing)


def _measures(measures: MeasuresArg) -> tuple[Measure, ...]:
    out: list[Measure] = []
    for m in parse_many(measures):  # (a name, a measure or an iterable of them: measure_items)
        if not is_intent_measure(m):
            raise MeasureError(
                f"'{m}' is not a diversity measure (an intent-aware one); ranklens diversity computes alpha-nDCG@k, alpha-DCG@k, "
                "ERR-IA@k, nERR-IA@k, NRBP, nNRBP, P-IA@k, AP-IA and StRecall@k"
            )
        m = m.validate()
        if m not in out:
            out.append(m)
    if not out:
        raise InputError("no measure given; e.g. alpha-nDCG@10")
    return tuple(out)


def _as_run(source: Any, name: str | None) -> Run:
    if isinstance(source, Run):
        return source
    if isinstance(source, dict):
        return Run.from_dict(source, name=name or "run")
    from ranklens.data.io import read_run

    return read_run(source, name=name)
