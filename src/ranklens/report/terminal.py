"""The terminal report: rich tables of the pairwise rows, with significance markers."""

from __future__ import annotations

import io
from collections.abc import Sequence

from ranklens.comparison import Comparison, ComparisonRow
from ranklens.comparison.rows import aggregate_name, is_system
from ranklens.report._format import (
    DOWN,
    DOWN_RAW,
    UP,
    UP_RAW,
    legend,
    num,
    signed,
    stat_cells,
)

__all__ = ["render_table"]


#: Columns of the pairwise tables, and the order in which they are left out when the terminal is narrow
#: (least important first); system, baseline, Δ, the interval, the corrected p and the marker always stay.
_DROP = ("Δ%", "d", "p", "n", "W/T/L", "mean base", "mean sys")


def render_table(
    comparison: Comparison, *, width: int | None = None, color: bool = False, worst: int | None = None
) -> str:
    """The comparison as text tables: per measure, one row per (baseline, system) pair, then one table per
    measure across segments, then the Pareto table when costs were given, then with ``worst`` the
    ``worst`` queries with the largest drop of every pair and measure.

    ▲/▼ mark a difference significant after correction (system better/worse than its baseline), △/▽ one
    significant only before correction. Tables fit ``width`` (default: the terminal's; no limit when
    writing to a file or pipe): low-priority columns are left out, with a note naming them.
    """
    from ranklens.results.fit import terminal_width

    width = width if width is not None else terminal_width()
    if width is None and not color and not worst and not comparison.pareto:
        plain = _plain_tables(comparison)
        if plain is not None:
            return plain
    from rich.table import Table

    from ranklens.results.fit import console, drop_to_fit
    buf = io.StringIO()
    con = console(buf, width, color=color)
    alpha = comparison.alpha
    level = f"{100 * (1 - alpha):g}% CI"
    corr = comparison.options.get("correction", "holm")
    hidden: dict[str, None] = {}

    def pairwise(title: str, rows: list[ComparisonRow], segment: bool, agg: str = "mean") -> None:
        names = _names(level, corr, segment=segment, agg=agg)
        drop = [f"{agg} {d.split()[1]}" if d in ("mean base", "mean sys") else d for d in _DROP]

        def make(visible: Sequence[str]) -> Table:
            t = Table(title=title, title_justify="left")
            for name in visible:
                _column(t, name)
            for r in rows:
                cells = dict(zip(names, _cells(r, alpha, segment=segment)))
                t.add_row(*(cells[n] for n in visible), style=_style(r) if color else None)
            return t

        table, dropped = drop_to_fit(con, width, make, names, [_label(d, level, corr) for d in drop])
        hidden.update(dict.fromkeys(dropped))
        con.print(table)

    for measure in comparison.measures:
        scope = "system-level (one value per run): no paired test, no p-value" if is_system(measure) else "all queries"
        agg = "mean" if is_system(measure) else aggregate_name(measure)
        pairwise(f"{measure} — {scope}{_aggregate_words(agg)}", comparison.select(measure=measure), False, agg)
    if comparison.segments:
        for measure in comparison.measures:
            rows = comparison.select(measure=measure, overall=False)
            if rows:
                agg = aggregate_name(measure)
                pairwise(f"{measure} — per segment{_aggregate_words(agg)}", rows, True, agg)
    if comparison.pareto:
        t = Table(title="cost–quality (lower cost is better)", title_justify="left")
        t.add_column("measure", overflow="fold")
        t.add_column("system", overflow="fold")
        t.add_column("quality", justify="right", no_wrap=True)
        cost_names = [c for c, _ in comparison.pareto[0].costs]
        for c in cost_names:
            t.add_column(c, justify="right", no_wrap=True, overflow="fold")
        t.add_column("Pareto", overflow="fold")
        for p in comparison.pareto:
            verdict = f"dominated by {', '.join(p.dominated_by)}" if p.dominated else "front"
            t.add_row(p.measure, p.system, num(p.quality), *(f"{v:g}" for _, v in p.costs), verdict)
        con.print(t)
    if worst:
        _worst_tables(con, comparison, worst)
    if hidden:
        con.print(f"(left out to fit {width} columns: {', '.join(hidden)}; a wider terminal or -f markdown shows them)")
    con.print(
        f"{UP}/{DOWN} significant after correction, {UP_RAW}/{DOWN_RAW} before correction only: {legend(comparison)}."
    )
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def _plain_tables(comparison: Comparison) -> str | None:
    """The pairwise tables and the legend without rich (:func:`ranklens.results.box.aligned_table`), when
    nothing limits the width (a file or a pipe: no column is left out) and rich would print every text as
    written; None otherwise. ``tests/report/test_terminal_plain.py`` checks them against rich."""
    from ranklens.results.box import aligned_table, plain_text

    alpha = comparison.alpha
    level = f"{100 * (1 - alpha):g}% CI"
    corr = comparison.options.get("correction", "holm")
    tables: list[tuple[str, list[ComparisonRow], bool, str]] = []
    for measure in comparison.measures:
        scope = "system-level (one value per run): no paired test, no p-value" if is_system(measure) else "all queries"
        agg = "mean" if is_system(measure) else aggregate_name(measure)
        tables.append((f"{measure} — {scope}{_aggregate_words(agg)}", comparison.select(measure=measure), False, agg))
    if comparison.segments:
        for measure in comparison.measures:
            rows = comparison.select(measure=measure, overall=False)
            if rows:
                agg = aggregate_name(measure)
                tables.append((f"{measure} — per segment{_aggregate_words(agg)}", rows, True, agg))
    out = []
    for title, rows, segment, agg in tables:
        names = _names(level, corr, segment=segment, agg=agg)
        align = "".join("l" if n in ("segment", "system", "baseline") else ("c" if n == "" else "r") for n in names)
        text = aligned_table(names, [_cells(r, alpha, segment=segment) for r in rows], align, title)
        if text is None:
            return None
        out.append(text)
    last = f"{UP}/{DOWN} significant after correction, {UP_RAW}/{DOWN_RAW} before correction only: {legend(comparison)}."
    if not plain_text(last):
        return None
    return "".join(out) + last.rstrip() + "\n"


def _worst_tables(con: object, comparison: Comparison, n: int) -> None:
    from rich.table import Table

    drops = comparison.worst(n)
    for b, s in comparison.pairs:
        for m in comparison.measures:
            items = [d for d in drops if (d.baseline, d.system, d.measure) == (b, s, m)]
            con.print(f"{m} — largest drops of {s} against {b}")  # type: ignore[attr-defined]
            t = Table()
            t.add_column("query", overflow="fold")
            t.add_column(b, justify="right", no_wrap=True, overflow="fold")
            t.add_column(s, justify="right", no_wrap=True, overflow="fold")
            t.add_column("Δ", justify="right", no_wrap=True)
            for d in items:
                t.add_row(str(d.query_id), num(d.value_baseline), num(d.value_system), signed(d.delta))
            if not items:
                t.add_row("(no query dropped)", "", "", "")
            con.print(t)  # type: ignore[attr-defined]


def _label(name: str, level: str, corr: str) -> str:
    return level if name == "CI" else (f"p ({corr})" if name == "p (corr)" else name)


def _aggregate_words(agg: str) -> str:
    """What the rows of a measure aggregated by ``agg`` compare (nothing to add for the mean)."""
    if agg == "mean":
        return ""
    what = "medians" if agg == "median" else f"{agg} values"
    return f" (difference of {what}: paired randomisation test, bootstrap percentile interval)"


def _names(level: str, corr: str, *, segment: bool, agg: str = "mean") -> list[str]:
    names = ["segment"] if segment else []
    names += ["system", "baseline", "n", f"{agg} base", f"{agg} sys", "Δ", "Δ%", level, "p", f"p ({corr})", "d"]
    names += ["W/T/L", ""]
    return names


def _column(t: object, name: str) -> None:
    add = t.add_column  # type: ignore[attr-defined]
    if name in ("segment", "system", "baseline"):
        add(name, overflow="fold", min_width=min(len(name), 8))
    elif name == "":
        add(name, justify="center", no_wrap=True)
    else:
        add(name, justify="right", no_wrap=True)


def _cells(r: ComparisonRow, alpha: float, *, segment: bool) -> list[str]:
    cells = [r.segment or ""] if segment else []
    cells += [r.system, r.baseline, *stat_cells(r, alpha)]
    return cells


def _style(r: ComparisonRow) -> str | None:
    if not r.significant:
        return None
    return "green" if r.diff > 0 else "red"
