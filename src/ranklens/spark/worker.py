"""What a Python worker does with one bucket of the Arrow path before (or instead of) the reference engine
(issue 30): the compiled pass over the bucket's Arrow columns, and the duplicate check folded into the pass.

A bucket is the run rows and the qrels rows of the queries hashed to it. When the dispatcher
(:func:`ranklens.backends.choose_backend` with ``inputs="columns"``) chose the compiled backend on the driver, a
worker hands the bucket's Arrow buffers to ``_cexpress.parse_qrels_columns`` and ``_cexpress.evaluate_columns``
(as :mod:`ranklens.express` does with a Parquet file's batches); where it declines (a duplicate, an id that is
not printable ASCII, a null, a float label, a score that is not finite, an empty side) the bucket goes to the
reference engine, as before. A bucket the compiled pass evaluated holds no duplicate (it declines on one), so
the duplicate check (:func:`duplicate_rows`) runs only on the buckets it declined: no Spark job of its own.

Rows sent back: see :func:`ranklens.spark.core.evaluate_bucket` (kinds 0 and 1); kind 7 is a duplicated
pair: ``(7, query, 0 run | 1 qrels, extra rows, document)``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DUPLICATE", "compiled_bucket", "duplicate_rows"]

#: the row kind of a duplicated (query, document) pair
DUPLICATE = 7


def _batches(table: Any, names: tuple[str, str, str]) -> list[Any]:
    """The three role columns of ``table`` as record batches (one per chunk)."""
    return table.select(list(names)).combine_chunks().to_batches()  # type: ignore[no-any-return]


def compiled_bucket(run: Any, qrels: Any, specs: tuple[tuple[float, ...], ...], n_stats: int) -> list[tuple] | None:
    """The rows of one bucket (Arrow tables with the role columns) evaluated by the compiled pass, or None
    when it declines (the reference engine then evaluates the bucket).

    >>> import pyarrow as pa
    >>> from ranklens.express import available
    >>> run = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    >>> qrels = pa.table({"query_id": ["q1"], "doc_id": ["b"], "relevance": pa.array([1], pa.int32())})
    >>> rows = compiled_bucket(run, qrels, ((4, 0),), 7)  # RR
    >>> rows is None or rows[0]
    (0, 'q1', 0, 0.5)
    """
    from ranklens import express

    cexpress = express._cexpress
    if cexpress is None or not run.num_rows or not qrels.num_rows:
        return None
    qb = _batches(qrels, ("query_id", "doc_id", "relevance"))
    rb = _batches(run, ("query_id", "doc_id", "score"))
    q_segments = tuple(express._segment(b) for b in qb)
    r_segments = tuple(express._segment(b) for b in rb)
    if None in q_segments or None in r_segments:
        return None
    parsed = cexpress.parse_qrels_columns(qb, q_segments)
    if parsed is None:
        return None
    compiled, qrels_queries = parsed
    got = cexpress.evaluate_columns(compiled, r_segments, specs, True)
    if got is None or got[5] != run.num_rows:
        return None
    _, run_queries, evaluated, values, run_only_rows, *_ = got
    n = len(specs)
    out: list[tuple] = []
    for i, q in enumerate(evaluated):
        out.extend((0, q, j, values[i * n + j]) for j in range(n))
    counts = (
        len(run_queries) - len(evaluated), run_only_rows, qrels_queries - len(evaluated), 0, 0, qrels_queries,
        len(run_queries),
    )
    assert len(counts) == n_stats
    out.extend((1, None, i, float(c)) for i, c in enumerate(counts))
    return out


def duplicate_rows(table: Any, side: int) -> list[tuple]:
    """The (query, document) pairs listed more than once in ``table``: one row ``(7, query, side, extra,
    document)`` for the smallest pair (bytewise, as Spark orders strings), ``extra`` counting every duplicate
    of the table; none when there is no duplicate.

    >>> import pyarrow as pa
    >>> duplicate_rows(pa.table({"query_id": ["q2", "q1", "q2", "q2"], "doc_id": ["b", "a", "b", "b"]}), 0)
    [(7, 'q2', 0, 2.0, 'b')]
    """
    import pyarrow.compute as pc

    pairs = table.select(["query_id", "doc_id"])
    counted = pairs.group_by(["query_id", "doc_id"]).aggregate([([], "count_all")])
    if counted.num_rows == pairs.num_rows:
        return []
    many = counted.filter(pc.greater(counted.column("count_all"), 1))
    extra = int(pc.sum(pc.subtract(many.column("count_all"), 1)).as_py())

    def key(pair: tuple[Any, Any]) -> tuple[bytes, ...]:  # (a null id first, as Spark orders nulls)
        return tuple(b"" if v is None else b"\x00" + str(v).encode("utf-8") for v in pair)

    first = min(zip(many.column("query_id").to_pylist(), many.column("doc_id").to_pylist()), key=key)
    return [(DUPLICATE, first[0], side, float(extra), first[1])]
