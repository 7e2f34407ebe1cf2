"""`--intents FILE` on eval, compare, gate, explain and ab (and ``intents=`` of the Evaluator): the intent-aware
measures through every face, with values equal to ndeval's (pyndeval) on a seeded generated collection, and
every bad input one line with exit status 2."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import MeasureError

pyndeval = pytest.importorskip("pyndeval")

MEASURES = ["alpha-nDCG@10", "alpha-DCG@5", "ERR-IA@10", "nERR-IA@10", "NRBP", "nNRBP", "P-IA@5", "AP-IA", "StRecall@10"]
NDEVAL = ["alpha-nDCG@10", "alpha-DCG@5", "ERR-IA@10", "nERR-IA@10", "NRBP", "nNRBP", "P-IA@5", "MAP-IA", "strec@10"]


def _files(tmp: Path, seed: int = 28) -> tuple[Path, Path, Path, Path, dict[str, dict[str, dict[str, float]]], list]:
    rng = random.Random(seed)
    intents, doc_qrels, runs = [], {}, {"a": {}, "b": {}}  # type: ignore[var-annotated]
    for q in range(12):
        qid = f"{100 + q}"
        docs = [f"d{i:02d}" for i in range(30)]
        for i in range(rng.randint(1, 4)):
            for d in rng.sample(docs[:20], rng.randint(2, 8)):
                r = rng.choice((0, 1, 1))
                intents.append((qid, str(i), d, r))
                doc_qrels[(qid, d)] = max(doc_qrels.get((qid, d), 0), r)
        for name in runs:
            retrieved = rng.sample(docs, 15)
            runs[name][qid] = {d: float(s) for d, s in zip(retrieved, rng.sample(range(1, 1000), 15))}
    (tmp / "div.qrels").write_text("".join(f"{q} {i} {d} {r}\n" for q, i, d, r in intents))
    (tmp / "doc.qrels").write_text("".join(f"{q} 0 {d} {r}\n" for (q, d), r in doc_qrels.items()))
    for name, run in runs.items():
        (tmp / f"{name}.run").write_text(
            "".join(f"{q} Q0 {d} {k} {s} {name}\n" for q in run for k, (d, s) in enumerate(sorted(run[q].items(), key=lambda x: -x[1]), 1))
        )
    return tmp / "div.qrels", tmp / "doc.qrels", tmp / "a.run", tmp / "b.run", runs, intents


def _ndeval(intents: list, run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    ev = pyndeval.RelevanceEvaluator([pyndeval.SubtopicQrel(*t) for t in intents], NDEVAL)
    return ev.evaluate([(q, d, s) for q in run for d, s in run[q].items()])  # type: ignore[no-any-return]


def invoke(*args: object) -> tuple[int, str, str]:
    out = CliRunner().invoke(cli, [str(a) for a in args])
    return out.exit_code, out.stdout, out.stderr


def test_eval_with_intents_equals_ndeval(tmp_path: Path) -> None:
    div, doc, a, _, runs, intents = _files(tmp_path)
    code, out, err = invoke("eval", doc, a, "--intents", div, "-m", *MEASURES, "-f", "json", "--per-query")
    assert code == 0, err
    per_query = json.loads(out)["runs"][0]["per_query"]
    theirs = _ndeval(intents, runs["a"])
    assert set(per_query) == set(theirs)
    for q, values in theirs.items():
        for ours, name in zip(MEASURES, NDEVAL):
            expected = 0.0 if math.isnan(values[name]) else values[name]
            assert math.isclose(per_query[q][ours], expected, rel_tol=1e-9, abs_tol=1e-12), (ours, q)


def test_the_evaluator_takes_intents_in_python(tmp_path: Path) -> None:
    div, doc, a, _, runs, intents = _files(tmp_path)
    res = ranklens.Evaluator(["ERR-IA@10", "nDCG@10"], str(doc), intents=str(div))(str(a))
    theirs = _ndeval(intents, runs["a"])
    for q, v in res.per_query("ERR-IA@10").items():
        assert math.isclose(v, theirs[q]["ERR-IA@10"], rel_tol=1e-9), q
    with pytest.raises(MeasureError, match="needs intent-level qrels"):
        ranklens.Evaluator(["ERR-IA@10"], str(doc))


def test_compare_gate_explain_and_ab_read_intents(tmp_path: Path) -> None:
    div, doc, a, b, runs, intents = _files(tmp_path)
    mean_a = sum(v["alpha-nDCG@10"] for v in _ndeval(intents, runs["a"]).values()) / 12
    mean_b = sum(v["alpha-nDCG@10"] for v in _ndeval(intents, runs["b"]).values()) / 12

    code, out, err = invoke("compare", doc, a, b, "--intents", div, "-m", "alpha-nDCG@10", "-f", "json", "--quiet")
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert math.isclose(row["mean_baseline"], mean_a, rel_tol=1e-9) and math.isclose(row["mean_system"], mean_b, rel_tol=1e-9)

    code, out, err = invoke("gate", doc, a, "--intents", div, "--min", f"alpha-nDCG@10={mean_a - 1e-6}")
    assert code == 0, out + err
    code, out, err = invoke("gate", doc, a, "--intents", div, "--min", f"alpha-nDCG@10={mean_a + 1e-6}")
    assert code == 1, out + err

    q = sorted(runs["a"])[3]
    code, out, err = invoke("explain", doc, a, "--intents", div, "-m", "nERR-IA@10", "-q", q)
    assert code == 0, err
    expected = _ndeval(intents, runs["a"])[q]["nERR-IA@10"]
    assert f"nERR-IA@10 = {expected:.6f}" in out and "intents of the query (S)" in out

    code, out, err = invoke("ab", doc, a, doc, b, "--intents", div, "-m", "alpha-nDCG@10", "--allow-overlap", "keep")
    assert code == 0, err
    assert f"{mean_a:.4f}" in out and f"{mean_b:.4f}" in out


def test_bad_intents_are_one_line(tmp_path: Path) -> None:
    div, doc, a, _, _, _ = _files(tmp_path)
    for args, message in (
        (("--intents", tmp_path / "none.txt"), "no such file"),
        (("--intents", a), "expected 4 columns (qid intent docid rel), got 6"),
        ((), "needs intent-level qrels"),
    ):
        code, out, err = invoke("eval", doc, a, *args, "-m", "alpha-nDCG@10")
        assert code == 2 and message in err and "Traceback" not in err + out, (args, err)
        assert len(err.strip().splitlines()) == 1, err


def test_spark_refuses_intents_before_any_job() -> None:
    pytest.importorskip("pyspark")
    from ranklens.engine.policy import EvalPolicy
    from ranklens.errors import InputError
    from ranklens.spark.core import evaluate

    intents = {"q": {"0": {"a": 1}}}
    with pytest.raises(InputError, match="computed in memory"):  # (no DataFrame is touched: None stands for them)
        evaluate(None, None, ["alpha-nDCG@10"], policy=EvalPolicy(intents=intents))


def test_results_record_the_intents(tmp_path: Path) -> None:
    div, doc, a, _, _, _ = _files(tmp_path)
    code, out, err = invoke("eval", doc, a, "--intents", div, "-m", "NRBP", "-f", "json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["options"]["intents"] == str(div)
    res = ranklens.Evaluator(["NRBP"], str(doc), intents={"100": {"0": {"d01": 1}}})(str(a), warn=False)
    assert res.options["intents"] == "<dict>"
