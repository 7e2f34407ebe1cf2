"""The pairing core: two systems' per-query values on the queries both answered (optionally within one
segment), their wins/ties/losses, the note saying which queries were dropped, and a paired summary.

:func:`compare` pairs :class:`~ranklens.Results` with :func:`pair_results`; the monitor pairs the
query → value mappings of two snapshots with :func:`pair_values` and summarises them with
:func:`paired_summary`. Both go through the same code, so they pair, count and drop alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ranklens.results.core import Results
from ranklens.stats.lists import win_tie_loss as _win_tie_loss
from ranklens.stats.sums import np_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (numpy is imported when a caller reads the values as arrays)
    import numpy as np

__all__ = [
    "BETWEEN_SUBJECTS",
    "PairedSummary",
    "Pairing",
    "common_queries",
    "dropped_all_note",
    "in_segment",
    "looks_between_subjects",
    "pair_results",
    "pair_values",
    "paired_summary",
    "query_values",
    "value_list",
    "values_of",
    "win_tie_loss",
]

#: How many dropped query ids a note lists before "…".
SHOW_IDS = 5


@dataclass(frozen=True, eq=False)
class Pairing:
    """Two systems' values on their common queries: ``values_a[i]`` and ``values_b[i]`` (lists of floats; as
    numpy vectors :attr:`a` and :attr:`b`, built when read) are the values of ``queries[i]`` (in ``a``'s query
    order); ``only_a``/``only_b`` are the queries only one of them answered."""

    queries: tuple[str, ...]
    values_a: list[float]
    values_b: list[float]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    _arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def a(self) -> np.ndarray:
        """``values_a`` as a float64 numpy vector."""
        return self._array("a", self.values_a)

    @property
    def b(self) -> np.ndarray:
        """``values_b`` as a float64 numpy vector."""
        return self._array("b", self.values_b)

    def _array(self, key: str, values: list[float]) -> np.ndarray:
        if key not in self._arrays:
            import numpy as np

            self._arrays[key] = np.asarray(values, dtype=np.float64)
        return self._arrays[key]

    @property
    def n(self) -> int:
        """The number of paired queries."""
        return len(self.queries)

    def win_tie_loss(self) -> tuple[int, int, int]:
        """How many queries ``a`` wins, ties and loses against ``b`` (:func:`ranklens.stats.win_tie_loss`)."""
        return win_tie_loss(self.values_a, self.values_b)

    def swapped(self) -> Pairing:
        """The same pairs seen from ``b`` (the query order stays)."""
        return Pairing(self.queries, self.values_b, self.values_a, self.only_b, self.only_a)

    def dropped_note(self, name_a: str, name_b: str) -> str | None:
        """The note saying which queries were dropped (``None`` when none was)."""
        parts = []
        for who, only in ((name_a, sorted(self.only_a)), (name_b, sorted(self.only_b))):
            if only:
                parts.append(f"{len(only)} quer{'y' if len(only) == 1 else 'ies'} only in {who} ({shown_ids(only)})")
        if not parts:
            return None
        hint = (
            BETWEEN_SUBJECTS if looks_between_subjects(self.n, self.n + len(self.only_a) + len(self.only_b))
            else "score unanswered qrels queries 0 with missing=zero (--missing zero) to keep them"
        )
        return f"{name_a} vs {name_b}: paired on {self.n} common queries; dropped {' and '.join(parts)}; {hint}"


#: What a comparison says when two runs share few queries: a between-subjects experiment, not a paired one.
BETWEEN_SUBJECTS = (
    "this looks like a between-subjects experiment (each user or query served by one system only): analyse it "
    "with ranklens ab (Welch's test between the groups); scoring the users a system never served 0 does not pair them"
)


def looks_between_subjects(common: int, union: int) -> bool:
    """True when the two runs share fewer than half of the queries either answered: most queries were
    served by one system only, as when users are split between the arms of an online experiment.

    >>> looks_between_subjects(0, 200), looks_between_subjects(40, 100), looks_between_subjects(95, 100)
    (True, True, False)
    """
    return union > 0 and common < 0.5 * union


def in_segment(query: str, segment_of: Mapping[str, str] | None, segment: str | None) -> bool:
    """True when ``segment`` is ``None`` (every query) or ``segment_of`` puts ``query`` in it."""
    return segment is None or (segment_of is not None and segment_of.get(query) == segment)


def query_values(
    queries: Iterable[str],
    values: Iterable[float | None],
    segments: Sequence[str | None] | None = None,
    segment: str | None = None,
) -> dict[str, float]:
    """``query → value`` of the queries with a value (``None`` skipped) in ``segment`` (``None``: every
    query), in the given order; ``segments`` are the queries' segments, aligned with ``queries``.

    >>> query_values(["q1", "q2", "q3"], [0.5, None, 0.25], ["a", "a", "b"], "a")
    {'q1': 0.5}
    """
    out: dict[str, float] = {}
    for i, (q, v) in enumerate(zip(queries, values)):
        if segment is not None and (segments is None or segments[i] != segment):
            continue
        if v is not None:
            out[q] = v
    return out


def pair_values(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> Pairing:
    """Pair two ``query → value`` mappings on the queries both have a value for (``None`` skipped), in
    ``a``'s order.

    >>> p = pair_values({"q1": 0.5, "q2": 0.2, "q3": None}, {"q2": 0.1, "q1": 0.5, "q4": 1.0})
    >>> p.queries, p.a.tolist(), p.b.tolist(), p.only_a, p.only_b, p.win_tie_loss()
    (('q1', 'q2'), [0.5, 0.2], [0.5, 0.1], (), ('q4',), (1, 1, 0))
    """
    queries = [q for q, v in a.items() if v is not None and b.get(q) is not None]
    only_a = tuple(q for q, v in a.items() if v is not None and b.get(q) is None)
    only_b = tuple(q for q, v in b.items() if v is not None and a.get(q) is None)
    xa = [float(a[q]) for q in queries]  # type: ignore[arg-type]
    xb = [float(b[q]) for q in queries]  # type: ignore[arg-type]
    return Pairing(tuple(queries), xa, xb, only_a, only_b)


def pair_results(
    a: Results, b: Results, measure: str, segment_of: Mapping[str, str] | None = None, segment: str | None = None
) -> Pairing:
    """Pair two Results on ``measure`` over the queries both answered (within ``segment`` of
    ``segment_of``; ``None``: every query), in ``a``'s query order."""
    return pair_values(_measure_values(a, measure, segment_of, segment), _measure_values(b, measure, segment_of, segment))


def _measure_values(
    res: Results, measure: str, segment_of: Mapping[str, str] | None, segment: str | None
) -> dict[str, float]:
    labels = None if segment is None or segment_of is None else [segment_of.get(q) for q in res.query_ids]
    return query_values(res.query_ids, res.column_values(measure), labels, segment)


def common_queries(
    results: Mapping[str, Results], segment_of: Mapping[str, str] | None = None, segment: str | None = None
) -> list[str]:
    """The queries every Results answered (within ``segment``), in the first one's order."""
    both = set.intersection(*(set(r.query_ids) for r in results.values()))
    first = next(iter(results.values()))
    return [q for q in first.query_ids if q in both and in_segment(q, segment_of, segment)]


def values_of(res: Results, measure: str, queries: Sequence[str]) -> np.ndarray:
    """The values of ``measure`` on ``queries`` (every one of which ``res`` answered), in their order, as a
    numpy vector (:func:`value_list`: as a list)."""
    import numpy as np

    return np.asarray(value_list(res, measure, queries), dtype=np.float64)


def value_list(res: Results, measure: str, queries: Sequence[str]) -> list[float]:
    """The values of ``measure`` on ``queries`` (every one of which ``res`` answered), in their order."""
    index = {q: i for i, q in enumerate(res.query_ids)}
    col = res.column_values(measure)
    return [col[index[q]] for q in queries]


def dropped_all_note(results: Mapping[str, Results], common: Sequence[str]) -> str | None:
    """The note of an all-pairs test: the queries dropped because some system did not answer them."""
    every = set().union(*(set(r.query_ids) for r in results.values()))
    dropped = sorted(every - set(common))
    if not dropped:
        return None
    return (
        f"all-pairs test: paired on the {len(common)} queries every system answered; dropped "
        f"{len(dropped)} ({shown_ids(dropped)}); score unanswered qrels queries 0 with missing=zero (--missing zero) "
        "to keep them"
    )


def shown_ids(ids: Sequence[str]) -> str:
    """The first :data:`SHOW_IDS` ids, comma-separated, then "…" when there are more."""
    return ", ".join(ids[:SHOW_IDS]) + (", …" if len(ids) > SHOW_IDS else "")




def win_tie_loss(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[int, int, int]:
    """:func:`ranklens.stats.win_tie_loss` of aligned values (ties within its tolerance); ``(0, 0, 0)`` on no
    query."""
    return (0, 0, 0) if len(a) == 0 else _win_tie_loss(a, b)


@dataclass(frozen=True)
class PairedSummary:
    """A paired comparison of ``a - b``: mean difference, its interval, the test's p-value and
    wins/ties/losses."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    wins: int
    ties: int
    losses: int


def paired_summary(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, test: str = "t", *, level: float = 0.95) -> PairedSummary:
    """Compare aligned per-query values ``a`` and ``b``: mean of ``a - b``, its t interval at ``level`` and
    the ``test``'s p-value (both NaN with fewer than 2 queries), via :mod:`ranklens.stats`.

    >>> r = paired_summary([0.62, 0.41, 0.55, 0.70, 0.33], [0.58, 0.35, 0.56, 0.61, 0.30])
    >>> r.n, round(r.mean_diff, 3), r.wins, r.losses
    (5, 0.042, 4, 1)
    """
    from ranklens import stats

    a, b = [float(v) for v in a], [float(v) for v in b]
    n = len(a)
    mean = np_mean([x - y for x, y in zip(a, b)]) if n else math.nan
    wins, ties, losses = win_tie_loss(a, b)
    if n < 2:
        return PairedSummary(n, mean, math.nan, math.nan, math.nan, test, wins, ties, losses)
    result = stats.paired_test(a, b, test)
    ci = stats.confidence_interval(a, b, "t", level=level)
    return PairedSummary(n, mean, float(ci.low), float(ci.high), float(result.p_value), result.test, wins, ties, losses)
