"""Let ``-m`` take several measures at once: ``-m nDCG@10 AP P@5`` means ``-m nDCG@10 -m AP -m P@5``."""

from __future__ import annotations

import os

import click

from ranklens.errors import RanklensError

MEASURE_FLAGS = ("-m", "--measure")


class MeasureArgsCommand(click.Command):
    """A click command whose ``-m`` takes several measures (``-m nDCG@10 AP P@5``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, expand_measure_args(args))


def _is_measure(token: str) -> bool:
    if token.startswith("-") or os.path.exists(token):
        return False
    from ranklens.measures import parse_many

    try:
        parse_many([token])
    except RanklensError:
        return False
    return True


def expand_measure_args(args: list[str]) -> list[str]:
    """Rewrite ``-m A B C`` into ``-m A -m B -m C``; a token after the first value joins the list only if
    it reads as a measure and is not an existing file (so ``-m nDCG@10 qrels.txt run.txt`` still works).

    >>> expand_measure_args(["q.txt", "r.txt", "-m", "nDCG@10", "AP", "P@5"])
    ['q.txt', 'r.txt', '-m', 'nDCG@10', '-m', 'AP', '-m', 'P@5']
    """
    from ranklens.plugins import preload_plugins

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
            while i < len(args) and _is_measure(args[i]):
                out.extend([tok, args[i]])
                i += 1
    return out
