"""Issue 22 item 9: JSON Lines keys are resolved by one rule on every line, whatever the line order.

Before, the fast path fixed the key names from line 1 and the fallback resolved them per line, so a stray
``qid`` key next to ``topic`` made the same records give RR 0.0 in one order and 1.0 in the other
(reliability review B3). Now a line with two keys for one role (two aliases of the query id, of the document
id or of the value; unless ``columns=`` names the one meant) is an error naming that line, on every path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data.io import read_qrels, read_run
from ranklens.errors import FormatError

QRELS = '{"qid":"q1","doc_id":"d1","relevance":1}\n'
STRAY = '{"topic":"q1","doc_id":"d1","score":1.0,"qid":"x"}\n'
PLAIN = '{"topic":"q1","doc_id":"d2","score":0.5}\n'
AMBIGUOUS = r"both name the query id"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("run_text", "line"), [(STRAY + PLAIN, 1), (PLAIN + STRAY, 2)], ids=["stray_first", "stray_second"])
def test_two_query_keys_on_a_line_are_an_error_naming_it_in_either_order(tmp_path: Path, run_text: str, line: int) -> None:
    q, r = _write(tmp_path, "q.jsonl", QRELS), _write(tmp_path, "r.jsonl", run_text)
    pattern = rf"r\.jsonl:{line}: keys 'topic' and 'qid' {AMBIGUOUS}"
    with pytest.raises(FormatError, match=pattern):
        read_run(r)
    with pytest.raises(FormatError, match=pattern):
        ranklens.evaluate(str(q), str(r), ["RR"])
    for extra in ([], ["--no-stream"]):
        result = CliRunner().invoke(cli, ["eval", str(q), str(r), "-m", "RR", "-f", "tsv", *extra])
        assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert re.search(pattern, result.stderr), result.stderr


@pytest.mark.parametrize("order", [0, 1])
def test_naming_the_key_with_columns_reads_every_line_the_same_way(tmp_path: Path, order: int) -> None:
    q = _write(tmp_path, "q.jsonl", QRELS)
    r = _write(tmp_path, "r.jsonl", STRAY + PLAIN if order == 0 else PLAIN + STRAY)
    run = read_run(r, columns={"topic": "query_id"})
    assert run.to_dict() == {"q1": {"d1": 1.0, "d2": 0.5}}
    result = CliRunner().invoke(cli, ["eval", str(q), str(r), "-m", "RR", "-f", "tsv", "--run-columns", "query_id=topic"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1].split("\t")[-1] == "1.0"  # d1 (score 1.0) is ranked first: RR 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"query_id": "q1", "QID": "q2", "doc_id": "d1", "relevance": 1}, "keys 'query_id' and 'QID' both name the query id"),
        ({"query_id": "q1", "docno": "d1", "doc_id": "d2", "relevance": 1}, "keys 'docno' and 'doc_id' both name the document id"),
        ({"query_id": "q1", "doc_id": "d1", "rel": 1, "label": 0}, "keys 'rel' and 'label' both name the relevance"),
    ],
)
def test_every_role_of_qrels_is_checked(tmp_path: Path, line: dict[str, object], message: str) -> None:
    text = json.dumps({"query_id": "q0", "doc_id": "d0", "relevance": 1}) + "\n" + json.dumps(line) + "\n"
    path = _write(tmp_path, "q.jsonl", text)
    with pytest.raises(FormatError, match=rf"q\.jsonl:2: {re.escape(message)}"):
        read_qrels(path)


def test_what_is_not_ambiguous_still_reads(tmp_path: Path) -> None:
    # qrels' "score" is the label only when no other label key is there (BEIR): next to "relevance" it is
    # another column, as in CSV and Parquet; and different lines may use different aliases
    both = _write(tmp_path, "q.jsonl", '{"qid":"q1","doc_id":"d1","relevance":1,"score":0.3}\n{"qid":"q1","doc_id":"d2","relevance":0,"score":0.9}\n')
    assert read_qrels(both).to_dict() == {"q1": {"d1": 1, "d2": 0}}
    mixed = _write(tmp_path, "r.jsonl", '{"topic":"q1","doc_id":"d1","score":1.0}\n{"qid":"q1","doc_id":"d2","score":0.5}\n')
    assert read_run(mixed).to_dict() == {"q1": {"d1": 1.0, "d2": 0.5}}
