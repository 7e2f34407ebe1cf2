"""``ranklens sql -m MEASURE... --dialect D --run-table T --qrels-table Q``: print the one SQL formulation."""

from __future__ import annotations

import re

import click

from ranklens.cli._measure_args import MeasureArgsCommand

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*){0,2}$")


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-m", "--measure", "measures", multiple=True, required=True,
              help="Measures: nDCG, DCG (gain=linear|exp), P, R, AP, RR, Success, Rprec, Judged, with cutoffs.")
@click.option("--dialect", default="duckdb", show_default=True,
              help="duckdb, spark, databricks, bigquery, snowflake, postgres or trino.")
@click.option("--run-table", required=True, metavar="T", help="The run: columns query_id, doc_id, score.")
@click.option("--qrels-table", required=True, metavar="Q", help="The qrels: columns query_id, doc_id, relevance.")
@click.option("--missing", type=click.Choice(["skip", "zero"]), default="skip", show_default=True,
              help="Qrels queries absent from the run: skipped, or scored 0 (trec_eval -c).")
@click.option("--negative", type=click.Choice(["trec", "zero"]), default="trec", show_default=True,
              help="Negative labels: pooled but unjudged (trec), or read as 0.")
@click.option("-J", "--judged-only", is_flag=True, help="Drop unjudged documents first (trec_eval -J).")
@click.option("-M", "--max-docs", type=click.IntRange(min=1), help="Only the first N documents per query (trec_eval -M).")
@click.option("--rel-level", "-l", type=float, help="Relevance threshold of the binary measures (trec_eval -l).")
def command(
    measures: tuple[str, ...], dialect: str, run_table: str, qrels_table: str, missing: str, negative: str,
    judged_only: bool, max_docs: int | None, rel_level: float | None,
) -> None:
    """Print one SQL query computing MEASUREs over two tables: rows ``query_id, measure, value``, one per
    evaluated query and measure, and the mean over the queries as ``query_id = 'all'``; the values equal
    ``ranklens eval``'s (trec_eval's semantics: ties by document id descending, bytewise).

    \b
    Examples:
      ranklens sql -m nDCG@10 AP P@5 --dialect spark --run-table runs.bm25 --qrels-table qrels
      ranklens sql -m 'nDCG(gain=exp)@10' --dialect bigquery --run-table ds.run --qrels-table ds.qrels --missing zero
    """
    from ranklens.engine.policy import EvalPolicy
    from ranklens.errors import InputError
    from ranklens.measures import parse_many
    from ranklens.sql import check_dialect, measures_declined, policy_declined, to_dialect, values_sql

    check_dialect(dialect)
    for option, table in (("--run-table", run_table), ("--qrels-table", qrels_table)):
        if not _TABLE.match(table):
            raise InputError(f"{option} must be a table name (name, schema.name or catalog.schema.name); got {table!r}")
    policy = EvalPolicy(missing=missing, negative=negative, judged_only=judged_only, max_docs=max_docs, rel_level=rel_level)
    wanted = parse_many(list(measures), rel_level=rel_level)
    reason = measures_declined(wanted) or policy_declined(policy)
    if reason is not None:
        raise InputError(reason)
    click.echo(to_dialect(values_sql(wanted, policy, run_table=run_table, qrels_table=qrels_table), dialect) + ";")
