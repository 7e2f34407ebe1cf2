"""Cross-block accumulators of the system-level recommender measures (Coverage, EntropyCoverage, Gini,
Personalization, the pooled AUC), so that users can be evaluated in blocks of bounded size.

Every system-level value is a function of a state that is a sum over users: integer exposure counts
(per catalogue item; per recommended item id; per (list length, item id) for Personalization) and, for
the pooled AUC, the scores of the judged rows with the counts of relevant and non-relevant items. Each
accumulator adds one block's lists to that state (:meth:`add`) and computes the value once at the end
(:meth:`value`). The one-pass kernels are the one-block case of the same code, so a blocked evaluation
gives **the same bits** as the unblocked one:

* the counts are integers (exact in any order), kept keyed by item id (sorted bytewise, recommended items
  only), so the float arithmetic of :meth:`value` runs on identical arrays in an identical order;
* Personalization's w_i = Σ_{u ∋ i} 1/√k_u is formed at the end as Σ_k c_{i,k}/√k from the integer counts
  c_{i,k} of users with k top-k items who were shown i (not summed per row);
* the pooled AUC's rank sum is a sum of half-integers below 2^53, exact in any order.

>>> import numpy as np, pyarrow as pa
>>> from ranklens.measures import parse_many
>>> acc = Accumulator(parse_many(["EntropyCoverage@2"])[0])
>>> acc.add_exposures(pa.array(["a", "b"]), np.array([3, 1]))
>>> acc.add_exposures(pa.array(["b", "c"]), np.array([1, 2]))
>>> round(acc.value(), 6)  # counts a:3, b:2, c:2 over 7 exposures
1.556657
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.engine.kernels._common import rel_threshold, relevant, within
from ranklens.engine.ranked import RankedLists
from ranklens.errors import MeasureError
from ranklens.measures.base import Measure

__all__ = ["SYSTEM_FAMILIES", "Accumulator", "merge_counts"]

#: the system-level families this module accumulates (AUC only with pooled=true)
SYSTEM_FAMILIES = ("Coverage", "EntropyCoverage", "Gini", "Personalization", "AUC")


def merge_counts(ids: pa.Array | None, counts: np.ndarray | None, new_ids: pa.Array, new_counts: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """Add ``new_counts`` (rows keyed by ``new_ids``, distinct) into ``counts`` keyed by ``ids``; the result
    is keyed by the sorted union of the ids (``counts`` may be 1-D or 2-D: one row per id).

    >>> ids, c = merge_counts(None, None, pa.array(["b", "a"]), np.array([1, 2]))
    >>> ids, c = merge_counts(ids, c, pa.array(["c", "b"]), np.array([5, 1]))
    >>> ids.to_pylist(), c.tolist()
    (['a', 'b', 'c'], [2, 2, 5])
    """
    if ids is None or counts is None:
        both, old_n = new_ids, 0
    else:
        both, old_n = pa.concat_arrays([ids, new_ids]), len(ids)
    code, vocab = _sorted_codes(both)
    out = np.zeros((len(vocab),) + new_counts.shape[1:], dtype=np.int64)
    if counts is not None and old_n:
        out[code[:old_n]] = counts  # (the ids of each side are distinct: one row each)
    out[code[old_n:]] += new_counts
    return vocab, out


class Accumulator:
    """The cross-block state of one system-level measure (see the module docstring)."""

    def __init__(self, measure: Measure) -> None:
        if measure.name not in SYSTEM_FAMILIES:
            raise MeasureError(f"{measure} is not a system-level recommender measure")
        self.measure = measure
        self.ids: pa.Array | None = None
        self.counts: np.ndarray | None = None
        """exposures per id (EntropyCoverage), per catalogue code (Coverage, Gini) or per (id, list length) (Personalization)"""
        self.lengths: np.ndarray = np.zeros(0, dtype=np.int64)
        """Personalization: the distinct list lengths k (columns of ``counts``), ascending"""
        self.users = 0
        self.catalog_size: int | None = None
        self.scores: list[np.ndarray] = []
        """pooled AUC: [relevant retrieved scores, non-relevant retrieved scores] per block"""
        self.pos = self.neg = self.pos_ret = self.neg_ret = 0

    # ------------------------------------------------------------------------------------ adding a block

    def add(self, lists: RankedLists, side: Any) -> Accumulator:
        """Add one block of users (their :class:`RankedLists` and the side inputs bound to them)."""
        m = self.measure
        if m.name == "AUC":
            self._add_auc(lists)
        elif m.name in ("Coverage", "Gini"):
            self._add_catalog(lists, side)
        else:
            top = within(lists, m.cutoff)
            key, vocab = _keys(lists, side)
            if m.name == "EntropyCoverage":
                x = np.bincount(key[lists.docs[top]], minlength=len(vocab))
                shown = np.flatnonzero(x)
                self.add_exposures(vocab.take(pa.array(shown)), x[shown])
            else:
                self._add_personalization(lists, top, key, vocab)
        return self

    def add_exposures(self, ids: pa.Array, counts: np.ndarray) -> None:
        """Add exposure counts keyed by distinct item ids (EntropyCoverage's state)."""
        self.ids, self.counts = merge_counts(self.ids, self.counts, ids, np.asarray(counts, dtype=np.int64))

    def _add_catalog(self, lists: RankedLists, side: Any) -> None:
        size = side.catalog_size if side is not None else None
        if size is None:
            raise MeasureError(
                f"{self.measure} needs a catalog: the training interactions (--train) or the item catalog (--items)"
            )
        code = side.rows(side.doc_catalog, lists.docs[within(lists, self.measure.cutoff)])
        x = np.bincount(code[code >= 0], minlength=size).astype(np.int64)
        self.catalog_size = size
        self.counts = x if self.counts is None else self.counts + x

    def _add_personalization(self, lists: RankedLists, top: np.ndarray, key: np.ndarray, vocab: pa.Array) -> None:
        q = lists.row_query[top]
        k_u = np.bincount(q, minlength=lists.num_queries)
        self.users += int(np.count_nonzero(k_u))
        k_row = k_u[q]
        lengths = np.unique(k_row)
        item = key[lists.docs[top]]
        # c[id, j]: users whose top-k list has lengths[j] items and holds the id
        flat = np.bincount(item.astype(np.int64) * lengths.size + np.searchsorted(lengths, k_row), minlength=len(vocab) * lengths.size)
        c = flat.reshape(len(vocab), lengths.size)
        shown = np.flatnonzero(c.any(axis=1))
        all_lengths = np.union1d(self.lengths, lengths)
        if self.counts is not None and all_lengths.size != self.lengths.size:  # widen the old columns
            wide = np.zeros((self.counts.shape[0], all_lengths.size), dtype=np.int64)
            wide[:, np.searchsorted(all_lengths, self.lengths)] = self.counts
            self.counts = wide
        new = np.zeros((shown.size, all_lengths.size), dtype=np.int64)
        new[:, np.searchsorted(all_lengths, lengths)] = c[shown]
        self.lengths = all_lengths
        self.ids, self.counts = merge_counts(self.ids, self.counts, vocab.take(pa.array(shown)), new)

    def _add_auc(self, lists: RankedLists) -> None:
        rel = rel_threshold(self.measure)
        lab = lists.labels
        is_rel = relevant(lab, rel)
        is_nr = (lab >= 0) & (lab < rel)
        self.scores.append(lists.scores[is_rel])
        self.scores.append(lists.scores[is_nr])
        self.pos_ret += int(is_rel.sum())
        self.neg_ret += int(is_nr.sum())
        self.pos += int(lists.num_relevant(rel).sum())
        self.neg += int(lists.num_judged_nonrelevant(rel).sum())

    # ------------------------------------------------------------------------------------------ the value

    def value(self) -> float:
        """The measure's value over every user added."""
        name = self.measure.name
        if name == "AUC":
            return self._auc()
        if name == "Coverage":
            x = self._catalog_counts()
            return float(np.count_nonzero(x)) / x.size if x.size else float("nan")
        if name == "Gini":
            x = np.sort(self._catalog_counts().astype(np.float64))
            n = x.size
            if n == 0 or x.sum() == 0:
                return float("nan")
            j = np.arange(1, n + 1, dtype=np.float64)
            return float(((2.0 * j - n - 1.0) * x).sum() / (n * x.sum()))
        if name == "EntropyCoverage":
            if self.counts is None or self.counts.size == 0:
                return float("nan")
            x = self.counts.astype(np.float64)
            p = x / x.sum()
            return float(-(p * np.log2(p)).sum())
        users = self.users
        if users < 2 or self.counts is None:
            return float("nan")
        w = np.zeros(self.counts.shape[0])
        for col, k in enumerate(self.lengths):  # ascending k: a fixed order of the float sums
            w += self.counts[:, col] / np.sqrt(np.float64(k))
        pair_sum = (float((w * w).sum()) - users) / 2.0
        return 1.0 - pair_sum / (users * (users - 1) / 2.0)

    def _catalog_counts(self) -> np.ndarray:
        if self.counts is None:
            return np.zeros(self.catalog_size or 0, dtype=np.int64)
        return self.counts

    def _auc(self) -> float:
        """Mann–Whitney AUC over all users' judged items by score; unlisted judged items score −∞; ties ½."""
        pos, neg = self.pos, self.neg
        if pos == 0 or neg == 0:
            return float("nan")
        pos_scores = [s for j, s in enumerate(self.scores) if j % 2 == 0]
        neg_scores = [s for j, s in enumerate(self.scores) if j % 2 == 1]
        scores = np.concatenate(
            pos_scores + neg_scores + [np.full(pos - self.pos_ret + neg - self.neg_ret, -np.inf)]
        )
        positive = np.zeros(scores.shape, dtype=bool)
        positive[: self.pos_ret] = True
        positive[self.pos_ret + self.neg_ret : self.pos_ret + self.neg_ret + pos - self.pos_ret] = True
        ranks = _average_ranks(scores)  # ties share their average rank (−∞ ties with −∞)
        # half-integer ranks summed below 2^53: exact, whatever the order of the blocks
        return float((ranks[positive].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the mean of their ranks (scipy.stats.rankdata's ``average``)."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], values.size]
    group_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def _keys(lists: RankedLists, side: Any) -> tuple[np.ndarray, pa.Array]:
    """One code per distinct item id for every run document code, and the ids (sorted) of the codes."""
    if side is not None and side.doc_key is not None and side.doc_vocab is not None:
        return side.doc_key, side.doc_vocab
    return _sorted_codes(lists.doc_ids)


def _sorted_codes(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """int64 codes of ``values`` into their distinct values sorted bytewise, and those values."""
    uniq = pc.unique(values)
    vocab = uniq.take(pc.sort_indices(uniq))
    return np.asarray(pc.index_in(values, value_set=vocab).to_numpy(zero_copy_only=False), dtype=np.int64), vocab
