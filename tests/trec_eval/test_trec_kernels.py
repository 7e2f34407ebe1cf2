"""The trec_eval-only measures on small cases computed by hand from the formulas in trec_eval's m_*.c.

Rankings (score order = list order):

* ``TEXTBOOK`` (spec §0, q1): labels ``[3, 0, 3, 2, 0]``; R = 3 relevant (label ≥ 1), n = 5, RR = 3;
  precision at ranks 1..5 = 1, 1/2, 2/3, 3/4, 3/5.
* ``POOLED`` (spec q7): qrels a:2, b:−1 (pooled, unjudged), c:1, d:0; ranking b, a, e (not in qrels), c.
* ``SPLIT``: qrels a:2, b:1, c:0; ranking c, a (b, relevant, not retrieved).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ranklens
from ranklens.engine.kernels.trec_extra import lround, powers, segment_suffix_max
from ranklens.measures import parse

TEXTBOOK = ({"q": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}, {"q": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}})
POOLED = ({"q": {"a": 2, "b": -1, "c": 1, "d": 0}}, {"q": {"b": 4.0, "a": 3.0, "e": 2.0, "c": 1.0}})
SPLIT = ({"q": {"a": 2, "b": 1, "c": 0}}, {"q": {"c": 2.0, "a": 1.0}})
# five relevant documents at ranks 1, 2, 4, 6, 7 (a round-half case for lround: 0.5·5 = 2.5 → 3)
FIVE = (
    {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "r5": 1, "n1": 0, "n2": 0}},
    {"q": {"r1": 7.0, "r2": 6.0, "n1": 5.0, "r3": 4.0, "n2": 3.0, "r4": 2.0, "r5": 1.0}},
)

LOG2_3 = math.log2(3)


def value(case: tuple[dict, dict], measure: str, **options: object) -> float:
    qrels, run = case
    return ranklens.evaluate(qrels, run, [measure], **options).per_query(measure)["q"]


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        # c = lround(x·3): 0 → best precision anywhere; c-th relevant at ranks 1, 3, 4 → suffix max 1, .75, .75
        ("IPrec", 1.0),
        ("IPrec(recall=0.1)", 1.0),  # c = 0
        ("IPrec(recall=0.2)", 1.0),  # c = 1 (0.6)
        ("IPrec(recall=0.5)", 0.75),  # c = 2 (1.5 rounds away from zero)
        ("IPrec(recall=1)", 0.75),  # c = 3
        ("IPrecAvg", (5 * 1.0 + 6 * 0.75) / 11),  # levels 0–0.4 → c ≤ 1; 0.5–1 → c ≥ 2
        ("IPrecAvg(recall={0.2,0.5,0.8})", (1.0 + 0.75 + 0.75) / 3),
        # P@c with c = ⌊x·3 + 0.9⌋
        ("RprecMult(mult=0.2)", 1.0),  # c = 1
        ("RprecMult", 2 / 3),  # c = 3
        ("RprecMult(mult=2)", 3 / 6),  # c = 6 > n: RR/c
        ("RprecMult(mult=0)", 0.0),  # c = 0
        ("Utility", 3 - 2),  # TP − FP
        ("Utility(num_docs=100,d=0.01)", 1 + 0.01 * (100 + 3 - 5 - 3)),
        # relevant at ranks 1, 3, 4 with 0, 1, 1 non-relevant above
        ("BinG", (1 + 2 / LOG2_3) / 3),
        # g = 3,0,3,2,0; g* = 3,3,2; C = 3,6,8,9,10; S = 3,3,6,8,8 → 3/log2 2 + 3/log2 4 + 2/log2 3, / 8
        ("G", (3 + 1.5 + 2 / LOG2_3) / 8),
        ("RelativeP@2", 1 / 2),
        ("RelativeP@5", 3 / 3),
        ("RelativeP@10", 3 / 3),
        ("SetP", 3 / 5),
        ("SetRelativeP", 3 / 3),
        ("SetAP", 9 / 15),
        ("SetF", 2 * 0.6 * 1.0 / (0.6 + 1.0)),
        ("SetF(beta2=0.25)", 1.25 * 0.6 * 1.0 / (0.25 * 0.6 + 1.0)),
        ("Unjudged@3", 0.0),
        ("NumNonRelJudgedRet", 2.0),
        # gains /3 (max label 3 > 1): 1, 0, 1, 2/3, 0
        ("TrecRBP", 0.1 * (1 + 0.81 + 0.729 * 2 / 3)),
        # gain table {0:0, 1:1, 2:4, 3:3} normalised by 4
        ("TrecRBP(gain={2:4})", 0.1 * (0.75 + 0.81 * 0.75 + 0.729 * 1.0)),
        ("TrecRBP(p=0.5)", 0.5 * (1 + 0.25 + 0.125 * 2 / 3)),
        ("TrecRBPResidual", 0.0),  # everything judged
        ("GMAP", (1 + 2 / 3 + 3 / 4) / 3),  # per query the value is AP
        ("GMBpref", (1 + 0.5 + 0.5) / 3),
    ],
)
def test_textbook(measure: str, expected: float) -> None:
    assert value(TEXTBOOK, measure) == pytest.approx(expected, abs=1e-12)


def test_textbook_ndcg_rel_and_rndcg() -> None:
    dcg1, dcg2, dcg3, dcg5 = 3.0, 3.0, 4.5, 4.5 + 2 / math.log2(5)
    idcg1, idcg2 = 3.0, 3 + 3 / LOG2_3
    idcg3 = idcg2 + 1.0
    # relevant retrieved at ranks 1, 3, 4; none missing (P = 3)
    assert value(TEXTBOOK, "nDCGRel") == pytest.approx((dcg1 / idcg1 + dcg3 / idcg3 + dcg5 / idcg3) / 3, abs=1e-12)
    # ideal gain changes after position 2 (3 → 2) and 3 (2 → 0); n = 5 > P + 1 adds the end of the ranking
    assert value(TEXTBOOK, "RnDCG") == pytest.approx((dcg2 / idcg2 + dcg3 / idcg3 + dcg5 / idcg3) / 3, abs=1e-12)


def test_split_relevant_document_not_retrieved() -> None:
    dcg = 2 / LOG2_3  # ranking c(0), a(2)
    idcg = 2 + 1 / LOG2_3  # ideal a(2), b(1)
    # a at rank 2 contributes DCG@2/IDCG@2; b, not retrieved, contributes DCG/IDCG at the end
    assert value(SPLIT, "nDCGRel") == pytest.approx((dcg / idcg + dcg / idcg) / 2, abs=1e-12)
    # changes after position 1 (2 → 1): DCG@1/IDCG@1 = 0/2; after position 2 (1 → 0): DCG@2/IDCG@2
    assert value(SPLIT, "RnDCG") == pytest.approx((0.0 + dcg / idcg) / 2, abs=1e-12)
    assert value(SPLIT, "RelativeP@1") == 0.0
    assert value(SPLIT, "SetRelativeP") == pytest.approx(1 / 2)


def test_pooled_unjudged_documents() -> None:
    # labels: b pooled-unjudged, a 2, e not in the qrels, c 1
    assert value(POOLED, "Unjudged@2") == pytest.approx(1 / 2)
    assert value(POOLED, "Unjudged@5") == pytest.approx(2 / 5)  # missing ranks count as judged
    # unjudged at ranks 1 and 3: p^4 + (1 − p)(p^0 + p^2)
    assert value(POOLED, "TrecRBPResidual") == pytest.approx(0.9**4 + 0.1 * (1 + 0.81), abs=1e-12)
    # gains /2: a (rank 2) 1, c (rank 4) 1/2
    assert value(POOLED, "TrecRBP") == pytest.approx(0.1 * (0.9 + 0.5 * 0.729), abs=1e-12)
    # binG counts every non-relevant document above, judged or not: 1 before a, 2 before c
    assert value(POOLED, "BinG") == pytest.approx((1 / LOG2_3 + 1 / 2) / 2, abs=1e-12)
    assert value(POOLED, "NumNonRelJudgedRet") == 0.0
    assert value(POOLED, "Utility") == 2 - 2


def test_binary_labels_are_not_rescaled_by_trec_rbp() -> None:
    case = ({"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    assert value(case, "TrecRBP") == pytest.approx(0.1 * (1 + 0.81), abs=1e-12)


def test_iprec_rounds_half_away_from_zero() -> None:
    # R = 5: c = lround(2.5) = 3 → 3rd relevant at rank 4, best precision from rank 4 on = 3/4
    # (round-half-even would give c = 2 → rank 2 → 1.0)
    assert value(FIVE, "IPrec(recall=0.5)") == pytest.approx(0.75, abs=1e-12)


def test_empty_ranking_gives_trec_evals_nan() -> None:
    """With nothing retrieved, trec_eval's iprec at c = 0 is 0/0, printed '-nan' (trec_eval -J on a query
    whose only retrieved document is unjudged; a query absent from the run under -c is 0 instead, see
    tests/trec_eval/test_dropin_inputs.py)."""
    qrels = {"q": {"a": 1}, "z": {"b": 1}}
    run = {"z": {"b": 1.0}, "q": {"x": 1.0}}
    with pytest.warns(ranklens.RanklensWarning, match="unjudged rows removed"):
        res = ranklens.evaluate(qrels, run, ["IPrec", "IPrec(recall=1)", "IPrecAvg"], judged_only=True)
    got = res.per_query("IPrec")["q"]
    assert math.isnan(got) and math.copysign(1.0, got) < 0
    assert res.per_query("IPrec(recall=1)")["q"] == 0.0  # c = 1 > RR = 0
    assert math.isnan(res.per_query("IPrecAvg")["q"])


def test_rndcg_is_zero_without_relevant_documents_at_the_level() -> None:
    assert value(SPLIT, "RnDCG(rel=3)") == 0.0
    assert value(SPLIT, "RnDCG(rel=2)") == value(SPLIT, "RnDCG")


def test_g_with_fractional_gains_costs_at_least_one_per_rank() -> None:
    case = ({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}})
    # g = 0.5, 0; g* = 0.5; C_1 = max(0.5, 1) = 1, S_1 = 0.5
    assert value(case, "G(gain={1:0.5})") == pytest.approx(0.5 / math.log2(2.5) / 0.5, abs=1e-12)


def test_relevance_level_applies() -> None:
    # rel = 3: relevant labels are the two 3s at ranks 1 and 3
    assert value(TEXTBOOK, "SetP(rel=3)") == pytest.approx(2 / 5)
    assert value(TEXTBOOK, "NumNonRelJudgedRet(rel=3)") == 3.0
    assert value(TEXTBOOK, "BinG(rel=3)") == pytest.approx((1 + 1 / LOG2_3) / 2, abs=1e-12)


def test_geometric_mean_aggregates() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"c": 2.0, "x": 1.0}}
    res = ranklens.evaluate(qrels, run, ["GMAP"])
    assert res.per_query("GMAP") == {"q1": 1.0, "q2": 0.0}
    assert res["GMAP"] == pytest.approx(math.sqrt(1.0 * 1e-5))  # AP 0 floored at 1e-5


# --- primitives -----------------------------------------------------------------------------------------


def test_lround_is_c_lround() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 2.4, -2.6])
    assert lround(x).tolist() == [1, 2, 3, -1, -3, 0, 2, -3]


def test_segment_suffix_max() -> None:
    values = np.array([0.1, 0.5, 0.2, 0.9, 0.3, 0.3, 0.7])
    offsets = np.array([0, 3, 3, 7])
    assert segment_suffix_max(values, offsets).tolist() == [0.5, 0.5, 0.2, 0.9, 0.7, 0.7, 0.7]


def test_powers_multiply_repeatedly() -> None:
    pw = powers(0.9, 3)
    assert pw.tolist() == [1.0, 0.9, 0.9 * 0.9, 0.9 * 0.9 * 0.9]


@pytest.mark.parametrize(
    "text",
    [
        "IPrec(recall=0.1)", "IPrecAvg", "IPrecAvg(recall={0.2,0.5,0.8})", "GMAP", "GMBpref",
        "RprecMult(mult=1.5)", "Utility(a=2,b=-0.5,num_docs=10)", "BinG", "G(gain={1:0.5})", "nDCGRel",
        "RnDCG(rel=2)", "RelativeP@5", "SetP", "SetRelativeP", "SetAP", "SetF(beta2=0.25)", "Unjudged@10",
        "NumNonRelJudgedRet", "TrecRBP(p=0.8,gain={2:5})", "TrecRBPResidual(p=0.5)",
    ],
)  # fmt: skip
def test_round_trip(text: str) -> None:
    m = parse(text)
    assert str(m) == text
    assert parse(str(m)) == m


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("IPrecAvg(recall={0.5,0.2})", "increasing"),
        ("IPrecAvg(recall=0.5)", r"\{0.2,0.5,0.8\}"),
        ("TrecRBP(p=1)", r"p must be in \(0, 1\)"),
        ("Unjudged", "needs a cutoff"),
    ],
)
def test_parameter_errors(text: str, pattern: str) -> None:
    with pytest.raises(ranklens.errors.MeasureError, match=pattern):
        parse(text)


@pytest.mark.parametrize("max_length", [1, 5, 30, 300])
def test_segment_cumsum_adds_like_a_c_loop(max_length: int) -> None:
    from ranklens.engine.kernels._common import segment_cumsum

    rng = np.random.default_rng(max_length)
    lengths = rng.integers(0, max_length + 1, size=100)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    values = rng.random(int(offsets[-1])) * 3 - 1
    expected = []
    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        total = 0.0
        for v in values[start:end].tolist():
            total += v
            expected.append(total)
    assert segment_cumsum(values, offsets).tolist() == expected
    equal = np.arange(0, 10 * max_length + 1, max_length)  # equal lengths: the one-matrix path
    values = rng.random(int(equal[-1]))
    assert segment_cumsum(values, equal).tolist() == np.cumsum(values.reshape(-1, max_length), axis=1).reshape(-1).tolist()
