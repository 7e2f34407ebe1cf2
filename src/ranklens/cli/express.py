"""The express form of ``ranklens eval``: the command lines :mod:`ranklens.express` evaluates, recognised
before click (50 ms) or anything heavy is imported.

It recognises ``eval QRELS RUN [RUN ...]`` with ``-m``/``--measure`` (several measures after one ``-m``, as
:mod:`ranklens.cli._measure_args` reads them), ``-q``/``--per-query``, ``--quiet`` and ``-f``/``--format``
``table``, ``trec`` or ``tsv``, every file an existing regular file. For any other command line, or inputs
the express path does not take, :func:`run` returns None and the full command line interface runs: it
is the reference, so every option, error and message stays its own.

>>> run(["eval", "--help"]) is None
True
"""

from __future__ import annotations

import os
import sys

from ranklens.cli.defaults import DEFAULT_MEASURES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["run"]

_FORMATS = ("table", "trec", "tsv")

#: input bytes from which an evaluation at a terminal shows its progress (the full interface draws it)
PROGRESS_FROM = 256 << 20
_MEASURE_FLAGS = ("-m", "--measure")


def _parse(args: Sequence[str]) -> tuple[list[str], list[str], bool, bool, str] | None:
    """``(files, measure words, per_query, quiet, format)`` of an express command line, or None."""
    files: list[str] = []
    words: list[str] = []
    per_query = quiet = False
    fmt = "table"
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok in _MEASURE_FLAGS:
            if i >= len(args) or args[i].startswith("-"):
                return None
            words.append(args[i])
            i += 1
            while i < len(args) and not args[i].startswith("-") and not os.path.exists(args[i]):
                words.append(args[i])  # (a word that is no measure: parse_many refuses it, and click says why)
                i += 1
        elif tok in ("-q", "--per-query"):
            per_query = True
        elif tok == "--quiet":
            quiet = True
        elif tok in ("-f", "--format"):
            if i >= len(args) or args[i] not in _FORMATS:
                return None
            fmt = args[i]
            i += 1
        elif tok.startswith("-") or not os.path.isfile(tok):
            return None
        else:
            files.append(tok)
    return (files, words, per_query, quiet, fmt) if len(files) >= 2 else None


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) the express way and return the exit status, or None when
    the express path does not take it (nothing has been printed then)."""
    if not argv or argv[0] != "eval":
        return None
    parsed = _parse(argv[1:])
    if parsed is None:
        return None
    files, words, per_query, quiet, fmt = parsed
    if not quiet and sys.stderr.isatty() and sum(os.path.getsize(f) for f in files) >= PROGRESS_FROM:
        return None  # (a long evaluation at a terminal: the full interface shows its progress, express inside)
    from ranklens.express import evaluate_express, express_measures

    measures = express_measures(words or DEFAULT_MEASURES)
    if measures is None:  # another form of measure: the measure language reads it
        from ranklens.errors import RanklensError
        from ranklens.measures import parse_many

        try:
            measures = parse_many(words)  # type: ignore[assignment]
        except RanklensError:
            return None  # (a misspelt measure: the full interface says what is wrong, in its words)
    if any(f.endswith(".parquet") for f in files) and "numpy" not in sys.modules:
        # pyarrow loads numpy, whose OpenBLAS starts a thread per core that spins for a while after start:
        # on a 2-core machine that takes CPU from the decoding of the Parquet file (measured on M as Parquet,
        # medians of 6: 1.8 s of CPU and 1.09 s against 1.5 s and 0.98 s). Nothing eval does needs BLAS threads.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from ranklens.backends import choose_backend, debug_note
    from ranklens.errors import InputError

    try:  # (the one dispatcher; anything but the compiled backend is the full interface's to run and say)
        choice = choose_backend(measures or [], None, files[0], files[1:], note=False)
    except InputError:
        return None
    if choice.name != "compiled":
        return None
    results = evaluate_express(files[0], files[1:], measures)  # type: ignore[arg-type]
    if results is None:
        return None
    debug_note(choice)
    from ranklens.results.rendering import render

    if fmt == "table" and (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None  # (the box characters: let the full interface decide what this terminal gets)
    text = render(results, fmt, per_query=per_query, meta={})  # type: ignore[arg-type]
    from ranklens.cli._emit import emit

    notes = () if quiet else [f"ranklens: note: {path}: {note}" for path, r in zip(files[1:], results) for note in r.notes]
    emit(text, notes)
    return 0
