"""Properties of the measures of issue 28 item 5 on random collections (hypothesis): every value is in [0, 1]
(C/W/L weights sum to 1 and gains are in [0, 1]; RBO against the ideal's own; the "ideal ideal" bounds every
intent's discounted gains); the ideal ranking scores 1 where the definition says so; document order in the
input does not matter."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.diversity import evaluate_diversity

BOUNDED = ["SDCG(max_rel=3)@5", "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)", "NERR11(max_rel=3)",
           "INST(max_rel=3)", "INSQ(max_rel=3)", "BPM(max_rel=3)@5", "Compat", "Compat(normalize=false)", "Accuracy"]
INTENT_BOUNDED = ["alpha-DCG@5", "ERR-IA@5", "NRBP", "P-IA@5", "AP-IA", "StRecall@5"]

labels = st.lists(st.integers(min_value=-1, max_value=3), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(labels, st.randoms(use_true_random=False))
def test_document_level_measures_are_in_0_1(grades: list[int], rnd) -> None:  # type: ignore[no-untyped-def]
    docs = [f"d{i}" for i in range(len(grades))]
    qrels = {"q": {d: g for d, g in zip(docs, grades) if g >= 0} or {"x": 0}}
    order = docs[:]
    rnd.shuffle(order)
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
    ev = ranklens.Evaluator(BOUNDED, qrels)
    res = ev(run, warn=False)  # (Accuracy's NA note: said, not warned)
    for m in BOUNDED:
        v = res.per_query(m)["q"]
        if math.isnan(v):  # no (relevant, non-relevant) pair: NA by definition
            assert m == "Accuracy", m
            continue
        assert -1e-12 <= v <= 1 + 1e-12, (m, v)
    reversed_input = {"q": dict(reversed(list(run["q"].items())))}
    again = ev(reversed_input, warn=False)
    assert [again.per_query(m) == res.per_query(m) for m in BOUNDED if m != "Accuracy"] == [True] * (len(BOUNDED) - 1)


@settings(max_examples=40, deadline=None)
@given(labels)
def test_the_ideal_ranking_has_compat_1(grades: list[int]) -> None:
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades) if g >= 0} or {"x": 0}}
    ideal = sorted(qrels["q"], key=lambda d: (-qrels["q"][d], d))
    run = {"q": {d: float(len(ideal) - i) for i, d in enumerate(ideal)}}
    value = ranklens.evaluate(qrels, run, ["Compat"]).aggregates[0]
    assert math.isclose(value, 1.0) or not any(g > 0 for g in qrels["q"].values())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(0, 3), max_size=3), min_size=1, max_size=10), st.randoms(use_true_random=False))
def test_intent_measures_are_in_0_1(covers: list[set[int]], rnd) -> None:  # type: ignore[no-untyped-def]
    intents: dict[str, dict[str, dict[str, int]]] = {"q": {}}
    for j, cov in enumerate(covers):
        for i in cov:
            intents["q"].setdefault(str(i), {})[f"d{j}"] = 1
    intents["q"].setdefault("9", {})["d0"] = 0  # (a judged document covering nothing, so the query exists)
    order = [f"d{j}" for j in range(len(covers))]
    rnd.shuffle(order)
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
    res = evaluate_diversity(intents, run, INTENT_BOUNDED)
    for m in INTENT_BOUNDED:
        assert -1e-12 <= res.per_query(m)["q"] <= 1 + 1e-12, (m, res.per_query(m)["q"])
