"""Distribution drift of a window against a reference window: the population stability index (PSI) and
the two-sample Kolmogorov–Smirnov test (:func:`scipy.stats.ks_2samp`).

A window is flagged when PSI > 0.2 (the usual "significant shift" convention: < 0.1 stable, 0.1–0.2
moderate) or the KS p-value < 0.01.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DriftRow", "PSI_FLAG", "KS_P_FLAG", "drift_rows", "psi"]

PSI_FLAG = 0.2
KS_P_FLAG = 0.01
_EPS = 1e-4  # floor of a bin's share, so an empty bin does not make PSI infinite


@dataclass(frozen=True)
class DriftRow:
    """One drift check: ``what`` (``score`` or ``popularity``) of one window/segment/system vs the reference."""

    start: str
    segment: str
    system: str
    what: str
    psi: float
    ks_p: float
    flag: bool
    n: int = 0
    n_reference: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "segment": self.segment, "system": self.system, "what": self.what,
                "psi": self.psi, "ks_p": self.ks_p, "flag": self.flag}


def psi(reference: np.ndarray, sample: np.ndarray, bins: int = 10) -> float:
    """Population stability index Σ (p − q)·ln(p / q) over the reference's quantile bins (at most ``bins``;
    tied quantiles merge), shares floored at 1e-4.

    Two bins split at the reference median 1.5; the sample puts nothing in the lower one (share floored):
    (1e-4 − 0.5)·ln(1e-4/0.5) + (1 − 0.5)·ln(1/0.5) = 4.6043.

    >>> ref = np.array([0.0, 1.0, 2.0, 3.0])
    >>> psi(ref, ref, bins=2), round(psi(ref, np.array([2.0, 3.0, 3.0, 3.0]), bins=2), 4)
    (0.0, 4.6043)
    """
    reference = np.asarray(reference, dtype=np.float64)
    sample = np.asarray(sample, dtype=np.float64)
    if reference.size == 0 or sample.size == 0:
        return float("nan")
    inner = np.unique(np.quantile(reference, np.linspace(0, 1, bins + 1)[1:-1]))
    q = np.bincount(np.searchsorted(inner, reference, side="right"), minlength=inner.size + 1) / reference.size
    p = np.bincount(np.searchsorted(inner, sample, side="right"), minlength=inner.size + 1) / sample.size
    q = np.maximum(q, _EPS)
    p = np.maximum(p, _EPS)
    return float(np.sum((p - q) * np.log(p / q)))


def _ks_p(reference: np.ndarray, sample: np.ndarray) -> float:
    from scipy.stats import ks_2samp

    if reference.size == 0 or sample.size == 0:
        return float("nan")
    with warnings.catch_warnings():
        # with ties scipy's exact p may fail and it falls back to the asymptotic one, saying so: the value is fine
        warnings.filterwarnings("ignore", message="ks_2samp: Exact calculation unsuccessful", category=RuntimeWarning)
        return float(ks_2samp(reference, sample).pvalue)


def drift_rows(frame: Any, window_of: np.ndarray, starts: list[str], reference: int) -> list[DriftRow]:
    """Drift of every window (but the reference) per segment and system, for the score distribution and
    for shown-item popularity (each impression's item's share of all impressions of the log, over every
    window, segment and system: a ranker that starts showing rarer items moves this distribution down).

    ``frame``: impressions (polars, columns ``segment, system, item, score``); ``window_of``: each row's
    window index; ``starts``: the windows' start times; ``reference``: the reference window's index.
    """
    import polars as pl

    frame = frame.select("segment", "system", "item", "score").with_columns(pl.Series("w", window_of))
    frame = frame.with_columns((pl.len().over("item") / pl.len()).alias("popularity"))
    out: list[DriftRow] = []
    for (segment, system), group in sorted(frame.group_by(["segment", "system"]), key=lambda kv: tuple(map(str, kv[0]))):
        w = group["w"].to_numpy()
        ref_rows = w == reference
        for what in ("score", "popularity"):
            values = group[what].to_numpy().astype(np.float64)
            ref = values[ref_rows]
            for win in sorted(set(w.tolist()) - {reference}):
                sample = values[w == win]
                p, ks = psi(ref, sample), _ks_p(ref, sample)
                flag = bool((p == p and p > PSI_FLAG) or (ks == ks and ks < KS_P_FLAG))
                out.append(DriftRow(starts[win], str(segment), str(system), what, p, ks, flag, int(sample.size), int(ref.size)))
    return out
