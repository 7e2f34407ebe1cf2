"""All-pairs comparison of many systems over the same topics: blocked two-way ANOVA, Tukey HSD on it, and
Sakai/Carterette's randomised Tukey HSD. Never a one-way Tukey over per-query scores (METRICS.md §8.3)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError
from ranklens.stats._common import TIE_RTOL, Seed, check_samples, rng, rows_per_batch, scipy_stats

__all__ = ["AnovaTable", "PairResult", "TukeyResult", "blocked_anova", "randomised_tukey_hsd", "tukey_hsd"]


@dataclass(frozen=True)
class AnovaTable:
    """Two-way ANOVA without replication (topics as blocks × systems).

    ``ss_*`` are sums of squares, ``df_*`` degrees of freedom; ``ms_error`` = ``ss_error / df_error``;
    ``f_systems`` and ``p_systems`` test "all systems have the same mean".
    """

    ss_systems: float
    ss_topics: float
    ss_error: float
    ss_total: float
    df_systems: int
    df_topics: int
    df_error: int
    ms_error: float
    f_systems: float
    p_systems: float


@dataclass(frozen=True)
class PairResult:
    """One pair (i, j) of systems: ``diff`` = mean_i − mean_j, the statistic (q, or the observed range for
    the randomised test) and the family-wise p-value."""

    i: int
    j: int
    diff: float
    statistic: float
    p_value: float


@dataclass(frozen=True)
class TukeyResult:
    """All pairwise comparisons of m systems; p-values already control the family-wise error rate."""

    test: str
    means: tuple[float, ...]
    n_topics: int
    pairs: tuple[PairResult, ...]
    anova: AnovaTable
    samples: int | None = None

    def pair(self, i: int, j: int) -> PairResult:
        """The result for systems ``i`` and ``j`` (either order; ``diff`` is mean_i − mean_j)."""
        for p in self.pairs:
            if (p.i, p.j) == (i, j):
                return p
            if (p.j, p.i) == (i, j):
                return PairResult(i, j, -p.diff, p.statistic, p.p_value)
        raise InputError(f"no pair ({i}, {j}) among {len(self.means)} systems")

    def p_matrix(self) -> np.ndarray:
        """The symmetric m × m matrix of p-values (1 on the diagonal)."""
        m = len(self.means)
        out = np.ones((m, m))
        for p in self.pairs:
            out[p.i, p.j] = out[p.j, p.i] = p.p_value
        return out


def _matrix(scores: ArrayLike) -> np.ndarray:
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        raise InputError(
            f"expected a topics × systems matrix with at least 2 topics and 2 systems; got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise InputError("scores must be finite numbers (found NaN or infinity)")
    return x


def blocked_anova(scores: ArrayLike) -> AnovaTable:
    r"""Two-way ANOVA without replication of a topics × systems score matrix (n topics, m systems).

    .. math::
        SS_{sys} = n\sum_i(\bar X_{\cdot i} - \bar X)^2,\quad SS_{topic} = m\sum_q(\bar X_{q\cdot} - \bar X)^2,\\
        SS_{err} = SS_{total} - SS_{sys} - SS_{topic},\quad MSE = SS_{err}/((m-1)(n-1))

    (Montgomery, *Design and Analysis of Experiments*, §4.1 randomised complete block design;
    METRICS.md §8.2–8.3.)

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> c = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]
    >>> t = blocked_anova(np.column_stack([a, b, c]))
    >>> round(t.ss_systems, 6), round(t.ss_topics, 6), round(t.ss_error, 6), t.df_error
    (0.00854, 0.329347, 0.010593, 18)
    """
    x = _matrix(scores)
    n, m = x.shape
    grand = float(x.mean())
    ss_sys = float(n * ((x.mean(axis=0) - grand) ** 2).sum())
    ss_topic = float(m * ((x.mean(axis=1) - grand) ** 2).sum())
    ss_total = float(((x - grand) ** 2).sum())
    resid = x - x.mean(axis=0, keepdims=True) - x.mean(axis=1, keepdims=True) + grand
    ss_err = float((resid**2).sum())
    df_sys, df_topic, df_err = m - 1, n - 1, (m - 1) * (n - 1)
    mse = ss_err / df_err
    if mse <= TIE_RTOL**2 * max(1.0, ss_total):
        mse = 0.0
    if mse > 0:
        f = (ss_sys / df_sys) / mse
        p = float(scipy_stats().f.sf(f, df_sys, df_err))
    else:
        f, p = (math.inf, 0.0) if ss_sys > 0 else (0.0, 1.0)
    return AnovaTable(ss_sys, ss_topic, ss_err, ss_total, df_sys, df_topic, df_err, mse, f, p)


def tukey_hsd(scores: ArrayLike) -> TukeyResult:
    r"""Tukey's HSD for all pairs of m systems on the randomised block design (topics as blocks).

    .. math:: q_{ij} = |\bar X_i - \bar X_j| / \sqrt{MSE/n}, \qquad p_{ij} = 1 - F_{SR}(q_{ij};\, m,\, (m-1)(n-1))

    with MSE from :func:`blocked_anova` and :math:`F_{SR}` the studentized range distribution
    (``scipy.stats.studentized_range``). Tukey 1949; in IR: Carterette, ACM TOIS 30(1), 2012;
    METRICS.md §8.2. Per-topic scores vary far more between topics than between systems, so the topic
    effect must be removed: a one-way Tukey (``scipy.stats.tukey_hsd``) ignores it.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> c = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]
    >>> ab = tukey_hsd(np.column_stack([a, b, c])).pair(0, 1)
    >>> round(ab.statistic, 6), round(ab.p_value, 6)
    (5.344459, 0.003736)
    """
    x = _matrix(scores)
    n, m = x.shape
    table = blocked_anova(x)
    means = x.mean(axis=0)
    tol = TIE_RTOL * max(1.0, float(np.abs(x).max()))
    dist = scipy_stats().studentized_range
    pairs = []
    for i, j in itertools.combinations(range(m), 2):
        diff = float(means[i] - means[j])
        if abs(diff) <= tol:
            q, p = 0.0, 1.0
        elif table.ms_error == 0.0:
            q, p = math.inf, 0.0
        else:
            q = abs(diff) / math.sqrt(table.ms_error / n)
            p = min(1.0, float(dist.sf(q, m, table.df_error)))
        pairs.append(PairResult(i, j, diff, q, p))
    return TukeyResult("tukey", tuple(means.tolist()), n, tuple(pairs), table)


def randomised_tukey_hsd(scores: ArrayLike, *, samples: int = 10_000, seed: Seed = 0) -> TukeyResult:
    r"""Randomised Tukey HSD (Carterette, ACM TOIS 30(1), 2012; Sakai, *Laboratory Experiments in IR*, 2018).

    For each of B = ``samples`` trials, permute the m scores independently *within each topic*, and record
    the range :math:`\max_i \bar X^*_i - \min_i \bar X^*_i` of the permuted system means; then
    :math:`\hat p_{ij} = (\#\{\text{range} \ge |\bar X_i - \bar X_j| - \epsilon\} + 1)/(B + 1)`.
    The trials are batches of within-topic permutations (``Generator.permuted`` along the system
    axis, from ``numpy.random.default_rng(seed)``), reproducible for a given seed. The statistic of a pair is its
    observed difference.

    >>> a = [0.62, 0.41, 0.55, 0.70, 0.33, 0.48, 0.59, 0.44, 0.52, 0.66]
    >>> b = [0.58, 0.35, 0.56, 0.61, 0.30, 0.40, 0.57, 0.45, 0.47, 0.60]
    >>> c = [0.60, 0.38, 0.50, 0.66, 0.35, 0.47, 0.55, 0.40, 0.50, 0.64]
    >>> r = randomised_tukey_hsd(np.column_stack([a, b, c]), samples=2000, seed=3)
    >>> r.pair(0, 1).p_value < 0.05 < r.pair(1, 2).p_value
    True
    """
    samples = check_samples(samples)
    x = _matrix(scores)
    n, m = x.shape
    means = x.mean(axis=0)
    tol = TIE_RTOL * max(1.0, float(np.abs(x).max()))
    combos = list(itertools.combinations(range(m), 2))
    observed = np.array([abs(means[i] - means[j]) for i, j in combos])
    counts = np.zeros(len(combos), dtype=np.int64)
    for ranges in _permuted_ranges(x, samples, rng(seed)):
        counts += (ranges[:, None] >= observed[None, :] - tol).sum(axis=0)
    pairs = []
    for (i, j), obs, count in zip(combos, observed, counts.tolist()):
        diff = float(means[i] - means[j])
        p = 1.0 if obs <= tol else (count + 1) / (samples + 1)
        pairs.append(PairResult(i, j, diff, float(obs), p))
    return TukeyResult("randomised-tukey", tuple(means.tolist()), n, tuple(pairs), blocked_anova(x), samples)


def _permuted_ranges(x: np.ndarray, samples: int, generator: np.random.Generator) -> Iterator[np.ndarray]:
    """max − min of the system means after permuting each topic's row, for ``samples`` trials, in batches."""
    n, m = x.shape
    step = rows_per_batch(n * m)
    for start in range(0, samples, step):
        rows = min(step, samples - start)
        means = generator.permuted(np.broadcast_to(x, (rows, n, m)), axis=2).mean(axis=1)
        yield means.max(axis=1) - means.min(axis=1)
