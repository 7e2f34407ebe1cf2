"""The ``ranklens`` command line: one module per command, loaded lazily so ``--help`` starts fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ranklens.errors import RanklensError

# command name → (module, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "eval": ("ranklens.cli.eval_cmd", "command", "Evaluate one or more runs against qrels."),
    "trec-eval": ("ranklens.cli.trec_eval_cmd", "command", "Drop-in replacement for trec_eval 10.0."),
    "explain": ("ranklens.cli.explain_cmd", "command", "Show the worked computation of a measure for one query."),
    "measures": ("ranklens.cli.measures_cmd", "command", "List every measure and its parameters."),
    "compare": ("ranklens.cli.compare_cmd", "command", "Compare systems with paired significance tests."),
    "gate": ("ranklens.cli.gate_cmd", "command", "CI regression gate: exit 1 when a quality rule fails."),
    "labels": ("ranklens.cli.labels_cmd", "command", "Derive graded qrels from engagement logs (clicks, purchases, watch time)."),
    "ips": ("ranklens.cli.ips_cmd", "command", "Position bias and unbiased (IPS) DCG from click logs; DCG-vs-nDCG ordering check."),
    "diversity": ("ranklens.cli.diversity_cmd", "command", "alpha-nDCG over intent-level qrels (qid intent docid rel)."),
    "rag": ("ranklens.cli.rag_cmd", "command", "RA-nWG@K, N-Recall, Harm, PROC and %PROC of RAG context sets."),
    "serve": ("ranklens.cli.serve_cmd", "command", "Run the monitoring service and dashboard (http://127.0.0.1:8000)."),
    "push": ("ranklens.cli.push_cmd", "command", "Push `ranklens eval --format json` results to a monitor server."),
    "demo-monitor": ("ranklens.cli.demo_monitor_cmd", "command", "Seed a monitor database with 90 days of demo history."),
}


class LazyGroup(click.Group):
    """A click group whose commands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RanklensError as exc:
            raise UserFacingError(str(exc)) from None
        except FileNotFoundError as exc:
            raise UserFacingError(f"{exc.filename}: no such file") from None
        except BrokenPipeError:
            sys.exit(0)


class UserFacingError(click.ClickException):
    """A one-line error, exit status 2, no traceback."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"ranklens: error: {self.format_message()}", err=True)


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
