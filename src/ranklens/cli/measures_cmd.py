"""``ranklens measures``: list every measure, its parameters and its definition."""

from __future__ import annotations

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--markdown", is_flag=True, help="Print the Markdown tables used in the README.")
def command(markdown: bool) -> None:
    """List every measure with its parameters, cutoff rule, aggregation and definition."""
    from ranklens.measures.catalog import catalog_rows, markdown_measures, markdown_parameters

    if markdown:
        click.echo(markdown_measures() + "\n" + markdown_parameters(), nl=False)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=True)
    for col in ("measure", "parameters", "@k", "aggregate", "definition"):
        table.add_column(col, overflow="fold")
    for row in catalog_rows():
        table.add_row(*row)
    Console(width=140).print(table)
