"""trec_eval ``-Z``: print each value as a z-score against reference means and deviations.

The file has one line per query and printed measure name: ``qid measure mean stddev`` (whitespace
separated; ``get_zscores.c``). Each per-query value ``v`` becomes ``(v - mean) / stddev``; when
``stddev`` is 0 it becomes 0 if ``v == mean``; when the pair (query, measure) is not in the file, or the
deviation is 0 and ``v != mean``, it becomes ``-1000000`` (``convert_zscores.c``). The summary line is
then the usual aggregate of the converted values (mean, sum for counts), and the geometric means
(``gm_map``, ``gm_bpref``) standardise the per-query ``log(max(v, 1e-5))`` they accumulate and print
``exp`` of its mean. ``runid``, ``num_q`` and ``relstring`` are not converted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ranklens.errors import FormatError
from ranklens.trec_eval.table import MIN_GEO_MEAN
from ranklens.trec_eval.values import QueryValues, floats

__all__ = ["MISSING", "Reference", "read_zscores", "standardise"]

#: the value trec_eval prints when no reference mean is known (MISSING_ZSCORE_VALUE)
MISSING = -1000000.0

Reference = dict[tuple[str, str], tuple[float, float]]
"""(query id, printed measure name) → (mean, standard deviation)."""


def read_zscores(path: str) -> Reference:
    """Read a ``-Z`` file: ``qid measure mean stddev`` per line.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "z"
    >>> _ = p.write_text("q1 map 0.25 0.1\\n")
    >>> read_zscores(str(p))
    {('q1', 'map'): (0.25, 0.1)}
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as e:
        raise FormatError(path, f"cannot read the z-score file: {e.strerror or e}") from None
    out: Reference = {}
    for lineno, raw in enumerate(data.splitlines(), 1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise FormatError(path, f"expected 4 columns (qid measure mean stddev), got {len(fields)}", lineno)
        qid, measure = fields[0].decode("utf-8", "replace"), fields[1].decode("utf-8", "replace")
        try:
            mean, stddev = float(fields[2]), float(fields[3])
        except ValueError:
            raise FormatError(
                path, f"expected two numbers (mean stddev) in columns 3-4, got '{fields[2].decode()}' "
                f"'{fields[3].decode()}'", lineno,
            ) from None
        out[(qid, measure)] = (mean, stddev)
    return out


def standardise(values: QueryValues, reference: Reference, geometric: Iterable[str]) -> QueryValues:
    """``values`` with every numeric column converted to z-scores; the columns named in ``geometric``
    are first replaced by the ``log(max(v, 1e-5))`` that trec_eval accumulates for them."""
    logged = set(geometric)
    numbers: dict[str, Sequence[float]] = {}
    for name, column in values.numbers.items():
        raw = floats(column)
        if name in logged:
            raw = [math.log(max(MIN_GEO_MEAN, v)) for v in raw]
        numbers[name] = [_z(v, reference.get((qid, name))) for qid, v in zip(values.query_ids, raw)]
    return values._replace(numbers=numbers, logged=frozenset(logged & set(numbers)))


def _z(value: float, ref: tuple[float, float] | None) -> float:
    if ref is None:
        return MISSING
    mean, stddev = ref
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING
