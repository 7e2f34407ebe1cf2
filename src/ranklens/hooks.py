"""The hooks a library call takes to report as it goes, so the library never draws on a terminal: progress of
a step and notes as soon as they are known. A core module: the express path and the evaluation of files both
name these types, and neither imports the other for them.

>>> import contextlib
>>> @contextlib.contextmanager
... def quiet(label, total):
...     yield lambda done, rows: None
>>> with quiet("reading", None) as update:
...     update(10, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

__all__ = ["NoteHook", "ProgressHook"]

#: ``hook(label, total_bytes)`` → a context manager around one step that yields ``update(bytes, rows)``;
#: ``total_bytes`` is None for a step of unknown length (reading a file whole, evaluating a run in memory)
ProgressHook = Callable[[str, "int | None"], AbstractContextManager[Callable[[int, int], None]]]

#: a note as soon as it is known, already prefixed with the file it concerns (``"runs/a.run: …"``)
NoteHook = Callable[[str], None]
