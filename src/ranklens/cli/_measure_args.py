"""Let ``-m`` take several measures at once: ``-m nDCG@10 AP P@5`` means ``-m nDCG@10 -m AP -m P@5``."""

from __future__ import annotations

import os
from collections.abc import Callable

import click

from ranklens.data.formats import RUN_FILES
from ranklens.errors import RanklensError

MEASURE_FLAGS = ("-m", "--measure")


class MeasureArgsCommand(click.Command):
    """A click command whose ``-m`` takes several measures (``-m nDCG@10 AP P@5``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, expand_measure_args(args))


def _is_measure(token: str) -> bool:
    """True when ``token`` (a word after ``-m X``) is one more measure: it parses as one and is not a file.

    A word that is neither a measure nor a file, and does not look like a path, is a misspelt measure: it
    is reported as one (``'ncdg' is neither a measure nor a file; did you mean 'nDCG'?``) rather than as a
    run file that does not exist.
    """
    if token.startswith("-") or os.path.exists(token):
        return False
    from ranklens.measures import parse_many

    try:
        parse_many([token])
    except RanklensError as exc:
        if _looks_like_path(token):
            return False
        from ranklens.errors import MeasureError
        from ranklens.measures.language import suggest

        hint = suggest(token) if str(exc).startswith("unknown measure") else f": {exc}"
        raise MeasureError(f"'{token}' is neither a measure nor a file{hint}") from None
    return True


_PATH_SUFFIXES = (*RUN_FILES.extensions, ".gz")


def _looks_like_path(token: str) -> bool:
    """A path that does not exist (the reader says so) rather than a measure: it has a directory part or
    a data file suffix, or is ``NAME=PATH`` with an existing PATH."""
    if "/" in token or os.sep in token:
        return True
    if token.lower().endswith(_PATH_SUFFIXES):
        return True
    name, eq, path = token.partition("=")
    return bool(eq and name and os.path.exists(path))


def expand_measure_args(args: list[str], also: Callable[[str], bool] | None = None) -> list[str]:
    """Rewrite ``-m A B C`` into ``-m A -m B -m C``; a token after the first value joins the list only if
    it reads as a measure and is not an existing file (so ``-m nDCG@10 qrels.txt run.txt`` still works), or
    ``also`` says it is one of the command's own measures.

    >>> expand_measure_args(["q.txt", "r.txt", "-m", "nDCG@10", "AP", "P@5"])
    ['q.txt', 'r.txt', '-m', 'nDCG@10', '-m', 'AP', '-m', 'P@5']
    """
    if os.environ.get("RANKLENS_PLUGINS") or any(a == "--plugin" or a.startswith("--plugin=") for a in args):
        from ranklens.plugins import preload_plugins  # (only when named: it imports numpy and the engine)

        preload_plugins(args)  # a plugin's measures must be known before tokens are read as measures
    out: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        out.append(tok)
        i += 1
        if tok in MEASURE_FLAGS and i < len(args):
            out.append(args[i])
            i += 1
            while i < len(args) and ((also is not None and also(args[i])) or _is_measure(args[i])):
                out.extend([tok, args[i]])
                i += 1
    return out
