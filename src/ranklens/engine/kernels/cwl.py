"""Kernels of the C/W/L measures (SDCG, NERR8–11, INST, INSQ, BPM; :mod:`ranklens.measures.cwl`).

Every measure is Σ_i W_i·g_i with W_i = Π_{j<i} C_j / Σ_r Π_{j<r} C_j over ``depth`` ranks (Moffat et al.;
Azzopardi, Thomas & Moffat, SIGIR 2019, cwl_eval). The kernel lays the gains out as a dense (queries ×
depth) matrix, padded with 0 past the last retrieved document, in blocks of queries (bounded memory), and
each measure supplies its continuation matrix C from the gains: one numpy pass per block, no loop per query.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ranklens.engine.ranked import RankedLists
from ranklens.measures.base import Measure

__all__ = ["CWL_KERNELS", "cwl_gains", "expected_utility"]

_BLOCK_CELLS = 1 << 21  # gains per block: 2M doubles = 16 MB


def cwl_gains(lists: RankedLists, m: Measure) -> np.ndarray:
    """Gain of every retrieved row: (clip(label, min_rel, max_rel) − min_rel)/(max_rel − min_rel); unjudged 0."""
    low = float(m.get("min_rel"))
    top = float(int(m.get("max_rel")) or lists.max_label())
    if top <= low:
        return np.zeros(lists.labels.shape[0])
    lab = lists.labels.astype(np.float64)  # (unjudged markers are < 0: clipped to min_rel, gain 0)
    return (np.clip(lab, low, top) - low) / (top - low)


def expected_utility(gains: np.ndarray, cont: np.ndarray) -> np.ndarray:
    """Σ_i W_i·g_i per row of the (queries × depth) ``gains`` given the continuation matrix ``cont``.

    W_1 = 1/Σ_r Π_{j<r} C_j and W_i = W_1·Π_{j<i} C_j: the last column of ``cont`` is never read.

    >>> g = np.array([[1.0, 0.0, 0.5]])
    >>> expected_utility(g, np.ones_like(g)).tolist()  # C = 1: the mean gain over the depth
    [0.5]
    >>> expected_utility(g, np.array([[0.5, 0.5, 0.5]])).tolist()  # W ∝ 1, 0.5, 0.25: (1 + 0.125)/1.75
    [0.6428571428571429]
    """
    reach = np.ones_like(gains)
    np.cumprod(cont[:, :-1], axis=1, out=reach[:, 1:])
    return (reach * gains).sum(axis=1) / reach.sum(axis=1)


Continuation = Callable[[np.ndarray, np.ndarray, Measure], np.ndarray]
"""(gains block, ranks 1..depth, measure) → the continuation matrix C of the block"""


def _cwl(cont: Continuation) -> Callable[[RankedLists, Measure], np.ndarray]:
    def kernel(lists: RankedLists, m: Measure) -> np.ndarray:
        depth = int(m.get("depth"))
        g = cwl_gains(lists, m)
        inside = lists.rank0 < depth
        rows, cols, g = lists.row_query[inside], lists.rank0[inside], g[inside]
        rank = np.arange(1, depth + 1, dtype=np.float64)
        out = np.zeros(lists.num_queries)
        block = max(1, _BLOCK_CELLS // depth)
        for start in range(0, lists.num_queries, block):  # blocks of queries, each vectorised
            stop = min(start + block, lists.num_queries)
            lo, hi = np.searchsorted(rows, [start, stop])
            dense = np.zeros((stop - start, depth))
            dense[rows[lo:hi] - start, cols[lo:hi]] = g[lo:hi]
            out[start:stop] = expected_utility(dense, cont(dense, rank, m))
        return out

    kernel.__doc__ = cont.__doc__
    return kernel


def _before_k(rank: np.ndarray, m: Measure) -> np.ndarray:
    return (rank < int(m.cutoff or 0)).astype(np.float64)


def _sdcg(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """SDCG@k: C_i = log2(i+1)/log2(i+2) for i < k, else 0 (W_i ∝ 1/log2(i+1) within the top k)."""
    c = np.log2(rank + 1.0) / np.log2(rank + 2.0) * _before_k(rank, m)
    return np.broadcast_to(c, g.shape)


def _nerr8(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """NERR8@k: C_i = 1 − g_i for i < k, else 0."""
    return (1.0 - g) * _before_k(rank, m)


def _nerr9(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """NERR9@k: C_i = i/(i+1)·(1 − g_i) for i < k, else 0."""
    return (1.0 - g) * (rank / (rank + 1.0) * _before_k(rank, m))


def _nerr10(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """NERR10: C_i = p·(1 − g_i)."""
    return float(m.get("p")) * (1.0 - g)


def _insq_c(rank: np.ndarray, t: float) -> np.ndarray:
    return ((rank + 2.0 * t - 1.0) / (rank + 2.0 * t)) ** 2.0


def _nerr11(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """NERR11: C_i = ((i + 2T − 1)/(i + 2T))²·(1 − g_i)."""
    return _insq_c(rank, float(m.get("T"))) * (1.0 - g)


def _insq(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """INSQ: C_i = ((i + 2T − 1)/(i + 2T))²."""
    return np.broadcast_to(_insq_c(rank, float(m.get("T"))), g.shape)


def _inst(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """INST: C_i = ((i + T + T_i − 1)/(i + T + T_i))², T_i = T − Σ_{j≤i} g_j."""
    t = float(m.get("T"))
    base = rank + t + (t - np.cumsum(g, axis=1))
    return ((base - 1.0) / base) ** 2.0


def _bpm(g: np.ndarray, rank: np.ndarray, m: Measure) -> np.ndarray:
    """BPM@k (static): C_i = 1 while Σ_{j≤i} g_j < T and i < k, else 0."""
    return (np.cumsum(g, axis=1) < float(m.get("T"))) * _before_k(rank, m)


CWL_KERNELS = {
    "SDCG": _cwl(_sdcg),
    "NERR8": _cwl(_nerr8),
    "NERR9": _cwl(_nerr9),
    "NERR10": _cwl(_nerr10),
    "NERR11": _cwl(_nerr11),
    "INST": _cwl(_inst),
    "INSQ": _cwl(_insq),
    "BPM": _cwl(_bpm),
}
