"""The DCG discount: ``log2`` (default), ``log`` with a base, and Järvelin–Kekäläinen ``jk``; brute force."""

from __future__ import annotations

import math

import pytest

from ranklens import evaluate, parse
from ranklens.errors import MeasureError

QRELS = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}, "q3": {"x1": 2, "x2": 1, "x3": 0, "x4": 2}}
RUN = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}, "q3": {"x3": 3.0, "x2": 2.0, "y9": 1.0}}


def brute(q: str, k: int | None, divisor) -> tuple[float, float]:
    """(DCG@k, IDCG@k) with gain = label and the given divisor of the 1-based rank."""
    docs = sorted(RUN[q], key=lambda d: -RUN[q][d])[:k]
    dcg = sum(max(QRELS[q].get(d, 0), 0) / divisor(i + 1) for i, d in enumerate(docs))
    ideal = sorted((v for v in QRELS[q].values() if v > 0), reverse=True)[:k]
    return dcg, sum(g / divisor(i + 1) for i, g in enumerate(ideal))


@pytest.mark.parametrize("base", [2, 3, 10])
@pytest.mark.parametrize("k", [None, 1, 2, 3, 10])
def test_log_discount_with_a_base(base: int, k: int | None) -> None:
    at = "" if k is None else f"@{k}"
    names = [f"DCG(discount=log,base={base}){at}", f"IDCG(discount=log,base={base}){at}",
             f"nDCG(discount=log,base={base}){at}", f"nDCG{at}"]
    res = evaluate(QRELS, RUN, names)
    for q in QRELS:
        dcg, idcg = brute(q, k, lambda i: math.log(i + 1, base))
        assert res.per_query(names[0])[q] == pytest.approx(dcg, rel=1e-12, abs=1e-12)
        assert res.per_query(names[1])[q] == pytest.approx(idcg, rel=1e-12, abs=1e-12)
        assert res.per_query(names[2])[q] == pytest.approx(dcg / idcg if idcg else 0.0, abs=1e-12)
        # the base of the log discount cancels in nDCG (spec §2.2)
        assert res.per_query(names[2])[q] == pytest.approx(res.per_query(names[3])[q], abs=1e-12)


def test_textbook_dcg_with_base_10() -> None:
    # spec §0 ranking [3, 0, 3, 2, 0]: DCG = Σ rel_i / log10(i + 1)
    expected = sum(g / math.log10(i + 2) for i, g in enumerate([3, 0, 3, 2, 0]))
    assert evaluate(QRELS, RUN, "DCG(discount=log,base=10)").per_query("DCG(discount=log,base=10)")["q1"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("base", [2, 3])
def test_jk_discount_keeps_its_meaning(base: int) -> None:
    res = evaluate(QRELS, RUN, [f"DCG(discount=jk,base={base})"])
    dcg, _ = brute("q1", None, lambda i: 1.0 if i < base else math.log(i, base))
    assert res.per_query(f"DCG(discount=jk,base={base})")["q1"] == pytest.approx(dcg, rel=1e-12)
    if base == 2:
        assert dcg == pytest.approx(5.892789, abs=1e-6)  # spec §0 table


@pytest.mark.parametrize(
    "name", ["nDCG(discount=log,base=10)@10", "DCG(discount=log,base=3)", "IDCG(discount=log,base=10)@5",
             "nDCG(discount=jk,base=3)@10", "nDCG(discount=log)@10"]
)
def test_discount_round_trips(name: str) -> None:
    m = parse(name)
    assert str(m) == name and parse(str(m)) == m


def test_a_base_without_a_discount_that_uses_it_is_refused() -> None:
    with pytest.raises(MeasureError, match=r"nDCG\(base=10\)@10: base applies to discount=log or discount=jk"):
        evaluate(QRELS, RUN, "nDCG(base=10)@10")
    with pytest.raises(MeasureError, match="base applies to discount=log or discount=jk"):
        parse("DCG(base=3)")


def test_unknown_discount_lists_the_choices() -> None:
    with pytest.raises(MeasureError, match=r"parameter 'discount' must be one of log2, log, jk; got 'ln'"):
        parse("nDCG(discount=ln)")
