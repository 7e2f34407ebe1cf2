"""Parquet datasets: a directory of Parquet parts (hive partitions ``key=value/`` included) or a glob.

The one implementation of listing a dataset's files: the in-memory readers and the DuckDB engine both call
:func:`dataset_files`. A directory's parts are its files, at any depth, not hidden (``.name``) nor written
by a job as a marker (``_SUCCESS``, ``_metadata``), in sorted order; a glob's are the files it matches.

>>> import os, tempfile
>>> root = tempfile.mkdtemp()
>>> for part in ("day=1/a.parquet", "day=2/b.parquet", "_SUCCESS"):
...     os.makedirs(os.path.dirname(os.path.join(root, part)), exist_ok=True)
...     open(os.path.join(root, part), "wb").close()
>>> [os.path.relpath(f, root) for f in dataset_files(root)]
['day=1/a.parquet', 'day=2/b.parquet']
>>> is_dataset(root), is_dataset(os.path.join(root, "day=*", "*.parquet")), is_dataset("run.parquet")
(True, True, False)
"""

from __future__ import annotations

import glob
import os

from ranklens.errors import FormatError

__all__ = ["dataset_files", "dataset_name", "hive_root", "is_dataset", "is_glob"]

_GLOB = ("*", "?", "[")


def is_glob(path: str) -> bool:
    """Whether ``path`` is a glob pattern rather than the name of a file (an existing file wins)."""
    return any(c in path for c in _GLOB) and not os.path.exists(path)


def is_dataset(path: str) -> bool:
    """Whether ``path`` names a dataset (a directory holding a data file, or a glob) rather than one file (a
    directory with no data file is not one: reading it says "expected a file, got a directory")."""
    if os.path.isdir(path):
        return any(_part(n) for root, dirs, names in os.walk(path) for n in names)
    return is_glob(path)


def _part(name: str) -> bool:
    return not name.startswith((".", "_"))


def dataset_files(path: str) -> list[str]:
    """The files of the dataset ``path`` (a directory or a glob), sorted; none is a :class:`FormatError`
    naming it (a directory of anything else is not an input)."""
    if os.path.isdir(path):
        files: list[str] = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if _part(d))
            files.extend(os.path.join(root, n) for n in sorted(names) if _part(n))
        if not files:
            raise FormatError(path, "is a directory with no data file; a dataset is a directory of Parquet parts")
        return files
    files = sorted(f for f in glob.glob(path, recursive=True) if os.path.isfile(f) and _part(os.path.basename(f)))
    if not files:
        raise FormatError(path, "no file matches this pattern")
    return files


def hive_root(path: str) -> str:
    """The directory hive partitions (``key=value/``) are counted from: the dataset's directory, or the part
    of a glob before its first wildcard.

    >>> hive_root("runs/day=*/*.parquet"), hive_root("runs")
    ('runs', 'runs')
    """
    if os.path.isdir(path) or not any(c in path for c in _GLOB):
        return path
    head = path[: min(path.index(c) for c in _GLOB if c in path)]
    return os.path.dirname(head) or "."


def dataset_name(path: str) -> str:
    """A run dataset's name (it has no TREC tag): its directory's, or the directory before a glob's first
    wildcard.

    >>> dataset_name("runs/bm25/"), dataset_name("runs/bm25/day=*/*.parquet")
    ('bm25', 'bm25')
    """
    from ranklens.data.names import run_name_of

    return run_name_of(hive_root(path).rstrip("/" + os.sep) or path)
