"""Score normalisations, per run and query, as ranx 0.3.21 defines them (names as ranx spells them).

Each works on the ``candidates × runs`` matrix of :class:`ranklens.fusion.align.Aligned` (NaN: not
retrieved) for all queries at once. With ``n`` the documents a run retrieved for a query and ``i`` a
document's 0-based rank in it (score descending, ties by document id descending):

- ``min-max``: (s − min) / max(max − min, 1e-9); ``min-max-inverted``: (max − s) / the same
- ``max``: s / max(max, 1e-9)  (so a query whose scores are all negative is divided by 1e-9, as in ranx)
- ``sum``: (s − min) / max(Σs − n·min, 1e-9)
- ``zmuv``: (s − mean) / max(σ, 1e-9), σ the population standard deviation
- ``rank``: 1 − i/n
- ``borda``: 1 − i/c for retrieved documents, 0.5 − (n − 1)/(2c) for the other candidates, c the number of
  documents any run retrieved for the query (so after it every run scores every candidate)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ranklens.errors import InputError

__all__ = ["NORMALISATIONS", "check_norm", "normalise"]

_FLOOR = 1e-9


def _stats(scores: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per query (rows of ``starts``): count, sum, min, max of one run's present scores (a contiguous column)."""
    present = ~np.isnan(scores)
    count = np.add.reduceat(present, starts).astype(np.float64)
    total = np.add.reduceat(np.where(present, scores, 0.0), starts)
    low = np.fmin.reduceat(scores, starts)
    high = np.fmax.reduceat(scores, starts)
    return count, total, low, high


def _spread(per_query: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    return np.repeat(per_query, sizes)


def _min_max(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    low, high = np.fmin.reduceat(scores, starts), np.fmax.reduceat(scores, starts)
    return (scores - _spread(low, sizes)) / _spread(np.maximum(high - low, _FLOOR), sizes)


def _min_max_inverted(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    low, high = np.fmin.reduceat(scores, starts), np.fmax.reduceat(scores, starts)
    return (_spread(high, sizes) - scores) / _spread(np.maximum(high - low, _FLOOR), sizes)


def _max(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    high = np.fmax.reduceat(scores, starts)
    return scores / _spread(np.maximum(high, _FLOOR), sizes)


def _sum(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    count, total, low, _ = _stats(scores, starts)
    return (scores - _spread(low, sizes)) / _spread(np.maximum(total - low * count, _FLOOR), sizes)


def _zmuv(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    count, total, _, _ = _stats(scores, starts)
    mean = _spread(total / np.maximum(count, 1.0), sizes)
    deviation = np.where(np.isnan(scores), 0.0, scores - mean)
    std = np.sqrt(np.add.reduceat(deviation * deviation, starts) / np.maximum(count, 1.0))
    return (scores - mean) / _spread(np.maximum(std, _FLOOR), sizes)


def _rank(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    count = _spread(np.add.reduceat(~np.isnan(scores), starts).astype(np.float64), sizes)
    return 1.0 - (ranks - 1.0) / count


def _borda(scores: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    count = _spread(np.add.reduceat(~np.isnan(scores), starts).astype(np.float64), sizes)
    candidates = np.repeat(sizes, sizes).astype(np.float64)
    unranked = 0.5 - (count - 1.0) / (2.0 * candidates)
    return np.where(np.isnan(scores), unranked, 1.0 - (ranks - 1.0) / candidates)


_Norm = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: normalisation name (as ranx spells it) → function; ``min_max`` and ``min_max_inverted`` are accepted too
NORMALISATIONS: dict[str, _Norm] = {
    "min-max": _min_max,
    "min-max-inverted": _min_max_inverted,
    "max": _max,
    "sum": _sum,
    "zmuv": _zmuv,
    "rank": _rank,
    "borda": _borda,
}


def check_norm(name: str | None) -> str | None:
    """The canonical name of normalisation ``name`` (None or ``none``: no normalisation).

    >>> check_norm("min_max"), check_norm("none")
    ('min-max', None)
    """
    if name is None or name == "none":
        return None
    canonical = name.replace("_", "-")
    if canonical not in NORMALISATIONS:
        from ranklens.errors import did_you_mean

        raise InputError(
            f"unknown normalisation {name!r}{did_you_mean(name, list(NORMALISATIONS))} "
            f"(one of: {', '.join(NORMALISATIONS)}, none)"
        )
    return canonical


def normalise(
    scores: np.ndarray, bounds: np.ndarray, ranks: np.ndarray, name: str | None, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Normalise every run's scores per query; ``bounds`` as :attr:`Aligned.bounds`, ``ranks`` as
    :func:`ranklens.fusion.align.rank_within`. ``out``: where to write them (``scores`` itself to normalise in
    place: one run at a time, each run reading only its own column).

    >>> s = np.array([[3.0], [1.0], [np.nan]])
    >>> normalise(s, np.array([0, 3]), np.array([[1.0], [2.0], [np.nan]]), "min-max").tolist()
    [[1.0], [0.0], [nan]]
    """
    canonical = check_norm(name)
    if canonical is None or scores.shape[0] == 0:
        return scores
    starts = bounds[:-1]
    sizes = np.diff(bounds)
    if out is None:
        out = np.empty(scores.shape, order="F")
    for i in range(scores.shape[1]):  # (one run at a time: contiguous columns, per-query reductions in 1-D)
        out[:, i] = NORMALISATIONS[canonical](
            np.ascontiguousarray(scores[:, i]), starts, sizes, np.ascontiguousarray(ranks[:, i])
        )
    return out
