"""What a comparison reads besides runs: the query → segment mapping, the per-system costs, and results
files (``eval --per-query`` output) standing in for runs."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from ranklens.comparison.pairing import shown_ids
from ranklens.errors import FormatError, InputError
from ranklens.results.core import Results

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["load_costs", "load_segments", "parse_number"]


def load_segments(source: Any) -> dict[str, str] | None:
    """A query → segment mapping (``None`` stays ``None``): :func:`ranklens.data.segments.read_segments`.

    It takes text lines ``query_id segment``, CSV/TSV with a header naming the columns, JSON
    ``{query_id: segment}``, mappings and frames; errors name the file and line.

    >>> load_segments({"q1": "nav", "q2": "info"})
    {'q1': 'nav', 'q2': 'info'}
    """
    if source is None:
        return None
    from ranklens.data.segments import read_segments  # (pathlib and the file readers: only for segments)

    return read_segments(source)


def segment_counts(
    segment_of: Mapping[str, str] | None, results: Mapping[str, Results], notes: list[str], where: str = "segments"
) -> tuple[list[str], list[int]]:
    if segment_of is None:
        return [], []
    evaluated: dict[str, None] = {}
    for r in results.values():
        evaluated.update(dict.fromkeys(r.query_ids))
    names = sorted({segment_of[q] for q in evaluated if q in segment_of})
    if not names:
        from ranklens.data.segments import check_overlap

        check_overlap(segment_of, evaluated, source=where)
    counts = [sum(1 for q in evaluated if segment_of.get(q) == s) for s in names]
    unlabelled = [q for q in evaluated if q not in segment_of]
    if unlabelled:
        notes.append(
            f"segments: {len(unlabelled)} evaluated quer{'y has' if len(unlabelled) == 1 else 'ies have'} "
            f"no segment ({shown_ids(unlabelled)}); counted overall only"
        )
    return names, counts


def load_costs(source: Any) -> dict[str, dict[str, float]] | None:
    """Per-system costs (lower is better) from a mapping, a CSV/TSV file or a frame.

    ``{"bm25": {"latency_ms": 12, "cost_per_1k": 0.1}}`` or ``{"bm25": 12}`` (one cost named ``cost``);
    files and frames have a ``system`` column (or the first column) and one numeric column per cost.

    >>> load_costs({"bm25": 12, "dense": 40})
    {'bm25': {'cost': 12.0}, 'dense': {'cost': 40.0}}
    """
    if source is None:
        return None
    if isinstance(source, (str, os.PathLike)):
        from pathlib import Path  # (only for a costs file)

        columns = _columns_from_file(Path(source))
        where = str(source)
    elif isinstance(source, Mapping) and all(not isinstance(v, (list, tuple)) and not hasattr(v, "ndim") for v in source.values()):
        out: dict[str, dict[str, float]] = {}
        for system, value in source.items():
            entry = value if isinstance(value, Mapping) else {"cost": value}
            out[str(system)] = {str(k): parse_number(v, f"costs of {system!r}") for k, v in entry.items()}
        return out
    else:
        columns = _columns(source, "costs")
        where = "costs"
    names = list(columns)
    if len(names) < 2:
        raise InputError(f"{where}: expected a system column and at least one cost column; got {names}")
    lowered = [n.lower() for n in names]
    scol = names[lowered.index("system")] if "system" in lowered else names[0]
    out = {}
    for i, system in enumerate(columns[scol]):
        out[str(system)] = {c: parse_number(columns[c][i], f"{where}: {c} of {system!r}") for c in names if c != scol}
    return out


def parse_number(value: Any, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected a number, got {value!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{what}: expected a finite number, got {value!r}")
    return x


def _columns_from_file(path: Path) -> dict[str, list[Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(str(path), "no such file") from None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise FormatError(str(path), "empty file")
    delimiter = "\t" if "\t" in lines[0] else ","
    import csv  # (only for a costs or segments file)

    rows = list(csv.reader(lines, delimiter=delimiter))
    header = [h.strip() for h in rows[0]]
    columns: dict[str, list[Any]] = {h: [] for h in header}
    for lineno, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise FormatError(
                str(path), f"expected {len(header)} columns ({', '.join(header)}), got {len(row)}", lineno
            )
        for h, v in zip(header, row):
            columns[h].append(v.strip())
    return columns


def _columns(obj: Any, what: str) -> dict[str, list[Any]]:
    """Columns of a pyarrow Table, pandas or polars DataFrame, or a mapping of equal-length columns."""
    import pyarrow as pa

    library = type(obj).__module__.split(".")[0]
    if isinstance(obj, pa.Table):
        return {n: obj.column(n).to_pylist() for n in obj.column_names}
    if library == "polars" and hasattr(obj, "to_arrow"):
        return _columns(obj.to_arrow(), what)
    if library == "pandas" and hasattr(obj, "columns"):
        return {str(c): obj[c].tolist() for c in obj.columns}
    if isinstance(obj, Mapping):
        return {str(k): list(v) for k, v in obj.items()}
    raise InputError(f"{what}: expected a dict, a file or a DataFrame/Arrow table; got {type(obj).__name__}")


def is_results_file(path: str | os.PathLike[str]) -> bool:
    from ranklens.results.io import looks_like_results

    return os.path.isfile(path) and looks_like_results(path)


def one_results(path: str | os.PathLike[str]) -> Results:
    """The one run of a results file (``eval --per-query -f json`` or ``-o FILE``), with per-query
    values."""
    from ranklens.results.io import read_results

    found = read_results(path)
    if len(found) != 1:
        raise InputError(
            f"{path}: holds the results of {len(found)} runs ({', '.join(r.run for r in found)}); "
            "give each run's results file, or pass the Results objects"
        )
    if not found[0].query_ids:
        raise InputError(
            f"{path}: holds aggregates only; comparing needs per-query values: write them with "
            "ranklens eval … --per-query -o FILE (.json, .csv or .parquet)"
        )
    return found[0]
