"""Generate the small TREC-style example collection (deterministic): 12 queries, two systems.

    python examples/make_toy.py   # rewrites examples/toy.qrels, toy_bm25.run, toy_dense.run

bm25 has coarse (rounded) scores and therefore ties; dense misses query q12 entirely.
"""

from pathlib import Path

import numpy as np

rng = np.random.default_rng(2026)
here = Path(__file__).parent
qrels_lines, bm25_lines, dense_lines = [], [], []
for qn in range(1, 13):
    qid = f"q{qn}"
    docs = [f"doc{qn:02d}{d:03d}" for d in range(60)]
    judged = rng.choice(60, size=25, replace=False)
    labels = {docs[j]: int(rng.choice(4, p=[0.55, 0.25, 0.12, 0.08])) for j in judged}
    for d in sorted(labels):
        qrels_lines.append(f"{qid} 0 {d} {labels[d]}")
    truth = np.array([labels.get(d, 0) for d in docs], dtype=float)
    for name, noise, lines in (("bm25", 1.6, bm25_lines), ("dense", 0.9, dense_lines)):
        if name == "dense" and qid == "q12":
            continue
        score = truth + rng.normal(0, noise, size=60)
        if name == "bm25":
            score = np.round(score * 2) / 2 + 10  # coarse scores: ties
        order = np.argsort(-score, kind="stable")[:30]
        for rank, j in enumerate(order, 1):
            lines.append(f"{qid} Q0 {docs[j]} {rank} {score[j]:.4f} {name}")
(here / "toy.qrels").write_text("\n".join(qrels_lines) + "\n")
(here / "toy_bm25.run").write_text("\n".join(bm25_lines) + "\n")
(here / "toy_dense.run").write_text("\n".join(dense_lines) + "\n")
