"""diff: the per-document contributions add up to the engine's change, per query and measure."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import InputError
from ranklens.research.diff import diff_runs

MEASURES = [
    "nDCG@5", "nDCG", "nDCG(gain=exp)@3", "nDCG(ideal=local)@4", "DCG@5", "DCG",
    "P@1", "P@5", "RR", "RR@3", "RR(rel=2)", "AP", "AP@4", "AP(rel=2)",
]


@st.composite
def collections(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    docs = [f"d{i}" for i in range(draw(st.integers(3, 9)))]
    queries = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    qrels = {q: {d: draw(st.integers(0, 3)) for d in docs if draw(st.booleans())} for q in queries}
    qrels = {q: j if j else {docs[0]: 1} for q, j in qrels.items()}

    def run() -> dict:
        # few distinct scores: ties broken by the engine (docid descending)
        return {q: {d: float(draw(st.integers(0, 3))) for d in docs if draw(st.booleans())} or {docs[1]: 1.0}
                for q in queries}

    return qrels, run(), run()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_contributions_sum_to_the_engines_change(case: tuple[dict, dict, dict]) -> None:
    qrels, run_a, run_b = case
    d = diff_runs(qrels, run_a, run_b, MEASURES, k=5)
    for md in d.measures:
        a = ranklens.evaluate(qrels, run_a, md.measure).per_query(md.measure)
        b = ranklens.evaluate(qrels, run_b, md.measure).per_query(md.measure)
        for q, (delta, contributions) in md.per_query.items():
            assert delta == pytest.approx(b[q] - a[q], abs=1e-12)
            assert math.fsum(c.value for c in contributions) == pytest.approx(b[q] - a[q], abs=1e-12), (md.measure, q)
        assert md.delta == pytest.approx(sum(b[q] - a[q] for q in md.per_query) / len(md.per_query), abs=1e-12)
        assert sum(md.by_kind.values()) == pytest.approx(md.delta, abs=1e-12)


def test_ties_follow_trec_eval_order_docid_descending() -> None:
    # A ties a (relevant) and b at 1.0: trec_eval puts b first, so a is at rank 2; B ranks a alone at 1.
    qrels = {"q": {"a": 1}}
    d = diff_runs(qrels, {"q": {"a": 1.0, "b": 1.0}}, {"q": {"a": 2.0, "b": 1.0}}, ["RR", "DCG@2"])
    rr, dcg = d.measures
    assert [(c.doc, c.kind, c.rank_a, c.rank_b, c.value) for c in rr.per_query["q"][1]] == [("a", "moved", 2, 1, 0.5)]
    # DCG: 1/log2(2) − 1/log2(3), written out
    assert dcg.per_query["q"][1][0].value == pytest.approx(1.0 - 1.0 / math.log2(3), abs=1e-15)


def test_rr_credits_the_first_relevant_documents_of_both_runs() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    d = diff_runs(qrels, {"q": {"x": 3.0, "a": 2.0}}, {"q": {"b": 3.0, "a": 2.0}}, "RR")
    got = {(c.doc, c.kind): c.value for c in d.measures[0].per_query["q"][1]}
    assert got == {("b", "entered"): 1.0, ("a", "moved"): -0.5}


def test_ap_a_document_that_stays_put_still_contributes() -> None:
    # R = 2. A: x a b → AP = (1/2 + 2/3)/2; B: a x b → (1 + 2/3)/2; b stays at 3, its precision 2/3 both times
    qrels = {"q": {"a": 1, "b": 1}}
    d = diff_runs(qrels, {"q": {"x": 3.0, "a": 2.0, "b": 1.0}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, "AP")
    got = {c.doc: c.value for c in d.measures[0].per_query["q"][1]}
    assert got == pytest.approx({"a": (1.0 - 0.5) / 2})


def test_the_bundled_runs_match_the_issue_figures() -> None:
    d = diff_runs("examples/toy.qrels", "examples/toy_bm25.run", "examples/toy_dense.run", "nDCG@10")
    md = d.measures[0]
    assert round(md.delta, 4) == 0.1794
    assert {k: round(v, 3) for k, v in md.by_kind.items()} == {"entered": 0.250, "left": -0.080, "moved": 0.009}
    assert d.only_a and not d.only_b and len(d.compared) == 11


@pytest.mark.parametrize("measure", ["R@10", "nDCG(ties=average)@10", "ERR@10"])
def test_measures_that_are_not_a_sum_over_documents_are_refused(measure: str) -> None:
    with pytest.raises(InputError, match="diff: "):
        diff_runs({"q": {"a": 1}}, {"q": {"a": 1.0}}, {"q": {"a": 1.0}}, measure)


def test_overlap_and_ranks_do_not_depend_on_the_measures_asked() -> None:
    # P@1 alone reads one row per query; RBO at k = 10 and the ranks of the documents still see whole rankings
    args = ("examples/toy.qrels", "examples/toy_bm25.run", "examples/toy_dense.run")
    alone, with_ap = diff_runs(*args, "P@1", k=10), diff_runs(*args, ["P@1", "AP"], k=10)
    assert alone.overlap == with_ap.overlap
    assert alone.measures[0].per_query == with_ap.measures[0].per_query
