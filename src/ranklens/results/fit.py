"""Terminal tables that fit the terminal: rich tables measured before printing, split into blocks of
columns (every value kept) or with low-priority columns dropped (and a note saying which), never
hard-wrapped by the terminal."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = ["column_blocks", "console", "drop_to_fit", "natural_width", "terminal_width"]

#: Width used when the output is not a terminal and COLUMNS is not set: tables keep their natural width.
UNLIMITED = 10_000


def terminal_width() -> int | None:
    """The width to fit: ``$COLUMNS`` when set, the terminal's width when stdout is a terminal, else None
    (a file or a pipe: no limit)."""
    env = os.environ.get("COLUMNS", "")
    if env.isascii() and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        if sys.stdout.isatty():
            import shutil

            return shutil.get_terminal_size((80, 24)).columns
    except (AttributeError, ValueError, OSError):
        pass
    return None


def console(file: Any, width: int | None, *, color: bool = False) -> Any:
    """A rich Console writing plain text (or colour) to ``file`` at ``width`` (None: no limit). Text is
    never read as rich markup: a run or query named ``[a]`` or ``[bold]`` is printed as it is named."""
    from rich.console import Console

    return Console(
        file=file,
        width=width or UNLIMITED,
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
        markup=False,
    )


def natural_width(con: Any, table: Any) -> int:
    """The width ``table`` takes when nothing limits it (every cell on one line)."""
    from rich.measure import Measurement

    return int(Measurement.get(con, con.options.update_width(UNLIMITED), table).maximum)


def _fits(con: Any, table: Any, width: int | None) -> bool:
    return width is None or natural_width(con, table) <= width


def column_blocks(
    con: Any, width: int | None, make: Callable[[Sequence[int]], Any], n: int
) -> list[Any]:
    """Tables ``make(indices)`` over columns ``0..n-1`` split into consecutive blocks that each fit
    ``width`` (``make`` adds the fixed leading columns itself); one block when everything fits."""
    if n == 0 or _fits(con, make(range(n)), width):
        return [make(range(n))]
    blocks: list[Any] = []
    start = 0
    while start < n:
        end = start + 1
        while end < n and _fits(con, make(range(start, end + 1)), width):
            end += 1
        blocks.append(make(range(start, end)))
        start = end
    return blocks


def drop_to_fit(
    con: Any, width: int | None, make: Callable[[Sequence[str]], Any], columns: Sequence[str], drop: Sequence[str]
) -> tuple[Any, list[str]]:
    """``make(visible columns)`` with columns of ``drop`` (least important first) left out one by one until
    the table fits ``width``; returns the table and the columns left out."""
    visible = list(columns)
    dropped: list[str] = []
    table = make(visible)
    for name in drop:
        if _fits(con, table, width):
            break
        if name in visible:
            visible.remove(name)
            dropped.append(name)
            table = make(visible)
    return table, dropped
