r"""Agreement between two raters over the same items: the confusion matrix on a label scale, Cohen's kappa
(unweighted, linear, quadratic) with a seeded bootstrap interval, and Krippendorff's alpha.

Labels are placed on a *scale*: the sorted distinct labels of both raters, or the ``scale`` given. Kappa
weights are functions of positions on that scale (as ``sklearn.metrics.cohen_kappa_score``): with
:math:`V` categories, linear :math:`w_{ij} = |i-j|` and quadratic :math:`w_{ij} = (i-j)^2`, unweighted
:math:`w_{ij} = [i \ne j]`. Then

.. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}}, \qquad
          E_{ij} = \frac{O_{i\cdot}\, O_{\cdot j}}{n}

for the observed confusion counts :math:`O` over :math:`n` items (Cohen 1968).

Fail closed: no item, a label off the given scale, or a statistic whose chance disagreement is zero (both
raters use one and the same label) is an :class:`~ranklens.errors.InputError`, never NaN.

>>> human = [0, 1, 2, 3, 2, 1, 0, 3]
>>> judge = [0, 1, 2, 2, 2, 0, 0, 3]
>>> round(cohen_kappa(human, judge, weights="quadratic"), 4)
0.9
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import Seed, check_level, check_samples, rng, rows_per_batch
from ranklens.stats.types import Interval

__all__ = [
    "ALPHA_LEVELS",
    "KAPPA_WEIGHTS",
    "Confusion",
    "cohen_kappa",
    "confusion_matrix",
    "kappa_interval",
    "krippendorff_alpha",
]

#: the kappa weightings: ``None`` (unweighted), ``"linear"``, ``"quadratic"``
KAPPA_WEIGHTS = (None, "linear", "quadratic")
#: the levels of measurement (difference functions) of Krippendorff's alpha
ALPHA_LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class Confusion:
    """Counts of (rater A label, rater B label) over a label scale.

    Attributes:
        scale: the labels, in order; row ``i`` and column ``j`` are ``scale[i]`` and ``scale[j]``.
        counts: ``counts[i, j]`` items labelled ``scale[i]`` by A and ``scale[j]`` by B (int64).
    """

    scale: tuple[float, ...]
    counts: np.ndarray

    @property
    def n(self) -> int:
        """The number of items."""
        return int(self.counts.sum())

    def to_dict(self) -> dict[str, object]:
        """``{"scale": [...], "counts": [[...], ...]}`` (JSON-ready; integer labels stay integers)."""
        return {"scale": [_plain(v) for v in self.scale], "counts": self.counts.tolist()}


def _plain(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


def _labels(values: ArrayLike, role: str) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise InputError(f"{role} labels must be 1-D (one label per item); got shape {x.shape}")
    if not np.isfinite(x).all():
        raise InputError(f"{role} labels must be finite numbers (found NaN or infinity)")
    return x


def _codes(a: ArrayLike, b: ArrayLike, scale: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of ``a`` and ``b`` on the scale, and the scale."""
    x, y = _labels(a, "rater A"), _labels(b, "rater B")
    if x.shape != y.shape:
        raise InputError(f"the two raters must label the same items; got {x.size} and {y.size} labels")
    if x.size == 0:
        raise InputError("agreement over no item: the two raters share no labelled item")
    if scale is None:
        s = np.unique(np.concatenate([x, y]))
    else:
        s = np.asarray(scale, dtype=np.float64)
        if s.ndim != 1 or s.size == 0 or np.unique(s).size != s.size:
            raise InputError(f"the label scale must be distinct labels; got {list(scale)!r}")
        s = np.sort(s)
    cx, cy = np.searchsorted(s, x), np.searchsorted(s, y)
    for c, v, role in ((cx, x, "rater A"), (cy, y, "rater B")):
        off = (c >= s.size) | (s[np.minimum(c, s.size - 1)] != v)
        if off.any():
            raise InputError(f"{role} gives label {_plain(v[off][0])} which is not on the scale {[_plain(t) for t in s]}")
    return cx.astype(np.int64), cy.astype(np.int64), s


def confusion_matrix(a: ArrayLike, b: ArrayLike, *, scale: Sequence[float] | None = None) -> Confusion:
    """The confusion matrix of rater A (rows) against rater B (columns) over ``scale`` (default: the
    sorted labels either rater uses).

    >>> c = confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1], scale=[0, 1, 2, 3])
    >>> c.scale, c.counts.tolist()
    ((0.0, 1.0, 2.0, 3.0), [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    """
    cx, cy, s = _codes(a, b, scale)
    v = s.size
    counts = np.bincount(cx * v + cy, minlength=v * v).reshape(v, v).astype(np.int64)
    return Confusion(tuple(float(t) for t in s), counts)


def _weights(v: int, weights: str | None) -> np.ndarray:
    if weights not in KAPPA_WEIGHTS:
        raise InputError(f"unknown kappa weights {weights!r}; expected None, 'linear' or 'quadratic'")
    i = np.arange(v, dtype=np.float64)
    d = np.abs(i[:, None] - i[None, :])
    if weights is None:
        return (d > 0).astype(np.float64)
    return d if weights == "linear" else d * d


def _kappa_from_counts(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Kappa of every confusion matrix in ``counts`` (shape ``(..., V, V)``); NaN where undefined."""
    counts = counts.astype(np.float64)
    n = counts.sum(axis=(-2, -1))
    expected = counts.sum(axis=-1)[..., :, None] * counts.sum(axis=-2)[..., None, :] / n[..., None, None]
    num = (w * counts).sum(axis=(-2, -1))
    den = (w * expected).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1.0 - num / np.where(den > 0, den, 1.0), np.nan)


def cohen_kappa(
    a: ArrayLike, b: ArrayLike, *, weights: str | None = None, scale: Sequence[float] | None = None
) -> float:
    """Cohen's kappa of two raters' labels of the same items; ``weights`` ``None``, ``"linear"`` or
    ``"quadratic"`` (positions on ``scale``; module docstring for the formula).

    1 is perfect agreement, 0 what chance gives with these marginals, below 0 worse than chance.

    Raises:
        InputError: no item, or no disagreement is expected by chance (both raters use one label only).

    >>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    """
    conf = confusion_matrix(a, b, scale=scale)
    k = float(_kappa_from_counts(conf.counts, _weights(len(conf.scale), weights)))
    if np.isnan(k):
        raise InputError(
            "kappa is undefined: chance disagreement is zero (both raters give every item the same single label)"
        )
    return k


def kappa_interval(
    a: ArrayLike,
    b: ArrayLike,
    *,
    weights: str | None = None,
    scale: Sequence[float] | None = None,
    level: float = 0.95,
    samples: int = 2000,
    seed: Seed = 0,
) -> Interval:
    """Percentile bootstrap interval of Cohen's kappa: resample the items with replacement ``samples``
    times (``numpy.random.default_rng(seed)``) and take the ``(1 - level) / 2`` quantiles of the kappas.
    Resamples whose kappa is undefined (one label only) are left out.

    >>> iv = kappa_interval([0, 1, 2, 3, 2, 1, 0, 3, 1, 2], [0, 1, 2, 2, 2, 0, 0, 3, 1, 1], weights="linear")
    >>> iv.low < cohen_kappa([0, 1, 2, 3, 2, 1, 0, 3, 1, 2], [0, 1, 2, 2, 2, 0, 0, 3, 1, 1], weights="linear") < iv.high
    True
    """
    level, samples = check_level(level), check_samples(samples)
    cx, cy, s = _codes(a, b, scale)
    v, n = s.size, cx.size
    w = _weights(v, weights)
    cells = cx * v + cy
    gen = rng(seed)
    out = np.empty(samples)
    step = rows_per_batch(n)
    for start in range(0, samples, step):
        rows = min(step, samples - start)
        idx = gen.integers(0, n, size=(rows, n))
        flat = (np.arange(rows)[:, None] * (v * v) + cells[idx]).ravel()
        counts = np.bincount(flat, minlength=rows * v * v).reshape(rows, v, v)
        out[start : start + rows] = _kappa_from_counts(counts, w)
    good = out[~np.isnan(out)]
    if good.size == 0:
        raise InputError("kappa is undefined on every bootstrap resample (the raters use one label only)")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(good, [tail, 1.0 - tail])
    return Interval(float(low), float(high), level, "bootstrap")


def _coincidences(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coincidence matrix over the sorted observed values, and those values (Krippendorff 2011)."""
    pairable = (~np.isnan(ratings)).sum(axis=0) >= 2
    r = ratings[:, pairable]
    present = ~np.isnan(r)
    if not present.any():
        raise InputError("Krippendorff's alpha over no pairable item: no item has two or more ratings")
    values = np.unique(r[present])
    m = present.sum(axis=0).astype(np.float64)  # ratings per item
    u = np.broadcast_to(np.arange(r.shape[1]), r.shape)[present]
    c = np.searchsorted(values, r[present])
    per_item = np.zeros((r.shape[1], values.size))
    np.add.at(per_item, (u, c), 1.0)
    scaled = per_item / (m - 1.0)[:, None]
    o = per_item.T @ scaled
    o[np.diag_indices(values.size)] -= scaled.sum(axis=0)
    return o, values


def _delta2(level: str, values: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    if level == "nominal":
        return (values[:, None] != values[None, :]).astype(np.float64)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(marginals)])
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        between = cum[hi + 1] - cum[lo]  # sum of n_g for g from c to k inclusive
        return (between - (marginals[:, None] + marginals[None, :]) / 2.0) ** 2
    raise InputError(f"unknown level of measurement {level!r}; expected one of {', '.join(ALPHA_LEVELS)}")


def krippendorff_alpha(ratings: ArrayLike, *, level: str = "ordinal") -> float:
    r"""Krippendorff's alpha of a reliability matrix: one row per rater, one column per item, NaN where a
    rater did not rate an item (two raters: ``[labels_a, labels_b]``).

    From the coincidence matrix :math:`o_{ck} = \sum_u \frac{\#\{(i,j): i \ne j,\ v_{iu}=c,\ v_{ju}=k\}}{m_u - 1}`
    over the items :math:`u` with :math:`m_u \ge 2` ratings, :math:`n_c = \sum_k o_{ck}`, :math:`n = \sum_c n_c`:

    .. math:: \alpha = 1 - (n - 1)\,\frac{\sum_{c,k} o_{ck}\,\delta^2_{ck}}{\sum_{c,k} n_c n_k\,\delta^2_{ck}}

    with :math:`\delta^2_{ck}` = :math:`[c \ne k]` (nominal), :math:`(c-k)^2` (interval), or
    :math:`\bigl(\sum_{g=c}^{k} n_g - \frac{n_c + n_k}{2}\bigr)^2` (ordinal, over the values in order).

    Raises:
        InputError: no item has two ratings, or only one value is used (no expected disagreement).

    >>> round(krippendorff_alpha([[0, 1, 2, 3, 2, 1], [0, 1, 2, 2, 2, 0]], level="interval"), 4)
    0.8281
    """
    r = np.asarray(ratings, dtype=np.float64)
    if r.ndim != 2:
        raise InputError(f"ratings must be a 2-D matrix (raters × items); got shape {r.shape}")
    if np.isinf(r).any():
        raise InputError("ratings must be finite numbers or NaN for 'not rated'")
    o, values = _coincidences(r)
    marg = o.sum(axis=1)
    n = marg.sum()
    d2 = _delta2(level, values, marg)
    expected = float((np.outer(marg, marg) * d2).sum())
    if expected <= 0:
        raise InputError("Krippendorff's alpha is undefined: every rating has the same value (no expected disagreement)")
    return float(1.0 - (n - 1.0) * float((o * d2).sum()) / expected)
