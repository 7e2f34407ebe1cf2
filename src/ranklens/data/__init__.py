"""Data containers (Qrels, Run) and their readers and writers."""

from ranklens.data.io import read_qrels, read_run, write_qrels, write_run
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run

__all__ = ["Qrels", "Run", "read_qrels", "read_run", "write_qrels", "write_run"]
