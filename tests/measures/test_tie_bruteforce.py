"""``ties=average`` is the mean over ALL orderings of tied documents (McSherry & Najork; spec §3).

For small random queries with many ties, every tie-averaged value is compared with the brute-force mean
over every permutation of every tie group, computed with the independent reference implementation in
``reference_impl.py``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ranklens

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl as ref  # noqa: E402

Ranking = list
MeasureFn = Callable[[Ranking, list], float]

# ranklens measure → brute-force function of (ranking labels, judged labels)
MEASURES: dict[str, MeasureFn] = {
    "nDCG(ties=average)": lambda r, j: ref.ndcg(r, j),
    "nDCG(ties=average)@1": lambda r, j: ref.ndcg(r, j, 1),
    "nDCG(ties=average)@3": lambda r, j: ref.ndcg(r, j, 3),
    "nDCG(ties=average)@5": lambda r, j: ref.ndcg(r, j, 5),
    "nDCG(gain=exp,ties=average)@3": lambda r, j: ref.ndcg(r, j, 3, gain_kind="exp"),
    "nDCG(discount=jk,base=3,ties=average)@4": lambda r, j: ref.ndcg(r, j, 4, discount_kind="jk", base=3),
    "nDCG(gain={0:1,1:2,2:5},ties=average)@3": lambda r, j: ref.ndcg(r, j, 3, gain_kind={0: 1, 1: 2, 2: 5}),
    "nDCG(ideal=local,ties=average)": lambda r, j: ref.ndcg(r, j, ideal="local"),
    "nDCG(ideal=max,max_rel=3,ties=average)@3": lambda r, j: ref.ndcg(r, j, 3, ideal="max", max_rel=3),
    "DCG(ties=average)": lambda r, j: ref.dcg(r),
    "DCG(ties=average)@2": lambda r, j: ref.dcg(r, 2),
    "DCG(gain=exp,ties=average)@4": lambda r, j: ref.dcg(r, 4, gain_kind="exp"),
    "P(ties=average)@1": lambda r, j: ref.precision(r, 1),
    "P(ties=average)@2": lambda r, j: ref.precision(r, 2),
    "P(ties=average)@4": lambda r, j: ref.precision(r, 4),
    "P(ties=average)@10": lambda r, j: ref.precision(r, 10),
    "P(rel=2,ties=average)@3": lambda r, j: ref.precision(r, 3, rel=2),
    "R(ties=average)@2": lambda r, j: ref.recall(r, j, 2),
    "R(ties=average)@4": lambda r, j: ref.recall(r, j, 4),
    "R(ties=average)": lambda r, j: ref.recall(r, j),
    "R(rel=3,ties=average)@3": lambda r, j: ref.recall(r, j, 3, rel=3),
    "AP(ties=average)": lambda r, j: ref.average_precision(r, j),
    "AP(ties=average)@3": lambda r, j: ref.average_precision(r, j, 3),
    "AP(rel=2,ties=average)": lambda r, j: ref.average_precision(r, j, rel=2),
    "RR(ties=average)": lambda r, j: ref.reciprocal_rank(r),
    "RR(ties=average)@2": lambda r, j: ref.reciprocal_rank(r, 2),
    "RR(ties=average)@4": lambda r, j: ref.reciprocal_rank(r, 4),
    "RR(rel=2,ties=average)": lambda r, j: ref.reciprocal_rank(r, rel=2),
    "Success(ties=average)@1": lambda r, j: ref.success(r, 1),
    "Success(ties=average)@3": lambda r, j: ref.success(r, 3),
    "Success(rel=3,ties=average)@2": lambda r, j: ref.success(r, 2, rel=3),
}

SEEDS = [0, 1, 2, 3]


def random_tied_queries(seed: int, n_queries: int = 60) -> tuple[dict, dict]:
    """Queries of 1–7 retrieved documents with scores from a few levels (so, ties), labels 0–3, some
    retrieved documents unjudged (not in the qrels) or pooled-unjudged (negative label), and some judged
    documents not retrieved. At most 720 tie orderings per query."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    while len(run) < n_queries:
        qid = f"q{len(run):03d}"
        n = int(rng.integers(1, 8))
        docs = [f"d{int(x)}" for x in rng.choice(100, size=n, replace=False)]
        scores = rng.integers(0, int(rng.integers(1, 4)), size=n).astype(np.float64)
        _, counts = np.unique(scores, return_counts=True)
        if math.prod(math.factorial(int(c)) for c in counts) > 720:
            continue
        judged: dict[str, int] = {}
        for d in docs:
            u = rng.random()
            if u < 0.15:
                continue  # retrieved, not in the qrels
            judged[d] = -1 if u < 0.22 else int(rng.choice([0, 0, 1, 1, 2, 3]))
        for j in range(int(rng.integers(0, 3))):
            judged[f"unretrieved{j}"] = int(rng.integers(0, 4))
        if not judged:
            judged["unretrieved"] = 0
        qrels[qid] = judged
        run[qid] = dict(zip(docs, scores.tolist()))
    return qrels, run


@pytest.mark.parametrize("seed", SEEDS)
def test_tie_average_equals_mean_over_permutations(seed: int) -> None:
    """Every tie-averaged measure equals the brute-force mean over all orderings of tied documents."""
    qrels, run = random_tied_queries(seed)
    res = ranklens.evaluate(qrels, run, list(MEASURES))
    failures = []
    for qid in run:
        judged = list(qrels[qid].values())
        rankings = [ref.ranked_labels(qrels[qid], order) for order in ref.all_tie_orders(run[qid])]
        for name, fn in MEASURES.items():
            expected = math.fsum(fn(r, judged) for r in rankings) / len(rankings)
            got = res.per_query(name)[qid]
            if abs(got - expected) > 1e-12:
                failures.append((name, qid, got, expected, qrels[qid], run[qid]))
    assert not failures, f"{len(failures)} mismatches, e.g. {failures[:3]}"


def test_spec_worked_example_by_brute_force() -> None:
    """§3 worked example, y_true = [3,2,3,0,1,2], y_score = [0.9,0.7,0.7,0.5,0.5,0.5]: the tie-averaged
    values equal the brute force (and the spec's numbers)."""
    docs = ["a", "b", "c", "d", "e", "f"]
    qrels = {"q": dict(zip(docs, [3, 2, 3, 0, 1, 2]))}
    run = {"q": dict(zip(docs, [0.9, 0.7, 0.7, 0.5, 0.5, 0.5]))}
    judged = list(qrels["q"].values())
    brute = {
        "nDCG(ties=average)": ref.tie_average(qrels["q"], run["q"], lambda r: ref.ndcg(r, judged)),
        "nDCG(ties=average)@3": ref.tie_average(qrels["q"], run["q"], lambda r: ref.ndcg(r, judged, 3)),
        "AP(rel=2,ties=average)": ref.tie_average(qrels["q"], run["q"], lambda r: ref.average_precision(r, judged, rel=2)),
    }  # fmt: skip
    assert brute == {
        "nDCG(ties=average)": pytest.approx(0.980404, abs=1e-6),
        "nDCG(ties=average)@3": pytest.approx(0.988891, abs=1e-6),
        "AP(rel=2,ties=average)": pytest.approx(0.955556, abs=1e-6),
    }
    res = ranklens.evaluate(qrels, run, list(brute))
    assert {m: res[m] for m in brute} == {m: pytest.approx(v, abs=1e-12) for m, v in brute.items()}


def test_one_large_tie_group() -> None:
    """All documents tied (7! = 5040 orderings): the expectation, not the docno tie-break order."""
    labels = [0, 2, 0, 1, 0, 3, 0]
    docs = [f"d{i}" for i in range(7)]
    qrels = {"q": dict(zip(docs, labels))}
    run = {"q": dict.fromkeys(docs, 1.0)}
    names = ["nDCG(ties=average)@3", "AP(ties=average)", "RR(ties=average)", "P(ties=average)@2"]
    fns = [
        lambda r: ref.ndcg(r, labels, 3),
        lambda r: ref.average_precision(r, labels),
        lambda r: ref.reciprocal_rank(r),
        lambda r: ref.precision(r, 2),
    ]
    res = ranklens.evaluate(qrels, run, names)
    for name, fn in zip(names, fns):
        assert res[name] == pytest.approx(ref.tie_average(qrels["q"], run["q"], fn), abs=1e-12), name


def _union_pool(qrels: dict[str, int], scores: dict[str, float], depth: int) -> list:
    """Labels of every document that is within ``depth`` in at least one ordering of the ties."""
    docs = {d for order in ref.all_tie_orders(scores) for d in order[:depth]}
    return [qrels.get(d) for d in docs]


@pytest.mark.parametrize("seed", SEEDS)
def test_tie_averaged_local_and_recall_ideals(seed: int) -> None:
    """With ties=average the local (recall) ideal is built from every document that is within k (the
    depth) in some ordering of the ties, so it does not follow the doc-id tie-break and nDCG ≤ 1:
    nDCG = E[DCG@k] / IDCG@k(that pool)."""
    qrels, run = random_tied_queries(seed)
    cases = {
        "nDCG(ideal=local,ties=average)@1": (1, 1),
        "nDCG(ideal=local,ties=average)@3": (3, 3),
        "nDCG(ideal=local,gain=exp,ties=average)@2": (2, 2),
        "nDCG(ideal=recall,depth=3,ties=average)@1": (1, 3),
        "nDCG(ideal=recall,depth=5,ties=average)@2": (2, 5),
    }
    res = ranklens.evaluate(qrels, run, list(cases))
    for name, (k, depth) in cases.items():
        gain_kind = "exp" if "exp" in name else "linear"
        for qid in run:
            e_dcg = ref.tie_average(qrels[qid], run[qid], lambda r, k=k, gain_kind=gain_kind: ref.dcg(r, k, gain_kind=gain_kind))
            top = ref.idcg_from_pool(_union_pool(qrels[qid], run[qid], depth), k, gain_kind=gain_kind)
            expected = e_dcg / top if top > 0 else 0.0
            assert res.per_query(name)[qid] == pytest.approx(expected, abs=1e-12), (name, qid)
            assert 0.0 <= res.per_query(name)[qid] <= 1.0 + 1e-12
