"""An :class:`~ranklens.explain.model.Explanation` as text: the settings, the ranking and ideal tables, the
totals. It draws the tables itself when every cell is plain text that fits (what rich draws for them, byte for
byte: ``tests/cli/test_explain_backends.py`` compares both), so ``ranklens explain`` on a small collection need not
import rich (60 ms); anything else (wide tables, markup or wide characters) is drawn by rich.

>>> from ranklens.explain.model import Explanation
>>> e = Explanation("P@1", "q1", [{"rank": 1, "doc": "d1", "label": "1", "relevant": "yes"}], value=1.0,
...                 settings={"cutoff": "@1"})
>>> print(render_explanation(e), end="")  # doctest: +NORMALIZE_WHITESPACE
P@1 for query q1 (0 documents retrieved)
  cutoff: @1
ranking
┏━━━━━━┳━━━━━┳━━━━━━━┳━━━━━━━━━━┓
┃ rank ┃ doc ┃ label ┃ relevant ┃
┡━━━━━━╇━━━━━╇━━━━━━━╇━━━━━━━━━━┩
│    1 │ d1  │ 1     │ yes      │
└──────┴─────┴───────┴──────────┘
P@1 = 1.000000
"""

from __future__ import annotations

import io

from ranklens.explain.model import Explanation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    #: a table to draw: (title, header, the rows' keys, the rows' cells)
    Table = tuple[str, list[str], list[str], list[list[str]]]

__all__ = ["WIDTH", "draw_table", "render_explanation"]

#: the width of the text (rich's console width for it)
WIDTH = 110

#: columns aligned left (the others right)
_LEFT = ("doc", "label", "relevant")

#: characters besides printable ASCII the fixed wording uses (each one column wide)
_NARROW = frozenset("≥→−–äÄ√Σα")


def render_explanation(e: Explanation) -> str:
    """The explanation as text tables (rich's when :func:`plain_text` cannot draw them)."""
    plain = plain_text(e)
    return plain if plain is not None else _rich_text(e)


def _lines(e: Explanation) -> list[str | Table]:
    """What is printed, in order: lines of text and tables."""
    out: list[str | Table] = [f"{e.measure} for query {e.query} ({e.total_retrieved} documents retrieved)"]
    out += [f"  {key}: {val}" for key, val in e.settings.items()]
    if e.rows:
        cols = list(e.rows[0])
        out.append(("ranking", [c.replace("_", " ") for c in cols], cols, [[_fmt(row[c]) for c in cols] for row in e.rows]))
    else:
        out.append("ranking: no document within the cutoff")
    if e.dcg is not None:
        out.append(f"DCG = {e.dcg:.6f}")
        if e.measure.name != "DCG":
            if e.ideal_rows:
                cols = list(e.ideal_rows[0])
                out.append(("ideal ordering", cols, cols, [[_fmt(v) for v in row.values()] for row in e.ideal_rows]))
            out.append(f"IDCG = {e.idcg:.6f}")
            if e.measure.name == "nDCG" and e.min_dcg is not None:
                out.append(f"minDCG = {e.min_dcg:.6f}")
                low, top = e.min_dcg, float(e.idcg or 0.0)
                ratio = (
                    "0 (IDCG = minDCG)" if not top - low
                    else f"({e.dcg:.6f} − {low:.6f}) / ({top:.6f} − {low:.6f})"
                )
                out.append(f"{e.measure} = (DCG − minDCG) / (IDCG − minDCG) = {ratio} = {e.value:.6f}")
            elif e.measure.name == "nDCG":
                ratio = "0 (IDCG = 0: no relevant judged document)" if not e.idcg else f"{e.dcg:.6f} / {e.idcg:.6f}"
                out.append(f"{e.measure} = DCG / IDCG = {ratio} = {e.value:.6f}")
    else:
        out.append(f"{e.measure} = {e.value:.6f}")
    out += [f"note: {note}" for note in e.notes]
    return out


def _plain(text: str) -> bool:
    """Whether rich prints ``text`` as it is, one column per character: printable ASCII or the narrow
    characters of the wording, no markup (``[``), nothing that reads as an emoji code (``:name:``).

    >>> _plain("cutoff: @5"), _plain("d:smile:"), _plain("[b]x")
    (True, False, False)
    """
    if "[" in text or not all(c.isascii() and c.isprintable() or c in _NARROW for c in text):
        return False
    return not any(part and not any(c.isspace() for c in part) for part in text.split(":")[1:-1])


def plain_text(e: Explanation) -> str | None:
    """The text of :func:`render_explanation` drawn without rich, or None when a line would not fit in
    :data:`WIDTH` or holds what rich would read as markup (then rich draws it)."""
    out: list[str] = []
    for item in _lines(e):
        if isinstance(item, str):
            if len(item) > WIDTH or not _plain(item):
                return None
            out.append(item + "\n")
            continue
        title, header, cols, rows = item
        drawn = draw_table(title, header, [c in _LEFT for c in cols], rows)
        if drawn is None:
            return None
        out.append(drawn)
    return "".join(out)


def draw_table(title: str, header: Sequence[str], left: Sequence[bool], rows: Sequence[Sequence[str]]) -> str | None:
    """A rich ``Table`` (heavy head, title justified left) of ``header`` and ``rows`` as rich draws it at
    :data:`WIDTH` columns; None when it would be wider, or a cell is not plain (:func:`_plain`).

    >>> print(draw_table("t", ["a", "bb"], [True, False], [["x", "1"]]), end="")  # doctest: +NORMALIZE_WHITESPACE
    t
    ┏━━━┳━━━━┓
    ┃ a ┃ bb ┃
    ┡━━━╇━━━━┩
    │ x │  1 │
    └───┴────┘
    """
    if not all(_plain(c) for c in (title, *header, *(c for row in rows for c in row))):
        return None
    widths = [max([len(header[j]), *(len(row[j]) for row in rows)]) for j in range(len(header))]
    total = sum(w + 2 for w in widths) + len(widths) + 1
    if total > WIDTH or len(title) > total:
        return None

    def line(l_: str, fill: str, cross: str, r_: str) -> str:
        return l_ + cross.join(fill * (w + 2) for w in widths) + r_ + "\n"

    def cells(row: Sequence[str], bar: str) -> str:
        return bar + bar.join(f" {c:<{w}} " if lf else f" {c:>{w}} " for c, w, lf in zip(row, widths, left)) + bar + "\n"

    body = "".join(cells(row, "│") for row in rows)
    return (f"{title:<{total}}\n" + line("┏", "━", "┳", "┓") + cells(header, "┃") + line("┡", "━", "╇", "┩") + body
            + line("└", "─", "┴", "┘"))


def _rich_text(e: Explanation) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    con = Console(file=buf, width=WIDTH, force_terminal=False, color_system=None)
    for item in _lines(e):
        if isinstance(item, str):
            con.print(item)
            continue
        title, header, cols, rows = item
        t = Table(title=title, title_justify="left")
        for name, c in zip(header, cols):
            t.add_column(name, justify="left" if c in _LEFT else "right")
        for row in rows:
            t.add_row(*row)
        con.print(t)
    return buf.getvalue()


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)
