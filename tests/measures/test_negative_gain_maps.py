"""A gain map naming a negative label: honoured by DCG/nDCG/IDCG, refused where it could never apply.

In trec semantics a negative qrels label is "pooled but unjudged" (gain 0). A gain map that names one
(``DCG(gain={-1:-1,0:0,1:1})``) says what those documents are worth, so the gain-based measures use it;
every other measure keeps the ``negative=`` policy. Brute force below, from the definitions.
"""

from __future__ import annotations

import itertools
import math

import pytest
from click.testing import CliRunner

from ranklens import Evaluator, evaluate
from ranklens.cli.main import cli
from ranklens.errors import MeasureError

QRELS = {"q": {"a": 2, "b": -1, "c": 1, "d": 0, "h": -2, "n": -1}}
RUN = {"q": {"b": 5.0, "a": 4.0, "e": 3.0, "h": 2.0, "c": 1.0, "d": 0.5}}  # n (−1) is not retrieved


def brute(gain: dict[int, float], k: int | None, ideal: str = "global") -> tuple[float, float]:
    """(DCG@k, IDCG@k): a label named in the map has the map's gain; other negatives and unjudged 0."""

    def g(doc: str) -> float:
        if doc not in QRELS["q"]:
            return 0.0
        lab = QRELS["q"][doc]
        if lab in gain:
            return gain[lab]
        return float(lab) if lab >= 0 else 0.0

    docs = sorted(RUN["q"], key=lambda d: -RUN["q"][d])
    dcg = sum(g(d) / math.log2(i + 2) for i, d in enumerate(docs[:k]))
    pool = list(QRELS["q"]) if ideal == "global" else docs[:k]
    best = sorted((g(d) for d in pool if g(d) > 0), reverse=True)[:k]
    return dcg, sum(x / math.log2(i + 2) for i, x in enumerate(best))


@pytest.mark.parametrize("k", [None, 1, 2, 4])
@pytest.mark.parametrize("gain", [{-1: -1.0, 0: 0.0, 1: 1.0}, {-1: -3.0}, {-1: 2.5, -2: -0.5}, {-2: 1.0, 2: 7.0}])
def test_negative_labels_named_in_the_map_get_its_gain(k: int | None, gain: dict[int, float]) -> None:
    text = "{" + ",".join(f"{lvl}:{g:g}" for lvl, g in gain.items()) + "}"
    at = "" if k is None else f"@{k}"
    names = [f"DCG(gain={text}){at}", f"IDCG(gain={text}){at}", f"nDCG(gain={text}){at}", f"nDCG(gain={text},ideal=local){at}"]
    res = evaluate(QRELS, RUN, names)
    dcg, idcg = brute(gain, k)
    assert res[names[0]] == pytest.approx(dcg, abs=1e-12)
    assert res[names[1]] == pytest.approx(idcg, abs=1e-12)
    assert res[names[2]] == pytest.approx(dcg / idcg if idcg > 0 else 0.0, abs=1e-12)
    if k is not None:
        ldcg, lidcg = brute(gain, k, ideal="local")
        assert res[names[3]] == pytest.approx(ldcg / lidcg if lidcg > 0 else 0.0, abs=1e-12)


def test_nDCG_can_go_below_zero_and_minmax_bounds_it() -> None:
    res = evaluate({"q": {"a": 1, "b": -1}}, {"q": {"b": 2.0, "a": 1.0}}, ["nDCG(gain={-1:-4})", "nDCG(gain={-1:-4},norm=minmax)"])
    assert res["nDCG(gain={-1:-4})"] == pytest.approx(-4.0 + 1.0 / math.log2(3), abs=1e-12)
    # minDCG = −4 (b on top), IDCG = 1: (DCG − minDCG)/(IDCG − minDCG)
    assert res["nDCG(gain={-1:-4},norm=minmax)"] == pytest.approx((-4.0 + 1.0 / math.log2(3) + 4.0) / 5.0, abs=1e-12)


def test_tie_averaged_dcg_with_a_negative_gain() -> None:
    qrels = {"q": {"a": 1, "b": -1, "c": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    gain = {"a": 1.0, "b": -2.0, "c": 0.0}
    orders = list(itertools.permutations("abc"))
    expected = sum(sum(gain[d] / math.log2(i + 2) for i, d in enumerate(o[:2])) for o in orders) / len(orders)
    assert evaluate(qrels, run, "DCG(gain={-1:-2},ties=average)@2")["DCG(gain={-1:-2},ties=average)@2"] == pytest.approx(expected, abs=1e-12)


def test_other_measures_keep_the_negative_policy() -> None:
    res = evaluate(QRELS, RUN, ["DCG(gain={-1:-1})", "Judged@4", "P@4", "NumRel"])
    assert res["Judged@4"] == 0.25  # only a: b (−1) and h (−2) are pooled but unjudged, e is not in the qrels
    assert res["P@4"] == 0.25 and res["NumRel"] == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"negative": "zero"}, r"DCG\(gain=\{-1:-1\}\): the gain map names label -1, but negative='zero' makes "
                               r"every negative label a judged 0 first"),
        ({"judged_only": True}, r"judged_only removes documents with a negative label"),
    ],
)
def test_a_map_entry_that_could_never_apply_is_refused(options: dict, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        Evaluator("DCG(gain={-1:-1})", QRELS, **options)


@pytest.mark.parametrize("name", ["G(gain={-1:5})", "nDCGRel(gain={-1:5})", "RnDCG(gain={-1:5})", "TrecRBP(gain={-1:5})"])
def test_trec_eval_families_refuse_negative_levels(name: str) -> None:
    with pytest.raises(MeasureError, match="follows trec_eval, where a negative label matches no gain level"):
        Evaluator(name, QRELS)


def test_trec_eval_keeps_ignoring_negative_levels(tmp_path) -> None:
    q = tmp_path / "q.txt"
    q.write_text("".join(f"q 0 {d} {v}\n" for d, v in QRELS["q"].items()))
    r = tmp_path / "r.txt"
    r.write_text("".join(f"q Q0 {d} 1 {s} run\n" for d, s in RUN["q"].items()))

    def value(measure: str) -> str:
        out = CliRunner().invoke(cli, ["trec-eval", "-m", measure, str(q), str(r)])
        assert out.exit_code == 0, out.output
        return out.stdout.split()[-1]

    # trec_eval: a negative qrels label matches no level of the gain table, so the entry changes nothing
    assert value("dcg.-1=-5") == value("dcg")
    assert value("ndcg.-1=-5,1=1") == value("ndcg")
