"""The run id trec_eval prints: the tag of the **last** content line of the run file (``get_trec_results.c``
keeps only that one), read from the file's tail."""

from __future__ import annotations

import os

__all__ = ["last_run_tag", "last_tag"]

_TAIL = 1 << 16


def last_run_tag(path: str | os.PathLike[str]) -> str:
    """The sixth column of the last non-blank, non-comment line of a TREC run ('' if there is none)."""
    with open(path, "rb") as fh:  # (no pathlib: trec-eval starts without it)
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        step = _TAIL
        while True:
            start = max(0, size - step)
            fh.seek(start)
            chunk = fh.read(size - start)
            lines = chunk.splitlines()
            if start > 0:
                lines = lines[1:]  # may be a partial line
            tag = last_tag(lines)
            if tag is not None or start == 0:
                return tag or ""
            step *= 4


def last_tag(lines: list[bytes]) -> str | None:
    """The tag of the last content line of ``lines``; None when every line is blank or a comment."""
    for line in reversed(lines):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""
    return None
