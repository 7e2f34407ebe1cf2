"""Engine details that must match trec_eval 10.0 to the bit, found while building ``trec-eval``:
-M cuts the ranking before -J drops unjudged documents (form_res_rels.c), and DCG divides each gain by
log2(rank + 1) rather than multiplying by its reciprocal (m_ndcg.c), so sums agree in the last bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.trec_eval import TrecEvalOptions, run_trec_eval


def test_max_docs_applies_before_judged_only(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 1\n")
    run.write_text("q1 Q0 x 1 3 t\nq1 Q0 a 2 2 t\n")  # x (not judged) ranks first
    out = run_trec_eval(TrecEvalOptions(str(qrels), str(run), measures=("num_ret", "map"), judged_only=True, max_docs=1))
    # top 1 = [x]; -J removes it: nothing retrieved
    assert out.stdout == "num_ret               \tall\t0\nmap                   \tall\t0.0000\n"


def test_ndcg_is_bit_identical_to_trec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{i}": int(rng.integers(0, 4)) for i in range(30)} for q in range(60)}
    run = {f"q{q}": {f"d{i}": float(rng.random()) for i in range(45)} for q in range(60)}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    got = ranklens.evaluate(qrels, run, ["nDCG"]).per_query("nDCG")
    assert all(got[q] == expected[q]["ndcg"] for q in qrels)
