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

    from ranklens.results.fit import terminal_width

    width = terminal_width() or 120  # a file or a pipe: 120 columns
    table = Table(show_lines=True)
    if width >= 100:
        table.add_column("measure", no_wrap=True)
        table.add_column("parameters", overflow="fold", ratio=1)
        table.add_column("@k", no_wrap=True)
        table.add_column("aggregate", no_wrap=True)
        table.add_column("definition", overflow="fold", ratio=4)
        for row in catalog_rows():
            table.add_row(*row)
    else:  # narrow: what is short goes under the name, the definition gets the rest of the line
        table.add_column("measure", overflow="fold", max_width=max(16, width // 4))
        table.add_column("definition", overflow="fold")
        for name, params, cutoff, aggregate, definition in catalog_rows():
            table.add_row(f"{name}\n({params})\n@k {cutoff}\n{aggregate}", definition)
    Console(width=width, highlight=False).print(table)
