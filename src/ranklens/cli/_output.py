"""Rendering evaluation results: table (rich), JSON, CSV and TSV (``measure<TAB>query_id<TAB>value``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ranklens import __version__
from ranklens.results import Results

FORMATS = ("table", "json", "csv", "tsv", "trec")


def render(results: Sequence[Results], fmt: str, *, per_query: bool, meta: dict[str, Any]) -> str:
    """The text of ``results`` in format ``fmt``."""
    if fmt == "json":
        return render_json(results, per_query=per_query, meta=meta)
    if fmt == "csv":
        return render_csv(results, per_query=per_query)
    if fmt == "tsv":
        return render_tsv(results, per_query=per_query)
    if fmt == "trec":
        return render_trec(results, per_query=per_query)
    return render_table(results, per_query=per_query)


def render_json(results: Sequence[Results], *, per_query: bool, meta: dict[str, Any]) -> str:
    """``{"ranklens_version", "qrels", "runs": [Results.to_json_dict() ...]}``; per-query values only with
    ``per_query``."""
    runs = []
    for r in results:
        d = r.to_json_dict()
        if not per_query:
            d.pop("per_query")
        runs.append(d)
    return json.dumps({"ranklens_version": __version__, **meta, "runs": runs}, indent=2) + "\n"


def render_csv(results: Sequence[Results], *, per_query: bool) -> str:
    """Long CSV: ``run,measure,query_id,value`` (aggregates under query id ``all``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "measure", "query_id", "value"])
    for r in results:
        for row in _rows(r, per_query):
            w.writerow([r.run, *row])
    return buf.getvalue()


def render_tsv(results: Sequence[Results], *, per_query: bool) -> str:
    """``measure<TAB>query_id<TAB>value`` per line at full float precision, like ``trec_eval -q``.

    With several runs each block starts with ``runid<TAB>all<TAB>NAME`` as trec_eval prints it.
    """
    lines = []
    for r in results:
        if len(results) > 1:
            lines.append(f"runid\tall\t{r.run}")
        lines.extend(f"{m}\t{q}\t{v}" for m, q, v in _rows(r, per_query))
    return "\n".join(lines) + ("\n" if lines else "")


def render_trec(results: Sequence[Results], *, per_query: bool) -> str:
    """trec_eval's text layout (``%-22s<TAB>%s<TAB>%.4f``, counts as integers) with ranklens names.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "NumRet"])
    >>> [line.split("\\t") for line in render_trec([res], per_query=False).splitlines()][1:]
    [['P@1                   ', 'all', '1.0000'], ['NumRet                ', 'all', '1']]
    """
    lines = []
    for r in results:
        lines.append(f"{'runid':<22}\tall\t{r.run}")
        counts = [m.family.aggregate == "sum" for m in r.measures]
        rows: list[tuple[str, list[float]]] = []
        if per_query:
            rows.extend((q, row) for q, row in zip(r.query_ids, r.values.tolist()))
        rows.append(("all", list(r.aggregates)))
        for q, row in rows:
            for m, v, is_count in zip(r.measures, row, counts):
                value = str(int(v)) if is_count and v == v else f"{v:.4f}"
                lines.append(f"{str(m):<22}\t{q}\t{value}")
    return "\n".join(lines) + "\n"


def _rows(r: Results, per_query: bool) -> list[tuple[str, str, str]]:
    names = [str(m) for m in r.measures]
    out: list[tuple[str, str, str]] = []
    if per_query:
        for q, row in zip(r.query_ids, r.values.tolist()):
            out.extend((n, q, _full(v)) for n, v in zip(names, row))
    out.extend((n, "all", _full(v)) for n, v in zip(names, r.aggregates))
    return out


def _full(v: float) -> str:
    return repr(float(v)) if v == v else "nan"


def _short(v: float) -> str:
    if v != v:
        return "—"
    return str(int(v)) if float(v).is_integer() and abs(v) >= 1 else f"{v:.4f}"


def render_table(results: Sequence[Results], *, per_query: bool) -> str:
    """A readable table: one column per run (aggregates), or per query rows with ``--per-query``."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=max(80, 14 * (len(results) + 2)), force_terminal=False, color_system=None)
    if per_query:
        for r in results:
            n = len(r.query_ids)
            t = Table(title=f"{r.run} — {n} quer{'y' if n == 1 else 'ies'}", title_justify="left")
            t.add_column("query")
            for m in r.measures:
                t.add_column(str(m), justify="right")
            for q, row in zip(r.query_ids, r.values.tolist()):
                t.add_row(q, *(_short(v) for v in row))
            t.add_section()
            t.add_row("all", *(_short(v) for v in r.aggregates), style="bold")
            console.print(t)
    else:
        t = Table()
        t.add_column("measure")
        for r in results:
            t.add_column(r.run, justify="right")
        t.add_row("queries", *(str(len(r.query_ids)) for r in results), style="dim")
        for j, m in enumerate(results[0].measures if results else ()):
            t.add_row(str(m), *(_short(r.aggregates[j]) for r in results))
        console.print(t)
    return buf.getvalue()
