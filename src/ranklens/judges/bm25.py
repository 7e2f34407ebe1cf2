"""A small in-memory BM25 retriever, for the round-trip filter of synthetic queries (:mod:`ranklens.judges.synth`).

Tokens are the runs of Unicode word characters (``\\w+``) of the casefolded text; no stemming, no stop words. The
score of document *d* for query *q* (a sum over the query's tokens: a repeated query term counts again) is

    sum over terms t of q:  idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))

with ``idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))`` (always positive), ``k1 = 0.9`` and ``b = 0.4`` (the
Anserini defaults). Ranks are by score, higher first; equal scores keep the collection order. A document sharing no
term with the query scores 0 and is not retrieved.

>>> index = BM25(["the cat sat", "a dog barked", "the cat and the dog"])
>>> index.rank_of("cat", 0), index.rank_of("dog", 1), index.rank_of("fish", 0)
(1, 1, None)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["BM25", "tokenize"]

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """The casefolded runs of Unicode word characters.

    >>> tokenize("Straße, STRASSE & naïve-Café 42")
    ['strasse', 'strasse', 'naïve', 'café', '42']
    """
    return _WORD.findall(text.casefold())


class BM25:
    """An index of ``documents`` (in order; positions are their ids) scored by BM25 with ``k1`` and ``b``.

    >>> BM25(["a b", "b c"]).search("c", 5)
    [(1, 0.6931)]
    """

    def __init__(self, documents: Sequence[str], *, k1: float = 0.9, b: float = 0.4) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError("BM25 needs k1 >= 0 and 0 <= b <= 1")
        self.k1, self.b = k1, b
        self.n_docs = len(documents)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(self.n_docs, dtype=np.float64)
        for i, text in enumerate(documents):
            counts = Counter(tokenize(text))
            lengths[i] = sum(counts.values())
            for term, tf in counts.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(i)
                tfs.append(tf)
        avgdl = float(lengths.mean()) if self.n_docs and lengths.mean() > 0 else 1.0
        self._norm = k1 * (1.0 - b + b * lengths / avgdl)
        self._postings = {t: (np.asarray(d, dtype=np.int64), np.asarray(f, dtype=np.float64))
                          for t, (d, f) in postings.items()}

    def idf(self, term: str) -> float:
        """``ln(1 + (N − df + 0.5) / (df + 0.5))`` of a (tokenised) term."""
        entry = self._postings.get(term)
        df = 0 if entry is None else len(entry[0])
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query``."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        for term in tokenize(query):
            entry = self._postings.get(term)
            if entry is None:
                continue
            docs, tf = entry
            out[docs] += self.idf(term) * tf * (self.k1 + 1.0) / (tf + self._norm[docs])
        return out

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The top ``k`` documents with a positive score as ``(position, score rounded to 4 places)``."""
        s = self.scores(query)
        order = np.lexsort((np.arange(self.n_docs), -s))  # score descending, then collection order
        return [(int(i), round(float(s[i]), 4)) for i in order[:k] if s[i] > 0]

    def rank_of(self, query: str, doc: int) -> int | None:
        """The 1-based rank of document ``doc`` for ``query``, or ``None`` when it scores 0 (not retrieved)."""
        s = self.scores(query)
        mine = s[doc]
        if mine <= 0:
            return None
        return int(np.count_nonzero(s > mine) + np.count_nonzero(s[:doc] == mine)) + 1
