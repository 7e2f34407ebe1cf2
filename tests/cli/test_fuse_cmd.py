"""``ranklens fuse``: bad input is one line and exit 2; a fused run over the union of the queries, noted."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.data.io import read_run

EX = Path(__file__).resolve().parents[2] / "examples"
BM25, DENSE, QRELS = str(EX / "toy_bm25.run"), str(EX / "toy_dense.run"), str(EX / "toy.qrels")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--method", "nope"], "unknown fusion method 'nope'"),
        (["--method", "rrf", "--norm", "bogus"], "unknown normalisation 'bogus'"),
        (["--method", "wsum", "--weights", "1,2,3"], "3 weights for 2 runs"),
        (["--method", "wsum", "--optimise"], "--optimise needs --qrels"),
        (["--method", "gmnz"], "gmnz needs the parameter gamma"),
        (["--method", "rrf", "--param", "q=1"], "rrf takes no parameter 'q'"),
        (["--method", "posfuse"], "posfuse is trained on qrels"),
        (["--method", "probfuse", "--qrels", QRELS], "probfuse needs the parameter n_segments"),
        (["--method", "rrf", "--qrels", QRELS], "--qrels is read only with --optimise or by a trained method"),
        (["--method", "slidefuse", "--qrels", str(EX / "nope.qrels"), "--param", "w=2"], "nope.qrels"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["fuse", BM25, DENSE, *args, "-o", str(tmp_path / "f.trec")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output


def test_runs_over_different_queries_are_fused_over_the_union_with_a_note(tmp_path: Path) -> None:
    out = tmp_path / "f.trec"
    result = CliRunner().invoke(cli, ["fuse", BM25, DENSE, "--method", "rrf", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "run 'dense' has no results for 1 of the 12 queries" in result.output
    fused = read_run(out)
    assert set(fused.query_ids.to_pylist()) == set(read_run(BM25).query_ids.to_pylist()) | set(read_run(DENSE).query_ids.to_pylist())


def test_a_trained_method_learns_on_qrels_and_says_so(tmp_path: Path) -> None:
    """probfuse --optimise searches n_segments 1..100 (the JSON holds the trials and the learnt model);
    the fused run written equals the library's with the chosen parameter."""
    import json

    from ranklens.fusion import fuse

    out = tmp_path / "f.trec"
    result = CliRunner().invoke(
        cli, ["fuse", BM25, DENSE, "--method", "probfuse", "--qrels", QRELS, "--optimise", "-f", "json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    assert len(summary["optimisation"]["trials"]) == 100 and len(summary["optimisation"]["model"]) == 2
    n = summary["params"]["n_segments"]
    want = fuse([read_run(BM25), read_run(DENSE)], "probfuse", qrels=QRELS, params={"n_segments": n}).run.to_dict()
    got = read_run(out).to_dict()
    assert got.keys() == want.keys()
    for q in want:
        assert got[q] == pytest.approx(want[q], rel=1e-15)


def test_compare_adds_fused_systems(tmp_path: Path) -> None:
    """--fuse rrf and a named wsum: four systems; the fused rows equal eval of the fused run."""
    import json

    from ranklens import evaluate
    from ranklens.fusion import fuse

    result = CliRunner().invoke(cli, [
        "compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "--fuse", "rrf", "--fuse", "wsum:norm=zmuv:weights=0.3,0.7:name=hybrid",
        "-f", "json", "--quiet",
    ])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    text = json.dumps(data)
    assert "fused-rrf" in text and "hybrid" in text
    runs = [read_run(BM25), read_run(DENSE)]
    hybrid = fuse(runs, "wsum", norm="zmuv", weights=[0.3, 0.7]).run
    value = float(evaluate(QRELS, hybrid, ["nDCG@10"]).aggregates[0])
    assert round(value, 4) in _numbers(data)


def _numbers(node: object) -> set[float]:
    out: set[float] = set()
    if isinstance(node, dict):
        for v in node.values():
            out |= _numbers(v)
    elif isinstance(node, list):
        for v in node:
            out |= _numbers(v)
    elif isinstance(node, float):
        out.add(round(node, 4))
    return out


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("rfr", "unknown fusion method 'rfr'"),
        ("wsum:weights=1", "1 weight for 2 runs"),
        ("rrf:k", "expected METHOD[:KEY=VALUE]"),
        ("rrf:k=x", "k expects a number"),
        ("posfuse", "posfuse is trained on qrels"),
        ("rrf:norm=bad", "unknown normalisation 'bad'"),
    ],
)
def test_compare_fuse_bad_spec_is_one_line_and_exit_2(spec: str, says: str) -> None:
    result = CliRunner().invoke(cli, ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "--fuse", spec])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output


def test_optimise_searches_a_required_parameter(tmp_path: Path) -> None:
    """gmnz's gamma has no default: --optimise searches it (the CLI used to refuse before the search)."""
    import json

    from ranklens.fusion import optimise

    result = CliRunner().invoke(cli, ["fuse", BM25, DENSE, "--method", "gmnz", "--qrels", QRELS, "--optimise", "-f", "json",
                                      "-o", str(tmp_path / "f.trec")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    want = optimise([read_run(BM25), read_run(DENSE)], QRELS, "gmnz")
    assert summary["params"] == want.params and summary["optimisation"]["value"] == want.optimisation["value"]
