"""``ranklens eval QRELS RUN [RUN...] -m MEASURE...``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ranklens.cli._common import DEFAULT_MEASURES, policy_options
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._output import FORMATS, render
from ranklens.cli._runs import name_option


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
@click.option(
    "--segments",
    type=click.Path(dir_okay=False),
    help="A query → segment file ('query_id segment' lines, CSV/TSV with a header, or JSON): the value of "
    "every segment as well as overall (-f table or json).",
)
@name_option
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
    segments: str | None,
    names: tuple[str, ...],
    quiet: bool,
    stream: bool | None,
    missing: str,
    negative: str,
    judged_only: bool,
    max_docs: int | None,
    rel_level: float | None,
    label_kind: str,
    qrels_format: str | None,
    run_format: str | None,
    qrels_columns: dict[str, str] | None,
    run_columns: dict[str, str] | None,
) -> None:
    """Evaluate one or more RUNs against QRELS.

    \b
    Examples:
      ranklens eval qrels.txt bm25.run dense.run -m nDCG@10 AP P@5
      ranklens eval qrels.txt bm25=run1.trec dense=run2.trec -m nDCG@5,10
      ranklens eval qrels.txt run.txt -m 'nDCG(gain=exp,ideal=local)@10' --per-query
      ranklens eval qrels.txt run.txt -m nDCG@10 --segments categories.tsv
      ranklens eval qrels.parquet run.parquet -m ndcg_cut.10 -f tsv --missing zero
    """
    import dataclasses

    from ranklens.cli._progress import status, wanted
    from ranklens.cli._runs import final_names, named_runs
    from ranklens.data.io import read_qrels
    from ranklens.engine.evaluator import Evaluator
    from ranklens.errors import InputError

    named = named_runs(runs, names)
    if segments and (output or fmt not in ("table", "json")):
        raise InputError("--segments is shown with -f table or -f json (write per-query values for the rest)")
    show = wanted(quiet)
    with status(f"reading {qrels}", enabled=show):
        q = read_qrels(qrels, format=qrels_format, columns=qrels_columns, labels=label_kind)
    if not quiet:
        for note in q.notes:
            click.echo(f"ranklens: note: {qrels}: {note}", err=True)
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
    for _, path in named:
        res = _evaluate_one(evaluator, path, run_format, stream, show, run_columns)
        if not quiet:
            for note in res.notes:
                click.echo(f"ranklens: note: {path}: {note}", err=True)
        results.append(res)
    labels = final_names(named, [r.run for r in results])
    results = [r if r.run == label else dataclasses.replace(r, run=label) for r, label in zip(results, labels)]
    meta: dict[str, Any] = {"qrels": qrels, "run_files": [path for _, path in named]}
    if output:
        _write(results, Path(output), fmt, per_query, meta)
        return
    segment_of = None
    if segments:
        from ranklens.data.segments import read_segments

        segment_of = read_segments(segments)
        if not quiet:
            for note in _segment_notes(results, segment_of):
                click.echo(f"ranklens: note: {note}", err=True)
    click.echo(render(results, fmt, per_query=per_query, meta=meta, segments=segment_of), nl=False)


def _segment_notes(results: list[Any], segment_of: dict[str, str]) -> list[str]:
    from ranklens.errors import InputError

    notes = []
    for r in results:
        without = [q for q in r.query_ids if q not in segment_of]
        if len(without) == len(r.query_ids):
            raise InputError(f"{r.run}: no evaluated query has a segment in the --segments file")
        if without:
            shown = ", ".join(without[:5]) + (", …" if len(without) > 5 else "")
            notes.append(
                f"{r.run}: {len(without)} evaluated quer{'y has' if len(without) == 1 else 'ies have'} no segment "
                f"({shown}); counted overall only"
            )
    return notes


def _evaluate_one(
    evaluator: Any,
    path: str,
    run_format: str | None,
    stream: bool | None,
    show: bool,
    columns: dict[str, str] | None = None,
) -> Any:
    """Evaluate one run file, streaming it when asked to (or, by default, when it is big)."""
    import os

    from ranklens.cli._progress import byte_progress, status
    from ranklens.data.io import read_run, run_columns_of, stat_run
    from ranklens.engine.stream import evaluate_stream

    from ranklens.errors import InputError, NotGroupedError

    if path == "-":  # standard input: read once, whole (a pipe cannot be re-read or sized)
        with status("reading standard input", enabled=show):
            run = read_run(path, format=run_format, columns=columns)
        with status(f"evaluating {run.name} ({len(run):,} rows)", enabled=show):
            return evaluator(run)
    fmt, size = stat_run(path, run_format)  # (a symlink loop or a missing file: a FormatError naming it)
    # streaming reads trec_eval's 6 columns; 5-column and MS MARCO runs are read whole (docs/inputs.md)
    width = run_columns_of(path, run_format) if fmt == "trec" and stream is not False else 6
    if stream and width != 6:
        raise InputError(f"{path}: streaming reads 6-column TREC runs; this one has {width} columns (use --no-stream)")
    if stream is not False and fmt == "trec" and width == 6 and columns is None:
        try:
            with byte_progress(f"evaluating {os.path.basename(path)}", size, enabled=show) as update:
                return evaluate_stream(evaluator, path, progress=update)
        except NotGroupedError:
            if stream:
                raise
            # queries are interleaved: read the whole file instead (needs memory for all of it)
    elif stream and fmt != "trec":
        raise InputError(f"{path}: streaming reads TREC run files; this one is {fmt} (use --no-stream)")
    with status(f"reading {path}", enabled=show):
        run = read_run(path, format=run_format, columns=columns)
    with status(f"evaluating {run.name} ({len(run):,} rows)", enabled=show):
        return evaluator(run)


def _write(results: list[Any], path: Path, fmt: str, per_query: bool, meta: dict[str, Any]) -> None:
    from ranklens.results_io import write_results

    write_results(results, path, per_query=per_query, meta=meta, format=None if fmt == "table" else fmt)
