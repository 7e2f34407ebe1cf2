"""The two ways of matching (query, document) pairs give the same numbers.

Small inputs are matched on interned ids (exact, no Polars import); from ``HASH_FROM_ROWS`` rows on (the duplicate check from ``HASH_DUPLICATES_FROM_ROWS``), on
64-bit hashes whose every match is confirmed on the strings. These tests force each path on the same
data, and force hash collisions, so both stay correct whatever the size threshold is.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens.data import _hashing
from ranklens.errors import DuplicateError

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "R@100", "nDCG(ties=trec)@3"]


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{int(x)}" for x in rng.choice(200, size=40, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:25]}
        # coarse scores make ties, so the doc-id tie-break is exercised too
        run[f"q{q}"] = {d: float(rng.integers(0, 5)) for d in docs[10:]}
    return qrels, run


def _modules() -> tuple[object, object]:
    import importlib  # (``ranklens.data.run`` the attribute is not the module: import it by name)

    return importlib.import_module("ranklens.data.run"), importlib.import_module("ranklens.engine.alignment")


def _force(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    run_module, align_module = _modules()
    for module in (_hashing, run_module, align_module):
        for name in ("HASH_FROM_ROWS", "HASH_DUPLICATES_FROM_ROWS"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hashed_and_exact_matching_agree(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    qrels, run = _collection(seed)
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    hashed = ranklens.evaluate(qrels, run, MEASURES)
    assert exact.query_ids == hashed.query_ids
    np.testing.assert_array_equal(exact.values, hashed.values)


def test_colliding_hashes_cost_time_not_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _collection(3)
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    run_module, align_module = _modules()

    def constant(values: object) -> np.ndarray:  # every id hashes alike: every key collides
        return np.zeros(len(values), dtype=np.uint64)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "string_hash", constant)
    monkeypatch.setattr(align_module, "string_hash", constant)
    collided = ranklens.evaluate(qrels, run, MEASURES)
    np.testing.assert_array_equal(exact.values, collided.values)


@pytest.mark.parametrize("rows", [0, 1 << 40])
def test_a_repeated_document_is_refused_on_both_paths(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    _force(monkeypatch, rows)
    with pytest.raises(DuplicateError, match="appears twice for query 'q1'"):
        ranklens.Run.from_arrays(["q1", "q2", "q1"], ["a", "a", "a"], [3.0, 2.0, 1.0])
