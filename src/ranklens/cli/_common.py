"""Options shared by the evaluating commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DATA_FORMATS = ["trec", "json", "jsonl", "csv", "tsv", "parquet"]


def _load_plugins(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    from ranklens.plugins import cli_callback

    cli_callback(ctx, param, value)


def policy_options(func: F) -> F:
    """``--missing``, ``--negative``, ``--judged-only``, ``--max-docs``, ``--rel-level``, input formats, and
    ``--plugin`` (eager, not passed to the command: it imports measure plugins before measures are parsed)."""
    options = [
        click.option(
            "--missing",
            type=click.Choice(["skip", "zero", "error"]),
            default="skip",
            show_default=True,
            help="Queries in the qrels but not in the run: skip them, score them 0 (trec_eval -c), or fail.",
        ),
        click.option(
            "--negative",
            type=click.Choice(["trec", "zero", "error"]),
            default="trec",
            show_default=True,
            help="Negative qrels labels: trec = pooled but unjudged (gain 0, not in the ideal); zero = judged 0.",
        ),
        click.option("--judged-only", "-J", is_flag=True, help="Drop unjudged retrieved documents first (trec_eval -J)."),
        click.option("--max-docs", "-M", type=click.IntRange(min=1), help="Evaluate only the top N documents per query."),
        click.option(
            "--rel-level", "-l", type=int, help="Default relevance threshold of binary measures (label ≥ LEVEL)."
        ),
        click.option("--qrels-format", type=click.Choice(DATA_FORMATS), help="Qrels format (default: by extension)."),
        click.option("--run-format", type=click.Choice(DATA_FORMATS), help="Run format (default: by extension)."),
        click.option(
            "--plugin",
            multiple=True,
            is_eager=True,
            expose_value=False,
            callback=_load_plugins,
            metavar="MODULE",
            help="Import a measure plugin first (a module name or a .py file; repeatable; also $RANKLENS_PLUGINS).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func
