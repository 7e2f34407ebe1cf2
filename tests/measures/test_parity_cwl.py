"""C/W/L measures (SDCG, NERR8–11, INST, INSQ, BPM) equal cwl_eval's values, read through ir_measures' cwl_eval
provider, to 1e-9 on seeded generated collections: graded and negative labels, unjudged documents, short and
empty rankings, several min_rel/max_rel scales. A hand C/W/L sum checks the padding past the last document."""

from __future__ import annotations

import logging
import math
import random

import pytest

import ranklens

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")
logging.getLogger("ir_measures.cwl_eval").disabled = True  # (its notes on the observed label range)


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(60)]
        qrels[qid] = {d: rng.choice((0, 0, 1, 2, 3, -1)) for d in rng.sample(docs, 30)}
        n = rng.choice((1, 5, 20, 45))
        retrieved = rng.sample(docs, n)
        run[qid] = {d: float(s) for d, s in zip(retrieved, rng.sample(range(10_000), n))}  # distinct scores
    qrels["q0"] = {d: 0 for d in qrels["q0"]}  # nothing relevant
    return qrels, run


CASES = [
    ("SDCG(max_rel=3)@10", "SDCG(max_rel=3)@10"),
    ("SDCG(min_rel=1, max_rel=3)@5", "SDCG(min_rel=1,max_rel=3)@5"),
    ("NERR8(max_rel=3)@10", "NERR8(max_rel=3)@10"),
    ("NERR8(max_rel=2)@50", "NERR8(max_rel=2)@50"),
    ("NERR9(max_rel=3)@10", "NERR9(max_rel=3)@10"),
    ("NERR9(min_rel=1, max_rel=3)@20", "NERR9(min_rel=1,max_rel=3)@20"),
    ("NERR10(max_rel=3)", "NERR10(max_rel=3)"),
    ("NERR10(p=0.5, max_rel=3)", "NERR10(p=0.5,max_rel=3)"),
    ("NERR11(max_rel=3)", "NERR11(max_rel=3)"),
    ("NERR11(T=2.5, max_rel=3)", "NERR11(T=2.5,max_rel=3)"),
    ("INST(max_rel=3)", "INST(max_rel=3)"),
    ("INST(T=3.0, max_rel=2)", "INST(T=3,max_rel=2)"),
    ("INSQ(max_rel=3)", "INSQ(max_rel=3)"),
    ("INSQ(T=0.4, max_rel=3)", "INSQ(T=0.4,max_rel=3)"),
    ("BPM(max_rel=3)@10", "BPM(max_rel=3)@10"),
    ("BPM(T=1.5, max_rel=3)@20", "BPM(T=1.5,max_rel=3)@20"),
]


@pytest.mark.parametrize("seed", [28, 5])
@pytest.mark.parametrize(("theirs", "ours"), CASES)
def test_cwl_measures_equal_cwl_eval(theirs: str, ours: str, seed: int) -> None:
    qrels, run = _collection(seed)
    expected = {m.query_id: float(m.value) for m in ir_measures.iter_calc([ir_measures.parse_measure(theirs)], qrels, run)}
    got = ranklens.Evaluator([ours], qrels)(run, warn=False).per_query(ours)
    assert set(got) == set(run) and set(run) <= set(expected)
    for q in run:
        assert math.isclose(got[q], expected[q], rel_tol=1e-9, abs_tol=1e-12), (ours, q, got[q], expected[q])


def test_the_ir_measures_spelling_is_read() -> None:
    from ranklens.measures import parse

    assert str(parse("INST(T=2.0, max_rel=3)")) == "INST(T=2,max_rel=3)"
    assert str(parse("NERR8(max_rel=3)@10")) == "NERR8(max_rel=3)@10"


def _hand_cwl(gains: list[float], cont: list[float]) -> float:
    """Σ W_i g_i with W_i ∝ Π_{j<i} C_j, written as a loop (independent of the kernel's matrix)."""
    reach, weights = 1.0, []
    for c in cont:
        weights.append(reach)
        reach *= c
    return sum(w * g for w, g in zip(weights, gains)) / sum(weights)


def test_padding_past_the_ranking_by_hand() -> None:
    # two documents, grades 3 and 0 on a 0..3 scale, depth 6: INSQ's weights run on past rank 2
    qrels = {"q": {"a": 3, "b": 0}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    t = 1.0
    gains = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    cont = [((i + 2 * t - 1) / (i + 2 * t)) ** 2 for i in range(1, 7)]
    got = ranklens.evaluate(qrels, run, ["INSQ(depth=6)"]).per_query("INSQ(depth=6)")["q"]
    assert math.isclose(got, _hand_cwl(gains, cont), rel_tol=1e-12)
    # BPM@3, T = 1: stops at the first document (gain 1 reached): value 1
    assert ranklens.evaluate(qrels, run, ["BPM@3"]).aggregates[0] == 1.0


@pytest.mark.parametrize("bad", ["INST(T=0)", "NERR10(p=1)", "SDCG(min_rel=3,max_rel=2)@10", "SDCG", "INST@10"])
def test_bad_parameters_are_refused(bad: str) -> None:
    from ranklens.errors import MeasureError
    from ranklens.measures import parse_many

    with pytest.raises(MeasureError):
        [m.validate() for m in parse_many(bad)]
