"""Writing results to files: JSON, CSV, TSV (trec_eval -q style) and Parquet."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ranklens.errors import InputError
from ranklens.results import Results

__all__ = ["write_results"]

_BY_SUFFIX = {".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".txt": "tsv", ".trec": "trec"}


def write_results(
    results: Results | Sequence[Results],
    path: str | Path,
    *,
    per_query: bool = True,
    meta: dict[str, Any] | None = None,
    format: str | None = None,
) -> None:
    """Write one or several runs' results to ``path``; the format comes from ``format`` or the suffix.

    Parquet and CSV hold the long table ``run, measure, query_id, value`` (aggregates under ``all``).

    >>> import ranklens, tempfile, pathlib
    >>> res = ranklens.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["P@1"])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "res.csv"
    >>> write_results(res, out)
    >>> out.read_text().splitlines()[1]
    'run,P@1,q1,1.0'
    """
    from ranklens.cli._output import render

    items = [results] if isinstance(results, Results) else list(results)
    path = Path(path)
    fmt = format or _BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: cannot tell the output format from the suffix '{path.suffix}'; "
            "use .json, .csv, .tsv or .parquet (or --format)"
        )
    if fmt == "parquet":
        import pyarrow.parquet as pq

        tables = [r.to_long_arrow() for r in items]
        table = pa.concat_tables(tables) if tables else pa.table({})
        if not per_query:
            import pyarrow.compute as pc

            table = table.filter(pc.equal(table["query_id"], "all"))
        pq.write_table(table, path)
        return
    path.write_text(render(items, fmt, per_query=per_query, meta=meta or {}), encoding="utf-8")
