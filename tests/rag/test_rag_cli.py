"""``ranklens rag`` on RAG sample files through CliRunner: measures, context section, conversion, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ranklens.cli.main import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "rag"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_rag_file_with_measures_prints_them_and_the_context_section() -> None:
    code, out, err = run("rag", str(DATA / "ragas.jsonl"), "-m", "P@5", "RR", "nDCG@10", "-f", "tsv")
    assert code == 0, err
    rows = {tuple(line.split("\t")[:2]): float(line.split("\t")[2]) for line in out.splitlines()}
    assert rows[("RR", "all")] == 0.5
    assert abs(rows[("ContextPrecision", "all")] - 4 / 9) < 1e-12
    assert abs(rows[("ContextRecall", "all")] - 2 / 3) < 1e-12
    assert "ragas.jsonl: 5 retrieved chunks match no reference" in err


def test_several_files_are_columns_and_no_context_drops_the_section() -> None:
    code, out, _ = run("rag", str(DATA / "llamaindex.jsonl"), str(DATA / "samples.jsonl"), "-m", "P@2", "--no-context", "-f", "json")
    assert code == 0
    doc = json.loads(out)
    assert [r["run"] for r in doc["runs"]] == ["llamaindex", "samples"]
    assert doc["runs"][0]["measures"] == ["P@2"]


def test_conversion_writes_trec_files_that_gate_and_compare_read(tmp_path: Path) -> None:
    qrels, a, b = tmp_path / "rag.qrels", tmp_path / "a.run", tmp_path / "b.run"
    code, _, err = run("rag", str(DATA / "ragas_ids.json"), "--qrels-out", str(qrels), "--run-out", str(a))
    assert code == 0, err
    assert qrels.read_text().splitlines()[0] == "q1 0 P1 1"
    assert a.read_text().splitlines()[:2] == ["q1 Q0 L 1 3 ragas_ids", "q1 Q0 P1 2 2 ragas_ids"]
    assert run("rag", str(DATA / "llamaindex.jsonl"), "--run-out", str(b))[0] == 0
    code, out, _ = run("gate", str(qrels), str(a), "--min", "RR=0.5")
    assert code == 0, out
    code, out, _ = run("compare", str(qrels), str(a), str(b), "-m", "RR", "-f", "json")
    assert code == 0


def test_old_inputs_still_work() -> None:
    code, out, _ = run("rag", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_dense.run"), "-k", "5", "-f", "tsv")
    assert code == 0
    assert out.splitlines()[0].startswith("RAnWG@5\tall\t")


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x", "retrieved": ["a"], "reference": ["a"]}\n{"query": "y", "retrieved": 3, "reference": []}\n')
    code, _, err = run("rag", str(bad))
    assert code == 2
    assert err.strip().splitlines() == [f"ranklens: error: {bad}:2: 'retrieved': expected a list; found a number"]
    code, _, err = run("rag", str(DATA / "ragas.jsonl"), "--pool", str(bad))
    assert code == 2 and "--pool applies to QRELS RUN" in err and "Traceback" not in err
    code, _, err = run("rag", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_dense.run"), "-m", "P@5")
    assert code == 2 and "-m applies to RAG sample files" in err
    code, _, err = run("rag", str(EXAMPLES / "toy.qrels"))
    assert code == 2 and "expected QRELS RUN... or a RAG sample file" in err
    code, _, err = run("rag", str(DATA / "ragas.jsonl"), str(DATA / "llamaindex.jsonl"), "--run-out", str(tmp_path / "x.run"))
    assert code == 2 and "one RAG sample file" in err
