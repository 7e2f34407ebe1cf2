"""``ranklens eval QRELS RUN [RUN...] -m MEASURE...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ranklens.cli._common import policy_options
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._output import FORMATS, render

DEFAULT_MEASURES = ("nDCG@10", "AP", "P@10", "RR", "R@100")


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
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
@click.option("--quiet", is_flag=True, help="No progress display and no notes about skipped queries or rows.")
@click.option(
    "--stream/--no-stream",
    default=None,
    help="Read TREC runs in blocks with bounded memory; needs each query's rows together (how run files "
    "are written). Default: stream TREC runs, and load the file whole if its queries are not grouped.",
)
@policy_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    per_query: bool,
    fmt: str,
    output: str | None,
    quiet: bool,
    stream: bool | None,
    missing: str,
    negative: str,
    judged_only: bool,
    max_docs: int | None,
    rel_level: int | None,
    qrels_format: str | None,
    run_format: str | None,
) -> None:
    """Evaluate one or more RUNs against QRELS.

    \b
    Examples:
      ranklens eval qrels.txt bm25.run dense.run -m nDCG@10 AP P@5
      ranklens eval qrels.txt run.txt -m 'nDCG(gain=exp,ideal=local)@10' --per-query
      ranklens eval qrels.parquet run.parquet -m ndcg_cut.10 -f tsv --missing zero
    """
    from ranklens.cli._progress import status, wanted
    from ranklens.data.io import read_qrels
    from ranklens.engine.evaluator import Evaluator

    show = wanted(quiet)
    with status(f"reading {qrels}", enabled=show):
        q = read_qrels(qrels, format=qrels_format)
    evaluator = Evaluator(
        measures or DEFAULT_MEASURES,
        q,
        missing=missing,
        negative=negative,
        judged_only=judged_only,
        max_docs=max_docs,
        rel_level=rel_level,
    )
    results = []
    for path in runs:
        res = _evaluate_one(evaluator, path, run_format, stream, show)
        if not quiet:
            for note in res.notes:
                click.echo(f"ranklens: note: {path}: {note}", err=True)
        results.append(res)
    meta: dict[str, Any] = {"qrels": qrels, "run_files": list(runs)}
    if output:
        _write(results, Path(output), fmt, per_query, meta)
        return
    click.echo(render(results, fmt, per_query=per_query, meta=meta), nl=False)


def _evaluate_one(evaluator: Any, path: str, run_format: str | None, stream: bool | None, show: bool) -> Any:
    """Evaluate one run file, streaming it when asked to (or, by default, when it is big)."""
    import os

    from ranklens.cli._progress import byte_progress, status
    from ranklens.data.io import format_of, read_run
    from ranklens.engine.stream import evaluate_stream

    from ranklens.errors import InputError, NotGroupedError

    if path == "-":  # standard input: read once, whole (a pipe cannot be re-read or sized)
        with status("reading standard input", enabled=show):
            run = read_run(path, format=run_format)
        with status(f"evaluating {run.name} ({len(run):,} rows)", enabled=show):
            return evaluator(run)
    fmt, _ = format_of(path, run_format)
    size = os.path.getsize(path)
    if stream is not False and fmt == "trec":
        try:
            with byte_progress(f"evaluating {os.path.basename(path)}", size, enabled=show) as update:
                return evaluate_stream(evaluator, path, progress=update)
        except NotGroupedError:
            if stream:
                raise
            # queries are interleaved: read the whole file instead (needs memory for all of it)
    elif stream:
        raise InputError(f"{path}: streaming reads TREC run files; this one is {fmt} (use --no-stream)")
    with status(f"reading {path}", enabled=show):
        run = read_run(path, format=run_format)
    with status(f"evaluating {run.name} ({len(run):,} rows)", enabled=show):
        return evaluator(run)


def _write(results: list[Any], path: Path, fmt: str, per_query: bool, meta: dict[str, Any]) -> None:
    from ranklens.results_io import write_results

    write_results(results, path, per_query=per_query, meta=meta, format=None if fmt == "table" else fmt)
