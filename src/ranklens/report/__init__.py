"""Reports of a :class:`~ranklens.comparison.Comparison`: terminal table, Markdown, LaTeX, JSON and HTML.

>>> from ranklens.comparison import compare
>>> from ranklens.report import render
>>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
>>> runs = {"x": {"q1": {"a": 1.0}, "q2": {"z": 1.0}, "q3": {"c": 1.0}},
...         "y": {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}}
>>> print(render(compare(qrels, runs, ["P@1"]), "markdown").splitlines()[8])
| (a) x | 0.6667 |
"""

from __future__ import annotations

from ranklens.comparison import Comparison
from ranklens.data.formats import REPORT_FILES
from ranklens.errors import InputError, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (pathlib where a file name is read or written: a report to standard output needs none)
    from pathlib import Path

__all__ = ["FORMATS", "format_for_path", "render", "write_report"]

#: Report formats.
FORMATS = REPORT_FILES.formats
_EXTENSIONS = REPORT_FILES.extensions  # the registry's table (ranklens.data.formats): .txt is a terminal table


def render(comparison: Comparison, fmt: str = "table", **options: object) -> str:
    """The report text of ``comparison`` in ``fmt`` (``table``, ``markdown``, ``latex``, ``json``, ``html``)."""
    key = fmt.lower()
    if key == "table":
        from ranklens.report.terminal import render_table

        return render_table(comparison, **options)  # type: ignore[arg-type]
    if key in ("markdown", "md"):
        from ranklens.report.markdown import render_markdown

        return render_markdown(comparison, **options)  # type: ignore[arg-type]
    if key in ("latex", "tex"):
        from ranklens.report.latex import render_latex

        return render_latex(comparison, **options)  # type: ignore[arg-type]
    if key == "json":
        from ranklens.report.json_report import render_json

        return render_json(comparison, **options)  # type: ignore[arg-type]
    if key == "html":
        from ranklens.report.html import render_html

        return render_html(comparison, **options)  # type: ignore[arg-type]
    raise InputError(
        f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}" + did_you_mean(fmt, FORMATS)
    )


def format_for_path(path: str | Path) -> str:
    """The report format a file name implies (``.md``, ``.tex``, ``.json``, ``.html``, ``.txt``)."""
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise InputError(
            f"{path}: cannot tell the report format from the extension {suffix!r}; use .md, .tex, .json, .html "
            "or .txt, or give --format"
        )
    return _EXTENSIONS[suffix]


def write_report(comparison: Comparison, path: str | Path, fmt: str | None = None) -> Path:
    """Write the report to ``path`` in ``fmt`` (by default from the extension); returns the path."""
    from pathlib import Path

    target = Path(path)
    text = render(comparison, fmt or format_for_path(target))
    target.write_text(text, encoding="utf-8")
    return target
