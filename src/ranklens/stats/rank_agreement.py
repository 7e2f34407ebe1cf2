r"""How alike two orderings of the same systems are: Kendall's τ-b and τ_AP (Yilmaz, Aslam & Robertson 2008).

Each ordering is given as one score per system (higher is better), aligned on the same systems: e.g. the
mean nDCG@10 of every run under human labels and under judge labels.

>>> human = [0.41, 0.38, 0.35, 0.30]
>>> judge = [0.44, 0.36, 0.37, 0.31]
>>> kendall_tau(human, judge), round(tau_ap(human, judge), 4)
(0.6666666666666666, 0.6667)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ranklens.errors import InputError

__all__ = ["kendall_tau", "tau_ap"]


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise InputError(f"two orderings need one score per system each, aligned; got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise InputError(f"rank agreement needs at least two systems; got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("system scores must be finite numbers (found NaN or infinity)")
    return x, y


def kendall_tau(a: ArrayLike, b: ArrayLike) -> float:
    r"""Kendall's τ-b between the orderings by scores ``a`` and ``b``:

    .. math:: \tau_b = \frac{C - D}{\sqrt{(P - T_a)(P - T_b)}}

    over the :math:`P = n(n-1)/2` pairs of systems, :math:`C`/:math:`D` concordant/discordant pairs and
    :math:`T_a`/:math:`T_b` pairs tied in ``a``/``b`` (Kendall 1945; ``scipy.stats.kendalltau``'s default).
    Symmetric; 1 for the same ordering, −1 for the reversed one.

    Raises:
        InputError: fewer than two systems, or every system tied in one ordering (τ undefined).

    >>> kendall_tau([3, 2, 1], [1, 2, 3])
    -1.0
    """
    x, y = _pair(a, b)
    iu = np.triu_indices(x.size, k=1)
    sx = np.sign(x[:, None] - x[None, :])[iu]
    sy = np.sign(y[:, None] - y[None, :])[iu]
    den = float(np.count_nonzero(sx)) * float(np.count_nonzero(sy))
    if den == 0:
        raise InputError("Kendall's tau is undefined: every system has the same score in one of the orderings")
    return float((sx * sy).sum() / np.sqrt(den))


def tau_ap(reference: ArrayLike, candidate: ArrayLike) -> float:
    r"""τ_AP, the AP rank correlation of the ``candidate`` ordering against the ``reference`` one
    (Yilmaz, Aslam & Robertson, SIGIR 2008): like τ, but a swap near the top costs more.

    Order the :math:`N` systems by ``candidate`` (best first); for the system at rank :math:`i \ge 2`,
    :math:`C(i)` counts the systems above it in ``candidate`` that ``reference`` also puts above it:

    .. math:: \tau_{AP} = \frac{2}{N - 1} \sum_{i=2}^{N} \frac{C(i)}{i - 1} - 1

    Not symmetric: ``tau_ap(human, judge)`` asks how well the judge's ordering recovers the human one,
    weighting its top. 1 for the same ordering, −1 for the reversed one.

    Raises:
        InputError: fewer than two systems, or a tie in either ordering (τ_AP is defined on strict orders).

    >>> round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4), round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)
    (0.7778, 0.3333)
    """
    ref, cand = _pair(reference, candidate)
    for v, role in ((ref, "reference"), (cand, "candidate")):
        if np.unique(v).size != v.size:
            raise InputError(f"tau_AP needs a strict ordering: two systems have the same score in the {role} ordering")
    order = np.argsort(-cand, kind="stable")
    r = ref[order]  # reference scores in candidate order, best first
    above = np.tril(r[None, :] > r[:, None], k=-1)  # above[i, j]: j ranked above i by both
    n = r.size
    correct = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (correct / np.arange(1, n)).sum() - 1.0)
