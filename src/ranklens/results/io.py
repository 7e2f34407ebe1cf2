"""Writing results to files — JSON, CSV, TSV (trec_eval -q style) and Parquet — and reading the JSON,
CSV and Parquet files back (:func:`read_results`), so saved results are inputs to ``compare`` and ``gate``."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

from ranklens.errors import FormatError, InputError
from ranklens.results.core import Results

TYPE_CHECKING = False
if TYPE_CHECKING:  # (pyarrow and pathlib only where a table is read or written: looks_like_results needs none)
    from pathlib import Path
    from typing import Any

    import pyarrow as pa

__all__ = ["looks_like_results", "read_results", "write_results"]

_LONG_COLUMNS = ["run", "measure", "query_id", "value"]
_JSON_RESULTS = re.compile(r'^\s*\{\s*"(ranklens_version"\s*:|runs"\s*:\s*\[|run"\s*:\s*")')

_BY_SUFFIX = {".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".txt": "tsv", ".trec": "trec"}


def write_results(
    results: Results | Sequence[Results],
    path: str | Path,
    *,
    per_query: bool = True,
    meta: dict[str, Any] | None = None,
    format: str | None = None,
    expected: Sequence[str] | None = None,
) -> None:
    """Write one or several runs' results to ``path``; the format comes from ``format`` or the suffix.
    ``expected`` (the qrels' query ids) makes JSON say which of them each run left out
    (:func:`ranklens.results.rendering.render_json`).

    Parquet and CSV hold the long table ``run, measure, query_id, value`` (aggregates under ``all``).

    >>> import ranklens, tempfile, pathlib
    >>> res = ranklens.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["P@1"])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "res.csv"
    >>> write_results(res, out)
    >>> out.read_text().splitlines()[1]
    'run,P@1,q1,1.0'
    """
    from pathlib import Path

    from ranklens.results.rendering import render

    items = [results] if isinstance(results, Results) else list(results)
    path = Path(path)
    fmt = format or _BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: cannot tell the output format from the suffix '{path.suffix}'; "
            "use .json, .csv, .tsv or .parquet (or --format)"
        )
    directory = path.resolve().parent
    if not directory.is_dir():
        raise FormatError(str(path), f"cannot write: no such directory {str(directory)!r}")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = [r.to_long_arrow() for r in items]
        table = pa.concat_tables(tables) if tables else pa.table({})
        if not per_query:
            import pyarrow.compute as pc

            table = table.filter(pc.equal(table["query_id"], "all"))
        pq.write_table(table, path)
        return
    path.write_text(render(items, fmt, per_query=per_query, meta=meta or {}, expected=expected), encoding="utf-8")


def looks_like_results(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a results file written by :func:`write_results` (JSON, CSV or Parquet), from
    its first bytes or its Parquet schema: ``{"ranklens_version": …}`` / ``{"run": "…", …}``, a CSV header
    ``run,measure,query_id,value``, or Parquet columns ``run, measure, query_id, value``."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head.startswith(b"PAR1"):
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(p).names) == _LONG_COLUMNS
        except Exception:  # noqa: BLE001 - not readable as Parquet: not ours
            return False
    text = head.lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    return bool(_JSON_RESULTS.match(text)) or _first_line(text) == ",".join(_LONG_COLUMNS)


def _first_line(text: str) -> str:
    return text.splitlines()[0].strip() if text.strip() else ""


def read_results(path: str | os.PathLike[str]) -> list[Results]:
    """The results of every run in a file written by ``ranklens eval -f json|csv -o …|parquet`` (or
    :func:`write_results`, or ``Results.to_json()``), in file order.

    Per-query values are there only when they were written (``--per-query``; CSV and Parquet files from
    ``-o`` always have them); a run without them has no :attr:`~Results.query_ids` and keeps its aggregates.

    >>> import ranklens, tempfile, pathlib
    >>> res = ranklens.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, ["P@1"])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "res.json"
    >>> write_results(res, out)
    >>> [back] = read_results(out)
    >>> back.per_query("P@1"), back["P@1"]
    ({'q1': 1.0, 'q2': 0.0}, 0.5)
    """
    from pathlib import Path

    p = Path(path)
    display = str(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise FormatError(display, "no such file") from None
    if head.startswith(b"PAR1"):
        import pyarrow.parquet as pq

        return _from_long(pq.read_table(p), display)
    text = p.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("{"):
        import json

        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise FormatError(display, f"not valid JSON: {e.msg}", e.lineno) from None
        return _from_json(doc, display)
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if _first_line(text) != ",".join(_LONG_COLUMNS):
        raise FormatError(display, "not a results file: expected JSON from eval -f json or a CSV/Parquet "
                                   "table with columns run, measure, query_id, value")
    table = pacsv.read_csv(
        p, convert_options=pacsv.ConvertOptions(column_types={"run": pa.string(), "measure": pa.string(),
                                                              "query_id": pa.string(), "value": pa.float64()})
    )
    return _from_long(table, display)


def _from_json(doc: Any, display: str) -> list[Results]:
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
        runs = doc["runs"]
    elif isinstance(doc, dict) and "measures" in doc and "aggregate" in doc:
        runs = [doc]
    else:
        raise FormatError(display, 'not a results file: expected {"runs": [...]} as written by eval -f json')
    return [_one_json(r, display, i) for i, r in enumerate(runs, 1)]


def _one_json(d: Any, display: str, i: int) -> Results:
    from ranklens.measures import parse

    if not isinstance(d, dict) or not isinstance(d.get("measures"), list) or not isinstance(d.get("aggregate"), dict):
        raise FormatError(display, f"run {i}: expected an object with 'run', 'measures' and 'aggregate'")
    names = [str(n) for n in d["measures"]]
    measures = tuple(parse(n) for n in names)
    per_query = d.get("per_query") or {}
    qids = tuple(sorted(per_query, key=lambda q: str(q).encode("utf-8")))
    values = [[_number(per_query[q].get(n), display) for n in names] for q in qids]  # (rows: Results holds them)
    aggregates = tuple(_number(d["aggregate"].get(n), display) for n in names)
    notes = tuple(str(n) for n in d.get("notes") or ())
    options: dict[str, Any] = dict(d["options"]) if isinstance(d.get("options"), dict) else {}
    return Results(str(d.get("run", f"run{i}")), measures, qids, values, aggregates, notes, options)


def _number(v: Any, display: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FormatError(display, f"expected a number or null as a value, got {v!r}")
    return float(v)


def _from_long(table: pa.Table, display: str) -> list[Results]:
    from ranklens.measures import parse

    if table.column_names != _LONG_COLUMNS:
        raise FormatError(display, f"not a results table: expected columns {', '.join(_LONG_COLUMNS)}; got "
                                   f"{', '.join(table.column_names)}")
    runs: dict[str, dict[str, Any]] = {}
    for run, measure, qid, value in zip(*(table.column(c).to_pylist() for c in _LONG_COLUMNS)):
        r = runs.setdefault(str(run), {"measures": {}, "per_query": {}, "aggregate": {}})
        r["measures"].setdefault(str(measure), None)
        v = math.nan if value is None else float(value)
        if qid == "all":
            r["aggregate"][str(measure)] = v
        else:
            r["per_query"].setdefault(str(qid), {})[str(measure)] = v
    out = []
    for name, r in runs.items():
        names = list(r["measures"])
        qids = tuple(sorted(r["per_query"], key=lambda q: q.encode("utf-8")))
        values = [[r["per_query"][q].get(n, math.nan) for n in names] for q in qids]
        aggregates = tuple(r["aggregate"].get(n, math.nan) for n in names)
        out.append(Results(name, tuple(parse(n) for n in names), qids, values, aggregates))
    return out
