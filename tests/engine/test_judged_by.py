"""Shared judgements (``judged_by`` of :func:`ranklens.engine.alignment.align` and :meth:`Evaluator.results`):
several run queries judged by one qrels query, held once. Oracle: the same evaluation with the qrels written out
under every run query's own id (the form it replaces), and pytrec_eval on that written-out form."""

from __future__ import annotations

import numpy as np
import pytest

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine import Evaluator
from ranklens.errors import InputError

MEASURES = ["nDCG@5", "DCG@5", "nDCG", "AP", "P@3", "RR", "Rprec", "R@10"]


def _case(seed: int):
    rng = np.random.default_rng(seed)
    topics = {f"t{t}": {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(40, size=int(rng.integers(1, 15)), replace=False)}
              for t in range(6)}
    of = {f"r{r:03d}": f"t{int(rng.integers(0, 8))}" for r in range(60)}  # t6, t7 have no judgements
    run = {r: {f"d{d}": float(rng.integers(0, 5)) for d in rng.choice(40, size=int(rng.integers(1, 12)), replace=False)}
           for r in of}
    return topics, of, run


@pytest.mark.parametrize("seed", range(5))
def test_shared_judgements_equal_the_qrels_written_out_per_run_query(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    topics, of, run = _case(seed)
    qrels = Qrels.from_dict(topics)
    r = Run.from_dict(run)
    codes = {q: i for i, q in enumerate(qrels.query_ids.to_pylist())}
    judged_by = np.array([codes.get(of[q], -1) for q in r.query_ids.to_pylist()])
    shared = Evaluator(MEASURES, qrels).results(r, judged_by=judged_by)
    written = {q: topics[t] for q, t in of.items() if t in topics}
    expected = Evaluator(MEASURES, Qrels.from_dict(written)).results(r)
    assert list(shared.ids) == list(expected.ids) == sorted(written)
    for m in MEASURES:
        assert np.allclose(np.asarray(shared.column(m)), np.asarray(expected.column(m)), rtol=0, atol=1e-12)
    # and an independent implementation on the written-out form
    trec = pytrec_eval.RelevanceEvaluator(written, {"ndcg_cut", "map", "recip_rank", "P", "Rprec"})
    got = trec.evaluate({q: run[q] for q in written})
    for q, v in zip(shared.ids, shared.column("nDCG@5")):
        assert v == pytest.approx(got[q]["ndcg_cut_5"], abs=1e-12)
    for q, v in zip(shared.ids, shared.column("AP")):
        assert v == pytest.approx(got[q]["map"], abs=1e-12)


def test_judged_by_refuses_other_query_sets_and_wrong_lengths() -> None:
    qrels = Qrels.from_dict({"t": {"a": 1}})
    r = Run.from_dict({"r1": {"a": 1.0}, "r2": {"a": 2.0}})
    with pytest.raises(InputError, match="judged_by"):
        Evaluator(["P@1"], qrels).results(r, judged_by=np.array([0]))
    with pytest.raises(InputError, match="judged_by"):
        Evaluator(["P@1"], qrels, missing="zero").results(r, judged_by=np.array([0, 0]))
