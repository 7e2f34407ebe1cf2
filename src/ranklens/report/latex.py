"""The LaTeX report: a booktabs table of means, best per column in bold, significance as superscripts."""

from __future__ import annotations

from ranklens.comparison import Comparison
from ranklens.report._format import best, better_than, legend, letters, num, summary_word

__all__ = ["latex_escape", "render_latex"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    >>> latex_escape("P_rel@5 & 10%")
    'P\\_rel@5 \\& 10\\%'
    """
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def render_latex(comparison: Comparison, *, digits: int = 4, label: str = "tab:comparison") -> str:
    r"""A ``table`` with a ``booktabs`` ``tabular``: one row per system (labelled (a), (b) …), one column
    per measure, the mean over the queries every system answered. The best value of each column is bold;
    a superscript letter on a value means the system is significantly better than the system with that
    letter (after correction), as in IR papers. One more table per segment when segments were given.
    Needs ``\usepackage{booktabs}`` in the preamble.
    """
    blocks = [_table(comparison, None, digits, label)]
    for segment, _ in comparison.segments:
        blocks.append(_table(comparison, segment, digits, f"{label}-{_label_safe(segment)}"))
    return "\n".join(blocks)


def _table(comparison: Comparison, segment: str | None, digits: int, label: str) -> str:
    tag = letters(comparison)
    n = next((s.n for s in comparison.summary if s.segment == segment), 0)
    columns = []
    for m in comparison.measures:
        vals = [comparison.mean(s, m, segment) for s in comparison.systems]
        top = best(vals)
        wins = better_than(comparison, m, segment)
        cells = []
        for i, (s, v) in enumerate(zip(comparison.systems, vals)):
            text = num(v, digits)
            if i in top:
                text = rf"\textbf{{{text}}}"
            beaten = "".join(sorted(tag[x] for x in wins[s]))
            if beaten:
                text += rf"$^{{\mathrm{{{beaten}}}}}$"
            cells.append(text)
        columns.append(cells)
    where = "all queries" if segment is None else f"segment {latex_escape(segment)}"
    how = latex_escape(legend(comparison).split(";")[0]).replace("α", r"$\alpha$")
    caption = (
        f"{latex_escape(summary_word(comparison))} over the {n} queries every system answered ({where}). Bold: best per column. "
        f"Superscript letters: significantly better than the system with that letter "
        f"({how})."
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\begin{tabular}{l" + "r" * len(comparison.measures) + "}",
        r"\toprule",
        "System & " + " & ".join(latex_escape(m) for m in comparison.measures) + r" \\",
        r"\midrule",
    ]
    for i, s in enumerate(comparison.systems):
        lines.append(f"({tag[s]}) {latex_escape(s)} & " + " & ".join(col[i] for col in columns) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _label_safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-:." else "-" for ch in text)
