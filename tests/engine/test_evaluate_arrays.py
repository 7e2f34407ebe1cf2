"""``ranklens.evaluate_arrays``: dense matrices as scikit-learn holds them, flat arrays as torchmetrics does.

Oracles: scikit-learn's ``ndcg_score`` (dense, ``ties=average``) and a brute-force loop per query (flat).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ranklens
from ranklens import Results, evaluate_arrays
from ranklens.errors import InputError, MeasureError, RanklensWarning

metrics = pytest.importorskip("sklearn.metrics")


def brute(labels: np.ndarray, scores: np.ndarray, k: int | None, rel: float = 1.0) -> dict[str, float]:
    """nDCG@k, P@k (k fixed), AP, RR of one query: NaN label = not judged, NaN score = not retrieved.

    Ties in score go to the later document first (ranklens' default: doc id descending)."""
    retrieved = [j for j in range(len(scores)) if not math.isnan(scores[j])]
    order = sorted(retrieved, key=lambda j: (-scores[j], -j))
    judged = [v for v in labels if not math.isnan(v) and v >= 0]
    gain = [0.0 if math.isnan(labels[j]) or labels[j] < 0 else float(labels[j]) for j in order]
    top = gain[:k]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(top))
    ideal = sorted((v for v in judged if v > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    rel_flags = [1.0 if g >= rel else 0.0 for g in gain]
    big_r = sum(1 for v in judged if v >= rel)
    hits = np.cumsum(rel_flags) if rel_flags else np.zeros(0)
    ap = sum(hits[i] / (i + 1) for i, r in enumerate(rel_flags) if r) / big_r if big_r else 0.0
    rr = next((1.0 / (i + 1) for i, r in enumerate(rel_flags) if r), 0.0)
    p = sum(rel_flags[:k]) / k if k else float("nan")
    return {"nDCG": dcg / idcg if idcg > 0 else 0.0, "P": p, "AP": ap, "RR": rr}


# ---------------------------------------------------------------------------------------------- dense


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [None, 1, 3, 10])
@pytest.mark.parametrize("kind", ["int", "float"])
def test_dense_matches_sklearn_ndcg_score(seed: int, k: int | None, kind: str) -> None:
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 4, size=(25, 7)) if kind == "int" else rng.random((25, 7)) * 3
    y_score = np.round(rng.normal(size=(25, 7)), 1)  # some ties
    name = "nDCG(ties=average)" + ("" if k is None else f"@{k}")
    res = evaluate_arrays(y_true, y_score, [name])
    assert isinstance(res, Results)
    assert res.column(name) == pytest.approx([metrics.ndcg_score([t], [s], k=k) for t, s in zip(y_true, y_score)], abs=1e-12)
    assert res[name] == pytest.approx(metrics.ndcg_score(y_true, y_score, k=k), abs=1e-12)


def test_dense_query_ids_are_row_numbers_in_row_order() -> None:
    y_true = np.zeros((12, 3))
    y_true[:, 0] = 1
    y_score = np.tile([3.0, 2.0, 1.0], (12, 1))
    y_score[7] = [1.0, 2.0, 3.0]
    res = evaluate_arrays(y_true, y_score, ["RR"])
    assert res.query_ids == tuple(f"{i:02d}" for i in range(12))
    assert res.column("RR").tolist() == [1.0] * 7 + [1 / 3] + [1.0] * 4


def test_dense_nan_marks_unjudged_and_unretrieved() -> None:
    nan = math.nan
    y_true = np.array([[2.0, nan, 1.0, 0.0, 3.0], [nan, 1.0, nan, 2.0, 0.0]])
    y_score = np.array([[0.9, 0.8, 0.7, nan, nan], [0.1, 0.2, 0.3, 0.4, nan]])
    res = evaluate_arrays(y_true, y_score, ["nDCG@3", "nDCG", "P@2", "AP", "RR"])
    for i in range(2):
        expected = brute(y_true[i], y_score[i], 3)
        full = brute(y_true[i], y_score[i], None)
        got = dict(zip(map(str, res.measures), res.values[i].tolist()))
        assert got["nDCG@3"] == pytest.approx(expected["nDCG"], abs=1e-12)
        assert got["nDCG"] == pytest.approx(full["nDCG"], abs=1e-12)
        assert got["P@2"] == pytest.approx(brute(y_true[i], y_score[i], 2)["P"], abs=1e-12)
        assert got["AP"] == pytest.approx(full["AP"], abs=1e-12)
        assert got["RR"] == pytest.approx(full["RR"], abs=1e-12)


def test_dense_rows_without_judgements_or_retrievals_follow_the_policies() -> None:
    nan = math.nan
    y_true = np.array([[1.0, 0.0], [nan, nan], [1.0, 0.0]])
    y_score = np.array([[1.0, 2.0], [1.0, 2.0], [nan, nan]])
    with pytest.warns(RanklensWarning):
        skipped = evaluate_arrays(y_true, y_score, ["nDCG"])
    assert skipped.query_ids == ("0",)  # row 1 has no judgement, row 2 retrieves nothing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        zero = evaluate_arrays(y_true, y_score, ["nDCG"], missing="zero")
    assert zero.query_ids == ("0", "2") and zero.column("nDCG")[1] == 0.0


def test_label_kind_is_integer_when_every_label_is_a_whole_number() -> None:
    y_score = np.array([[3.0, 2.0, 1.0]])
    ints_as_floats = evaluate_arrays(np.array([[0.0, 1.0, 2.0]]), y_score, ["P@2"])  # rel=1 by default
    assert ints_as_floats["P@2"] == 0.5
    with pytest.raises(MeasureError, match="binary relevance"):
        evaluate_arrays(np.array([[0.0, 0.93, 2.0]]), y_score, ["P@2"])
    assert evaluate_arrays(np.array([[0.0, 0.93, 2.0]]), y_score, ["P@2"], rel_level=0.5)["P(rel=0.5)@2"] == 0.5
    with pytest.raises(MeasureError, match="binary relevance"):
        evaluate_arrays(np.array([[0.0, 1.0, 2.0]]), y_score, ["P@2"], labels="float")
    bools = evaluate_arrays(np.array([[False, True, True]]), y_score, ["P@2"])
    assert bools["P@2"] == 0.5


def test_other_options_pass_through() -> None:
    y_true = np.array([[0, 1, 2, 3]])
    y_score = np.array([[4.0, 3.0, 2.0, 1.0]])
    with pytest.warns(RanklensWarning, match="model: 1 rows beyond the per-query depth limit"):
        res = evaluate_arrays(y_true, y_score, ["P@2", "nDCG(gain=exp)@2"], rel_level=2, max_docs=3, name="model")
    assert res.run == "model"
    assert res["P(rel=2)@2"] == 0.0
    assert res.options["max_docs"] == 3


# ----------------------------------------------------------------------------------------------- flat


@pytest.mark.parametrize("seed", range(4))
def test_flat_torchmetrics_form_matches_a_loop_per_query(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    indexes = rng.integers(0, 15, size=n)  # interleaved, unsorted, as torchmetrics accepts them
    target = rng.integers(0, 3, size=n)
    preds = rng.random(n)
    res = evaluate_arrays(target, preds, ["nDCG@5", "nDCG", "P@3", "AP", "RR"], indexes=indexes)
    assert res.query_ids == tuple(f"{q:02d}" for q in sorted(set(indexes.tolist())))
    for i, q in enumerate(sorted(set(indexes.tolist()))):
        rows = np.flatnonzero(indexes == q)
        t, p = target[rows].astype(float), preds[rows]
        got = dict(zip(map(str, res.measures), res.values[i].tolist()))
        assert got["nDCG@5"] == pytest.approx(brute(t, p, 5)["nDCG"], abs=1e-12)
        assert got["nDCG"] == pytest.approx(brute(t, p, None)["nDCG"], abs=1e-12)
        assert got["P@3"] == pytest.approx(brute(t, p, 3)["P"], abs=1e-12)
        assert got["AP"] == pytest.approx(brute(t, p, None)["AP"], abs=1e-12)
        assert got["RR"] == pytest.approx(brute(t, p, None)["RR"], abs=1e-12)


def test_flat_with_string_indexes_and_float_targets() -> None:
    indexes = np.array(["b", "a", "b", "a", "b"])
    target = np.array([0.9, 0.1, 0.0, 0.7, 0.4])
    preds = np.array([0.1, 0.9, 0.8, 0.2, 0.5])
    res = evaluate_arrays(target, preds, ["nDCG", "P(rel=0.5)@2"], indexes=indexes)
    assert res.query_ids == ("a", "b")
    for i, q in enumerate(("a", "b")):
        rows = np.flatnonzero(indexes == q)
        assert res.values[i, 0] == pytest.approx(brute(target[rows], preds[rows], None)["nDCG"], abs=1e-12)
        assert res.values[i, 1] == pytest.approx(brute(target[rows], preds[rows], 2, rel=0.5)["P"], abs=1e-12)


def test_flat_matches_dense_on_the_same_data() -> None:
    rng = np.random.default_rng(7)
    y_true = rng.random((6, 5))
    y_score = rng.random((6, 5))
    dense = evaluate_arrays(y_true, y_score, ["nDCG@3"])
    flat = evaluate_arrays(y_true.ravel(), y_score.ravel(), ["nDCG@3"], indexes=np.repeat(np.arange(6), 5))
    assert flat.values == pytest.approx(dense.values, abs=1e-15)


# --------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: evaluate_arrays(np.zeros((2, 3)), np.zeros((2, 4)), ["nDCG"]),
         r"y_true and y_score must have the same shape; got \(2, 3\) and \(2, 4\)"),
        (lambda: evaluate_arrays(np.zeros(3), np.zeros(3), ["nDCG"]),
         r"1-D y_true and y_score need indexes= \(the query of each element, as torchmetrics\); or pass "
         r"2-D arrays \(rows = queries\)"),
        (lambda: evaluate_arrays(np.zeros(3), np.zeros(3), ["nDCG"], indexes=np.zeros(4)),
         r"indexes must have one entry per element of y_true; got 4 for 3"),
        (lambda: evaluate_arrays(np.zeros((2, 3)), np.zeros((2, 3)), ["nDCG"], indexes=np.zeros(6)),
         r"indexes= goes with 1-D y_true and y_score; got 2-D arrays"),
        (lambda: evaluate_arrays(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), ["nDCG"]),
         r"y_true must be 1-D \(with indexes=\) or 2-D \(rows = queries\); got 3-D"),
        (lambda: evaluate_arrays([["a", "b"]], [[1.0, 2.0]], ["nDCG"]), r"y_true must hold numbers"),
        (lambda: evaluate_arrays([[1.0, 2.0]], [["a", "b"]], ["nDCG"]), r"y_score must hold numbers"),
        (lambda: evaluate_arrays([[1.0, math.inf]], [[1.0, 2.0]], ["nDCG"]), r"y_true must be finite or NaN"),
        (lambda: evaluate_arrays([[1, 0]], [[1.0, 2.0]], ["nDCG"], labels="real"), r"labels must be"),
    ],
)
def test_bad_array_inputs_say_what_and_where(call, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call()


def test_evaluate_arrays_is_exported() -> None:
    assert "evaluate_arrays" in ranklens.__all__
    assert ranklens.evaluate_arrays is evaluate_arrays
