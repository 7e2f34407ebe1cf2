"""ranklens.evaluation.evaluate_files: what `ranklens eval` does to get Results, from Python (issue 11)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ranklens.engine import EvalPolicy
from ranklens.errors import InputError, NotGroupedError
from ranklens.evaluation import evaluate_files, resolve_baseline, segment_notes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
RUNS = [str(EXAMPLES / "toy_bm25.run"), str(EXAMPLES / "toy_dense.run")]
MEASURES = ["nDCG@10", "AP", "P@5", "RR"]


def _same(a: list, b: list) -> None:  # type: ignore[type-arg]
    assert [r.run for r in a] == [r.run for r in b]
    for x, y in zip(a, b):
        assert x.measures == y.measures and x.query_ids == y.query_ids
        np.testing.assert_allclose(x.values, y.values, rtol=0, atol=1e-12)


@pytest.mark.parametrize("policy", [EvalPolicy(), EvalPolicy(missing="zero", max_docs=7)])
def test_streamed_and_whole_read_give_the_same_results(policy: EvalPolicy) -> None:
    streamed = evaluate_files(QRELS, RUNS, MEASURES, policy, stream=True)
    whole = evaluate_files(QRELS, RUNS, MEASURES, policy, stream=False)
    _same(streamed.results, whole.results)
    assert streamed.read_whole == whole.read_whole == []
    assert streamed.results[0].options.get("streamed") is True


def test_runs_are_named_and_notes_name_their_file() -> None:
    out = evaluate_files(QRELS, [("first", RUNS[0]), (None, RUNS[1])], MEASURES)
    assert out.results[0].run == "first"
    assert all(note.split(": ")[0] in (QRELS, *RUNS) for note in out.notes)
    seen: list[str] = []
    again = evaluate_files(QRELS, {"a": RUNS[0], "b": RUNS[1]}, MEASURES, on_note=seen.append)
    assert [r.run for r in again.results] == ["a", "b"] and seen == again.notes


def test_interleaved_run_is_read_whole_by_default(tmp_path: Path) -> None:
    lines = Path(RUNS[1]).read_text().splitlines()
    target = tmp_path / "interleaved.run"
    target.write_text("\n".join(lines[:5] + lines[40:45] + lines[5:40] + lines[45:]) + "\n")
    auto = evaluate_files(QRELS, [str(target)], MEASURES)
    assert auto.read_whole == [str(target)]
    _same(auto.results, evaluate_files(QRELS, [str(target)], MEASURES, stream=False).results)
    with pytest.raises(NotGroupedError, match="appears again after other queries"):
        evaluate_files(QRELS, [str(target)], MEASURES, stream=True)


def test_stream_true_refuses_what_cannot_stream(tmp_path: Path) -> None:
    target = tmp_path / "three.tsv"
    target.write_text("q1\td1\t1\n")
    with pytest.raises(InputError, match="streaming reads TREC run files"):
        evaluate_files(QRELS, [str(target)], MEASURES, stream=True)


def test_segment_notes_and_baseline() -> None:
    res = evaluate_files(QRELS, RUNS[:1], ["P@5"]).results
    ids = res[0].query_ids
    assert segment_notes(res, {q: "s" for q in ids}) == []
    (note,) = segment_notes(res, {ids[0]: "s"})
    assert f"{len(ids) - 1} evaluated queries have no segment" in note
    with pytest.raises(InputError, match="no evaluated query has a segment"):
        segment_notes(res, {})
    assert resolve_baseline(None, RUNS, ["a", "b"]) is None
    assert resolve_baseline(RUNS[1], RUNS, ["a", "b"]) == "b"
    assert resolve_baseline("b", RUNS, ["a", "b"]) == "b"
    assert resolve_baseline("0", RUNS, ["a", "b"]) == 0
