"""The terminal report: rich tables of the pairwise rows, with significance markers."""

from __future__ import annotations

import io

from ranklens.compare import Comparison, ComparisonRow
from ranklens.report._format import (
    DOWN,
    DOWN_RAW,
    UP,
    UP_RAW,
    legend,
    num,
    stat_cells,
)

__all__ = ["render_table"]


def render_table(comparison: Comparison, *, width: int | None = None, color: bool = False) -> str:
    """The comparison as text tables: per measure, one row per (baseline, system) pair, then one table per
    measure across segments, then the Pareto table when costs were given.

    ▲/▼ mark a difference significant after correction (system better/worse than its baseline), △/▽ one
    significant only before correction.
    """
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or 240,
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
    )
    alpha = comparison.alpha
    level = f"{100 * (1 - alpha):g}% CI"
    corr = comparison.options.get("correction", "holm")
    for measure in comparison.measures:
        rows = comparison.select(measure=measure)
        t = Table(title=f"{measure} — all queries", title_justify="left")
        _columns(t, level, corr, segment=False)
        for r in rows:
            t.add_row(*_cells(r, alpha, segment=False), style=_style(r) if color else None)
        console.print(t)
    if comparison.segments:
        for measure in comparison.measures:
            rows = comparison.select(measure=measure, overall=False)
            if not rows:
                continue
            t = Table(title=f"{measure} — per segment", title_justify="left")
            _columns(t, level, corr, segment=True)
            for r in rows:
                t.add_row(*_cells(r, alpha, segment=True), style=_style(r) if color else None)
            console.print(t)
    if comparison.pareto:
        t = Table(title="cost–quality (lower cost is better)", title_justify="left")
        t.add_column("measure")
        t.add_column("system")
        t.add_column("quality", justify="right")
        cost_names = [c for c, _ in comparison.pareto[0].costs]
        for c in cost_names:
            t.add_column(c, justify="right")
        t.add_column("Pareto")
        for p in comparison.pareto:
            verdict = f"dominated by {', '.join(p.dominated_by)}" if p.dominated else "front"
            t.add_row(p.measure, p.system, num(p.quality), *(f"{v:g}" for _, v in p.costs), verdict)
        console.print(t)
    console.print(
        f"{UP}/{DOWN} significant after correction, {UP_RAW}/{DOWN_RAW} before correction only: {legend(comparison)}."
    )
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def _columns(t: object, level: str, corr: str, *, segment: bool) -> None:
    add = t.add_column  # type: ignore[attr-defined]
    if segment:
        add("segment")
    add("system")
    add("baseline")
    add("n", justify="right")
    add("mean base", justify="right")
    add("mean sys", justify="right")
    add("Δ", justify="right")
    add("Δ%", justify="right")
    add(level, justify="right")
    add("p", justify="right")
    add(f"p ({corr})", justify="right")
    add("d", justify="right")
    add("W/T/L", justify="right")
    add("", justify="center")


def _cells(r: ComparisonRow, alpha: float, *, segment: bool) -> list[str]:
    cells = [r.segment or ""] if segment else []
    cells += [r.system, r.baseline, *stat_cells(r, alpha)]
    return cells


def _style(r: ComparisonRow) -> str | None:
    if not r.significant:
        return None
    return "green" if r.diff > 0 else "red"
