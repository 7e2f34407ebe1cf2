"""Smoke test of the benchmark harness (bench/): tiny data, one repetition, no timing assertions.

Checks that the generator writes well-formed TREC files, that the harness runs every phase in fresh
processes, that the tools agree, and that the report is produced. Peers that are not installed are
skipped by the harness itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import agree, generate, run

#: ranklens and the peers of the test extra; ranx and ir_measures (bench extra) are left out to keep this
#: fast (importing ranx alone takes seconds). trec_eval runs if its binary is found, else it is skipped.
TOOLS = "ranklens,pytrec_eval,trec_eval"


def test_generator_writes_trec_lines_deterministically(tmp_path: Path) -> None:
    shape = generate.parse_shape("20x10")
    generate.ensure(shape, 2, tmp_path / "a", log=False)
    generate.ensure(shape, 2, tmp_path / "b", log=False)
    run_a = generate.run_path(shape, 1, tmp_path / "a").read_bytes()
    assert run_a == generate.run_path(shape, 1, tmp_path / "b").read_bytes()
    assert run_a != generate.run_path(shape, 2, tmp_path / "a").read_bytes()

    lines = run_a.decode().splitlines()
    assert len(lines) == 20 * 10
    by_query: dict[str, list[float]] = {}
    for line in lines:
        qid, q0, doc, rank, score, tag = line.split(" ")
        assert (q0, tag) == ("Q0", "bench01") and doc.startswith("d") and rank.isdigit()
        by_query.setdefault(qid, []).append(float(score))
    for scores in by_query.values():
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)  # no ties

    relevant: dict[str, int] = {}
    for line in generate.qrels_path(shape, tmp_path / "a").read_text().splitlines():
        qid, zero, _doc, label = line.split(" ")
        assert zero == "0" and label in {"0", "1", "2", "3"}
        relevant[qid] = relevant.get(qid, 0) + (label != "0")
    assert set(relevant) == set(by_query) and min(relevant.values()) >= 1


def test_ties_shape_has_ties(tmp_path: Path) -> None:
    shape = generate.parse_shape("5x10t")
    generate.ensure(shape, 1, tmp_path, log=False)
    scores = [line.split(" ")[4] for line in generate.run_path(shape, 1, tmp_path).read_text().splitlines()[:10]]
    assert len(set(scores)) < len(scores)


def test_harness_runs_every_phase_and_tools_agree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--shapes", "20x10", "--repeat", "1", "--tools", TOOLS, "--no-warmup", "--quiet"]
    rows = run.main([*argv, "--data-dir", str(tmp_path / "data"), "--out-dir", str(out)])

    failed = [(r.tool, r.phase, r.failure) for r in rows if r.failure]
    assert not failed
    assert not [r for r in rows if r.agreement.bad]
    ranklens_phases = {r.phase for r in rows if r.tool == "ranklens"}
    assert ranklens_phases == set(run.PHASES)
    report = (out / "results.md").read_text()
    assert "| phase | tool | median s | peak RSS MB |" in report
    for title in run.PHASE_TITLES.values():
        assert title in report
    data = json.loads((out / "results.json").read_text())
    assert {row["tool"] for row in data["rows"]} >= {"ranklens"}


def test_harness_reads_parquet(tmp_path: Path) -> None:
    argv = ["--shapes", "20x10pq", "--repeat", "1", "--phases", "load", "--tools", "ranklens,pytrec_eval"]
    rows = run.main([*argv, "--no-warmup", "--quiet", "--data-dir", str(tmp_path), "--out-dir", str(tmp_path / "o")])
    assert rows and not [r for r in rows if r.failure or r.agreement.bad]


def test_agreement_check_flags_a_wrong_answer() -> None:
    reference = {"means": {"nDCG@10": 0.5}, "per_query": {"nDCG@10": {"q1": 0.4, "q2": 0.6}}}
    close = {"means": {"nDCG@10": 0.5 + 1e-13}, "per_query": {"nDCG@10": {"q1": 0.4, "q2": 0.6 + 2e-13}}}
    wrong = {"means": {"nDCG@10": 0.45}, "per_query": {"nDCG@10": {"q1": 0.3, "q2": 0.6}}}
    result = agree.check("four", {"ranklens": reference, "a": close, "b": wrong, "c": None}, expected={})
    assert result["ranklens"].status == "reference"
    assert result["a"].status == "ok" and result["a"].max_diff == pytest.approx(2e-13, abs=1e-14)
    assert result["b"].bad and "1 queries differ" in result["b"].detail
    assert result["c"].status == "n/a"
    tied = agree.check("four", {"ranklens": reference, "ranx": wrong}, expected={"ranx": "ties"})
    assert tied["ranx"].status == "expected" and not tied["ranx"].bad


def test_printed_value_is_the_last_decimal() -> None:
    assert agree.printed_value("ndcg_cut_10           \tall\t0.3943\n") == 0.3943
    assert agree.printed_value("│ queries │ 1000 │\n│ nDCG@10 │ 0.3943 │") == 0.3943
    assert agree.printed_value("{nDCG@10: 0.39433678}") == 0.39433678
    assert agree.printed_value("no number") is None
