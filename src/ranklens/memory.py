"""The compiled pass on data in memory (issue 26): what :func:`ranklens.evaluate` gives it when the one
dispatcher (:func:`ranklens.backends.choose_backend` with ``inputs="memory"``) chooses the compiled backend.

* pandas and polars DataFrames, Arrow tables and record batches: their query, document and value columns
  are found by name as the reference finds them (:func:`ranklens.data.columns.resolve_columns`), and their
  Arrow buffers are read in place by the same C functions as a Parquet run's batches
  (``_cexpress.evaluate_columns``, ``_cexpress.parse_qrels_columns``), :data:`BLOCK_ROWS` rows at a time;
  integer id columns are read as their decimal strings, as the reference compares them (a pandas object
  column of strings is converted to Arrow, as the reference converts it);
* pytrec_eval's ``{query id: {document id: value}}`` dicts are walked in C (``_cexpress.evaluate_dict``,
  ``_cexpress.parse_qrels_dict``) without building a frame or a list of rows, a block of whole queries of
  about :data:`BLOCK_ROWS` rows at a time.

Integer query ids keep their type in the results (``Results.id_kind``, as the reference's). Anything the
pass does not read beyond doubt (a null, an id with a space or outside ASCII, a float label, a negative
label, a NaN score, a dict of columns …) is a decline with a reason: the reference then reads the inputs
and says what is wrong, if anything. The pass evaluates the queries the run and the qrels share: it
declines ``missing="zero"`` whatever the file pass declares (it does not add the qrels queries the run lacks).

>>> from ranklens.measures import parse_many
>>> why: list[str] = []
>>> res = evaluate_memory({1: {"a": 1}, 2: {"b": 1}}, {1: {"a": 2.0, "c": 1.0}}, parse_many(["RR"]), None, why)
>>> res.per_query("RR"), [str(note) for note in res.notes]
({1: 1.0}, ['1 qrels query with no retrieved document: skipped; use --missing zero (trec_eval -c) to count them as 0'])
>>> evaluate_memory({"q": {"a": 1.5}}, {"q": {"a": 1.0}}, parse_many(["RR"]), None, why) is None, why[-1]
(True, 'qrels given as a dict: a key or value it does not read beyond doubt (ids: str of printable ASCII or int; labels: int 0..999999999; scores: finite float or int)')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["KINDS", "evaluate_memory", "inputs_declined", "kind_of"]

#: the kinds of input the in-memory pass reads
KINDS = ("dict", "pandas", "polars", "arrow")

_DICT_RULES = "ids: str of printable ASCII or int; labels: int 0..999999999; scores: finite float or int"


def kind_of(obj: object) -> str | None:
    """The kind of in-memory input ``obj`` is (one of :data:`KINDS`), or None for another.

    >>> kind_of({"q1": {"d1": 1}}), kind_of({"query_id": ["q1"]}), kind_of("run.txt")
    ('dict', None, None)
    """
    if type(obj) is dict:  # (its first value only: the C walker declines a later one that is no dict)
        return "dict" if obj and type(next(iter(obj.values()))) is dict else None
    module, name = type(obj).__module__.split(".")[0], type(obj).__name__
    if module == "pandas" and name == "DataFrame":
        return "pandas"
    if module == "polars" and name == "DataFrame":
        return "polars"
    if module == "pyarrow" and name in ("Table", "RecordBatch"):
        return "arrow"
    return None


def inputs_declined(qrels: object, runs: Sequence[object], policy: object) -> str | None:
    """Why the in-memory pass does not take these inputs (None: it may, unless reading says otherwise):
    the kinds of the qrels and of the one run, and ``missing="zero"``.

    >>> inputs_declined({"q": {"d": 1}}, [{"q": {"d": 1.0}}], None) is None
    True
    >>> inputs_declined({"q": {"d": 1}}, [{"query_id": ["q"]}], None)
    'run given as a dict that is not {query id: {document id: value}} (a dict of columns, or empty)'
    """
    missing = getattr(policy, "missing", "skip")
    if missing != "skip":
        return f"policy missing={missing!r}: the in-memory pass evaluates the queries the run and the qrels share"
    if len(runs) != 1:
        return f"{len(runs)} runs (the in-memory pass evaluates one)"
    for what, obj in (("qrels", qrels), ("run", runs[0])):
        if kind_of(obj) is None:
            if isinstance(obj, dict):
                return f"{what} given as a dict that is not {{query id: {{document id: value}}}} (a dict of columns, or empty)"
            return f"{what} given as {type(obj).__module__.split('.')[0]}.{type(obj).__name__}, not a dict, frame or Arrow table"
    return None


def evaluate_memory(
    qrels: Any, run: Any, measures: Sequence[Any], policy: Any, why: list[str], trace: tuple[str, ...] = (),
    traced: dict[str, tuple[Any, ...]] | None = None,
) -> Any:
    """The :class:`~ranklens.Results` of ``run`` against ``qrels`` (in-memory inputs :func:`inputs_declined`
    takes) on ``measures`` (the compiled pass declares them) under ``policy`` (None: the default), named
    ``run`` as the reference names an in-memory run; None when the pass declines while reading (the reason
    appended to ``why``). ``trace``: query ids whose intermediates the pass records (``explain``), put into
    ``traced`` (as :func:`ranklens.express.evaluate_express`)."""
    from ranklens import express

    specs = express.express_specs(measures)
    if specs is None or express._cexpress is None:
        why.append(express.measures_declined(measures) or express.unavailable() or "declined")
        return None
    cx = express._cexpress
    said = len(why)
    qkind, rkind = kind_of(qrels), kind_of(run)
    if qkind == "dict":
        parsed = cx.parse_qrels_dict(qrels)
    else:
        from ranklens.data.columns import QRELS

        segments = _segments(qrels, QRELS, why, "qrels")
        parsed = None if segments is None else cx.parse_qrels_columns(segments[0], segments[1])
    if parsed is None:
        if len(why) == said:
            why.append(f"qrels given as a {qkind}: " + (f"a key or value it does not read beyond doubt ({_DICT_RULES})"
                       if qkind == "dict" else "a column it does not read beyond doubt (a null, an id with a space or "
                       "outside ASCII, an empty id, a label that is no integer in 0..999999999, a judgement twice)"))
        return None
    judged, n_judged = parsed
    if trace:
        cx.trace_queries(judged, trace)
    if rkind == "dict":
        got = cx.evaluate_dict(judged, run, specs, BLOCK_ROWS)
        got, int_ids = (None, False) if got is None else got
    else:
        from ranklens.data.columns import RUN

        segments = _segments(run, RUN, why, "run")
        got = None if segments is None else _by_blocks(judged, segments[0], specs)
        if segments is not None and got is None:  # (not grouped by query, or a decline: the whole run at once)
            got = cx.evaluate_columns(judged, segments[1], specs, True)
        int_ids = bool(segments and segments[2])
    if got is None or not got[2]:
        if len(why) == said:
            why.append(f"run given as a {rkind}: " + (
                "no query in common with the qrels" if got is not None else
                f"a key or value it does not read beyond doubt ({_DICT_RULES}), or a document twice in a query"
                if rkind == "dict" else "a column it does not read beyond doubt (a null, an id with a space or "
                "outside ASCII, an empty id, a score that is not finite, a document twice in a query)"))
        return None
    if trace and traced is not None:
        traced.update(cx.traced(judged, len(specs)))
    return _results(got, measures, n_judged, policy, int_ids)


#: rows given to the compiled pass at a time (its row array then stays in the processor's cache)
BLOCK_ROWS = 1 << 16


def _by_blocks(judged: Any, batches: Sequence[Any], specs: Any) -> tuple[Any, ...] | None:
    """What ``_cexpress.evaluate_columns`` gives for the run's ``batches`` evaluated :data:`BLOCK_ROWS` rows at a time
    (a query's rows carried on to the next block until they are whole, as the Parquet pass carries them), or
    None when it declines or a query comes back after others (the caller then gives it the whole run at once,
    which groups such a run). Measured on 1M rows of 100 per query: the call's memory growth 38 MB → a few MB."""
    from ranklens.express import _add_block, _cexpress, _Run, _segment

    size = BLOCK_ROWS
    blocks = [b.slice(i, size) for b in batches for i in range(0, b.num_rows, size)]
    out = _Run()
    carry: list[tuple[Any, int]] = []  # (block, first row) of the rows waiting for the rest of their query
    for k, block in enumerate(blocks):
        carry.append((block, 0))
        segments = tuple(_segment(b, first) for b, first in carry)
        if None in segments:
            return None
        got = _cexpress.evaluate_columns(judged, segments, specs, k == len(blocks) - 1)
        if got is None or not _add_block(out, got):
            return None
        consumed = got[5]
        while carry and consumed >= carry[0][0].num_rows - carry[0][1]:
            consumed -= carry[0][0].num_rows - carry[0][1]
            carry.pop(0)
        if carry:
            carry[0] = (carry[0][0], carry[0][1] + consumed)
    if carry or not out.rows:
        return None
    run_queries = [None] * (len(out.query_ids) + out.run_only_queries)  # (how many: _results counts them)
    return None, run_queries, out.query_ids, out.values, out.run_only_rows


def _results(got: tuple[Any, ...], measures: Sequence[Any], n_judged: int, policy: Any, int_ids: bool) -> Any:
    """The Results of what the compiled pass gave (as the reference assembles them: queries bytewise)."""
    import numpy as np

    from ranklens.engine.policy import EvalPolicy
    from ranklens.errors import alignment_notes
    from ranklens.results.core import assemble

    _, run_queries, evaluated, values, run_only_rows = got[:5]
    width = len(measures)
    matrix = np.asarray(values, dtype=np.float64).reshape(len(evaluated), width)
    order = sorted(range(len(evaluated)), key=evaluated.__getitem__)  # (bytewise: the ids are printable ASCII)
    notes = alignment_notes(len(run_queries) - len(evaluated), run_only_rows, n_judged - len(evaluated))
    options = (policy if policy is not None else EvalPolicy()).options(labels="int")
    return assemble(
        "run", measures, [evaluated[i] for i in order], matrix[order], notes, options, id_kind="int" if int_ids else "str"
    )


def _segments(obj: Any, kind: Any, why: list[str], what: str) -> tuple[Any, tuple[Any, ...], bool] | None:
    """(the batches, their segments for the compiled pass, whether the query ids are integers) of a frame or
    Arrow table, its columns found by name as the reference finds them; None (the reason in ``why``) when a
    column is missing, ambiguous, or of a type the pass does not read."""
    import pyarrow as pa

    from ranklens.data.columns import resolve_columns
    from ranklens.errors import FormatError
    from ranklens.express import _segment, _string_ids

    library = type(obj).__module__.split(".")[0]
    try:
        if library == "pandas":
            names = [str(c) for c in obj.columns]
            picked = resolve_columns(names, kind, "<frame>")
            arrays = [pa.array(obj.iloc[:, i], from_pandas=True) for i in picked]
            table = pa.table(dict(zip(("q", "d", "v"), arrays)))
        else:
            table = obj.to_arrow() if library == "polars" else obj
            if isinstance(table, pa.RecordBatch):
                table = pa.Table.from_batches([table])
            picked = resolve_columns(table.column_names, kind, "<table>")
            table = table.select(list(picked))
    except (FormatError, pa.ArrowException, TypeError, ValueError) as e:
        why.append(f"{what}: its columns are not read beyond doubt ({type(e).__name__})")
        return None
    int_ids = pa.types.is_integer(_value_type(table.schema.field(0).type))
    columns = [_plain(table.column(i)) for i in range(3)]
    table = pa.table(dict(zip(("q", "d", "v"), columns)))
    batches = [_string_ids(b) for b in table.to_batches() if b.num_rows]
    segments = tuple(_segment(b) for b in batches)
    if not segments or None in segments:
        why.append(f"{what}: a column with nulls or of a type the compiled pass does not read "
                   f"({', '.join(str(t) for t in table.schema.types)})")
        return None
    return batches, segments, int_ids


def _value_type(t: Any) -> Any:
    import pyarrow as pa

    return t.value_type if pa.types.is_dictionary(t) else t


def _plain(column: Any) -> Any:
    """An id column as the compiled pass reads it: a dictionary other than int32 indices over strings
    decoded, string views as large strings; other columns as they are."""
    import pyarrow as pa

    t = column.type
    if pa.types.is_dictionary(t) and not (pa.types.is_int32(t.index_type) and pa.types.is_string(t.value_type)):
        column = column.cast(t.value_type)
        t = column.type
    if pa.types.is_string_view(t):
        column = column.cast(pa.large_string())
    return column
