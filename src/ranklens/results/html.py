"""HTML tables for notebooks (``_repr_html_`` of :class:`~ranklens.Results` and :class:`~ranklens.Comparison`):
a caption, one table and the notes, every value escaped. No dependency: Jupyter shows the string as it is.

>>> print(html_table("bm25", ["measure", "value"], [["P@1", 0.5]], notes=["1 query <skipped>"]))
<div class="ranklens"><table><caption>bm25</caption><thead><tr><th>measure</th><th>value</th></tr></thead><tbody><tr><td>P@1</td><td>0.5000</td></tr></tbody></table><p>Notes:</p><ul><li>1 query &lt;skipped&gt;</li></ul></div>
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

__all__ = ["html_table"]


def html_table(
    caption: str, headers: Sequence[str], rows: Sequence[Sequence[object]], *, notes: Sequence[str] = ()
) -> str:
    """One captioned HTML table (numbers to 4 decimals, NaN shown as ``NaN``) followed by the notes."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    text = (
        f'<div class="ranklens"><table><caption>{html.escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
    if notes:
        text += "<p>Notes:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>"
    return text + "</div>"


def _cell(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else ("yes" if value else "no")
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4f}"
    return html.escape(str(value))
