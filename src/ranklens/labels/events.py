"""Engagement event logs: reading (CSV/TSV/JSONL/Parquet/DataFrame) and validation with messages that name
the file and the row.

One row is one impression of an item for a query at a position, with signal columns (click, purchase,
add-to-cart, dwell seconds, watch-completion fraction …). Optional columns used elsewhere: ``impression``
(the id of the result page the row belongs to; needed by :func:`ranklens.unbiased.ips_dcg`) and
``intervention`` (1 when the page came from a randomised swap/shuffle experiment).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranklens.data.formats import EVENT_FILES
from ranklens.errors import FormatError, did_you_mean

__all__ = ["EventLog", "read_events"]

_FORMATS = EVENT_FILES.extensions  # the registry's table (ranklens.data.formats)


@dataclass(frozen=True, eq=False)
class EventLog:
    """An event log as a polars DataFrame, with what is needed to point at a bad row.

    Attributes:
        frame: the rows, as read, plus nothing else.
        source: the file name (or ``<DataFrame>``).
        first_line: the file line of row 0 (2 for CSV/TSV with a header, 1 for JSONL), or None when rows
            are not lines (Parquet, frames): messages then say ``row N`` (1-based).
    """

    frame: Any
    source: str
    first_line: int | None = None

    def where(self, row: int) -> str:
        """``events.csv:17`` or ``events.parquet: row 16``."""
        if self.first_line is not None:
            return f"{self.source}:{row + self.first_line}"
        return f"{self.source}: row {row + 1}"

    @property
    def columns(self) -> list[str]:
        return list(self.frame.columns)

    def require(self, names: dict[str, str]) -> None:
        """Raise when a needed column is missing. ``names`` maps column → what needs it."""
        for column, purpose in names.items():
            if column not in self.frame.columns:
                raise FormatError(
                    self.source,
                    f"missing column '{column}' ({purpose}){did_you_mean(column, self.columns)}; "
                    f"the columns are: {', '.join(self.columns)}",
                )

    def numbers(self, column: str) -> np.ndarray:
        """The column as float64; a non-numeric or empty value is an error naming its row."""
        import polars as pl

        series = self.frame[column]
        if series.dtype == pl.Boolean:
            series = series.cast(pl.Float64)
        try:
            values = series.cast(pl.Float64, strict=True).to_numpy()
        except Exception:
            bad = int(np.flatnonzero(series.cast(pl.Float64, strict=False).is_null().to_numpy() & series.is_not_null().to_numpy())[0])
            raise FormatError(self.where(bad), f"column '{column}' must be numeric, got {series[bad]!r}") from None
        missing = np.flatnonzero(np.isnan(values))
        if missing.size:
            raise FormatError(self.where(int(missing[0])), f"column '{column}' is empty or NaN")
        return np.asarray(values, dtype=np.float64)

    def positions(self, column: str = "position") -> np.ndarray:
        """1-based integer positions; a value < 1 or not an integer is an error naming its row."""
        values = self.numbers(column)
        bad = np.flatnonzero((values < 1) | (values != np.floor(values)))
        if bad.size:
            row = int(bad[0])
            raise FormatError(self.where(row), f"position must be an integer ≥ 1 (1 = top), got {_fmt(values[row])} in column '{column}'")
        return values.astype(np.int64)

    def indicator(self, column: str) -> np.ndarray:
        """A 0/1 event column (true/false accepted)."""
        values = self.numbers(column)
        bad = np.flatnonzero((values != 0) & (values != 1))
        if bad.size:
            row = int(bad[0])
            raise FormatError(self.where(row), f"column '{column}' is an event indicator and must be 0 or 1, got {_fmt(values[row])}")
        return values

    def fraction(self, column: str) -> np.ndarray:
        """A rate or fraction column: every value in [0, 1]."""
        values = self.numbers(column)
        bad = np.flatnonzero((values < 0) | (values > 1))
        if bad.size:
            row = int(bad[0])
            raise FormatError(self.where(row), f"column '{column}' is a rate and must be in [0, 1], got {_fmt(values[row])}")
        return values

    def nonnegative(self, column: str) -> np.ndarray:
        values = self.numbers(column)
        bad = np.flatnonzero(values < 0)
        if bad.size:
            row = int(bad[0])
            raise FormatError(self.where(row), f"column '{column}' must be ≥ 0, got {_fmt(values[row])}")
        return values

    def ids(self, column: str) -> np.ndarray:
        """An id column as strings; empty ids are an error naming the row."""

        return np.asarray(self.id_series(column).to_numpy(), dtype=object)

    def id_series(self, column: str) -> Any:
        """:meth:`ids` as a polars string Series (no copy into Python strings: a day of logs has millions).

        >>> read_events({"q": [1, 2]}).id_series("q").to_list()
        ['1', '2']
        """
        import polars as pl

        series = self.frame[column].cast(pl.Utf8)
        empty = np.flatnonzero((series.is_null() | (series.str.strip_chars() == "")).to_numpy())
        if empty.size:
            raise FormatError(self.where(int(empty[0])), f"empty value in id column '{column}'")
        return series


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def read_events(source: Any, *, format: str | None = None) -> EventLog:
    """Read an event log from CSV, TSV, JSONL or Parquet (by extension or ``format``), or take a
    pandas/polars DataFrame, an Arrow table, a dict of columns or an :class:`EventLog`.

    >>> log = read_events({"query": ["q"], "item": ["a"], "position": [0], "click": [1]})
    >>> log.positions()
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: <columns>: row 1: position must be an integer ≥ 1 (1 = top), got 0 in column 'position'
    """
    import polars as pl

    if isinstance(source, EventLog):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FormatError(path, "no such file")
        fmt = format or _FORMATS.get(os.path.splitext(path[:-3] if path.endswith(".gz") else path)[1].lower())
        if fmt is None:
            raise FormatError(path, f"unknown event-log format; use one of {', '.join(sorted(set(_FORMATS.values())))} (format=)")
        try:
            if fmt in ("csv", "tsv"):
                frame = pl.read_csv(path, separator="," if fmt == "csv" else "\t", infer_schema_length=10000)
                return EventLog(frame, path, 2)
            if fmt == "jsonl":
                return EventLog(pl.read_ndjson(path), path, 1)
            return EventLog(pl.read_parquet(path), path, None)
        except FormatError:
            raise
        except Exception as e:  # polars' own parse errors: keep the first line of the message
            raise FormatError(path, f"cannot read as {fmt}: {str(e).splitlines()[0]}") from None
    if isinstance(source, pl.DataFrame):
        return EventLog(source, "<DataFrame>")
    if isinstance(source, dict):
        return EventLog(pl.DataFrame(source), "<columns>")
    try:
        import pyarrow as pa

        if isinstance(source, pa.Table):
            return EventLog(pl.from_arrow(source), "<Arrow table>")
        return EventLog(pl.from_pandas(source), "<DataFrame>")
    except Exception:
        raise FormatError(type(source).__name__, "expected an event-log path, a DataFrame, an Arrow table or a dict of columns") from None
