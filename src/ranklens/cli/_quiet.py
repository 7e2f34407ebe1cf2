"""``--quiet`` on every command: no notes (``ranklens: note: …``), summaries or progress on standard error;
errors still. Commands that declare ``--quiet`` themselves keep their own; every other command gets it when
the CLI loads it (:func:`with_quiet`), and :func:`is_quiet` tells the printers.

>>> import click
>>> @click.command()
... def hello() -> None:
...     click.echo("quiet" if is_quiet() else "chatty")
>>> from click.testing import CliRunner
>>> CliRunner().invoke(with_quiet(hello), ["--quiet"]).output
'quiet\\n'
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import click

__all__ = ["is_quiet", "say", "with_quiet"]

_QUIET: ContextVar[bool] = ContextVar("ranklens_quiet", default=False)
HELP = "No notes, summaries or progress on standard error (errors still)."


def is_quiet() -> bool:
    """Whether the running command was given ``--quiet``."""
    return _QUIET.get()


def say(text: str, *, nl: bool = True) -> None:
    """A note or summary on standard error, unless ``--quiet``."""
    if not is_quiet():
        click.echo(text, nl=nl, err=True)


def _set(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    _QUIET.set(bool(value))
    return value


def with_quiet(command: Any) -> Any:
    """``command`` (and every subcommand of a group) with a ``--quiet`` flag when it has none."""
    if isinstance(command, click.Group) and not getattr(command, "_ranklens_quiet", False):
        for sub in command.commands.values():
            with_quiet(sub)
        found = command.get_command  # subcommands a group loads lazily get it when loaded

        def get_command(ctx: click.Context, name: str) -> click.Command | None:
            return with_quiet(found(ctx, name))  # type: ignore[no-any-return]

        setattr(command, "get_command", get_command)  # noqa: B010 - on this instance only
        setattr(command, "_ranklens_quiet", True)  # noqa: B010
    if isinstance(command, click.Command) and not any(p.name == "quiet" or "--quiet" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(click.Option(["--quiet"], is_flag=True, expose_value=False, is_eager=True, callback=_set, help=HELP))
    return command
