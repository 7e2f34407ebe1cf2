"""The self-contained HTML report of an A/B test: the sample-ratio line (a mismatch first, in red), the table,
per measure the per-arm distributions, the intervals of the difference (Welch, CUPED, sequential), the relative
lift with its interval and, with
exposure times, the cumulative sequential interval over time; plotly.js inlined (opens offline)."""

from __future__ import annotations

import html
import json
from typing import Any

from ranklens.online.cells import HEAD, cells, extras, legend, rows, srm_line
from ranklens.online.experiment import ABResult

__all__ = ["render_ab_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:1rem 2rem;color:#222}h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{border-bottom:2px solid #999;background:#fafafa}td.l,th.l{text-align:left}
.warning{background:#fdecea;border:2px solid #c62828;color:#8e0000;padding:.6rem 1rem;font-weight:600}
.legend,.meta{color:#555}.chart{width:100%;min-height:380px}.grid{display:grid;
grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}
"""
_BLUE, _ORANGE, _GREEN = "#1f77b4", "#ff7f0e", "#2e7d32"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _layout(title: str, x: str, y: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "xaxis": {"title": {"text": x}, "automargin": True},
        "yaxis": {"title": {"text": y}, "automargin": True, "zeroline": True},
        "margin": {"t": 60, "r": 20, "b": 60, "l": 60},
        "height": 380,
        **extra,
    }


def _distribution(result: ABResult, measure: str) -> dict[str, Any]:
    xc, xt = result.values[measure]
    arms = result.arms
    return {
        "data": [
            {"type": "violin", "y": xc.tolist(), "name": arms["control"], "box": {"visible": True},
             "meanline": {"visible": True}, "line": {"color": _BLUE}, "points": False, "spanmode": "hard"},
            {"type": "violin", "y": xt.tolist(), "name": arms["treatment"], "box": {"visible": True},
             "meanline": {"visible": True}, "line": {"color": _ORANGE}, "points": False, "spanmode": "hard"},
        ],
        "layout": _layout(f"{measure}: per-user values per arm", "arm", measure),
    }


def _intervals(result: ABResult, measure: str) -> dict[str, Any]:
    row = result.measures[measure]
    names, mids, lows, highs = ["difference"], [row["difference"]], [row["ci"][0]], [row["ci"][1]]
    for key, label in (("cuped", "CUPED"), ("sequential", "sequential")):
        if key in row:
            mid = row[key].get("difference", row["difference"])
            names.append(label)
            mids.append(mid)
            lows.append(row[key]["ci"][0])
            highs.append(row[key]["ci"][1])
    lift = row["relative_lift"]
    return {
        "data": [{
            "type": "scatter", "mode": "markers", "x": mids, "y": names, "marker": {"color": _GREEN, "size": 10},
            "error_x": {"type": "data", "symmetric": False, "array": [h - m for h, m in zip(highs, mids)],
                        "arrayminus": [m - lo for m, lo in zip(mids, lows)]},
            "hovertemplate": "%{y}: %{x:+.4f}<extra></extra>",
        }],
        "layout": _layout(
            f"{measure}: {result.arms['treatment']} − {result.arms['control']} (lift {100 * lift:+.1f}%)",
            f"Δ {measure}", "", shapes=[{"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1,
                                           "line": {"color": "#999", "dash": "dot"}}],
        ),
    }


def _lift(result: ABResult, measure: str) -> dict[str, Any]:
    """The relative lift (treatment − control) / control with its delta-method interval, in per cent."""
    row = result.measures[measure]
    lift, (low, high) = row["relative_lift"], row["relative_lift_ci"]
    level = round(100 * (1 - float(result.options["alpha"])), 2)
    return {
        "data": [{
            "type": "scatter", "mode": "markers", "x": [100 * lift], "y": ["relative lift"],
            "marker": {"color": _GREEN if low > 0 else "#c62828" if high < 0 else "#555", "size": 12},
            "error_x": {"type": "data", "symmetric": False, "array": [100 * (high - lift)], "arrayminus": [100 * (lift - low)]},
            "hovertemplate": "lift %{x:+.2f}%<extra></extra>",
        }],
        "layout": _layout(
            f"{measure}: relative lift {100 * lift:+.1f}% [{100 * low:+.1f}%, {100 * high:+.1f}%] ({level:g}%, delta method)",
            "lift of the treatment over the control (%)", "", height=220,
            shapes=[{"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1, "line": {"color": "#999", "dash": "dot"}}],
        ),
    }


def _sequential_path(result: ABResult, measure: str) -> dict[str, Any] | None:
    path = result.measures[measure].get("sequential", {}).get("path")
    if not path:
        return None
    t = [p["time"] for p in path]
    return {
        "data": [
            {"type": "scatter", "mode": "lines", "x": t, "y": [p["ci"][1] for p in path], "line": {"width": 0},
             "showlegend": False, "hoverinfo": "skip"},
            {"type": "scatter", "mode": "lines", "x": t, "y": [p["ci"][0] for p in path], "fill": "tonexty",
             "line": {"width": 0}, "name": "confidence sequence", "fillcolor": "rgba(46,125,50,0.2)"},
            {"type": "scatter", "mode": "lines+markers", "x": t, "y": [p["difference"] for p in path],
             "name": "difference", "line": {"color": _GREEN}},
        ],
        "layout": _layout(f"{measure}: cumulative difference and its always-valid interval", "time", f"Δ {measure}",
                          xaxis={"title": {"text": "time"}, "type": "category", "automargin": True}),
    }


def render_ab_html(result: ABResult, *, title: str | None = None) -> str:
    """One HTML file: warnings first, the legend, the sample-ratio line, the table, per measure the charts,
    the CUPED/sequential lines and the notes."""
    from ranklens.report.html import plotly_js

    figures: dict[str, Any] = {}

    def chart(fig: dict[str, Any] | None) -> str:
        if fig is None:
            return ""
        fid = f"fig-{len(figures)}"
        figures[fid] = fig
        return f'<div class="chart" id="{fid}"></div>'

    heading = title or f"A/B test: {result.arms['treatment']} vs {result.arms['control']}"
    body = [f'<p class="warning">{_e(w)}</p>' for w in result.warnings]
    body += [f"<h1>{_e(heading)}</h1>", f'<p class="legend">{_e(legend(result))}.</p>', f'<p class="meta">{_e(srm_line(result))}</p>']
    head = "<tr>" + "".join(f'<th{" class=l" if i == 0 else ""}>{_e(h)}</th>' for i, h in enumerate(HEAD)) + "</tr>"
    trs = [
        "<tr>" + "".join(f'<td{" class=l" if i == 0 else ""}>{_e(c)}</td>' for i, c in enumerate(cells(m, seg, r))) + "</tr>"
        for m, seg, r in rows(result)
    ]
    body.append(f"<table>{head}{''.join(trs)}</table>")
    body += [f'<p class="meta">{_e(line)}</p>' for line in extras(result)]
    for measure in result.measures:
        if measure not in result.values:
            continue
        body.append(f"<h2>{_e(measure)}</h2><div class=\"grid\">")
        body += [
            chart(_distribution(result, measure)), chart(_intervals(result, measure)), chart(_lift(result, measure)),
            chart(_sequential_path(result, measure)),
        ]
        body.append("</div>")
    if result.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in result.notes) + "</ul>")
    payload = json.dumps(figures, allow_nan=False).replace("</", "<\\/")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{_e(heading)}</title>",
        f"<style>{_CSS}</style>", f"<script>{plotly_js()}</script>", "</head><body>", *body,
        f'<script type="application/json" id="ranklens-figures">{payload}</script>',
        "<script>const figures = JSON.parse(document.getElementById('ranklens-figures').textContent);",
        "for (const [id, fig] of Object.entries(figures)) {",
        "  Plotly.newPlot(id, fig.data, fig.layout, {displaylogo: false, displayModeBar: 'hover', responsive: true});",
        "}</script>", "</body></html>", "",
    ])
