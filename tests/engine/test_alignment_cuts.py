"""Issue 12: the max_docs and depth cuts of ``align`` are taken on the sorted positions before any gather;
the lists must be those of the whole alignment cut query by query (block-moved queries, ties broken by
document id, run-only rows, queries in file order and not)."""

from __future__ import annotations

import numpy as np
import pytest

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.alignment import align


def _data(shape: str, extra: bool) -> tuple[Qrels, Run]:
    rng = np.random.default_rng(7)
    qs, ds, ss = [], [], []
    queries = [f"q{i}" for i in range(12)] + (["x1", "x2"] if extra else [])  # x*: not in the qrels
    order = {"grouped": queries, "moved": queries[::-1], "shuffled": queries}[shape]
    for q in order:
        n = int(rng.integers(0, 30))
        scores = np.sort(rng.integers(0, 6, n).astype(float))[::-1]  # many ties
        for j in range(n):
            qs.append(q), ds.append(f"d{int(rng.integers(0, 10**6))}_{j}"), ss.append(float(scores[j]))
    if shape == "shuffled":
        p = rng.permutation(len(qs))
        qs, ds, ss = [qs[i] for i in p], [ds[i] for i in p], [ss[i] for i in p]
    qq, qd, ql = [], [], []
    for q, d in zip(qs, ds):
        if q.startswith("q") and rng.random() < 0.5:
            qq.append(q), qd.append(d), ql.append(int(rng.integers(-1, 3)))
    qq.append("q99"), qd.append("dz"), ql.append(1)
    return Qrels.from_arrays(qq, qd, ql), Run.from_arrays(qs, ds, ss)


def _per_query(lists: object, cut: int | None) -> list[tuple[list[int], list[float], list[int]]]:
    out = []
    off = lists.offsets  # type: ignore[attr-defined]
    for i in range(off.size - 1):
        a, b = int(off[i]), int(off[i + 1])
        if cut is not None:
            b = min(b, a + cut)
        out.append((lists.labels[a:b].tolist(), lists.scores[a:b].tolist(), lists.docs[a:b].tolist()))  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize("extra", [True, False])
@pytest.mark.parametrize("shape", ["grouped", "moved", "shuffled"])
@pytest.mark.parametrize("order", ["score", "input"])
@pytest.mark.parametrize("max_docs, depth", [(None, 3), (5, None), (5, 3), (3, 5), (0, None), (None, 0), (100, 100)])
def test_cuts_are_the_whole_alignment_cut(extra: bool, shape: str, order: str, max_docs: int | None, depth: int | None) -> None:
    qrels, run = _data(shape, extra)
    whole, whole_report = align(qrels, run, order=order)  # type: ignore[arg-type]
    lists, report = align(qrels, run, order=order, max_docs=max_docs, depth=depth)  # type: ignore[arg-type]
    cuts = [c for c in (max_docs, depth) if c is not None]
    assert _per_query(lists, None) == _per_query(whole, min(cuts))
    counts = np.diff(whole.offsets)
    assert report.truncated_rows == (0 if max_docs is None else int(np.sum(np.maximum(counts - max_docs, 0))))
    assert report.run_only_rows == whole_report.run_only_rows
    assert (report.run_only_rows > 0) == extra
    assert lists.docs.dtype == whole.docs.dtype == np.int64
