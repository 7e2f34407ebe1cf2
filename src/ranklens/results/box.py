"""The plain box table of ``ranklens eval`` (one row per measure, one column per run) drawn without rich.

It draws exactly what :func:`ranklens.results.rendering.render_table` draws with rich for that table, so
evaluating a small collection need not import rich (60 ms, more than the evaluation): the same heavy-head
box, one space of padding, number columns right-aligned and at least :data:`MIN_NUMBER_WIDTH` wide.
It takes ASCII text only (every character one column wide); :func:`box_table` returns None otherwise, and
``tests/results/test_box.py`` checks it against rich.

>>> print(box_table(["measure", "bm25"], [["queries", "3"], ["P@1", "0.6667"]]), end="")
┏━━━━━━━━━┳━━━━━━━━┓
┃ measure ┃   bm25 ┃
┡━━━━━━━━━╇━━━━━━━━┩
│ queries │      3 │
│ P@1     │ 0.6667 │
└─────────┴────────┘
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MIN_NUMBER_WIDTH", "NARROW", "aligned_table", "box_table", "box_width", "plain_text"]

#: the narrowest number column (rich's ``min_width`` of the table's number columns)
MIN_NUMBER_WIDTH = 6


def _widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    widths = [max([len(header[j]), *(len(row[j]) for row in rows)]) for j in range(len(header))]
    return [widths[0], *(max(w, MIN_NUMBER_WIDTH) for w in widths[1:])]


def box_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """The width of the table :func:`box_table` draws."""
    return sum(w + 2 for w in _widths(header, rows)) + len(header) + 1


def box_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The table of ``header`` and ``rows`` (the first column left-aligned, the others right-aligned),
    one line per row, each ending in a newline; None when a cell is not plain ASCII (no control bytes)."""
    cells = [*header, *(c for row in rows for c in row)]
    if not all(c.isascii() and c.isprintable() and c == c.strip() for c in cells):
        return None
    widths = _widths(header, rows)

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def cells_of(row: Sequence[str], bar: str) -> str:
        first = f" {row[0]:<{widths[0]}} "
        rest = [f" {c:>{w}} " for c, w in zip(row[1:], widths[1:])]
        return bar + bar.join([first, *rest]) + bar

    out = [line("┏", "━", "┳", "┓"), cells_of(header, "┃"), line("┡", "━", "╇", "┩")]
    out += [cells_of(row, "│") for row in rows]
    out.append(line("└", "─", "┴", "┘"))
    return "".join(s.rstrip() + "\n" for s in out)


#: the characters besides printable ASCII that :func:`aligned_table` draws: each one column wide in rich's
#: measure (``compare``'s Δ, its markers ▲▼△▽, the dash of a missing value and the α of its legend)
NARROW = frozenset("Δ▲▼△▽—α−")


def plain_text(text: str) -> bool:
    """Whether rich prints ``text`` as it is, each character one column: printable ASCII and :data:`NARROW`,
    no surrounding space, nothing like an emoji code (``:name:``, which rich replaces)."""
    import re

    return (
        all((c.isascii() and c.isprintable()) or c in NARROW for c in text) and text == text.strip()
        and re.search(r":\S*?:", text) is None
    )


def aligned_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str, title: str | None = None) -> str | None:
    """The table rich draws for ``header`` and ``rows`` with no width limit, each column aligned as ``align``
    says (one letter a column: ``l`` left, ``r`` right, ``c`` centred, the odd space on the right) and no
    minimum width, under ``title`` (left-justified; rich's title of a :class:`rich.table.Table`). None when
    a cell or the title has a character rich may measure otherwise (:data:`NARROW`), when the title is wider
    than the table (rich would wrap it) or looks like an emoji code (``:name:``, which rich replaces).

    >>> print(aligned_table(["system", "p", ""], [["dense", "0.0114", "▲"], ["bm25", "0.5", ""]], "lrc", "nDCG@10"), end="")
    nDCG@10
    ┏━━━━━━━━┳━━━━━━━━┳━━━┓
    ┃ system ┃      p ┃   ┃
    ┡━━━━━━━━╇━━━━━━━━╇━━━┩
    │ dense  │ 0.0114 │ ▲ │
    │ bm25   │    0.5 │   │
    └────────┴────────┴───┘
    """
    texts = [*header, *(c for row in rows for c in row), *([title] if title is not None else [])]
    if len(align) != len(header) or not all(plain_text(t) for t in texts):
        return None
    widths = [max([len(header[j]), *(len(row[j]) for row in rows)]) for j in range(len(header))]
    total = sum(w + 2 for w in widths) + len(header) + 1
    if title is not None and len(title) > total:
        return None

    def cell(text: str, width: int, how: str) -> str:
        if how == "l":
            return f" {text:<{width}} "
        if how == "r":
            return f" {text:>{width}} "
        left = (width - len(text)) // 2
        return " " + " " * left + text + " " * (width - len(text) - left) + " "

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def cells_of(row: Sequence[str], bar: str) -> str:
        return bar + bar.join(cell(c, w, a) for c, w, a in zip(row, widths, align)) + bar

    out = [title] if title is not None else []
    out += [line("┏", "━", "┳", "┓"), cells_of(header, "┃"), line("┡", "━", "╇", "┩")]
    out += [cells_of(row, "│") for row in rows]
    out.append(line("└", "─", "┴", "┘"))
    return "".join(s.rstrip() + "\n" for s in out)
