"""Every number of ``spec/METRICS.md`` §0–§4, §7 and Appendix A, as a test.

Expected values are copied from the spec text (6-decimal [CALC] values compared to 1e-6; trec_eval's
4-decimal [EXEC] values compared to 5e-5). Each test quotes the section it checks.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

import ranklens as _ranklens
from ranklens.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from backends_under_test import backend, evaluate_on  # noqa: E402, F401  (every test runs once per backend)

BACKEND = "reference"


@pytest.fixture(autouse=True)
def _on_each_backend(backend: str) -> None:  # noqa: F811  (the fixture imported above)
    global BACKEND
    BACKEND = backend


class _OnBackend:
    """The package as the suite calls it, with ``evaluate`` on the backend of the test."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_ranklens, name)

    @staticmethod
    def evaluate(qrels: Any, run: Any, measures: Any, **options: Any) -> Any:
        return evaluate_on(BACKEND, qrels, run, measures, **options)


ranklens = _OnBackend()

CALC = 1e-6  # the spec's 6-decimal numbers
EXEC = 5e-5  # trec_eval's 4-decimal output


def approx6(x: float) -> object:
    return pytest.approx(x, abs=CALC)


def approx4(x: float) -> object:
    return pytest.approx(x, abs=EXEC)


def per_query(qrels: dict, run: dict, measure: str, qid: str, **options: object) -> float:
    return ranklens.evaluate(qrels, run, [measure], **options).per_query(measure)[qid]


# --- Appendix A test vectors --------------------------------------------------------------------------

QRELS = {
    "q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0},
    "q2": {"dA": 1, "dB": 0, "dC": 0},
    "q3": {"x1": 2, "x2": 1, "x3": 0, "x4": 2},
    "q4": {"z1": 0, "z2": 0},
}
RUN = {
    "q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0},
    "q2": {"dA": 1.0, "dB": 1.0, "dC": 1.0},
    "q3": {"x3": 3.0, "x2": 2.0, "y9": 1.0},
    "q4": {"z1": 2.0, "z2": 1.0},
}
QRELS_EXTRA = {**QRELS, "q5": {"w1": 1}}
RUN_EXTRA = {**RUN, "q6": {"v1": 1.0}}
QRELS_NEG = {"q7": {"a": 2, "b": -1, "c": 1, "d": 0}}
RUN_NEG = {"q7": {"b": 4.0, "a": 3.0, "e": 2.0, "c": 1.0}}
Q10_QRELS = {"q10": {"a": 1, "b": 2, "c": 0}}
Q10_RUN = {"q10": {"a": 2.0, "b": 1.0}}

TEXTBOOK_QRELS = {"q1": QRELS["q1"]}
TEXTBOOK_RUN = {"q1": RUN["q1"]}


# --- §0 the textbook example -------------------------------------------------------------------------

# §0: "Ranking relevances [3, 0, 3, 2, 0], ideal from the same five labels ([3,3,2,0,0]), discount
# 1/log2(i+1)" — (measure options, cutoff, DCG, IDCG, NDCG)
TEXTBOOK_TABLE = [
    ("", "@5", 5.361353, 5.892789, 0.909816),
    ("(gain=exp)", "@5", 11.792030, 12.916508, 0.912943),
    ("", "@3", 4.500000, 5.892789, 0.763645),
    ("(gain=exp)", "@3", 10.500000, 12.916508, 0.812913),
    ("", "@1", 3.000000, 3.000000, 1.000000),
    ("(discount=jk,base=2)", "", 5.892789, 7.261860, 0.811471),
    ("(gain=exp,discount=jk,base=2)", "", 12.916508, 15.892789, 0.812728),
    ("(discount=jk,base=3)", "", 7.584963, 8.000000, 0.948120),
]


@pytest.mark.parametrize(("params", "cutoff", "dcg", "idcg", "ndcg"), TEXTBOOK_TABLE)
def test_textbook_table(params: str, cutoff: str, dcg: float, idcg: float, ndcg: float) -> None:
    """§0 table: DCG, IDCG and NDCG of the textbook example for each variant."""
    names = [f"DCG{params}{cutoff}", f"IDCG{params}{cutoff}", f"nDCG{params}{cutoff}"]
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, names)
    assert [res[n] for n in names] == [approx6(dcg), approx6(idcg), approx6(ndcg)]


def test_textbook_natural_log_base_cancels() -> None:
    """§0 / §2.2: "discount 1/ln(i+1) (natural log), linear | 7.734798 | 8.501498 | 0.909816 (base
    cancels)". 1/ln(i+1) = (1/log2(i+1))/ln 2, so DCG_ln = DCG_log2/ln 2 and NDCG is unchanged."""
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, ["DCG", "IDCG", "nDCG"])
    assert res["DCG"] / math.log(2) == approx6(7.734798)
    assert res["IDCG"] / math.log(2) == approx6(8.501498)
    assert res["nDCG"] == approx6(0.909816)
    assert (res["DCG"] / math.log(2)) / (res["IDCG"] / math.log(2)) == approx6(0.909816)


def test_textbook_trec_eval_output() -> None:
    """§0: trec_eval gives "dcg 5.3614, ideal_dcg 5.8928, ndcg 0.9098, ndcg_cut_3 0.7636"; with
    -m ndcg.1=1,2=3,3=7 "ndcg 0.9129, dcg 11.7920"."""
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, ["dcg", "ideal_dcg", "ndcg", "ndcg_cut.3"])
    assert res["DCG"] == approx4(5.3614)
    assert res["IDCG"] == approx4(5.8928)
    assert res["nDCG"] == approx4(0.9098)
    assert res["nDCG@3"] == approx4(0.7636)
    gains = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, ["ndcg.1=1,2=3,3=7", "dcg.1=1,2=3,3=7"])
    assert gains["nDCG(gain={1:1,2:3,3:7})"] == approx4(0.9129)
    assert gains["DCG(gain={1:1,2:3,3:7})"] == approx4(11.7920)


def test_empty_ideal_scores_zero_and_counts() -> None:
    """§2.3 edge cases: no positive label → 0 and the query counts in the mean; scikit-learn "rows [0,0,0]
    and [1,0,2] average 0.380094" (ranked in that order)."""
    qrels = {"a": {"x": 0, "y": 0, "z": 0}, "b": {"x": 1, "y": 0, "z": 2}}
    run = {q: {"x": 3.0, "y": 2.0, "z": 1.0} for q in qrels}
    res = ranklens.evaluate(qrels, run, ["nDCG"])
    assert res.per_query("nDCG")["a"] == 0.0
    assert res["nDCG"] == approx6(0.380094)


def test_textbook_cutoff_beyond_list() -> None:
    """§2.3 edge cases: "k > list length … (textbook example with k=50: 0.909816)"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "nDCG@50", "q1") == approx6(0.909816)


# --- §1 trec_eval semantics --------------------------------------------------------------------------


def test_tie_break_docno_descending() -> None:
    """§1.1: "q2 (three docs with score 1.0, only dA relevant) ranks dC, dB, dA → recip_rank 0.3333"."""
    assert per_query(QRELS, RUN, "RR", "q2") == approx4(0.3333)


@pytest.mark.parametrize(("relevant", "rr"), [("9", 1.0), ("100", 0.5), ("10", 1 / 3)])
def test_tie_break_is_strcmp_not_numeric(relevant: str, rr: float) -> None:
    """§1.1: "Numeric-looking docnos 9, 10, 100 tied → strcmp order 9, 100, 10"."""
    qrels = {"q": {d: int(d == relevant) for d in ("9", "10", "100")}}
    run = {"q": {"9": 1.0, "10": 1.0, "100": 1.0}}
    assert per_query(qrels, run, "RR", "q") == approx6(rr)


def test_scores_are_double() -> None:
    """§1.1: "scores 0.1234567895 (relevant a) vs 0.1234567891 (b) give recip_rank 1.0 in v10" (double)."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 0.1234567895, "b": 0.1234567891}}
    assert per_query(qrels, run, "RR", "q") == 1.0


def test_max_docs_truncates_after_sorting() -> None:
    """§1.1: "Only the first -M <num> documents (after sorting) are used"; q1 with -M 2: d1, d2."""
    with pytest.warns(ranklens.RanklensWarning, match="rows beyond the per-query depth limit"):
        res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, ["P@5", "NumRet", "RR"], max_docs=2)
    assert res["P@5"] == approx6(1 / 5)
    assert res["NumRet"] == 2


def test_duplicates_are_an_error() -> None:
    """§1.1: "Duplicate docnos in a run, or in the qrels of one topic, are a fatal error"."""
    with pytest.raises(InputError, match="twice"):
        ranklens.Run.from_arrays(["q1", "q1"], ["d1", "d1"], [2.0, 1.0])
    with pytest.raises(InputError, match="twice"):
        ranklens.Qrels.from_arrays(["q1", "q1"], ["d1", "d1"], [1, 0])


def test_negative_labels_are_pooled_unjudged() -> None:
    """§1.2: q7 (qrels a:2, b:-1, c:1, d:0; ranking b, a, e, c): "dcg 1.6925, ideal_dcg 2.6309, ndcg
    0.6433, num_rel 2, bpref 1.0, infAP 0.7500"; re-implementation 1.692536 / 2.630930 / 0.643322."""
    res = ranklens.evaluate(QRELS_NEG, RUN_NEG, ["DCG", "IDCG", "nDCG", "NumRel", "Bpref", "infAP"])
    assert res["DCG"] == approx6(1.692536)
    assert res["IDCG"] == approx6(2.630930)
    assert res["nDCG"] == approx6(0.643322)
    assert res["NumRel"] == 2
    assert res["Bpref"] == approx4(1.0)
    assert res["infAP"] == approx4(0.7500)


def test_relevance_level_option() -> None:
    """§1.2: "q7 with -l2: num_rel 1, P_4 0.2500, map 0.5000, ndcg 0.6433 (unchanged)"."""
    res = ranklens.evaluate(QRELS_NEG, RUN_NEG, ["NumRel", "P@4", "AP", "nDCG"], rel_level=2)
    assert res["NumRel(rel=2)"] == 1
    assert res["P(rel=2)@4"] == approx4(0.25)
    assert res["AP(rel=2)"] == approx4(0.5)
    assert res["nDCG"] == approx4(0.6433)


def test_judged_only_option() -> None:
    """§1.2: "q7 with -J: ndcg 1.0000, map 1.0000"."""
    with pytest.warns(ranklens.RanklensWarning, match="unjudged rows removed"):
        res = ranklens.evaluate(QRELS_NEG, RUN_NEG, ["nDCG", "AP"], judged_only=True)
    assert res["nDCG"] == approx4(1.0)
    assert res["AP"] == approx4(1.0)


def test_missing_run_query_skipped_by_default() -> None:
    """§1.3: qrels_extra has q5, the run lacks it: "without -c v9.0.8 ndcg 0.3944"; [CALC] 0.394383."""
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document: skipped"):
        res = ranklens.evaluate(QRELS_EXTRA, RUN, ["nDCG", "NumQ"])
    assert res["nDCG"] == approx6(0.394383)
    assert res["NumQ"] == 4


def test_missing_run_query_zero_is_trec_eval_c() -> None:
    """§1.3: "with -c both versions num_q 5, ndcg 0.3155, P_5 0.2000, map 0.2611"; [CALC] 0.315507."""
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document: scored 0"):
        res = ranklens.evaluate(QRELS_EXTRA, RUN, ["NumQ", "nDCG", "P@5", "AP"], missing="zero")
    assert res["NumQ"] == 5
    assert res["nDCG"] == approx6(0.315507)
    assert res["P@5"] == approx4(0.2)
    assert res["AP"] == approx4(0.2611)
    assert res.per_query("nDCG")["q5"] == 0.0


def test_missing_run_query_error() -> None:
    """§1.3: "Without -c, v10.0 aborts" — the explicit policy "error" raises."""
    with pytest.raises(InputError, match="q5"):
        ranklens.evaluate(QRELS_EXTRA, RUN, ["nDCG"], missing="error")


def test_run_only_query_ignored() -> None:
    """§1.3: "Run topic not in qrels: silently ignored" (run_extra adds q6)."""
    with pytest.warns(ranklens.RanklensWarning, match="1 run query .* not in the qrels: ignored"):  # silently in trec_eval
        res = ranklens.evaluate(QRELS, RUN_EXTRA, ["nDCG", "NumQ"])
    assert res["NumQ"] == 4
    assert res["nDCG"] == approx6(0.394383)
    assert "q6" not in res.per_query("nDCG")


def test_all_zero_query_counts_in_mean() -> None:
    """§1.3: "Qrels topic whose labels are all 0 (q4): evaluated; every measure is 0 and the topic counts
    in the mean (num_q 4; ndcg all = 0.3944 = (0.909816+0.5+0.167718+0)/4)"."""
    res = ranklens.evaluate(QRELS, RUN, ["nDCG", "NumQ", "AP", "P@5"])
    assert res["NumQ"] == 4
    assert res["nDCG"] == approx4(0.3944)
    assert res["nDCG"] == approx6((0.909816 + 0.5 + 0.167718 + 0) / 4)
    assert {m: res.per_query(m)["q4"] for m in ("nDCG", "AP", "P@5")} == {"nDCG": 0, "AP": 0, "P@5": 0}


def test_fractional_gains_are_sorted_correctly() -> None:
    """§1.4 quirk 1: qrels a:1, b:2, c:0, run a, b, -m ndcg.1=3.5,2=3: "correct NDCG is 1.000000,
    trec_eval prints 1.0354"; ranklens sorts the ideal by the real gains."""
    assert per_query(Q10_QRELS, Q10_RUN, "nDCG(gain={1:3.5,2:3})", "q10") == approx6(1.0)


def test_ndcg_cut_beyond_list() -> None:
    """§1.5: "q3 (3 docs retrieved, 3 positive judged docs): ndcg_cut_10 = ndcg = 0.1677"; 0.167718."""
    res = ranklens.evaluate(QRELS, RUN, ["nDCG@10", "nDCG"])
    assert res.per_query("nDCG@10")["q3"] == approx6(0.167718)
    assert res.per_query("nDCG")["q3"] == approx6(0.167718)


def test_q1_trec_eval_values() -> None:
    """§1.6: "Values on q1 … P_1 1.0, P_3 0.6667, P_5 0.6, P_10 0.3, recall_3 0.6667, recall_5 1.0, map
    0.8056, recip_rank 1.0, Rprec 0.6667, bpref 0.6667, success_1 1.0"; [CALC] P@3 0.666667, P@10 0.3,
    R@3 0.666667, AP 0.805556, RR 1, R-prec 0.666667, bpref 0.666667."""
    expected = {
        "P@1": 1.0, "P@3": 0.666667, "P@5": 0.6, "P@10": 0.3, "R@3": 0.666667, "R@5": 1.0,
        "AP": 0.805556, "RR": 1.0, "Rprec": 0.666667, "Bpref": 0.666667, "Success@1": 1.0,
    }  # fmt: skip
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, list(expected))
    assert {m: res[m] for m in expected} == {m: approx6(v) for m, v in expected.items()}


def test_rbp_minmax_gains_on_q7() -> None:
    """§1.6: rbp on q7 "correct: 0.126450 [CALC]" (p = 0.9, gains min–max normalised to [0, 1], i.e.
    label/2 here)."""
    assert per_query(QRELS_NEG, RUN_NEG, "MZRBP(p=0.9,max_rel=2)", "q7") == approx6(0.126450)


def test_rbp_residual_moffat_zobel_on_fully_judged_q1() -> None:
    """§1.6: "for fully-judged q1, trec_eval gives 0 where M&Z gives 0.9^5=0.590490"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "MZRBPResidual(p=0.9)", "q1") == approx6(0.590490)


# --- §2.4 more trec_eval-consistent vectors ------------------------------------------------------------

# §2.4 table: topic → (DCG, IDCG, NDCG)
TABLE_2_4 = {
    "q1": (5.361353, 5.892789, 0.909816),
    "q2": (0.500000, 1.000000, 0.500000),
    "q3": (0.630930, 3.761860, 0.167718),
    "q4": (0.0, 0.0, 0.0),
    "q7": (1.692536, 2.630930, 0.643322),
}


@pytest.mark.parametrize("qid", sorted(TABLE_2_4))
def test_table_2_4(qid: str) -> None:
    """§2.4: DCG, IDCG and NDCG of q1–q4 and q7 (ties by docno descending, unjudged = 0)."""
    qrels, run = ({**QRELS, **QRELS_NEG}, {**RUN, **RUN_NEG})
    res = ranklens.evaluate(qrels, run, ["DCG", "IDCG", "nDCG"])
    got = tuple(res.per_query(m)[qid] for m in ("DCG", "IDCG", "nDCG"))
    assert got == tuple(approx6(v) for v in TABLE_2_4[qid])


def test_table_2_4_aggregates() -> None:
    """§2.4: "Mean NDCG over q1–q4 = 0.394383; ndcg_cut_3: q1 0.763645, q7 0.479625; q3 with exponential
    gains: 0.116993"."""
    res = ranklens.evaluate(QRELS, RUN, ["nDCG", "nDCG@3", "nDCG(gain=exp)"])
    assert res["nDCG"] == approx6(0.394383)
    assert res.per_query("nDCG@3")["q1"] == approx6(0.763645)
    # the spec prints 0.116993, but its own definition gives 0.630930/5.392789 = 0.116995 (checked by hand:
    # DCG = 1/log2 3, IDCG = 3 + 3/log2 3 + 1/2); the spec's value is off in the 6th decimal, so this
    # compares to trec_eval's "0.1170" and to the hand computation
    q3_exp = res.per_query("nDCG(gain=exp)")["q3"]
    assert q3_exp == approx4(0.1170)
    assert q3_exp == pytest.approx((1 / math.log2(3)) / (3 + 3 / math.log2(3) + 0.5), abs=1e-12)
    assert per_query(QRELS_NEG, RUN_NEG, "nDCG@3", "q7") == approx6(0.479625)


# --- §3 tie-averaged metrics -------------------------------------------------------------------------

TIE_DOCS = ["t0", "t1", "t2", "t3", "t4", "t5"]
TIE_SCORES = [0.9, 0.7, 0.7, 0.5, 0.5, 0.5]


def tie_example(labels: list[int]) -> tuple[dict, dict]:
    """§3 worked example: y_score = [0.9,0.7,0.7,0.5,0.5,0.5] with the given labels."""
    return {"q": dict(zip(TIE_DOCS, labels))}, {"q": dict(zip(TIE_DOCS, TIE_SCORES))}


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        ("nDCG(ties=average)", 0.980404),
        ("nDCG(ties=average)@1", 1.000000),
        ("nDCG(ties=average)@3", 0.988891),
        ("DCG(ties=average)", 7.001061),
        ("nDCG(gain=exp,ties=average)", 0.974255),
    ],
)
def test_tie_averaged_graded(measure: str, expected: float) -> None:
    """§3 table: y_true = [3,2,3,0,1,2], y_score = [0.9,0.7,0.7,0.5,0.5,0.5] — NDCG (all) 0.980404, @1
    1.000000, @3 0.988891, DCG (all) 7.001061, NDCG exponential 0.974255."""
    qrels, run = tie_example([3, 2, 3, 0, 1, 2])
    assert per_query(qrels, run, measure, "q") == approx6(expected)


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        ("P(rel=2,ties=average)@1", 1.000000),
        ("P(rel=2,ties=average)@2", 1.000000),
        ("P(rel=2,ties=average)@4", 0.833333),
        ("AP(rel=2,ties=average)", 0.955556),
    ],
)
def test_tie_averaged_binary_threshold(measure: str, expected: float) -> None:
    """§3: "Binary (relevant = grade ≥ 2 → [1,1,1,0,0,1], R=4): tie P@1 = 1.000000, P@2 = 1.000000,
    P@4 = 0.833333, AP = 0.955556"."""
    qrels, run = tie_example([3, 2, 3, 0, 1, 2])
    assert per_query(qrels, run, measure, "q") == approx6(expected)


@pytest.mark.parametrize(("measure", "expected"), [("RR(ties=average)", 0.416667), ("AP(ties=average)", 0.472222)])
def test_tie_averaged_second_labelling(measure: str, expected: float) -> None:
    """§3: "With rel = [0,1,0,1,1,0] (R=3): tie RR = 0.416667, tie AP = 0.472222"."""
    qrels, run = tie_example([0, 1, 0, 1, 1, 0])
    assert per_query(qrels, run, measure, "q") == approx6(expected)


def test_tie_averaged_sklearn_examples() -> None:
    """§3: "ndcg_score([[1,0,0]],[[1,1,1]], ignore_ties=True) = 0.5 vs tie-averaged 0.710310"; docstring
    example true_relevance=[[10,0,0,1,5]], scores=[[1,0,0,0,1]], k=1 → 0.75 (tie-averaged)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    assert per_query(qrels, run, "nDCG(ties=average)", "q") == approx6(0.710310)
    qrels = {"q": {"a": 10, "b": 0, "c": 0, "d": 1, "e": 5}}
    run = {"q": {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0, "e": 1.0}}
    assert per_query(qrels, run, "nDCG(ties=average)@1", "q") == approx6(0.75)


# --- §4 NDCG flavours ----------------------------------------------------------------------------------

FLAVOUR_QRELS = {"q": {"a": 3, "b": 2, "c": 3, "d": 1, "e": 0, "f": 2, "g": 3}}
FLAVOUR_RUN = {"q": {d: 10.0 - i for i, d in enumerate("b e a x d c y f z w".split())}}
FLAVOURS = {
    "local": "ideal=local",
    "recall": "ideal=recall,depth=10",
    "global": "ideal=global",
    "max": "ideal=max,max_rel=3",
}
# §4 table: flavour → (IDCG@5 lin, NDCG@5 lin, IDCG@5 exp, NDCG@5 exp)
TABLE_4 = {
    "local": (4.761860, 0.816247, 9.392789, 0.733206),
    "recall": (7.140995, 0.544301, 14.595391, 0.471851),
    "global": (8.027848, 0.484171, 17.369096, 0.396500),
    "max": (8.845377, 0.439422, 20.639214, 0.333678),
}


@pytest.mark.parametrize("flavour", list(TABLE_4))
def test_flavours_table(flavour: str) -> None:
    """§4 worked example (labels a:3 b:2 c:3 d:1 e:0 f:2 g:3; retrieved b e a x d c y f z w; N=5, K=10,
    scale 0–3): IDCG@5 and NDCG@5 for linear and exponential gain."""
    p = FLAVOURS[flavour]
    names = [f"IDCG({p})@5", f"nDCG({p})@5", f"IDCG(gain=exp,{p})@5", f"nDCG(gain=exp,{p})@5"]
    res = ranklens.evaluate(FLAVOUR_QRELS, FLAVOUR_RUN, names)
    assert tuple(res[n] for n in names) == tuple(approx6(v) for v in TABLE_4[flavour])


def test_flavours_dcg() -> None:
    """§4: "Top-5 grades [2,0,3,0,1], DCG@5 = 3.886853"; "Exponential DCG@5 = … = 6.886853"."""
    res = ranklens.evaluate(FLAVOUR_QRELS, FLAVOUR_RUN, ["DCG@5", "DCG(gain=exp)@5"])
    assert res["DCG@5"] == approx6(3.886853)
    assert res["DCG(gain=exp)@5"] == approx6(6.886853)


# --- §7 other ranking metrics ------------------------------------------------------------------------


def test_precision_recall() -> None:
    """§7.1: "§0 example: P@3 = 0.666667, P@5 = 0.600000, P@10 = 0.300000, R@3 = 0.666667, R@5 = 1.000000"."""
    expected = {"P@3": 0.666667, "P@5": 0.6, "P@10": 0.3, "R@3": 0.666667, "R@5": 1.0}
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, list(expected))
    assert {m: res[m] for m in expected} == {m: approx6(v) for m, v in expected.items()}


def test_success() -> None:
    """§7.2: "§0 example: success@1 = 1; q2 ([0,0,1]): success@1 = 0, success@3 = 1"."""
    res = ranklens.evaluate(QRELS, RUN, ["Success@1", "Success@3"])
    assert res.per_query("Success@1")["q1"] == 1.0
    assert res.per_query("Success@1")["q2"] == 0.0
    assert res.per_query("Success@3")["q2"] == 1.0


def test_reciprocal_rank_mrr() -> None:
    """§7.3: "q1 = 1, q2 = 1/3 (tie-break!), q3 = 1/2 → MRR = 0.611111"."""
    qrels = {q: QRELS[q] for q in ("q1", "q2", "q3")}
    with pytest.warns(ranklens.RanklensWarning, match="not in the qrels: ignored"):
        res = ranklens.evaluate(qrels, RUN, ["RR"])
    assert res.per_query("RR") == {"q1": approx6(1.0), "q2": approx6(1 / 3), "q3": approx6(0.5)}
    assert res["RR"] == approx6(0.611111)


def test_average_precision() -> None:
    """§7.4: "§0 example: (1/1 + 2/3 + 3/4)/3 = 0.805556 (trec_eval 0.8056)"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "AP", "q1") == approx6(0.805556)


def test_r_precision() -> None:
    """§7.5: "§0 example: 2/3 = 0.666667"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "Rprec", "q1") == approx6(0.666667)


def test_bpref() -> None:
    """§7.6: "§0 example (N=2): (1 + 0.5 + 0.5)/3 = 0.666667; q7 = 1.000000"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "Bpref", "q1") == approx6(0.666667)
    assert per_query(QRELS_NEG, RUN_NEG, "Bpref", "q7") == approx6(1.0)


def test_inf_ap() -> None:
    """§7.7: "q7: (0.75 + 0.749995)/2 = 0.749998 (trec_eval 0.7500); fully judged q1: 0.805555 ≈ AP"."""
    assert per_query(QRELS_NEG, RUN_NEG, "infAP", "q7") == approx6(0.749998)
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "infAP", "q1") == approx6(0.805555)


@pytest.mark.parametrize(
    ("measure", "expected"),
    [("ERR(max_rel=3)", 0.912923), ("ERR(max_rel=4)", 0.534363), ("ERR(max_rel=3)@2", 0.875000)],
)
def test_err(measure: str, expected: float) -> None:
    """§7.8: "§0 example [3,0,3,2,0]: g_max=3 → 0.912923; g_max=4 → 0.534363; ERR@2 (g_max=3) = 0.875000"."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, measure, "q1") == approx6(expected)


@pytest.mark.parametrize(
    ("p", "value", "residual"), [(0.5, 0.687500, 0.031250), (0.8, 0.430400, 0.327680), (0.9, 0.253900, 0.590490)]
)
def test_rbp_binary(p: float, value: float, residual: float) -> None:
    """§7.9: "§0 example binary [1,0,1,1,0]: p=0.5 → 0.687500 (res 0.031250); p=0.8 → 0.430400 (res
    0.327680, upper 0.758080); p=0.9 → 0.253900 (res 0.590490)"."""
    names = [f"MZRBP(p={p})", f"MZRBPResidual(p={p})"]
    res = ranklens.evaluate(TEXTBOOK_QRELS, TEXTBOOK_RUN, names)
    assert (res[names[0]], res[names[1]]) == (approx6(value), approx6(residual))
    if p == 0.8:
        assert res[names[0]] + res[names[1]] == approx6(0.758080)


def test_rbp_graded() -> None:
    """§7.9: "Graded g/3, p=0.8 → 0.396267" (max_rel = 3)."""
    assert per_query(TEXTBOOK_QRELS, TEXTBOOK_RUN, "MZRBP(p=0.8,max_rel=3)", "q1") == approx6(0.396267)


def test_rbp_unjudged() -> None:
    """§7.9: "With unjudged [1,?,1,0,?], p=0.8 → 0.328000, residual 0.569600"."""
    qrels = {"q": {"a": 1, "c": 1, "d": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    res = ranklens.evaluate(qrels, run, ["MZRBP(p=0.8)", "MZRBPResidual(p=0.8)"])
    assert res["MZRBP(p=0.8)"] == approx6(0.328)
    assert res["MZRBPResidual(p=0.8)"] == approx6(0.5696)


# --- Appendix A: trec_eval v10.0 per-query output -----------------------------------------------------

# Appendix A table: trec_eval measure → (q1, q2, q3, q4, all)
APPENDIX_A = {
    "ndcg": (0.9098, 0.5000, 0.1677, 0.0, 0.3944),
    "dcg": (5.3614, 0.5000, 0.6309, 0.0, 1.6231),
    "ideal_dcg": (5.8928, 1.0000, 3.7619, 0.0, 2.6637),
    "ndcg_cut_1": (1.0, 0.0, 0.0, 0.0, 0.25),
    "ndcg_cut_3": (0.7636, 0.5, 0.1677, 0.0, 0.3578),
    "ndcg_cut_5": (0.9098, 0.5, 0.1677, 0.0, 0.3944),
    "P_1": (1.0, 0.0, 0.0, 0.0, 0.25),
    "P_3": (0.6667, 0.3333, 0.3333, 0.0, 0.3333),
    "P_5": (0.6, 0.2, 0.2, 0.0, 0.25),
    "P_10": (0.3, 0.1, 0.1, 0.0, 0.125),
    "recall_3": (0.6667, 1.0, 0.3333, 0.0, 0.5),
    "recall_5": (1.0, 1.0, 0.3333, 0.0, 0.5833),
    "map": (0.8056, 0.3333, 0.1667, 0.0, 0.3264),
    "recip_rank": (1.0, 0.3333, 0.5, 0.0, 0.4583),
    "Rprec": (0.6667, 0.0, 0.3333, 0.0, 0.25),
    "bpref": (0.6667, 0.0, 0.0, 0.0, 0.1667),
    "success_1": (1.0, 0.0, 0.0, 0.0, 0.25),
    "success_3": (1.0, 1.0, 1.0, 0.0, 0.75),
}
TREC_ARGS = [
    "ndcg", "dcg", "ideal_dcg", "ndcg_cut.1,3,5,10", "P.1,3,5,10", "recall.3,5", "map", "recip_rank",
    "Rprec", "bpref", "success.1,3",
]  # fmt: skip


def _trec_printed_names() -> dict[str, str]:
    from ranklens.measures.trec_names import parse_trec

    return {printed: str(m) for arg in TREC_ARGS for printed, m in parse_trec(arg)}


@pytest.mark.parametrize("trec_name", list(APPENDIX_A))
def test_appendix_a(trec_name: str) -> None:
    """Appendix A: trec_eval v10.0 `-q -m ndcg -m dcg -m ideal_dcg -m ndcg_cut.1,3,5,10 -m P.1,3,5,10 -m
    recall.3,5 -m map -m recip_rank -m Rprec -m bpref -m success.1,3 qrels.txt run.txt` (excerpt)."""
    res = ranklens.evaluate(QRELS, RUN, TREC_ARGS)
    measure = _trec_printed_names()[trec_name]
    per_q = res.per_query(measure)
    got = (per_q["q1"], per_q["q2"], per_q["q3"], per_q["q4"], res[measure])
    assert got == tuple(approx4(v) for v in APPENDIX_A[trec_name])
