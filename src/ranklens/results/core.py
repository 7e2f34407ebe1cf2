"""Results: per-query values and aggregates of one run, convertible to frames, dicts and JSON."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ranklens.errors import InputError, MeasureError, MissingDependencyError, Note
from ranklens.measures.base import MIN_GEO_MEAN, Measure
from ranklens.measures.language import MeasureLike

if TYPE_CHECKING:  # (pyarrow is imported by the methods that build Arrow tables: a gate or a compare needs none)
    import pyarrow as pa

__all__ = ["Layout", "QueryId", "Results", "aggregate", "note_data"]

#: a query id as handed back: the string the engine matched, or the integer it was given as
QueryId = str | int
#: the shape of a table of results: ``"wide"`` (one column per measure) or ``"long"`` (one row per value)
Layout = Literal["wide", "long"]



def aggregate(m: Measure, values: np.ndarray) -> float:
    """Aggregate one measure's per-query values the way its family declares (mean, sum, gmean, nanmean).

    ``nanmean`` skips queries where the measure is not defined (NaN): they are excluded from the mean,
    and NaN is returned when no query has a value. A measure with an ``agg=`` parameter (the recommender
    measures: ``median``, ``p90`` …) combines its values that way instead of by their mean. A system-level
    measure (``Coverage@10``) has no per-query values to combine: NaN (its value is computed on the run).
    """
    if m.family.is_system(m):
        return math.nan
    how = m.family.aggregate
    if how == "nanmean":
        values = values[~np.isnan(values)]
        how = "mean"
    if how == "mean" and any(p.name == "agg" for p in m.family.params) and m.get("agg") != "mean":
        return _quantile(str(m.get("agg")), values)
    if how == "sum":
        return float(values.sum())
    if values.size == 0:
        return math.nan
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(values, MIN_GEO_MEAN)))))
    return math.fsum(values.tolist()) / values.size  # (correctly rounded: independent of the queries' order)


def _quantile(agg: str, values: np.ndarray) -> float:
    """``median``, ``pNN``, ``min`` or ``max`` of ``values`` (NaN when empty)."""
    if values.size == 0:
        return math.nan
    if agg == "min":
        return float(values.min())
    if agg == "max":
        return float(values.max())
    q = 50.0 if agg == "median" else float(agg[1:])
    return float(np.percentile(values, q))


@dataclass(frozen=True, eq=False)
class Results:
    """What :func:`ranklens.evaluate` returns, always: one run's values per query and in aggregate.

    Attributes:
        run: the run's name.
        measures: the measures, in the order asked.
        query_ids: the evaluated queries (bytewise order).
        values: float64 matrix, one row per query, one column per measure.
        aggregates: one value per measure (mean over queries; sums for counts).
        notes: what was left out and why (run-only queries, missing queries, truncated rows …).

    >>> import ranklens
    >>> res = ranklens.evaluate({"q1": {"a": 1}}, {"q1": {"a": 2.0, "b": 1.0}}, ["P@1", "RR"])
    >>> res["P@1"], res.per_query("RR")
    (1.0, {'q1': 1.0})
    """

    run: str
    measures: tuple[Measure, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    aggregates: tuple[float, ...]
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    id_kind: str = "str"
    """``"int"`` when the run's query ids were given as integers: :attr:`query_ids` holds them as strings (the
    engine matches ids as strings, as trec_eval does), :attr:`ids`, :meth:`per_query` and the tables hand
    them back as integers, and lookups (:meth:`subset`, :meth:`by_segment`) take either"""

    @property
    def ids(self) -> tuple[QueryId, ...]:
        """The evaluated query ids with the type they were given (integers stay integers), aligned with
        :attr:`query_ids`."""
        if self.id_kind != "int":
            return self.query_ids
        return tuple(given_id(q) for q in self.query_ids)

    def _index(self, measure: MeasureLike) -> int:
        from ranklens.measures import parse

        m = measure if isinstance(measure, Measure) else parse(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            raise MeasureError(
                f"measure '{m}' was not evaluated; these were: {', '.join(map(str, self.measures))}"
            ) from None

    def __getitem__(self, measure: MeasureLike) -> float:
        """The aggregate value of ``measure``."""
        return self.aggregates[self._index(measure)]

    @property
    def system(self) -> tuple[str, ...]:
        """The system-level measures (one value per run, in :attr:`aggregates`; no value per query: their
        column of :attr:`values` is NaN and the per-query forms leave them out)."""
        return tuple(str(m) for m in self.measures if m.family.is_system(m))

    def per_query(self, measure: MeasureLike) -> dict[QueryId, float]:
        """``{query_id: value}`` of one measure, keyed by the ids as given (integers stay integers; a
        system-level measure has no per-query values: an error)."""
        j = self._index(measure)
        if self.measures[j].family.is_system(self.measures[j]):
            raise MeasureError(f"{self.measures[j]} is a system-level measure: one value per run, none per query")
        col = self.values[:, j]
        return dict(zip(self.ids, col.tolist()))

    def value_rows(self) -> list[list[float]]:
        """:attr:`values` as a list of rows (one list per query), what the text renderers read."""
        return self.values.tolist()  # type: ignore[no-any-return]

    def column(self, measure: MeasureLike) -> np.ndarray:
        """The per-query values of one measure, aligned with :attr:`query_ids`."""
        return self.values[:, self._index(measure)]

    def to_dict(self) -> dict[str, dict[str, float]]:
        """pytrec_eval's form ``{query_id: {measure: value}}``, plus ``"all"`` for the aggregates."""
        names = [str(m) for m in self.measures]
        keep = self._per_query_columns()
        out = {q: {names[j]: row[j] for j in keep} for q, row in zip(self.query_ids, self.values.tolist())}
        out["all"] = dict(zip(names, self.aggregates))
        return out

    def _per_query_columns(self) -> list[int]:
        """The columns of measures that have per-query values (all but the system-level ones)."""
        return [j for j, m in enumerate(self.measures) if not m.family.is_system(m)]

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: run, measures, aggregate, per_query, notes, options."""
        names = [str(m) for m in self.measures]
        keep = self._per_query_columns()
        out: dict[str, Any] = {
            "run": self.run,
            "measures": names,
            "aggregate": {n: _json_float(v) for n, v in zip(names, self.aggregates)},
            "num_queries": len(self.query_ids),
            "per_query": {
                q: {names[j]: _json_float(row[j]) for j in keep}
                for q, row in zip(self.query_ids, self.values.tolist())
            },
            "notes": list(self.notes),
            "note_data": note_data(self.notes),
            "options": self.options,
        }
        if len(keep) < len(names):  # system-level measures: in "aggregate" only, and said so
            out["system"] = list(self.system)
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """The :meth:`to_json_dict` form as text."""
        return json.dumps(self.to_json_dict(), indent=indent)

    def _id_array(self, ids: Sequence[str]) -> pa.Array:
        """Query ids as an Arrow column of the type they were given (int64 for integer ids)."""
        import pyarrow as pa

        if self.id_kind == "int":
            return pa.array([given_id(q) for q in ids])
        return pa.array(ids, pa.string())

    def to_arrow(self, layout: Layout = "wide") -> pa.Table:
        """A table of the per-query values, query ids of the type they were given. ``layout="wide"``
        (default): ``query_id`` then one float64 column per measure (canonical names); ``"long"``: the
        :meth:`to_long_arrow` table (``run, measure, query_id, value``, aggregates under a null query id
        when the ids are integers, else ``all``)."""
        import pyarrow as pa

        if _layout(layout) == "long":
            return self.to_long_arrow()
        cols: dict[str, Any] = {"query_id": self._id_array(self.query_ids)}
        for j in self._per_query_columns():
            cols[str(self.measures[j])] = pa.array(self.values[:, j])
        return pa.table(cols)

    def to_long_arrow(self) -> pa.Table:
        """A long table: ``run, measure, query_id, value``, with aggregate rows under query id ``all`` (with
        integer ids: under a null query id, so the column keeps their type)."""
        import pyarrow as pa

        n_q = self.values.shape[0]
        names = [str(m) for m in self.measures]
        keep = self._per_query_columns()  # (system-level measures: the "all" row only)
        measure_col = [names[j] for j in keep for _ in range(n_q)] + names
        query_col = list(self.query_ids) * len(keep) + ["all"] * len(names)
        value_col = np.concatenate((self.values[:, keep].T.reshape(-1), np.asarray(self.aggregates, dtype=np.float64)))
        return pa.table(
            {
                "run": pa.array([self.run] * len(measure_col), pa.string()),
                "measure": pa.array(measure_col, pa.string()),
                "query_id": self._long_ids(query_col, len(keep) * n_q),
                "value": pa.array(value_col),
            }
        )

    def _long_ids(self, query_col: list[str], per_query_rows: int) -> pa.Array:
        import pyarrow as pa

        if self.id_kind != "int":
            return pa.array(query_col, pa.string())
        return pa.array([given_id(q) for q in query_col[:per_query_rows]] + [None] * (len(query_col) - per_query_rows), pa.int64())

    def to_pandas(self, layout: Layout = "wide") -> Any:
        """The :meth:`to_arrow` table as a pandas DataFrame: ``"wide"`` (default) indexed by query id (of
        the type given: join it back on an integer ``user_id``), ``"long"`` one row per (measure, query).

        >>> import ranklens
        >>> res = ranklens.evaluate({1: {"a": 1}}, {1: {"a": 2.0}}, "P@1")
        >>> res.to_pandas().index.tolist(), res.to_pandas(layout="long")["query_id"].tolist()
        ([1], [1, <NA>])

        Integer ids of the long layout are pandas' nullable ``Int64`` (the aggregate rows have none), never
        float64 with NaN.
        """
        try:
            import pandas
        except ImportError:
            raise MissingDependencyError("pandas", "pandas", "Results.to_pandas()") from None
        if _layout(layout) == "long":
            import pyarrow as pa

            nullable = {pa.int64(): pandas.Int64Dtype()}
            return self.to_long_arrow().to_pandas(types_mapper=nullable.get)
        return self.to_arrow().to_pandas().set_index("query_id")

    def to_polars(self, layout: Layout = "wide") -> Any:
        """The :meth:`to_arrow` table (``"wide"`` or ``"long"``) as a polars DataFrame."""
        try:
            import polars as pl
        except ImportError:
            raise MissingDependencyError("polars", "polars", "Results.to_polars()") from None
        return pl.from_arrow(self.to_arrow(layout))

    def summary(self) -> dict[str, float]:
        """``{measure: aggregate}``."""
        return {str(m): v for m, v in zip(self.measures, self.aggregates)}

    def subset(self, query_ids: Iterable[QueryId]) -> Results:
        """The results of these queries only (those evaluated), with their own aggregates. Ids are matched
        as strings (``1`` finds the query ``"1"``); ids given of which none was evaluated are an error
        naming the evaluated ones (never a mean over nothing).

        Raises:
            InputError: ``query_ids`` is not empty and none of them was evaluated.
        """
        given = list(query_ids)
        wanted = {id_text(q) for q in given}
        rows = [i for i, q in enumerate(self.query_ids) if q in wanted]
        if given and not rows:
            from ranklens.data.segments import show_ids

            raise InputError(
                f"{self.run}: none of the {len(given)} query ids given ({show_ids([str(q) for q in given])}) was "
                f"evaluated; the evaluated queries are {show_ids(list(self.query_ids))}"
            )
        values = self.values[rows, :] if rows else np.zeros((0, len(self.measures)))
        aggs = tuple(aggregate(m, values[:, j]) for j, m in enumerate(self.measures))
        return Results(
            self.run, self.measures, tuple(self.query_ids[i] for i in rows), values, aggs, (), self.options, self.id_kind
        )

    def by_segment(self, segments: object) -> dict[str, Results]:
        """``{segment: results of its evaluated queries}`` in sorted segment order, from a query → segment
        mapping, a file or a frame (whatever :func:`ranklens.read_segments` reads; ids matched as strings, so
        integer ids work); queries without a segment count only overall, segments without an evaluated
        query are left out.

        Raises:
            InputError: no evaluated query has a segment (the mapping is for other ids).

        >>> import ranklens
        >>> res = ranklens.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, "P@1")
        >>> {s: r["P@1"] for s, r in res.by_segment({"q1": "nav", "q2": "info"}).items()}
        {'info': 0.0, 'nav': 1.0}
        """
        from ranklens.data.segments import check_overlap, read_segments

        where = str(segments) if isinstance(segments, (str, os.PathLike)) else "segments"
        segment_of = read_segments(segments)
        check_overlap(segment_of, self.query_ids, source=where)
        groups: dict[str, list[str]] = {}
        for q in self.query_ids:
            if q in segment_of:
                groups.setdefault(segment_of[q], []).append(q)
        return {name: self.subset(groups[name]) for name in sorted(groups)}

    def _repr_html_(self) -> str:
        """The notebook view: one row per measure (its aggregate over the queries), then the notes."""
        from ranklens.results.html import html_table

        rows = [[str(m), v] for m, v in zip(self.measures, self.aggregates)]
        caption = f"{self.run}: {len(self.query_ids)} quer{'y' if len(self.query_ids) == 1 else 'ies'}"
        return html_table(caption, ["measure", "value"], rows, notes=self.notes)

    def __repr__(self) -> str:
        shown = 6
        body = ", ".join(f"{m}={v:.4f}" for m, v in zip(self.measures[:shown], self.aggregates))
        if len(self.measures) > shown:
            body += f", … ({len(self.measures) - shown} more measures)"
        return f"Results(run={self.run!r}, queries={len(self.query_ids)}, {body})"


def id_text(q: object) -> str:
    """How the engine spells a query id: integers (Python or numpy) as their decimal string, text as is."""
    if isinstance(q, (int, np.integer)) and not isinstance(q, bool):
        return str(int(q))
    return str(q)


def given_id(q: str) -> QueryId:
    """An integer query id back as an integer (a string that is not one stays a string)."""
    try:
        n = int(q)
    except ValueError:
        return q
    return n if str(n) == q else q


def _layout(layout: str) -> str:
    if layout not in ("wide", "long"):
        raise InputError(f"layout must be 'wide' or 'long'; got {layout!r}")
    return layout


def _json_float(v: float) -> float | None:
    return None if math.isnan(v) else v


def assemble(
    run: str,
    measures: Sequence[Measure],
    query_ids: Sequence[str],
    values: np.ndarray,
    notes: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    system: Mapping[int, float] | None = None,
    id_kind: str = "str",
) -> Results:
    """The one way a :class:`Results` is built from per-query values: the aggregate of every measure,
    and a note for each set measure that is NA (NaN, skipped by its mean) on some queries. ``system``
    gives the value of each system-level measure (by column), computed on the whole run.

    >>> from ranklens.measures import parse_many
    >>> res = assemble("r", parse_many(["RAnWG@5"]), ["a", "b"], np.array([[1.0], [np.nan]]))
    >>> res["RAnWG@5"], res.notes
    (1.0, ('RAnWG@5: 1 of 2 queries NA (excluded from the mean)',))
    """
    measures = tuple(measures)
    aggs = tuple(
        float((system or {}).get(j, math.nan)) if m.family.is_system(m) else aggregate(m, values[:, j])
        for j, m in enumerate(measures)
    )
    res = Results(run, measures, tuple(query_ids), values, aggs, tuple(notes), dict(options or {}), id_kind)
    na = [note for note in na_notes(res) if note not in res.notes]
    return dataclasses.replace(res, notes=(*res.notes, *na)) if na else res


def na_counts(results: Results) -> dict[str, int]:
    """Queries where each measure is NA (NaN), for the measures whose mean skips them."""
    return {
        str(m): int(np.count_nonzero(np.isnan(results.values[:, j])))
        for j, m in enumerate(results.measures)
        if m.family.aggregate == "nanmean" and not m.family.is_system(m)
    }


def na_notes(results: Results) -> list[str]:
    """``RAnWG@10: 2 of 50 queries NA (excluded from the mean)`` for every measure with NA queries."""
    n = len(results.query_ids)
    return [
        f"{name}: {c} of {n} quer{'y' if n == 1 else 'ies'} NA (excluded from the mean)"
        for name, c in na_counts(results).items()
        if c
    ]


def stack_columns(columns: Sequence[np.ndarray], n_queries: int) -> np.ndarray:
    """Stack per-measure vectors into the (queries × measures) matrix."""
    if not columns:
        return np.zeros((n_queries, 0))
    return np.column_stack(columns).astype(np.float64, copy=False)


def note_data(notes: Sequence[str]) -> list[dict[str, Any]]:
    """The notes as data, in order: a :class:`~ranklens.errors.Note`'s kind, count and fields, and any other
    note as its text (kind ``text``), so a reader of the eval JSON (``ranklens push``, the monitor) words them
    without parsing the words.

    >>> from ranklens.errors import Note
    >>> note_data([Note("truncated_rows", 3), "2 queries have no value"])
    [{'kind': 'truncated_rows', 'count': 3}, {'kind': 'text', 'text': '2 queries have no value'}]
    """
    return [n.data() if isinstance(n, Note) else {"kind": "text", "text": str(n)} for n in notes]
