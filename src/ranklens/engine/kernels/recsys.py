"""Kernels of the recommender measures (:mod:`ranklens.measures.recsys`).

They read the ranked lists and a :class:`RecsysInputs`: the side tables (training interactions, item
catalog) as plain arrays already mapped onto the run's document codes by the Evaluator, so a kernel does
no I/O and no id lookup. Per-list kernels return one float64 per query (NaN = NA); system-level kernels
return one float (a 0-d value). No Python loop runs per user or per item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.engine.kernels import binary
from ranklens.engine.kernels._common import rel_threshold, relevant, within
from ranklens.engine.kernels.recsys_system import Accumulator
from ranklens.engine.ranked import RankedLists
from ranklens.errors import MeasureError, Note
from ranklens.measures.base import Measure

__all__ = ["RECSYS_KERNELS", "RecsysInputs", "recsys_note_counts", "recsys_notes"]


@dataclass(frozen=True, eq=False)
class RecsysInputs:
    """The side tables of one evaluation, as arrays aligned with one :class:`RankedLists`.

    Attributes:
        num_users: U, distinct training users (0 without training data).
        item_users: n_i per training item code (None without training data).
        doc_item: training item code of every document key (``doc_key``; -1 when absent), or None.
        query_user: training user code of every evaluated query (-1 when absent), or None.
        train_user, train_item: the distinct training (user, item) pairs, sorted by user.
        catalog_size: |catalog| (the ``--items`` items, else the distinct training items), or None.
        doc_catalog: catalog code of every document key (-1 when absent), or None.
        doc_attr: code into the item catalog (``--items``) of every document key, or None.
        category: category code per catalog item (-1: none), or None.
        features: features per catalog item (items × d), or None.
        item_attr: item-catalog code of every training item code, or None.
    """

    num_users: int = 0
    item_users: np.ndarray | None = None
    doc_item: np.ndarray | None = None
    query_user: np.ndarray | None = None
    train_user: np.ndarray | None = None
    train_item: np.ndarray | None = None
    catalog_size: int | None = None
    doc_catalog: np.ndarray | None = None
    doc_attr: np.ndarray | None = None
    category: np.ndarray | None = None
    features: np.ndarray | None = None
    doc_key: np.ndarray | None = None
    """int32: one key per distinct item id for every run document code (``lists.doc_ids`` names every row);
    ``doc_item``, ``doc_attr`` and ``doc_catalog`` are indexed by key (a few per catalog item, not per row)"""
    num_keys: int = 0
    doc_vocab: Any = None
    """the distinct item ids (Arrow strings, sorted) that ``doc_key`` codes, or None"""
    item_attr: np.ndarray | None = None
    """code into the item catalog of every training item (-1 when absent), or None"""
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def rows(self, table: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """``table`` (``doc_item``, ``doc_attr`` or ``doc_catalog``) at the run document codes ``docs``."""
        return table[self.doc_key[docs]]  # type: ignore[index]


def _top(lists: RankedLists, m: Measure) -> np.ndarray:
    return within(lists, m.cutoff)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _need(value: Any, m: Measure, what: str) -> Any:
    if value is None:
        raise MeasureError(f"{m} needs {what}")
    return value


def novelty(lists: RankedLists, m: Measure, side: RecsysInputs) -> np.ndarray:
    """Mean of −log2(n_i/U) over the top-k items present in the training data; NaN when none is."""
    n_i = _need(side.item_users, m, "the training interactions (train=, --train)")
    top = _top(lists, m)
    item = side.rows(side.doc_item, lists.docs[top])  # type: ignore[arg-type]
    known = item >= 0
    info = np.zeros(item.shape)
    info[known] = -np.log2(n_i[item[known]] / float(side.num_users))
    q = lists.row_query[top]
    total = np.bincount(q, weights=info, minlength=lists.num_queries)
    count = np.bincount(q[known], minlength=lists.num_queries).astype(np.float64)
    return _ratio(total, count)


def arp(lists: RankedLists, m: Measure, side: RecsysInputs) -> np.ndarray:
    """Mean of n_i over the top-k items (0 for items absent from the training data); NaN on an empty list."""
    n_i = _need(side.item_users, m, "the training interactions (train=, --train)")
    top = _top(lists, m)
    item = side.rows(side.doc_item, lists.docs[top])  # type: ignore[arg-type]
    pop = np.where(item >= 0, n_i[np.maximum(item, 0)], 0).astype(np.float64)
    q = lists.row_query[top]
    return _ratio(np.bincount(q, weights=pop, minlength=lists.num_queries), np.bincount(q, minlength=lists.num_queries).astype(np.float64))


def _ild_on(m: Measure, side: RecsysInputs) -> str:
    on = str(m.get("on"))
    if on == "auto":
        on = "features" if side.features is not None else "category" if side.category is not None else "cooccurrence"
    if on == "cooccurrence":
        _need(side.item_users, m, "the training interactions (--train) or an item catalog with features (--items)")
        return on
    if side.doc_attr is None:
        raise MeasureError(f"{m} needs the item catalog (items=, --items) with a category or numeric features")
    if on == "features" and side.features is None:
        raise MeasureError(f"{m}: the item catalog has no numeric feature column")
    if on == "category" and side.category is None:
        raise MeasureError(f"{m}: the item catalog has no category column (category, genre …)")
    return on


def _unit_features(side: RecsysInputs) -> np.ndarray:
    if "unit" not in side._cache:
        f = np.asarray(side.features, dtype=np.float64)
        norm = np.sqrt(np.einsum("ij,ij->i", f, f))
        side._cache["unit"] = np.divide(f, norm[:, None], out=np.zeros_like(f), where=norm[:, None] > 0)
    return side._cache["unit"]  # type: ignore[no-any-return]


def ild(lists: RankedLists, m: Measure, side: RecsysInputs) -> np.ndarray:
    """1 − mean pairwise similarity over the top-k catalogue items (NaN with fewer than 2).

    Features: Σ_{i<j} cos(f_i, f_j) = (‖Σ f̂_i‖² − Σ ‖f̂_i‖²)/2 (a zero vector is similar to nothing);
    category: the pairs of equal category are Σ_c C(n_c, 2)."""
    on = _ild_on(m, side)
    top = _top(lists, m)
    q = lists.row_query[top]
    if on == "cooccurrence":
        return 1.0 - _ratio(*_cooccurrence_pairs(lists, top, side))
    attr = side.rows(side.doc_attr, lists.docs[top])  # type: ignore[arg-type]
    if on == "category":
        cat = side.category[np.maximum(attr, 0)]  # type: ignore[index]
        ok = (attr >= 0) & (cat >= 0)
        q, cat = q[ok], cat[ok]
        n = np.bincount(q, minlength=lists.num_queries).astype(np.float64)
        ncat = int(cat.max()) + 1 if cat.size else 1
        per = np.bincount(q.astype(np.int64) * ncat + cat, minlength=lists.num_queries * ncat).astype(np.float64)
        same = (per * (per - 1.0) / 2.0).reshape(lists.num_queries, ncat).sum(axis=1)
        pairs = n * (n - 1.0) / 2.0
        return 1.0 - _ratio(same, pairs)
    ok = attr >= 0
    q, attr = q[ok], attr[ok]
    unit = _unit_features(side)
    n = np.bincount(q, minlength=lists.num_queries).astype(np.float64)
    sq_of_sum = np.zeros(lists.num_queries)
    for d in range(unit.shape[1]):  # one feature at a time: no (rows × features) matrix
        s = np.bincount(q, weights=unit[attr, d], minlength=lists.num_queries)
        sq_of_sum += s * s
    if "unit_norm2" not in side._cache:
        side._cache["unit_norm2"] = np.einsum("ij,ij->i", unit, unit)
    self_sim = np.bincount(q, weights=side._cache["unit_norm2"][attr], minlength=lists.num_queries)
    pairs = n * (n - 1.0) / 2.0
    return 1.0 - _ratio((sq_of_sum - self_sim) / 2.0, pairs)


def _item_similarity(side: RecsysInputs) -> Any:
    """sim(i, j) = |users of i ∩ users of j| / √(n_i n_j) over the training data (scipy CSR, items × items).

    The co-occurrence counts are exact int32 sums of the binary user × item history, which is built here
    and dropped (not kept beside the similarity); the scaling is diag(s) · C · diag(s), (s_i·c_ij)·s_j."""
    if "sim" not in side._cache:
        from scipy import sparse

        n_i = side.item_users
        n_items = n_i.shape[0]  # type: ignore[union-attr]
        tu, ti = side.train_user, side.train_item
        b = sparse.csr_matrix(
            (np.ones(tu.size, dtype=np.int32), (tu, ti)), shape=(int(side.num_users), n_items)  # type: ignore[union-attr]
        )
        c = (b.T @ b).tocsr()
        del b
        scale = 1.0 / np.sqrt(np.maximum(n_i, 1).astype(np.float64))  # type: ignore[arg-type]
        rows = np.repeat(np.arange(n_items, dtype=np.int32), np.diff(c.indptr))
        data = scale[rows] * c.data
        del rows
        data *= scale[c.indices]
        side._cache["sim"] = sparse.csr_matrix((data, c.indices, c.indptr), shape=c.shape)
    return side._cache["sim"]


def _cooccurrence_pairs(lists: RankedLists, top: np.ndarray, side: RecsysInputs) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_{i<j} sim(i, j), C(n, 2)) per query over the top-k items found in the training data."""
    from scipy import sparse

    item = side.rows(side.doc_item, lists.docs[top])  # type: ignore[arg-type]
    q = lists.row_query[top]
    ok = item >= 0
    q, item = q[ok], item[ok]
    n = np.bincount(q, minlength=lists.num_queries).astype(np.float64)
    s = _item_similarity(side)
    x = sparse.csr_matrix((np.ones(q.size), (q, item)), shape=(lists.num_queries, s.shape[0]))
    total = np.asarray((x @ s).multiply(x).sum(axis=1)).ravel()  # Σ_{i,j ∈ L} sim, self pairs included
    return (total - n) / 2.0, n * (n - 1.0) / 2.0


def serendipity(lists: RankedLists, m: Measure, side: RecsysInputs) -> np.ndarray:
    """Per user: mean over the top-k items i of (1 − mean_{j∈H_u} sim(i, j)) · rel(i); NaN without history."""
    _need(side.item_users, m, "the training interactions (train=, --train)")
    top = _top(lists, m)
    q = lists.row_query[top]
    user = side.query_user[q]  # type: ignore[index]
    rel = relevant(lists.labels[top], rel_threshold(m)).astype(np.float64)
    tu = side.train_user
    if "hist_len" not in side._cache:  # (global: made once, shared by the blocks)
        side._cache["hist_len"] = np.bincount(tu, minlength=int(side.num_users)).astype(np.float64)  # type: ignore[arg-type]
    hist_len = side._cache["hist_len"]
    has = user >= 0
    h_u = np.where(has, hist_len[np.maximum(user, 0)], 0.0)
    sim_sum = np.zeros(q.shape)
    if str(m.get("sim")) == "features":
        if side.features is None or side.doc_attr is None:
            raise MeasureError(f"{m}: sim=features needs the item catalog with numeric features (items=, --items)")
        unit = _unit_features(side)
        # Σ_{j∈H_u} f̂_j per user, over the history items found in the catalog
        if "user_sum" not in side._cache:  # (global: made once, shared by the blocks)
            hist_attr = side.item_attr[side.train_item]  # type: ignore[index]
            ok = hist_attr >= 0
            side._cache["user_sum"] = np.zeros((int(side.num_users), unit.shape[1]))
            np.add.at(side._cache["user_sum"], tu[ok], unit[hist_attr[ok]])  # type: ignore[index]
        user_sum = side._cache["user_sum"]
        row_attr = side.rows(side.doc_attr, lists.docs[top])
        good = has & (row_attr >= 0)
        sim_sum[good] = np.einsum("ij,ij->i", unit[row_attr[good]], user_sum[user[good]])
    else:
        s = None if "sim_dense" in side._cache else _item_similarity(side)  # (made once, then the dense table)
        item = side.rows(side.doc_item, lists.docs[top])  # type: ignore[arg-type]
        good = np.flatnonzero(has & (item >= 0))
        if good.size:
            sim_sum[good] = _history_similarity(s, side, user[good], item[good])
    value = np.where(h_u > 0, (1.0 - sim_sum / np.maximum(h_u, 1.0)) * rel, 0.0)
    total = np.bincount(q, weights=value, minlength=lists.num_queries)
    count = np.bincount(q, minlength=lists.num_queries).astype(np.float64)
    out = _ratio(total, count)
    no_history = np.ones(lists.num_queries, dtype=bool)
    no_history[q[h_u > 0]] = False
    out[no_history] = np.nan
    return out


def _history_similarity(s: Any, side: RecsysInputs, user: np.ndarray, item: np.ndarray) -> np.ndarray:
    """Σ_{j ∈ H_u} sim(i, j) for every (u, i): the (u, i, j) triples are formed in chunks and each sim(i, j)
    is read from a dense items × items table when the catalog is small (≤ 5,792 items: ≤ 256 MB), else looked
    up in the sorted keys of the sparse similarity (work ∝ |top-k| · |H_u|, no user × item matrix)."""
    n_items = side.item_users.shape[0]  # type: ignore[union-attr]
    dense = keys = data = None
    if n_items * n_items <= _DENSE_SIM_MAX:  # one gather per triple instead of a binary search
        if "sim_dense" not in side._cache:
            side._cache["sim_dense"] = np.asarray(s.toarray(), dtype=np.float64).reshape(-1)
            # the sparse form is not kept beside it (~0.3 GB for 5,000 items co-occurring densely); ILD's
            # co-occurrence, if asked too, makes it again once
            side._cache.pop("sim", None)
        dense = side._cache["sim_dense"]
    else:
        if "sim_keys" not in side._cache:
            s.sort_indices()
            rows = np.repeat(np.arange(n_items, dtype=np.int64), np.diff(s.indptr))
            side._cache["sim_keys"] = rows * n_items + s.indices
        keys, data = side._cache["sim_keys"], s.data
    tu = side.train_user
    if "hist_starts" not in side._cache:  # (the training rows are sorted by user)
        side._cache["hist_starts"] = np.searchsorted(tu, np.arange(int(side.num_users) + 1))  # type: ignore[arg-type]
    starts = side._cache["hist_starts"]
    h_len = np.diff(starts)[user]
    out = np.zeros(user.size)
    chunk = max(1, 1_000_000 // max(int(h_len.max(initial=1)), 1))
    for lo in range(0, user.size, chunk):
        hi = min(lo + chunk, user.size)
        lens = h_len[lo:hi]
        row = np.repeat(np.arange(hi - lo), lens)
        first = np.repeat(starts[user[lo:hi]], lens)
        offset = np.arange(row.size) - np.repeat(np.cumsum(lens) - lens, lens)
        j = side.train_item[first + offset]  # type: ignore[index]
        key = item[lo:hi][row].astype(np.int64) * n_items + j
        if dense is not None:
            out[lo:hi] = np.bincount(row, weights=dense[key], minlength=hi - lo)
            continue
        assert keys is not None and data is not None
        pos = np.minimum(np.searchsorted(keys, key), max(keys.size - 1, 0))
        hit = keys[pos] == key if keys.size else np.zeros(key.size, dtype=bool)
        out[lo:hi] = np.bincount(row, weights=np.where(hit, data[pos] if keys.size else 0.0, 0.0), minlength=hi - lo)
    return out


#: the largest items × items similarity read from a dense float64 table (32M entries: 256 MB) rather than
#: searched in the sorted sparse keys
_DENSE_SIM_MAX = 1 << 25


def f1(lists: RankedLists, m: Measure, side: RecsysInputs | None = None) -> np.ndarray:
    """2·P@k·R@k/(P@k + R@k), 0 when both are 0."""
    p = binary.precision(lists, m)
    r = binary.recall(lists, m)
    out = np.zeros(p.shape)
    np.divide(2.0 * p * r, p + r, out=out, where=(p + r) > 0)
    return out


def fallout(lists: RankedLists, m: Measure, side: RecsysInputs | None = None) -> np.ndarray:
    """Judged non-relevant items in the top k / the user's judged non-relevant items (0 when none)."""
    rel = rel_threshold(m)
    lab = lists.labels
    nonrel = (lab >= 0) & (lab < rel) & _top(lists, m)
    den = lists.num_judged_nonrelevant(rel).astype(np.float64)
    out = np.zeros(lists.num_queries)
    np.divide(lists.per_query_count(nonrel).astype(np.float64), den, out=out, where=den > 0)
    return out


def auc(lists: RankedLists, m: Measure, side: RecsysInputs | None = None) -> np.ndarray | float:
    """Per-user AUC (GAUC's terms); with ``pooled=true`` one AUC over every user's pairs (a float)."""
    if m.get("pooled"):
        return pooled_auc(lists, m)
    rel = rel_threshold(m)
    # over the judged rows only (a few per user), in rank order: no float array over every row
    judged = np.flatnonzero(lists.labels >= 0)
    j_rel = lists.labels[judged] >= rel
    j_nr = ~j_rel
    jq = lists.row_query[judged]
    n = lists.num_queries
    r_all = lists.num_relevant(rel).astype(np.float64)
    nr_all = lists.num_judged_nonrelevant(rel).astype(np.float64)
    nr_ret = np.bincount(jq[j_nr], minlength=n)
    r_ret = np.bincount(jq[j_rel], minlength=n).astype(np.float64)
    # judged non-relevant rows ranked above each row of its query (an integer count: exact)
    nr_above = np.cumsum(j_nr) - j_nr - (np.cumsum(nr_ret) - nr_ret)[jq]
    nr_unret = nr_all - nr_ret
    below = (nr_ret[jq] - nr_above)[j_rel] + nr_unret[jq[j_rel]]
    wins = np.bincount(jq[j_rel], weights=below, minlength=n).astype(np.float64)
    wins += 0.5 * (r_all - r_ret) * nr_unret
    return _ratio(wins, r_all * nr_all)


def pooled_auc(lists: RankedLists, m: Measure) -> float:
    """Mann–Whitney AUC over all users' judged items by score; unlisted judged items score −∞; ties ½."""
    return Accumulator(m).add(lists, None).value()


def coverage(lists: RankedLists, m: Measure, side: RecsysInputs) -> float:
    """|recommended catalogue items| / |catalog|."""
    return Accumulator(m).add(lists, side).value()


def entropy_coverage(lists: RankedLists, m: Measure, side: RecsysInputs | None = None) -> float:
    """−Σ p_i log2 p_i over the recommended items."""
    return Accumulator(m).add(lists, side).value()


def gini(lists: RankedLists, m: Measure, side: RecsysInputs) -> float:
    """Σ_j (2j − n − 1) x_(j) / (n Σx) over the catalog's exposure counts sorted ascending."""
    return Accumulator(m).add(lists, side).value()


def personalization(lists: RankedLists, m: Measure, side: RecsysInputs | None = None) -> float:
    """1 − mean cosine of users' binary top-k vectors, from w_i = Σ_{u ∋ i} 1/√k_u (no pairs formed)."""
    return Accumulator(m).add(lists, side).value()


#: family name → kernel(lists, measure, side inputs): per-list values, or one value for a system-level measure
RECSYS_KERNELS: dict[str, Callable[[RankedLists, Measure, Any], Any]] = {
    "Novelty": novelty,
    "ARP": arp,
    "ILD": ild,
    "Serendipity": serendipity,
    "F1": f1,
    "FallOut": fallout,
    "AUC": auc,
    "Coverage": coverage,
    "EntropyCoverage": entropy_coverage,
    "Gini": gini,
    "Personalization": personalization,
}


def recsys_note_counts(lists: RankedLists, measures: Any, side: RecsysInputs) -> list[tuple[str, str, int, int]]:
    """What the recommender measures left out, as counts: ``(head, tail, absent, total)`` for recommended
    items absent from the training data (Novelty), from the catalog (Coverage, Gini) or from the item catalog
    (ILD); the note is ``f"{head}: {absent:,} of {total:,} {tail}"`` (blocks add their counts)."""
    counts: list[tuple[str, str, int, int]] = []
    seen: set[tuple[str, int | None]] = set()
    for m in measures:
        what = {"Novelty": ("doc_item", "not in the training data: left out of Novelty"),
                "Coverage": ("doc_catalog", "not in the catalog: not counted"),
                "Gini": ("doc_catalog", "not in the catalog: not counted"),
                "ILD": ("doc_attr", "not in the item catalog: left out of ILD")}.get(m.name)
        if what is None or getattr(side, what[0]) is None:
            continue
        key = (what[0], m.cutoff)
        if key in seen:
            continue
        seen.add(key)
        top = _top(lists, m)
        codes = side.rows(getattr(side, what[0]), lists.docs[top])
        absent = int(np.count_nonzero(codes < 0))
        counts.append((str(m), f"top-{m.cutoff} recommendations are of items {what[1]}", absent, int(codes.size)))
    return counts


def recsys_notes(lists: RankedLists, measures: Any, side: RecsysInputs) -> list[Note]:
    """What the recommender measures left out: recommended items absent from the training data
    (Novelty), from the catalog (Coverage, Gini) or from the item catalog (ILD), as notes whose counts are data."""
    return [Note("absent_items", a, total=n, head=h, tail=t) for h, t, a, n in recsys_note_counts(lists, measures, side) if a]
