"""Generated collections and policies shared by the SQL formulation and DuckDB engine tests: seeded, with
tied scores, negative labels, run-only and qrels-only queries, ids whose byte order differs from their
numeric order."""

from __future__ import annotations

import numpy as np

from ranklens.engine.policy import EvalPolicy
from ranklens.measures import parse_many

MEASURES = [
    "nDCG@5", "nDCG", "nDCG(gain=exp)@10", "DCG@3", "DCG(gain=exp)", "P@5", "P(rel=2)@3", "R@10", "R", "AP", "AP@5",
    "AP(rel=2)", "RR", "RR@3", "Success@3", "Success@1", "Rprec", "Rprec(rel=2)", "Judged@5", "Judged@20",
]

POLICIES = [
    EvalPolicy(), EvalPolicy(missing="zero"), EvalPolicy(judged_only=True), EvalPolicy(max_docs=4),
    EvalPolicy(judged_only=True, max_docs=6, missing="zero"), EvalPolicy(negative="zero"), EvalPolicy(rel_level=2),
]


def measures(policy: EvalPolicy | None = None) -> list:
    return parse_many(MEASURES, rel_level=policy.rel_level if policy else None)


def collection(seed: int) -> tuple[dict, dict]:
    """``(qrels, run)`` as ``{query: {doc: value}}``."""
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(3, 25))
    run: dict = {}
    qrels: dict = {}
    for _ in range(nq):
        q = f"q{int(rng.integers(0, 40))}"
        if rng.random() < 0.85:
            docs = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
            scale = 3 if rng.random() < 0.5 else 1000  # (few score values: many ties)
            run[q] = {f"d{int(d)}": float(rng.integers(0, scale)) / 4 for d in docs}
        if rng.random() < 0.9:
            docs = rng.choice(60, size=int(rng.integers(1, 20)), replace=False)
            qrels[q] = {f"d{int(d)}": int(rng.integers(-1, 5)) for d in docs}
    if not any(q in qrels for q in run):  # (at least one shared query)
        qrels.setdefault(next(iter(run), "q0"), {})["d1"] = 1
        run.setdefault(next(iter(qrels)), {"d1": 1.0})
    return qrels, run


def rows(nested: dict) -> list[tuple[str, str, float]]:
    return [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
