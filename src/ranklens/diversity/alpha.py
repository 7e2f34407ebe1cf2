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

Vectorised: one join of retrieved rows to (document, intent) pairs and one sort give every c_{i,j−1};
the greedy ideal runs one numpy step per rank (k steps), each over all queries at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from ranklens.data.run import Run
from ranklens.diversity.family import ALPHA_NDCG
from ranklens.diversity.intents import IntentQrels, read_intent_qrels
from ranklens.engine.align import align
from ranklens.engine.ranked import RankedLists
from ranklens.errors import InputError, MeasureError
from ranklens.measures.base import Measure
from ranklens.measures.parse import parse
from ranklens.results import Results, aggregate, stack_columns

__all__ = ["alpha_dcg_rows", "alpha_ndcg", "evaluate_diversity", "greedy_ideal_gains"]

_MISSING = {"skip": "intersect", "zero": "qrels", "error": "error"}


def evaluate_diversity(
    qrels: Any,
    run: Any,
    measures: Iterable[Measure | str] | str = ("alpha-nDCG@10",),
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
            out[j] = _alpha_ndcg(lists, pairs, ms[j])
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


# --------------------------------------------------------------------------------------------- kernels


class _Pairs:
    """(document, intent) coverage: for retrieved rows and for the judged candidates of the ideal."""

    def __init__(self, row: np.ndarray, row_intent: np.ndarray, cand_query: np.ndarray, pair_cand: np.ndarray,
                 pair_intent: np.ndarray, num_intents: int) -> None:
        self.row = row  # retrieved row of each (row, intent) pair, sorted by (query, intent, rank)
        self.row_intent = row_intent  # global (query, intent) code of each pair
        self.cand_query = cand_query  # query of each candidate document, sorted by (query, doc id)
        self.pair_cand = pair_cand  # candidate of each (candidate, intent) pair
        self.pair_intent = pair_intent
        self.num_intents = num_intents


def _intent_pairs(iq: IntentQrels, lists: RankedLists, rel: int) -> _Pairs:
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
    return _Pairs(
        hit["row"].to_numpy(),
        hit["intent_code"].to_numpy(),
        cands["qi"].to_numpy(),
        cpairs["cand"].to_numpy(),
        cpairs["intent_code"].to_numpy(),
        num_intents,
    )


def alpha_dcg_rows(pairs_row: np.ndarray, pairs_intent: np.ndarray, num_rows: int, alpha: float) -> np.ndarray:
    """G[j] of every retrieved row, from its (row, intent) pairs sorted by (intent, rank).

    The c-th coverage of an intent (0-based) gains (1 − α)^c.

    >>> alpha_dcg_rows(np.array([0, 1, 1, 3]), np.array([0, 0, 1, 1]), 4, 0.5).tolist()
    [1.0, 1.5, 0.0, 0.5]
    """
    if pairs_row.size == 0:
        return np.zeros(num_rows)
    new = np.ones(pairs_intent.shape[0], dtype=bool)
    new[1:] = pairs_intent[1:] != pairs_intent[:-1]
    starts = np.flatnonzero(new)
    seen_before = np.arange(pairs_intent.shape[0]) - np.repeat(starts, np.diff(np.append(starts, pairs_intent.shape[0])))
    return np.bincount(pairs_row, weights=np.power(1.0 - alpha, seen_before), minlength=num_rows)


def greedy_ideal_gains(
    cand_query: np.ndarray, pair_cand: np.ndarray, pair_intent: np.ndarray, num_queries: int, num_intents: int,
    k: int, alpha: float,
) -> np.ndarray:
    """(queries × k) marginal gains of the greedy ideal; candidates sorted by (query, doc id ascending).

    Each step picks, in every query at once, the unused candidate with the largest marginal gain
    Σ_{its intents} (1 − α)^{times covered so far}; equal gains (to 12 decimals) go to the smaller doc id.

    >>> # spec §7.10: candidates d1{i1,i2}, d2{i1}, d3{i3}, d5{i2,i3} of one query
    >>> greedy_ideal_gains(np.zeros(4, int), np.array([0, 0, 1, 2, 3, 3]), np.array([0, 1, 0, 2, 1, 2]),
    ...                    1, 3, 5, 0.5).tolist()
    [[2.0, 1.5, 0.5, 0.5, 0.0]]
    """
    out = np.zeros((num_queries, k))
    ncand = cand_query.shape[0]
    if ncand == 0 or k == 0:
        return out
    covered = np.zeros(num_intents)
    used = np.zeros(ncand, dtype=bool)
    starts = np.flatnonzero(np.concatenate(([True], cand_query[1:] != cand_query[:-1])))
    segment = np.repeat(np.arange(starts.shape[0]), np.diff(np.append(starts, ncand)))
    decay = 1.0 - alpha
    for rank in range(k):  # one vectorised step per rank, over every query
        gain = np.bincount(pair_cand, weights=np.power(decay, covered[pair_intent]), minlength=ncand)
        key = np.where(used, -1.0, np.round(gain, 12))
        best = np.maximum.reduceat(key, starts)
        if not (best > 0).any():
            break
        is_best = (key == best[segment]) & (key > 0)
        chosen_all = np.flatnonzero(is_best)
        _, first = np.unique(cand_query[chosen_all], return_index=True)
        chosen = chosen_all[first]
        out[cand_query[chosen], rank] = gain[chosen]
        used[chosen] = True
        picked = np.isin(pair_cand, chosen)
        np.add.at(covered, pair_intent[picked], 1.0)
    return out


def _alpha_ndcg(lists: RankedLists, pairs: _Pairs, m: Measure) -> np.ndarray:
    alpha = float(m.get("alpha"))
    k = int(m.cutoff or 0)
    g = alpha_dcg_rows(pairs.row, pairs.row_intent, lists.labels.shape[0], alpha)
    inside = lists.rank0 < k
    dcg = lists.per_query_sum(np.where(inside, g / np.log2(lists.rank0 + 2.0), 0.0))
    ideal = greedy_ideal_gains(
        pairs.cand_query, pairs.pair_cand, pairs.pair_intent, lists.num_queries, pairs.num_intents, k, alpha
    )
    idcg = (ideal / np.log2(np.arange(k) + 2.0)).sum(axis=1)
    out = np.zeros(lists.num_queries)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def _measures(measures: Iterable[Measure | str] | str) -> tuple[Measure, ...]:
    items = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    out: list[Measure] = []
    for item in items:
        m = item if isinstance(item, Measure) else parse(item)
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
