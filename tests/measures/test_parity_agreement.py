"""Compat equals ir_measures' compat provider and Accuracy its accuracy provider, to 1e-9, on seeded generated
collections. Where ir_measures' Accuracy divides by zero (every retrieved document in the top k relevant) ours
is NA, and so is a query with no relevant document retrieved (which ir_measures leaves out)."""

from __future__ import annotations

import math
import random

import pytest

import ranklens

ir_measures = pytest.importorskip("ir_measures")


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(50)]
        qrels[qid] = {d: rng.choice((0, 0, 1, 1, 2, 3, -1)) for d in rng.sample(docs, rng.choice((3, 10, 30)))}
        n = rng.choice((1, 5, 20, 45))
        retrieved = rng.sample(docs, n)
        # distinct positive scores: ir_measures ranks its ideal's unretrieved documents at score 0
        run[qid] = {d: float(s) for d, s in zip(retrieved, rng.sample(range(1, 10_000), n))}
    qrels["q1"] = {d: 3 for d in run["q1"]}  # every retrieved document relevant: ir_measures' Accuracy / 0
    return qrels, run


@pytest.mark.parametrize("seed", [28, 7])
@pytest.mark.parametrize(
    ("theirs", "ours"),
    [("Compat", "Compat"), ("Compat(p=0.8)", "Compat(p=0.8)"), ("Compat(normalize=False)", "Compat(normalize=false)")],
)
def test_compat_equals_ir_measures(theirs: str, ours: str, seed: int) -> None:
    qrels, run = _collection(seed)
    expected = {m.query_id: float(m.value) for m in ir_measures.iter_calc([ir_measures.parse_measure(theirs)], qrels, run)}
    got = ranklens.Evaluator([ours], qrels)(run, warn=False).per_query(ours)
    assert set(got) == set(expected) == set(run)
    for q, v in expected.items():
        assert math.isclose(got[q], v, rel_tol=1e-9, abs_tol=1e-12), (ours, q, got[q], v)


@pytest.mark.parametrize("seed", [28, 7])
@pytest.mark.parametrize(("theirs", "ours"), [("Accuracy", "Accuracy"), ("Accuracy@5", "Accuracy@5"), ("Accuracy(rel=2)@10", "Accuracy(rel=2)@10")])
def test_accuracy_equals_ir_measures_query_by_query(theirs: str, ours: str, seed: int) -> None:
    qrels, run = _collection(seed)
    got = ranklens.Evaluator([ours], qrels)(run, warn=False).per_query(ours)
    divided_by_zero = 0
    for q in run:
        try:
            theirs_q = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(theirs)], qrels, {q: run[q]})}
        except ZeroDivisionError:  # no non-relevant document in the top k: no pair, NA here
            divided_by_zero += 1
            assert math.isnan(got[q]), q
            continue
        if q not in theirs_q:  # no relevant document retrieved: left out there, NA here
            assert math.isnan(got[q]), q
        else:
            assert math.isclose(got[q], theirs_q[q], rel_tol=1e-9), (q, got[q], theirs_q[q])
    assert divided_by_zero >= 1  # the departure is exercised


def test_hand_values() -> None:
    # N R N R N: pairs (relevant before non-relevant) 1·2 + 1·1 of 2·3 → accuracy 3/6; Compat by hand
    qrels = {"q": {"b": 1, "d": 2, "x": 1}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    res = ranklens.evaluate(qrels, run, ["Accuracy", "Compat(p=0.5,normalize=false)"])
    assert res.per_query("Accuracy")["q"] == 0.5
    ideal, ranking, p = ["d", "b", "x"], ["a", "b", "c", "d", "e"], 0.5
    num = sum(p**i * len(set(ideal[: i + 1]) & set(ranking[: i + 1])) / (i + 1) for i in range(5))
    assert math.isclose(res.per_query("Compat(p=0.5,normalize=false)")["q"], num / sum(p**i for i in range(5)))
    assert math.isclose(ranklens.evaluate(qrels, {"q": {"d": 2.0, "b": 1.5, "x": 1.0}}, ["Compat"]).aggregates[0], 1.0)
