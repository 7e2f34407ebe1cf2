"""Issue 27: Results and Comparison render as HTML tables in Jupyter (``_repr_html_``), with their notes.

A README-style notebook is run by nbclient on a local kernel (no network) and its rich outputs are read."""

from __future__ import annotations

import html
import sys

import pytest

import ranklens

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
GOOD = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0, "x": 2.0}, "q9": {"z": 1.0}}
POOR = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"x": 1.0, "c": 0.5}, "q3": {"x": 1.0}}


def test_results_html_has_every_measure_and_the_notes() -> None:
    res = ranklens.Evaluator(["P@1", "RR"], QRELS)(GOOD, warn=False)
    page = res._repr_html_()
    assert page.count("<tr>") == 1 + 2  # the header and one row per measure
    assert "<td>P@1</td><td>0.6667</td>" in page and f"<td>RR</td><td>{res['RR']:.4f}</td>" in page
    assert res.notes and all(html.escape(n) in page for n in res.notes)  # the run-only query q9 is said


def test_comparison_html_has_every_row_and_the_notes() -> None:
    with pytest.warns(ranklens.RanklensWarning):  # (the run-only query q9, said again in the notes)
        cmp = ranklens.compare(QRELS, {"poor": POOR, "good": GOOD}, ["P@1"], test="sign")
    page = cmp._repr_html_()
    r = cmp.rows[0]
    assert f"<td>{r.diff:.4f}</td>" in page and f"<td>{r.p_value_adjusted:.4f}</td>" in page
    assert cmp.notes and all(html.escape(n) in page for n in cmp.notes)


NOTEBOOK = [
    "import ranklens, warnings\nwarnings.simplefilter('ignore')",
    f"qrels = {QRELS!r}\ngood = {GOOD!r}\npoor = {POOR!r}",
    "res = ranklens.evaluate(qrels, good, ['nDCG@10', 'P@1'])\nres",
    "ranklens.compare(qrels, {'poor': poor, 'good': good}, ['P@1'], test='sign')",
]


def test_a_notebook_shows_html_tables() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in NOTEBOOK]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False)
    client.km_kwargs = {"kernel_cmd": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]}
    client.execute()
    pages = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    assert len(pages) == 2, [c.get("outputs") for c in nb.cells]
    results_page, comparison_page = pages
    expected = ranklens.Evaluator(["nDCG@10", "P@1"], QRELS)(GOOD, warn=False)
    assert f"<td>nDCG@10</td><td>{expected['nDCG@10']:.4f}</td>" in results_page
    assert "<li>1 run query (1 rows) not in the qrels: ignored</li>" in results_page  # the note about q9
    assert "<th>p (adjusted)</th>" in comparison_page and "<caption>2 systems, test sign" in comparison_page
