"""``diff --html``, ``compare --explain-diff`` and the queries ``diff`` compared (``queries``, ``unanswered``,
``not_in_qrels`` in its JSON), on the bundled data and hand-made runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.research.diff import diff_runs

EX = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = (str(EX / n) for n in ("toy.qrels", "toy_bm25.run", "toy_dense.run"))


def test_json_lists_the_queries_compared_and_those_left_out() -> None:
    """By hand: qrels judge q1, q2, q3; A answers q1, q2, x; B answers q1, q3."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"b": 1}}
    a = {"q1": {"a": 1.0}, "q2": {"a": 1.0}, "x": {"a": 1.0}}
    b = {"q1": {"b": 1.0}, "q3": {"b": 1.0}}
    doc = diff_runs(qrels, a, b, "P@1").to_json()
    assert doc["queries"] == ["q1"]
    assert doc["unanswered"] == {"a": ["q3"], "b": ["q2"]}
    assert doc["not_in_qrels"] == {"a": ["x"], "b": []}
    assert any("A has 1 query the qrels do not judge (x)" in n for n in doc["notes"])
    assert any("B has no results for 1 qrels query (q2)" in n for n in doc["notes"])


def test_html_is_self_contained_and_links_every_worst_query(tmp_path: Path) -> None:
    page = tmp_path / "d.html"
    result = CliRunner().invoke(cli, ["diff", QRELS, BM25, DENSE, "-m", "nDCG@10", "--html", str(page), "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    html = page.read_text()
    assert not re.search(r"(src|href)=\"(https?:|//)", html) and "<script" not in html
    links = re.findall(r'href="#(p0-q-[^"]+)"', html)
    ids = set(re.findall(r'id="(p0-q-[^"]+)"', html))
    assert links and set(links) <= ids
    # every compared query has its section, and its change as diff's JSON says
    per_query = doc["measures"]["nDCG@10"]["per_query"]
    assert len(ids) == len(per_query) == len(doc["queries"])
    worst = min(per_query, key=lambda q: per_query[q]["delta"])
    first_worst = re.search(r"Worst queries: <a href=\"#p0-q-([^\"]+)\">", html)
    assert first_worst and first_worst.group(1) == worst
    assert f"{per_query[worst]['delta']:+.4f}" in html


def test_compare_explain_diff_has_every_pair(tmp_path: Path) -> None:
    page = tmp_path / "explain.html"
    result = CliRunner().invoke(cli, ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "-m", "ERR@10", "--fuse", "rrf",
                                      "--explain-diff", str(page), "--quiet"])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert html.count("<section") == 3  # (bm25–dense, bm25–rrf, dense–rrf)
    assert "nDCG@10" in html and "ERR@10" not in html  # (diff decomposes nDCG, not ERR)
    d = diff_runs(QRELS, BM25, DENSE, "nDCG@10").measures[0]
    assert f"Δ <span class=\"pos\">{d.delta:+.4f}</span>" in html


def test_explain_diff_without_a_decomposable_measure_is_one_line_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", QRELS, BM25, DENSE, "-m", "ERR@10", "--explain-diff",
                                      str(tmp_path / "x.html")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--explain-diff: none of the measures" in lines[0], result.output
