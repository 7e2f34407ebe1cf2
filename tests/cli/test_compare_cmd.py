"""`ranklens compare` through click's runner, on the bundled example data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _paired(measure: str) -> tuple[np.ndarray, np.ndarray]:
    bm25 = ranklens.evaluate(QRELS, BM25, [measure]).per_query(measure)
    with pytest.warns(ranklens.RanklensWarning, match="1 qrels query with no retrieved document"):  # q12
        dense = ranklens.evaluate(QRELS, DENSE, [measure]).per_query(measure)
    common = [q for q in bm25 if q in dense]
    return np.array([bm25[q] for q in common]), np.array([dense[q] for q in common])


def test_json_report_matches_scipy_and_reports_dropped_queries() -> None:
    code, out, err = run("compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["systems"] == ["bm25", "dense"] and data["measures"] == ["nDCG@10", "AP"]
    for row in data["rows"]:
        xb, xd = _paired(row["measure"])
        assert row["n"] == 11
        assert row["p_value"] == pytest.approx(scipy.stats.ttest_rel(xd, xb).pvalue)
        assert row["diff"] == pytest.approx((xd - xb).mean())
    assert "dropped 1 query only in bm25 (q12)" in err


def test_table_has_markers_and_legend() -> None:
    code, out, _ = run("compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "--test", "randomisation")
    assert code == 0
    assert "nDCG@10 — all queries" in out and "dense" in out and "bm25" in out
    assert "paired randomisation test, Holm correction" in out


def test_aliases_segments_costs_and_baseline_by_path(tmp_path: Path) -> None:
    seg = tmp_path / "segments.tsv"
    seg.write_text("".join(f"q{i}\t{'odd' if i % 2 else 'even'}\n" for i in range(1, 13)))
    costs = tmp_path / "costs.csv"
    costs.write_text("system,latency_ms\nbm25,4\ndense,25\n")
    code, out, err = run(
        "compare",
        QRELS,
        BM25,
        DENSE,
        "-m",
        "AP",
        "--baseline",
        DENSE,
        "--test",
        "fisher",
        "--segments",
        str(seg),
        "--costs",
        str(costs),
        "-f",
        "json",
        "--missing",
        "zero",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["baseline"] == "dense" and data["options"]["test"] == "randomisation"
    assert data["segments"] == {"even": 6, "odd": 6}
    assert {(r["segment"], r["n"]) for r in data["rows"]} == {(None, 12), ("even", 6), ("odd", 6)}
    assert {p["system"]: p["dominated"] for p in data["pareto"]} == {"bm25": False, "dense": False}
    assert "dropped" not in err  # --missing zero keeps q12


@pytest.mark.parametrize(
    ("suffix", "fmt", "marker"),
    [(".html", "html", "Plotly.newPlot"), (".md", "markdown", "# System comparison"), (".tex", "latex", r"\toprule")],
)
def test_output_file_format_from_extension(tmp_path: Path, suffix: str, fmt: str, marker: str) -> None:
    target = tmp_path / f"report{suffix}"
    code, out, err = run("compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "-o", str(target))
    assert code == 0, err
    assert out == "" and f"wrote {fmt} report to {target}" in err
    assert marker in target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "nope"], "unknown baseline 'nope'; the systems are bm25, dense"),
        (["--test", "wilcoxn"], "did you mean 'wilcoxon'"),
        (["-m", "ndgc@10"], "did you mean 'nDCG@10'"),
        (["--segments", "/no/such/file"], "no such file"),
        (["-o", "report.pdf"], "cannot tell the report format"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, _, err = run("compare", QRELS, BM25, DENSE, *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_needs_two_runs() -> None:
    code, _, err = run("compare", QRELS, BM25)
    assert code == 2 and "at least two RUN files" in err


def test_reads_the_qrels_once_and_streams_each_run_once(monkeypatch) -> None:
    """Issue 12: compare re-reads nothing it already read: one qrels read, one streamed pass per run (as
    ``eval``), no whole-file read of a run (counted at the readers, not timed). The general path here; the
    express path's reads are counted in the next test."""
    import collections

    monkeypatch.setenv("RANKLENS_EXPRESS", "0")

    import ranklens.data.io as io
    import ranklens.engine.stream as stream

    calls: collections.Counter[tuple[str, str]] = collections.Counter()

    def counting(kind, real):
        def wrapper(source, *args, **kwargs):
            calls[kind, str(source)] += 1
            return real(source, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(io, "read_qrels", counting("qrels", io.read_qrels))
    monkeypatch.setattr(io, "read_run", counting("whole run", io.read_run))
    real_stream = stream.evaluate_stream
    monkeypatch.setattr(stream, "evaluate_stream", lambda ev, path, **kw: (calls.update([("stream", path)]),
                                                                           real_stream(ev, path, **kw))[1])
    code, out, err = run("compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP", "P@5", "-f", "json", "--quiet")
    assert code == 0, err
    assert json.loads(out)["systems"] == ["bm25", "dense"]
    assert calls == {("qrels", QRELS): 1, ("stream", BM25): 1, ("stream", DENSE): 1}


def test_the_express_path_reads_the_qrels_once_and_each_run_once(monkeypatch) -> None:
    """The same for the express path (ranklens.express), which compare takes for these inputs: the qrels
    file opened and parsed once for both runs, each run file opened once."""
    import collections

    import ranklens.express as express

    opened: collections.Counter[str] = collections.Counter()
    real = express._source
    monkeypatch.setattr(express, "_source", lambda path, kind: (opened.update([str(path)]), real(path, kind))[1])
    code, out, err = run("compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP", "P@5", "-f", "json", "--quiet")
    assert code == 0, err
    assert json.loads(out)["systems"] == ["bm25", "dense"]
    assert opened == {QRELS: 1, BM25: 1, DENSE: 1}
