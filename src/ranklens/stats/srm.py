"""Sample-ratio mismatch: a χ² goodness-of-fit test of the users counted per arm against the planned split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ranklens.errors import InputError
from ranklens.stats._common import scipy_special

__all__ = ["SRM_ALPHA", "SrmResult", "srm_test"]

#: Below this p-value a split is called a mismatch (Fabijan et al., KDD 2019, "Diagnosing sample ratio
#: mismatch in online controlled experiments", use 0.0005; the common convention is 0.001).
SRM_ALPHA = 0.001


@dataclass(frozen=True)
class SrmResult:
    """The counts per arm, the expected shares, χ², its degrees of freedom and p; ``mismatch`` is
    ``p < SRM_ALPHA``."""

    counts: tuple[int, ...]
    expected: tuple[float, ...]
    chi2: float
    df: int
    p: float
    mismatch: bool

    def message(self, arms: Sequence[str]) -> str:
        """The warning line, naming the arms and their counts."""
        observed = ", ".join(f"{a} {c}" for a, c in zip(arms, self.counts))
        planned = ":".join(f"{e:g}" for e in self.expected)
        return (
            f"SAMPLE RATIO MISMATCH: {observed} users against a planned {planned} split (χ² = {self.chi2:.2f}, "
            f"p = {self.p:.2g} < {SRM_ALPHA}); the assignment or the logging is broken and the comparison below "
            "is not trustworthy"
        )


def srm_test(counts: Sequence[int], expected: Sequence[float]) -> SrmResult:
    r"""χ² test of ``counts`` (users per arm) against the planned shares ``expected`` (normalised to 1).

    .. math:: \chi^2 = \sum_i \frac{(O_i - E_i)^2}{E_i},\quad E_i = N\,\pi_i,\quad p = P(\chi^2_{k-1} \ge \chi^2)

    (Pearson 1900; Kohavi, Tang & Xu 2020, *Trustworthy Online Controlled Experiments*, ch. 21.)

    >>> r = srm_test([10_400, 9_600], [0.5, 0.5])
    >>> round(r.chi2, 1), r.p < 1e-6, r.mismatch
    (32.0, True, True)
    >>> srm_test([5_020, 4_980], [0.5, 0.5]).mismatch
    False
    """
    obs = np.asarray(counts, dtype=np.float64)
    share = np.asarray(expected, dtype=np.float64)
    if obs.ndim != 1 or obs.size < 2 or share.shape != obs.shape:
        raise InputError(f"SRM needs a count and a planned share per arm; got {len(counts)} counts and {len(expected)} shares")
    if np.any(share <= 0) or not np.isfinite(share).all():
        raise InputError(f"planned shares must be positive; got {list(expected)}")
    if np.any(obs < 0) or obs.sum() == 0:
        raise InputError(f"SRM needs non-negative user counts, not all zero; got {list(counts)}")
    share = share / share.sum()
    exp = obs.sum() * share
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    df = obs.size - 1
    p = float(scipy_special().chdtrc(df, chi2))  # = scipy.stats.chi2.sf(chi2, df)
    return SrmResult(tuple(int(c) for c in counts), tuple(float(s) for s in share), chi2, df, p, p < SRM_ALPHA)
