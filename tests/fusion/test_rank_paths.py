"""``rank_within``'s three ways to rank (a run's own row order, the per-query padded sort, the global sort) give
the brute-force trec order — score descending, ties by document id descending — on runs with ties, runs in and
out of trec order, queries split in two blocks, skewed query sizes and infinite scores."""

from __future__ import annotations

import numpy as np
import pytest

from ranklens.data import Run
from ranklens.fusion import align as align_module
from ranklens.fusion import fuse
from ranklens.fusion.align import align, rank_within


def brute_ranks(query: np.ndarray, doc: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Python's sort per run and query: key (−score, −document)."""
    out = np.full(scores.shape, np.nan)
    for i in range(scores.shape[1]):
        for q in np.unique(query):
            rows = [j for j in np.flatnonzero(query == q) if not np.isnan(scores[j, i])]
            for rank, j in enumerate(sorted(rows, key=lambda j: (-scores[j, i], -doc[j])), start=1):
                out[j, i] = rank
    return out


def make_run(rng: np.random.Generator, sizes: list[int], *, values: int, order: str, name: str) -> Run:
    """A run with ``sizes[q]`` documents for query q, scores from ``values`` distinct values (ties), rows in
    trec order, shuffled within each query, or in trec order but with each query split in two blocks."""
    qs, ds, ss = [], [], []
    for q, size in enumerate(sizes):
        docs = rng.choice(3 * max(sizes), size=size, replace=False)
        score = rng.integers(0, values, size=size).astype(float) - values / 2
        by_id = sorted(range(size), key=lambda j: f"d{docs[j]}".encode(), reverse=True)
        key = sorted(by_id, key=lambda j: -score[j])  # (stable: ties stay by id descending)
        if order == "shuffled":
            key = list(rng.permutation(size))
        block = [(f"q{q:03d}", f"d{docs[j]}", float(score[j])) for j in key]
        if order == "split" and size > 2:
            block = block[: size // 2] + [("zz-other", f"x{q}", 0.0)] + block[size // 2 :]
        for row in block:
            qs.append(row[0])
            ds.append(row[1])
            ss.append(row[2])
    return Run.from_arrays(qs, ds, ss, name=name)


CASES = {
    "equal sizes, in order": ([40] * 30, "trec", 7),
    "equal sizes, shuffled": ([40] * 30, "shuffled", 7),
    "unequal sizes, shuffled, many ties": ([int(x) for x in np.random.default_rng(3).integers(1, 60, 25)], "shuffled", 3),
    "unequal sizes, in order": ([int(x) for x in np.random.default_rng(4).integers(1, 60, 25)], "trec", 5),
    "a query split in two blocks": ([12] * 10, "split", 4),
    "skewed sizes (global sort)": ([70_000] + [1] * 20, "shuffled", 50),
}


@pytest.mark.parametrize("case", list(CASES))
def test_ranks_equal_brute_force(case: str) -> None:
    sizes, order, values = CASES[case]
    rng = np.random.default_rng(len(case))
    runs = [make_run(rng, sizes, values=values, order=o, name=f"r{i}") for i, o in enumerate([order, "shuffled", "trec"])]
    a = align(runs)
    got = rank_within(a.query, a.doc, a.scores, a.rows)
    want = brute_ranks(a.query, a.doc, a.scores) if sum(sizes) < 10_000 else None
    if want is None:  # (the skewed case: the brute force of one 70,000-document query, by numpy's lexsort)
        want = np.full(a.scores.shape, np.nan)
        for i in range(a.scores.shape[1]):
            rows = np.flatnonzero(~np.isnan(a.scores[:, i]))
            order_ = np.lexsort((-a.doc[rows].astype(np.int64), -a.scores[rows, i], a.query[rows]))
            q = a.query[rows][order_]
            first = np.searchsorted(q, q)
            want[rows[order_], i] = np.arange(rows.size) - first + 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(rank_within(a.query, a.doc, a.scores), want)  # (without the row order)


def test_infinite_scores_rank_as_numbers() -> None:
    """−inf (which the padded sort would confuse with its padding) and +inf rank at the ends."""
    run = Run.from_dict({"q": {"a": -np.inf, "b": 1.0, "c": np.inf, "d": -np.inf}, "r": {"a": 2.0}})
    other = Run.from_dict({"q": {"e": 0.0}})
    a = align([run, other])
    got = rank_within(a.query, a.doc, a.scores, a.rows)[:, 0]
    # candidates: (q,a) (q,b) (q,c) (q,d) (q,e) (r,a): c, b, then the −inf tie by id descending: d, a
    assert got[:4].tolist() == [4.0, 2.0, 1.0, 3.0] and np.isnan(got[4]) and got[5] == 1.0
    # a query shorter than the longest (so padded) with one −inf among many scores, in every slot
    for slot in range(40):
        scores = {f"d{j:02d}": (-np.inf if j == slot else float(j)) for j in range(40)}
        wide = {f"w{j:03d}": float(j) for j in range(300)}
        run = Run.from_dict({"p": scores, "w": wide})
        a = align([run, other])
        ranks = rank_within(a.query, a.doc, a.scores, a.rows)[:, 0]
        mine = ranks[(a.query == 0) & ~np.isnan(ranks)]
        assert sorted(mine.tolist()) == list(range(1, 41)) and mine[slot] == 40.0, slot


def test_a_run_in_trec_order_is_not_sorted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The row-order path: a run written in trec order is ranked without calling the sort."""
    rng = np.random.default_rng(5)
    runs = [make_run(rng, [30] * 20, values=4, order="trec", name=f"r{i}") for i in range(2)]
    a = align(runs)
    calls = []
    original = align_module._group_ranks
    monkeypatch.setattr(align_module, "_group_ranks", lambda *x: calls.append(1) or original(*x))
    got = rank_within(a.query, a.doc, a.scores, a.rows)
    assert calls == []
    np.testing.assert_array_equal(got, brute_ranks(a.query, a.doc, a.scores))


def test_ties_made_by_normalisation_rank_by_document_id() -> None:
    """Min-max maps 1e-20 and 2e-20 (with a minimum of -1) to the same 1.0 − ε·…: a tie the run's own
    (score-descending) row order breaks the wrong way; RRF must rank the tie by document id descending.
    Run a: d1 (2e-20), d2 (1e-20), d0 (-1) in trec order on the raw scores; after min-max d1 and d2 tie, so
    d2 is first. By hand, k = 60: d2 1/61, d1 1/62, d0 1/63, plus run b's d0 at rank 1 (1/61)."""
    a = Run.from_arrays(["q", "q", "q"], ["d1", "d2", "d0"], [2e-20, 1e-20, -1.0], name="a")
    b = Run.from_dict({"q": {"d0": 1.0}}, name="b")
    got = fuse([a, b], "rrf", norm="min-max", params={"k": 60}).run.to_dict()["q"]
    assert got == pytest.approx({"d2": 1 / 61, "d1": 1 / 62, "d0": 1 / 63 + 1 / 61}, abs=1e-15)


def test_optimise_ranks_once_and_fuse_one_run_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """``optimise`` combines the same prepared runs for every trial: the ranks are computed once (the whole
    matrix), not once per trial; a single ``fuse`` ranks one run at a time and never builds the matrix."""
    from ranklens.fusion import combine, optimise

    calls: list[str] = []
    monkeypatch.setattr(combine, "rank_within", lambda *x: calls.append("matrix") or rank_within(*x))
    column = combine.rank_column
    monkeypatch.setattr(combine, "rank_column", lambda *x: calls.append("column") or column(*x))
    a = Run.from_dict({"q": {"d1": 3.0, "d2": 1.0}, "p": {"d1": 1.0}}, name="a")
    b = Run.from_dict({"q": {"d2": 2.0, "d3": 1.0}, "p": {"d2": 1.0}}, name="b")
    best = optimise([a, b], {"q": {"d2": 1}, "p": {"d1": 1}}, "rrf")
    assert len(best.optimisation["trials"]) == 10 and calls == ["matrix"]
    calls.clear()
    fused = fuse([a, b], "rrf", params={"k": 60})
    assert calls == ["column", "column"]
    assert fused.run.to_dict()["q"] == pytest.approx({"d1": 1 / 61, "d2": 1 / 62 + 1 / 61, "d3": 1 / 62})
