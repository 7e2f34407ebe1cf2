"""The scan plan of the Arrow path (issue 30): Parquet inputs given as paths are read by the Python workers
themselves, with pyarrow; Spark only schedules the tasks. No row crosses the JVM.

The shuffle plan (:func:`ranklens.spark.core.evaluate_arrow`) sends every run and qrels row through Spark's
Parquet reader, a shuffle and the Arrow stream to the Python workers: at 20M rows the JVM spends 60 of 66 CPU
seconds moving rows the workers then evaluate in 6. When run and qrels are Parquet paths (a file, a directory
of parts, a glob, a URI pyarrow's file systems open), the scan plan instead:

* splits the run's row groups into tasks (consecutive row groups, file order) and the qrels' into one a core;
* a run task reads its row groups (the three role columns), checks them (the checks of
  :func:`ranklens.spark.sql.validate_frames`), and evaluates every query it holds **except its first and last
  query** (which may continue in the neighbouring task: "deferred"), with the qrels rows of exactly those
  queries (read from the qrels row groups whose query-id statistics can hold one of them, filtered by the set);
  it sends back the values and counts (:func:`ranklens.spark.core.evaluate_bucket`'s rows), every query id it
  saw (and whether it deferred it), and the run and qrels rows of its deferred queries;
* a qrels task reads the query-id column of its qrels row groups and sends back the distinct ids (the rows of
  the queries the run has are checked by the run tasks that read them; the others on the driver);
* the driver checks that no query was evaluated by one task while another task also holds rows of it. A run
  grouped by query (any order of the groups) passes: its queries straddle tasks only at their boundaries, which
  were deferred. If not (a run whose queries are interleaved across row groups), the scan runs once more with
  those queries deferred in every task (when they are at most :data:`REPAIR_LIMIT` queries; else the shuffle
  plan evaluates, and ``SparkEvaluation.plan_note`` says why). The deferred queries are then evaluated together on the
  driver (their run rows in file order, all their qrels rows), by the same bucket function; the qrels queries
  no run task saw are read on the driver (checked, duplicates included), counted, and under ``missing="zero"``
  evaluated.

Every refusal (a duplicate, a null or empty id, a NaN score, a bad label, a type the plan does not read) is left
to the shuffle plan, which words it exactly as before: the scan raises :class:`Fallback` and the caller runs the
shuffle plan on the same paths. A wrong number is never the price of speed: a query is evaluated once, with all
its rows, or the shuffle plan evaluates.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["REPAIR_LIMIT", "Fallback", "Outcome", "ScanInput", "plan_input", "scan_evaluate"]

#: at most this many queries found in several run tasks (a run not grouped by query) are deferred to the driver
#: by a second scan; more: the shuffle plan
REPAIR_LIMIT = 50_000

#: the row kinds of the scan, beside :func:`ranklens.spark.core.evaluate_bucket`'s: a run task's query id
#: ``(9, query, task, rows, None, deferred)``, a deferred run row ``(10, query, task, score, doc)``, a deferred
#: qrels row ``(11, query, task, None, doc, label)``, a qrels task's query id ``(12, query, task)``, a refusal
#: left to the shuffle plan ``(15, reason)``
RUN_ID, DEFERRED_RUN, DEFERRED_QRELS, QRELS_ID, REFUSE = 9, 10, 11, 12, 15

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class Fallback(Exception):
    """The scan plan does not evaluate these inputs; the message says why (the shuffle plan does)."""


@dataclasses.dataclass(frozen=True)
class ScanInput:
    """A Parquet input as the tasks read it: its files (``filesystem`` opens them), the file's names of the
    three role columns, the row groups of every file (rows each) and the query id's min/max per row group
    (None where a file has no statistics)."""

    path: str
    filesystem: Any
    files: tuple[str, ...]
    columns: tuple[str, str, str]
    groups: tuple[tuple[int, ...], ...]
    bounds: tuple[tuple[tuple[str, str] | None, ...], ...]
    label_type: str = ""
    id_types: tuple[str, str] = ("string", "string")
    dictionaries: tuple[bool, ...] = ()

    @property
    def rows(self) -> int:
        return sum(sum(g) for g in self.groups)

    def tasks(self, n: int) -> list[tuple[tuple[int, int], ...]]:
        """Consecutive ``(file, row group)`` pieces in about ``n`` tasks of similar row counts, in file order.

        >>> ScanInput("r", None, ("a", "b"), ("q", "d", "s"), ((4, 4, 4), (4,)), ((None,) * 3, (None,))).tasks(2)
        [((0, 0), (0, 1)), ((0, 2), (1, 0))]
        """
        target = max(1, -(-self.rows // max(1, n)))
        out: list[tuple[tuple[int, int], ...]] = []
        current: list[tuple[int, int]] = []
        size = 0
        for f, groups in enumerate(self.groups):
            for g, rows in enumerate(groups):
                if current and size + rows > target * 1.25:
                    out.append(tuple(current))
                    current, size = [], 0
                current.append((f, g))
                size += rows
        if current:
            out.append(tuple(current))
        return out


def is_parquet_path(value: Any) -> bool:
    """Whether ``value`` is a path (a string or ``os.PathLike``) rather than a DataFrame.

    >>> is_parquet_path("runs/bm25/"), is_parquet_path(object())
    (True, False)
    """
    return isinstance(value, (str, os.PathLike))


def _filesystem(path: str) -> tuple[Any, str]:
    import pyarrow.fs as pafs

    if _URI.match(path):
        uri = re.sub(r"^s3[an]://", "s3://", path)
        try:
            return pafs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]
        except Exception as e:  # (pyarrow has no file system for the scheme, or no credentials: Spark may)
            raise Fallback(f"pyarrow cannot open {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return pafs.LocalFileSystem(), path


def _files(fs: Any, root: str, path: str) -> list[str]:
    import pyarrow.fs as pafs

    if not _URI.match(path):
        from ranklens.data.datasets import dataset_files, is_dataset

        # (absolute: a worker's working directory is not the driver's)
        return [os.path.abspath(f) for f in (dataset_files(path) if is_dataset(path) else [path])]
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        return [root]
    if info.type != pafs.FileType.Directory:
        raise Fallback(f"{path}: not a file or directory pyarrow can list")
    found = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    names = sorted(
        i.path for i in found if i.type == pafs.FileType.File
        and not any(part.startswith((".", "_")) for part in i.path[len(root):].split("/") if part)
    )
    return names


#: the Arrow types the tasks read as ids (cast to strings, as ``select_roles`` casts them), scores and labels
_ID_TYPES = ("string", "large_string", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
_SCORE_TYPES = ("double", "float", "int8", "int16", "int32", "int64")
_INT_LABEL_TYPES = ("int8", "int16", "int32", "int64")


def plan_input(path: str, columns: Mapping[str, str] | None, roles: tuple[str, str, str], labels: str = "int") -> ScanInput:
    """The :class:`ScanInput` of the Parquet input ``path`` (metadata only), or :class:`Fallback`.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "run.parquet")
    >>> pq.write_table(pa.table({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 2.0]}), path, row_group_size=1)
    >>> got = plan_input(path, None, ("query_id", "doc_id", "score"))
    >>> got.groups, got.bounds
    (((1, 1),), ((('q1', 'q1'), ('q2', 'q2')),))
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(path)
    fs, root = _filesystem(path)
    try:
        files = _files(fs, root, path)
    except Fallback:
        raise
    except Exception as e:
        raise Fallback(f"{path}: {e}") from None
    by_role = {role: col for col, role in (columns or {}).items()}
    names = tuple(by_role.get(role, role) for role in roles)
    from ranklens.data.parquet_batches import small_dictionaries

    groups: list[tuple[int, ...]] = []
    bounds: list[tuple[tuple[str, str] | None, ...]] = []
    dictionaries: list[bool] = []
    types: set[tuple[str, ...]] = set()
    for f in files:
        try:
            with fs.open_input_file(f) as handle:
                meta = pq.ParquetFile(handle).metadata
                schema = meta.schema.to_arrow_schema()
        except Exception:
            raise Fallback(f"{f}: not read as Parquet by pyarrow") from None
        if any(schema.names.count(n) != 1 for n in names):
            raise Fallback(f"{f}: the columns {', '.join(names)} are not each in the file once")
        typed = tuple(str(schema.field(n).type) for n in names)
        types.add(typed)
        qpos = [i for i in range(meta.num_columns) if meta.schema.column(i).path == names[0]]
        groups.append(tuple(meta.row_group(g).num_rows for g in range(meta.num_row_groups)))
        dictionaries.append(small_dictionaries(meta, names[0]))
        row_bounds: list[tuple[str, str] | None] = []
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(qpos[0]).statistics if qpos else None
            ok = stats is not None and stats.has_min_max and typed[0] == "string"
            row_bounds.append((stats.min, stats.max) if ok else None)  # type: ignore[union-attr]
        bounds.append(tuple(row_bounds))
    if not files or not any(sum(g) for g in groups):  # (an empty input: the shuffle plan's reader says it)
        raise Fallback(f"{path}: no rows")
    if len(types) != 1:
        raise Fallback(f"{path}: the files' column types differ")
    typed = types.pop()
    value_types = _SCORE_TYPES if roles[2] == "score" else _INT_LABEL_TYPES if labels == "int" else _SCORE_TYPES
    if typed[0] not in _ID_TYPES or typed[1] not in _ID_TYPES or typed[2] not in value_types:
        raise Fallback(f"{path}: column types {', '.join(typed)} (the scan reads string or integer ids, numeric values)")
    del pa
    return ScanInput(path, fs, tuple(files), names, tuple(groups), tuple(bounds), typed[2], (typed[0], typed[1]), tuple(dictionaries))  # type: ignore[arg-type]


# ── in the Python workers ───────────────────────────────────────────────────────────────────────────────


def read_pieces(src: ScanInput, pieces: Sequence[tuple[int, int]], roles: tuple[str, str, str]) -> Any:
    """The role columns of ``pieces`` (``(file, row group)``) of ``src`` as one Arrow table named by role: ids as
    strings, scores as float64 (labels as stored)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    by_file: dict[int, list[int]] = {}
    for f, g in pieces:
        by_file.setdefault(f, []).append(g)
    for f, gs in by_file.items():
        with src.filesystem.open_input_file(src.files[f]) as handle:
            t = pq.ParquetFile(handle).read_row_groups(gs, columns=list(src.columns), use_threads=False)
        tables.append(t.select(list(src.columns)).rename_columns(list(roles)))
    t = pa.concat_tables(tables) if len(tables) != 1 else tables[0]
    return _as_roles(t, roles).combine_chunks()


def _as_roles(t: Any, roles: tuple[str, str, str]) -> Any:
    """``t``'s three columns named by role: ids as strings, scores as float64 (labels as stored)."""
    import pyarrow as pa

    cols = []
    for role, col in zip(roles, t.columns):
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode() if isinstance(col, pa.Array) else pa.chunked_array(
                [c.dictionary_decode() for c in col.chunks], col.type.value_type)
        if role in ("query_id", "doc_id") and col.type != pa.string():
            col = col.cast(pa.string())
        elif role == "score" and col.type != pa.float64():
            col = col.cast(pa.float64())
        cols.append(col)
    return pa.table(cols, names=list(roles))


def check_table(t: Any, value: str, labels: str, negative: str) -> str | None:
    """Why the shuffle plan must word a refusal of these rows (validate_frames' checks), or None.

    >>> import pyarrow as pa
    >>> check_table(pa.table({"query_id": ["q1", ""], "doc_id": ["a", "b"], "score": [1.0, 2.0]}), "score", "int", "trec")
    'an empty query_id'
    """
    import numpy as np
    import pyarrow.compute as pc

    for role in ("query_id", "doc_id"):
        col = t.column(role)
        if col.null_count or _has_empty(col):
            return f"an empty {role}"
    v = t.column(value)
    if v.null_count:
        return f"a null {value}"
    if len(v) == 0:
        return None
    if value == "score":
        return None if np.isfinite(v.to_numpy()).all() else "a score that is not finite"
    if labels == "int":
        lo, hi = pc.min_max(v).values()
        if lo.as_py() < -(2**31) or hi.as_py() >= 2**31:
            return "a label outside 32 bits"
    elif not np.isfinite(v.to_numpy().astype(np.float64)).all():
        return "a label that is not finite"
    if negative == "error" and pc.min(v).as_py() < 0:
        return "a negative label"
    return None


def _has_empty(col: Any) -> bool:
    """Whether a string column holds an empty string (from its offsets: no pass over the bytes)."""
    import numpy as np
    import pyarrow as pa

    for chunk in col.chunks if isinstance(col, pa.ChunkedArray) else [col]:
        if len(chunk) == 0:
            continue
        if chunk.type != pa.string():
            return bool(len(chunk) and pc_any_empty(chunk))
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset)
        if (np.diff(offsets) == 0).any():
            return True
    return False


def pc_any_empty(chunk: Any) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.equal(pc.binary_length(chunk), 0)).as_py())


def _ends(ids: Any) -> set[str]:
    return {ids[0].as_py(), ids[len(ids) - 1].as_py()} if len(ids) else set()


def qrels_for(qrels: ScanInput, wanted: Any) -> Any:
    """The qrels rows of the queries ``wanted`` (an Arrow string array), ids as strings: only the row groups whose
    query-id range can hold one of them are considered (all of them where a file has no statistics); of those,
    the query-id column is read first (as its dictionary where the file stores small dictionaries: the set is
    tested on the distinct ids, not on every row) and the other columns only of a row group holding a match."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    roles = ("query_id", "doc_id", "relevance")
    keys = sorted(set(wanted.to_pylist()))
    value_set = pa.array(keys, pa.string())
    found = []
    for f, groups in enumerate(qrels.bounds):
        candidates = []
        for g, bound in enumerate(groups):
            if bound is not None:
                i = bisect.bisect_left(keys, bound[0])
                if i == len(keys) or keys[i] > bound[1]:
                    continue
            candidates.append(g)
        if not candidates or not keys:
            continue
        with qrels.filesystem.open_input_file(qrels.files[f]) as handle:
            as_dictionary = qrels.dictionaries[f] and qrels.id_types[0] == "string"
            pf = pq.ParquetFile(handle, read_dictionary=[qrels.columns[0]] if as_dictionary else None)
            for g in candidates:
                col = pf.read_row_group(g, columns=[qrels.columns[0]], use_threads=False).column(0).combine_chunks()
                if as_dictionary and pa.types.is_dictionary(col.type):
                    hit = pc.is_in(col.dictionary, value_set=value_set)
                    if not pc.any(hit).as_py():
                        continue
                    mask = pc.take(hit, col.indices)
                else:
                    mask = pc.is_in(col.cast(pa.string()) if col.type != pa.string() else col, value_set=value_set)
                    if not pc.any(mask).as_py():
                        continue
                t = pf.read_row_group(g, columns=list(qrels.columns), use_threads=False).select(list(qrels.columns))
                found.append(_as_roles(t.filter(mask), roles))
    if not found:
        return pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                         "relevance": pa.array([], pa.type_for_alias(qrels.label_type))})
    return pa.concat_tables(found).combine_chunks()


def _id_rows(kind: int, task: int, ids: Any, deferred: set[str]) -> Any:
    """``(kind, query, task, rows, None, deferred)`` for every distinct id of ``ids``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    counted = pc.value_counts(ids)
    q = counted.field("values")
    flag = pc.is_in(q, value_set=pa.array(sorted(deferred), pa.string())).cast(pa.float64())
    n = len(q)
    return _table(pa.array([kind] * n, pa.int32()), q, pa.array([task] * n, pa.int32()),
                  counted.field("counts").cast(pa.float64()), pa.nulls(n, pa.string()), flag)


def _table(kind: Any, query: Any, measure: Any, value: Any, doc: Any, label: Any) -> Any:
    import pyarrow as pa

    from ranklens.spark.rows import ROW_COLUMNS

    return pa.table([kind, query, measure, value, doc, label], names=ROW_COLUMNS)


def _rows_of(kind: int, task: int, t: Any, value: str | None, label: str | None) -> Any:
    import pyarrow as pa

    n = t.num_rows
    return _table(
        pa.array([kind] * n, pa.int32()), t.column("query_id"), pa.array([task] * n, pa.int32()),
        t.column(value).cast(pa.float64()) if value else pa.nulls(n, pa.float64()), t.column("doc_id"),
        t.column(label).cast(pa.float64()) if label else pa.nulls(n, pa.float64()),
    )


def _refuse(reason: str) -> Any:
    from ranklens.spark.rows import rows_out

    return rows_out([(REFUSE, reason, 0, 0.0, None, None)])


def run_task(
    task: int, run: ScanInput, qrels: ScanInput, pieces: Sequence[tuple[int, int]], fn: Any, defer: frozenset[str],
    labels: str, negative: str,
) -> Any:
    """One run task: its rows evaluated but those of its first and last query (and of ``defer``), which it
    sends back with their qrels rows; every query id it saw."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = read_pieces(run, pieces, ("query_id", "doc_id", "score"))
    why = check_table(t, "score", labels, negative)
    if why:
        return _refuse(f"{run.path}: {why}")
    ids = t.column("query_id")
    deferred = _ends(ids) | set(defer)
    later = pc.is_in(ids, value_set=pa.array(sorted(deferred), pa.string()))
    rest, held = t.filter(pc.invert(later)), t.filter(later)
    rest_ids = pc.unique(rest.column("query_id"))
    q = qrels_for(qrels, pa.concat_arrays([rest_ids, pc.unique(held.column("query_id"))]))
    why = check_table(q, "relevance", labels, negative)
    if why:
        return _refuse(f"{qrels.path}: {why}")
    in_rest = pc.is_in(q.column("query_id"), value_set=rest_ids)
    parts = [_id_rows(RUN_ID, task, ids, deferred), _rows_of(DEFERRED_RUN, task, held, "score", None),
             _rows_of(DEFERRED_QRELS, task, q.filter(pc.invert(in_rest)), None, "relevance")]
    if rest.num_rows:
        parts.append(fn(rest, q.filter(in_rest)))
    return pa.concat_tables(parts)


def qrels_task(task: int, qrels: ScanInput, pieces: Sequence[tuple[int, int]]) -> Any:
    """One qrels task: the distinct query ids of its row groups (the query-id column alone is read; the rows of
    the queries the run has are checked by the run tasks that read them, the others on the driver)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    by_file: dict[int, list[int]] = {}
    for f, g in pieces:
        by_file.setdefault(f, []).append(g)
    found = []
    for f, gs in by_file.items():
        as_dictionary = qrels.dictionaries[f] and qrels.id_types[0] == "string"
        with qrels.filesystem.open_input_file(qrels.files[f]) as handle:
            pf = pq.ParquetFile(handle, read_dictionary=[qrels.columns[0]] if as_dictionary else None)
            col = pf.read_row_groups(gs, columns=[qrels.columns[0]], use_threads=False).column(0)
        for chunk in col.chunks:
            if pa.types.is_dictionary(chunk.type):  # (the ids a row group uses: its distinct indices)
                found.append(chunk.dictionary.take(pc.unique(chunk.indices)))
            else:
                found.append(pc.unique(chunk.cast(pa.string()) if chunk.type != pa.string() else chunk))
    ids = pc.unique(pa.chunked_array(found, pa.string())) if found else pa.array([], pa.string())
    n = len(ids)
    return _table(pa.array([QRELS_ID] * n, pa.int32()), ids, pa.array([task] * n, pa.int32()),
                  pa.nulls(n, pa.float64()), pa.nulls(n, pa.string()), pa.nulls(n, pa.float64()))


def _task_function(run: ScanInput, qrels: ScanInput, run_tasks: list[Any], qrels_tasks: list[Any], fn: Any,
                   defer: frozenset[str], labels: str, negative: str) -> Any:
    """What ``mapInArrow`` runs over ``spark.range(tasks)``: task ``i`` < len(run_tasks) is a run task, the rest
    qrels tasks."""

    def scan_partition(batches: Iterator[Any]) -> Iterator[Any]:
        from ranklens.errors import RanklensError

        for b in batches:
            for i in b.column(0).to_pylist():
                try:
                    if i < len(run_tasks):
                        out = run_task(i, run, qrels, run_tasks[i], fn, defer, labels, negative)
                    else:
                        out = qrels_task(i, qrels, qrels_tasks[i - len(run_tasks)])
                except (RanklensError, OSError, ValueError, TypeError) as e:  # (pyarrow's errors are these)
                    out = _refuse(f"task {i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                yield _blob(out)

    return scan_partition


def _blob(table: Any) -> Any:
    """A task's rows as one row of one binary column: their Arrow IPC stream. Spark carries a few large values
    instead of converting every row to its own row format and back (the JVM's CPU and the driver's wait)."""
    import numpy as np
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = sink.getvalue()
    offsets = pa.py_buffer(np.array([0, data.size], dtype=np.int32).tobytes())
    return pa.record_batch([pa.Array.from_buffers(pa.binary(), 1, [None, offsets, data])], names=["rows"])


def collect_blobs(df: Any) -> Any:
    """The tasks' rows (:func:`_blob`) collected and decoded into one Arrow table of :data:`ROW_COLUMNS`."""
    import pyarrow as pa

    from ranklens.spark.rows import ROW_COLUMNS, ROW_TYPES, rows_out

    if hasattr(df, "toArrow"):
        blobs = df.toArrow().column("rows").to_pylist()
    elif hasattr(df, "_collect_as_arrow"):  # (pyspark 3.5, classic)
        blobs = [b for batch in df._collect_as_arrow() for b in batch.column(0).to_pylist()]
    else:
        blobs = [row[0] for row in df.collect()]
    schema = pa.schema([(name, pa.type_for_alias(t)) for name, t in zip(ROW_COLUMNS, ROW_TYPES)])
    tables = [pa.ipc.open_stream(pa.py_buffer(b)).read_all().cast(schema) for b in blobs]
    return pa.concat_tables(tables) if tables else rows_out([])


# ── on the driver ───────────────────────────────────────────────────────────────────────────────────────


@dataclasses.dataclass
class Outcome:
    """What the scan found: the rows of the tasks and of the driver's repair (the shuffle plan's row kinds), and
    counts for the debug line."""

    table: Any
    repaired: Any
    tasks: int
    deferred_queries: int
    second_scan: bool


def scan_evaluate(
    spark: Any, run: ScanInput, qrels: ScanInput, fn: Any, policy: Any, labels: str, cores: int,
) -> Outcome:
    """The scan plan's rows (see the module's docstring), or :class:`Fallback`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ranklens.spark.runtime import pandas_checks_quiet

    run_tasks = run.tasks(max(2 * cores, -(-run.rows // 1_500_000)))
    qrels_tasks = qrels.tasks(max(1, cores))
    schema = "rows binary"
    defer: frozenset[str] = frozenset()
    for attempt in (0, 1):
        n = len(run_tasks) + len(qrels_tasks)
        f = _task_function(run, qrels, run_tasks, qrels_tasks, fn, defer, labels, policy.negative)
        with pandas_checks_quiet():
            out = spark.range(0, n, 1, n).mapInArrow(f, schema)  # (not persisted: the rows come back once)
            table = collect_blobs(out)
        kinds = table.column("kind").to_numpy(zero_copy_only=False)
        refused = table.filter(pa.array(kinds == REFUSE))
        if refused.num_rows:
            raise Fallback(f"refused by the scan ({refused.column('query_id')[0].as_py()}): the shuffle plan words it")
        if ((kinds == 2) | (kinds == 7)).any():
            raise Fallback("an error or a duplicate in a task: the shuffle plan words it")
        ids = table.filter(pa.array(kinds == RUN_ID))
        # a query some task evaluated (not deferred there) that another task also holds: not grouped by query
        counted = ids.group_by("query_id").aggregate([("measure", "count"), ("label", "min")])
        split = counted.filter(pc.and_(pc.greater(counted.column("measure_count"), 1),
                                       pc.equal(counted.column("label_min"), 0.0)))
        if not split.num_rows:
            break
        if attempt or split.num_rows > REPAIR_LIMIT:
            raise Fallback(f"the run is not grouped by query ({split.num_rows} queries in several row groups)")
        defer = frozenset(split.column("query_id").to_pylist())
    # the qrels queries no run task saw
    run_ids = pc.unique(ids.column("query_id"))
    qids = table.filter(pa.array(kinds == QRELS_ID))
    qrels_only = pc.unique(qids.column("query_id").filter(pc.invert(pc.is_in(qids.column("query_id"), value_set=run_ids))))
    zq = None
    if len(qrels_only):  # (their rows, read here: checked as the run tasks check theirs)
        from ranklens.spark.worker import duplicate_rows

        zq = qrels_for(qrels, qrels_only).select(["query_id", "doc_id", "relevance"])
        why = check_table(zq, "relevance", labels, policy.negative) or ("a duplicated pair" if duplicate_rows(zq, 1) else None)
        if why:
            raise Fallback(f"refused by the scan ({qrels.path}: {why}): the shuffle plan words it")
    # the deferred queries, evaluated together: their run rows in file order, their qrels rows from one task each
    held = table.filter(pa.array(kinds == DEFERRED_RUN))
    judged = table.filter(pa.array(kinds == DEFERRED_QRELS))
    if judged.num_rows:
        first = judged.group_by("query_id").aggregate([("measure", "min")])
        key = pc.binary_join_element_wise(judged.column("query_id"), judged.column("measure").cast(pa.string()), "\x1f")
        keep = pc.binary_join_element_wise(first.column("query_id"), first.column("measure_min").cast(pa.string()), "\x1f")
        judged = judged.filter(pc.is_in(key, value_set=keep))
    r = pa.table({"query_id": held.column("query_id"), "doc_id": held.column("doc_id"), "score": held.column("value")})
    q = pa.table({"query_id": judged.column("query_id"), "doc_id": judged.column("doc_id"),
                  "relevance": judged.column("label").cast(pa.type_for_alias(qrels.label_type))})
    if policy.missing == "zero" and zq is not None:
        q = pa.concat_tables([q, zq])
    repaired = fn(r, q) if r.num_rows or q.num_rows else None
    if repaired is not None:
        rk = repaired.column("kind").to_numpy(zero_copy_only=False)
        if ((rk == 2) | (rk == 7)).any():
            raise Fallback("an error or a duplicate in the deferred queries: the shuffle plan words it")
    if policy.missing != "zero" and len(qrels_only):  # counted as a bucket holding them alone would count them
        from ranklens.spark.rows import STATS, rows_out

        extra = [(1, None, STATS.index(s), float(len(qrels_only)), None, None) for s in ("qrels_only_queries", "qrels_queries")]
        repaired = rows_out(extra) if repaired is None else pa.concat_tables([repaired, rows_out(extra)])
    return Outcome(table, repaired, len(run_tasks) + len(qrels_tasks), int(pc.count_distinct(r.column("query_id")).as_py()),
                   bool(defer))


def top_label(qrels: ScanInput) -> float | None:
    """The largest label of the qrels (the reference engine's top of the grade scale), from the row groups'
    statistics, else read."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    best: float | None = None
    for f in qrels.files:
        with qrels.filesystem.open_input_file(f) as handle:
            pf = pq.ParquetFile(handle)
            meta = pf.metadata
            pos = [i for i in range(meta.num_columns) if meta.schema.column(i).path == qrels.columns[2]]
            for g in range(meta.num_row_groups):
                st = meta.row_group(g).column(pos[0]).statistics if pos else None
                if st is not None and st.has_min_max:
                    value = float(st.max)
                else:
                    got = pc.max(pf.read_row_group(g, columns=[qrels.columns[2]]).column(0)).as_py()
                    if got is None:
                        continue
                    value = float(got)
                best = value if best is None else max(best, value)
    return best
