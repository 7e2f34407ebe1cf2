"""The express form of ``ranklens trec-eval``: the plain command lines (``trec-eval [-q] [-c] [-n] [-m MEASURE]...
QRELS RUN``) recognised before click is imported, run by the same :func:`ranklens.trec_eval.runner.run_trec_eval`
as the full command (so the same backends, numbers, messages and exit statuses), printed without click.

Any other command line (another option, a joined form such as ``-qc`` or ``-mP.5``, ``--help``, a run on
standard input, a file that is not a regular file) returns None, and so does a run that raises instead of
answering: the full command line interface then runs and says what it says.

>>> run(["trec-eval", "--help"]) is None
True
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["run"]

_FLAGS = {"-q": "per_query", "-c": "complete", "-n": "no_summary"}


def _parse(args: Sequence[str]) -> tuple[list[str], list[str], set[str]] | None:
    """``(files, measures, flags)`` of a plain trec-eval command line, or None."""
    files: list[str] = []
    measures: list[str] = []
    flags: set[str] = set()
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok == "-m":
            if i >= len(args) or args[i].startswith("-"):
                return None
            measures.append(args[i])
            i += 1
        elif tok in _FLAGS:
            flags.add(_FLAGS[tok])
        elif tok.startswith("-") or not os.path.isfile(tok):
            return None
        else:
            files.append(tok)
    return (files, measures, flags) if len(files) == 2 else None


def run(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) the express way and return the exit status, or None when
    the express form does not take it (nothing has been printed then)."""
    if not argv or argv[0] != "trec-eval":
        return None
    parsed = _parse(argv[1:])
    if parsed is None:
        return None
    (qrels, run_path), measures, flags = parsed
    import warnings

    from ranklens.errors import RanklensWarning
    from ranklens.trec_eval.runner import TrecEvalOptions, run_trec_eval

    options = TrecEvalOptions(
        qrels=qrels, run=run_path, measures=tuple(measures), per_query="per_query" in flags,
        complete="complete" in flags, summary="no_summary" not in flags,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RanklensWarning)  # (as the full interface: notes are printed, not warned)
            result = run_trec_eval(options)
    except Exception:  # noqa: BLE001 (nothing printed yet: the full interface runs again and says what went wrong)
        return None
    try:
        if result.stdout:
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
        if result.stderr:
            sys.stderr.write(result.stderr)
            sys.stderr.flush()
    except BrokenPipeError:  # (as the full interface: a reader that stops early, `| head`, is no error)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return result.status
