"""BM25 (ranklens.judges.bm25) against the formula written out directly, on random collections."""

from __future__ import annotations

import math
import random
import re

import pytest

from ranklens.judges.bm25 import BM25, tokenize

K1, B = 0.9, 0.4


def direct(docs: list[str], query: str, k1: float = K1, b: float = B) -> list[float]:
    """The BM25 score of every document, term by term, with no index."""
    toks = [re.findall(r"\w+", d.casefold()) for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / n if n and any(toks) else 1.0
    out = []
    for t in toks:
        score = 0.0
        for term in re.findall(r"\w+", query.casefold()):
            df = sum(term in other for other in toks)
            tf = t.count(term)
            if tf == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avgdl))
        out.append(score)
    return out


def direct_rank(scores: list[float], doc: int) -> int | None:
    if scores[doc] <= 0:
        return None
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return order.index(doc) + 1


WORDS = ["cat", "Cat", "dog", "straße", "STRASSE", "naïve", "café", "42", "x", "ÉTÉ", "été", "data"]


@pytest.mark.parametrize("seed", range(30))
def test_scores_and_ranks_equal_the_direct_formula(seed: int) -> None:
    rng = random.Random(seed)
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) + rng.choice(["", ".", ", !"])
            for _ in range(rng.randint(1, 15))]
    index = BM25(docs)
    for _ in range(5):
        query = " ".join(rng.choice(WORDS + ["absent"]) for _ in range(rng.randint(1, 4)))
        want = direct(docs, query)
        assert index.scores(query).tolist() == pytest.approx(want, rel=1e-12, abs=1e-12)
        for doc in range(len(docs)):
            assert index.rank_of(query, doc) == direct_rank(want, doc)
        top = index.search(query, 3)
        expect = [i for i in sorted(range(len(docs)), key=lambda i: (-want[i], i)) if want[i] > 0][:3]
        assert [i for i, _ in top] == expect


def test_other_parameters_and_a_hand_value() -> None:
    docs = ["a b c", "a a d", "e"]
    assert BM25(docs, k1=1.2, b=0.75).scores("a d").tolist() == pytest.approx(direct(docs, "a d", 1.2, 0.75))
    # N=2, df=1: idf = ln 2; tf=1 and |d| = avgdl: the tf part is 1
    assert BM25(["a b", "b c"]).scores("c").tolist() == pytest.approx([0.0, math.log(2)])


def test_tokens_are_casefolded_unicode_words() -> None:
    assert tokenize("Ünïcode—WORDS_x, 3.14") == ["ünïcode", "words_x", "3", "14"]
    assert BM25(["STRASSE"]).rank_of("straße", 0) == 1


def test_empty_collection_and_bad_parameters() -> None:
    assert BM25([]).search("a", 3) == []
    assert BM25(["", ""]).scores("a").tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        BM25(["a"], b=2)
