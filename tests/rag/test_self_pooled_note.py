"""RA-nWG and PROC normalise by the ideal of the judged pool: when the judged documents of a query are
exactly the run's own top d (a judge labelled the run's top 10), the ideal is the run itself and the value
1.0 says nothing about what the run missed. Every path says so in a note with the pool depth (issue 22
item 5)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

MEASURES = ["RAnWG(top=3)@10", "PROC(top=3)@10"]


def _files(tmp: Path, *, beyond: bool) -> tuple[str, str]:
    """A run of 20 documents per query; labels 0-3 for its top 10 (and, with ``beyond``, for one document
    the run did not retrieve)."""
    rnd = random.Random(5)
    run, qrels = [], []
    for q in ("q1", "q2", "q3"):
        for rank in range(1, 21):
            run.append(f"{q} Q0 {q}d{rank} {rank} {100 - rank} sys")
            if rank <= 10:
                qrels.append(f"{q} 0 {q}d{rank} {rnd.choice([0, 1, 2, 3, 3])}")
        if beyond:
            qrels.append(f"{q} 0 {q}elsewhere 3")
    (tmp / "q.qrels").write_text("\n".join(qrels) + "\n")
    (tmp / "r.run").write_text("\n".join(run) + "\n")
    return str(tmp / "q.qrels"), str(tmp / "r.run")


@pytest.mark.parametrize("stream", [[], ["--no-stream"]])
def test_cli_says_the_ideal_is_the_run_itself(tmp_path: Path, stream: list[str]) -> None:
    qrels, run = _files(tmp_path, beyond=False)
    out = CliRunner().invoke(cli, ["eval", qrels, run, "-m", *MEASURES, "-f", "tsv", *stream])
    assert out.exit_code == 0, out.output
    notes = [line for line in out.stderr.splitlines() if "computed from the run itself" in line]
    assert len(notes) == 1, out.stderr
    assert "3 of 3 queries" in notes[0] and "top 10" in notes[0]
    assert "RAnWG(top=3)@10" in notes[0] and "PROC(top=3)@10" in notes[0]


def test_python_api_note(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path, beyond=False)
    res = ranklens.Evaluator(MEASURES, qrels)(run, warn=False)
    assert any("computed from the run itself" in n and "top 10" in n for n in res.notes), res.notes


def test_no_note_when_the_pool_goes_beyond_the_run(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path, beyond=True)
    out = CliRunner().invoke(cli, ["eval", qrels, run, "-m", *MEASURES, "-f", "tsv"])
    assert out.exit_code == 0, out.output
    assert "computed from the run itself" not in out.stderr


def test_no_note_for_measures_without_a_pool_ideal(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path, beyond=False)
    res = ranklens.Evaluator(["P@5", "Harm@10"], qrels)(run, warn=False)
    assert not any("run itself" in n for n in res.notes)


def test_no_note_for_gold_labels_the_run_ranked_first(tmp_path: Path) -> None:
    """Gold passages only (no judged non-relevant document), retrieved at the top: a perfect run, not a pool
    of the run."""
    (tmp_path / "q.qrels").write_text("q1 0 a 3\nq1 0 b 2\nq2 0 c 3\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 x 3 1 s\nq2 Q0 c 1 2 s\nq2 Q0 y 2 1 s\n")
    res = ranklens.Evaluator(MEASURES, str(tmp_path / "q.qrels"))(str(tmp_path / "r.run"), warn=False)
    assert not any("run itself" in n for n in res.notes)
