"""bounds: low and high are the extremes over every labelling, found here by brute force one labelling at a
time with ranklens.evaluate on plain dicts (not through the pseudo-query batch of the implementation)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.research.bounds import bounds

MEASURES = ["nDCG@4", "nDCG", "nDCG(gain=exp)@3", "DCG@4", "P@3", "RR", "AP", "AP@4", "R@4", "ERR@4"]


def brute_force(qrels: dict, run: dict, measure: str, k: int | None) -> dict[str, tuple[float, float]]:
    judged_labels = [v for j in qrels.values() for v in j.values()]
    low, high = min(judged_labels), max(judged_labels)
    out = {}
    for q, scores in run.items():
        ranked = sorted(scores, key=lambda d: (-scores[d], [-ord(c) for c in d]))  # trec_eval: docid descending
        unjudged = [d for d in ranked[: k or len(ranked)] if d not in qrels.get(q, {})]
        values = []
        for labelling in itertools.product((low, high), repeat=len(unjudged)):
            labelled = {**qrels, q: {**qrels.get(q, {}), **dict(zip(unjudged, labelling))}}  # (the scale is qrels-wide)
            values.append(ranklens.Evaluator(measure, labelled)({q: scores}, warn=False).per_query(measure)[q])
        out[q] = (min(values), max(values))
    return out


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict, dict]:
    docs = [f"d{i}" for i in range(draw(st.integers(2, 7)))]
    queries = ["q1", "q2"]
    qrels = {q: {d: draw(st.integers(0, 2)) for d in docs if draw(st.booleans())} or {docs[0]: 1} for q in queries}
    qrels["q1"]["zz"] = 2  # a judged grade-2 document nobody retrieves (the ideal is not only the run's)
    run = {q: {d: float(draw(st.integers(0, 2))) for d in docs if draw(st.booleans())} or {docs[1]: 1.0}
           for q in queries}
    return qrels, run


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_low_and_high_are_attained_by_a_labelling(case: tuple[dict, dict]) -> None:
    qrels, run = case
    b = bounds(qrels, {"r": run}, MEASURES)
    for measure in MEASURES:
        cutoff = ranklens.measures.parse(measure).cutoff
        want = brute_force(qrels, run, measure, cutoff)
        got = b.per_query["r"][measure]
        for q, (low, high) in want.items():
            assert got[q]["exact"]
            assert (got[q]["low"], got[q]["high"]) == pytest.approx((low, high), abs=1e-12), (measure, q)


def test_ndcg_low_is_not_the_all_lowest_labelling() -> None:
    # a relevant unjudged document at rank 10 raises the ideal more than the DCG: nDCG falls
    qrels = {"q": {"a": 1, "z": 0}}
    run = {"q": {"a": 10.0, **{f"x{i}": 9.0 - i for i in range(9)}}}
    b = bounds(qrels, {"r": run}, "nDCG@10")
    q = b.per_query["r"]["nDCG@10"]["q"]
    assert q["value"] == 1.0 and q["unjudged"] == 9 and q["high"] == pytest.approx(1.0)
    assert q["low"] < 1.0  # written out: labelling only x8 (rank 10) relevant gives (1 + 1/log2 11)/(1 + 1/log2 3)
    assert q["low"] <= (1 + 1 / 3.4594316186372973) / (1 + 1 / 1.584962500721156) + 1e-12


def test_beyond_the_limit_monotone_measures_stay_exact_and_ndcg_is_a_bound() -> None:
    qrels = {"q": {"a": 1, "b": 2, "z": 0}}
    run = {"q": {"a": 10.0, **{f"x{i}": 9.0 - i for i in range(5)}, "b": 1.0}}
    exact = bounds(qrels, {"r": run}, ["nDCG@10", "P@10"], exhaustive_limit=16)
    capped = bounds(qrels, {"r": run}, ["nDCG@10", "P@10"], exhaustive_limit=2)
    p_exact, p_capped = exact.per_query["r"]["P@10"]["q"], capped.per_query["r"]["P@10"]["q"]
    assert p_capped["exact"] and (p_capped["low"], p_capped["high"]) == (p_exact["low"], p_exact["high"])
    n_exact, n_capped = exact.per_query["r"]["nDCG@10"]["q"], capped.per_query["r"]["nDCG@10"]["q"]
    assert not n_capped["exact"] and capped.notes
    assert n_capped["low"] <= n_exact["low"] and n_capped["high"] >= n_exact["high"]


def test_a_measure_without_a_bound_beyond_the_limit_is_refused() -> None:
    run = {"q": {f"x{i}": float(i) for i in range(5)}}
    with pytest.raises(InputError, match="no bound is known"):
        bounds({"q": {"a": 1}}, {"r": run}, "ERR@10", exhaustive_limit=2)


def test_the_bundled_runs() -> None:
    runs = {"bm25": "examples/toy_bm25.run", "dense": "examples/toy_dense.run"}
    b = bounds("examples/toy.qrels", runs, "nDCG@10", missing="zero")  # the issue scores dense's missing q12 as 0
    got = {r: tuple(round(v[k], 3) for k in ("value", "low", "high")) for r, m in b.runs.items() for v in m.values()}
    assert got == {"bm25": (0.594, 0.589, 0.842), "dense": (0.713, 0.711, 0.798)}
