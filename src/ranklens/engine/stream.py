"""Evaluate a run file bigger than memory: read it in blocks, evaluate every complete query, keep only
the per-query values.

Streaming needs the rows of each query to be contiguous in the file (how every retrieval tool writes
runs: query by query, in rank order). The last query of a block may continue in the next block, so its
rows are carried over; a query that reappears after other queries stops the evaluation with an error
naming the line and the fix (``sort -s -k1,1 run.trec``, or ``--no-stream`` to load the file whole).
Each query is evaluated exactly as in one pass, so the per-query values, and the means over them, are
the same (a test checks it on a file split into many blocks).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data._arrow import from_numpy, string_array, to_numpy
from ranklens.data.blocks import DEFAULT_BLOCK_BYTES, block_source, iter_trec_blocks
from ranklens.data.names import run_name_of
from ranklens.data.readers import extra_fields_note
from ranklens.data.run import Run
from ranklens.engine.alignment import AlignReport
from ranklens.engine.blocked import BlockTally
from ranklens.engine.evaluator import Evaluator, nothing_evaluated, tally_notes
from ranklens.engine.pool import SelfPool, self_pool_note
from ranklens.errors import InputError, NotGroupedError, QuerySetError
from ranklens.results.core import Results, assemble

__all__ = ["evaluate_stream", "iter_trec_blocks"]

Progress = Callable[[int, int], None]
"""Called after each block with (bytes read so far, rows read so far)."""


@dataclass
class _Block:
    query: pa.Array
    doc: pa.Array
    score: np.ndarray
    line: np.ndarray
    doc_hash: np.ndarray | None = None
    """the id hash of every document id, when the reader computed it (the compiled tokenizer)"""


def evaluate_stream(
    evaluator: Evaluator,
    path: str,
    *,
    name: str | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Progress | None = None,
    format: str = "trec",
    columns: Mapping[str, str] | None = None,
    batch_rows: int | None = None,
) -> Results:
    """Evaluate the TREC run at ``path`` block by block with bounded memory; same result as one pass.

    ``format="parquet"``: a Parquet run (a regular, uncompressed file), read by batches of ``batch_rows``
    rows (default :data:`~ranklens.data.readers.parquet.DEFAULT_BATCH_ROWS`) of the columns the Parquet
    reader reads, found as it finds them or as ``columns`` (``{column name: role}``) says; its rows, like a
    TREC file's lines, must hold each query's rows together.

    >>> import tempfile, pathlib, ranklens
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 a 1 2.0 t\\nq1 Q0 b 2 1.0 t\\nq2 Q0 c 1 1.0 t\\n")
    >>> ev = ranklens.Evaluator(["P@1"], {"q1": {"b": 1}, "q2": {"c": 1}})
    >>> evaluate_stream(ev, str(path), block_bytes=16).per_query("P@1")
    {'q1': 0.0, 'q2': 1.0}
    """
    # side tables or system-level measures: each block is a block of users of one blocked evaluation (the
    # side tables read once and shared; the system-level measures and the notes' counts in a BlockTally)
    tally = BlockTally() if evaluator._side.active or any(m.family.is_system(m) for m in evaluator.measures) else None
    if tally is not None:
        if not evaluator.streamable:
            raise InputError(f"{path}: this evaluation cannot be streamed (missing='zero' with recommender side tables or system-level measures); read the run whole")
        block_ev = copy.copy(evaluator)
        block_ev.query_set = "intersect"
    else:
        block_ev = Evaluator(
            evaluator.measures,
            evaluator.qrels,
            missing="skip",
            negative=evaluator.negative,
            judged_only=evaluator.judged_only,
            max_docs=evaluator.max_docs,
            rel_level=evaluator.rel_level,
        )
    closed: set[str] = set()
    # the evaluated ids as Arrow strings per block, not Python objects per user (1M users: ~0.3 GB of them)
    id_parts: list[pa.Array] = []
    evaluated: list[pa.Array] = []
    values: list[np.ndarray] = []
    totals = dict(run_only_queries=0, run_only_rows=0, truncated_rows=0, removed_unjudged_rows=0)
    pool = SelfPool()  # the queries judged on the run's own top d (engine/pool.py)
    pending: _Block | None = None
    run_name = name
    rows_read = 0
    extra_fields = 0

    def evaluate(block: _Block) -> None:
        nonlocal run_name
        run = Run.from_arrays(
            block.query, block.doc, block.score, name=run_name or "run", source=path, line_numbers=block.line,
            doc_hash=block.doc_hash,
        )
        nonlocal pool
        res = block_ev.results(run, allow_empty=True, tally=tally)
        if tally is not None:
            tally.blocks += 1
            evaluated.append(pa.array(block_ev.last_query_ids, pa.string()))
        if block_ev.last_pool is not None:
            pool = pool + block_ev.last_pool
        report = block_ev.last_report
        if report is not None:
            for key in totals:
                totals[key] += getattr(report, key)
        id_parts.append(pa.array(res.query_ids, pa.string()))
        values.append(res.values)

    fix = _regroup_hint(path, format)
    for cols, lines, done in block_source(path, format, columns, block_bytes, batch_rows):
        if run_name is None:
            run_name = cols.tag or run_name_of(path)
        extra_fields += cols.extra_fields
        block = _Block(_flat(cols.query_id), _flat(cols.doc_id), _floats(cols.value), lines, getattr(cols, "doc_hash", None))
        rows_read += len(block.query)
        if pending is not None:
            block = _concat(pending, block)
        complete, pending = _split_last_query(block)
        if complete is not None:
            _check_grouped(complete, closed, path, fix)
            evaluate(complete)
        if progress is not None:
            progress(done, rows_read)
    if pending is not None:
        _check_grouped(pending, closed, path, fix)
        evaluate(pending)

    all_ids = pa.concat_arrays(id_parts) if id_parts else string_array([])
    seen_in_qrels = all_ids if tally is None else (pa.concat_arrays(evaluated) if evaluated else string_array([]))
    qrels_ids = evaluator.qrels.query_ids
    absent = to_numpy(pc.invert(pc.is_in(qrels_ids, value_set=seen_in_qrels)))
    n_missing = int(np.count_nonzero(absent))
    if evaluator.query_set == "error" and n_missing:
        first = qrels_ids.filter(from_numpy(absent))[:3].to_pylist()
        raise QuerySetError(f"{n_missing} qrels quer{'y' if n_missing == 1 else 'ies'} not in the run {path} (e.g. {first}); use query set 'intersect' or 'qrels'")
    if evaluator.query_set == "qrels" and n_missing:
        zero_ev = Evaluator(
            evaluator.measures, evaluator.qrels, missing="zero", negative=evaluator.negative, rel_level=evaluator.rel_level,
            judged_only=evaluator.judged_only, max_docs=evaluator.max_docs,
        )
        empty = zero_ev(Run.from_arrays(string_array([]), string_array([]), np.empty(0)), warn=False)
        empty_ids = pa.array(empty.query_ids, pa.string())
        keep = np.flatnonzero(to_numpy(pc.invert(pc.is_in(empty_ids, value_set=seen_in_qrels))))
        all_ids = pa.concat_arrays([all_ids, empty_ids.take(from_numpy(keep))])
        values.append(empty.values[keep])
    if not len(all_ids) and not len(seen_in_qrels):
        raise InputError(nothing_evaluated(path, evaluator.qrels.num_queries, len(closed)))
    matrix = np.vstack(values) if values else np.zeros((0, len(evaluator.measures)))
    # str order is code-point order, which is UTF-8 byte order: the order of every other path
    order = pc.sort_indices(all_ids)  # (bytewise)
    matrix = matrix[to_numpy(order)]
    ids = tuple(all_ids.take(order).to_pylist())
    report = AlignReport(
        qrels_only_queries=n_missing,
        qrels_only_scored_zero=evaluator.query_set == "qrels",
        run_only_queries=totals["run_only_queries"],
        run_only_rows=totals["run_only_rows"],
        truncated_rows=totals["truncated_rows"],
        removed_unjudged_rows=totals["removed_unjudged_rows"],
    )
    options = {**evaluator.options(), "streamed": True}
    if n_missing and evaluator.query_set == "qrels":
        pool = SelfPool(pool.queries + n_missing, pool.depths)
    pool_note = self_pool_note(evaluator.measures, pool)
    notes = (
        ((extra_fields_note(extra_fields),) if extra_fields else ()) + tuple(report.messages())
        + ((pool_note,) if pool_note else ())
    )
    system: dict[int, float] = {}
    if tally is not None:  # worded as one pass words them
        tally.pool = pool if pool.queries else None
        notes = tuple(tally_notes(tally, evaluator, [extra_fields_note(extra_fields)] if extra_fields else [], report.messages()))
        system = {j: acc.value() for j, acc in tally.system.items()}
    return assemble(run_name or "run", evaluator.measures, ids, matrix, notes, options, system)


def _flat(values: object) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    return values  # type: ignore[return-value]


def _floats(values: object) -> np.ndarray:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return to_numpy(values).astype(np.float64, copy=False)
    return np.asarray(values, dtype=np.float64)


def _concat(a: _Block, b: _Block) -> _Block:
    return _Block(
        pa.concat_arrays([a.query, b.query]),
        pa.concat_arrays([a.doc, b.doc]),
        np.concatenate((a.score, b.score)),
        np.concatenate((a.line, b.line)),
        None if a.doc_hash is None or b.doc_hash is None else np.concatenate((a.doc_hash, b.doc_hash)),
    )


def _take(b: _Block, lo: int, hi: int) -> _Block:
    h = None if b.doc_hash is None else b.doc_hash[lo:hi]
    return _Block(b.query[lo:hi], b.doc[lo:hi], b.score[lo:hi], b.line[lo:hi], h)


def _starts(query: pa.Array) -> np.ndarray:
    n = len(query)
    if n < 2:
        return np.zeros(min(n, 1), dtype=np.int64)
    change = to_numpy(pc.not_equal(query[1:], query[:-1]))
    return np.concatenate(([0], np.flatnonzero(change) + 1))


def _split_last_query(b: _Block) -> tuple[_Block | None, _Block | None]:
    """Split off the rows of the block's last query: they may continue in the next block."""
    n = len(b.query)
    if n == 0:
        return None, None
    tail = int(_starts(b.query)[-1])
    return (_take(b, 0, tail) if tail > 0 else None), _take(b, tail, n)


def _regroup_hint(path: str, format: str) -> str:
    """How to make the rows of each query contiguous, for the not-grouped error."""
    if format == "parquet":
        return "Sort the rows by query (a stable sort keeps each ranking's order)"
    return f"Sort the file by query (e.g. sort -s -k1,1 {os.path.basename(path)})"


def _check_grouped(b: _Block, closed: set[str], path: str, fix: str | None = None) -> None:
    starts = _starts(b.query)
    ids = b.query.take(from_numpy(starts)).to_pylist()
    seen_here: set[str] = set()
    for pos, qid in zip(starts.tolist(), ids):
        if qid in closed or qid in seen_here:
            raise NotGroupedError(
                path,
                f"query '{qid}' appears again after other queries; streaming reads the rows of each query "
                f"together. {fix or _regroup_hint(path, 'trec')} or load it whole with --no-stream",
                int(b.line[pos]),
            )
        seen_here.add(qid)
    closed.update(seen_here)
