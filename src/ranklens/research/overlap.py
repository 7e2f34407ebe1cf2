"""How two rankings of one query agree: tie-aware rank-biased overlap and Kendall's τ at a depth.

RBO (Webber, Moffat & Zobel, TOIS 2010) is the extrapolated form ``RBO_ext`` at depth ``k``:
``(1 − p)/p · Σ_{d ≤ k} (X_d/d)·p^d + (X_k/k)·p^k``, ``X_d`` the overlap of the two prefixes of length d.
With tied scores it is the ``a`` variant of Corsi & Urbano (SIGIR 2024): a document in a tie group that
spans ranks t…b counts (d − t + 1)/(b − t + 1) in the prefix of length d (the probability that a uniform
ordering of the group puts it there), so ``X_d`` and the whole RBO are the averages over every ordering of
the ties of the two rankings (RBO is linear in the ``X_d``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["kendall_tau", "prefix_presence", "rbo"]


def prefix_presence(scores: np.ndarray, depth: int) -> np.ndarray:
    """Per document (rows, in rank order) and prefix length d = 1…depth (columns): the probability that the
    document is in the prefix when its tie group is ordered uniformly at random.

    >>> prefix_presence(np.array([3.0, 2.0, 2.0]), 3).tolist()
    [[1.0, 1.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.5, 1.0]]
    """
    n = scores.shape[0]
    out = np.zeros((n, depth))
    if n == 0 or depth == 0:
        return out
    new = np.ones(n, dtype=bool)
    new[1:] = scores[1:] != scores[:-1]
    starts = np.flatnonzero(new)
    ends = np.concatenate((starts[1:], [n])) - 1  # last 0-based rank of each group
    group = np.cumsum(new) - 1
    top, bottom = starts[group].astype(np.float64), ends[group].astype(np.float64)
    d = np.arange(1, depth + 1, dtype=np.float64)[None, :]  # prefix length
    inside = (d - top[:, None]) / (bottom - top + 1.0)[:, None]
    return np.clip(inside, 0.0, 1.0)


def rbo(docs_a: Sequence[object], scores_a: np.ndarray, docs_b: Sequence[object], scores_b: np.ndarray,
        k: int, p: float = 0.9) -> float:
    """Tie-aware extrapolated RBO of two rankings (documents in rank order, scores descending) at depth
    ``min(k, shorter ranking)``; 1.0 for two empty rankings.

    >>> # X = 1, 1, 3 at d = 1, 2, 3: 0.1/0.9 · (0.9 + 0.5·0.81 + 0.729) + 0.729
    >>> round(rbo(["a", "b", "c"], np.array([3.0, 2, 1]), ["a", "c", "b"], np.array([3.0, 2, 1]), 3), 6)
    0.955
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"rbo: p must be in (0, 1); got {p}")
    depth = min(k, len(docs_a), len(docs_b))
    if depth == 0:
        return 1.0 if len(docs_a) == len(docs_b) == 0 else 0.0
    pa_, pb_ = prefix_presence(np.asarray(scores_a, float), depth), prefix_presence(np.asarray(scores_b, float), depth)
    index = {doc: i for i, doc in enumerate(docs_b)}
    shared = [(i, index[doc]) for i, doc in enumerate(docs_a) if doc in index]
    overlap = np.zeros(depth)
    for i, j in shared:
        overlap += pa_[i] * pb_[j]
    d = np.arange(1, depth + 1, dtype=np.float64)
    agreement = overlap / d
    return float((1.0 - p) / p * np.sum(agreement * p**d) + agreement[-1] * p**depth)


def kendall_tau(docs_a: Sequence[object], scores_a: np.ndarray, docs_b: Sequence[object], scores_b: np.ndarray,
                k: int) -> float | None:
    """Kendall's τ-b between the two runs' scores of the documents in both top ``k``s (ties in either run
    handled as τ-b does); None when fewer than two documents are shared or either side is all tied.

    >>> kendall_tau(["a", "b", "c"], np.array([3.0, 2, 1]), ["c", "b", "a"], np.array([3.0, 2, 1]), 3)
    -1.0
    """
    index = {doc: j for j, doc in enumerate(docs_b[:k])}
    pairs = [(float(scores_a[i]), float(scores_b[index[doc]])) for i, doc in enumerate(docs_a[:k]) if doc in index]
    if len(pairs) < 2:
        return None
    x, y = np.array(pairs).T
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(pairs), 1)
    sx, sy = sx[upper], sy[upper]
    denominator = np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy))
    if denominator == 0:
        return None
    return float(np.sum(sx * sy) / denominator)
