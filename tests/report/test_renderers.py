"""The report renderers: terminal, Markdown, LaTeX, JSON and (as text) HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ranklens.comparison import Comparison, compare
from ranklens.errors import InputError
from ranklens.measures import parse
from ranklens.report import FORMATS, format_for_path, render, write_report
from ranklens.report.latex import latex_escape
from ranklens.results import Results

TOPICS = tuple(f"t{i:02d}" for i in range(10))
A = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
B = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
C = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]


def _results(name: str, ap: list[float]) -> Results:
    ms = (parse("AP"), parse("nDCG@10"))
    values = np.column_stack([ap, np.asarray(ap) * 0.9])
    return Results(name, ms, TOPICS, values, tuple(values.mean(axis=0).tolist()))


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    runs = {"bm25_x": _results("bm25_x", A), "dense": _results("dense", B), "hybrid": _results("hybrid", C)}
    segments = {q: ("head" if i < 5 else "tail") for i, q in enumerate(TOPICS)}
    costs = {"bm25_x": {"latency_ms": 5}, "dense": {"latency_ms": 30}, "hybrid": {"latency_ms": 40}}
    return compare(None, runs, ["AP", "nDCG@10"], baseline="dense", segments=segments, costs=costs)


def test_terminal_table_marks_significance(comparison: Comparison) -> None:
    out = render(comparison, "table")
    assert "AP — all queries" in out and "AP — per segment" in out
    lines = [line for line in out.splitlines() if "bm25_x" in line and "dense" in line]
    # bm25_x beats dense on AP (t p 0.0042, Holm over 2 pairs → 0.0085): ▲
    assert any("▲" in line for line in lines)
    assert "cost–quality" in out and "dominated by bm25_x" in out
    assert "Holm correction" in out


def test_markdown_summary_and_tables(comparison: Comparison) -> None:
    md = render(comparison, "markdown")
    assert md.startswith("# System comparison")
    rows = [line for line in md.splitlines() if line.startswith("| (")]
    assert rows[0].startswith("| (a) bm25\\_x | **0.5300**<sup>b</sup>")
    assert "| head | bm25\\_x | dense |" in md
    assert "## Cost–quality" in md and "dominated by bm25\\_x" in md
    assert "## Notes" not in md  # nothing was dropped


def test_latex_booktabs_bold_and_superscripts(comparison: Comparison) -> None:
    tex = render(comparison, "latex")
    assert tex.count(r"\begin{tabular}") == 3  # overall + 2 segments
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert rule in tex
    first = tex.split(r"\end{table}")[0]
    assert r"(a) bm25\_x & \textbf{0.5300}$^{\mathrm{b}}$ & \textbf{0.4770}$^{\mathrm{b}}$ \\" in first
    assert r"(b) dense & 0.4890 & 0.4401 \\" in first
    assert r"$\alpha$" in first and "α" not in tex
    assert latex_escape("a_b & c%{}#~^$\\") == r"a\_b \& c\%\{\}\#\textasciitilde{}\textasciicircum{}\$\textbackslash{}"


def test_json_report_rows(comparison: Comparison) -> None:
    data = json.loads(render(comparison, "json"))
    assert data["baseline"] == "dense" and data["segments"] == {"head": 5, "tail": 5}
    assert {r["segment"] for r in data["rows"]} == {None, "head", "tail"}
    # bm25_x: best AP and fastest, so it dominates both others
    assert [p["dominated_by"] for p in data["pareto"] if p["measure"] == "AP"] == [[], ["bm25_x"], ["bm25_x"]]


def test_html_is_self_contained(comparison: Comparison) -> None:
    page = render(comparison, "html")
    assert page.startswith("<!DOCTYPE html>")
    assert "Plotly.newPlot" in page and len(page) > 1_000_000  # plotly.js inlined
    # the library bundle mentions URLs in strings; our own markup loads nothing from anywhere
    from ranklens.report.html import plotly_js

    own = page.replace(plotly_js(), "")
    assert len(own) < 200_000
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", own)
    assert "<script src" not in own and "<link" not in own
    figures = json.loads(re.search(r'id="ranklens-figures">(.*?)</script>', page, re.DOTALL).group(1))  # type: ignore[union-attr]
    kinds = [f["data"][0]["type"] for f in figures.values()]
    # per measure: segment bars, distribution, one per-query chart per pair; then a Pareto plot per measure
    assert kinds.count("box") == 2 and kinds.count("scatter") == 2 and kinds.count("bar") == 2 + 2 * 2
    assert all(f'id="{fid}"' in page for fid in figures)


def test_per_query_difference_chart_is_sorted(comparison: Comparison) -> None:
    from ranklens.report.charts import difference_figure

    fig = difference_figure(comparison, "dense", "bm25_x", "AP")
    ys = fig["data"][0]["y"]
    assert ys == sorted(ys)
    expected = sorted(np.subtract(A, B).tolist())
    assert ys == pytest.approx(expected)


def test_write_report_by_extension(comparison: Comparison, tmp_path: Path) -> None:
    for name, marker in (("r.md", "# System comparison"), ("r.tex", r"\toprule"), ("r.json", '"rows"')):
        path = write_report(comparison, tmp_path / name)
        assert marker in path.read_text(encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the report format"):
        format_for_path("report.pdf")
    with pytest.raises(InputError, match="did you mean 'latex'"):
        render(comparison, "latx")
    assert FORMATS == ("table", "markdown", "latex", "json", "html")
