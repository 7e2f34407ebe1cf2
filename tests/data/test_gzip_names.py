"""Issue 22 item 19: one gzip rule on every path (docs/inputs.md §1 and §5).

Bytes that start with gzip's magic are gunzipped whatever the file's name; a name that ends in ``.gz`` on
bytes that are not gzip is refused with one line naming the file. Before, a plain run named ``.gz`` was
read by ``eval`` and ``compare`` (streamed) but refused by ``--no-stream``, ``trec-eval`` and
``evaluate()``; and ``rag`` did not recognise gzipped samples without the suffix.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data.io import read_qrels, read_run
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.stream import evaluate_stream
from ranklens.errors import FormatError

ROOT = Path(__file__).resolve().parents[2]
TOY_QRELS = ROOT / "examples" / "toy.qrels"
TOY_RUN = ROOT / "examples" / "toy_bm25.run"
TOY_RUN2 = ROOT / "examples" / "toy_dense.run"
REFUSED = "expected gzip-compressed data"


def _refused(result: object, path: Path) -> None:
    code, out, err = result.exit_code, result.stdout, result.stderr  # type: ignore[attr-defined]
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert re.search(rf"{re.escape(str(path))}: .*{REFUSED}", err), err


@pytest.mark.parametrize("role", ["run", "qrels"])
def test_plain_bytes_named_gz_are_refused_on_every_path(tmp_path: Path, role: str) -> None:
    plain = tmp_path / f"plain.{role}.gz"
    shutil.copy(TOY_RUN if role == "run" else TOY_QRELS, plain)
    q, r = (TOY_QRELS, plain) if role == "run" else (plain, TOY_RUN)
    runner = CliRunner()
    for args in (
        ["eval", str(q), str(r), "-m", "nDCG@10"],
        ["eval", str(q), str(r), "-m", "nDCG@10", "--no-stream"],
        ["compare", str(q), str(r), str(TOY_RUN2)],
        ["trec-eval", "-m", "ndcg_cut.10", str(q), str(r)],
    ):
        _refused(runner.invoke(cli, args), plain)
    with pytest.raises(FormatError, match=REFUSED):
        ranklens.evaluate(str(q), str(r), ["nDCG@10"])
    with pytest.raises(FormatError, match=REFUSED):
        (read_run if role == "run" else read_qrels)(plain)
    if role == "run":
        with pytest.raises(FormatError, match=REFUSED):
            evaluate_stream(Evaluator(["nDCG@10"], read_qrels(TOY_QRELS)), str(plain), block_bytes=100)


def test_gzip_bytes_without_the_suffix_are_read_on_every_path(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_bytes(gzip.compress(TOY_QRELS.read_bytes()))
    run.write_bytes(gzip.compress(TOY_RUN.read_bytes()))
    expected = ranklens.evaluate(str(TOY_QRELS), str(TOY_RUN), ["nDCG@10"]).aggregates
    assert ranklens.evaluate(str(qrels), str(run), ["nDCG@10"]).aggregates == expected
    runner = CliRunner()
    outputs = set()
    for args in (
        ["eval", str(qrels), str(run), "-m", "nDCG@10", "-f", "tsv"],
        ["eval", str(qrels), str(run), "-m", "nDCG@10", "-f", "tsv", "--no-stream"],
        ["eval", str(TOY_QRELS), str(TOY_RUN), "-m", "nDCG@10", "-f", "tsv"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1
    result = runner.invoke(cli, ["trec-eval", "-m", "ndcg_cut.10", str(qrels), str(run)])
    reference = runner.invoke(cli, ["trec-eval", "-m", "ndcg_cut.10", str(TOY_QRELS), str(TOY_RUN)])
    assert result.exit_code == 0 and result.stdout == reference.stdout


def test_rag_reads_gzipped_samples_whatever_the_name(tmp_path: Path) -> None:
    rows = [
        {"query": "a", "retrieved": ["d1", "d2", "d3"], "reference": ["d2"]},
        {"query": "b", "retrieved": ["d4", "d5"], "reference": ["d4", "d9"]},
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows).encode()
    plain, zipped = tmp_path / "plain.jsonl", tmp_path / "samples.jsonl"
    plain.write_bytes(text)
    zipped.write_bytes(gzip.compress(text))
    runner = CliRunner()
    expected = runner.invoke(cli, ["rag", str(plain), "-m", "P@2", "RR", "-f", "tsv"])
    assert expected.exit_code == 0, expected.stderr
    got = runner.invoke(cli, ["rag", str(zipped), "-m", "P@2", "RR", "-f", "tsv"])
    assert got.exit_code == 0, got.stderr
    assert got.stdout == expected.stdout.replace(str(plain), str(zipped)).replace("plain", "samples")
    misnamed = tmp_path / "samples.jsonl.gz"
    misnamed.write_bytes(text)
    _refused(runner.invoke(cli, ["rag", str(misnamed), "-m", "P@2"]), misnamed)
