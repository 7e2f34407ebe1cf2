"""trec_eval's text output (``meas_print_single.c``, ``meas_print_final.c``, ``meas_avg.c``).

Every line is ``name`` left-aligned in 22 columns, a tab, the query id (``all`` for the summary), a tab
and the value: ``%6.4f`` for floats, ``%ld`` for counts, ``'…'`` for relstring, the run id as is.

Summary values: the mean divides the sum of the per-query values, added in query order as trec_eval
does, by the number of queries; counts are summed; ``num_q`` is the number of queries; ``gm_map`` and
``gm_bpref`` are ``exp(Σ log(max(v, 1e-5)) / n)`` with libm's ``log``/``exp``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from ranklens.trec_eval.table import MIN_GEO_MEAN, Selected
from ranklens.trec_eval.values import QueryValues, floats

__all__ = ["format_float", "query_lines", "summary_lines"]


def format_float(value: float) -> str:
    """C's ``%6.4f`` as glibc prints it on x86-64; NaNs print as ``-nan`` there (0/0 sets the sign bit)."""
    if math.isnan(value):
        return "  -nan"
    return f"{value:6.4f}"


def _line(name: str, qid: str, text: str, prefix: str = "") -> str:
    return f"{prefix}{name:<22}\t{qid}\t{text}\n"


def _long(value: float) -> str:
    return str(int(value)) if math.isfinite(value) else "-9223372036854775808"


def query_lines(
    selected: Sequence[Selected], values: QueryValues, queries: range, *, zscore: bool = False
) -> Iterator[str]:
    """The ``-q`` lines of the queries at positions ``queries``, measure by measure for each query.

    With ``zscore`` (``-Z``) every numeric line prints ``Z`` before its name and its value as ``%6.4f``,
    counts included (``meas_print_single.c``).
    """
    columns: list[tuple[str, list[str]]] = []  # (the line up to the query id, the values' texts)
    for sel in selected:
        if not sel.entry.per_query:
            continue
        for printed, _ in sel.columns:
            if sel.entry.value == "relstring":
                texts = [f"'{t}'" for t in values.texts[printed]]
            elif sel.entry.value == "long" and not zscore:
                texts = [_long(v) for v in floats(values.numbers[printed])]
            else:  # (format_float, inline: -q -m all_trec prints 100 values per query)
                texts = ["  -nan" if v != v else f"{v:6.4f}" for v in floats(values.numbers[printed])]
            prefix = "Z" if zscore and sel.entry.value != "relstring" else ""
            columns.append((f"{prefix}{printed:<22}\t", texts))
    for i in queries:
        qid = values.query_ids[i]
        yield from [f"{head}{qid}\t{texts[i]}\n" for head, texts in columns]


def summary_lines(
    selected: Sequence[Selected], values: QueryValues, runid: str, *, zscore: bool = False
) -> Iterator[str]:
    """The ``all`` lines; with ``zscore`` (``-Z``) names get a ``Z`` and counts print as ``%6.4f``
    (``meas_print_final.c``), ``runid`` excepted."""
    n = len(values.query_ids)
    z = "Z" if zscore else ""
    for sel in selected:
        how = sel.entry.summary
        if how == "none":
            continue
        if how == "runid":
            yield _line("runid", "all", runid)
            continue
        if how == "count":
            yield _line(sel.columns[0][0], "all", format_float(n) if zscore else str(n), z)
            continue
        for printed, _ in sel.columns:
            col = floats(values.numbers[printed])
            if how == "sum":
                total = _sequential_sum(col)
                yield _line(printed, "all", format_float(total) if zscore else _long(total), z)
            elif how == "gmean" and printed in values.logged:
                yield _line(printed, "all", format_float(math.exp(_sequential_sum(col) / n) if n else 0.0), z)
            elif how == "gmean":
                yield _line(printed, "all", format_float(_geometric_mean(col)), z)
            else:
                yield _line(printed, "all", format_float(_sequential_sum(col) / n if n else 0.0), z)


def _sequential_sum(values: list[float]) -> float:
    """Σ values added left to right in float64, as trec_eval adds them (``np.sum`` adds pairwise, ``math.fsum``
    exactly, and ``sum`` compensates since Python 3.12)."""
    total = 0.0
    for v in values:
        total += v
    return total


def _geometric_mean(values: list[float]) -> float:
    if not values:
        return 0.0
    # like C's MAX(v, MIN_GEO_MEAN), max() keeps the floor when v is NaN (NaN > floor is false)
    return math.exp(_sequential_sum([math.log(max(MIN_GEO_MEAN, v)) for v in values]) / len(values))
