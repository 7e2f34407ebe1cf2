"""Choosing similarity thresholds that agree best with human labels (``ranklens judge calibrate``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ranklens.errors import InputError
from ranklens.judges.embedding import Embedder, Thresholds, similarities
from ranklens.judges.pairs import Pair


def best_cuts(scores: Sequence[float], labels: Sequence[int], low: int, high: int) -> tuple[list[float], float]:
    """Ascending cuts maximising the mean linear weighted agreement ``1 - |human - grade| / (high - low)``.

    Exact over the cut positions between distinct scores (dynamic programming over grades); a grade no score
    reaches gets a cut above the largest score.

    >>> best_cuts([0.1, 0.2, 0.5, 0.6, 0.9], [0, 0, 1, 1, 2], 0, 2)
    ([0.35, 0.75], 1.0)
    """
    if len(scores) != len(labels) or not scores:
        raise InputError("calibration needs at least one labelled pair")
    span = high - low
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    xs = [scores[i] for i in order]
    ys = [labels[i] for i in order]
    # candidate boundaries: before item b (b = 0..n), only where the score changes (ties stay together)
    bounds = [0] + [b for b in range(1, len(xs)) if xs[b] != xs[b - 1]] + [len(xs)]
    grades = list(range(low, high + 1))
    # prefix[g][b]: total agreement if items [0, b) all got grade g
    prefix = {g: [0.0] for g in grades}
    for y in ys:
        for g in grades:
            prefix[g].append(prefix[g][-1] + 1 - abs(y - g) / span)
    m = len(bounds)
    best = [prefix[low][bounds[j]] for j in range(m)]  # grade low covers [0, bounds[j])
    choice: list[list[int]] = []
    for g in grades[1:]:
        new, arg = [0.0] * m, [0] * m
        for j in range(m):
            top, at = -1.0, 0
            for i in range(j + 1):
                v = best[i] + prefix[g][bounds[j]] - prefix[g][bounds[i]]
                if v > top:
                    top, at = v, i
            new[j], arg[j] = top, at
        best = new
        choice.append(arg)
    # walk back from the end: the last grade ends at n
    ends = [m - 1]
    for arg in reversed(choice):
        ends.append(arg[ends[-1]])
    ends.reverse()  # ends[k]: where grade low+k ends (index into bounds); grade low+k+1 starts there
    cuts: list[float] = []
    for k in range(span):
        b = bounds[ends[k]]
        if b >= len(xs):
            cuts.append(round(xs[-1] + 1e-6, 6) if not cuts or cuts[-1] <= xs[-1] else cuts[-1])
        elif b == 0:
            cuts.append(round(xs[0] - 1e-6, 6))
        else:
            cuts.append(round((xs[b - 1] + xs[b]) / 2, 6))
    return cuts, round(best[m - 1] / len(xs), 6)


def calibrate(human: Mapping[str, Mapping[str, int]], pairs: Sequence[Pair], embedder: Embedder,
              low: int = 0, high: int = 3) -> Thresholds:
    """Thresholds for ``embedder`` from the pairs that have a human label (labels outside ``low..high`` are an
    error: say the scale instead of clipping).

    >>> class Len:
    ...     name = "len"
    ...     def embed(self, texts):
    ...         import numpy as np
    ...         return np.array([[1.0, 0.0]] + [[min(len(t), 9) / 10, (1 - (min(len(t), 9) / 10) ** 2) ** 0.5]
    ...                                      for t in texts[1:]])
    >>> ps = [Pair("q", "q", f"d{n}", "x" * n) for n in (1, 2, 8, 9)]
    >>> calibrate({"q": {"d1": 0, "d2": 0, "d8": 1, "d9": 1}}, ps, Len(), 0, 1).cuts
    [0.5]
    """
    by_query: dict[str, list[Pair]] = {}
    for p in pairs:
        if p.doc_id in human.get(p.query_id, {}):
            by_query.setdefault(p.query_id, []).append(p)
    scores: list[float] = []
    labels: list[int] = []
    for qps in by_query.values():
        scores.extend(similarities(embedder, qps[0].query, [p.text for p in qps]))
        for p in qps:
            label = human[p.query_id][p.doc_id]
            if not low <= label <= high:
                raise InputError(f"human label {label} of ({p.query_id}, {p.doc_id}) is off the scale {low}..{high}")
            labels.append(int(label))
    if not scores:
        raise InputError("no pair has a human label: the pairs and the qrels share no (query, document)")
    cuts, agreement = best_cuts(scores, labels, low, high)
    return Thresholds(embedder.name, low, high, cuts, agreement, len(scores))
