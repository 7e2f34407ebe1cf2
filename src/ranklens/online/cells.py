"""The text of an A/B report, shared by every format: the legend, the sample-ratio line, the rows and cells of
the table, the CUPED and sequential lines."""

from __future__ import annotations

from typing import Any

from ranklens.online.experiment import ABResult
from ranklens.report._format import num, pct, pval, signed

__all__ = ["HEAD", "cells", "extras", "legend", "rows", "srm_line"]

_TEST = {"welch": "Welch's t-test", "mannwhitney": "Mann–Whitney U", "bootstrap": "bootstrap (Welch statistic)"}
_CORR = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg", "none": "no"}


def legend(result: ABResult) -> str:
    """One sentence: the design, the test, the correction, alpha and the interval."""
    o = result.options
    level = round(100 * (1 - float(o["alpha"])), 2)
    return (
        f"between-subjects (each user saw one arm); {_TEST[o['test']]}, {_CORR[o['correction']]} correction over "
        f"the measures, α = {o['alpha']:g}; {level:g}% {o['ci']} interval of treatment − control; relative lift "
        "by the delta method"
    )


def rows(result: ABResult) -> list[tuple[str, str | None, dict[str, Any]]]:
    """``(measure, segment or None, row)`` of every row: each measure overall, then its segments."""
    out: list[tuple[str, str | None, dict[str, Any]]] = []
    for m, row in result.measures.items():
        if "p" in row:
            out.append((m, None, row))
        for seg, srow in row.get("segments", {}).items():
            out.append((m, seg, srow))
    return out


def cells(m: str, seg: str | None, r: dict[str, Any]) -> list[str]:
    """The formatted cells of one row (measure, segment) of the table, in :data:`HEAD` order."""
    c, t = r["control"], r["treatment"]
    lo, hi = r["ci"]
    llo, lhi = r["relative_lift_ci"]
    mark = ("▲" if r["difference"] > 0 else "▼") if r.get("significant") else ""
    return [
        m if seg is None else f"{m} [{seg}]",
        f"{c['n']}", f"{num(c['mean'])} ± {num(c['sd'], 3)}",
        f"{t['n']}", f"{num(t['mean'])} ± {num(t['sd'], 3)}",
        signed(r["difference"]), f"[{signed(lo)}, {signed(hi)}]",
        f"{pct(r['relative_lift'])} [{pct(llo)}, {pct(lhi)}]",
        pval(r["p"]["welch"]), pval(r["p"]["mannwhitney"]), pval(r["p"]["bootstrap"]),
        pval(r.get("p_adjusted", float("nan"))) + (f" {mark}" if mark else ""),
    ]


HEAD = [
    "measure", "n ctrl", "control mean ± sd", "n treat", "treatment mean ± sd", "Δ", "CI", "lift [CI]",
    "p Welch", "p MW", "p boot", "p adj.",
]


def extras(result: ABResult) -> list[str]:
    """The CUPED and sequential lines under the table."""
    lines = []
    for m, seg, r in rows(result):
        name = m if seg is None else f"{m} [{seg}]"
        if "cuped" in r:
            cu = r["cuped"]
            lines.append(
                f"CUPED {name}: Δ {signed(cu['difference'])} [{signed(cu['ci'][0])}, {signed(cu['ci'][1])}], "
                f"p {pval(cu['p'])}, variance reduced by {100 * cu['variance_reduction']:.1f}% "
                f"(users without a pre-period value: {cu['users_without_pre']['control']} control, "
                f"{cu['users_without_pre']['treatment']} treatment; {cu['missing_pre']})"
            )
        if "sequential" in r:
            sq = r["sequential"]
            lines.append(
                f"sequential {name}: always-valid p {pval(sq['p'])}, confidence sequence "
                f"[{signed(sq['ci'][0])}, {signed(sq['ci'][1])}] after {sq['looks']} look(s), τ = {sq['tau']:.4g}"
            )
    if any("sequential" in r for _, _, r in rows(result)):
        lines.append(f"(the sequential p-value is an {next(r['sequential']['kind'] for _, _, r in rows(result) if 'sequential' in r)})")
    return lines


def srm_line(result: ABResult) -> str:
    """The sample-ratio line: counts, planned split, source, χ² p and the verdict."""
    s = result.srm
    counts = ", ".join(f"{k} {v}" for k, v in s["counts"].items())
    return f"sample ratio: {counts} (planned {s['expected_split'][0]:g}:{s['expected_split'][1]:g}, from {s['source']}): χ² p = {pval(s['p'])}" + (
        " — MISMATCH" if s["mismatch"] else " — no mismatch"
    )
