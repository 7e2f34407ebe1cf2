"""Align a run with the qrels: ONE join and ONE sort, producing :class:`RankedLists`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data._arrow import from_numpy, to_numpy
from ranklens.data._hashing import HASH_FROM_ROWS, QUERY_BITS, pair_keys, query_major_keys, string_hash
from ranklens.data._intern import lookup
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.ranked import NONPOOL, UNJUDGED, RankedLists
from ranklens.errors import InputError, QuerySetError, alignment_notes

__all__ = ["AlignReport", "align"]

#: Up to this many run query ids are mapped to qrels codes with a cached dictionary (a streamed block has
#: hundreds); more with one ``index_in`` (its hash table costs ~10 ms per call on 10k qrels queries).
QUERY_DICT_MAX = 4096

QuerySet = Literal["intersect", "qrels", "error"]
Negative = Literal["trec", "zero", "error"]
Order = Literal["score", "input"]


@dataclass(frozen=True)
class AlignReport:
    """What the alignment left out, so that nothing is dropped silently."""

    run_only_queries: int
    """queries in the run but not in the qrels (ignored, as trec_eval does)"""
    run_only_rows: int
    qrels_only_queries: int
    """queries in the qrels with no retrieved document"""
    qrels_only_scored_zero: bool
    """True when those queries were kept with an empty ranking (policy ``qrels``, trec_eval ``-c``)"""
    truncated_rows: int
    """rows beyond ``max_docs`` per query"""
    removed_unjudged_rows: int
    """rows removed by ``judged_only``"""
    absent: np.ndarray | None = field(default=None, compare=False)
    """mask over the evaluated queries: the run has no row for them (only with query set ``qrels``)"""

    def messages(self) -> list[str]:
        """Human-readable notes for every row or query left out (each a :class:`~ranklens.errors.Note`)."""
        return [*alignment_notes(
            self.run_only_queries, self.run_only_rows, self.qrels_only_queries, self.qrels_only_scored_zero,
            self.truncated_rows, self.removed_unjudged_rows,
        )]


def align(
    qrels: Qrels,
    run: Run,
    *,
    order: Order = "score",
    query_set: QuerySet = "intersect",
    negative: Negative = "trec",
    judged_only: bool = False,
    max_docs: int | None = None,
    depth: int | None = None,
    map_negative_labels: bool = False,
    judged_by: np.ndarray | None = None,
) -> tuple[RankedLists, AlignReport]:
    """Join ``run`` to ``qrels`` and sort it into ranked lists.

    Args:
        order: ``"score"`` sorts by score descending, ties by document id descending (trec_eval's
            ``strcmp`` order; the tie-averaging kernels use the same order); ``"input"`` sorts by score
            descending and keeps the run's row order among tied documents.
        query_set: ``"intersect"`` evaluates queries in both (default); ``"qrels"`` also evaluates qrels
            queries missing from the run, with an empty ranking (trec_eval ``-c``); ``"error"`` raises
            when any qrels query is missing from the run.
        negative: ``"trec"`` treats negative labels as "pooled but unjudged" (gain 0, not in the ideal);
            ``"zero"`` maps them to a judged 0; ``"error"`` raises.
        judged_only: drop retrieved documents without a non-negative judgement (trec_eval ``-J``),
            after the ``max_docs`` cut, as trec_eval does.
        max_docs: evaluate only the first ``max_docs`` documents per query after sorting (``-M``).
        depth: the deepest rank any requested measure looks at (``None``: all). Rows below it are
            neither joined nor kept; unlike ``max_docs`` this is an optimisation, not reported.
        map_negative_labels: recorded in the lists for the gain kernels: a gain map naming a negative
            label applies to it (the Evaluator) or, as in trec_eval, never does (``ranklens trec-eval``).
        judged_by: shared judgements — for each of the run's query codes, the code of the qrels query whose
            labels judge it (-1: none, the query is not evaluated). Several run queries (e.g. the requests of one
            production query) then share one qrels query, held once, instead of the qrels repeating its labels
            under every run query's id; the lists' queries are the run's. Only with ``query_set="intersect"``.

    Real-valued qrels (float64 labels) give float64 ``labels`` with the same NONPOOL/UNJUDGED markers.
    """
    if max_docs is not None and max_docs < 0:
        raise InputError(f"max_docs must be a non-negative integer, got {max_docs}")
    qlabel = qrels.label
    if negative == "error" and qlabel.size and qlabel.min() < 0:
        i = int(np.argmin(qlabel))
        raise InputError(
            f"{qrels.source}: negative relevance label {qlabel[i].item()} "
            f"(query '{qrels.query_ids[int(qrels.query[i])].as_py()}'); choose a negative-label policy "
            "(trec, zero)"
        )
    if negative == "zero":
        qlabel = np.maximum(qlabel, 0)

    nq_qrels = qrels.num_queries
    out_ids = qrels.query_ids  # the ids of the lists' queries (the qrels', or the run's with judged_by)
    if judged_by is not None:
        judged_by = np.asarray(judged_by, dtype=np.int64)
        if query_set != "intersect" or judged_by.shape != (len(run.query_ids),):
            raise InputError("judged_by needs query_set='intersect' and one qrels code per run query")
        qmap = np.where(judged_by >= 0, np.arange(judged_by.size), -1)  # the lists' queries are the run's
        nq_qrels, out_ids = judged_by.size, run.query_ids
    else:
        # map the run's (small) query vocabulary onto the qrels' one, then take per row
        qmap = _query_map(run, qrels)
    rq = qmap[run.query] if run.query.size else np.empty(0, np.int32)
    keep = rq >= 0
    run_only_rows = int(keep.size - np.count_nonzero(keep))
    run_only_queries = int(np.count_nonzero(qmap < 0))
    if run_only_rows:
        rows: np.ndarray | None = np.flatnonzero(keep)
        rq, scores = rq[rows], run.score[rows]
    else:  # every row kept: no gathers, and row i is run row i (no index array of them either)
        rows, scores = None, run.score
    del keep

    # ONE sort: query, then score desc, then (trec) doc id desc or (input) file order among ties
    perm = _rank_order(rq, scores)
    in_order = perm.size == 0 or (perm[0] == 0 and perm[-1] == perm.size - 1 and _is_identity(perm))
    if order == "score":
        tied = _break_ties_by_doc_desc(perm, rq, scores, run.docs, rows)
        in_order = in_order and tied is perm
        perm = tied

    # the cuts at max_docs and depth keep each query's first rows in sorted order: found on the sorted
    # positions (queries come in ascending code order), so only the kept rows are gathered (issue 12)
    truncated = 0
    kept: np.ndarray | None = None  # the sorted positions kept (None: all)
    if rq.size and (max_docs is not None or (depth is not None and not judged_only)):
        n = rq.size
        per_query = np.bincount(rq, minlength=nq_qrels)
        starts = np.concatenate(([0], np.cumsum(per_query)[:-1]))
        keep_counts = per_query
        if max_docs is not None:
            keep_counts = np.minimum(keep_counts, max_docs)
            truncated = int(n - keep_counts.sum())
        if depth is not None and not judged_only:
            keep_counts = np.minimum(keep_counts, depth)
        total = int(keep_counts.sum())
        if total < n:
            kept_starts = np.concatenate(([0], np.cumsum(keep_counts)[:-1]))
            kept = np.repeat(starts - kept_starts, keep_counts) + np.arange(total)
    if kept is not None:
        idx = kept if in_order else perm[kept]
        rdoc = idx if rows is None else rows[idx]
        rq, scores = rq[idx], scores[idx]
        del idx, kept
    elif in_order:  # already in order (a run written query by query, in rank order): no gathers
        rdoc = np.arange(rq.size) if rows is None else rows
    else:
        rdoc = perm if rows is None else rows[perm]
        rq, scores = rq[perm], scores[perm]
    del perm, rows

    # the join with the qrels, only for the rows that will be used
    labels = _labels(qrels, qlabel, run, rdoc, rq if judged_by is None else judged_by[rq])

    removed = 0
    if judged_only:
        ok = labels >= 0
        removed = int(ok.size - np.count_nonzero(ok))
        rq, labels, scores, rdoc = rq[ok], labels[ok], scores[ok], rdoc[ok]

    counts = np.bincount(rq, minlength=nq_qrels)

    present = np.zeros(nq_qrels, dtype=bool)
    present[np.unique(qmap[qmap >= 0])] = True
    if judged_by is None:
        qrels_only = int(nq_qrels - np.count_nonzero(present))
    else:  # the qrels queries judging no run query
        qrels_only = int(qrels.num_queries - np.unique(judged_by[present]).size)
    if query_set == "error" and qrels_only:
        missing = qrels.query_ids.filter(from_numpy(~present)).to_pylist()
        raise QuerySetError(
            f"{qrels_only} qrels quer{'y' if qrels_only == 1 else 'ies'} not in the run {run.source} "
            f"(e.g. {missing[:3]}); use query set 'intersect' or 'qrels'"
        )
    evaluated = np.ones(nq_qrels, dtype=bool) if query_set == "qrels" else present
    # drop rows of non-evaluated queries (none: every row's query is present) and re-index queries
    sel_counts = counts[evaluated]
    offsets = np.concatenate(([0], np.cumsum(sel_counts))).astype(np.int64)

    # ideal: all judged labels per evaluated query, sorted descending. The qrels rows are sorted by query:
    # the evaluated queries' rows are ranges of them, gathered in O(those rows), not by a mask over all
    # the qrels (a streamed block evaluates a few hundred of them)
    qoff = _qrels_offsets(qrels)
    ev_q = np.flatnonzero(evaluated)
    if judged_by is not None:
        ev_q = judged_by[ev_q]  # each evaluated run query's ideal is its judging qrels query's
    ideal_counts = qoff[ev_q + 1] - qoff[ev_q]
    ideal_offsets = np.concatenate(([0], np.cumsum(ideal_counts))).astype(np.int64)
    ideal_rows = np.repeat(qoff[ev_q] - ideal_offsets[:-1], ideal_counts) + np.arange(ideal_offsets[-1])
    iq = np.repeat(np.arange(ev_q.size), ideal_counts)
    il = qlabel[ideal_rows]
    idoc = qrels.doc[ideal_rows]
    real = qlabel.dtype.kind == "f"
    iperm = np.lexsort((-il if real else -il.astype(np.int64), iq))

    lists = RankedLists(
        query_ids=out_ids.filter(from_numpy(np.asarray(evaluated))),
        offsets=offsets,
        labels=labels,
        scores=scores,
        docs=rdoc,
        doc_ids=run.docs,
        ideal_offsets=ideal_offsets,
        ideal_labels=il[iperm].astype(np.float64 if real else np.int32),
        ideal_docs=idoc[iperm],
        qrels_doc_ids=qrels.doc_ids,
        run_name=run.name,
        top_label=qlabel.max().item() if qlabel.size else 0,
        map_negative_labels=map_negative_labels,
    )
    report = AlignReport(
        run_only_queries=run_only_queries,
        run_only_rows=run_only_rows,
        qrels_only_queries=qrels_only,
        qrels_only_scored_zero=query_set == "qrels",
        truncated_rows=truncated,
        removed_unjudged_rows=removed,
        absent=~present[evaluated] if query_set == "qrels" else None,
    )
    return lists, report


def _labels(qrels: Qrels, qlabel: np.ndarray, run: Run, rows: np.ndarray, rq: np.ndarray) -> np.ndarray:
    """The qrels label of every kept run row (NONPOOL when not judged, UNJUDGED when negative).

    A hash join on (query, document) keys finds candidate matches; each one is confirmed on the exact
    document id, so a hash collision cannot produce a wrong label (it falls back to an exact join).
    """
    labels: np.ndarray = np.full(rows.size, NONPOOL, dtype=_label_dtype(qlabel))
    if rows.size == 0 or len(qrels) == 0:
        return labels
    if len(run.docs) + len(qrels) < HASH_FROM_ROWS and "sorted_keys" not in qrels._cache:
        # small: the exact join interns every run row and the qrels' docs; once the qrels' keys are built
        # (a streamed run's earlier blocks), a small block is matched on them too: no vocabulary lookup
        return _labels_exact(qrels, qlabel, run, rows, rq)
    sorted_keys = _qrels_keys(qrels)
    if sorted_keys is None:  # two qrels rows share a key: a collision; use the exact join
        return _labels_exact(qrels, qlabel, run, rows, rq)
    skeys, sorder = sorted_keys
    rkeys = _pair_keys_of(qrels)(rq, run.doc_hash[rows])
    pos = np.searchsorted(skeys, rkeys)
    np.minimum(pos, skeys.size - 1, out=pos)
    found = np.flatnonzero(skeys[pos] == rkeys)
    qi = sorder[pos[found]]
    same_doc = pc.equal(run.docs.take(from_numpy(rows[found])), qrels.doc_strings.take(from_numpy(qi)))
    if not (pc.all(same_doc).as_py() in (True, None) and np.array_equal(qrels.query[qi], rq[found])):
        return _labels_exact(qrels, qlabel, run, rows, rq)
    lab = qlabel[qi]
    # a negative qrels label means "pooled but unjudged" (trec_eval RELVALUE_UNJUDGED)
    labels[found] = np.where(lab < 0, UNJUDGED, lab).astype(labels.dtype)
    return labels


def _qrels_keys(qrels: Qrels) -> tuple[np.ndarray, np.ndarray] | None:
    """The qrels' (query, document) hash keys sorted, and the qrels row of each; ``None`` when two rows
    share a key (a collision: the caller takes the exact join). Built once per qrels object and cached."""
    if "sorted_keys" not in qrels._cache:
        keys = _pair_keys_of(qrels)(qrels.query, string_hash(qrels.doc_strings))
        order = np.argsort(keys, kind="stable")
        skeys = keys[order]
        unique = skeys.size < 2 or not bool(np.any(skeys[1:] == skeys[:-1]))
        qrels._cache["sorted_keys"] = (skeys, order) if unique else None
    return qrels._cache["sorted_keys"]  # type: ignore[no-any-return]


def _pair_keys_of(qrels: Qrels) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """How the (query, document) keys of a join on ``qrels`` are made: query-major (a run's lookups stay
    near each other) when its query codes fit :data:`~ranklens.data._hashing.QUERY_BITS` bits."""
    return query_major_keys if qrels.num_queries < (1 << QUERY_BITS) else pair_keys


def _qrels_offsets(qrels: Qrels) -> np.ndarray:
    """``qrels.offsets``, computed once per qrels object (read-only)."""
    if "offsets" not in qrels._cache:
        off = qrels.offsets
        off.flags.writeable = False
        qrels._cache["offsets"] = off
    return qrels._cache["offsets"]  # type: ignore[no-any-return]


def _query_map(run: Run, qrels: Qrels) -> np.ndarray:
    """The qrels code of each of the run's query ids (-1 when absent); a small run vocabulary (a streamed
    block's) is looked up in a dictionary of the qrels' ids built once, not by a new hash table per call."""
    if len(run.query_ids) > QUERY_DICT_MAX:
        return lookup(run.query_ids, qrels.query_ids)
    if "query_codes" not in qrels._cache:
        qrels._cache["query_codes"] = {q: i for i, q in enumerate(qrels.query_ids.to_pylist())}
    codes = qrels._cache["query_codes"]
    return np.fromiter((codes.get(q, -1) for q in run.query_ids.to_pylist()), dtype=np.int32, count=len(run.query_ids))


def _label_dtype(qlabel: np.ndarray) -> type:
    """int32 labels for integer qrels, float64 for real-valued ones (the markers are exact in both)."""
    return np.float64 if qlabel.dtype.kind == "f" else np.int32


def _labels_exact(qrels: Qrels, qlabel: np.ndarray, run: Run, rows: np.ndarray, rq: np.ndarray) -> np.ndarray:
    """The same join on interned document codes (slower; used only after a hash collision)."""
    labels: np.ndarray = np.full(rows.size, NONPOOL, dtype=_label_dtype(qlabel))
    dmap = lookup(run.doc_ids, qrels.doc_ids)
    qd = dmap[run.doc[rows]]
    ndocs = max(len(qrels.doc_ids), 1)
    qkey = qrels.query.astype(np.int64) * ndocs + qrels.doc
    judged = qd >= 0
    if qkey.size and judged.any():
        rkey = rq[judged].astype(np.int64) * ndocs + qd[judged]
        pos = np.minimum(np.searchsorted(qkey, rkey), qkey.size - 1)
        found = qkey[pos] == rkey
        lab = np.where(found, qlabel[pos], NONPOOL)
        labels[judged] = np.where(found & (lab < 0), UNJUDGED, lab).astype(labels.dtype)
    return labels


def _is_identity(perm: np.ndarray) -> bool:
    return bool(np.all(perm[1:] - perm[:-1] == 1))


def _rank_order(rq: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """A permutation sorting rows by query, then score descending, keeping input order among ties.

    Run files are usually written grouped by query and in rank order: then no sort is needed (an O(n)
    check), or only whole query blocks move (when queries come in another order).
    """
    n = rq.size
    if n == 0:
        return np.arange(0)
    same_q = rq[1:] == rq[:-1]
    if bool(np.all(~same_q | (scores[1:] <= scores[:-1]))):
        starts = np.concatenate(([0], np.flatnonzero(~same_q) + 1))
        block_q = rq[starts]
        if bool(np.all(block_q[1:] > block_q[:-1])):
            return np.arange(n)
        if np.unique(block_q).size == block_q.size:  # each query is one contiguous block
            lengths = np.diff(np.concatenate((starts, [n])))
            order = np.argsort(block_q, kind="stable")
            moved = lengths[order]
            perm = np.repeat(starts[order] - np.concatenate(([0], np.cumsum(moved)[:-1])), moved)
            perm += np.arange(n)  # (in place: one full-length temporary, not three)
            return perm
    return np.lexsort((-scores, rq))  # lexsort is stable: ties keep the input order


def _break_ties_by_doc_desc(
    perm: np.ndarray, rq: np.ndarray, scores: np.ndarray, docs: pa.Array, rows: np.ndarray | None
) -> np.ndarray:
    """Reorder each run of tied rows (same query and score) by document id descending (``strcmp``);
    ``rows``: the run row of each of ``rq``'s (None: row i is run row i)."""
    s = scores[perm]
    tie = s[1:] == s[:-1]
    del s
    q = rq[perm]
    tie &= q[1:] == q[:-1]
    del q
    if not tie.any():
        return perm
    member = np.zeros(perm.size, dtype=bool)
    member[1:] |= tie
    member[:-1] |= tie
    pos = np.flatnonzero(member)
    group = np.cumsum(np.concatenate(([True], ~tie[pos[:-1]] | (np.diff(pos) != 1))))
    at = perm[pos]
    table = pa.table({"g": from_numpy(group), "d": docs.take(from_numpy(at if rows is None else rows[at]))})
    order = to_numpy(pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")]))
    out = perm.copy()
    out[pos] = perm[pos[order]]
    return out
