"""Smoke test of the benchmark harness (bench/): tiny data, one repetition, no timing assertions.

Checks that the generator writes well-formed TREC files, that the harness runs every phase in fresh
processes, that the tools agree, and that the report is produced. Peers that are not installed are
skipped by the harness itself.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import agree, generate, run, tools  # noqa: E402

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


# ------------------------------------------------------------------ issue 12: --quick-cli and --targets

TABLE_HEADER = "| target | measured | target value | met? |"
QUICK_TARGETS = ("`ranklens --help`", "`ranklens eval` toy", "vs trec_eval", "vs pytrec_eval")


def _table(text: str) -> list[list[str]]:
    """The rows of the target table in ``text``: the cells of each line after the header and rule."""
    lines = text.splitlines()
    start = lines.index(TABLE_HEADER)
    assert lines[start + 1] == "|---|---|---|---|"
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 4 and all(cells[:3]), line
        rows.append(cells)
    return rows


def _no_trec_eval(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from bench import trec_eval_build

    monkeypatch.setattr(trec_eval_build, "CACHE_DIR", tmp_path / "no-builds")
    monkeypatch.delenv("TREC_EVAL", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]))
    if tools.trec_eval_binary() is not None:
        pytest.skip("a trec_eval binary is installed on PATH")


def test_quick_cli_without_trec_eval_says_so_and_measures_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_trec_eval(monkeypatch, tmp_path)
    out = tmp_path / "out"
    run.main(["--quick-cli", "--shapes", "20x10", "--repeat", "1", "--quiet", "--data-dir", str(tmp_path / "d"), "--out-dir", str(out)])
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "trec_eval" in line]
    assert len(notes) == 1 and "missing" in notes[0] and "--trec-eval-src DIR" in notes[0]

    rows = _table(captured.out)
    assert len(rows) == len(QUICK_TARGETS)
    for row, label in zip(rows, QUICK_TARGETS):
        assert label in row[0]
    trec_row = rows[2]
    assert "trec_eval missing" in trec_row[1] and trec_row[3] == "n/a"
    for row in (rows[0], rows[1], rows[3]):  # measured: a time, and a verdict (no timing is asserted)
        assert " s" in row[1] and row[3] in {"yes", "**no**"}
    data = json.loads((out / "quick_cli.json").read_text())
    assert [t["target"] for t in data["targets"]] == [r[0] for r in rows]
    assert _table((out / "quick_cli.md").read_text()) == rows


def test_quick_cli_and_targets_with_a_fake_trec_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stand-in trec_eval (a script printing ranklens' value) on tiny shapes standing in for S, M, W, Mpq."""
    _no_trec_eval(monkeypatch, tmp_path)
    fake = tmp_path / "trec_eval"
    ranklens_exe = tools.Ranklens().cli("", "")[0]
    fake.write_text(f'#!/bin/sh\n# trec_eval -m ndcg_cut.10 QRELS RUN\nexec "{ranklens_exe}" eval "$3" "$4" -m nDCG@10\n')
    fake.chmod(0o755)
    monkeypatch.setenv("TREC_EVAL", str(fake))
    common = ["--repeat", "1", "--quiet", "--no-warmup", "--data-dir", str(tmp_path / "d"), "--out-dir", str(tmp_path / "out")]

    run.main(["--quick-cli", "--shapes", "20x10", *common])
    rows = _table(capsys.readouterr().out)
    assert [label in row[0] for row, label in zip(rows, QUICK_TARGETS)] == [True] * 4
    assert all(row[3] in {"yes", "**no**"} for row in rows)  # every target measured, trec_eval included
    assert "ranklens/trec_eval" in rows[2][1]

    shapes = "20x10,30x5,20x10pq"  # the stand-ins for M, W and Mpq
    measured = run.main(["--shapes", shapes, "--phases", "ndcg,cli", "--tools", TOOLS, *common])
    assert measured and not [r for r in measured if r.failure or r.agreement.bad]
    capsys.readouterr()
    run.main(["--targets", "--shapes", shapes, *common])
    rows = _table(capsys.readouterr().out)
    assert len(rows) == len(QUICK_TARGETS) + 9
    remaining = rows[len(QUICK_TARGETS) :]
    assert not [r for r in remaining if r[3] not in {"yes", "**no**"}], remaining  # all measured here
    expected = ("vs trec_eval", "peak RSS on 20x10 ", "peak RSS on 20x10pq", "on 30x5", "(Parquet) vs", "in-memory API", "`ranklens compare`",
                "`ranklens compare` on 20x10 vs `ranklens eval` per run", "`ranklens gate` on 20x10 vs `ranklens eval` per run")
    for row, label in zip(remaining, expected):
        assert label in row[0], (label, row)
    assert (tmp_path / "out" / "targets.md").is_file()


def test_trec_eval_src_must_be_a_source_tree(tmp_path: Path) -> None:
    from bench import trec_eval_build

    with pytest.raises(SystemExit, match="not a trec_eval source tree"):
        trec_eval_build.build(tmp_path, tmp_path / "cache", log=False)
    assert not (tmp_path / "cache").exists()


def test_api_memory_bench_runs_and_the_tools_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """bench/api_memory.py (issue 26): fresh processes, every value checked against pytrec_eval's (it exits
    otherwise), the table and the targets printed; tiny data, no timing asserted."""
    from bench import api_memory

    assert api_memory.main(["--rows", "2000", "--tools", "ranklens-pandas,ranklens-dicts,pytrec_eval"]) == 0
    out = capsys.readouterr().out
    tools = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ranklens-") or line.startswith("| pytrec")]
    assert tools[:3] == ["ranklens-pandas", "ranklens-dicts", "pytrec_eval"]
    assert "| ranklens-dicts ≥ 2× faster than pytrec_eval from dicts |" in out
