"""Real-valued relevance labels (``labels="float"``): reading, what each measure does with them, parity.

Oracles: scikit-learn's ``ndcg_score`` (tie-averaged, linear gain, ideal = the row) and brute-force loops
written here from the definitions in spec §2 and §7, never values copied from ranklens.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Evaluator, evaluate, read_qrels
from ranklens.cli.main import cli
from ranklens.data import Qrels
from ranklens.errors import FormatError, InputError, MeasureError

metrics = pytest.importorskip("sklearn.metrics")

# completion fractions, dwell fractions: real-valued labels in [0, 1] (and one above, one negative)
FLOAT_QRELS = {
    "q1": {"a": 0.93, "b": 0.2, "c": 0.0, "d": 0.5, "e": 1.0},
    "q2": {"x": 1.5, "y": 0.25, "z": -0.5},
}
FLOAT_RUN = {
    "q1": {"b": 5.0, "a": 4.0, "f": 3.0, "d": 2.0, "c": 1.0},
    "q2": {"z": 3.0, "y": 2.0, "x": 1.0},
}


# ------------------------------------------------------------------------------------ brute force


def ranking(run: dict[str, float]) -> list[str]:
    """Documents by score descending (the tests use distinct scores)."""
    return sorted(run, key=lambda d: -run[d])


def brute_dcg(qrels: dict[str, float], run: dict[str, float], k: int | None, gain=lambda x: x) -> float:
    docs = ranking(run)[:k]
    return sum(gain(qrels[d]) / math.log2(i + 2) for i, d in enumerate(docs) if qrels.get(d, -1) >= 0)


def brute_idcg(qrels: dict[str, float], k: int | None, gain=lambda x: x) -> float:
    ideal = sorted((gain(v) for v in qrels.values() if v >= 0 and gain(v) > 0), reverse=True)[:k]
    return sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def brute_ndcg(qrels: dict[str, float], run: dict[str, float], k: int | None, gain=lambda x: x) -> float:
    ideal = brute_idcg(qrels, k, gain)
    return brute_dcg(qrels, run, k, gain) / ideal if ideal > 0 else 0.0


def brute_binary(qrels: dict[str, float], run: dict[str, float], rel: float) -> dict[str, float]:
    """P@3, R, RR, AP with relevant = label ≥ rel (and judged, label ≥ 0)."""
    rels = [1.0 if qrels.get(d, -1) >= max(rel, 0) else 0.0 for d in ranking(run)]
    big_r = sum(1 for v in qrels.values() if v >= max(rel, 0))
    hits = np.cumsum(rels)
    ap = sum(hits[i] / (i + 1) for i, r in enumerate(rels) if r) / big_r if big_r else 0.0
    rr = next((1.0 / (i + 1) for i, r in enumerate(rels) if r), 0.0)
    return {"P@3": sum(rels[:3]) / 3, "R": (sum(rels) / big_r if big_r else 0.0), "RR": rr, "AP": ap}


# ---------------------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("q.txt", "q1 0 a 0.93\nq1 0 b 2\nq2 0 c 1e-1\n"),
        ("q.csv", "qid,docno,rel\nq1,a,0.93\nq1,b,2\nq2,c,1e-1\n"),
        ("q.tsv", "qid\tdocno\trel\nq1\ta\t0.93\nq1\tb\t2\nq2\tc\t1e-1\n"),
        ("q.json", '{"q1": {"a": 0.93, "b": 2}, "q2": {"c": 1e-1}}'),
        ("q.jsonl", '{"qid": "q1", "docno": "a", "rel": 0.93}\n{"qid": "q1", "docno": "b", "rel": 2}\n'
         '{"qid": "q2", "docno": "c", "rel": 0.1}\n'),
    ],
)
def test_float_labels_are_read_exactly_from_every_text_format(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    qrels = read_qrels(path, labels="float")
    assert qrels.label.dtype == np.float64
    assert qrels.to_dict() == {"q1": {"a": 0.93, "b": 2.0}, "q2": {"c": 0.1}}
    with pytest.raises(FormatError, match="integer"):
        read_qrels(path)  # the default stays integer (trec_eval parity)


def test_float_labels_from_parquet_frames_and_dicts(tmp_path: Path) -> None:
    path = tmp_path / "q.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docno": ["a", "b"], "rel": [0.93, 0.0]}), path)
    expected = {"q1": {"a": 0.93, "b": 0.0}}
    assert read_qrels(path, labels="float").to_dict() == expected
    assert read_qrels({"qid": ["q1", "q1"], "docno": ["a", "b"], "rel": [0.93, 0.0]}, labels="float").to_dict() == expected
    assert read_qrels(expected, labels="float").to_dict() == expected
    assert Qrels.from_dict(expected, labels="float").label.dtype == np.float64
    with pytest.raises(FormatError, match="integer"):
        read_qrels(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 a high\n", r"q\.txt:1: expected a number in column 4 \(rel\), got 'high'"),
        ("q1 0 a 1\nq1 0 b nan\n", r"q\.txt:2: relevance label must be a finite number, got nan"),
        ("q1 0 a inf\n", r"q\.txt:1: relevance label must be a finite number, got inf"),
    ],
)
def test_bad_float_labels_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(FormatError, match=message):
        read_qrels(path, labels="float")


def test_unknown_label_kind_is_refused() -> None:
    with pytest.raises(InputError, match="labels must be 'int' or 'float'; got 'real'"):
        read_qrels({"q1": {"a": 1}}, labels="real")
    with pytest.raises(InputError, match="labels must be 'int' or 'float'"):
        Evaluator("nDCG", {"q1": {"a": 1}}, labels="real")


def test_evaluator_converts_integer_qrels_but_not_the_reverse() -> None:
    ints = Qrels.from_dict({"q1": {"a": 2, "b": 0}})
    ev = Evaluator("nDCG", ints, labels="float")
    assert ev.qrels.label.dtype == np.float64
    floats = Qrels.from_dict({"q1": {"a": 0.5}}, labels="float")
    assert Evaluator("nDCG", floats).labels == "float"  # a float Qrels keeps its kind
    with pytest.raises(InputError, match="real-valued labels"):
        Evaluator("nDCG", floats, labels="int")


# -------------------------------------------------------------------------------- graded measures


@pytest.mark.parametrize("k", [None, 1, 2, 3, 10])
def test_graded_gain_measures_use_the_float_labels(k: int | None) -> None:
    at = "" if k is None else f"@{k}"
    res = evaluate(FLOAT_QRELS, FLOAT_RUN, [f"nDCG{at}", f"DCG{at}", f"IDCG{at}", f"nDCG(gain=exp){at}"], labels="float")
    exp = lambda x: 2.0**x - 1.0  # noqa: E731
    for q in FLOAT_QRELS:
        qr, rn = FLOAT_QRELS[q], FLOAT_RUN[q]
        assert res.per_query(f"DCG{at}")[q] == pytest.approx(brute_dcg(qr, rn, k), abs=1e-12)
        assert res.per_query(f"IDCG{at}")[q] == pytest.approx(brute_idcg(qr, k), abs=1e-12)
        assert res.per_query(f"nDCG{at}")[q] == pytest.approx(brute_ndcg(qr, rn, k), abs=1e-12)
        assert res.per_query(f"nDCG(gain=exp){at}")[q] == pytest.approx(brute_ndcg(qr, rn, k, exp), abs=1e-12)


def test_local_ideal_and_ties_with_float_labels() -> None:
    qrels = {"q": {"a": 0.3, "b": 0.9, "c": 0.6}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 1.0, "u": 0.5}}  # b and c tied
    res = evaluate(qrels, run, ["nDCG(ideal=local)@2", "DCG(ties=average)@2"], labels="float")
    # local ideal over the retrieved top 2 (a, then c before b by doc id descending): {0.3, 0.6}
    dcg = 0.3 + 0.6 / math.log2(3)
    assert res["nDCG(ideal=local)@2"] == pytest.approx(dcg / (0.6 + 0.3 / math.log2(3)), abs=1e-12)
    # tie-averaged: rank 2 holds b or c with equal probability
    assert res["DCG(ties=average)@2"] == pytest.approx(0.3 + 0.75 / math.log2(3), abs=1e-12)


def test_err_and_graded_rbp_with_float_labels() -> None:
    qrels = {"q": {"a": 0.93, "b": 0.2, "c": 0.5}}
    run = {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    res = evaluate(qrels, run, ["ERR(max_rel=1)", "ERR", "MZRBP(max_rel=1,p=0.5)"], labels="float")

    def err(top: float) -> float:
        total, reach = 0.0, 1.0
        for i, d in enumerate(ranking(run["q"])):
            stop = (2.0 ** qrels["q"][d] - 1.0) / 2.0**top
            total += reach * stop / (i + 1)
            reach *= 1.0 - stop
        return total

    assert res["ERR(max_rel=1)"] == pytest.approx(err(1.0), abs=1e-12)
    assert res["ERR"] == pytest.approx(err(0.93), abs=1e-12)  # max_rel=0: the largest label in the qrels
    rbp = 0.5 * sum(min(qrels["q"][d], 1.0) * 0.5**i for i, d in enumerate(ranking(run["q"])))
    assert res["MZRBP(max_rel=1,p=0.5)"] == pytest.approx(rbp, abs=1e-12)


def test_rag_grades_take_the_highest_integer_grade_a_label_reaches() -> None:
    grades = [5, 4.7, 4, 3.2, 3, 2.9, 1, 0.5]
    floors = [math.floor(g) for g in grades]
    run = {"q": {f"p{i}": 10.0 - i for i in (0, 1, 3, 5, 7)}}
    as_float = evaluate({"q": {f"p{i}": float(g) for i, g in enumerate(grades)}}, run, ["RAnWG@5", "Harm@5"], labels="float")
    as_int = evaluate({"q": {f"p{i}": g for i, g in enumerate(floors)}}, run, ["RAnWG@5", "Harm@5"])
    assert as_float.aggregates == pytest.approx(as_int.aggregates, abs=1e-15)


def test_integer_labels_read_as_floats_give_the_same_values() -> None:
    qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}, "q7": {"a": 2, "b": -1, "c": 1, "d": 0}}
    run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}, "q7": {"b": 4.0, "a": 3.0, "e": 2.0, "c": 1.0}}
    names = ["nDCG@3", "nDCG", "DCG(gain=exp)", "nDCG(ideal=local)@2", "ERR", "AP", "P@3", "RR", "R", "Bpref",
             "infAP", "Judged@3", "MZRBP", "NumRel", "nDCG(norm=minmax)", "MZRBPResidual"]
    ints = evaluate(qrels, run, names)
    floats = evaluate(qrels, run, names, labels="float", rel_level=1)
    assert floats.values == pytest.approx(ints.values, abs=1e-15)
    assert floats.options["labels"] == "float" and "labels" not in ints.options


def test_negative_float_labels_follow_the_negative_policy() -> None:
    qrels = {"q": {"a": 0.5, "b": -0.5}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    trec = evaluate(qrels, run, ["DCG", "Judged@2", "NumRel(rel=0)"], labels="float")
    assert trec.aggregates == pytest.approx([0.5 / math.log2(3), 0.5, 1.0])  # b: pooled but unjudged
    zero = evaluate(qrels, run, ["DCG", "Judged@2", "NumRel(rel=0)"], labels="float", negative="zero")
    assert zero.aggregates == pytest.approx([0.5 / math.log2(3), 1.0, 2.0])  # b: a judged 0
    with pytest.raises(InputError, match="negative relevance label -0.5"):
        evaluate(qrels, run, "DCG", labels="float", negative="error")


# -------------------------------------------------------------------------------- binary measures


def test_binary_measures_on_float_labels_need_an_explicit_threshold() -> None:
    with pytest.raises(MeasureError, match=r"P@3 reads binary relevance .* P\(rel=0\.5\)@3 .* rel_level="):
        Evaluator(["nDCG@3", "P@3"], FLOAT_QRELS, labels="float")
    for name in ["AP", "RR", "R@10", "Success@3", "Bpref", "infAP", "NumRel", "Rprec", "MZRBP", "SetP"]:
        with pytest.raises(MeasureError, match="binary relevance"):
            Evaluator([name], FLOAT_QRELS, labels="float")
    # graded measures, RBP with a grade scale and label-free counts need none
    Evaluator(["nDCG@3", "DCG", "ERR", "MZRBP(max_rel=1)", "Judged@3", "NumRet", "MZRBPResidual", "RAnWG@3"],
              FLOAT_QRELS, labels="float")


@pytest.mark.parametrize("rel", [0.2, 0.5, 0.93, 1, 1.5, 2])
def test_binary_measures_threshold_float_labels_at_rel(rel: float) -> None:
    names = ["P@3", "R", "RR", "AP"]
    by_level = evaluate(FLOAT_QRELS, FLOAT_RUN, names, labels="float", rel_level=rel)
    written = [n.replace("@", f"(rel={rel})@") if "@" in n else f"{n}(rel={rel})" for n in names]
    if rel == 1:  # P(rel=1)@3 is P@3: the integer default cannot be told from no threshold at all
        with pytest.raises(MeasureError, match="to mean rel=1, pass rel_level=1"):
            evaluate(FLOAT_QRELS, FLOAT_RUN, written, labels="float")
    else:
        assert evaluate(FLOAT_QRELS, FLOAT_RUN, written, labels="float").values == pytest.approx(by_level.values, abs=0)
    for i, q in enumerate(by_level.query_ids):
        expected = brute_binary(FLOAT_QRELS[q], FLOAT_RUN[q], rel)
        assert by_level.values[i].tolist() == pytest.approx([expected[n] for n in names], abs=1e-12), (q, rel)


def test_fractional_rel_parses_and_round_trips() -> None:
    m = ranklens.parse("P(rel=0.5)@10")
    assert str(m) == "P(rel=0.5)@10" and ranklens.parse(str(m)) == m
    assert ranklens.parse("P(rel=2.0)@10") == ranklens.parse("P(rel=2)@10")
    assert str(ranklens.parse("AP(rel=2)")) == "AP(rel=2)"
    with pytest.raises(MeasureError, match="parameter 'rel' must be an integer; got 'x'"):
        ranklens.parse("P(rel=x)@5")


def test_trec_rbp_is_integer_only() -> None:
    with pytest.raises(MeasureError, match="TrecRBP .* integer labels"):
        Evaluator(["TrecRBP"], FLOAT_QRELS, labels="float")


# ---------------------------------------------------------------------------- parity with sklearn


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [None, 1, 3, 5, 20])
def test_float_ndcg_matches_sklearn(seed: int, k: int | None) -> None:
    rng = np.random.default_rng(seed)
    y_true = rng.random((20, 8)) * rng.choice([1.0, 3.0], size=(20, 1))
    y_true[rng.random((20, 8)) < 0.3] = 0.0
    y_score = np.round(rng.random((20, 8)) * 4) / 4  # many ties
    qrels = {f"q{i:02d}": {f"d{j}": float(v) for j, v in enumerate(row)} for i, row in enumerate(y_true)}
    run = {f"q{i:02d}": {f"d{j}": float(v) for j, v in enumerate(row)} for i, row in enumerate(y_score)}
    name = "nDCG(ties=average)" + ("" if k is None else f"@{k}")
    got = evaluate(qrels, run, name, labels="float").column(name)
    expected = [metrics.ndcg_score([t], [s], k=k) for t, s in zip(y_true, y_score)]
    assert got == pytest.approx(expected, abs=1e-12)


_label = st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=100.0))
_score = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(min_value=-1e3, max_value=1e3))


@st.composite
def matrices(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(2, 9))
    y_true = np.array([[draw(_label) for _ in range(cols)] for _ in range(rows)])
    y_score = np.array([[draw(_score) for _ in range(cols)] for _ in range(rows)])
    return y_true, y_score


@settings(max_examples=150, deadline=None)
@given(data=matrices(), k=st.one_of(st.none(), st.integers(1, 10)))
def test_property_float_ndcg_equals_sklearn_per_row(data: tuple[np.ndarray, np.ndarray], k: int | None) -> None:
    y_true, y_score = data
    name = "nDCG(ties=average)" + ("" if k is None else f"@{k}")
    got = ranklens.evaluate_arrays(y_true, y_score, [name], labels="float").column(name)
    expected = [metrics.ndcg_score([t], [s], k=k) for t, s in zip(y_true, y_score)]
    assert got == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------- CLI


def _files(tmp_path: Path) -> tuple[str, str]:
    q = tmp_path / "q.txt"
    q.write_text("".join(f"{qid} 0 {d} {v}\n" for qid, docs in FLOAT_QRELS.items() for d, v in docs.items()))
    r = tmp_path / "r.trec"
    r.write_text("".join(f"{qid} Q0 {d} 1 {s} run\n" for qid, docs in FLOAT_RUN.items() for d, s in docs.items()))
    return str(q), str(r)


def test_cli_eval_reads_float_labels_on_request(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "--labels", "float", "-m", "nDCG@3", "P(rel=0.5)@3", "-f", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    runs = data if isinstance(data, list) else data.get("runs", [data])
    agg = runs[0]["aggregate"]
    expected_ndcg = np.mean([brute_ndcg(FLOAT_QRELS[q_], FLOAT_RUN[q_], 3) for q_ in FLOAT_QRELS])
    assert agg["nDCG@3"] == pytest.approx(expected_ndcg, abs=1e-12)
    expected_p = np.mean([brute_binary(FLOAT_QRELS[q_], FLOAT_RUN[q_], 0.5)["P@3"] for q_ in FLOAT_QRELS])
    assert agg["P(rel=0.5)@3"] == pytest.approx(expected_p, abs=1e-12)


def test_cli_rel_level_takes_a_real_threshold(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "--labels", "float", "--rel-level", "0.5", "-m", "P@3", "-f", "tsv"])
    assert out.exit_code == 0, out.output
    expected_p = np.mean([brute_binary(FLOAT_QRELS[q_], FLOAT_RUN[q_], 0.5)["P@3"] for q_ in FLOAT_QRELS])
    assert float(out.stdout.split("\t")[-1]) == pytest.approx(expected_p, abs=1e-12)


def test_cli_without_labels_float_says_how_to_read_real_labels(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "-m", "nDCG@3"])
    assert out.exit_code == 2
    assert "expected an integer relevance label" in out.output and "--labels float" in out.output
    assert "Traceback" not in out.output


def test_cli_binary_measure_without_threshold_is_a_usage_error(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "--labels", "float", "-m", "AP"])
    assert out.exit_code == 2
    assert "AP reads binary relevance" in out.output and "--rel-level" in out.output


@pytest.mark.parametrize("command", ["compare", "gate", "explain"])
def test_every_evaluating_command_takes_labels(command: str) -> None:
    out = CliRunner().invoke(cli, [command, "--help"])
    assert out.exit_code == 0 and "--labels" in out.output


def test_cli_compare_with_float_labels(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    r2 = tmp_path / "r2.trec"
    r2.write_text("".join(f"{qid} Q0 {d} 1 {-s} other\n" for qid, docs in FLOAT_RUN.items() for d, s in docs.items()))
    out = CliRunner().invoke(cli, ["compare", q, r, str(r2), "--labels", "float", "-m", "nDCG@3"])
    assert out.exit_code == 0, out.output


def test_trec_eval_stays_integer_only(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["trec-eval", q, r])
    assert out.exit_code != 0
    assert "--labels" not in out.output


def test_cli_streamed_and_whole_runs_agree_with_rel_level_one(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    values = []
    for stream in ("--stream", "--no-stream"):
        out = CliRunner().invoke(cli, ["eval", q, r, "--labels", "float", "-l", "1", "-m", "P@3", "AP", "-f", "tsv", stream])
        assert out.exit_code == 0, out.output
        values.append([float(line.split("\t")[2]) for line in out.stdout.splitlines()])
    expected = [np.mean([brute_binary(FLOAT_QRELS[q_], FLOAT_RUN[q_], 1.0)[n] for q_ in FLOAT_QRELS]) for n in ("P@3", "AP")]
    assert values[0] == values[1] == pytest.approx(expected, abs=1e-12)


def test_cli_explain_shows_float_labels(tmp_path: Path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["explain", q, r, "--labels", "float", "--query", "q1", "-m", "nDCG@3"])
    assert out.exit_code == 0, out.output
    assert "0.93" in out.stdout and f"{brute_ndcg(FLOAT_QRELS['q1'], FLOAT_RUN['q1'], 3):.6f}" in out.stdout


@pytest.mark.parametrize("ext", ["txt", "json", "jsonl", "csv", "tsv", "parquet"])
def test_float_qrels_round_trip_through_every_writer(tmp_path: Path, ext: str) -> None:
    from ranklens.data import write_qrels

    qrels = read_qrels({"q1": {"a": 0.93, "b": 1.0, "c": 1e-20}, "q2": {"x": 0.1 + 0.2}}, labels="float")
    write_qrels(qrels, tmp_path / f"q.{ext}")
    assert read_qrels(tmp_path / f"q.{ext}", labels="float").to_dict() == qrels.to_dict()


def test_compare_takes_labels_like_evaluate() -> None:
    other = {q: {d: -s for d, s in docs.items()} for q, docs in FLOAT_RUN.items()}
    comparison = ranklens.compare(FLOAT_QRELS, {"a": FLOAT_RUN, "b": other}, ["nDCG@3"], labels="float")
    assert comparison.rows
    with pytest.raises(MeasureError, match="binary relevance"):
        ranklens.compare(FLOAT_QRELS, {"a": FLOAT_RUN, "b": other}, ["AP"], labels="float")


# ------------------------------------------------------------------ golden: real-valued labels (issue 10)

GOLDEN_FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"


def test_golden_watch_completion_matches_sklearn() -> None:
    """tests/data/formats/watch_completion.csv: watch completion 0–1 per (user, item) as relevance, and a
    recommender's predictions; every judged item is ranked, scores distinct. The oracle is scikit-learn's
    ndcg_score per user on the file parsed here with the csv module (nothing read by ranklens)."""
    import csv

    from click.testing import CliRunner
    from sklearn.metrics import ndcg_score

    from ranklens.cli.main import cli

    qrels_path, run_path = GOLDEN_FORMATS / "watch_completion.csv", GOLDEN_FORMATS / "watch_predictions.csv"
    truth: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(qrels_path.read_text().splitlines()):
        truth.setdefault(row["user_id"], {})[row["item_id"]] = float(row["completion"])
    scores: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(run_path.read_text().splitlines()):
        scores.setdefault(row["user_id"], {})[row["item_id"]] = float(row["prediction"])
    expected = {}
    for user, items in truth.items():
        order = sorted(items)
        expected[user] = ndcg_score([[items[i] for i in order]], [[scores[user][i] for i in order]], k=3)
    result = CliRunner().invoke(
        cli,
        ["eval", str(qrels_path), str(run_path), "-m", "nDCG@3", "--labels", "float",
         "--qrels-columns", "label=completion", "--per-query", "-f", "tsv"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    got = {q: float(v) for _, q, v in (line.split("\t") for line in result.stdout.splitlines()) if q != "all"}
    assert got.keys() == expected.keys()
    for user in expected:
        assert got[user] == pytest.approx(expected[user], abs=1e-12), user
