"""nDCG(norm=minmax): negative labels as negative gains, min–max normalised (Gienapp et al., CIKM 2020)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import ranklens


def dcg(gains: list[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def brute_minmax(qrels: dict[str, int], ranking: list[str], k: int) -> float:
    """(DCG − min)/(max − min), min and max over every top-k list drawn from the judged documents and k
    zero-gain fillers (the collection's non-relevant documents: as for IDCG, the extreme rankings need not
    show every judged document)."""
    gain = lambda d: float(qrels.get(d, 0))  # noqa: E731
    pool = list(qrels) + [f"filler{i}" for i in range(k)]
    values = [dcg([gain(d) for d in p], k) for p in itertools.permutations(pool, k)]
    lo, hi = min(values), max(values)
    actual = dcg([gain(d) for d in ranking], k)
    return (actual - lo) / (hi - lo) if hi > lo else 0.0


def test_worked_example() -> None:
    qrels = {"q": {"a": 2, "b": -1, "c": 1, "d": 0}}
    run = {"q": {"b": 4.0, "a": 3.0, "e": 2.0, "c": 1.0}}
    res = ranklens.evaluate(qrels, run, ["nDCG(norm=minmax)", "nDCG"])
    # DCG = −1 + 2/log2 3 + 1/log2 5 = 0.692536, IDCG = 2.630930, minDCG = −1
    assert res.aggregates[0] == pytest.approx((0.692536 + 1) / (2.630930 + 1), abs=1e-6)
    assert round(res.aggregates[1], 6) == 0.643322  # the default is unchanged (trec_eval q7)


@pytest.mark.parametrize("seed", range(30))
def test_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    labels = rng.integers(-2, 4, n)
    qrels = {f"d{i}": int(g) for i, g in enumerate(labels)}
    ranking = [f"d{i}" for i in rng.permutation(n)]  # every judged document retrieved
    k = int(rng.integers(1, min(n, 4) + 1))
    run = {"q": {d: float(n - r) for r, d in enumerate(ranking)}}
    got = ranklens.evaluate({"q": qrels}, run, [f"nDCG(norm=minmax)@{k}"]).aggregates[0]
    assert got == pytest.approx(brute_minmax(qrels, ranking, k), abs=1e-12)
    assert -1e-12 <= got <= 1 + 1e-12


def test_without_negatives_minmax_is_ndcg() -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 1}, "r": {"x": 2}}
    run = {"q": {"b": 3.0, "c": 2.0, "a": 1.0, "zz": 0.5}, "r": {"y": 1.0, "x": 0.5}}
    res = ranklens.evaluate(qrels, run, ["nDCG(norm=minmax)@3", "nDCG@3", "nDCG(norm=minmax,gain=exp)", "nDCG(gain=exp)"])
    assert res.aggregates[0] == pytest.approx(res.aggregates[1])
    assert res.aggregates[2] == pytest.approx(res.aggregates[3])


def test_interaction_with_the_negative_policy() -> None:
    qrels = {"q": {"a": 2, "b": -2}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    trec = ranklens.evaluate(qrels, run, ["nDCG(norm=minmax)"])  # default policy: raw label recovered
    zero = ranklens.evaluate(qrels, run, ["nDCG(norm=minmax)", "nDCG"], negative="zero")
    # trec: DCG = −2 + 2/log2 3, min = −2, max = 2 → (2/log2 3) / 4
    assert trec.aggregates[0] == pytest.approx((2 / math.log2(3)) / 4)
    assert zero.aggregates[0] == pytest.approx(zero.aggregates[1])  # negatives are judged 0 before any measure


def test_exp_gain_of_negative_labels_is_symmetric() -> None:
    qrels = {"q": {"a": 2, "b": -2}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    got = ranklens.evaluate(qrels, run, ["nDCG(norm=minmax,gain=exp)"]).aggregates[0]
    actual, lo, hi = -3 + 3 / math.log2(3), -3.0, 3.0  # gains 3 and −3; the extremes put one of them alone on top
    assert got == pytest.approx((actual - lo) / (hi - lo))
