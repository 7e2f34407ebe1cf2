"""Data containers (Qrels, Run) and their readers and writers.

The names load on first use, so ``ranklens.data.formats`` (the format registry) can be imported without
numpy or pyarrow (the CLI's ``--help`` reads it)."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: `ranklens eval`'s express path stays light)

from ranklens._lazy import lazy_names

if TYPE_CHECKING:
    from ranklens.data.io import read_qrels, read_run, write_qrels, write_run
    from ranklens.data.qrels import Qrels
    from ranklens.data.run import Run

__all__ = ["Qrels", "Run", "read_qrels", "read_run", "write_qrels", "write_run"]

_WHERE = {
    "Qrels": "ranklens.data.qrels", "Run": "ranklens.data.run", "read_qrels": "ranklens.data.io",
    "read_run": "ranklens.data.io", "write_qrels": "ranklens.data.io", "write_run": "ranklens.data.io",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
