"""Parity of the recommender measures (issue 16) with an independent brute-force reference written here,
on small random data (hypothesis), and with Microsoft Recommenders' / Evidently's published formulas,
written out below from their documentation (the packages are not installed).

Where the definitions differ:

* Microsoft Recommenders' ``novelty`` is the mean of −log2(n_i/U) over every recommendation row (a mean
  over (user, item) pairs); ours is the mean over users of each user's mean (Vargas & Castells' per-list
  novelty, as the issue defines it). They agree when every user has the same number of top-k items found
  in the training data — the test below checks that case, and that they differ otherwise.
* Microsoft Recommenders' ``catalog_coverage`` divides the distinct recommended items by the distinct
  training items without intersecting them; ours counts only catalogue items (a note counts the others),
  so it never exceeds 1. They agree when every recommended item is in the training data.
* Microsoft Recommenders' per-user AUC (``auc``) is scikit-learn's roc_auc_score over the scored items
  (ties ½); our per-user AUC orders tied scores as every ranklens measure does (trec: doc id descending),
  so the tests use distinct scores; the pooled AUC uses the raw scores with ties ½, as scikit-learn.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens

ITEMS = [f"i{j}" for j in range(9)]


# ------------------------------------------------------------------------------------------ the data


@st.composite
def scenario(draw):
    """qrels (test), run (recs, distinct scores), train, item features and categories."""
    n_users = draw(st.integers(2, 6))
    users = [f"u{u}" for u in range(n_users)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    run, qrels, train = {}, {}, {}
    for u in users:
        k = int(rng.integers(1, 8))
        items = rng.choice(ITEMS, k, replace=False).tolist()
        scores = rng.permutation(k).astype(float) + rng.random()  # distinct
        run[u] = dict(zip(items, scores.tolist()))
        judged = rng.choice(ITEMS, int(rng.integers(1, 6)), replace=False).tolist()
        qrels[u] = {i: int(rng.integers(0, 3)) for i in judged}
        if rng.random() < 0.85:
            train[u] = rng.choice(ITEMS[:-1], int(rng.integers(1, 5)), replace=False).tolist()
    train.setdefault("t_extra", ["i0", "i1"])
    features = {i: rng.integers(0, 3, 3).astype(float).tolist() for i in ITEMS[:-2]}  # i7, i8: not in the catalog
    category = {i: f"c{int(rng.integers(0, 3))}" for i in ITEMS[:-2]}
    return qrels, run, train, features, category


def top_k(ranking: dict[str, float], k: int) -> list[str]:
    return [d for d, _ in sorted(ranking.items(), key=lambda t: (-t[1], tuple(-ord(c) for c in t[0])))][:k]


def item_users(train):
    n = {}
    for items in train.values():
        for i in set(items):
            n[i] = n.get(i, 0) + 1
    return n


def cos(a, b):
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    return 0.0 if na == 0 or nb == 0 else sum(x * y for x, y in zip(a, b)) / (na * nb)


def cooc_sim(train, i, j):
    n = item_users(train)
    if i not in n or j not in n:
        return 0.0
    both = sum(1 for items in train.values() if i in items and j in items)
    return both / math.sqrt(n[i] * n[j])


def evaluated(qrels, run):
    return sorted(set(qrels) & set(run))


# ------------------------------------------------------------------------------- brute-force measures


def ref_novelty(qrels, run, train, k):
    n, users = item_users(train), len(train)
    out = {}
    for u in evaluated(qrels, run):
        vals = [-math.log2(n[i] / users) for i in top_k(run[u], k) if i in n]
        out[u] = sum(vals) / len(vals) if vals else math.nan
    return out


def ref_arp(qrels, run, train, k):
    n = item_users(train)
    return {u: float(np.mean([n.get(i, 0) for i in top_k(run[u], k)])) for u in evaluated(qrels, run)}


def ref_ild(qrels, run, sim, known, k):
    out = {}
    for u in evaluated(qrels, run):
        items = [i for i in top_k(run[u], k) if i in known]
        pairs = list(itertools.combinations(items, 2))
        out[u] = float(np.mean([1 - sim(a, b) for a, b in pairs])) if pairs else math.nan
    return out


def ref_serendipity(qrels, run, train, k, rel=1):
    out = {}
    for u in evaluated(qrels, run):
        history = train.get(u, [])
        if not history:
            out[u] = math.nan
            continue
        vals = []
        for i in top_k(run[u], k):
            relevant = 1.0 if qrels[u].get(i, -1) >= rel else 0.0
            vals.append((1 - np.mean([cooc_sim(train, i, j) for j in history])) * relevant)
        out[u] = float(np.mean(vals))
    return out


def ref_f1(qrels, run, k, rel=1):
    out = {}
    for u in evaluated(qrels, run):
        rels = {d for d, g in qrels[u].items() if g >= rel}
        hit = sum(1 for d in top_k(run[u], k) if d in rels)
        p, r = hit / k, (hit / len(rels) if rels else 0.0)
        out[u] = 2 * p * r / (p + r) if p + r else 0.0
    return out


def ref_fallout(qrels, run, k, rel=1):
    out = {}
    for u in evaluated(qrels, run):
        nonrel = {d for d, g in qrels[u].items() if 0 <= g < rel}
        fp = sum(1 for d in top_k(run[u], k) if d in nonrel)
        out[u] = fp / len(nonrel) if nonrel else 0.0
    return out


def ref_auc(qrels, run, rel=1):
    out = {}
    for u in evaluated(qrels, run):
        order = top_k(run[u], 10**6)
        pos = {d: order.index(d) if d in order else math.inf for d in qrels[u]}
        rels = [d for d, g in qrels[u].items() if g >= rel]
        non = [d for d, g in qrels[u].items() if 0 <= g < rel]
        if not rels or not non:
            out[u] = math.nan
            continue
        wins = sum(1.0 if pos[a] < pos[b] else 0.5 if pos[a] == pos[b] else 0.0 for a in rels for b in non)
        out[u] = wins / (len(rels) * len(non))
    return out


def ref_pooled_auc(qrels, run, rel=1):
    from sklearn.metrics import roc_auc_score

    y, s = [], []
    for u in evaluated(qrels, run):
        for d, g in qrels[u].items():
            if g >= 0:
                y.append(1 if g >= rel else 0)
                s.append(run[u].get(d, -1e300))
    return roc_auc_score(y, s) if 0 < sum(y) < len(y) else math.nan


def exposures(qrels, run, k):
    c = {}
    for u in evaluated(qrels, run):
        for i in top_k(run[u], k):
            c[i] = c.get(i, 0) + 1
    return c


def ref_gini(counts, catalog):
    x = np.array(sorted(counts.get(i, 0) for i in catalog), dtype=float)
    n = x.size
    return sum((2 * (j + 1) - n - 1) * x[j] for j in range(n)) / (n * x.sum())


def ref_personalization(qrels, run, k):
    lists = [set(top_k(run[u], k)) for u in evaluated(qrels, run)]
    sims = [len(a & b) / math.sqrt(len(a) * len(b)) for a, b in itertools.combinations(lists, 2)]
    return 1 - float(np.mean(sims))


def close(ours: dict[str, float], ref: dict[str, float]) -> None:
    assert ours.keys() == ref.keys()
    for u in ref:
        if math.isnan(ref[u]):
            assert math.isnan(ours[u]), u
        else:
            assert ours[u] == pytest.approx(ref[u], abs=1e-12), u


def evaluate(qrels, run, measures, **kw):
    return ranklens.Evaluator(measures, qrels, **kw)(run, warn=False)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenario(), st.integers(1, 6))
def test_per_user_measures_match_brute_force(data, k):
    qrels, run, train, features, category = data
    items = {"item": list(features), "f1": [v[0] for v in features.values()], "f2": [v[1] for v in features.values()],
             "f3": [v[2] for v in features.values()]}
    names = [f"Novelty@{k}", f"ARP@{k}", f"ILD@{k}", f"Serendipity@{k}", f"F1@{k}", f"FallOut@{k}", "AUC"]
    res = evaluate(qrels, run, names, train=train, items=items)
    close(res.per_query(f"Novelty@{k}"), ref_novelty(qrels, run, train, k))
    close(res.per_query(f"ARP@{k}"), ref_arp(qrels, run, train, k))
    close(res.per_query(f"ILD@{k}"), ref_ild(qrels, run, lambda a, b: cos(features[a], features[b]), features, k))
    close(res.per_query(f"Serendipity@{k}"), ref_serendipity(qrels, run, train, k))
    close(res.per_query(f"F1@{k}"), ref_f1(qrels, run, k))
    close(res.per_query(f"FallOut@{k}"), ref_fallout(qrels, run, k))
    close(res.per_query("AUC"), ref_auc(qrels, run))
    nov = [v for v in ref_novelty(qrels, run, train, k).values() if not math.isnan(v)]
    assert res[f"Novelty@{k}"] == pytest.approx(float(np.mean(nov)) if nov else math.nan, nan_ok=True)


@SETTINGS
@given(scenario(), st.integers(1, 6))
def test_ild_category_and_cooccurrence(data, k):
    qrels, run, train, features, category = data
    items = {"item": list(category), "genre": list(category.values())}
    res = evaluate(qrels, run, [f"ILD@{k}"], items=items)
    close(res.per_query(f"ILD@{k}"), ref_ild(qrels, run, lambda a, b: float(category[a] == category[b]), category, k))
    res = evaluate(qrels, run, [f"ILD@{k}"], train=train)
    known = item_users(train)
    close(res.per_query(f"ILD@{k}"), ref_ild(qrels, run, lambda a, b: cooc_sim(train, a, b), known, k))


@SETTINGS
@given(scenario(), st.integers(1, 6))
def test_system_measures_match_brute_force(data, k):
    qrels, run, train, features, category = data
    names = [f"Coverage@{k}", f"EntropyCoverage@{k}", f"Gini@{k}", f"Personalization@{k}", "AUC(pooled=true)"]
    res = evaluate(qrels, run, names, train=train)
    assert set(res.system) == set(names)
    counts = exposures(qrels, run, k)
    catalog = set(item_users(train))
    assert res[f"Coverage@{k}"] == pytest.approx(len(set(counts) & catalog) / len(catalog))
    p = np.array(list(counts.values()), dtype=float) / sum(counts.values())
    assert res[f"EntropyCoverage@{k}"] == pytest.approx(float(-(p * np.log2(p)).sum()), abs=1e-12)
    in_catalog = {i: c for i, c in counts.items() if i in catalog}
    if in_catalog:
        assert res[f"Gini@{k}"] == pytest.approx(ref_gini(in_catalog, catalog), abs=1e-12)
        # the same Gini as the mean absolute difference (Evidently's / the textbook form): Σ|x_i − x_j| / (2 n² μ)
        x = np.array([in_catalog.get(i, 0) for i in catalog], dtype=float)
        mad = np.abs(x[:, None] - x[None, :]).sum() / (2 * x.size**2 * x.mean())
        assert res[f"Gini@{k}"] == pytest.approx(mad, abs=1e-12)
    if len(evaluated(qrels, run)) >= 2:
        assert res[f"Personalization@{k}"] == pytest.approx(ref_personalization(qrels, run, k), abs=1e-12)
    assert res["AUC(pooled=true)"] == pytest.approx(ref_pooled_auc(qrels, run), abs=1e-12, nan_ok=True)
    # a system-level measure has no per-query value: the Results model says so
    with pytest.raises(ranklens.errors.MeasureError, match="system-level"):
        res.per_query(f"Coverage@{k}")
    doc = res.to_json_dict()
    assert doc["system"] == list(res.system)
    assert all(f"Coverage@{k}" not in row for row in doc["per_query"].values())


@SETTINGS
@given(scenario(), st.integers(1, 6))
def test_exclude_seen_equals_prefiltering(data, k):
    qrels, run, train, _, _ = data
    filtered = {u: {i: s for i, s in r.items() if i not in train.get(u, [])} for u, r in run.items()}
    filtered = {u: r for u, r in filtered.items() if r}
    names = [f"nDCG@{k}", f"Novelty@{k}", f"Coverage@{k}"]
    ours = evaluate(qrels, run, names, train=train, exclude_seen=True)
    dropped = sum(len(r) for r in run.values()) - sum(len(r) for r in filtered.values())
    assert any(f"dropped {dropped:,} of" in n for n in ours.notes)
    # a user all of whose recommendations were seen keeps an empty list: evaluated, and scores 0 on nDCG
    assert set(ours.query_ids) == set(evaluated(qrels, run))
    emptied = set(evaluated(qrels, run)) - set(filtered)
    assert all(ours.per_query(f"nDCG@{k}")[u] == 0.0 for u in emptied)
    if emptied or not evaluated(qrels, filtered):
        return
    ref = evaluate(qrels, filtered, names, train=train)
    for name in names:
        assert ours[name] == pytest.approx(ref[name], nan_ok=True)


@SETTINGS
@given(scenario(), st.sampled_from(["median", "p90", "p25", "min", "max"]))
def test_aggregates(data, agg):
    qrels, run, train, _, _ = data
    res = evaluate(qrels, run, [f"ARP(agg={agg})@5", "ARP@5"], train=train)
    per = np.array(list(res.per_query("ARP@5").values()))
    want = {"median": np.median, "min": np.min, "max": np.max}.get(agg) or (lambda v: np.percentile(v, float(agg[1:])))
    assert res[f"ARP(agg={agg})@5"] == pytest.approx(float(want(per)))
    assert evaluate(qrels, run, ["ARP@5"], train=train, aggregate=agg)[f"ARP(agg={agg})@5"] == res[f"ARP(agg={agg})@5"]


@SETTINGS
@given(scenario())
def test_empty_user_policy(data):
    qrels, run, train, _, _ = data
    names = ["P@3", "ARP@3"]
    base = evaluate(qrels, run, names, train=train)
    empty = {u for u in base.query_ids if not any(g >= 1 for g in qrels[u].values())}
    skip = evaluate(qrels, run, names, train=train, empty="skip")
    assert set(skip.query_ids) == set(base.query_ids) - empty
    assert any("empty=skip" in n for n in skip.notes)
    one = evaluate(qrels, run, names, train=train, empty="one")
    for u in base.query_ids:
        assert one.per_query("P@3")[u] == (1.0 if u in empty else base.per_query("P@3")[u])
        assert one.per_query("ARP@3")[u] == base.per_query("ARP@3")[u]  # not a relevance measure


# ------------------------------------------------------ Microsoft Recommenders' / Evidently's formulas


def ms_novelty(reco: list[tuple[str, str]], train: dict[str, list[str]]) -> float:
    """Microsoft Recommenders python_evaluation.novelty: historical_item_novelty(i) = −log2(n_i / U) over
    the train users, then Σ_i novelty(i)·count_i / Σ_i count_i over the recommended items found in train."""
    n, users = item_users(train), len(train)
    rows = [i for _, i in reco if i in n]
    return float(np.mean([-math.log2(n[i] / users) for i in rows]))


def ms_catalog_coverage(reco, train) -> float:
    """catalog_coverage = |distinct recommended items| / |distinct training items|."""
    return len({i for _, i in reco}) / len({i for items in train.values() for i in items})


def ms_distributional_coverage(reco) -> float:
    """distributional_coverage = −Σ p(i) log2 p(i), p(i) = count of i in reco / number of reco rows."""
    items = [i for _, i in reco]
    p = np.array([items.count(i) for i in set(items)], dtype=float) / len(items)
    return float(-(p * np.log2(p)).sum())


def ms_diversity(reco, train) -> float:
    """diversity (item_sim_measure='item_cooccurrence_count'): per user 1 − the mean over item pairs of
    cooccurrence(i, j)/√(count_i·count_j), then the mean over users."""
    by_user: dict[str, list[str]] = {}
    for u, i in reco:
        by_user.setdefault(u, []).append(i)
    vals = []
    for items in by_user.values():
        pairs = list(itertools.combinations(items, 2))
        if pairs:
            vals.append(1 - np.mean([cooc_sim(train, a, b) for a, b in pairs]))
    return float(np.mean(vals))


def ms_serendipity(reco, train, relevant) -> float:
    """serendipity: user_item_serendipity(u, i) = (1 − mean_{j ∈ train items of u} sim(i, j))·relevance(u, i);
    user_serendipity = mean over the user's recommended items; serendipity = mean over users."""
    by_user: dict[str, list[float]] = {}
    for u, i in reco:
        sim = np.mean([cooc_sim(train, i, j) for j in train[u]])
        by_user.setdefault(u, []).append((1 - sim) * (1.0 if (u, i) in relevant else 0.0))
    return float(np.mean([np.mean(v) for v in by_user.values()]))


def evidently_personalization(reco) -> float:
    """Evidently's Personalization@k: 1 − the mean pairwise cosine similarity of the users' binary top-k
    item vectors (the user × item matrix of the recommendations)."""
    users = sorted({u for u, _ in reco})
    items = sorted({i for _, i in reco})
    m = np.zeros((len(users), len(items)))
    for u, i in reco:
        m[users.index(u), items.index(i)] = 1
    norm = m / np.linalg.norm(m, axis=1, keepdims=True)
    sim = norm @ norm.T
    upper = sim[np.triu_indices(len(users), 1)]
    return float(1 - upper.mean())


def _uniform_scenario(seed: int):
    """Every user has exactly k recommended items, all of them in train (where MS and ours coincide)."""
    rng = np.random.default_rng(seed)
    items = [f"m{j}" for j in range(12)]
    train = {f"u{u}": rng.choice(items, 4, replace=False).tolist() for u in range(8)}
    train["everything"] = list(items)  # every item is in train
    k = 3
    run, qrels = {}, {}
    for u in [u for u in train if u != "everything"]:
        unseen = [i for i in items if i not in train[u]]
        picked = rng.choice(unseen, 5, replace=False).tolist()
        run[u] = {i: float(5 - j) for j, i in enumerate(picked)}
        qrels[u] = {i: int(rng.integers(0, 2)) for i in rng.choice(items, 4, replace=False).tolist()}
    reco = [(u, i) for u in run for i in top_k(run[u], k)]
    return qrels, run, train, reco, k


@pytest.mark.parametrize("seed", range(5))
def test_microsoft_recommenders_and_evidently_formulas(seed):
    qrels, run, train, reco, k = _uniform_scenario(seed)
    names = [f"Novelty@{k}", f"Coverage@{k}", f"EntropyCoverage@{k}", f"ILD@{k}", f"Serendipity@{k}", f"Personalization@{k}"]
    res = evaluate(qrels, run, names, train=train)
    assert res[f"Novelty@{k}"] == pytest.approx(ms_novelty(reco, train))
    assert res[f"Coverage@{k}"] == pytest.approx(ms_catalog_coverage(reco, train))
    assert res[f"EntropyCoverage@{k}"] == pytest.approx(ms_distributional_coverage(reco))
    assert res[f"ILD@{k}"] == pytest.approx(ms_diversity(reco, train))
    relevant = {(u, i) for u in qrels for i, g in qrels[u].items() if g >= 1}
    assert res[f"Serendipity@{k}"] == pytest.approx(ms_serendipity(reco, train, relevant))
    assert res[f"Personalization@{k}"] == pytest.approx(evidently_personalization(reco))


def test_microsoft_novelty_differs_when_lists_differ_in_length():
    train = {"a": ["x", "y"], "b": ["x"], "c": ["z"]}
    run = {"a": {"x": 2.0, "y": 1.0, "z": 0.5}, "b": {"z": 1.0}}
    qrels = {"a": {"x": 1}, "b": {"z": 1}}
    res = evaluate(qrels, run, ["Novelty@3"], train=train)
    reco = [(u, i) for u in run for i in top_k(run[u], 3)]
    ours = np.mean([np.mean([-math.log2(2 / 3), -math.log2(1 / 3), -math.log2(1 / 3)]), -math.log2(1 / 3)])
    assert res["Novelty@3"] == pytest.approx(ours)
    assert res["Novelty@3"] != pytest.approx(ms_novelty(reco, train))  # MS: the mean over the 4 rows
