"""The IPS / SNIPS estimator over groups of logged pages, vectorised: the one formulation behind
:func:`ranklens.unbiased.ips_dcg` (one group) and the production windows (every window × segment × system
at once).

Each logged row (one shown item) has its page code, its click, its importance weight
``w = e_target / e_logging`` and its examination ``θ(position)``; each page belongs to one group. Per page
``reward = Σ click·w``, ``num = Σ θ·w``, ``den = Σ θ``; per group of ``n`` pages

    IPS   = mean(reward)
    SNIPS = mean(reward) · mean(den) / mean(num)

with a standard error: sd(reward)/√n for IPS (a mean of page rewards), and for SNIPS (a ratio of three page
means a·b/c) the delta method, sd over pages of the influence ``(b/c)·reward + (a/c)·den − (a·b/c²)·num``
divided by √n. The per-page sums and each page's group are kept, so a bootstrap over pages can reuse them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GroupedIPS", "ips_by_group"]


@dataclass(frozen=True)
class GroupedIPS:
    """Per group: ``value``, ``se`` (NaN below 2 pages), ``pages``; per page: ``reward``, ``num``, ``den``,
    ``group``; whether the values are self-normalised (SNIPS)."""

    value: np.ndarray
    se: np.ndarray
    pages: np.ndarray
    reward: np.ndarray
    num: np.ndarray
    den: np.ndarray
    group: np.ndarray
    self_normalized: bool = False

    def interval(self, z: float) -> tuple[np.ndarray, np.ndarray]:
        """``value ∓ z·se`` per group.

        >>> r = ips_by_group(np.array([0, 1]), np.array([1.0, 3.0]), np.ones(2), np.ones(2))
        >>> [x.tolist() for x in r.interval(1.0)]
        [[1.0], [3.0]]
        """
        return self.value - z * self.se, self.value + z * self.se

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        """The estimate (of a single group) for each row of page multiplicities ``counts`` (replicates × pages):
        a bootstrap replicate is the same estimator with each page counted as often as it was drawn.

        >>> r = ips_by_group(np.array([0, 1]), np.array([1.0, 3.0]), np.ones(2), np.ones(2))
        >>> r.resampled(np.array([[1.0, 1.0], [2.0, 0.0]])).tolist()
        [2.0, 1.0]
        """
        counts = np.asarray(counts, dtype=np.float64)
        value = (counts @ self.reward) / counts.sum(axis=1)
        if self.self_normalized:
            with np.errstate(divide="ignore", invalid="ignore"):
                value = value * (counts @ self.den) / (counts @ self.num)
        return np.asarray(value, dtype=np.float64)


def _group_sd(x: np.ndarray, group: np.ndarray, n: np.ndarray, n_groups: int) -> np.ndarray:
    """The sample sd (ddof = 1) of ``x`` within each group (two passes: mean, then squared deviations)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(group, weights=x, minlength=n_groups) / n
        dev = np.bincount(group, weights=(x - mean[group]) ** 2, minlength=n_groups)
        return np.where(n > 1, np.sqrt(dev / (n - 1)), np.nan)


def ips_by_group(
    page: np.ndarray,
    click: np.ndarray,
    weight: np.ndarray,
    examination: np.ndarray,
    *,
    page_group: np.ndarray | None = None,
    n_groups: int | None = None,
    self_normalize: bool = False,
) -> GroupedIPS:
    """IPS (or SNIPS with ``self_normalize``) per group from rows: ``page`` codes 0…P−1, ``click``, ``weight``
    w and ``examination`` θ per row; ``page_group`` (group code 0…G−1 per page; default: one group).

    Two pages of one group, weights 2 and 0.5 on the clicked rows (θ = 1, 0.5):

    >>> r = ips_by_group(np.array([0, 0, 1]), np.array([1.0, 0.0, 1.0]), np.array([2.0, 1.0, 0.5]),
    ...                  np.array([1.0, 0.5, 1.0]))
    >>> r.value.tolist(), r.pages.tolist(), round(float(r.se[0]), 6)
    ([1.25], [2], 0.75)
    >>> s = ips_by_group(np.array([0, 0, 1]), np.array([1.0, 0.0, 1.0]), np.array([2.0, 1.0, 0.5]),
    ...                  np.array([1.0, 0.5, 1.0]), self_normalize=True)
    >>> round(float(s.value[0]), 6)  # 1.25 · (1.5 + 1) / (2.5 + 0.5)
    1.041667
    """
    page = np.asarray(page, dtype=np.int64)
    n_pages = int(page.max()) + 1 if page.size else 0
    if page_group is None:
        page_group = np.zeros(n_pages, dtype=np.int64)
    page_group = np.asarray(page_group, dtype=np.int64)
    if n_groups is None:
        n_groups = int(page_group.max()) + 1 if page_group.size else 1
    examination = np.asarray(examination, dtype=np.float64)
    weight = np.asarray(weight, dtype=np.float64)
    reward = np.bincount(page, weights=np.asarray(click, dtype=np.float64) * weight, minlength=n_pages)
    num = np.bincount(page, weights=examination * weight, minlength=n_pages)
    den = np.bincount(page, weights=examination, minlength=n_pages)
    n = np.bincount(page_group, minlength=n_groups).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.bincount(page_group, weights=reward, minlength=n_groups) / n
        if not self_normalize:
            value = a
            se = _group_sd(reward, page_group, n, n_groups) / np.sqrt(n)
        else:
            b = np.bincount(page_group, weights=den, minlength=n_groups) / n
            c = np.bincount(page_group, weights=num, minlength=n_groups) / n
            value = a * b / c
            g = page_group
            psi = (b / c)[g] * reward + (a / c)[g] * den - (a * b / c**2)[g] * num  # each page's influence
            se = np.where(np.isfinite(value), _group_sd(psi, g, n, n_groups) / np.sqrt(n), np.nan)
    return GroupedIPS(value=value, se=se, pages=n.astype(np.int64), reward=reward, num=num, den=den, group=page_group,
                      self_normalized=self_normalize)
