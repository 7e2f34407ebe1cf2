"""RAGAS non-LLM context precision/recall: brute force over every relevance pattern, and the AP identity."""

from __future__ import annotations

import itertools
import math
import random

import pytest

import ranklens
from ranklens.rag.context import context_precision, context_recall
from ranklens.rag.convert import build_rag
from ranklens.rag.inputs import Context, RagSample


def brute_precision(flags: tuple[bool, ...]) -> float:
    """The RAGAS formula literally: Σ_k (Σ_{i≤k} v_i / k) · v_k / (Σ v + 1e-10)."""
    v = [1 if f else 0 for f in flags]
    num = sum(sum(v[: k + 1]) / (k + 1) * v[k] for k in range(len(v)))
    return num / (sum(v) + 1e-10)


@pytest.mark.parametrize("n", range(0, 8))
def test_precision_equals_the_ragas_formula_on_every_pattern(n: int) -> None:
    for flags in itertools.product([False, True], repeat=n):
        assert context_precision(flags) == pytest.approx(brute_precision(flags), abs=1e-9)


def test_precision_is_ap_over_the_retrieved_list_with_relevant_retrieved_as_denominator() -> None:
    rng = random.Random(14)
    for trial in range(200):
        n_ref = rng.randint(1, 5)
        refs = [f"r{j}" for j in range(n_ref)]
        pool = refs + [f"x{j}" for j in range(6)]
        retrieved = rng.sample(pool, rng.randint(1, len(pool)))
        sample = RagSample("q", None, tuple(Context(id=d) for d in retrieved), tuple(Context(id=d) for d in refs), "s:1")
        data = build_rag([sample])
        cp, cr = data.context["q"]
        res = ranklens.evaluate(data.qrels, data.run, ["AP", "R@1000", "Hits"])
        ap, recall, relret = res.aggregates
        # trec AP divides by R (all references); RAGAS divides by the relevant retrieved
        expected_cp = ap * n_ref / relret if relret else 0.0
        assert cp == pytest.approx(expected_cp, abs=1e-12), (trial, retrieved, refs)
        assert cr == pytest.approx(recall, abs=1e-12)
        found = [r in retrieved for r in refs]
        assert cr == pytest.approx(sum(found) / n_ref)


def test_recall_of_no_reference_is_undefined() -> None:
    assert math.isnan(context_recall([]))
    assert context_recall([False]) == 0.0
