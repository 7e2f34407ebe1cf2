"""Parity with pytrec_eval (trec_eval in-process) on random graded qrels and runs.

pytrec_eval embeds a trec_eval that stores scores as float32 (spec §1.1), so every score here is a
multiple of 1/4 below 2^12: exact in float32 and float64, with ties only where two documents draw the
same value. Like ``missing="skip"``, pytrec_eval evaluates the queries present in both qrels and run.
Negative qrels labels mean "pooled but unjudged" in both (spec §1.2; checked on q7 in the spec tests).
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens

pytrec_eval = pytest.importorskip("pytrec_eval")
# the generated collections leave queries out on purpose; the values are compared here, the notes (and
# their warnings) in tests/test_fail_closed.py
pytestmark = pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")

SEEDS = [0, 1, 2, 3, 4, 5, 6, 7]
TOL = 1e-9

# trec_eval measure (as pytrec_eval prints it) → ranklens measure
TREC_TO_RANKLENS = {
    "ndcg": "nDCG",
    "ndcg_cut_1": "nDCG@1",
    "ndcg_cut_3": "nDCG@3",
    "ndcg_cut_5": "nDCG@5",
    "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_20": "nDCG@20",
    "map": "AP",
    "map_cut_5": "AP@5",
    "map_cut_10": "AP@10",
    "map_cut_100": "AP@100",
    "P_1": "P@1",
    "P_5": "P@5",
    "P_10": "P@10",
    "P_20": "P@20",
    "recall_5": "R@5",
    "recall_10": "R@10",
    "recall_100": "R@100",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "success_1": "Success@1",
    "success_5": "Success@5",
    "success_10": "Success@10",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
}
PYTREC_MEASURES = {
    "ndcg", "ndcg_cut.1,3,5,10,20", "map", "map_cut.5,10,100", "P.1,5,10,20", "recall.5,10,100",
    "recip_rank", "Rprec", "bpref", "infAP", "success.1,5,10", "num_ret", "num_rel", "num_rel_ret",
}  # fmt: skip


def _doc_id(rng: np.random.Generator) -> str:
    # ids of varying length and alphabet so that the strcmp tie-break ('d9' > 'd10' > 'd1') matters
    return rng.choice(["d", "D", "doc-", "x"]) + str(int(rng.integers(0, 60)))


def random_collection(
    seed: int, *, n_queries: int = 40, negative: bool = True
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels (labels 0–3, some −1/−2 when ``negative``) and a run with ties and unjudged documents;
    some qrels queries are missing from the run and some run queries are not in the qrels."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        qid = f"q{i}"
        kind = rng.random()
        judged: dict[str, int] = {}
        for _ in range(int(rng.integers(1, 16))):
            label = int(rng.choice([0, 0, 0, 1, 1, 2, 3] + ([-1, -2] if negative else [])))
            judged[_doc_id(rng)] = label
        if rng.random() < 0.1:
            judged = {d: 0 for d in judged}  # no relevant document at all
        if max(judged.values()) < 0:
            # pytrec_eval crashes (segfault) on a query whose every label is negative
            judged[_doc_id(rng) + "j"] = 0
        retrieved: dict[str, float] = {}
        pool = list(judged) + [f"u{j}" for j in range(int(rng.integers(0, 12)))]  # u*: not in the qrels
        n_ret = int(rng.integers(1, len(pool) + 1))
        tie_heavy = rng.random() < 0.4
        for d in rng.choice(pool, size=n_ret, replace=False):
            # quarter steps: exact in float32; few distinct values when tie-heavy
            retrieved[str(d)] = float(rng.integers(-4, 6 if tie_heavy else 4000)) / 4.0
        if kind < 0.1:
            qrels[qid] = judged  # in the qrels, missing from the run
        elif kind < 0.15:
            run[f"r{i}"] = retrieved  # in the run only
        else:
            qrels[qid] = judged
            run[qid] = retrieved
    return qrels, run


def pytrec(qrels: dict, run: dict, measures: set[str], **kw: object) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(qrels, measures, **kw).evaluate(run)


def assert_same(expected: dict[str, dict[str, float]], res: ranklens.Results, mapping: dict[str, str]) -> None:
    assert set(res.query_ids) == set(expected), "evaluated query sets differ"
    for trec_name, ours in mapping.items():
        got = res.per_query(ours)
        bad = {
            q: (got[q], expected[q][trec_name])
            for q in expected
            if abs(got[q] - expected[q][trec_name]) > TOL
        }
        assert not bad, f"{ours} vs pytrec_eval {trec_name}: {sorted(bad.items())[:5]}"
        mean = float(np.mean([expected[q][trec_name] for q in expected]))
        agg = sum(expected[q][trec_name] for q in expected) if trec_name.startswith("num_") else mean
        assert res[ours] == pytest.approx(agg, abs=TOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_parity_default(seed: int) -> None:
    """Every shared measure, per query and in aggregate, with trec_eval's default options."""
    qrels, run = random_collection(seed)
    expected = pytrec(qrels, run, PYTREC_MEASURES)
    res = ranklens.evaluate(qrels, run, list(TREC_TO_RANKLENS.values()))
    assert_same(expected, res, TREC_TO_RANKLENS)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_parity_trec_names(seed: int) -> None:
    """The same measures asked for by their trec_eval names give pytrec_eval's numbers."""
    qrels, run = random_collection(seed)
    expected = pytrec(qrels, run, PYTREC_MEASURES)
    res = ranklens.evaluate(qrels, run, sorted(PYTREC_MEASURES))
    assert_same(expected, res, TREC_TO_RANKLENS)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_parity_relevance_level(seed: int) -> None:
    """trec_eval -l 2 (pytrec_eval ``relevance_level=2``) vs ``rel_level=2``."""
    qrels, run = random_collection(seed)
    expected = pytrec(qrels, run, PYTREC_MEASURES, relevance_level=2)
    res = ranklens.evaluate(qrels, run, list(TREC_TO_RANKLENS.values()), rel_level=2)
    mapping = {t: str(ranklens.measures.parse_many([m], rel_level=2)[0]) for t, m in TREC_TO_RANKLENS.items()}
    assert_same(expected, res, mapping)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_parity_judged_only(seed: int) -> None:
    """trec_eval -J (pytrec_eval ``judged_docs_only_flag``) vs ``judged_only=True``."""
    qrels, run = random_collection(seed)
    expected = pytrec(qrels, run, PYTREC_MEASURES, judged_docs_only_flag=True)
    # pytrec_eval drops queries left with no judged document; ranklens keeps them with an empty ranking
    res = ranklens.evaluate(qrels, run, list(TREC_TO_RANKLENS.values()), judged_only=True)
    kept = [q for q in res.query_ids if q in expected]
    for q in set(res.query_ids) - set(expected):
        assert res.per_query("NumRet")[q] == 0
    sub = {q: expected[q] for q in kept}
    for trec_name, ours in TREC_TO_RANKLENS.items():
        got = res.per_query(ours)
        bad = {q: (got[q], sub[q][trec_name]) for q in kept if abs(got[q] - sub[q][trec_name]) > TOL}
        assert not bad, f"{ours} vs pytrec_eval {trec_name} (-J): {sorted(bad.items())[:5]}"


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_parity_nonnegative_labels(seed: int) -> None:
    """The same, on qrels without negative labels."""
    qrels, run = random_collection(seed, negative=False)
    expected = pytrec(qrels, run, PYTREC_MEASURES)
    res = ranklens.evaluate(qrels, run, list(TREC_TO_RANKLENS.values()))
    assert_same(expected, res, TREC_TO_RANKLENS)


# trec_eval's ndcg takes level=gain parameters (spec §1.4). pytrec_eval's Python wrapper rewrites measure
# names with a numbers-only pattern (and aborts on 'ndcg.1=3'), so the C extension is called directly.
# Gains are integers: trec_eval compares gains with (int)(g1 - g2), which mis-sorts the ideal when two
# gains differ by less than 1 (spec §1.4 quirk 1).
GAIN_MAPS = [
    {1: 1, 2: 3, 3: 7},  # exponential, as a map
    {1: 2, 2: 5},  # level 3 keeps gain 3
    {0: 1, 1: 2, 2: 4, 3: 8},  # level 0 gets a gain
    {1: 10, 2: 1, 3: 2},  # not monotone in the level
]


@pytest.mark.parametrize("gains", GAIN_MAPS, ids=[str(g) for g in GAIN_MAPS])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_parity_ndcg_gain_parameters(seed: int, gains: dict[int, int]) -> None:
    """``trec_eval -m ndcg.1=…,2=…`` vs ``nDCG(gain={…})`` and ``ndcg.1=…`` (trec name)."""
    from pytrec_eval_ext import RelevanceEvaluator

    qrels, run = random_collection(seed)
    param = ",".join(f"{lvl}={g}" for lvl, g in gains.items())
    qrels_nonempty = {q: d for q, d in qrels.items() if d}
    expected = RelevanceEvaluator(
        query_relevance=qrels_nonempty, measures={f"ndcg.{param}"}, relevance_level=1, judged_docs_only_flag=False
    ).evaluate(run)
    ours = "nDCG(gain={" + ",".join(f"{lvl}:{g}" for lvl, g in gains.items()) + "})"
    res = ranklens.evaluate(qrels, run, [ours, f"ndcg.{param}"])
    assert set(res.query_ids) == set(expected)
    for name in res.measures:
        got = res.per_query(name)
        bad = {q: (got[q], expected[q]["ndcg"]) for q in expected if abs(got[q] - expected[q]["ndcg"]) > TOL}
        assert not bad, f"{name} vs pytrec_eval ndcg.{param}: {sorted(bad.items())[:5]}"
