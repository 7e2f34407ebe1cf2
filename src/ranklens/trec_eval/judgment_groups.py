"""trec_eval 10.0's judgment-group input (``-R qrels_jg``) and the measures that read it (``-m qrels_jg``).

A *judgment group* is one assessor's (one user's) set of judgments. The file has one judgment per line::

    qid  jg  docno  rel

and a query may be judged by several groups that disagree. The three measures evaluate the ranking
against each group separately and average over the groups of the query (``get_qrels_jg.c``,
``form_res_rels_jg.c``, ``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``):

``map_avgjg``
    average precision per group (relevant = label >= ``-l``, R = the group's relevant judgments),
    averaged over the groups;
``P_avgjg.c1,c2,...``
    precision at each cutoff (default 5,10,15,20,30,100,200,500,1000) per group, averaged over groups;
``Rprec_mult_avgjg.m1,m2,...``
    precision at ``(long)(m * R + 0.9)`` documents, R per group (default 0.2,0.4,...,2.0), averaged.

The per-query values of a query with one group are the plain ``map``/``P``/``Rprec_mult`` values. The
summary (``all``) line of every one of them is the mean over the evaluated queries, printed ``%6.4f``
(:data:`JG_PRINT`).

Semantics reproduced from the C code:

* ``-l`` decides relevance inside each group and R counts the group's judgments with label >= ``-l``
  (labels below 0 are never counted in R); ``-M`` truncates the ranking before anything else (the
  caller passes the truncated ranking).
* ``-J`` applies (``form_res_rels_jg.c``): for each group separately, the retrieved documents that
  group did not judge (or judged with a negative label) are dropped before ranks are counted, so
  ``P_avgjg_5`` may look at a different top five per group.
* A retrieved document a group did not judge counts as a non-relevant document of the ranking
  (code -1), one it judged with a negative label as an unjudged one (code -2); both count as relevant
  only when ``-l`` is at most their code, exactly as in the C comparisons.
* ``-c``: a qrels_jg query missing from the run is evaluated on a ranking of the single document
  ``ceci_nest_pas_un_docno`` (``trec_eval.c``); none of these measures is reset afterwards, so the
  values are whatever that ranking gives (normally 0).
* Cutoffs are read as trec_eval reads them (``meas_init.c``): ``P_avgjg`` items through ``atol``
  (``10.7`` is 10), sorted, and the smallest must be positive and none repeated ("Negative cutoff
  detected", "duplicate cutoffs detected"); ``Rprec_mult_avgjg`` items through ``atof`` (``abc`` is
  0), sorted, none repeated, any sign allowed, printed ``%3.2f`` in a buffer that keeps at most 8
  characters of the number (``100000.00`` prints as ``100000.0``). ``map_avgjg`` ignores parameters.

Reading is stricter than ``get_qrels_jg.c`` where trec_eval's behaviour is accidental: every line
starting with ``#`` is a comment (trec_eval parses the second of two consecutive comment lines as
data and crashes on a comment as the last line or on a comment-only file), and a label must be a
decimal integer (trec_eval's ``atol`` reads ``1.5`` as 1 and ``abc`` as 0). As in trec_eval, ``#``
after leading blanks does not start a comment, a line must have exactly 4 columns and a document may be
judged once per query and group. Blank lines are skipped (trec_eval calls them malformed; as in the
qrels reader, their meaning is unambiguous).

``yaap`` (``m_yaap.c``) is not here: it reads **plain** qrels (``-R qrels``), so it is computed on the
engine's ranked lists (:func:`ranklens.trec_eval.compute.yaap`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from ranklens.data.readers import check_text, is_integer_token
from ranklens.errors import DuplicateError, FormatError, MeasureError, did_you_mean
from ranklens.trec_eval.c_numbers import atol

__all__ = [
    "DEFAULT_P_CUTOFFS",
    "DEFAULT_RPREC_MULTIPLES",
    "JG_MEASURES",
    "JG_PRINT",
    "NONPOOL",
    "UNJUDGED",
    "QueryJudgmentGroups",
    "jg_columns",
    "jg_query_values",
    "read_qrels_jg",
    "relevance_codes",
]

#: the judgment-group measures in trec_eval's print order (te_trec_measures[] of measures.c)
JG_MEASURES: tuple[str, ...] = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")

#: how each measure prints and how its ``all`` line aggregates (te_print_*_double / te_calc_avg_meas_*)
JG_PRINT: dict[str, tuple[Literal["float", "long"], Literal["mean", "sum"]]] = {
    "map_avgjg": ("float", "mean"),
    "P_avgjg": ("float", "mean"),
    "Rprec_mult_avgjg": ("float", "mean"),
}

DEFAULT_P_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEFAULT_RPREC_MULTIPLES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

#: relevance code of a retrieved document the judgments do not list (RELVALUE_NONPOOL)
NONPOOL = -1
#: relevance code of a retrieved document listed with a negative label (RELVALUE_UNJUDGED)
UNJUDGED = -2

_COLUMNS = "qid jg docno rel"
_LONG_MIN = -(2**63)
_NAME_DIGITS = 8  # append_double: room for strlen(name) + 8 + 2 bytes, "_" and the NUL included


@dataclass(frozen=True)
class QueryJudgmentGroups:
    """The judgment groups of one query: group names in trec_eval's order (``strcmp``) and, for each
    group, its labels by document.

    >>> q = QueryJudgmentGroups.of("q1", {"b": {"d1": 1}, "a": {"d1": 0, "d2": 2}})
    >>> q.groups, [dict(m) for m in q.labels]
    (('a', 'b'), [{'d1': 0, 'd2': 2}, {'d1': 1}])
    """

    query_id: str
    groups: tuple[str, ...]
    labels: tuple[Mapping[str, int], ...]

    def __post_init__(self) -> None:
        if len(self.groups) != len(self.labels):
            raise ValueError(f"{len(self.groups)} group names for {len(self.labels)} label maps")
        if not self.groups:
            raise ValueError(f"query {self.query_id!r} has no judgment group")

    @classmethod
    def of(cls, query_id: str, groups: Mapping[str, Mapping[str, int]]) -> QueryJudgmentGroups:
        """Build from ``{group: {docno: label}}``; groups are put in trec_eval's order (byte order)."""
        names = sorted(groups, key=_c_order)
        return cls(query_id, tuple(names), tuple(MappingProxyType(dict(groups[n])) for n in names))


def _c_order(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------------- reading


def read_qrels_jg(path: str) -> dict[str, QueryJudgmentGroups]:
    """Read a ``-R qrels_jg`` file (``qid jg docno rel`` per line); queries in trec_eval's order.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels_jg"
    >>> _ = p.write_text("# judged twice\\nq2 u1 d1 1\\nq1 u2 d1 0\\nq1 u1 d1 2\\n")
    >>> [(q.query_id, q.groups) for q in read_qrels_jg(str(p)).values()]
    [('q1', ('u1', 'u2')), ('q2', ('u1',))]
    >>> _ = p.write_text("q1 u1 d1\\n")
    >>> read_qrels_jg(str(p))
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: ...:1: expected 4 columns (qid jg docno rel), got 3: 'q1 u1 d1'
    """
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FormatError(path, f"cannot read the judgment-group qrels: {e.strerror or e}") from None
    data = check_text(data, path)
    if not data:
        raise FormatError(path, f"expected at least one line ({_COLUMNS}), got an empty file")
    lines = data.split(b"\n")  # trec_eval ends lines at \n only; \r is blank space inside a line
    if lines[-1] == b"":
        lines.pop()
    found: dict[str, dict[str, dict[str, int]]] = {}
    first_seen: dict[tuple[str, str, str], int] = {}
    for lineno, raw in enumerate(lines, 1):
        if raw.startswith(b"#"):
            continue
        fields = raw.split()
        if not fields:
            continue  # blank: trec_eval calls it malformed; its meaning is unambiguous (as in qrels)
        if len(fields) != 4:
            got = f"{len(fields)}: '{_shown(raw)}'"
            raise FormatError(path, f"expected 4 columns ({_COLUMNS}), got {got}", lineno)
        qid, group, doc, text = (f.decode("utf-8") for f in fields)
        if not is_integer_token(text):
            raise FormatError(
                path, f"expected an integer relevance label in column 4 (rel), got '{text}'", lineno
            )
        label = int(text)
        if not -(2**31) <= label < 2**31:
            raise FormatError(
                path,
                f"expected a relevance label in the 32-bit range (±2147483647) in column 4, got '{text}'",
                lineno,
            )
        key = (qid, group, doc)
        if key in first_seen:
            raise DuplicateError(
                path,
                f"expected each document once per query and judgment group, got '{doc}' again for query "
                f"'{qid}', group '{group}' (first on line {first_seen[key]})",
                lineno,
            )
        first_seen[key] = lineno
        found.setdefault(qid, {}).setdefault(group, {})[doc] = label
    return {qid: QueryJudgmentGroups.of(qid, found[qid]) for qid in sorted(found, key=_c_order)}


def _shown(raw: bytes, limit: int = 60) -> str:
    text = raw.decode("utf-8").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------- columns


def jg_columns(name: str, params: str | None) -> list[tuple[str, float | None]]:
    """The columns measure ``name`` prints, given the text after the dot of ``-m name.params``.

    Each column is ``(printed name, parameter)``: the cutoff (an int) of ``P_avgjg``, the multiple of R
    of ``Rprec_mult_avgjg``, ``None`` for ``map_avgjg``.

    >>> jg_columns("P_avgjg", "10.7,2x")
    [('P_avgjg_2', 2), ('P_avgjg_10', 10)]
    >>> jg_columns("Rprec_mult_avgjg", "1,0.5")
    [('Rprec_mult_avgjg_0.50', 0.5), ('Rprec_mult_avgjg_1.00', 1.0)]
    >>> jg_columns("map_avgjg", "5")
    [('map_avgjg', None)]
    >>> jg_columns("P_avgjg", "5,0")
    Traceback (most recent call last):
    ...
    ranklens.errors.MeasureError: Negative cutoff detected
    """
    if name == "map_avgjg":
        return [(name, None)]  # te_init_meas_s_double never looks at parameters
    if name == "P_avgjg":
        cutoffs = list(DEFAULT_P_CUTOFFS) if params is None else sorted(_c_atol(p) for p in params.split(","))
        if cutoffs[0] <= 0:
            raise MeasureError("Negative cutoff detected")
        if any(a == b for a, b in zip(cutoffs, cutoffs[1:])):
            raise MeasureError("duplicate cutoffs detected")
        return [(f"{name}_{c}", c) for c in cutoffs]
    if name == "Rprec_mult_avgjg":
        if params is None:
            multiples = list(DEFAULT_RPREC_MULTIPLES)
        else:
            multiples = sorted((_atof(p) for p in params.split(",")), key=_nan_last)
        if any(a == b for a, b in zip(multiples, multiples[1:])):
            raise MeasureError("duplicate cutoffs detected")
        return [(f"{name}_{_format_multiple(m)}", m) for m in multiples]
    raise MeasureError(f"'{name}' is not a judgment-group measure{did_you_mean(name, JG_MEASURES)}")


def _c_atol(text: str) -> int:
    """``atol`` as glibc's strtol gives it: clamped to the range of a long."""
    return min(max(atol(text), _LONG_MIN), 2**63 - 1)


_ATOF = re.compile(
    r"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def _atof(text: str) -> float:
    """C's ``atof``: the leading number of ``text``, 0.0 when there is none.

    >>> _atof("0.5x"), _atof("abc"), _atof(" 1e3"), _atof("1e"), _atof("-inf")
    (0.5, 0.0, 1000.0, 1.0, -inf)
    """
    match = _ATOF.match(text)
    if not match:
        return 0.0
    number = match.group(1)
    body = number.lstrip("+-").lower()
    if body.startswith("0x"):
        try:
            return float.fromhex(number if "p" in body else number + "p0")
        except OverflowError:
            return -math.inf if number.startswith("-") else math.inf
    return float(number)  # "1e" matched as "1", as strtod stops before an exponent without digits


def _nan_last(value: float) -> tuple[bool, float]:
    return (math.isnan(value), 0.0 if math.isnan(value) else value)


def _format_multiple(value: float) -> str:
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
    else:
        text = f"{value:3.2f}"
    return text[:_NAME_DIGITS]


# --------------------------------------------------------------------------------------------- values


def relevance_codes(labels: Mapping[str, int], ranked: Sequence[str], *, judged_only: bool = False) -> list[int]:
    """The relevance code of each ranked document: its label, :data:`NONPOOL` (-1) if ``labels`` lacks it,
    :data:`UNJUDGED` (-2) if its label is negative; with ``judged_only`` (``-J``) only the labels >= 0.

    >>> relevance_codes({"d1": 2, "d2": -1}, ["d3", "d1", "d2"])
    [-1, 2, -2]
    >>> relevance_codes({"d1": 2, "d2": -1}, ["d3", "d1", "d2"], judged_only=True)
    [2]
    """
    codes = []
    for doc in ranked:
        label = labels.get(doc)
        if label is None:
            code = NONPOOL
        elif label < 0:
            code = UNJUDGED
        else:
            code = label
        if code >= 0 or not judged_only:
            codes.append(code)
    return codes


def _num_rel(labels: Mapping[str, int], rel_level: int) -> int:
    """R as form_res_rels counts it: labels that are >= 0 and >= rel_level."""
    return sum(1 for v in labels.values() if v >= 0 and v >= rel_level)


def jg_query_values(
    judgments: QueryJudgmentGroups,
    ranked: Sequence[str],
    columns: dict[str, list[tuple[str, float | None]]],
    *,
    rel_level: int = 1,
    judged_only: bool = False,
) -> dict[str, float]:
    """The value of every requested column for one query.

    ``ranked`` is the query's retrieved documents in trec_eval's evaluation order (score descending,
    ties by docno descending), already cut at ``-M``; it may be empty. ``columns`` maps a measure of
    :data:`JG_MEASURES` to its :func:`jg_columns`. ``rel_level`` is ``-l``, ``judged_only`` is ``-J``.
    Each value is the sum over the query's groups (in group order) divided by the number of groups.

    Two users: ``a`` finds d1 and d3 relevant, ``b`` only d2. AP is (1/1 + 2/3)/2 for ``a`` and 1/2 for
    ``b``, so map_avgjg is (5/6 + 1/2)/2 = 2/3; P at 2 is 1/2 for both.

    >>> q = QueryJudgmentGroups.of("q1", {"a": {"d1": 1, "d3": 2}, "b": {"d2": 1, "d1": 0}})
    >>> cols = {"map_avgjg": jg_columns("map_avgjg", None), "P_avgjg": jg_columns("P_avgjg", "2")}
    >>> {k: round(v, 4) for k, v in jg_query_values(q, ["d1", "d2", "d3"], cols).items()}
    {'map_avgjg': 0.6667, 'P_avgjg_2': 0.5}
    """
    out: dict[str, float] = {}
    groups = [
        (relevance_codes(labels, ranked, judged_only=judged_only), _num_rel(labels, rel_level))
        for labels in judgments.labels
    ]
    count = len(groups)
    for name, cols in columns.items():
        params = [p for _, p in cols]
        if name == "map_avgjg":
            kernel = _map_kernel
        elif name == "P_avgjg":
            kernel = _precision_kernel
        elif name == "Rprec_mult_avgjg":
            kernel = _rprec_mult_kernel
        else:
            raise MeasureError(f"'{name}' is not a judgment-group measure{did_you_mean(name, JG_MEASURES)}")
        totals = [0.0] * len(cols)
        for codes, num_rel in groups:
            for k, value in enumerate(kernel(codes, num_rel, params, rel_level)):
                totals[k] += value
        if count > 1:
            totals = [t / count for t in totals]
        for (printed, _), total in zip(cols, totals):
            out[printed] = total
    return out


def _map_kernel(codes: list[int], num_rel: int, params: list[float | None], rel_level: int) -> list[float]:
    found = 0
    total = 0.0
    for rank, code in enumerate(codes, 1):
        if code >= rel_level:
            found += 1
            total += found / rank
    if not found:
        return [0.0]
    # R counts labels >= 0 only; with -l below 0 a non-judged document can be "relevant" while R is 0
    return [total / num_rel if num_rel else math.inf]


def _precision_kernel(codes: list[int], num_rel: int, params: list[float | None], rel_level: int) -> list[float]:
    prefix = [0, *accumulate(1 if code >= rel_level else 0 for code in codes)]
    last = len(codes)
    out = []
    for param in params:
        cutoff = int(param or 0)  # jg_columns gives positive ints
        out.append(prefix[min(cutoff, last)] / cutoff)
    return out


def _c_long(value: float) -> int:
    """A double converted to long as x86-64 does: truncation, LONG_MIN when out of range or NaN."""
    if math.isfinite(value) and -(2.0**63) <= value < 2.0**63:
        return int(value)
    return _LONG_MIN


def _rprec_mult_kernel(codes: list[int], num_rel: int, params: list[float | None], rel_level: int) -> list[float]:
    cutoffs = [_c_long((m if m is not None else 0.0) * num_rel + 0.9) for m in params]
    num_ret = len(codes)
    # relevant retrieved as form_res_rels_jg counts it: documents with a label (>= 0) reaching rel_level
    num_rel_ret = sum(1 for code in codes if code >= 0 and code >= rel_level)
    values = [0.0] * len(cutoffs)
    # The C walks the cutoffs from the largest down, in one pass: first those beyond the ranking (the
    # missing documents count as non-relevant), then the ranking from its end, taking precision at
    # each cutoff it meets, and it stops once no relevant document is left above (precision 0 there).
    pos = len(cutoffs) - 1
    while pos >= 0 and cutoffs[pos] > num_ret:
        values[pos] = num_rel_ret / cutoffs[pos]
        pos -= 1
    remaining = num_rel_ret
    rank = num_ret
    while rank > 0 and remaining > 0:
        precision = remaining / rank
        while pos >= 0 and cutoffs[pos] == rank:
            values[pos] = precision
            pos -= 1
        if codes[rank - 1] >= rel_level:
            remaining -= 1
        rank -= 1
    return values
