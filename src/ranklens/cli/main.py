"""The ``ranklens`` command line: one module per command, loaded lazily so ``--help`` starts fast."""

from __future__ import annotations

import csv
import importlib
import re
import sys
import warnings
import zlib
from typing import Any

import click

from ranklens.errors import RanklensError, RanklensWarning

# command name → (module, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "eval": ("ranklens.cli.eval_cmd", "command", "Evaluate one or more runs against qrels."),
    "trec-eval": ("ranklens.cli.trec_eval_cmd", "command", "Drop-in replacement for trec_eval 10.0."),
    "explain": ("ranklens.cli.explain_cmd", "command", "Show the worked computation of a measure for one query."),
    "measures": ("ranklens.cli.measures_cmd", "command", "List every measure and its parameters."),
    "sql": ("ranklens.cli.sql_cmd", "command", "Print the SQL of nDCG, AP, P, R, RR… for DuckDB, Spark, BigQuery, Snowflake, PostgreSQL, Trino."),
    "fuse": ("ranklens.cli.fuse_cmd", "command", "Fuse runs (RRF, CombSUM, wsum … as ranx); weights optimised on training qrels."),
    "compare": ("ranklens.cli.compare_cmd", "command", "Compare systems with paired significance tests."),
    "robustness": ("ranklens.cli.robustness_cmd", "command", "Does a comparison's conclusion survive every evaluation choice? (multiverse)"),
    "ab": ("ranklens.cli.ab_cmd", "command", "Online A/B test of two rankers between users: Welch, SRM, CUPED, peeking-safe p."),
    "plan": ("ranklens.cli.plan_cmd", "command", "Queries or users per arm needed to detect a difference; MDE at n."),
    "interleave": ("ranklens.cli.interleave_cmd", "command", "Team-draft interleaving log: credit, preference, sign test."),
    "gate": ("ranklens.cli.gate_cmd", "command", "CI regression gate: exit 1 when a quality rule fails."),
    "labels": ("ranklens.cli.labels_cmd", "command", "Derive graded qrels from engagement logs (clicks, purchases, watch time)."),
    "ips": ("ranklens.cli.ips_cmd", "command", "Position bias and unbiased (IPS) DCG from click logs; DCG-vs-nDCG ordering check."),
    "windows": ("ranklens.cli.windows_cmd", "command", "Per-window nDCG, DCG, IPS-DCG and drift from production impressions and engagement."),
    "diversity": ("ranklens.cli.diversity_cmd", "command", "Intent-aware measures (alpha-nDCG, ERR-IA, NRBP …) over intent-level qrels (qid intent docid rel)."),
    "rag": ("ranklens.cli.rag_cmd", "command", "RA-nWG@K, N-Recall, Harm, PROC and %PROC of RAG context sets."),
    "serve": ("ranklens.cli.serve_cmd", "command", "Run the monitoring service and dashboard (http://127.0.0.1:8000)."),
    "ingest": ("ranklens.cli.ingest_cmd", "command", "Send production impressions and engagement events to a monitor server."),
    "push": ("ranklens.cli.push_cmd", "command", "Push `ranklens eval --format json` results to a monitor server."),
    "rules": ("ranklens.cli.rules_cmd", "command", "Manage a monitor project's rules: add (or --file rules.toml), list, edit, disable; headline measure."),
    "demo-monitor": ("ranklens.cli.demo_monitor_cmd", "command", "Seed a monitor database with 90 days of demo history."),
    "judge": ("ranklens.cli.judge_cmd", "command", "Relevance labels from an LLM or offline embedding judge: pairs, run, calibrate."),
    "diff": ("ranklens.cli.diff_cmd", "command", "Which documents changed a measure between two runs: exact per-document decomposition, RBO, tau."),
    "bounds": ("ranklens.cli.bounds_cmd", "command", "Range of each measure over every labelling of the unjudged top-k documents."),
    "synth": ("ranklens.cli.synth_cmd", "command", "Synthetic evaluation queries from a document collection via an LLM, round-trip filtered."),
}


class LazyGroup(click.Group):
    """A click group whose commands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        from ranklens.cli._quiet import with_quiet

        return with_quiet(getattr(importlib.import_module(module), attr))  # type: ignore[no-any-return]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and name not in COMMANDS and not name.startswith("-"):
            from ranklens.errors import did_you_mean

            ctx.fail(f"no such command '{name}'{did_you_mean(name, list(COMMANDS))}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with warnings.catch_warnings():
                # the commands print the notes of their results themselves ("ranklens: note: …")
                warnings.simplefilter("ignore", RanklensWarning)
                return super().invoke(ctx)
        except RanklensError as exc:
            command = self.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else None
            raise UserFacingError(name_input_flags(exc, command)) from None
        except FileNotFoundError as exc:
            raise UserFacingError(f"{exc.filename}: no such file") from None
        except BrokenPipeError:
            sys.exit(0)
        except click.BadParameter as exc:
            if isinstance(exc, click.MissingParameter) or not isinstance(getattr(exc.param, "type", None), click.Path):
                raise  # (click's usage text: the command line is incomplete or mistyped)
            raise UserFacingError(exc.format_message()) from None  # a file that is a directory: one line
        except INPUT_ERRORS as exc:  # last resort: the readers raise FormatError themselves
            raise UserFacingError(unexpected_input_error(exc)) from None


class UserFacingError(click.ClickException):
    """A one-line error, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"ranklens: error: {one_line(self.format_message())}", err=True)


#: what reading a malformed or special input may still raise past the readers (a corrupt gzip stream, a
#: symlink loop, deep nesting, a huge number, a stray CR); each becomes a one-line message, exit status 2
INPUT_ERRORS = (OSError, EOFError, zlib.error, UnicodeError, RecursionError, OverflowError, csv.Error, MemoryError)


def unexpected_input_error(exc: BaseException) -> str:
    """One line for an exception the readers did not turn into a :class:`FormatError`."""
    if isinstance(exc, MemoryError):
        return "out of memory (is an input far bigger than expected, or not the file meant?)"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: cannot read the file: {exc.strerror or exc}"
    text = str(exc).strip()
    detail = f": {text.splitlines()[0]}" if text else ""
    return f"cannot read the input ({type(exc).__name__}{detail})"


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def one_line(message: str) -> str:
    """``message`` with control characters (CR, LF, ESC …) and lone surrogates escaped, so input bytes echoed
    in it can neither break the line nor drive the terminal.

    >>> one_line("got 'a\\rb\\x1b[2J'")
    "got 'a\\\\rb\\\\x1b[2J'"
    """
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), message)


def name_input_flags(exc: BaseException, command: click.Command | None) -> str:
    """The message of ``exc`` in the command line's words: each :class:`~ranklens.errors.Hint` of a
    :class:`~ranklens.errors.FormatError` worded with the command's own input flags (``--qrels-format``,
    ``--run-format``) for the input the error is about (``exc.input_role``; both when it is not known); a
    command without such flags (``rag``, ``trec-eval`` …, whose ``--format`` is an output format) keeps the
    Python words. Nothing is parsed out of the text: the hint is data.

    >>> from ranklens.errors import FormatError, Hint
    >>> cmd = click.Command("eval", params=[click.Option(["--qrels-format"]), click.Option(["--run-format"])])
    >>> e = FormatError("x.xyz", ("choose the format with ", Hint("choose", choices=("trec", "json"))))
    >>> e.input_role = "run"
    >>> name_input_flags(e, cmd)
    'x.xyz: choose the format with --run-format (one of: trec, json)'
    >>> name_input_flags(FormatError("q.tsv", ("(use ", Hint("use", role="qrels", format="trec"), ")")), click.Command("rag"))
    "q.tsv: (use format='trec' in Python)"
    """
    from ranklens.errors import FormatError

    if not isinstance(exc, FormatError):
        return str(exc)
    flags = {p.name for p in command.params if p.name} if command is not None else set()
    role = getattr(exc, "input_role", None)
    return exc.worded(lambda hint: hint.cli_words(flags, role))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ranklens")
def cli() -> None:
    """ranklens — exact, fast ranking evaluation centred on NDCG.

    \b
    Examples:
      ranklens eval qrels.txt run.txt -m nDCG@10 AP P@5
      ranklens trec-eval -q -m all_trec qrels.txt run.txt
      ranklens explain qrels.txt run.txt --query q3 -m nDCG@5
    """


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="ranklens")
