"""Evaluate run files as ``ranklens eval`` does, from Python: read the qrels, stream each TREC run in blocks
(reading it whole when its queries are not grouped), name the runs by the one rule, and collect the notes.

The faces (``ranklens eval``, ``compare``, ``gate``) call these functions and print what they return; a
progress display is a hook (:data:`ProgressHook`), so the library never draws on a terminal.

>>> import pathlib, tempfile
>>> from ranklens.engine.policy import EvalPolicy
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "q.qrels").write_text("q1 0 a 1\\nq2 0 c 1\\nq3 0 e 1\\n")
>>> _ = (d / "bm25.run").write_text("q1 Q0 a 1 2.0 bm25\\nq1 Q0 b 2 1.0 bm25\\nq2 Q0 d 1 1.0 bm25\\n")
>>> out = evaluate_files(str(d / "q.qrels"), [str(d / "bm25.run")], ["P@1"], EvalPolicy())
>>> [(r.run, r.per_query("P@1")) for r in out.results]
[('bm25', {'q1': 1.0, 'q2': 0.0})]
>>> [note.split(": ", 1)[1] for note in out.notes]
['1 qrels query with no retrieved document: skipped; use --missing zero (trec_eval -c) to count them as 0']
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence

from ranklens._record import record
from ranklens.backends import compiled_results
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError
from ranklens.hooks import NoteHook, ProgressHook
from ranklens.results.files import FileEvaluation, label_runs, pass_notes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from ranklens.engine.evaluator import Evaluator
    from ranklens.measures.language import MeasuresArg
    from ranklens.results import Results
else:
    NamedTuple = object  # (no typing at run time: ranklens._record.record makes the named tuple)

__all__ = [
    "FileEvaluation",
    "ProgressHook",
    "Systems",
    "compiled_results",
    "evaluate_files",
    "evaluate_run_file",
    "evaluate_systems",
    "no_progress",
    "read_qrels_file",
    "resolve_baseline",
    "segment_notes",
]

@contextlib.contextmanager
def no_progress(label: str, total: int | None) -> Iterator[Callable[[int, int], None]]:
    """The :data:`ProgressHook` that shows nothing."""
    yield lambda done, rows: None


def read_qrels_file(
    qrels: Any, policy: EvalPolicy, *, progress: ProgressHook | None = None, on_note: NoteHook | None = None
) -> tuple[Any, list[str]]:
    """The qrels at ``qrels`` (a path, or anything :func:`ranklens.read_qrels` takes) read with the
    policy's format, columns and label kind, and their notes, each prefixed with ``qrels``."""
    from ranklens.data.io import read_qrels

    with (progress or no_progress)(f"reading {qrels}", None):
        q = read_qrels(qrels, format=policy.qrels_format, columns=policy.qrels_columns, labels=policy.labels or "int")
    notes = [f"{qrels}: {note}" for note in q.notes]
    for note in notes if on_note else ():
        on_note(note)  # type: ignore[misc]
    return q, notes


def evaluate_files(
    qrels: Any,
    runs: Sequence[str | tuple[str | None, str]] | Mapping[str, str],
    measures: MeasuresArg,
    policy: EvalPolicy | None = None,
    *,
    stream: bool | None = None,
    progress: ProgressHook | None = None,
    on_note: NoteHook | None = None,
    engine: str = "memory",
    memory_limit: str | None = None,
) -> FileEvaluation:
    """Evaluate run files against qrels, as ``ranklens eval`` does.

    Args:
        qrels: the qrels file (or a Qrels, frame or dict).
        runs: run file paths (``"-"``: standard input), ``(name or None, path)`` pairs, or ``{name: path}``.
            A run without a given name takes its TREC tag, or its file stem where tags collide
            (:func:`ranklens.data.names.unique_names`).
        measures: the measures.
        policy: the evaluation policy (default :class:`EvalPolicy`); its formats and column maps read the files.
        stream: ``None`` (default) streams 6-column TREC runs in blocks, and uncompressed Parquet runs by
            row-group batches, with bounded memory, and reads a run whole when its queries are not grouped;
            ``True`` streams or fails; ``False`` reads whole.
        progress: a progress display hook (:data:`ProgressHook`).
        on_note: called with every note as soon as it is known (they are also returned).
        engine: ``"memory"`` (the dispatcher's choice of the compiled or the reference backend) or
            ``"duckdb"`` (:mod:`ranklens.duckdb`, ``memory_limit`` its limit); the same Results and notes.

    Raises:
        NotGroupedError: ``stream=True`` and a run's queries are interleaved.
        InputError: ``stream=True`` on a run that is neither a 6-column TREC file nor an uncompressed
            Parquet file, or a run shares no query with the qrels.
    """
    from ranklens.engine.evaluator import Evaluator

    policy = policy if policy is not None else EvalPolicy()
    named: list[tuple[str | None, str]] = (
        [(str(k), v) for k, v in runs.items()] if isinstance(runs, Mapping)
        else [(r if isinstance(r, tuple) else (None, r)) for r in runs]
    )
    from ranklens.backends import choose_backend, run_compiled
    from ranklens.errors import RanklensError
    from ranklens.measures import parse_many

    try:
        wanted = parse_many(measures, rel_level=policy.rel_level)
    except RanklensError:  # (no backend then: the reference parses them again and says what is wrong)
        if engine != "memory":
            raise
        wanted = []
    paths = [path for _, path in named]
    choice = choose_backend(wanted, policy, qrels, paths, stream=stream, engine=engine)
    if choice.name == "duckdb":
        from ranklens.duckdb.files import evaluate_run_paths

        heard: list[str] = []
        found = evaluate_run_paths(
            qrels, paths, wanted, policy, memory_limit=memory_limit, on_note=lambda n: _said(n, heard, on_note)
        )
        for (_, path), res in zip(named, found):
            pass_notes(path, res, heard, on_note)
        return FileEvaluation(label_runs(named, found), heard, [])
    compiled = run_compiled(choice, lambda why: compiled_results(qrels, named, wanted, policy, progress, why))
    if compiled is not None:
        quick, not_grouped = compiled
        said: list[str] = []
        for (_, path), res in zip(named, quick):
            pass_notes(path, res, said, on_note)
        return FileEvaluation(quick, said, not_grouped)
    q, notes = read_qrels_file(qrels, policy, progress=progress, on_note=on_note)
    evaluator = Evaluator(measures, q, policy=policy.replace(qrels_format=None, qrels_columns=None))
    results: list[Any] = []
    read_whole: list[str] = []
    for _, path in named:
        res = evaluate_run_file(evaluator, path, stream=stream, progress=progress, read_whole=read_whole)
        pass_notes(path, res, notes, on_note)
        results.append(res)
    return FileEvaluation(label_runs(named, results), notes, read_whole)


def _said(note: str, notes: list[str], on_note: NoteHook | None) -> None:
    notes.append(note)
    if on_note:
        on_note(note)


def evaluate_run_file(
    evaluator: Evaluator,
    path: str,
    *,
    stream: bool | None = None,
    progress: ProgressHook | None = None,
    read_whole: list[str] | None = None,
) -> Results:
    """Evaluate the run file at ``path`` (``"-"``: standard input, read once and whole) with the run format
    and columns of ``evaluator.policy``, streaming it as :func:`evaluate_files` says; a run read whole after
    a not-grouped stream attempt is appended to ``read_whole``. The notes stay in ``Results.notes``."""
    from ranklens.data.io import read_run, run_columns_of, stat_run
    from ranklens.engine.stream import evaluate_stream
    from ranklens.errors import NotGroupedError

    hook = progress or no_progress
    run_format, columns = evaluator.policy.run_format, evaluator.policy.run_columns
    if path == "-":  # standard input: read once, whole (a pipe cannot be re-read or sized)
        with hook("reading standard input", None):
            run = read_run(path, format=run_format, columns=columns)
        with hook(f"evaluating {run.name} ({len(run):,} rows)", None):
            return evaluator(run, warn=False)
    from ranklens.data.datasets import is_dataset

    if is_dataset(path):  # a directory of Parquet parts or a glob: read whole (its parts, in order)
        if stream:
            raise InputError(f"{path}: streaming reads one file; a Parquet dataset is read whole (use --no-stream)")
        with hook(f"reading {path}", None):
            run = read_run(path, format=run_format, columns=columns)
        with hook(f"evaluating {run.name} ({len(run):,} rows)", None):
            return evaluator(run, warn=False)
    fmt, size = stat_run(path, run_format)  # (a symlink loop or a missing file: a FormatError naming it)
    # streaming reads trec_eval's 6 columns; 5-column and MS MARCO runs are read whole (docs/inputs.md)
    width = run_columns_of(path, run_format) if fmt == "trec" and stream is not False else 6
    if stream and width != 6:
        raise InputError(f"{path}: streaming reads 6-column TREC runs; this one has {width} columns (use --no-stream)")
    if stream is not False and fmt == "trec" and width == 6 and columns is None and getattr(evaluator, "streamable", True):
        try:
            with hook(f"evaluating {os.path.basename(path)}", size) as update:
                return evaluate_stream(evaluator, path, progress=update)
        except NotGroupedError:
            if stream:
                raise
            if read_whole is not None:  # queries are interleaved: read the whole file (memory for all of it)
                read_whole.append(path)
    elif stream is not False and fmt == "parquet" and getattr(evaluator, "streamable", True) and not _by_rank(columns):
        if not _parquet_streams(path, run_format):
            if stream:
                raise InputError(
                    f"{path}: streaming reads uncompressed Parquet files from disk; this one is compressed or not "
                    "a regular file (use --no-stream)"
                )
        else:
            try:  # by row-group batches of the columns the Parquet reader reads
                with hook(f"evaluating {os.path.basename(path)}", size) as update:
                    return evaluate_stream(evaluator, path, progress=update, format="parquet", columns=columns)
            except NotGroupedError:
                if stream:
                    raise
                if read_whole is not None:  # queries are interleaved: read the whole file (memory for all of it)
                    read_whole.append(path)
    elif stream and fmt != "trec":
        raise InputError(f"{path}: streaming reads TREC run files and Parquet files; this one is {fmt} (use --no-stream)")
    with hook(f"reading {path}", None):
        run = read_run(path, format=run_format, columns=columns)
    with hook(f"evaluating {run.name} ({len(run):,} rows)", None):
        return evaluator(run, warn=False)


def _by_rank(columns: Mapping[str, str] | None) -> bool:
    """A column map with a ``rank`` role (positions, read whole: the streaming readers read scores)."""
    return any(str(role).strip().lower() == "rank" for role in (columns or {}).values())


def _parquet_streams(path: str, run_format: str | None) -> bool:
    """A Parquet run that can be read by batches: a regular file, not gzipped, starting with ``PAR1``
    (anything else is read whole, and the whole read says what is wrong with it)."""
    import stat

    from ranklens.data.io import format_of

    if format_of(path, run_format)[1]:
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def segment_notes(results: Sequence[Results], segment_of: Mapping[str, str]) -> list[str]:
    """Notes on evaluated queries without a segment (counted overall only); a run none of whose
    queries has a segment is an :class:`InputError`."""
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


@record
class Systems(NamedTuple):
    """What :func:`evaluate_systems` returns: the systems' final names, their Results, the file each
    came from, and the measures asked for (parsed)."""

    names: list[str]
    results: list[Results]
    paths: list[str]
    measures: list[Any]


def evaluate_systems(
    qrels: Any,
    runs: Sequence[tuple[str | None, str]],
    measures: Sequence[str],
    policy: EvalPolicy,
    *,
    default_measures: Sequence[str],
    progress: ProgressHook | None = None,
    on_note: NoteHook | None = None,
    engine: str = "memory",
    spark_master: str = "local[2]",
    memory_limit: str | None = None,
) -> Systems:
    """The systems of ``ranklens compare``: every ``(given name or None, path)`` of ``runs`` is a run file
    (evaluated here) or saved results (``eval --per-query -f json|parquet``; a file of several runs gives
    several systems). ``measures`` empty means ``default_measures``, or with saved results the measures
    every one of them holds. The qrels are read only when a run needs evaluating; their notes go to
    ``on_note`` (the runs' notes stay in their Results).

    ``engine="spark"`` evaluates the run files on Spark (:func:`ranklens.spark.files.evaluate_run_paths`,
    master ``spark_master``): the same Results, so the same comparison; saved results pass through as ever.
    ``engine="duckdb"`` evaluates them on DuckDB (:func:`ranklens.duckdb.files.evaluate_run_paths`, its memory
    limit ``memory_limit``)."""
    from ranklens.comparison import evaluation_measures
    from ranklens.data.names import unique_names
    from ranklens.measures import parse_many
    from ranklens.results import looks_like_results, read_results

    saved: dict[int, list[Any]] = {}
    for i, (given, path) in enumerate(runs):
        if path != "-" and os.path.isfile(path) and looks_like_results(path):
            found = read_results(path)
            if given is not None and len(found) != 1:
                raise InputError(f"{path}: holds {len(found)} runs; a name names one")
            for r in found:
                if not r.query_ids:
                    raise InputError(
                        f"{path}: holds aggregates only; compare needs per-query values: write them with "
                        "ranklens eval … --per-query -o FILE (.json, .csv or .parquet)"
                    )
            saved[i] = found
    wanted = _compare_measures(measures, [r for found in saved.values() for r in found], default_measures)
    evaluated = evaluation_measures(parse_many(wanted, rel_level=policy.rel_level)) if len(saved) < len(runs) else []
    evaluator = None
    on_spark: dict[int, Any] = {}
    if len(saved) < len(runs):
        from ranklens.backends import choose_backend, run_compiled

        todo = [i for i in range(len(runs)) if i not in saved]
        choice = choose_backend(evaluated, policy, qrels, [runs[i][1] for i in todo], engine=engine)
        if choice.name == "spark":
            from ranklens.spark.files import evaluate_run_paths

            found = evaluate_run_paths(qrels, [runs[i][1] for i in todo], evaluated, policy, master=spark_master)
            on_spark = dict(zip(todo, found))
        if choice.name == "duckdb":
            from ranklens.duckdb.files import evaluate_run_paths as on_duckdb

            found = on_duckdb(qrels, [runs[i][1] for i in todo], evaluated, policy, memory_limit=memory_limit, on_note=on_note)
            on_spark = dict(zip(todo, found))
        compiled = run_compiled(choice, lambda why: compiled_results(qrels, [runs[i] for i in todo], evaluated, policy, progress, why))
        on_spark.update(zip(todo, compiled[0] if compiled else ()))  # (the compiled backend's Results, as Spark's)
    if len(saved) + len(on_spark) < len(runs):
        from ranklens.engine.evaluator import Evaluator  # (the reference: numpy, pyarrow and the kernels)

        q, _ = read_qrels_file(qrels, policy, progress=progress, on_note=on_note)
        evaluator = Evaluator(evaluated, q, policy=policy.replace(qrels_format=None, qrels_columns=None))
    asked = policy.with_aggregate(m.validate() for m in parse_many(wanted, rel_level=policy.rel_level))
    systems: list[Any] = []
    tags: list[str] = []
    sources: list[tuple[str | None, str]] = []
    for i, (given, path) in enumerate(runs):
        if i in saved:
            for r in saved[i]:
                lacking = [str(m) for m in asked if m not in r.measures]
                if lacking:
                    raise InputError(
                        f"{path}: the saved results of {r.run!r} have no {', '.join(lacking)}; they hold "
                        f"{', '.join(map(str, r.measures))} (choose those with -m, or evaluate the run again)"
                    )
                systems.append(r)
                tags.append(r.run)
                sources.append((given, path))
            continue
        if i in on_spark:  # (evaluated on Spark, or by the express path)
            res = on_spark[i]
        else:
            assert evaluator is not None
            res = evaluate_run_file(evaluator, path, progress=progress)
        systems.append(res)
        tags.append(res.run)
        sources.append((given, path))
    names = unique_names([(given, None) if given is not None else (tag, path) for (given, path), tag in zip(sources, tags)])
    return Systems(names, systems, [path for _, path in sources], asked)


def _compare_measures(measures: Sequence[str], saved: list[Any], default: Sequence[str]) -> list[Any]:
    """The measures asked for; by default ``default``, or with saved results the measures every one of
    them holds."""
    if measures:
        return list(measures)
    if not saved:
        return list(default)
    common = [m for m in saved[0].measures if all(m in r.measures for r in saved[1:])]
    if not common:
        raise InputError("the saved results share no measure; choose measures with -m")
    return common


def resolve_baseline(baseline: str | None, paths: Sequence[str], names: Sequence[str]) -> str | int | None:
    """The baseline as :func:`ranklens.compare` takes it: a system's name when ``baseline`` is one of
    ``paths`` (the same file, by any path) or one of ``names``; an index when it is a number; else as given
    (``compare`` names the systems in its error message).

    >>> resolve_baseline("runs/a.run", ["runs/a.run", "runs/b.run"], ["bm25", "dense"])
    'bm25'
    >>> resolve_baseline("1", ["a.run", "b.run"], ["bm25", "dense"])
    1
    """
    if baseline is None:
        return None
    for i, path in enumerate(paths):
        if baseline == path or (os.path.exists(baseline) and os.path.exists(path) and os.path.samefile(baseline, path)):
            return names[i]
    if baseline in names:
        return baseline
    if baseline.isascii() and baseline.isdigit():
        return int(baseline)
    return baseline
