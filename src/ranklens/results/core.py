"""Results: per-query values and aggregates of one run, convertible to frames, dicts and JSON.

The values are held in pure Python (an ``array.array`` of float64, one row per query), whichever backend
computed them, so a face that only prints them (``eval``, ``compare``, ``gate``, ``trec-eval`` on the
compiled pass) never imports numpy; :attr:`Results.values` builds the numpy matrix on first use (without a
copy) for the callers that ask for it.
"""

from __future__ import annotations

import math
import os
import sys
from array import array

from ranklens.errors import InputError, MeasureError, MissingDependencyError, Note
from ranklens.stats.sums import np_sum

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy, pyarrow and the measure language are imported by the methods that use them)
    from collections.abc import Iterable, Mapping, Sequence
    from dataclasses import Field
    from typing import Any, ClassVar, Literal

    import numpy as np
    import pyarrow as pa

    from ranklens.measures.base import Measure
    from ranklens.measures.language import MeasureLike

    #: the shape of a table of results: ``"wide"`` (one column per measure) or ``"long"`` (one row per value)
    Layout = Literal["wide", "long"]

__all__ = ["Layout", "QueryId", "Results", "aggregate", "note_data"]

#: a query id as handed back: the string the engine matched, or the integer it was given as
QueryId = str | int


def _floats(values: Any) -> list[float]:
    """A column of values (a numpy vector, an ``array.array``, a list) as a list of floats."""
    return values.tolist() if hasattr(values, "tolist") else [float(v) for v in values]


def aggregate(m: Measure, values: Any) -> float:
    """Aggregate one measure's per-query values the way its family declares (mean, sum, gmean, nanmean).

    ``values``: a numpy vector or any sequence of floats. ``nanmean`` skips queries where the measure is
    not defined (NaN): they are excluded from the mean, and NaN is returned when no query has a value. A
    measure with an ``agg=`` parameter (the recommender measures: ``median``, ``p90`` …) combines its values
    that way instead of by their mean. A system-level measure (``Coverage@10``) has no per-query values to
    combine: NaN (its value is computed on the run). The mean is :func:`math.fsum` over the count (correctly
    rounded: independent of the queries' order); sums are numpy's (:func:`ranklens.stats.sums.np_sum`).
    """
    if m.family.is_system(m):
        return math.nan
    how = m.family.aggregate
    vals = _floats(values)
    if how == "nanmean":
        vals = [v for v in vals if v == v]
        how = "mean"
    if how == "mean" and any(p.name == "agg" for p in m.family.params) and m.get("agg") != "mean":
        return _quantile(str(m.get("agg")), vals)
    if how == "sum":
        return np_sum(vals)
    if not vals:
        return math.nan
    if how == "gmean":
        import numpy as np

        from ranklens.measures.base import MIN_GEO_MEAN  # (trec_eval's floor for geometric means)

        return float(np.exp(np.mean(np.log(np.maximum(np.asarray(vals, dtype=np.float64), MIN_GEO_MEAN)))))
    return math.fsum(vals) / len(vals)  # (correctly rounded: independent of the queries' order)


def _quantile(agg: str, values: list[float]) -> float:
    """``median``, ``pNN``, ``min`` or ``max`` of ``values`` (NaN when empty)."""
    if not values:
        return math.nan
    if agg == "min":
        return min(values)
    if agg == "max":
        return max(values)
    import numpy as np

    q = 50.0 if agg == "median" else float(agg[1:])
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def _is_numpy(value: object) -> bool:
    return type(value).__module__.startswith("numpy")


#: the fields of a :class:`Results`, in the order its constructor takes them
FIELDS = ("run", "measures", "query_ids", "values", "aggregates", "notes", "options", "id_kind")


class _AsDataclass(type):
    """:class:`Results` is built without :mod:`dataclasses` (``ranklens eval``'s express form imports neither it
    nor :mod:`inspect`), yet :func:`dataclasses.replace`, :func:`~dataclasses.fields`, :func:`~dataclasses.asdict`
    and :func:`~dataclasses.is_dataclass` take it as the frozen dataclass it was: its fields are declared the
    first time they are asked for."""

    if not TYPE_CHECKING:  # (hidden from type checkers: a misspelt attribute stays an error there)

        def __getattr__(cls, name: str) -> Any:
            if name != "__dataclass_fields__":
                raise AttributeError(name)
            import dataclasses

            shape = dataclasses.make_dataclass(
                "Results",
                [*((f, object) for f in FIELDS[:5]), ("notes", object, dataclasses.field(default=())),
                 ("options", object, dataclasses.field(default_factory=dict)), ("id_kind", object, dataclasses.field(default="str"))],
                frozen=True, eq=False,
            )
            type.__setattr__(cls, name, shape.__dataclass_fields__)  # type: ignore[attr-defined]
            return shape.__dataclass_fields__  # type: ignore[attr-defined]


class Results(metaclass=_AsDataclass):
    """What :func:`ranklens.evaluate` returns, always: one run's values per query and in aggregate.

    Attributes:
        run: the run's name.
        measures: the measures, in the order asked.
        query_ids: the evaluated queries (bytewise order).
        values: float64 matrix (numpy), one row per query, one column per measure: built on first use
            from the values held in pure Python (:meth:`value_rows` and :meth:`column_values` read them
            without numpy). Give it as a numpy matrix, an ``array.array("d")`` of the rows one after the
            other or a sequence of rows.
        aggregates: one value per measure (mean over queries; sums for counts).
        notes: what was left out and why (run-only queries, missing queries, truncated rows …).

    >>> import ranklens
    >>> res = ranklens.evaluate({"q1": {"a": 1}}, {"q1": {"a": 2.0, "b": 1.0}}, ["P@1", "RR"])
    >>> res["P@1"], res.per_query("RR")
    (1.0, {'q1': 1.0})
    """

    if TYPE_CHECKING:  # (what type checkers see of the dataclass protocol: dataclasses.replace(results, …) checks)
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    run: str
    measures: tuple[Measure, ...]
    query_ids: tuple[str, ...]
    aggregates: tuple[float, ...]
    notes: tuple[str, ...]
    options: dict[str, Any]
    id_kind: str
    """``"int"`` when the run's query ids were given as integers: :attr:`query_ids` holds them as strings (the
    engine matches ids as strings, as trec_eval does), :attr:`ids`, :meth:`per_query` and the tables hand
    them back as integers, and lookups (:meth:`subset`, :meth:`by_segment`) take either"""

    def __init__(
        self,
        run: str,
        measures: tuple[Measure, ...],
        query_ids: tuple[str, ...],
        values: Any,
        aggregates: tuple[float, ...],
        notes: tuple[str, ...] = (),
        options: dict[str, Any] | None = None,
        id_kind: str = "str",
    ) -> None:
        d = self.__dict__
        d.update(run=run, measures=measures, query_ids=query_ids, aggregates=aggregates, notes=notes,
                 options={} if options is None else options, id_kind=id_kind)
        width = len(measures)
        d["_width"] = width
        if _is_numpy(values):
            d["_matrix"], d["_flat"] = values, None
            return
        if isinstance(values, array):
            flat = values if values.typecode == "d" else array("d", values)
        else:
            flat = array("d")
            for row in values:
                flat.extend(row)
        if len(flat) != width * len(query_ids):
            raise ValueError(f"values: {len(flat)} numbers for {len(query_ids)} queries × {width} measures")
        d["_matrix"], d["_flat"] = None, flat

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Results are read-only: use .replace({name}=...)")

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            if name == "__dataclass_fields__":  # (dataclasses.fields(results): see _AsDataclass)
                return getattr(type(self), name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def values(self) -> np.ndarray:
        """float64 matrix (numpy), one row per query, one column per measure: built on first use (sharing
        the memory of the values held in pure Python) and kept."""
        d = self.__dict__
        matrix = d["_matrix"]
        if matrix is None:
            import numpy as np

            flat, width = d["_flat"], d["_width"]
            rows = len(self.query_ids)
            matrix = np.frombuffer(flat, dtype=np.float64).reshape(rows, width) if len(flat) else np.zeros((rows, width))
            d["_matrix"] = matrix
        return matrix  # type: ignore[no-any-return]

    @property
    def ids(self) -> tuple[QueryId, ...]:
        """The evaluated query ids with the type they were given (integers stay integers), aligned with
        :attr:`query_ids`."""
        if self.id_kind != "int":
            return self.query_ids
        return tuple(given_id(q) for q in self.query_ids)

    def _index(self, measure: MeasureLike) -> int:
        names = [str(m) for m in self.measures]
        if isinstance(measure, str) and measure in names:  # (a canonical name: no need of the measure language)
            return names.index(measure)
        from ranklens.measures import parse
        from ranklens.measures.base import Measure

        m = measure if isinstance(measure, Measure) else parse(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            if str(m) in names:  # (measures of the compiled pass's plain words: ExpressMeasure)
                return names.index(str(m))
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
        return dict(zip(self.ids, self._column(j)))

    def value_rows(self) -> list[list[float]]:
        """:attr:`values` as a list of rows (one list per query), what the text renderers read (no numpy)."""
        flat, width = self.__dict__["_flat"], self.__dict__["_width"]
        if flat is None:
            return self.values.tolist()  # type: ignore[no-any-return]
        return [flat[i : i + width].tolist() for i in range(0, len(flat), width)] if width else [[] for _ in self.query_ids]

    def column(self, measure: MeasureLike) -> np.ndarray:
        """The per-query values of one measure as a numpy vector, aligned with :attr:`query_ids`
        (:meth:`column_values`: the same as a list, without numpy)."""
        return self.values[:, self._index(measure)]

    def column_values(self, measure: MeasureLike) -> list[float]:
        """The per-query values of one measure as a list of floats, aligned with :attr:`query_ids`."""
        return self._column(self._index(measure))

    def _column(self, j: int) -> list[float]:
        flat, width = self.__dict__["_flat"], self.__dict__["_width"]
        if flat is None:
            return self.values[:, j].tolist()  # type: ignore[no-any-return]
        return flat[j::width].tolist()

    def stored_values(self) -> Any:
        """The values as they are held: an ``array.array("d")`` of the rows one after the other, or the
        numpy matrix they were given as (what :attr:`values` and the constructor take)."""
        d = self.__dict__
        return d["_flat"] if d["_flat"] is not None else d["_matrix"]

    def replace(self, **changes: Any) -> Results:
        """A :class:`Results` with ``changes`` (as :func:`dataclasses.replace`, which works too), the values
        shared as they are held (no numpy matrix is built)."""
        if "values" not in changes and "measures" not in changes:
            changes["values"] = self.stored_values()
        return Results(**{f: changes[f] if f in changes else getattr(self, f) for f in FIELDS})

    def to_dict(self) -> dict[str, dict[str, float]]:
        """pytrec_eval's form ``{query_id: {measure: value}}``, plus ``"all"`` for the aggregates."""
        names = [str(m) for m in self.measures]
        keep = self._per_query_columns()
        out = {q: {names[j]: row[j] for j in keep} for q, row in zip(self.query_ids, self.value_rows())}
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
                for q, row in zip(self.query_ids, self.value_rows())
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
        import json

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
        import numpy as np
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
        width = len(self.measures)
        flat = self.__dict__["_flat"]
        if flat is None:
            flat = array("d", self.values.reshape(-1).tolist())
        values = array("d")
        for i in rows:
            values.extend(flat[i * width : (i + 1) * width])
        aggs = tuple(aggregate(m, values[j::width]) for j, m in enumerate(self.measures))
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
    if isinstance(q, int) and not isinstance(q, bool):
        return str(q)
    numpy = sys.modules.get("numpy")  # (a numpy integer comes only from a caller that imported numpy)
    if numpy is not None and isinstance(q, numpy.integer):
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
    values: Any,
    notes: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    system: Mapping[int, float] | None = None,
    id_kind: str = "str",
) -> Results:
    """The one way a :class:`Results` is built from per-query values: the aggregate of every measure,
    and a note for each set measure that is NA (NaN, skipped by its mean) on some queries. ``system``
    gives the value of each system-level measure (by column), computed on the whole run. ``values``: a
    numpy matrix, an ``array.array("d")`` of the rows one after the other, or a sequence of rows.

    >>> from ranklens.measures import parse_many
    >>> res = assemble("r", parse_many(["RAnWG@5"]), ["a", "b"], [[1.0], [math.nan]])
    >>> res["RAnWG@5"], res.notes
    (1.0, ('RAnWG@5: 1 of 2 queries NA (excluded from the mean)',))
    """
    measures = tuple(measures)
    res = Results(run, measures, tuple(query_ids), values, (), tuple(notes), dict(options or {}), id_kind)
    aggs = tuple(
        float((system or {}).get(j, math.nan)) if m.family.is_system(m) else aggregate(m, res._column(j))
        for j, m in enumerate(measures)
    )
    res = res.replace(aggregates=aggs)
    na = [note for note in na_notes(res) if note not in res.notes]
    return res.replace(notes=(*res.notes, *na)) if na else res


def na_counts(results: Results) -> dict[str, int]:
    """Queries where each measure is NA (NaN), for the measures whose mean skips them."""
    return {
        str(m): sum(1 for v in results._column(j) if v != v)
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
    import numpy as np

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


def __getattr__(name: str) -> Any:
    if name == "Layout":  # (typing is imported only by who asks for the alias)
        from typing import Literal

        return Literal["wide", "long"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
