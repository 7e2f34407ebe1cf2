"""The intent-aware measures equal ndeval's (pyndeval, the TREC Web track's tool) to 1e-9 on seeded generated
collections: several intents per query, graded intent labels and rel thresholds, α and β, unjudged and unretrieved
documents, a query with no relevant intent, queries the run lacks, greedy-ideal ties (document ids of one width,
so ndeval's and ranklens' byte orders agree).

Where ndeval departs from the definitions ranklens follows (docs: ranklens.measures.diversity) the values are
checked against a hand implementation written here from the definitions, loop by loop: ERR-IA@1 and α-DCG@1
(ndeval leaves them unnormalised: S times ours), nNRBP with no relevant intent (ndeval: NaN; ours 0), and k > 20
(ndeval stops at 20)."""

from __future__ import annotations

import math
import random

import pytest

from ranklens.diversity import evaluate_diversity

pyndeval = pytest.importorskip("pyndeval")

Intents = dict[str, dict[str, dict[str, int]]]
RunDict = dict[str, dict[str, float]]


def _collection(seed: int) -> tuple[Intents, RunDict]:
    rng = random.Random(seed)
    iq: Intents = {}
    run: RunDict = {}
    for q in range(30):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in range(40)]
        judged = rng.sample(docs, 20)
        iq[qid] = {
            str(i): {d: rng.choice((0, 0, 0, 1, 1, 2)) for d in rng.sample(judged, rng.randint(3, 12))}
            for i in range(rng.randint(1, 5))
        }
        n = rng.choice((0, 3, 10, 25, 35)) if q else 35
        retrieved = rng.sample(docs, n)
        if n:  # distinct scores: ndeval breaks ties by doc id ascending, trec_eval's order descending
            run[qid] = {d: float(s) for d, s in zip(retrieved, rng.sample(range(1, 10_000), n))}
    iq["q1"] = {"0": dict.fromkeys(iq["q1"]["0"], 0)}  # no relevant intent: S = 0
    return iq, run


def _ndeval(iq: Intents, run: RunDict, names: list[str], rel: int, alpha: float, beta: float) -> dict[str, dict[str, float]]:
    qrels = [pyndeval.SubtopicQrel(q, i, d, r) for q in iq for i in iq[q] for d, r in iq[q][i].items()]
    ev = pyndeval.RelevanceEvaluator(qrels, names, relevance_level=rel, alpha=alpha, beta=beta)
    return ev.evaluate([(q, d, s) for q in run for d, s in run[q].items()])  # type: ignore[no-any-return]


_OURS = {"MAP-IA": "AP-IA", "strec": "StRecall"}
_ALPHA = {"ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP"}


def _ours(name: str, rel: int, alpha: float, beta: float) -> str:
    family, _, k = name.partition("@")
    family = _OURS.get(family, family)
    params = []
    if family in _ALPHA and alpha != 0.5:
        params.append(f"alpha={alpha:g}")
    if family in ("NRBP", "nNRBP") and beta != 0.5:
        params.append(f"beta={beta:g}")
    if rel != 1:
        params.append(f"rel={rel}")
    return family + (f"({','.join(params)})" if params else "") + (f"@{k}" if k else "")


NAMES = [
    "ERR-IA@2", "ERR-IA@5", "ERR-IA@20", "nERR-IA@1", "nERR-IA@5", "nERR-IA@20", "alpha-DCG@2", "alpha-DCG@10",
    "alpha-DCG@20", "alpha-nDCG@1", "alpha-nDCG@5", "alpha-nDCG@20", "NRBP", "nNRBP", "MAP-IA", "P-IA@1", "P-IA@5",
    "P-IA@20", "strec@1", "strec@5", "strec@20",
]


@pytest.mark.parametrize("seed", [28, 2])
@pytest.mark.parametrize(("rel", "alpha", "beta"), [(1, 0.5, 0.5), (2, 0.5, 0.5), (1, 0.3, 0.8), (2, 0.8, 0.2)])
def test_intent_aware_measures_equal_ndeval(seed: int, rel: int, alpha: float, beta: float) -> None:
    iq, run = _collection(seed)
    theirs = _ndeval(iq, run, NAMES, rel, alpha, beta)
    ours = [_ours(n, rel, alpha, beta) for n in NAMES]
    res = evaluate_diversity(iq, run, ours)
    assert set(res.query_ids) == set(theirs)
    for name, mine in zip(NAMES, ours):
        got = res.per_query(mine)
        for q, values in theirs.items():
            expected = values[name]
            if name == "nNRBP" and math.isnan(expected):  # ndeval's 0/0 with no relevant intent: ours 0
                assert got[q] == 0.0 and _s(iq, q, rel) == 0, (q, got[q])
                continue
            assert math.isclose(got[q], expected, rel_tol=1e-9, abs_tol=1e-12), (mine, q, got[q], expected)


@pytest.mark.parametrize("seed", [28, 2])
def test_at_1_ndeval_leaves_err_ia_and_alpha_dcg_unnormalised(seed: int) -> None:
    iq, run = _collection(seed)
    theirs = _ndeval(iq, run, ["ERR-IA@1", "alpha-DCG@1"], 1, 0.5, 0.5)
    res = evaluate_diversity(iq, run, ["ERR-IA@1", "alpha-DCG@1"])
    departs = 0
    for q, values in theirs.items():
        s = _s(iq, q, 1)
        for name in ("ERR-IA@1", "alpha-DCG@1"):
            mine = res.per_query(name)[q]
            assert math.isclose(mine, _hand(iq, run, q, name, 1, 0.5, 0.5), rel_tol=1e-12, abs_tol=1e-15)
            assert math.isclose(mine * s, values[name], rel_tol=1e-9, abs_tol=1e-12), (name, q)
            departs += s > 1 and mine > 0
    assert departs > 0


# ------------------------------------------------------------------- a hand implementation, from the definitions


def _s(iq: Intents, q: str, rel: int) -> int:
    return sum(any(r >= rel for r in docs.values()) for docs in iq.get(q, {}).values())


def _covers(iq: Intents, q: str, rel: int) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for intent, docs in iq.get(q, {}).items():
        for d, r in docs.items():
            if r >= rel:
                out.setdefault(d, set()).add(intent)
    return out


def _gains(order: list[str], covers: dict[str, set[str]], alpha: float) -> list[float]:
    seen: dict[str, int] = {}
    out = []
    for d in order:
        g = 0.0
        for i in covers.get(d, set()):
            g += (1 - alpha) ** seen.get(i, 0)
            seen[i] = seen.get(i, 0) + 1
        out.append(g)
    return out


def _greedy(covers: dict[str, set[str]], alpha: float) -> list[float]:
    left, seen, out = set(covers), {}, []  # type: ignore[var-annotated]
    while left:
        best = max(left, key=lambda d: (round(sum((1 - alpha) ** seen.get(i, 0) for i in covers[d]), 12), d))
        out.append(sum((1 - alpha) ** seen.get(i, 0) for i in covers[best]))
        for i in covers[best]:
            seen[i] = seen.get(i, 0) + 1
        left.remove(best)
    return out


def _hand(iq: Intents, run: RunDict, q: str, name: str, rel: int, alpha: float, beta: float) -> float:
    family, _, at = name.partition("@")
    k = int(at) if at else 0
    order = sorted(run.get(q, {}), key=lambda d: -run[q][d])
    covers = _covers(iq, q, rel)
    s = _s(iq, q, rel)
    if s == 0:
        return 0.0
    g = _gains(order, covers, alpha)
    ideal = _greedy(covers, alpha)
    log = [1 / math.log2(j + 2) for j in range(max(k, len(ideal), len(g)) + 1)]
    if family in ("alpha-DCG", "ERR-IA", "nERR-IA", "alpha-nDCG"):
        disc = log if "DCG" in family else [1 / (j + 1) for j in range(len(log))]
        value = sum(g[j] * disc[j] for j in range(min(k, len(g))))
        if family.startswith("n") or family.startswith("alpha-n"):
            best = sum(ideal[j] * disc[j] for j in range(min(k, len(ideal))))
            return value / best if best else 0.0
        return value / (s * sum((1 - alpha) ** j * disc[j] for j in range(k)))
    if family == "P-IA":
        return sum(len(covers.get(d, ())) for d in order[:k]) / (k * s)
    if family == "StRecall":
        return len(set().union(*[covers.get(d, set()) for d in order[:k]])) / s
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["ERR-IA@30", "nERR-IA@30", "alpha-DCG@35", "alpha-nDCG@30", "P-IA@25", "StRecall@30"])
def test_beyond_ndeval_depth_by_hand(name: str) -> None:
    iq, run = _collection(28)
    got = evaluate_diversity(iq, run, [name]).per_query(name)
    for q in got:
        assert math.isclose(got[q], _hand(iq, run, q, name, 1, 0.5, 0.5), rel_tol=1e-9, abs_tol=1e-12), (name, q)


def test_the_greedy_ideal_breaks_ties_by_document_id_descending() -> None:
    # a{1,3}, b{1}, c{0,2}, d{0,3}: a, c, d tie at 2; ndeval takes d, then c (1.5, tied with a): 2, 1.5, 1.5, 0.5
    iq = {"q": {"0": {"c": 1, "d": 1}, "1": {"a": 1, "b": 1}, "2": {"c": 1}, "3": {"a": 1, "d": 1}}}
    run = {"q": {"a": 4.0, "c": 3.0, "b": 2.0, "d": 1.0}}
    theirs = _ndeval(iq, run, ["alpha-nDCG@4", "nERR-IA@4"], 1, 0.5, 0.5)["q"]
    res = evaluate_diversity(iq, run, ["alpha-nDCG@4", "nERR-IA@4"])
    for name in ("alpha-nDCG@4", "nERR-IA@4"):
        assert math.isclose(res.per_query(name)["q"], theirs[name], rel_tol=1e-12), name
    assert _greedy(_covers(iq, "q", 1), 0.5) == [2.0, 1.5, 1.5, 0.5]
