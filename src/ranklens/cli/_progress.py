"""Progress on a terminal for long reads and evaluations (rich); silent when stderr is not a TTY or with
``--quiet``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def wanted(quiet: bool) -> bool:
    """Show progress only to a person at a terminal."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def byte_progress(label: str, total: int, *, enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """A bar over ``total`` bytes with the rows/s rate; yields ``update(bytes_done, rows_done)``."""
    if not enabled:
        yield lambda done, rows: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    start: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total, rate="")

        def update(done: int, rows: int) -> None:
            import time

            now = time.perf_counter()
            start.setdefault("t", now)
            elapsed = max(now - start["t"], 1e-9)
            bar.update(task, completed=min(done, total), rate=f"{rows / elapsed / 1e6:.1f}M rows/s" if rows else "")

        update(0, 0)
        yield update


@contextmanager
def status(message: str, *, enabled: bool) -> Iterator[None]:
    """A spinner with ``message`` while a step without a known length runs."""
    if not enabled:
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield
