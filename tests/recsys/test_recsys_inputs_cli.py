"""Recommender inputs (train=, items=), the protocol options and the command line (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data.interactions import drop_seen, read_catalog, read_interactions
from ranklens.errors import MeasureError

ROOT = Path(__file__).resolve().parents[2]
ML = ROOT / "examples" / "movielens"


def test_a_csv_with_a_user_item_header_reads(tmp_path: Path) -> None:
    p = tmp_path / "train.csv"
    p.write_text("user,item\nu1,a\nu1,b\nu2,a\nu2,a\n")
    t = read_interactions(p)
    assert (t.num_users, t.items.to_pylist(), t.item_users().tolist(), t.weight.tolist()) == (2, ["a", "b"], [2, 1], [1.0, 1.0, 2.0])
    assert any("no weight column" in n for n in t.notes) and any("merged" in n for n in t.notes)


def test_column_mapping_and_formats(tmp_path: Path) -> None:
    p = tmp_path / "log.tsv"
    p.write_text("member\tsku\tclicks\tts\nm1\ts1\t3\t10\nm2\ts1\t1\t11\n")
    t = read_interactions(p, columns={"member": "query_id", "sku": "doc_id", "clicks": "weight"})
    assert t.users.to_pylist() == ["m1", "m2"] and t.weight.tolist() == [3.0, 1.0]
    q = tmp_path / "train.qrels"
    q.write_text("u1 0 a 1\nu2 0 b 2\n")
    assert read_interactions(q).items.to_pylist() == ["a", "b"]
    c = read_catalog(ML / "items.csv")
    assert c.category is not None and c.features is None and len(c) == 400


def test_drop_seen_counts_rows() -> None:
    t = read_interactions({"u1": ["a"], "u2": ["b"]})
    run, n = drop_seen(ranklens.read_run({"u1": {"a": 2.0, "b": 1.0}, "u2": {"b": 1.0, "c": 0.5}}), t)
    assert n == 2 and run.to_dict() == {"u1": {"b": 1.0}, "u2": {"c": 0.5}}


def test_a_measure_without_its_input_says_what_to_give() -> None:
    with pytest.raises(MeasureError, match="--train FILE"):
        ranklens.Evaluator(["Novelty@10"], {"u": {"a": 1}})
    with pytest.raises(MeasureError, match="--train|--items"):
        ranklens.Evaluator(["Coverage@10"], {"u": {"a": 1}})
    ranklens.Evaluator(["EntropyCoverage@10", "Personalization@10", "F1@10", "AUC"], {"u": {"a": 1}})


def test_existing_outputs_are_unchanged_without_recsys_measures() -> None:
    res = ranklens.evaluate({"q1": {"a": 1}}, {"q1": {"a": 2.0, "b": 1.0}}, ["P@1", "RR"])
    assert res.system == () and "system" not in res.to_json_dict()
    assert ranklens.Evaluator(["P@1"], {"q": {"a": 1}}).options() == {
        "missing": "skip", "negative": "trec", "judged_only": False, "max_docs": None,
    }
    assert str(ranklens.measures.parse("f1")) == "SetF" and str(ranklens.measures.parse("F1@5")) == "F1@5"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_eval_the_movielens_example() -> None:
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"), "--exclude-seen",
        "-m", "nDCG@10", "Coverage@10", "Novelty@10", "ILD@10", "Gini@10", "-f", "json", "--per-query",
    )
    assert code == 0, out
    doc = json.loads(out[out.index("{"):])
    run = doc["runs"][0] if "runs" in doc else doc
    assert run["system"] == ["Coverage@10", "Gini@10"]
    assert all("Coverage@10" not in v for v in run["per_query"].values())
    assert any("exclude-seen: dropped" in n for n in run["notes"])
    assert 0 < run["aggregate"]["Coverage@10"] <= 1 and 0 < run["aggregate"]["Gini@10"] < 1


def test_eval_ci_empty_and_aggregate() -> None:
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"), "--items",
        str(ML / "items.csv"), "-m", "nDCG@10", "ILD@10", "Gini@10", "--ci", "--aggregate", "median",
        "--empty", "zero", "--quiet",
    )
    assert code == 0, out
    assert "ILD(agg=median)@10" in out and "bootstrap CI" in out and "no interval: Gini@10" in out


def test_compare_shows_system_measures_without_a_p_value(tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    lines = (ML / "recs.csv").read_text().splitlines()
    other.write_text("\n".join([lines[0]] + [",".join(l.split(",")[:2] + [str(i % 7)]) for i, l in enumerate(lines[1:])]) + "\n")
    code, out = _run(
        "compare", str(ML / "test.csv"), str(ML / "recs.csv"), str(other), "--train", str(ML / "train.csv"),
        "-m", "nDCG@10", "Coverage@10", "-f", "json",
    )
    assert code == 0, out
    doc = json.loads(out[out.index("{"):])
    rows = {r["measure"]: r for r in doc["rows"]}
    assert rows["Coverage@10"]["p_value"] is None and rows["nDCG@10"]["p_value"] is not None
    assert any("system-level" in n for n in doc["notes"])


def test_gate_checks_system_measures() -> None:
    code, out = _run(
        "gate", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"), "--exclude-seen",
        "--min", "Coverage@10=0.3", "--min", "Novelty@10=2",
    )
    assert code == 0, out
    assert "PASS Coverage@10" in out and "PASS Novelty@10" in out


def test_the_example_is_small_and_generated() -> None:
    assert sum(p.stat().st_size for p in ML.iterdir()) < 200_000
    assert (ROOT / "examples" / "make_movielens.py").exists()
