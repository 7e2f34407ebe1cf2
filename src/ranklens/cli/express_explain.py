"""The express form of ``ranklens explain``: ``explain QRELS RUN --query ID [-m MEASURE]`` recognised before
click (50 ms) or anything heavy is imported, answered by the compiled pass when the one dispatcher chooses it
(:func:`ranklens.backends.choose_backend` with ``needs="intermediates"``) and the plain text of
:func:`ranklens.explain.text.plain_text`. For any other command line, a measure or input the compiled pass
declines, a query it did not evaluate, or text rich would draw, :func:`run` returns None (nothing printed) and the
full command line interface runs: it says every error and falls back to the reference.

>>> run(["explain", "--help"]) is None
True
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["run"]

_QUERY = ("--query", "-q")
_MEASURE = ("-m", "--measure")


def _parse(args: Sequence[str]) -> tuple[str, str, str, str] | None:
    """``(qrels, run, query, measure)`` of an express command line, or None."""
    files: list[str] = []
    query: str | None = None
    measure = "nDCG@10"  # (the command's default)
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok in _QUERY or tok in _MEASURE:
            if i >= len(args) or args[i].startswith("-"):
                return None
            if tok in _QUERY:
                query = args[i]
            else:
                measure = args[i]
            i += 1
        elif tok.startswith("-") or not os.path.isfile(tok):
            return None
        else:
            files.append(tok)
    return (files[0], files[1], query, measure) if len(files) == 2 and query is not None else None


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) the express way and return the exit status, or None when the
    express form does not take it (nothing has been printed then)."""
    if not argv or argv[0] != "explain":
        return None
    parsed = _parse(argv[1:])
    if parsed is None or (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None  # (the box characters: let the full interface decide what this terminal gets)
    qrels, run_path, query, word = parsed
    from ranklens.express import express_measures

    measures = express_measures([word])
    if measures is None or len(measures) != 1:
        return None  # (another form of measure, or several: the full interface reads and says)
    from ranklens.backends import choose_backend, debug_note
    from ranklens.errors import InputError
    from ranklens.explain.compiled import compiled_explanation
    from ranklens.explain.text import plain_text

    try:
        choice = choose_backend(measures, None, qrels, [run_path], note=False, needs="intermediates")
    except InputError:
        return None
    if choice.name != "compiled":
        return None
    explanation = compiled_explanation(qrels, run_path, query, measures[0], [])
    text = plain_text(explanation) if explanation is not None else None
    if text is None:
        return None
    debug_note(choice)
    from ranklens.cli._emit import emit

    emit(text)
    return 0
