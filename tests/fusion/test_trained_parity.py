"""The fusion methods trained on qrels (PosFuse, ProbFuse, SegFuse, SlideFuse, BayesFuse, MAPFuse) against
ranx 0.3.21 (the oracle): ranx trains on the normalised runs and fuses with what it learnt; ranklens does both
in ``fuse(..., qrels=)``. Generated runs as in ``test_ranx_parity`` (ties, missing documents, negative scores).
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklens.data import Run
from ranklens.errors import InputError
from ranklens.fusion import METHODS, NORMALISATIONS, fuse, optimise

ranx = pytest.importorskip("ranx", reason="ranx is the oracle of the fusion methods (test extra)")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ranx_parity import assert_same, generate  # noqa: E402  (the generator shared with the untrained methods)

pytestmark = [
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

TRAINED = ("posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse")
PARAMS = {"probfuse": {"n_segments": 3}, "slidefuse": {"w": 2}}
NORMS = (*[n for n in NORMALISATIONS if n != "borda"], None)


def generate_qrels(dicts: list[dict[str, dict[str, float]]], seed: int) -> dict[str, dict[str, int]]:
    """Graded judgements (0-2) for 6 of the 12 documents of every query (a grade 0 is judged, not relevant)."""
    rng = np.random.default_rng(seed)
    return {q: {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(12, 6, replace=False)} for q in dicts[0]}


def ranx_trained(
    dicts: list[dict[str, dict[str, float]]], qrels: dict[str, dict[str, int]], method: str, norm: str | None,
    given: dict[str, int] | None = None,
) -> object:
    from ranx import fusion as rf
    from ranx.normalization import norm_switch

    training = [ranx.Run(d, name=f"r{i}") for i, d in enumerate(dicts)]
    normed = [norm_switch(norm)(r) for r in training] if norm else training
    tq = ranx.Qrels(qrels)
    given = given or PARAMS.get(method, {})
    if method == "probfuse":
        params = {"probs": rf.probfuse_train(tq, normed, given["n_segments"])}
    elif method == "slidefuse":
        params = {"probs": rf.slidefuse_train(tq, normed), "w": given["w"]}
    elif method == "bayesfuse":
        params = {"log_odds": rf.bayesfuse_train(tq, normed)}
    elif method == "mapfuse":
        params = {"map_scores": rf.mapfuse_train(tq, normed)}
    else:
        params = {"probs": getattr(rf, f"{method}_train")(tq, normed)}
    runs = [ranx.Run(d, name=f"r{i}") for i, d in enumerate(dicts)]
    return ranx.fuse(runs=runs, norm=norm, method=method, params=params)


@pytest.mark.parametrize(("method", "norm"), list(itertools.product(TRAINED, NORMS)))
def test_trained_fusion_equals_ranx(method: str, norm: str | None) -> None:
    for seed in (1, 2):
        dicts = generate(seed)
        qrels = generate_qrels(dicts, seed + 10)
        ours = [Run.from_dict(d, name=f"r{i}") for i, d in enumerate(dicts)]
        fused = fuse(ours, method, norm=norm, qrels=qrels, params=PARAMS.get(method))
        assert_same(fused.run, ranx_trained(dicts, qrels, method, norm), f"{method}/{norm}/{seed}")
        assert len(fused.optimisation["model"]) == 3


@pytest.mark.parametrize(("method", "key"), [("probfuse", "n_segments"), ("slidefuse", "w")])
def test_optimised_parameter_follows_ranx_grid_and_rule(method: str, key: str) -> None:
    """ranx's optimize_fusion searches 1..100 and keeps the last of the best (``>=``). Its fused run of every
    trial is evaluated here by ranklens's engine (the two evaluators order tied fused scores differently: ranx
    by its dict order, ranklens by document id descending as trec_eval), which must give ranklens's trial
    value; the parameter chosen is the last best."""
    from ranklens.engine import Evaluator

    dicts = generate(3, nqueries=30)
    qrels = generate_qrels(dicts, 4)
    ours = [Run.from_dict(d, name=f"r{i}") for i, d in enumerate(dicts)]
    best = optimise(ours, qrels, method, norm="min-max", metric="AP")
    got = np.array([t["value"] for t in best.optimisation["trials"]])
    assert [t[key] for t in best.optimisation["trials"]] == list(range(1, 101))
    evaluator = Evaluator(["AP"], qrels)
    for v in (1, 2, 3, 7, 50, 100):
        theirs = ranx_trained(dicts, qrels, method, "min-max", {key: v})
        as_run = Run.from_dict(theirs.to_dict(), name="ranx")  # type: ignore[attr-defined]
        assert float(evaluator(as_run).aggregates[0]) == pytest.approx(got[v - 1], abs=1e-12), v
    assert best.params[key] == int(np.flatnonzero(got >= got.max())[-1]) + 1


def test_every_ranx_method_is_ours() -> None:
    """The method names ranx's ``fusion_switch`` dispatches on, read from its source."""
    import ranx.fusion

    source = Path(ranx.fusion.__file__).read_text()
    names = set(re.findall(r'method == "([a-z_]+)"', source))
    assert len(names) >= 25
    assert names <= set(METHODS), sorted(names - set(METHODS))


def _long_runs() -> tuple[list[dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    """Two runs of 1,003 distinct scores per query; d0..d9 relevant."""
    docs = [f"d{i}" for i in range(1003)]
    a = {q: {d: float(1003 - i) for i, d in enumerate(docs)} for q in ("q1", "q2")}
    b = {q: {d: float(i) for i, d in enumerate(docs)} for q in ("q1", "q2")}
    return [a, b], {q: {f"d{i}": 1 for i in range(10)} for q in ("q1", "q2")}


def test_bayesfuse_scores_a_document_past_rank_1000_as_not_retrieved() -> None:
    """ranx's BayesFuse table has 1,000 entries and is indexed by position without a bound check, so a
    document past rank 1000 gets whatever memory follows. The intended definition has no estimate there:
    ranklens scores it as a run that did not retrieve it, log(0.001/0.999). By hand: run a ranks d0..d9
    first (precision 1 in [0, 5) and [5, 10)), run b ranks them last (d9..d0 at positions 993..1002, so d2,
    d1, d0 past rank 1000)."""
    dicts, qrels = _long_runs()
    ours = [Run.from_dict(d, name=n) for d, n in zip(dicts, "ab")]
    got = fuse(ours, "bayesfuse", norm=None, qrels=qrels).run.to_dict()["q1"]
    low = np.log(0.001 / 0.999)
    # d0 at position 0 of a (precision 1 → 1 - 0.001 complement → log(1/0.001)); in b at position 1002 > 1000
    assert got["d0"] == pytest.approx(np.log(1 / 0.001) + low, abs=1e-12)
    # d5: a position 5 ([5, 10): precision 1); b position 997 ([500, 1000): 7 hits (d9..d3 at 993..999) in
    # 500 positions, in each query)
    assert got["d5"] == pytest.approx(np.log(1 / 0.001) + np.log(0.014 / 0.986), abs=1e-12)
    # d1002: a position 1002 (past the table), b position 0 (precision 0 → 0.001)
    assert got["d1002"] == pytest.approx(low + low, abs=1e-12)


def test_bayesfuse_equals_ranx_within_rank_1000() -> None:
    dicts, qrels = _long_runs()
    dicts = [{q: dict(list(r.items())[:1000]) for q, r in d.items()} for d in dicts]
    ours = [Run.from_dict(d, name=n) for d, n in zip(dicts, "ab")]
    assert_same(fuse(ours, "bayesfuse", norm=None, qrels=qrels).run, ranx_trained(dicts, qrels, "bayesfuse", None), "long")


def test_training_reads_the_qrels_queries_only() -> None:
    """A run's queries absent from the qrels do not train; a qrels query a run lacks is an empty list (it
    counts in ProbFuse's mean over the qrels' queries). By hand: n_segments 1, run a retrieves 2 documents of
    which 1 relevant for q1 and lacks q2: P = (1/2 + 0) / 2 = 0.25."""
    a = Run.from_dict({"q1": {"x": 2.0, "y": 1.0}, "q3": {"x": 1.0}}, name="a")
    b = Run.from_dict({"q1": {"y": 1.0}, "q2": {"x": 1.0}, "q3": {"y": 1.0}}, name="b")
    qrels = {"q1": {"x": 1}, "q2": {"z": 1}}
    fused = fuse([a, b], "probfuse", norm=None, qrels=qrels, params={"n_segments": 1})
    assert fused.optimisation["model"][0] == [0.25]
    assert fused.optimisation["model"][1] == [0.0]


def test_trained_methods_refuse_missing_qrels_and_parameters() -> None:
    runs = [Run.from_dict({"q": {"d": 1.0}}, name="a"), Run.from_dict({"q": {"e": 1.0}}, name="b")]
    with pytest.raises(InputError, match="trained on qrels"):
        fuse(runs, "posfuse")
    with pytest.raises(InputError, match="n_segments"):
        fuse(runs, "probfuse", qrels={"q": {"d": 1}})
    with pytest.raises(InputError, match="not trained on qrels"):
        fuse(runs, "rrf", qrels={"q": {"d": 1}})
