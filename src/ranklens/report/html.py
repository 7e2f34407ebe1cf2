"""The self-contained HTML report: tables and plotly charts, with plotly.js inlined (works offline)."""

from __future__ import annotations

import html
import json
from functools import lru_cache
from typing import Any

from ranklens.comparison import Comparison, ComparisonRow
from ranklens.errors import MissingDependencyError
from ranklens.report import charts
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

__all__ = ["plotly_js", "render_html"]

#: At most this many per-query difference charts per measure (one per pair).
MAX_PAIR_CHARTS = 12

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:1rem 2rem;color:#222}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}h3{margin-top:1.4rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{border-bottom:2px solid #999;background:#fafafa}td.l,th.l{text-align:left}
tr.up td{background:#eef7ee}tr.down td{background:#fbeeee}
.legend,.meta{color:#555}.chart{width:100%;min-height:380px}.grid{display:grid;
grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}
sup{color:#1f5fa0}code{background:#f4f4f4;padding:0 .2rem}
"""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """The minified plotly.js bundled with the installed ``plotly`` Python package (no CDN)."""
    try:
        from importlib.resources import files

        return (files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    except ModuleNotFoundError:
        raise MissingDependencyError("plotly", "html", "the HTML report") from None
    except FileNotFoundError:  # pragma: no cover - an unusual plotly layout
        from plotly.offline import get_plotlyjs

        return str(get_plotlyjs())


def render_html(comparison: Comparison, *, title: str = "System comparison") -> str:
    """A single HTML file: the summary table, per measure the pairwise and segment tables with the charts
    (segment differences with CIs, score distributions per system, per-query differences sorted by delta),
    the cost–quality table and Pareto plots when costs were given, and the notes. plotly.js is inlined
    from the installed ``plotly`` package, so the file opens offline."""
    figures: dict[str, Any] = {}

    def chart(fig: dict[str, Any]) -> str:
        fid = f"fig-{len(figures)}"
        figures[fid] = fig
        return f'<div class="chart" id="{fid}"></div>'

    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="legend">{_e(legend(comparison))}.</p>',
        _meta(comparison),
        "<h2>Summary</h2>",
        _summary_table(comparison),
    ]
    for measure in comparison.measures:
        body.append(f'<section class="measure"><h2>{_e(measure)}</h2>')
        body.append(_pair_table(comparison, comparison.select(measure=measure), segment=False))
        seg_rows = comparison.select(measure=measure, overall=False)
        if seg_rows:
            body.append(f"<h3>{_e(measure)} per segment</h3>")
            body.append(_pair_table(comparison, seg_rows, segment=True))
        body.append('<div class="grid">')
        body.append(chart(charts.segment_figure(comparison, measure)))
        body.append(chart(charts.distribution_figure(comparison, measure)))
        body.append("</div>")
        body.append(f"<h3>{_e(measure)}: per-query differences</h3>")
        body.append('<div class="grid">')
        for b, s in comparison.pairs[:MAX_PAIR_CHARTS]:
            body.append(chart(charts.difference_figure(comparison, b, s, measure)))
        body.append("</div>")
        if len(comparison.pairs) > MAX_PAIR_CHARTS:
            body.append(
                f'<p class="meta">Only the first {MAX_PAIR_CHARTS} of {len(comparison.pairs)} pairs are drawn.</p>'
            )
        body.append("</section>")
    if comparison.pareto:
        body.append('<section id="pareto"><h2>Cost–quality</h2>')
        body.append(_pareto_table(comparison))
        body.append('<div class="grid">')
        for measure in comparison.measures:
            for cost, _ in comparison.pareto[0].costs:
                if any(p.measure == measure for p in comparison.pareto):
                    body.append(chart(charts.pareto_figure(comparison, measure, cost)))
        body.append("</div></section>")
    if comparison.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in comparison.notes) + "</ul>")
    payload = json.dumps(figures, allow_nan=False).replace("</", "<\\/")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title>",
            f"<style>{_CSS}</style>",
            f"<script>{plotly_js()}</script>",
            "</head><body>",
            *body,
            f'<script type="application/json" id="ranklens-figures">{payload}</script>',
            "<script>",
            "const figures = JSON.parse(document.getElementById('ranklens-figures').textContent);",
            "for (const [id, fig] of Object.entries(figures)) {",
            "  Plotly.newPlot(id, fig.data, fig.layout, {displaylogo: false, displayModeBar: 'hover', responsive: true});",
            "}",
            "</script>",
            "</body></html>",
            "",
        ]
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _meta(comparison: Comparison) -> str:
    o = comparison.options
    seg = ", ".join(f"{_e(s)} ({n})" for s, n in comparison.segments) or "none"
    return (
        '<p class="meta">'
        f"Systems: {', '.join(_e(s) for s in comparison.systems)}. "
        f"Baseline: {_e(comparison.baseline) if comparison.baseline else 'every pair (earlier system)'}. "
        f"Segments: {seg}. Seed {_e(o.get('seed'))}, {_e(o.get('samples'))} Monte Carlo samples.</p>"
    )


def _summary_table(comparison: Comparison) -> str:
    tag = letters(comparison)
    n = next((s.n for s in comparison.summary if s.segment is None), 0)
    head = '<tr><th class="l">system</th>' + "".join(f"<th>{_e(m)}</th>" for m in comparison.measures) + "</tr>"
    columns = []
    for m in comparison.measures:
        vals = [comparison.mean(s, m) for s in comparison.systems]
        top = best(vals)
        wins = better_than(comparison, m, None)
        cells = []
        for i, (s, v) in enumerate(zip(comparison.systems, vals)):
            text = f"<b>{num(v)}</b>" if i in top else num(v)
            beaten = "".join(sorted(tag[x] for x in wins[s]))
            cells.append(text + (f"<sup>{beaten}</sup>" if beaten else ""))
        columns.append(cells)
    rows = [
        f'<tr><td class="l">({tag[s]}) {_e(s)}</td>' + "".join(f"<td>{col[i]}</td>" for col in columns) + "</tr>"
        for i, s in enumerate(comparison.systems)
    ]
    return (
        f'<p class="meta">{_e(summary_word(comparison))} over the {n} queries every system answered; bold: best per column; superscript '
        "letters: significantly better than that system after correction.</p>"
        f'<table class="summary">{head}{"".join(rows)}</table>'
    )


def _pair_table(comparison: Comparison, rows: list[ComparisonRow], *, segment: bool) -> str:
    corr = comparison.options.get("correction", "holm")
    level = f"{100 * (1 - comparison.alpha):g}% CI"
    heads = (["segment"] if segment else []) + ["system", "baseline"]
    nums = ["n", *row_heads(rows), "Δ", "Δ%", level, "p", f"p ({corr})", "d", "W/T/L", "sig"]
    head = (
        "<tr>"
        + "".join(f'<th class="l">{h}</th>' for h in heads)
        + "".join(f"<th>{_e(h)}</th>" for h in nums)
        + "</tr>"
    )
    body = []
    for r in rows:
        cls = ' class="up"' if r.significant and r.diff > 0 else ' class="down"' if r.significant and r.diff < 0 else ""
        left = ([r.segment or ""] if segment else []) + [r.system, r.baseline]
        right = stat_cells(r, comparison.alpha)
        body.append(
            f"<tr{cls}>"
            + "".join(f'<td class="l">{_e(c)}</td>' for c in left)
            + "".join(f"<td>{_e(c)}</td>" for c in right)
            + "</tr>"
        )
    foot = (
        f'<p class="legend">{UP}/{DOWN} significant after correction; {UP_RAW}/{DOWN_RAW} before correction only.</p>'
    )
    return f'<table class="pairs">{head}{"".join(body)}</table>{foot}'


def _pareto_table(comparison: Comparison) -> str:
    cost_names = [c for c, _ in comparison.pareto[0].costs]
    head = (
        '<tr><th class="l">measure</th><th class="l">system</th><th>quality</th>'
        + "".join(f"<th>{_e(c)}</th>" for c in cost_names)
        + '<th class="l">Pareto</th></tr>'
    )
    rows = []
    for p in comparison.pareto:
        verdict = f"dominated by {', '.join(p.dominated_by)}" if p.dominated else "front"
        rows.append(
            f'<tr><td class="l">{_e(p.measure)}</td><td class="l">{_e(p.system)}</td><td>{num(p.quality)}</td>'
            + "".join(f"<td>{v:g}</td>" for _, v in p.costs)
            + f'<td class="l">{_e(verdict)}</td></tr>'
        )
    return (
        '<p class="meta">Lower cost is better. A system is dominated when another is at least as good on quality '
        "and on every cost, and strictly better on one.</p>"
        f'<table class="pareto">{head}{"".join(rows)}</table>'
    )
