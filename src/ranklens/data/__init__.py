"""Data containers (Qrels, Run) and their readers and writers."""

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run

__all__ = ["Qrels", "Run"]
