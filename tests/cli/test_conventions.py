"""README "Conventions": every command spells the same thing the same way (trec-eval keeps trec_eval's
flags); old spellings keep working, hidden. Also ``eval --segments``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import COMMANDS, cli

EX = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _help(*command: str) -> str:
    code, out = invoke(*command, "--help")
    assert code == 0, out
    return out


SUBCOMMANDS = {"labels": ["from-events"], "ips": ["position-bias", "dcg", "consistency"]}
ALL = [[name, *([sub] if sub else [])] for name in COMMANDS if name != "trec-eval" for sub in SUBCOMMANDS.get(name, [None])]


@pytest.mark.parametrize("command", ALL, ids=" ".join)
def test_help_follows_the_conventions(command: list[str]) -> None:
    text = _help(*command)
    for line in text.splitlines():
        if re.match(r"\s+-q\b", line) or re.search(r",\s+-q\b", line):
            assert "--per-query" in line, line  # -q is trec_eval's per-query everywhere
        if re.match(r"\s+-c\b", line):
            assert "--missing zero" in line, line  # -c is trec_eval's -c
    assert "--json" not in text  # machine output is -f json
    if re.search(r"-f, --format", text):
        assert "table" in text[text.index("-f, --format") :].split("\n  -")[0]


def test_default_measures_are_the_same() -> None:
    for command in ("eval", "compare"):
        assert "nDCG@10 AP P@10 RR R@100" in " ".join(_help(command).split())


def test_c_is_missing_zero() -> None:
    _, plain = invoke("eval", QRELS, DENSE, "-m", "P@5", "-f", "json")
    _, with_c = invoke("eval", QRELS, DENSE, "-m", "P@5", "-f", "json", "-c")
    _, zero = invoke("eval", QRELS, DENSE, "-m", "P@5", "-f", "json", "--missing", "zero")
    doc = lambda out: json.loads(out[out.index("{") :])["runs"][0]  # noqa: E731
    assert doc(plain)["num_queries"] == 11
    assert doc(with_c)["num_queries"] == doc(zero)["num_queries"] == 12
    code, out = invoke("compare", QRELS, BM25, DENSE, "-m", "P@5", "-c", "-f", "json", "--quiet")
    assert code == 0, out
    assert json.loads(out)["rows"][0]["n"] == 12


def test_old_spellings_still_work(tmp_path: Path) -> None:
    code, out = invoke("compare", QRELS, BM25, DENSE, "-m", "P@5", "-c", "bonferroni", "-f", "json", "--quiet")
    assert code == 0, out
    assert json.loads(out)["options"]["correction"] == "bonferroni"
    code, out = invoke("explain", QRELS, DENSE, "-q", "q3", "-m", "nDCG@5")
    assert code == 0 and "nDCG@5" in out
    for fmt in ("text", "table"):
        code, out = invoke("gate", QRELS, DENSE, "--min", "P@5=0.1", "-f", fmt, "--missing", "skip")
        assert code == 0 and "\nPASS P@5" in out, out
    for flag in (["--json"], ["-f", "json"]):
        code, out = invoke("ips", "consistency", QRELS, BM25, DENSE, *flag)
        assert code == 0 and json.loads(out)["primary"] == "nDCG@10", out
    code, out = invoke("explain", QRELS, DENSE, "-m", "nDCG@5")
    assert code == 2 and "--query" in out


def test_rag_rarity_and_its_old_name(tmp_path: Path) -> None:
    q = tmp_path / "rag.qrels"
    q.write_text("q1 0 a 5\nq1 0 b 4\nq1 0 c 2\n")
    r = tmp_path / "r.run"
    r.write_text("q1 Q0 a 1 3 s\nq1 Q0 c 2 2 s\nq1 Q0 b 3 1 s\n")
    outs = [invoke("rag", str(q), str(r), "-k", "2", flag, "0", "-f", "json") for flag in ("--rarity", "--alpha")]
    assert outs[0] == outs[1] and outs[0][0] == 0, outs[0][1]


# --- eval --segments ---------------------------------------------------------------------------------------


@pytest.fixture
def segments(tmp_path: Path) -> str:
    path = tmp_path / "segments.tsv"
    path.write_text("".join(f"q{i}\t{'even' if i % 2 == 0 else 'odd'}\n" for i in range(1, 13)))
    return str(path)


def test_eval_segments_table(segments: str) -> None:
    code, out = invoke("eval", QRELS, BM25, "-m", "nDCG@10", "AP", "--segments", segments)
    assert code == 0, out
    assert "even (6)" in out and "odd (6)" in out and "all (12)" in out


def test_eval_segments_json_matches_the_python_api(segments: str) -> None:
    import ranklens
    from ranklens.data.segments import read_segments

    code, out = invoke("eval", QRELS, BM25, "-m", "nDCG@10", "-f", "json", "--segments", segments)
    assert code == 0, out
    seg = json.loads(out)["runs"][0]["segments"]
    assert set(seg) == {"even", "odd"} and seg["even"]["num_queries"] == 6
    res = ranklens.evaluate(QRELS, BM25, "nDCG@10")
    parts = res.by_segment(read_segments(segments))
    assert seg["odd"]["aggregate"]["nDCG@10"] == parts["odd"]["nDCG@10"]
    assert sum(p["nDCG@10"] * len(p.query_ids) for p in parts.values()) / 12 == pytest.approx(res["nDCG@10"])


def test_eval_segments_errors(segments: str, tmp_path: Path) -> None:
    code, out = invoke("eval", QRELS, BM25, "-f", "csv", "--segments", segments)
    assert code == 2 and "--segments is shown with -f table or -f json" in out
    other = tmp_path / "other.tsv"
    other.write_text("x1 nav\n")
    code, out = invoke("eval", QRELS, BM25, "--segments", str(other))
    assert code == 2 and "no evaluated query has a segment" in out


def test_eval_segments_with_per_query(segments: str) -> None:
    code, out = invoke("eval", QRELS, BM25, "-m", "AP", "--segments", segments, "--per-query")
    assert code == 0, out
    assert "q11" in out and "even (6)" in out
