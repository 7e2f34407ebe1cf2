"""Reports of an :class:`~ranklens.online.experiment.ABResult`: terminal text, Markdown and JSON. A sample-ratio
mismatch is the first line of every one of them."""

from __future__ import annotations

from typing import Any

from ranklens.errors import InputError
from ranklens.online.experiment import ABResult
from ranklens.report._format import num, pct, pval, signed

__all__ = ["AB_FORMATS", "HEAD", "cells", "extras", "legend", "render_ab", "rows", "srm_line"]

AB_FORMATS = ("table", "markdown", "latex", "json", "html")
_TEST = {"welch": "Welch's t-test", "mannwhitney": "Mann–Whitney U", "bootstrap": "bootstrap (Welch statistic)"}
_CORR = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg", "none": "no"}


def render_ab(result: ABResult, fmt: str = "table") -> str:
    """The report of ``result`` in ``fmt`` (``table``, ``markdown``, ``latex``, ``json`` or ``html``).

    >>> qc = {"u1": {"a": 1}, "u2": {"a": 1}, "u3": {"b": 1}}
    >>> rc = {"u1": {"a": 2.0, "b": 1.0}, "u2": {"b": 2.0, "a": 1.0}, "u3": {"a": 2.0, "b": 1.0}}
    >>> qt = {"u4": {"a": 1}, "u5": {"b": 1}, "u6": {"a": 1}}
    >>> rt = {"u4": {"a": 2.0, "b": 1.0}, "u5": {"b": 2.0, "a": 1.0}, "u6": {"b": 2.0, "a": 1.0}}
    >>> from ranklens.online import ab
    >>> r = ab(qc, rc, qt, rt, ["P@1"], samples=100, names=("c", "t"))
    >>> render_ab(r, "markdown").splitlines()[0]
    '# A/B test: t vs c'
    """
    key = fmt.lower()
    if key == "json":
        return result.to_json() + "\n"
    if key in ("markdown", "md"):
        return _markdown(result)
    if key in ("table", "txt"):
        return _table(result)
    if key in ("latex", "tex"):
        return _latex(result)
    if key == "html":
        from ranklens.online.html import render_ab_html

        return render_ab_html(result)
    raise InputError(f"unknown A/B report format {fmt!r}; expected one of {', '.join(AB_FORMATS)}")


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


def _table(result: ABResult) -> str:
    out = [f"!!! {w}" for w in result.warnings]
    out.append(f"A/B test: {result.arms['treatment']} (treatment) vs {result.arms['control']} (control)")
    out.append(legend(result))
    out.append(srm_line(result))
    table = [HEAD] + [cells(m, seg, r) for m, seg, r in rows(result)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    out.append("")
    for i, row in enumerate(table):
        out.append("  ".join(cell.ljust(w) if j == 0 else cell.rjust(w) for j, (cell, w) in enumerate(zip(row, widths))).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    lines = extras(result)
    if lines:
        out += ["", *lines]
    counts = "; ".join(
        f"{arm}: {c['users']} users analysed, {c['unlabelled']} shown a list without any engagement label"
        for arm, c in result.counts.items()
    )
    out += ["", counts + f" (--missing {result.options.get('missing')})"]
    return "\n".join(out) + "\n"


def _markdown(result: ABResult) -> str:
    out = [f"> **Warning: {w}**\n" for w in result.warnings]
    out += [f"# A/B test: {result.arms['treatment']} vs {result.arms['control']}", "", f"_{legend(result)}._", ""]
    out += [f"- {srm_line(result)}"]
    out += [
        f"- {arm}: {c['users']} users analysed, {c['unlabelled']} shown a list without any engagement label "
        f"(missing={result.options.get('missing')})"
        for arm, c in result.counts.items()
    ]
    out += ["", "| " + " | ".join(HEAD) + " |", "|" + "|".join("---" for _ in HEAD) + "|"]
    out += ["| " + " | ".join(cells(m, seg, r)) + " |" for m, seg, r in rows(result)]
    lines = extras(result)
    if lines:
        out += ["", *[f"- {e}" for e in lines]]
    if result.notes:
        out += ["", "Notes:", "", *[f"- {n}" for n in result.notes]]
    return "\n".join(out) + "\n"


_MATH = {
    "±": r"$\pm$", "Δ": r"$\Delta$", "<": r"$<$", "▲": r"$\blacktriangle$", "▼": r"$\blacktriangledown$",
    "α": r"$\alpha$", "−": "-", "χ": r"$\chi$", "²": r"$^2$", "—": "--", "–": "--",
}


def _latex(result: ABResult) -> str:
    r"""A ``booktabs`` table: per measure (and segment) each arm's n and mean ± sd, the difference with its
    interval, the lift and the p-values; a mismatch warning as a comment and a bold line above it. Needs
    ``\usepackage{booktabs,amssymb}``."""
    from ranklens.report.latex import latex_escape

    def esc(text: str) -> str:  # the symbols of the cells, in math mode (pdflatex has no glyphs for them)
        return "".join(_MATH.get(ch, ch) for ch in latex_escape(text))

    out = [f"% WARNING: {w}" for w in result.warnings]
    if result.warnings:
        out.append(r"\noindent\textbf{" + esc(result.warnings[0]) + "}\n")
    out += [
        r"\begin{table}[t]", r"\centering", r"\small",
        r"\caption{" + esc(f"A/B test: {result.arms['treatment']} vs {result.arms['control']}; {legend(result)}.") + "}",
        r"\begin{tabular}{l" + "r" * (len(HEAD) - 1) + "}", r"\toprule",
        " & ".join(esc(h) for h in HEAD) + r" \\", r"\midrule",
    ]
    for m, seg, r in rows(result):
        out.append(" & ".join(esc(c) for c in cells(m, seg, r)) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", "% " + esc(srm_line(result))]
    return "\n".join(out) + "\n"
