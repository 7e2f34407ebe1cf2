"""Plotly figure specs (``{"data": [...], "layout": {...}}``) built from the page dicts.

The page embeds each figure as JSON in a ``<script type="application/json">`` block and the packaged
``dashboard.js`` draws it with the packaged plotly.js: no inline script, no CDN. Plotly reads a few HTML
tags inside labels, so every user-supplied label is HTML-escaped here first (plotly shows the entities as
text).
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["ab_figures", "overview_figure", "production_figures", "segments_figure", "series_figure"]

GOOD, BAD = "#2ca02c", "#d62728"
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]


def _t(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        # the title sits in its own band below the mode bar (top right, shown on hover), so they never overlap
        "title": {"text": _t(title), "font": {"size": 15}, "x": 0, "xanchor": "left", "xref": "paper",
                  "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 30}},
        "margin": {"l": 55, "r": 20, "t": 72, "b": 45},
        "height": 380,
        "legend": {"orientation": "h", "y": -0.18},
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def overview_figure(page: dict[str, Any]) -> dict[str, Any]:
    """Grouped bars: latest value of every measure per system."""
    data = []
    for i, row in enumerate(page["systems"]):
        data.append(
            {
                "type": "bar",
                "name": _t(row["system"]),
                "x": [_t(c["measure"]) for c in row["values"]],
                "y": [c["value"] for c in row["values"]],
                "marker": {"color": COLOURS[i % len(COLOURS)]},
            }
        )
    return {"data": data, "layout": _layout("Latest value per system", barmode="group", yaxis={"rangemode": "tozero"})}


def series_figure(page: dict[str, Any], title: str | None = None) -> dict[str, Any]:
    """Lines per system, dashed threshold lines, and alert markers at the snapshot that fired."""
    data: list[dict[str, Any]] = []
    xs: list[str] = []
    for i, ser in enumerate(page["series"]):
        x = [p["at"] for p in ser["points"]]
        xs.extend(x[:1] + x[-1:])
        band = [p for p in ser["points"] if p.get("ci_low") is not None]
        if band:  # the 95% interval of the mean: a dip inside it is noise, not a regression
            colour = COLOURS[i % len(COLOURS)]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": _t(f"{ser['system']} 95% CI"),
                    "x": [p["at"] for p in band] + [p["at"] for p in reversed(band)],
                    "y": [p["ci_high"] for p in band] + [p["ci_low"] for p in reversed(band)],
                    "fill": "toself",
                    "fillcolor": _alpha(colour, 0.15),
                    "line": {"width": 0, "color": _alpha(colour, 0.15)},
                    "hoverinfo": "skip",
                    "legendgroup": _t(ser["system"]),
                }
            )
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _t(ser["system"]),
                "x": x,
                "y": [p["value"] for p in ser["points"]],
                "text": [_t(p.get("on") or "") for p in ser["points"]],  # "on 35 of 50 queries" (missing: skip)
                "marker": {"size": 4, "color": COLOURS[i % len(COLOURS)]},
                "line": {"width": 1.5, "color": COLOURS[i % len(COLOURS)]},
            }
        )
    if xs:
        lo, hi = min(xs), max(xs)
        for t in page["thresholds"]:
            who = f" ({t['system']})" if t["system"] else ""
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": _t(f"threshold {t['op']} {t['value']:g}{who}"),
                    "x": [lo, hi],
                    "y": [t["value"], t["value"]],
                    "line": {"dash": "dash", "color": "#555", "width": 1},
                    "hoverinfo": "name",
                }
            )
    fired = [a for a in page["alerts"] if a["value"] is not None]
    if fired:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "alerts",
                "x": [a["started_at"] for a in fired],
                "y": [a["value"] for a in fired],
                "text": [_t(f"{a['system']}: {a['rule']} ({a['state']})") for a in fired],
                "hoverinfo": "text+x+y",
                "marker": {"symbol": "x", "size": 12, "color": "#d62728", "line": {"width": 2}},
            }
        )
    seg = f" — segment {page['segment']}" if page.get("segment") else ""
    layout = _layout(title or f"{page['measure']} over time{seg}", xaxis={"type": "date"})
    periods = _alert_periods(page["alerts"], max(xs) if xs else None)
    if periods:
        layout["shapes"] = periods
    return {"data": data, "layout": layout}


def _alert_periods(alerts: list[dict[str, Any]], last: str | None) -> list[dict[str, Any]]:
    """A shaded band over the time each alert covered, from its start to its resolution (or the newest
    point while it fires): a resolved alert stays visible where it was."""
    out = []
    for a in alerts:
        end = a.get("resolved_at") or last
        if a.get("started_at") is None or end is None:
            continue
        out.append({
            "type": "rect", "xref": "x", "yref": "paper", "x0": a["started_at"], "x1": end, "y0": 0, "y1": 1,
            "fillcolor": "rgba(214,39,40,0.10)" if a["state"] == "firing" else "rgba(120,120,120,0.12)",
            "line": {"width": 0}, "layer": "below",
        })
    return out


def _alpha(colour: str, a: float) -> str:
    r, g, b = int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
    return f"rgba({r},{g},{b},{a})"


def segments_figure(page: dict[str, Any]) -> dict[str, Any]:
    data = []
    segs = [row["segment"] for row in page["segments"]]
    for i, system in enumerate(page["systems"]):
        data.append(
            {
                "type": "bar",
                "name": _t(system),
                "x": [_t(s) for s in segs],
                "y": [row["values"].get(system) for row in page["segments"]],
                "marker": {"color": COLOURS[i % len(COLOURS)]},
            }
        )
    xs, ys, texts = [], [], []
    for row in page["segments"]:
        for bound in row.get("thresholds", []):  # "> 0.85": the rules that apply in the segment
            xs.append(_t(row["segment"]))
            ys.append(float(bound.split()[-1]))
            texts.append(_t(f"rule {bound}"))
    if xs:
        data.append({
            "type": "scatter", "mode": "markers", "name": "rule bound", "x": xs, "y": ys, "text": texts,
            "hoverinfo": "text+x", "marker": {"symbol": "line-ew-open", "size": 44, "color": "#555", "line": {"width": 2}},
        })
    return {"data": data, "layout": _layout(f"{page['measure']} per segment (latest snapshot)", barmode="group")}


def ab_figures(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The two systems over time, and the per-query differences candidate − baseline, sorted: green where
    the candidate is better, red where it is worse (the orientation of ``ranklens compare``)."""
    base, cand = page["baseline"], page["candidate"]
    figs = {
        "ab-series": series_figure(
            {"series": page["series"], "thresholds": [], "alerts": [], "measure": page["measure"], "segment": page["segment"]},
            title=f"{cand} (candidate) vs {base} (baseline): {page['measure']} over time",
        )
    }
    rows = page["per_query"]
    figs["ab-diff"] = {
        "data": [
            {
                "type": "bar",
                "x": [_t(r["query"]) for r in rows],
                "y": [r["difference"] for r in rows],
                "marker": {"color": [GOOD if r["difference"] > 0 else BAD if r["difference"] < 0 else "#888" for r in rows]},
                "name": _t(f"{cand} − {base}"),
            }
        ],
        "layout": _layout(
            f"Per-query difference candidate − baseline: {cand} − {base} ({page['measure']}; green = candidate better)",
            xaxis={"type": "category", "showticklabels": len(rows) <= 60, "automargin": True},
            yaxis={"zeroline": True, "title": {"text": _t(f"{cand} − {base}")}},
        ),
    }
    return figs


def production_figures(page: dict[str, Any]) -> dict[str, Any]:
    """The live page: one chart per measure (a line per segment × system; closed windows filled, provisional
    ones hollow, the interval as error bars), score drift (PSI per window, flagged windows in red) and the
    ingestion throughput (rows received per minute over the last hour)."""
    figures: dict[str, Any] = {}
    measures: list[str] = []
    for w in page["windows"]:
        if w["measure"] not in measures:
            measures.append(w["measure"])
    for mi, measure in enumerate(measures):
        lines: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for w in page["windows"]:
            if w["measure"] == measure and w["value"] is not None:
                lines.setdefault((w["segment"], w["system"]), []).append(w)
        data = []
        for i, ((segment, system), points) in enumerate(sorted(lines.items())):
            colour = COLOURS[i % len(COLOURS)]
            data.append({
                "type": "scatter", "mode": "lines+markers", "name": _t(f"{segment} · {system}"),
                "x": [p["start"] for p in points], "y": [p["value"] for p in points],
                "text": [_t(f"n = {p['n']}" + (", provisional" if p["provisional"] else "")) for p in points],
                "error_y": {"type": "data", "symmetric": False, "color": _alpha(colour, 0.5),
                            "array": [(p["ci"][1] - p["value"]) if p["ci"][1] is not None else 0 for p in points],
                            "arrayminus": [(p["value"] - p["ci"][0]) if p["ci"][0] is not None else 0 for p in points]},
                "marker": {"size": 8, "color": colour, "symbol": ["circle-open" if p["provisional"] else "circle" for p in points]},
                "line": {"width": 1.5, "color": colour},
            })
        figures[f"live-{mi}"] = {"data": data, "layout": _layout(f"{measure} per window (hollow: provisional)", xaxis={"type": "date"})}
    drift = [d for d in page["drift"] if d["what"] == "score" and d["psi"] is not None]
    if drift:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for d in drift:
            groups.setdefault((d["segment"], d["system"]), []).append(d)
        data = [{
            "type": "scatter", "mode": "lines+markers", "name": _t(f"{segment} · {system}"),
            "x": [d["start"] for d in rows], "y": [d["psi"] for d in rows],
            "marker": {"size": 8, "color": [BAD if d["flag"] else COLOURS[i % len(COLOURS)] for d in rows]},
            "line": {"width": 1, "color": COLOURS[i % len(COLOURS)]},
        } for i, ((segment, system), rows) in enumerate(sorted(groups.items()))]
        figures["drift"] = {"data": data, "layout": _layout("Score drift vs the reference window (PSI; red: flagged)",
                                                             xaxis={"type": "date"}, yaxis={"rangemode": "tozero"})}
    through = page["ingest"]["throughput"]
    if through:
        x = [t["minute"] for t in through]
        figures["throughput"] = {"data": [
            {"type": "bar", "name": "impressions", "x": x, "y": [t["impressions"] for t in through], "marker": {"color": COLOURS[0]}},
            {"type": "bar", "name": "events", "x": x, "y": [t["events"] for t in through], "marker": {"color": COLOURS[4]}},
        ], "layout": _layout("Received per minute (last hour)", barmode="group", xaxis={"type": "date"})}
    return figures
