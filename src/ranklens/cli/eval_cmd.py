"""``ranklens eval QRELS RUN [RUN...] -m MEASURE...``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ranklens.cli._common import DEFAULT_MEASURES, engine_options, policy_options
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._runs import name_option
from ranklens.results.rendering import FORMATS, render

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="Measures, e.g. -m nDCG@10 AP 'P(rel=2)@5' or trec_eval names (ndcg_cut.10). "
    f"Default: {' '.join(DEFAULT_MEASURES)}.",
)
@click.option("--per-query", "-q", is_flag=True, help="Also show the value of every query.")
@click.option(
    "--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
    help="table (readable), json, csv (run,measure,query_id,value), tsv (measure, query_id, value) or "
    "trec (trec_eval's layout with ranklens names).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write to this file (.json/.csv/.tsv/.parquet).")
@click.option(
    "--segments",
    type=click.Path(dir_okay=False),
    help="A query → segment file ('query_id segment' lines, CSV/TSV with a header, or JSON): the value of "
    "every segment as well as overall (-f table or json).",
)
@click.option(
    "--ci",
    is_flag=True,
    help="Also show a 95% bootstrap confidence interval of the mean of every per-query measure (10,000 "
    "resamples of the queries, seed 0; -f table).",
)
@name_option
@click.option("--quiet", is_flag=True, help="No progress display and no notes about skipped queries or rows.")
@click.option(
    "--stream/--no-stream",
    default=None,
    help="Read TREC runs in blocks, and Parquet runs by row-group batches, with bounded memory; needs each "
    "query's rows together (how run files are written). Default: stream them, and load the file whole if its "
    "queries are not grouped.",
)
@engine_options
@policy_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    per_query: bool,
    fmt: str,
    output: str | None,
    segments: str | None,
    ci: bool,
    names: tuple[str, ...],
    quiet: bool,
    stream: bool | None,
    engine: str,
    spark_master: str,
    memory_limit: str | None,
    policy: EvalPolicy,
) -> None:
    """Evaluate one or more RUNs against QRELS.

    \b
    Examples:
      ranklens eval qrels.txt bm25.run dense.run -m nDCG@10 AP P@5
      ranklens eval qrels.txt bm25=run1.trec dense=run2.trec -m nDCG@5,10
      ranklens eval qrels.txt run.txt -m 'nDCG(gain=exp,ideal=local)@10' --per-query
      ranklens eval qrels.txt run.txt -m nDCG@10 --segments categories.tsv
      ranklens eval qrels.parquet run.parquet -m ndcg_cut.10 -f tsv --missing zero
      ranklens eval qrels.parquet 'runs/day=*/*.parquet' -m nDCG@10 --engine duckdb
    """
    from ranklens.cli._common import echo_note, progress_hook
    from ranklens.cli._progress import wanted
    from ranklens.cli._runs import named_runs
    from ranklens.errors import InputError
    from ranklens.evaluation import evaluate_files, segment_notes

    named = named_runs(runs, names)
    if ci and (output or fmt != "table"):
        raise InputError("--ci is shown with -f table")
    if segments and (output or fmt not in ("table", "json")):
        raise InputError("--segments is shown with -f table or -f json (write per-query values for the rest)")
    if engine == "spark":  # the same FileEvaluation, computed on Spark
        import functools

        from ranklens.backends import choose_backend

        choose_backend([], policy, qrels, [path for _, path in named], engine="spark")  # (the one dispatcher says it)
        from ranklens.spark import evaluate_files as on_spark

        evaluate_files = functools.partial(on_spark, master=spark_master)  # type: ignore[assignment]
    if engine == "duckdb":  # (the dispatcher in evaluate_files: it declines with a reason, exit 2)
        import functools

        evaluate_files = functools.partial(evaluate_files, engine="duckdb", memory_limit=memory_limit)  # type: ignore[assignment]
    results = evaluate_files(
        qrels, named, measures or DEFAULT_MEASURES, policy, stream=stream, progress=progress_hook(wanted(quiet)),
        on_note=None if quiet else echo_note,
    ).results
    meta: dict[str, Any] = {"qrels": qrels, "run_files": [path for _, path in named]}
    expected = _qrels_query_ids(qrels, policy) if _writes_json(fmt, output) else None
    if output:
        _write(results, Path(output), fmt, per_query, meta, expected)
        return
    segment_of = None
    if segments:
        from ranklens.data.segments import read_segments

        segment_of = read_segments(segments)
        for note in () if quiet else segment_notes(results, segment_of):
            echo_note(note)
    click.echo(render(results, fmt, per_query=per_query, meta=meta, segments=segment_of, expected=expected), nl=False)
    if ci:
        _echo_intervals(results)


def _echo_intervals(results: list[Any]) -> None:
    from ranklens.results.intervals import mean_intervals

    for r in results:
        click.echo(f"{r.run}: 95% bootstrap CI of the mean (10,000 resamples over queries):")
        for i in mean_intervals(r):
            click.echo(f"  {i.measure}: {i.mean:.4f} [{i.low:.4f}, {i.high:.4f}] (n={i.n})")
        if r.system:
            click.echo(f"  (system-level, no interval: {', '.join(r.system)})")


def _writes_json(fmt: str, output: str | None) -> bool:
    if output:
        return fmt == "json" or (fmt == "table" and output.lower().endswith(".json"))
    return fmt == "json"


def _qrels_query_ids(qrels: str, policy: EvalPolicy) -> list[str]:
    """The qrels' query ids, for the JSON's ``expected_queries`` / ``skipped_queries`` (what ``ranklens
    push`` needs so that the monitor counts unanswered queries)."""
    from ranklens.evaluation import read_qrels_file

    q, _ = read_qrels_file(qrels, policy)
    return [str(x) for x in q.query_ids.to_pylist()]


def _write(
    results: list[Any], path: Path, fmt: str, per_query: bool, meta: dict[str, Any], expected: list[str] | None
) -> None:
    from ranklens.results.io import write_results

    write_results(results, path, per_query=per_query, meta=meta, format=None if fmt == "table" else fmt, expected=expected)
