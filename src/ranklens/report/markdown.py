"""The Markdown report: a summary table with significance letters, then the pairwise rows."""

from __future__ import annotations

from ranklens.comparison import Comparison, ComparisonRow
from ranklens.report._format import (
    DOWN,
    DOWN_RAW,
    UP,
    UP_RAW,
    best,
    better_than,
    legend,
    letters,
    num,
    row_heads,
    stat_cells,
    summary_word,
)

__all__ = ["render_markdown"]


def render_markdown(comparison: Comparison, *, title: str = "System comparison") -> str:
    """GitHub-flavoured Markdown: means per system (best in bold; superscript letters name the systems a
    system beats significantly after correction), then per measure the pairwise table, the per-segment
    table and the cost–quality table."""
    out = [f"# {title}", "", f"_{legend(comparison)}._", ""]
    out += _summary(comparison, None)
    for measure in comparison.measures:
        out += [f"## {measure}", ""]
        out += _pairs(comparison, comparison.select(measure=measure), segment=False)
        seg_rows = comparison.select(measure=measure, overall=False)
        if seg_rows:
            out += [f"### {measure} per segment", ""]
            out += _pairs(comparison, seg_rows, segment=True)
    if comparison.pareto:
        out += [
            "## Cost–quality",
            "",
            (
                "Lower cost is better. A system is dominated when another is at least as good on quality and on "
                "every cost, and strictly better on one."
            ),
            "",
        ]
        cost_names = [c for c, _ in comparison.pareto[0].costs]
        out.append("| measure | system | quality | " + " | ".join(_esc(c) for c in cost_names) + " | Pareto |")
        out.append("|---|---|---:|" + "---:|" * len(cost_names) + "---|")
        for p in comparison.pareto:
            verdict = f"dominated by {', '.join(_esc(s) for s in p.dominated_by)}" if p.dominated else "**front**"
            cells = [_esc(p.measure), _esc(p.system), num(p.quality), *(f"{v:g}" for _, v in p.costs), verdict]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if comparison.notes:
        out += ["## Notes", ""] + [f"- {_esc(n)}" for n in comparison.notes] + [""]
    return "\n".join(out)


def _summary(comparison: Comparison, segment: str | None) -> list[str]:
    tag = letters(comparison)
    n = next((s.n for s in comparison.summary if s.segment == segment), 0)
    lines = [
        (
            f"{summary_word(comparison)} over the {n} queries every system answered. "
            "Superscript letters: significantly better than that system."
        ),
        "",
        "| system | " + " | ".join(_esc(m) for m in comparison.measures) + " |",
        "|---|" + "---:|" * len(comparison.measures),
    ]
    columns = []
    for m in comparison.measures:
        vals = [comparison.mean(s, m, segment) for s in comparison.systems]
        wins = better_than(comparison, m, segment)
        top = best(vals)
        cells = []
        for i, (s, v) in enumerate(zip(comparison.systems, vals)):
            text = f"**{num(v)}**" if i in top else num(v)
            beaten = "".join(sorted(tag[x] for x in wins[s]))
            cells.append(text + (f"<sup>{beaten}</sup>" if beaten else ""))
        columns.append(cells)
    for i, s in enumerate(comparison.systems):
        lines.append(f"| ({tag[s]}) {_esc(s)} | " + " | ".join(col[i] for col in columns) + " |")
    return [*lines, ""]


def _pairs(comparison: Comparison, rows: list[ComparisonRow], *, segment: bool) -> list[str]:
    corr = comparison.options.get("correction", "holm")
    level = f"{100 * (1 - comparison.alpha):g}% CI"
    head = (["segment"] if segment else []) + [
        "system",
        "baseline",
        "n",
        *row_heads(rows),
        "Δ",
        "Δ%",
        level,
        "p",
        f"p ({corr})",
        "d",
        "W/T/L",
        "sig",
    ]
    align = (["---"] if segment else []) + ["---", "---"] + ["---:"] * 10 + [":---:"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        cells = ([_esc(r.segment or "")] if segment else []) + [
            _esc(r.system),
            _esc(r.baseline),
            *stat_cells(r, comparison.alpha),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"{UP}/{DOWN} significant after correction; {UP_RAW}/{DOWN_RAW} before correction only.", ""]
    return lines


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")
