"""Reports of an :class:`~ranklens.online.experiment.ABResult`: terminal text, Markdown and JSON. A sample-ratio
mismatch is the first line of every one of them."""

from __future__ import annotations

from ranklens.errors import InputError
from ranklens.online.cells import HEAD, cells, extras, legend, rows, srm_line
from ranklens.online.experiment import ABResult

__all__ = ["AB_FORMATS", "render_ab"]

AB_FORMATS = ("table", "markdown", "latex", "json", "html")


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
