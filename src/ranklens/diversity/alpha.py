"""α-nDCG@k with a greedy ideal (Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher, MacKinnon, SIGIR 2008).

For intents i and J(d, i) ∈ {0, 1} (the intent label of d is ≥ ``rel``), with c_{i,j−1} the number of
documents above rank j that cover i:

    G[j] = Σ_i J(d_j, i)·(1 − α)^{c_{i,j−1}},   α-DCG@k = Σ_{j ≤ k} G[j] / log2(1 + j),
    α-nDCG@k = α-DCG@k / α-IDCG@k   (0 when α-IDCG@k = 0; the query still counts in the mean).

The ideal ranking is NP-hard; like every evaluation tool we use the greedy one: at each rank take the
judged document with the largest marginal gain given the intents already covered. **Tie-break**: among
documents whose marginal gains are equal (compared after rounding to 12 decimals, so that sums computed
in different orders tie), the smallest document id in byte order wins. The run is ranked by the engine:
score descending, ties by document id descending (trec_eval), and queries follow the ``missing`` policy.

Vectorised: one join of retrieved rows to (document, intent) pairs and one sort give every c_{i,j−1}
(here, :func:`_intent_pairs`); the kernel (:mod:`ranklens.engine.kernels.diversity`) computes α-DCG from
them and runs the greedy ideal one numpy step per rank (k steps), each over all queries at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data.run import Run
from ranklens.diversity.intents import IntentQrels, read_intent_qrels
from ranklens.engine.alignment import align
from ranklens.engine.kernels.diversity import IntentPairs, alpha_ndcg_values
from ranklens.engine.ranked import RankedLists
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
    """Evaluate α-nDCG measures of ``run`` against intent-level ``qrels``.

    Args:
        qrels: intent qrels (a path to ``qid intent docid rel`` lines, a dict ``{qid: {intent: {doc:
            rel}}}``, a table, or :class:`IntentQrels`).
        run: a :class:`~ranklens.Run`, a path or a ``{qid: {doc: score}}`` dict.
        measures: ``alpha-nDCG@k`` measures (parameters ``alpha``, default 0.5, and ``rel``, default 1).
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
    columns: list[np.ndarray] = []
    notes: list[str] = []
    query_ids: tuple[str, ...] = ()
    by_rel: dict[int, list[int]] = {}
    for j, m in enumerate(ms):
        by_rel.setdefault(int(m.get("rel")), []).append(j)
    out: dict[int, np.ndarray] = {}
    for rel, idx in by_rel.items():
        lists, report = align(iq.to_qrels(rel), r, query_set=_MISSING[missing])  # type: ignore[arg-type]
        for msg in report.messages():
            if msg not in notes:
                notes.append(msg)
        query_ids = tuple(lists.query_ids.to_pylist())
        pairs = _intent_pairs(iq, lists, rel)
        for j in idx:
            out[j] = alpha_ndcg_values(lists, pairs, ms[j])
    columns = [out[j] for j in range(len(ms))]
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


# ------------------------------------------------------------------------------- intent coverage


def _intent_pairs(iq: IntentQrels, lists: RankedLists, rel: int) -> IntentPairs:
    """Join the retrieved rows and the judged candidates of every query to the intents they cover."""
    import polars as pl

    qmap = {q: i for i, q in enumerate(lists.query_ids.to_pylist())}
    keep = iq.label >= rel
    judged = pl.DataFrame(
        {
            "q": iq.query.filter(pa.array(keep)),
            "i": iq.intent.filter(pa.array(keep)),
            "d": iq.doc.filter(pa.array(keep)),
        }
    )
    judged = judged.with_columns(pl.col("q").replace_strict(qmap, default=-1, return_dtype=pl.Int64).alias("qi"))
    judged = judged.filter(pl.col("qi") >= 0)
    # a global code per (query, intent)
    judged = judged.with_columns(pl.struct("qi", "i").rank("dense").cast(pl.Int64).sub(1).alias("intent_code"))
    num_intents = int(judged["intent_code"].to_numpy().max()) + 1 if judged.height else 0

    rows = pl.DataFrame(
        {
            "qi": lists.row_query.astype(np.int64),
            "d": lists.doc_ids.take(pa.array(lists.docs)),
            "row": np.arange(lists.labels.shape[0], dtype=np.int64),
        }
    )
    hit = rows.join(judged.select("qi", "d", "intent_code"), on=["qi", "d"], how="inner")
    hit = hit.sort(["intent_code", "row"])

    cands = judged.select("qi", "d").unique().sort(["qi", "d"])  # bytewise doc order within each query
    cands = cands.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("cand"))
    cpairs = judged.join(cands, on=["qi", "d"], how="inner")
    return IntentPairs(
        hit["row"].to_numpy(),
        hit["intent_code"].to_numpy(),
        cands["qi"].to_numpy(),
        cpairs["cand"].to_numpy(),
        cpairs["intent_code"].to_numpy(),
        num_intents,
    )


def _measures(measures: MeasuresArg) -> tuple[Measure, ...]:
    out: list[Measure] = []
    for m in parse_many(measures):  # (a name, a measure or an iterable of them: measure_items)
        if m.family != ALPHA_NDCG:
            raise MeasureError(f"'{m}' is not a diversity measure; ranklens diversity computes alpha-nDCG@k")
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
