"""Rendering evaluation results as text: table (rich), JSON, CSV, TSV (``measure<TAB>query_id<TAB>value``)
and trec_eval's layout."""

from __future__ import annotations

import io

from ranklens._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # only named in annotations: importing this module (and ranklens.results) stays light
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ranklens.results.core import Results

__all__ = ["FORMATS", "render", "render_csv", "render_json", "render_table", "render_trec", "render_tsv"]

FORMATS = ("table", "json", "csv", "tsv", "trec")


def render(
    results: Sequence[Results],
    fmt: str,
    *,
    per_query: bool,
    meta: dict[str, Any],
    segments: Mapping[str, str] | None = None,
    width: int | None = None,
    expected: Sequence[str] | None = None,
) -> str:
    """The text of ``results`` in format ``fmt``; ``segments`` (query → segment) adds the value of every
    segment to the table and JSON; ``width`` is the table width to fit (default: the terminal's);
    ``expected`` (the qrels' query ids) makes the JSON say which of them each run left out."""
    if fmt == "json":
        return render_json(results, per_query=per_query, meta=meta, segments=segments, expected=expected)
    if fmt == "csv":
        return render_csv(results, per_query=per_query)
    if fmt == "tsv":
        return render_tsv(results, per_query=per_query)
    if fmt == "trec":
        return render_trec(results, per_query=per_query)
    return render_table(results, per_query=per_query, segments=segments, width=width)


def render_json(
    results: Sequence[Results],
    *,
    per_query: bool,
    meta: dict[str, Any],
    segments: Mapping[str, str] | None = None,
    expected: Sequence[str] | None = None,
) -> str:
    """``{"ranklens_version", "qrels", "runs": [Results.to_json_dict() ...]}``; per-query values only with
    ``per_query``; with ``segments`` each run has ``"segments": {segment: {"num_queries", "aggregate"}}``;
    with ``expected`` (the qrels' query ids) each run has ``"expected_queries"`` (their number) and
    ``"skipped_queries"`` (those without a value: the run did not answer them and ``--missing skip`` left
    them out), so that ``ranklens push`` can count them (the monitor scores them 0)."""
    runs = []
    for r in results:
        d = r.to_json_dict()
        if expected is not None:
            have = set(r.query_ids)
            d["expected_queries"] = len(expected)
            d["skipped_queries"] = [q for q in expected if q not in have]
        if not per_query:
            d.pop("per_query")
        if segments is not None:
            d["segments"] = {
                name: {"num_queries": len(part.query_ids), "aggregate": part.to_json_dict()["aggregate"]}
                for name, part in r.by_segment(segments).items()
            }
        runs.append(d)
    import json

    return json.dumps({"ranklens_version": __version__, **meta, "runs": runs}, indent=2) + "\n"


def render_csv(results: Sequence[Results], *, per_query: bool) -> str:
    """Long CSV: ``run,measure,query_id,value`` (aggregates under query id ``all``)."""
    import csv

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
        rows: list[tuple[str, list[float], list[int]]] = []
        if per_query:  # (system-level measures: the "all" row only)
            keep = _per_query_columns(r)
            rows.extend((q, row, keep) for q, row in zip(r.query_ids, r.value_rows()))
        rows.append(("all", list(r.aggregates), list(range(len(r.measures)))))
        for q, row, columns in rows:
            for j in columns:
                v = row[j]
                value = str(int(v)) if counts[j] and v == v else f"{v:.4f}"
                lines.append(f"{r.measures[j]!s:<22}\t{q}\t{value}")
    return "\n".join(lines) + "\n"


def _rows(r: Results, per_query: bool) -> list[tuple[str, str, str]]:
    names = [str(m) for m in r.measures]
    out: list[tuple[str, str, str]] = []
    if per_query:  # (system-level measures: the "all" row only)
        keep = _per_query_columns(r)
        for q, row in zip(r.query_ids, r.value_rows()):
            out.extend((names[j], q, _full(row[j])) for j in keep)
    out.extend((n, "all", _full(v)) for n, v in zip(names, r.aggregates))
    return out


def _per_query_columns(r: Results) -> list[int]:
    """The columns of the measures with a value per query (not the system-level ones); duck-typed, as the
    express path's results are rendered too."""
    return [j for j, m in enumerate(r.measures) if not m.family.is_system(m)]


def _full(v: float) -> str:
    return repr(float(v)) if v == v else "nan"


def _short(v: float, count: bool = False) -> str:
    """4 decimals; counts (measures summed over queries) as integers; ``—`` for NaN."""
    if v != v:
        return "—"
    return str(int(v)) if count and float(v).is_integer() else f"{v:.4f}"


def _cells(r: Results, values: Sequence[float], columns: Sequence[int]) -> list[str]:
    return [_short(values[j], r.measures[j].family.aggregate == "sum") for j in columns]


#: the mark after the name of a system-level measure in the table, and the footnote that explains it
SYSTEM_MARK = " †"
SYSTEM_FOOTNOTE = "† system-level: one value per run, no per-query values"


def _label(m: Any) -> str:
    return str(m) + SYSTEM_MARK if m.family.is_system(m) else str(m)


def render_table(
    results: Sequence[Results],
    *,
    per_query: bool,
    segments: Mapping[str, str] | None = None,
    width: int | None = None,
) -> str:
    """A readable table: one column per run (aggregates), or per query rows with ``--per-query``, or per
    segment rows with ``segments``. A table wider than ``width`` (default: the terminal's) is split into
    blocks of columns, each repeating the first column, so no value is lost and no line is wrapped.
    System-level measures (Coverage@k, Gini@k …) are marked ``†`` and a footnote says what that means.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "RR", "NumRet"])
    >>> print(render_table([res], per_query=False, width=40).strip())
    ┏━━━━━━━━━┳━━━━━━━━┓
    ┃ measure ┃    run ┃
    ┡━━━━━━━━━╇━━━━━━━━┩
    │ queries │      1 │
    │ P@1     │ 1.0000 │
    │ RR      │ 1.0000 │
    │ NumRet  │      1 │
    └─────────┴────────┘
    """
    from ranklens.results.fit import terminal_width

    width = width if width is not None else terminal_width()
    if not per_query and segments is None:
        plain = _plain_wide_table(results, width)
        if plain is not None:
            return plain
    from rich.table import Table

    from ranklens.results.fit import column_blocks, console

    buf = io.StringIO()
    con = console(buf, width)

    def number_column(t: Table, header: str) -> None:
        t.add_column(header, justify="right", no_wrap=True, overflow="fold", min_width=6)

    if per_query or segments is not None:
        for r in results:
            n = len(r.query_ids)
            queries = f"{n} quer{'y' if n == 1 else 'ies'}"
            views: list[tuple[str, str, list[tuple[str, Sequence[float]]], str]] = []
            if per_query:
                query_rows: list[tuple[str, Sequence[float]]] = list(zip(r.query_ids, r.value_rows()))
                views.append((f"{r.run} — {queries}", "query", query_rows, "all"))
            if segments is not None:
                parts = r.by_segment(segments)
                rows: list[tuple[str, Sequence[float]]] = [
                    (f"{name} ({len(part.query_ids)})", list(part.aggregates)) for name, part in parts.items()
                ]
                views.append((f"{r.run} — {queries}, {len(parts)} segments", "segment (queries)", rows, f"all ({n})"))
            for title, first, rows, total in views:

                def make(
                    columns: Sequence[int], r: Results = r, title: str = title, first: str = first,
                    rows: list[tuple[str, Sequence[float]]] = rows, total: str = total,
                ) -> Table:
                    t = Table(title=title, title_justify="left")
                    t.add_column(first, overflow="fold")
                    for j in columns:
                        number_column(t, _label(r.measures[j]))
                    for q, row in rows:
                        t.add_row(q, *_cells(r, row, columns))
                    t.add_section()
                    t.add_row(total, *_cells(r, r.aggregates, columns), style="bold")
                    return t

                for t in column_blocks(con, width, make, len(r.measures)):
                    con.print(t)
    else:
        measures = results[0].measures if results else ()

        def make_wide(columns: Sequence[int]) -> Table:
            t = Table()
            t.add_column("measure", no_wrap=True)
            for i in columns:
                number_column(t, results[i].run)
            t.add_row("queries", *(str(len(results[i].query_ids)) for i in columns), style="dim")
            for j, m in enumerate(measures):
                t.add_row(
                    _label(m),
                    *(_short(results[i].aggregates[j], m.family.aggregate == "sum") for i in columns),
                )
            return t

        for t in column_blocks(con, width, make_wide, len(results)):
            con.print(t)
    if any(m.family.is_system(m) for r in results for m in r.measures):
        con.print(SYSTEM_FOOTNOTE, markup=False, highlight=False)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def _plain_wide_table(results: Sequence[Results], width: int | None) -> str | None:
    """The one-block table of measures × runs drawn without rich (:mod:`ranklens.results.box`), or None
    when it needs rich: a system-level measure (its footnote), text that is not plain ASCII (a NaN's
    ``—``), or a table wider than ``width`` (split into blocks)."""
    from ranklens.results.box import box_table, box_width

    measures = results[0].measures if results else ()
    if not results or any(m.family.is_system(m) for r in results for m in r.measures):
        return None
    header = ["measure", *(r.run for r in results)]
    rows = [["queries", *(str(len(r.query_ids)) for r in results)]]
    rows += [
        [_label(m), *(_short(r.aggregates[j], m.family.aggregate == "sum") for r in results)]
        for j, m in enumerate(measures)
    ]
    if width is not None and box_width(header, rows) > width:
        return None
    return box_table(header, rows)
