"""Plotly figure specifications (plain dicts, no plotly import) for the HTML report."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ranklens.comparison import Comparison

__all__ = ["difference_figure", "distribution_figure", "pareto_figure", "segment_figure"]

Figure = dict[str, Any]

_GREEN, _RED, _GREY, _BLUE = "#2e7d32", "#c62828", "#9e9e9e", "#1f77b4"


def _layout(title: str, x: str, y: str, **extra: Any) -> dict[str, Any]:
    return {
        # the title sits in its own band below the mode bar (top right, shown on hover), so they never overlap
        "title": {"text": title, "x": 0, "xanchor": "left", "xref": "paper", "y": 1, "yref": "container",
                  "yanchor": "top", "pad": {"t": 30}},
        "xaxis": {"title": {"text": x}, "automargin": True},
        "yaxis": {"title": {"text": y}, "automargin": True, "zeroline": True},
        "margin": {"t": 75, "r": 20, "b": 60, "l": 60},
        "height": 380,
        **extra,
    }


def difference_figure(comparison: Comparison, baseline: str, system: str, measure: str) -> Figure:
    """Per-query differences ``system − baseline`` as bars sorted by delta (green: system better)."""
    queries, xb, xs = comparison.paired_scores(baseline, system, measure)
    d = xs - xb
    order = np.argsort(d, kind="stable")
    ds = d[order].tolist()
    return {
        "data": [
            {
                "type": "bar",
                "x": [queries[i] for i in order],
                "y": ds,
                "marker": {"color": [_GREEN if v > 0 else _RED if v < 0 else _GREY for v in ds]},
                "hovertemplate": "%{x}: %{y:+.4f}<extra></extra>",
            }
        ],
        "layout": _layout(
            f"{measure}: {system} − {baseline} per query, sorted",
            "query",
            f"Δ {measure}",
            xaxis={"title": {"text": "query"}, "type": "category", "automargin": True},
        ),
    }


def distribution_figure(comparison: Comparison, measure: str) -> Figure:
    """The per-query scores of every system on the queries all of them answered (box plot with points)."""
    traces = []
    common = _common(comparison)
    for s in comparison.systems:
        res = comparison.results[s]
        index = {q: i for i, q in enumerate(res.query_ids)}
        col = res.column(measure)
        traces.append(
            {
                "type": "box",
                "name": s,
                "y": [float(col[index[q]]) for q in common],
                "text": common,
                "boxpoints": "all",
                "jitter": 0.4,
                "pointpos": 0,
                "boxmean": True,
                "hovertemplate": "%{text}: %{y:.4f}<extra>" + s + "</extra>",
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            f"{measure}: per-query scores per system ({len(common)} queries)", "system", measure, showlegend=False
        ),
    }


def segment_figure(comparison: Comparison, measure: str) -> Figure:
    """Mean difference per segment (and over all queries) with its confidence interval, one trace per pair."""
    traces = []
    for b, s in comparison.pairs:
        rows = [r for r in comparison.rows if r.measure == measure and (r.baseline, r.system) == (b, s)]
        x = ["all queries" if r.segment is None else r.segment for r in rows]
        y = [_finite(r.diff) for r in rows]
        plus = [_finite(r.ci_high - r.diff) for r in rows]
        minus = [_finite(r.diff - r.ci_low) for r in rows]
        traces.append(
            {
                "type": "bar",
                "name": f"{s} − {b}",
                "x": x,
                "y": y,
                "error_y": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True},
                "text": [
                    f"n={r.n}, p_adj={r.p_value_adjusted:.4f}"
                    if r.p_value_adjusted == r.p_value_adjusted
                    else f"n={r.n}"
                    for r in rows
                ],
                "textposition": "none",
                "hovertemplate": "%{x}: %{y:+.4f} (%{text})<extra>%{fullData.name}</extra>",
            }
        )
    level = f"{100 * (1 - comparison.alpha):g}%"
    aggs = {r.aggregate for r in comparison.rows if r.measure == measure}
    what = "mean difference" if aggs in (set(), {"mean"}) else f"difference of the {'/'.join(sorted(aggs))}s"
    return {
        "data": traces,
        "layout": _layout(
            f"{measure}: {what} per segment with {level} CI", "segment", f"Δ {measure}", barmode="group"
        ),
    }


def pareto_figure(comparison: Comparison, measure: str, cost: str) -> Figure:
    """Quality against one cost; dominated systems grey, the Pareto front joined by a line."""
    points = [p for p in comparison.pareto if p.measure == measure]
    xs = [dict(p.costs)[cost] for p in points]
    ys = [p.quality for p in points]
    front = sorted((x, y) for x, y, p in zip(xs, ys, points) if not p.dominated)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": xs,
                "y": ys,
                "text": [p.system for p in points],
                "textposition": "top center",
                "marker": {"size": 12, "color": [_GREY if p.dominated else _BLUE for p in points]},
                "hovertext": [
                    f"{p.system}: dominated by {', '.join(p.dominated_by)}"
                    if p.dominated
                    else f"{p.system}: on the front"
                    for p in points
                ],
                "hoverinfo": "text",
                "name": "systems",
            },
            {
                "type": "scatter",
                "mode": "lines",
                "x": [x for x, _ in front],
                "y": [y for _, y in front],
                "line": {"dash": "dot", "color": _BLUE},
                "name": "Pareto front",
                "hoverinfo": "skip",
            },
        ],
        "layout": _layout(
            f"{measure} against {cost} (grey: dominated)", f"{cost} (lower is better)", measure, showlegend=False
        ),
    }


def _common(comparison: Comparison) -> list[str]:
    sets = [set(r.query_ids) for r in comparison.results.values()]
    both = set.intersection(*sets)
    first = comparison.results[comparison.systems[0]]
    return [q for q in first.query_ids if q in both]


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None
