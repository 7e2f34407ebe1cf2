"""Names of runs: the one rule every command and API uses to tell runs apart.

The name is the run's own (its TREC tag, or a name the user gave); where names collide, the file stem of
each run's source; where those collide too, ``#1``, ``#2`` (Anserini tags every run ``Anserini``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["file_stem", "run_name_of", "unique_names"]


def unique_names(candidates: Sequence[tuple[str, Any]]) -> list[str]:
    """The one naming rule of runs (``eval``, ``compare``, ``gate``, ``evaluate_many`` and every file they
    write), from ``(name or run tag, source)`` pairs: the name; where names collide, the file stem of the
    source (a path, or a Run read from a file); then ``#1``, ``#2``. A source of ``None`` marks a name the
    user chose: it is never replaced by a stem.

    >>> unique_names([("bm25", "a/bm25_v1.run"), ("bm25", "b/bm25_v2.run"), ("x", None), ("x", None)])
    ['bm25_v1', 'bm25_v2', 'x#1', 'x#2']
    """
    tags = [name for name, _ in candidates]
    out = [file_stem(_path_of(src)) if tags.count(name) > 1 and _path_of(src) else name for name, src in candidates]
    seen: dict[str, int] = {}
    final = []
    for name in out:
        seen[name] = seen.get(name, 0) + 1
        final.append(name if out.count(name) == 1 else f"{name}#{seen[name]}")
    return final


def _path_of(source: Any) -> str | os.PathLike[str] | None:
    """The file a run came from: a path, or the source of a Run or Results read from a file."""
    if isinstance(source, (str, os.PathLike)):
        return source
    where = getattr(source, "source", None)
    return where if isinstance(where, str) and where and not where.startswith("<") else None


def run_name_of(display: str) -> str:
    """The name of a run without a tag of its own: ``runs/bm25.trec.gz`` → ``bm25``, the file name without
    its compression and format extensions.

    >>> run_name_of("runs/bm25.trec.gz"), run_name_of("dense.parquet")
    ('bm25', 'dense')
    """
    from pathlib import Path

    from ranklens.data.formats import RUN_FILES

    return RUN_FILES.strip_name(Path(display).name) or "run"


def file_stem(path: Any) -> str:
    """``runs/bm25.trec.gz`` → ``bm25.trec`` → ``bm25``: the file name without ``.gz`` and its last extension."""
    from pathlib import Path  # (only when names collide: pathlib costs more than a small evaluation)

    name = Path(path).name
    for suffix in (".gz",):
        name = name.removesuffix(suffix)
    return Path(name).stem or name
