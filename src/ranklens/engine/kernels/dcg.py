"""DCG, IDCG and nDCG with explicit gain, discount, ideal flavour and tie policy.

Layering as scikit-learn's ``ndcg_score → _ndcg_sample_scores → _dcg_sample_scores →
_tie_averaged_dcg``: :func:`ndcg` → :func:`dcg` / :func:`idcg` → primitives in ``_common``.

Formulas (spec §2.3): DCG@k = Σ_{i ≤ min(k,n)} g(rel_i)·D(i); IDCG@k = Σ_{i ≤ min(k,|J+|)} g(rel*_i)·D(i)
over the chosen ideal pool sorted by gain; nDCG = DCG/IDCG, 0 when IDCG = 0. With ``ties=average`` DCG is
the expectation over orderings of tied documents (McSherry & Najork, ECIR 2008):
Σ_groups mean_gain(group) · Σ_{ranks of group ≤ k} D(rank). The local and recall ideals then take whole
tie groups: their pool is every document that is within the depth in at least one ordering of the ties,
so IDCG is the same for every ordering and 0 ≤ nDCG ≤ 1.

``norm=minmax`` (Gienapp, Fröbe, Hagen, Potthast, CIKM 2020): negative qrels labels are harmful documents
with negative gain, and nDCG = (DCG − minDCG)/(IDCG − minDCG) ∈ [0, 1], minDCG@k being the DCG of the worst
ordering of the ideal pool (its negative gains ascending at ranks 1, 2, …; 0 when it has none). The engine
stores a retrieved negative as "pooled but unjudged" (trec_eval), so :func:`signed_gains` recovers the
qrels label of those rows from the ideal arrays (a lookup on the few such rows only). With the evaluator's
``negative="zero"`` the negatives are judged 0 before any measure sees them, and minmax equals nDCG.

A gain map naming a negative label (``DCG(gain={-1:-1,0:0,1:1})``) gives documents with that label the
map's gain, in DCG and in the ideal pool (which keeps positive gains only), when the lists come from the
Evaluator (:attr:`RankedLists.map_negative_labels`); labels it does not name stay pooled but unjudged.
``ranklens trec-eval`` keeps trec_eval's rule: a negative label matches no level of the gain table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ranklens.engine.kernels._common import (
    codes_in,
    discount_divisors,
    gains,
    sort_desc_per_query,
    tie_groups,
    within,
)
from ranklens.engine.ranked import UNJUDGED, RankedLists
from ranklens.measures.base import Measure


def dcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """DCG@k per query."""
    return _dcg_of_gains(lists, m, row_gains(lists, m))


def negative_levels(gain: object) -> tuple[int, ...]:
    """The negative labels a gain map names (none for ``linear`` and ``exp``).

    >>> negative_levels(((-1, -1.0), (0, 0.0), (1, 1.0))), negative_levels("exp")
    ((-1,), ())
    """
    return tuple(level for level, _ in gain if level < 0) if isinstance(gain, tuple) else ()


def row_gains(lists: RankedLists, m: Measure) -> np.ndarray:
    """Gain of every retrieved row: :func:`gains` (unjudged and negative labels 0), except that a negative
    label the gain map names has the map's gain (with :attr:`RankedLists.map_negative_labels`)."""
    gain = m.get("gain")
    g = gains(lists.labels, gain)
    named = negative_levels(gain)
    if named and lists.map_negative_labels:
        rows, raw = _unjudged_raw_labels(lists)
        hit = np.isin(raw, named)
        g[rows[hit]] = signed_gain(raw[hit], gain)
    return g


def ideal_gains(lists: RankedLists, labels: np.ndarray, gain: object) -> np.ndarray:
    """Gain of qrels labels (the ideal arrays, which keep negative labels): as :func:`row_gains`."""
    g = gains(labels, gain)
    named = negative_levels(gain)
    if named and lists.map_negative_labels:
        hit = np.isin(labels, named)
        g[hit] = signed_gain(labels[hit], gain)
    return g


@dataclass(frozen=True)
class DcgParts:
    """What the DCG kernels compute on the way to their values, per retrieved row and per query: the
    numbers ``ranklens explain`` prints (:func:`dcg_parts`), so it never re-derives them.

    Attributes:
        gain: per retrieved row, the gain DCG sums (with ``ties=average`` the mean gain of its tie group).
        contribution: per retrieved row, gain / discount divisor within the cutoff, else 0.
        dcg: DCG@k per query (``norm=minmax``: with negative gains).
        ideal_gain, ideal_query, ideal_rank0: the ideal ranking: its positive gains, best first within each
            query, and their 0-based ranks (entries below the cutoff contribute 0).
        ideal_source: per ideal entry, its row in the run's arrays (``ideal_from == "run"``: local, recall),
            in the qrels' ideal arrays (``"qrels"``: global) or −1 (``"max"``: the top grade at every rank).
        ideal_contribution: per ideal entry, gain / discount divisor within the cutoff, else 0.
        idcg: IDCG@k per query.
        min_dcg: minDCG@k per query with ``norm=minmax``, else None.
        value: the measure's value per query (nDCG, DCG or IDCG).
    """

    gain: np.ndarray
    contribution: np.ndarray
    dcg: np.ndarray
    ideal_gain: np.ndarray
    ideal_query: np.ndarray
    ideal_rank0: np.ndarray
    ideal_source: np.ndarray
    ideal_contribution: np.ndarray
    idcg: np.ndarray
    ideal_from: str
    min_dcg: np.ndarray | None
    value: np.ndarray


def dcg_parts(lists: RankedLists, m: Measure) -> DcgParts:
    """The intermediates of ``m`` (an nDCG, DCG or IDCG measure) for every query, computed by the same
    code as the kernels' values (:func:`ndcg`, :func:`dcg`, :func:`idcg` return fields of it).

    >>> from ranklens import Evaluator
    >>> from ranklens.measures import parse
    >>> lists, _ = Evaluator("nDCG", {"q": {"a": 3, "b": 1}}).align({"q": {"b": 2.0, "a": 1.0}})
    >>> p = dcg_parts(lists, parse("nDCG@2"))
    >>> p.dcg.round(6).tolist(), p.idcg.round(6).tolist(), p.ideal_gain.tolist(), p.value.round(6).tolist()
    ([2.892789], [3.63093], [3.0, 1.0], [0.796708])
    """
    minmax = m.name == "nDCG" and dict(m.params).get("norm") == "minmax"
    g = signed_gains(lists, m) if minmax else row_gains(lists, m)
    shown, contribution, dcg_q = _dcg_terms(lists, m, g)
    ideal = _ideal_parts(lists, m, detail=True)
    low = min_dcg(lists, m) if minmax else None
    if m.name == "DCG":
        value = dcg_q
    elif m.name == "IDCG":
        value = ideal.idcg
    else:
        value = _ratio(dcg_q, ideal.idcg, low)
    return DcgParts(shown, contribution, dcg_q, ideal.gain, ideal.query, ideal.rank0, ideal.source,
                    ideal.contribution, ideal.idcg, ideal.origin, low, value)


def _ratio(num: np.ndarray, den: np.ndarray, low: np.ndarray | None) -> np.ndarray:
    """nDCG from its parts: DCG/IDCG, or (DCG − minDCG)/(IDCG − minDCG); 0 where the denominator is 0."""
    if low is not None:
        num, den = num - low, den - low
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _dcg_terms(lists: RankedLists, m: Measure, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gain per row, contribution per row, DCG per query) for the row gains ``g``."""
    div = discount_divisors(lists.rank0, m)
    top = within(lists, m.cutoff)
    if dict(m.params).get("ties") == "average" and g.size:
        gid, gstart = tie_groups(lists)
        sizes = np.diff(gstart)
        mean_gain = np.bincount(gid, weights=g) / sizes
        disc_sum = np.bincount(gid, weights=np.where(top, 1.0 / div, 0.0))
        group_query = lists.row_query[gstart[:-1]]
        total = np.bincount(group_query, weights=mean_gain * disc_sum, minlength=lists.num_queries)
        shown = mean_gain[gid]
        return shown, np.where(top, shown / div, 0.0), total
    contribution = np.where(top, g / div, 0.0)
    return g, contribution, lists.per_query_sum(contribution)


def _dcg_of_gains(lists: RankedLists, m: Measure, g: np.ndarray) -> np.ndarray:
    return _dcg_terms(lists, m, g)[2]


class _Ideal(NamedTuple):
    gain: np.ndarray
    query: np.ndarray
    rank0: np.ndarray
    source: np.ndarray
    contribution: np.ndarray
    idcg: np.ndarray
    origin: str


def idcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """IDCG@k per query for the measure's ideal flavour (global, local, recall, max)."""
    return _ideal_parts(lists, m, detail=False).idcg


def _ideal_parts(lists: RankedLists, m: Measure, *, detail: bool) -> _Ideal:
    """The ideal ranking of every query and its IDCG@k; with ``ideal=max`` the entries (one per rank up to
    the cutoff) are built only with ``detail``."""
    ideal = m.get("ideal") if m.name != "DCG" else "global"
    k = m.cutoff
    empty = np.empty(0, dtype=np.int64)
    if ideal == "max":
        top = m.get("max_rel") or lists.max_label()
        g_top = float(gains(np.array([top]), m.get("gain"))[0])
        n = np.full(lists.num_queries, k, dtype=np.int64) if k is not None else lists.lengths
        total = _discount_prefix(n, m) * g_top
        if not detail or g_top <= 0:
            return _Ideal(empty.astype(np.float64), empty, empty, empty, empty.astype(np.float64), total, "max")
        query = np.repeat(np.arange(lists.num_queries), n)
        rank0 = np.arange(query.size) - np.repeat(np.cumsum(n) - n, n)
        g = np.full(query.size, g_top)
        return _Ideal(g, query, rank0, np.full(query.size, -1), g / discount_divisors(rank0, m), total, "max")
    if ideal == "global":
        g = ideal_gains(lists, lists.ideal_labels, m.get("gain"))
        query = lists.ideal_query
        source = np.arange(g.size)
        origin = "qrels"
    else:
        depth = k if ideal == "local" else int(m.get("depth"))
        mask = within(lists, depth)
        if depth is not None and dict(m.params).get("ties") == "average":
            # the pool is every document that is within the depth in some ordering of the ties: whole
            # tie groups that start within it (else the pool, hence IDCG, would follow the doc-id
            # tie-break that ties=average averages away, and nDCG could exceed 1)
            gid, gstart = tie_groups(lists)
            mask = mask[gstart[:-1]][gid]
        g = row_gains(lists, m)[mask]
        query = lists.row_query[mask]
        source = np.flatnonzero(mask)
        origin = "run"
    perm = sort_desc_per_query(g, query)
    g, query, source = g[perm], query[perm], source[perm]
    positive = g > 0
    g, query, source = g[positive], query[positive], source[positive]
    counts = np.bincount(query, minlength=lists.num_queries)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    rank0 = np.arange(g.size) - np.repeat(offsets[:-1], counts)
    contribution = g / discount_divisors(rank0, m)
    if k is not None:
        contribution = np.where(rank0 < k, contribution, 0.0)
    summed: np.ndarray = np.bincount(query, weights=contribution, minlength=lists.num_queries)
    return _Ideal(g, query, rank0, source, contribution, summed, origin)


def ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """nDCG@k per query: DCG/IDCG, 0 where IDCG = 0 (the query still counts in the mean)."""
    if dict(m.params).get("norm") == "minmax":
        return ndcg_minmax(lists, m)
    return _ratio(dcg(lists, m), idcg(lists, m), None)


def _discount_prefix(n: np.ndarray, m: Measure) -> np.ndarray:
    """Σ_{i < n_q} D(i) per query."""
    top = int(n.max()) if n.size else 0
    prefix = np.concatenate(([0.0], np.cumsum(1.0 / discount_divisors(np.arange(top), m))))
    return prefix[n]


def signed_gain(labels: np.ndarray, gain: object) -> np.ndarray:
    """Gain of (possibly negative) judged labels: linear → the label; exp → sign(l)·(2^|l| − 1); a map
    gives its value where listed, else the label.

    >>> signed_gain(np.array([-2, -1, 0, 2]), "exp").tolist()
    [-3.0, -1.0, 0.0, 3.0]
    """
    lab = labels.astype(np.float64)
    if gain == "linear":
        return lab
    if gain == "exp":
        return np.sign(lab) * (np.exp2(np.abs(lab)) - 1.0)
    out = lab.copy()
    for level, g in gain:  # type: ignore[attr-defined]
        out[labels == level] = g
    return out


def signed_gains(lists: RankedLists, m: Measure) -> np.ndarray:
    """Gain of every retrieved row with negative qrels labels as negative gains (not in pool → 0).

    Rows the alignment marked "pooled but unjudged" get their qrels label back by a lookup of
    (query, document) in the ideal arrays, which keep the raw labels.
    """
    g = gains(lists.labels, m.get("gain"))
    rows, raw = _unjudged_raw_labels(lists)
    g[rows] = signed_gain(raw, m.get("gain"))
    return g


def _unjudged_raw_labels(lists: RankedLists) -> tuple[np.ndarray, np.ndarray]:
    """The retrieved rows marked "pooled but unjudged" and their (negative) qrels labels, looked up by
    (query, document) in the ideal arrays, which keep the raw labels."""
    rows = np.flatnonzero(lists.labels == UNJUDGED)
    if rows.size == 0:
        return rows, lists.ideal_labels[:0]
    import pyarrow as pa

    doc_strings = lists.doc_ids.take(pa.array(lists.docs[rows]))
    qdoc = codes_in(doc_strings, lists.qrels_doc_ids).astype(np.int64)
    ndocs = max(len(lists.qrels_doc_ids), 1)
    ideal_key = lists.ideal_query.astype(np.int64) * ndocs + lists.ideal_docs.astype(np.int64)
    order = np.argsort(ideal_key, kind="stable")
    sorted_key = ideal_key[order]
    key = lists.row_query[rows].astype(np.int64) * ndocs + qdoc
    pos = np.minimum(np.searchsorted(sorted_key, key), max(sorted_key.size - 1, 0))
    found = (qdoc >= 0) & (sorted_key.size > 0) & (sorted_key[pos] == key)
    return rows[found], lists.ideal_labels[order[pos[found]]]


def min_dcg(lists: RankedLists, m: Measure) -> np.ndarray:
    """minDCG@k per query: the negative gains of the ideal pool, most negative first, discounted (≤ 0).

    The pool follows the ideal flavour: every judged label (global, max) or the retrieved top-k/depth
    (local, recall).
    """
    ideal = m.get("ideal")
    if ideal in ("global", "max"):
        labels = lists.ideal_labels
        g = np.where(labels < 0, signed_gain(labels, m.get("gain")), 0.0)
        query = lists.ideal_query
    else:
        mask = within(lists, m.cutoff if ideal == "local" else int(m.get("depth")))
        g = signed_gains(lists, m)[mask]
        query = lists.row_query[mask]
    negative = g < 0
    g, query = g[negative], query[negative]
    perm = np.lexsort((g, query))
    g, query = g[perm], query[perm]
    counts = np.bincount(query, minlength=lists.num_queries)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    rank0 = np.arange(g.size) - np.repeat(offsets[:-1], counts)
    contribution = g / discount_divisors(rank0, m)
    if m.cutoff is not None:
        contribution = np.where(rank0 < m.cutoff, contribution, 0.0)
    return np.bincount(query, weights=contribution, minlength=lists.num_queries)


def ndcg_minmax(lists: RankedLists, m: Measure) -> np.ndarray:
    """(DCG − minDCG)/(IDCG − minDCG) per query with negative gains; 0 where IDCG = minDCG (= 0).

    >>> from ranklens import Evaluator
    >>> from ranklens.measures import parse
    >>> qrels = {"q": {"a": 2, "b": -1, "c": 1, "d": 0}}
    >>> lists, _ = Evaluator("nDCG", qrels).align({"q": {"b": 4.0, "a": 3.0, "e": 2.0, "c": 1.0}})
    >>> # DCG = −1 + 2/log2 3 + 0 + 1/log2 5; IDCG = 2 + 1/log2 3; minDCG = −1
    >>> ndcg_minmax(lists, parse("nDCG(norm=minmax)")).round(6).tolist()
    [0.466144]
    """
    low = min_dcg(lists, m)
    return _ratio(_dcg_of_gains(lists, m, signed_gains(lists, m)), idcg(lists, m), low)
