"""Run arguments shared by ``eval``, ``compare`` and ``gate``: ``NAME=PATH``, ``--name`` and the one naming
rule (:func:`ranklens.data.names.unique_names`), and saved results (``eval -f json|parquet``) as inputs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ranklens.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def name_option(func: F) -> F:
    """``--name NAME`` (repeatable): the names of the runs, in order."""
    import click  # (here: the express forms use this module without click)

    return click.option(
        "--name",
        "names",
        multiple=True,
        metavar="NAME",
        help="Name the runs in order (repeatable); also NAME=PATH. Default: the TREC tag, or the file stem "
        "when tags collide.",
    )(func)


def split_name(arg: str) -> tuple[str | None, str]:
    """``NAME=PATH`` → ``(NAME, PATH)``; an existing file (even one whose name holds ``=``), ``-`` or a
    path with a directory before the ``=`` → ``(None, arg)``.

    >>> split_name("bm25=runs/a.trec"), split_name("runs/k=10.run")
    (('bm25', 'runs/a.trec'), (None, 'runs/k=10.run'))
    """
    if arg == "-" or os.path.exists(arg):
        return None, arg
    name, eq, path = arg.partition("=")
    if eq and name and path and "/" not in name and os.sep not in name:
        return name, path
    return None, arg


def named_runs(args: Sequence[str], names: Sequence[str]) -> list[tuple[str | None, str]]:
    """``(name given by the user or None, path)`` for every run argument; ``--name`` values apply in order."""
    pairs = [split_name(a) for a in args]
    if len(names) > len(pairs):
        raise InputError(f"--name is given {len(names)} times for {len(pairs)} run{'s' if len(pairs) != 1 else ''}")
    out: list[tuple[str | None, str]] = []
    for i, (given, path) in enumerate(pairs):
        if i < len(names):
            if given is not None and given != names[i]:
                raise InputError(f"{args[i]}: named twice ({given!r}, and --name {names[i]!r})")
            given = names[i]
        out.append((given, path))
    seen: set[str] = set()
    for given, _ in out:
        if given is None:
            continue
        if given in seen:
            raise InputError(f"two runs are named {given!r}")
        seen.add(given)
    return out


def final_names(named: Sequence[tuple[str | None, str]], tags: Sequence[str]) -> list[str]:
    """The one rule: a name the user gave; else the run's tag, made unique by the file stem when tags
    collide (then ``#2``, ``#3``)."""
    from ranklens.data.names import unique_names

    pairs = [(given, None) if given is not None else (tag, path) for (given, path), tag in zip(named, tags)]
    return unique_names(pairs)

