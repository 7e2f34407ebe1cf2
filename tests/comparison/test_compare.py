"""``ranklens.comparison.compare``: pairing, rows, corrections, segments, costs, on the §8.3 data and the
bundled example collection."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats

from ranklens import stats
from ranklens.comparison import Comparison, compare, load_costs, load_segments
from ranklens.errors import FormatError, InputError, MeasureError, RanklensWarning, python_wording
from ranklens.measures import parse
from ranklens.results import Results

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")

A = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
B = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
C = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]
TOPICS = tuple(f"t{i:02d}" for i in range(10))
SCHEMA = {
    "baseline",
    "system",
    "measure",
    "segment",
    "n",
    "mean_baseline",
    "mean_system",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_value_adjusted",
    "test",
    "effect_size",
    "wins",
    "ties",
    "losses",
}


def scores(name: str, values: list[float], queries: tuple[str, ...] = TOPICS, measure: str = "AP") -> Results:
    """Precomputed per-query scores as a Results (compare accepts them in place of runs)."""
    m = parse(measure)
    col = np.asarray(values, dtype=np.float64)[:, None]
    return Results(name, (m,), queries, col, (float(col.mean()),))


SPEC_RUNS = {"A": scores("A", A), "B": scores("B", B), "C": scores("C", C)}


def test_spec_pairs_against_baseline_b() -> None:
    cmp = compare(None, SPEC_RUNS, ["AP"], baseline="B")
    row = cmp.row("B", "A", "AP")
    assert (row.mean_baseline, row.mean_system) == pytest.approx((0.489, 0.530))
    assert row.diff == pytest.approx(0.041, abs=1e-12)
    assert row.rel_diff == pytest.approx(0.041 / 0.489)
    assert row.p_value == pytest.approx(scipy.stats.ttest_rel(A, B).pvalue, rel=1e-10)
    ci = scipy.stats.ttest_rel(A, B).confidence_interval()
    assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))
    assert (row.wins, row.ties, row.losses) == (8, 0, 2)
    assert row.effect_size == pytest.approx(0.041 / np.std(np.subtract(A, B), ddof=1))
    # Holm over the two pairs of the family (A–B, C–B)
    p_cb = scipy.stats.ttest_rel(C, B).pvalue
    expected = stats.holm([row.p_value, p_cb])
    assert row.p_value_adjusted == pytest.approx(expected[0])
    assert cmp.row("B", "C", "AP").p_value_adjusted == pytest.approx(expected[1])
    assert cmp.baseline == "B" and cmp.pairs == [("B", "A"), ("B", "C")]


def test_spec_all_pairs_with_randomisation_and_bonferroni() -> None:
    cmp = compare(None, SPEC_RUNS, "AP", test="randomisation", correction="bonferroni")
    assert cmp.pairs == [("A", "B"), ("A", "C"), ("B", "C")]
    row = cmp.row("A", "B", "AP")
    assert row.diff == pytest.approx(-0.041)  # B − A
    assert row.p_value == 10 / 1024
    assert row.p_value_adjusted == pytest.approx(3 * 10 / 1024)
    assert row.test == "randomisation"


def test_spec_blocked_tukey_rows() -> None:
    cmp = compare(None, SPEC_RUNS, "AP", test="tukey", correction="bonferroni")
    expected = {("A", "B"): 0.003736, ("A", "C"): 0.080858, ("B", "C"): 0.325936}
    for (b, s), p in expected.items():
        row = cmp.row(b, s, "AP")
        assert row.p_value == pytest.approx(p, abs=1e-6)
        assert row.p_value_adjusted == row.p_value  # Tukey already controls the family-wise error
        assert row.test == "tukey"
    assert [r.significant for r in cmp.rows] == [True, False, False]


def test_randomised_tukey_rows_are_seeded() -> None:
    one = compare(None, SPEC_RUNS, "AP", test="randomised-tukey", samples=2_000, seed=5)
    two = compare(None, SPEC_RUNS, "AP", test="randomised-tukey", samples=2_000, seed=5)
    assert one.rows == two.rows
    assert one.row("A", "B", "AP").p_value < 0.05


def test_identical_systems() -> None:
    cmp = compare(None, {"x": scores("x", A), "y": scores("y", A)}, "AP", ci="bootstrap", test="bootstrap")
    row = cmp.rows[0]
    assert row.p_value == 1.0 and row.diff == 0.0 and row.ci_low <= 0.0 <= row.ci_high
    assert (row.wins, row.ties, row.losses) == (0, 10, 0)
    assert not row.significant


def test_swapping_the_two_systems_flips_diff_and_keeps_p() -> None:
    for test in ("t", "randomisation", "bootstrap", "wilcoxon", "sign"):
        ab = compare(None, {"A": SPEC_RUNS["A"], "B": SPEC_RUNS["B"]}, "AP", test=test, ci="bootstrap").rows[0]
        ba = compare(None, {"B": SPEC_RUNS["B"], "A": SPEC_RUNS["A"]}, "AP", test=test, ci="bootstrap").rows[0]
        assert ab.diff == pytest.approx(-ba.diff)
        assert ab.p_value == pytest.approx(ba.p_value, rel=1e-12)
        assert (ab.ci_low, ab.ci_high) == pytest.approx((-ba.ci_high, -ba.ci_low))


def test_pairs_on_common_queries_and_says_what_it_dropped() -> None:
    with pytest.warns(RanklensWarning) as record:  # every note is also a warning, issued once
        cmp = compare(QRELS, [BM25, DENSE], ["nDCG@10"])
    # (each in the Python API's words: the notes are data, and the API names its own parameter)
    assert [str(w.message) for w in record] == [python_wording(n) for n in cmp.notes]
    assert any("pass missing='zero'" in str(w.message) for w in record)
    assert not any("--missing" in str(w.message) for w in record if "qrels query" in str(w.message))
    row = cmp.rows[0]
    assert (row.baseline, row.system, row.n) == ("bm25", "dense", 11)
    assert any("dropped 1 query only in bm25 (q12)" in n for n in cmp.notes)
    with pytest.warns(RanklensWarning, match="scored 0"):
        zeroed = compare(QRELS, [BM25, DENSE], ["nDCG@10"], missing="zero")
    assert zeroed.rows[0].n == 12
    assert not any("dropped" in n for n in zeroed.notes)


def test_rows_agree_with_evaluate_and_scipy_on_example_data() -> None:
    import ranklens

    with pytest.warns(RanklensWarning):  # dense misses q12: its note and the pairing note
        cmp = compare(QRELS, {"bm25": BM25, "dense": DENSE}, ["nDCG@10", "AP"])
    bm25 = ranklens.evaluate(QRELS, BM25, ["nDCG@10", "AP"])
    with pytest.warns(RanklensWarning, match="1 qrels query with no retrieved document"):
        dense = ranklens.evaluate(QRELS, DENSE, ["nDCG@10", "AP"])
    common = [q for q in bm25.query_ids if q in dense.query_ids]
    for m in ("nDCG@10", "AP"):
        xb = np.array([bm25.per_query(m)[q] for q in common])
        xd = np.array([dense.per_query(m)[q] for q in common])
        row = cmp.row("bm25", "dense", m)
        assert row.mean_baseline == pytest.approx(xb.mean()) and row.mean_system == pytest.approx(xd.mean())
        assert row.p_value == pytest.approx(scipy.stats.ttest_rel(xd, xb).pvalue)
        assert row.wins == int((xd > xb).sum()) and row.losses == int((xd < xb).sum())


def test_json_rows_follow_the_schema() -> None:
    cmp = compare(None, SPEC_RUNS, "AP")
    data = json.loads(cmp.to_json())
    assert len(data["rows"]) == 3
    for row in data["rows"]:
        assert SCHEMA <= set(row)
    one = compare(None, {"x": scores("x", [0.5], ("q",)), "y": scores("y", [0.7], ("q",))}, "AP")
    row = json.loads(one.to_json())["rows"][0]
    assert row["p_value"] is None and row["ci_low"] is None  # NaN with one query, written as null


def test_single_query_rows_are_nan_not_errors() -> None:
    one = compare(None, {"x": scores("x", [0.5], ("q",)), "y": scores("y", [0.7], ("q",))}, "AP")
    row = one.rows[0]
    assert row.n == 1 and math.isnan(row.p_value) and not row.significant


# ------------------------------------------------------------------------------------------- segments

SEGMENTS = {q: ("even" if int(q[1:]) % 2 == 0 else "odd") for q in TOPICS}


def test_segment_rows_counts_and_correction_family() -> None:
    cmp = compare(None, SPEC_RUNS, "AP", baseline="B", segments=SEGMENTS)
    assert cmp.segments == (("even", 5), ("odd", 5))
    seg_rows = cmp.select(measure="AP", overall=False)
    assert [(r.segment, r.system) for r in seg_rows] == [("even", "A"), ("even", "C"), ("odd", "A"), ("odd", "C")]
    even = [TOPICS.index(q) for q in TOPICS if SEGMENTS[q] == "even"]
    row = cmp.row("B", "A", "AP", "even")
    assert row.n == 5
    assert row.p_value == pytest.approx(scipy.stats.ttest_rel(np.take(A, even), np.take(B, even)).pvalue)
    # family of segment rows: every pair × segment of the measure
    raw = [r.p_value for r in seg_rows]
    assert [r.p_value_adjusted for r in seg_rows] == pytest.approx(stats.holm(raw).tolist())
    assert cmp.mean("A", "AP", "even") == pytest.approx(np.take(A, even).mean())


def test_segments_from_file_frames_and_notes(tmp_path: Path) -> None:
    path = tmp_path / "segments.tsv"
    path.write_text("query_id\tsegment\n# comment\n\nt00\tnav igational\nt01\tinfo\n")
    assert load_segments(path) == {"t00": "nav igational", "t01": "info"}
    csv_path = tmp_path / "segments.csv"
    csv_path.write_text("t00,a\nt01,b\n")
    assert load_segments(str(csv_path)) == {"t00": "a", "t01": "b"}
    spaced = tmp_path / "segments.txt"
    spaced.write_text("t00 long tail\n")
    assert load_segments(spaced) == {"t00": "long tail"}
    table = pa.table({"qid": ["t00", "t01"], "segment": ["x", "y"]})
    assert load_segments(table) == {"t00": "x", "t01": "y"}
    pd = pytest.importorskip("pandas")
    assert load_segments(pd.DataFrame({"q": ["t00"], "s": ["x"]})) == {"t00": "x"}
    pl = pytest.importorskip("polars")
    assert load_segments(pl.DataFrame({"query_id": ["t00"], "segment": ["z"]})) == {"t00": "z"}
    with pytest.warns(RanklensWarning, match="8 evaluated queries have no segment"):
        cmp = compare(None, SPEC_RUNS, "AP", segments=path)
    assert any("8 evaluated queries have no segment" in n for n in cmp.notes)


@pytest.mark.parametrize(
    ("text", "message"),
    [("t00\n", "expected 2 columns"), ("t00 a\nt00 b\n", "is in segment 'a' and 'b'"), ("# only\n", "no query")],
)
def test_bad_segment_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(FormatError, match=message):
        load_segments(path)


# ------------------------------------------------------------------------------------------------ costs


def test_pareto_marks_dominated_systems(tmp_path: Path) -> None:
    costs = tmp_path / "costs.csv"
    # A is best and cheapest on latency; B is worse than A and slower: dominated; C: cheaper per 1k than A
    costs.write_text("system,latency_ms,cost_per_1k\nA,10,0.5\nB,20,0.6\nC,30,0.1\n")
    cmp = compare(None, SPEC_RUNS, "AP", costs=costs)
    verdict = {p.system: p.dominated_by for p in cmp.pareto}
    assert verdict == {"A": (), "B": ("A",), "C": ()}
    assert dict(cmp.pareto[0].costs) == {"cost_per_1k": 0.5, "latency_ms": 10.0}
    assert load_costs({"A": 1}) == {"A": {"cost": 1.0}}


def test_cost_errors() -> None:
    with pytest.raises(InputError, match="unknown systems Z"):
        compare(None, SPEC_RUNS, "AP", costs={"Z": 1})
    with pytest.raises(InputError, match="expected a number"):
        compare(None, SPEC_RUNS, "AP", costs={"A": {"ms": "fast"}})
    with pytest.warns(RanklensWarning, match="no cost for C"):
        partial = compare(None, SPEC_RUNS, "AP", costs={"A": 1, "B": 2})
    assert any("no cost for C" in n for n in partial.notes)


# ----------------------------------------------------------------------------------------------- errors


def test_argument_errors() -> None:
    with pytest.raises(InputError, match="did you mean 'B'"):
        compare(None, SPEC_RUNS, "AP", baseline="b ")
    assert compare(None, SPEC_RUNS, "AP", baseline=1).baseline == "B"
    with pytest.raises(InputError, match="at least two systems"):
        compare(None, {"A": SPEC_RUNS["A"]}, "AP")
    with pytest.raises(InputError, match="did you mean 'wilcoxon'"):
        compare(None, SPEC_RUNS, "AP", test="wilcoxn")
    with pytest.raises(InputError, match="alpha"):
        compare(None, SPEC_RUNS, "AP", alpha=1.5)
    with pytest.raises(MeasureError, match="was not evaluated"):
        compare(None, SPEC_RUNS, "nDCG@10")
    with pytest.raises(InputError, match="qrels are needed"):
        compare(None, [BM25, DENSE], "AP")


def test_duplicate_tags_fall_back_to_file_names(tmp_path: Path) -> None:
    copy = tmp_path / "bm25_copy.run"
    copy.write_text(Path(BM25).read_text())
    cmp = compare(QRELS, [BM25, str(copy)], "AP")
    assert cmp.systems == ("toy_bm25", "bm25_copy")
    assert isinstance(cmp, Comparison) and cmp.rows[0].p_value == 1.0


def test_monte_carlo_rows_depend_on_the_seed_not_on_what_else_is_compared() -> None:
    def row(runs: dict[str, Results], seed: int | None) -> tuple[float, float]:
        cmp = compare(None, runs, "AP", test="bootstrap", ci="bootstrap", correction="none", samples=500, seed=seed)
        r = cmp.row("A", "B", "AP")
        return r.p_value, r.ci_low

    two = row({"A": SPEC_RUNS["A"], "B": SPEC_RUNS["B"]}, 3)
    assert two == row(SPEC_RUNS, 3)
    assert row(SPEC_RUNS, 4)[1] != two[1]
    fresh = row(SPEC_RUNS, None)
    assert 0 < fresh[0] < 0.05
