"""RA-nWG@K and companions: the spec §6.2 numbers, an independent reference, NA handling, ties at the cut."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from click.testing import CliRunner

import ranklens
import ranklens.measures.rag  # noqa: F401  (registers the families)
from ranklens.cli.main import COMMANDS, cli
from ranklens.engine.kernels.rag import best_k_sum
from ranklens.errors import MeasureError
from ranklens.measures import parse
from ranklens.rag import evaluate_rag
from ranklens.results.core import na_counts

# small hand-made pools are often the run's own top d: the note saying so is tested in test_self_pooled_note.py
pytestmark = pytest.mark.filterwarnings("ignore:.*computed from the run itself")

# spec §6.2: pool of N = 20: 2×g5, 4×g4, 6×g3, 4×g2, 4×g1 → p00-p01 g5, p02-p05 g4, p06-p11 g3, p12-p15 g2, p16-p19 g1
GRADES = [5] * 2 + [4] * 4 + [3] * 6 + [2] * 4 + [1] * 4
QRELS = {"q": {f"p{i:02d}": g for i, g in enumerate(GRADES)}}
TOP5 = ["p00", "p06", "p02", "p12", "p07"]  # grades 5, 3, 4, 2, 3
POOL10 = TOP5 + ["p03", "p16", "p08", "p13", "p17"]  # grades 5,3,4,2,3, 4,1,3,2,1


def ranked(docs: list[str], top: float = 100.0) -> dict[str, dict[str, float]]:
    return {"q": {d: top - i for i, d in enumerate(docs)}}


def test_spec_6_2_set_measures() -> None:
    res = ranklens.evaluate(QRELS, ranked(TOP5), ["RAnWG@5", "NRecall4p@5", "NRecall5@5", "Precision4p@5", "Harm@5"])
    assert [round(v, 6) for v in res.aggregates] == [0.478788, 0.4, 0.5, 0.4, 0.2]


def test_spec_6_2_proc_over_the_runs_own_pool() -> None:
    # the run returned the 10-passage candidate list; its top 5 are the context set
    res = ranklens.evaluate(QRELS, ranked(POOL10), ["RAnWG@5", "PROC(depth=10)@5", "PctPROC(depth=10)@5", "PROC@5"])
    assert [round(v, 6) for v in res.aggregates] == [0.478788, 0.569697, 0.840426, 0.569697]


def test_spec_6_2_proc_with_a_separate_pool_run() -> None:
    res = evaluate_rag(QRELS, ranked(TOP5), k=5, pool=ranked(POOL10))
    got = {str(m): round(v, 6) for m, v in zip(res.measures, res.aggregates)}
    assert got["RAnWG@5"] == 0.478788
    assert got["PROC@5"] == 0.569697
    assert got["PctPROC@5"] == 0.840426
    assert any("candidate pool" in n for n in res.notes)


def test_spec_6_2_alpha_zero_and_fallback() -> None:
    assert round(ranklens.evaluate(QRELS, ranked(TOP5), "RAnWG(alpha=0)@5").aggregates[0], 6) == 0.485714
    # fallback: no grade 5 in the pool (3×g4, 5×g3, 2×g2); top-5 grades [4,3,3,2,4]
    grades = [4] * 3 + [3] * 5 + [2] * 2
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    top5 = ["d0", "d3", "d4", "d8", "d1"]
    assert round(ranklens.evaluate(qrels, ranked(top5), "RAnWG@5").aggregates[0], 6) == 0.705882


def reference_weights(pool: list[int], b=(1.0, 0.5, 0.1), alpha=1.0, cap4=1.0, cap3=0.25, fb=(1.0, 0.2)) -> dict[int, float]:
    """The paper's §2.4 definitions, written out with p_g = n_g / N (independent of the kernels)."""
    n = len(pool)
    count = {g: pool.count(g) for g in (5, 4, 3)}
    if count[5] == 0:
        return {5: 1.0, 4: fb[0], 3: fb[1]}
    r = {g: (bg / (count[g] / n) ** alpha if count[g] else 0.0) for g, bg in zip((5, 4, 3), b)}
    return {5: 1.0, 4: min(r[4] / r[5], cap4), 3: min(r[3] / r[5], cap3)}


def reference_ranwg(pool: list[int], topk: list[int | None], k: int, **kw: float) -> float:
    w = reference_weights(pool, **kw)
    weight = lambda g: w.get(g, 0.0) if g is not None else 0.0  # noqa: E731
    ideal = max(sum(weight(g) for g in s) for s in itertools.combinations(pool, min(k, len(pool))))
    obs = sum(weight(g) for g in topk[:k])
    return obs / ideal if ideal > 0 else math.nan


@pytest.mark.parametrize("seed", range(25))
def test_against_the_reference_with_exhaustive_ideal(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    pool = rng.integers(1, 6, n).tolist()
    qrels = {"q": {f"d{i}": g for i, g in enumerate(pool)}}
    retrieved = rng.permutation(n)[: int(rng.integers(1, n + 1))].tolist()
    run = {"q": {f"d{i}": float(len(retrieved) - r) for r, i in enumerate(retrieved)}}
    run["q"]["unjudged"] = -1.0  # not in the pool: weight 0
    k = int(rng.integers(1, 6))
    kw = {"alpha": float(rng.choice([0.0, 0.5, 1.0, 2.0])), "cap4": float(rng.choice([0.75, 1.0])), "cap3": float(rng.choice([0.2, 0.25, 0.33]))}
    topk = [pool[i] for i in retrieved] + [None]
    expected = reference_ranwg(pool, topk, k, **kw)
    m = parse(f"RAnWG(alpha={kw['alpha']},cap4={kw['cap4']},cap3={kw['cap3']})@{k}")
    got = ranklens.evaluate(qrels, run, [m]).values[0, 0]
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_best_k_sum_equals_exhaustive_search() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        w = rng.uniform(0, 2, 3)
        n = rng.integers(0, 4, 3).astype(float)
        k = int(rng.integers(1, 8))
        items = [w[i] for i in range(3) for _ in range(int(n[i]))]
        best = max((sum(c) for c in itertools.combinations(items, min(k, len(items)))), default=0.0)
        assert best_k_sum(w[None, :], n[None, :], k)[0] == pytest.approx(best)


def test_weights_do_not_depend_on_low_grades() -> None:
    """N cancels (spec §6.1, derived property): more judged grade-1/2 passages change nothing."""
    more = {"q": {**QRELS["q"], **{f"x{i}": 1 for i in range(30)}, **{f"y{i}": 2 for i in range(7)}}}
    a = ranklens.evaluate(QRELS, ranked(TOP5), "RAnWG@5").aggregates[0]
    assert ranklens.evaluate(more, ranked(TOP5), "RAnWG@5").aggregates[0] == pytest.approx(a)


def test_na_queries_are_excluded_and_counted() -> None:
    qrels = {**QRELS, "none": {"a": 1, "b": 2}, "no5": {"c": 4}}
    run = {**ranked(TOP5), "none": {"a": 1.0}, "no5": {"zz": 1.0}}
    with pytest.warns(ranklens.RanklensWarning, match="NA"):  # the NA counts, also as warnings
        res = ranklens.evaluate(qrels, run, ["RAnWG@5", "NRecall5@5", "NRecall4p@5", "Harm@5"])
    per = res.per_query("RAnWG@5")
    assert math.isnan(per["none"]) and per["no5"] == 0.0
    assert res["RAnWG@5"] == pytest.approx((0.478788 + 0.0) / 2, abs=1e-6)  # NA excluded
    assert math.isnan(res.per_query("NRecall5@5")["no5"])  # no grade 5: NA
    assert res["Harm@5"] == pytest.approx((0.2 + 0.2 + 0.0) / 3)  # Harm is never NA: plain mean
    assert na_counts(res) == {"RAnWG@5": 1, "NRecall4p@5": 1, "NRecall5@5": 2}
    with pytest.warns(ranklens.RanklensWarning, match="NA"):
        assert ranklens.evaluate(qrels, run, ["RAnWG@5"]).to_json_dict()["per_query"]["none"]["RAnWG@5"] is None


def test_every_query_na_gives_nan_mean() -> None:
    with pytest.warns(ranklens.RanklensWarning, match="1 of 1 query NA"):
        res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "RAnWG@3")
    assert math.isnan(res["RAnWG@3"])


def test_ties_at_the_cut() -> None:
    """trec cuts the doc-id order; average is the mean over every ordering of the tied documents."""
    qrels = {"q": {"a": 5, "b": 4, "c": 3, "d": 1, "e": 5}}
    run = {"q": {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.5}}
    trec = ranklens.evaluate(qrels, run, ["RAnWG@2", "Harm@2", "Precision4p@2"])
    # tie group {b, c, d} → doc id desc: d, c, b; top 2 = a, d
    assert trec.per_query("Harm@2")["q"] == 0.5
    avg = ranklens.evaluate(qrels, run, ["RAnWG(ties=average)@2", "Harm(ties=average)@2", "Precision4p(ties=average)@2"])
    docs = ["b", "c", "d"]
    brute = []
    for perm in itertools.permutations(docs):
        order = {"a": 3.0, "e": 0.5, **{d: 2.0 - i * 0.1 for i, d in enumerate(perm)}}
        brute.append(ranklens.evaluate(qrels, {"q": order}, ["RAnWG@2", "Harm@2", "Precision4p@2"]).aggregates)
    np.testing.assert_allclose(avg.aggregates, np.mean(brute, axis=0), atol=1e-12)


def test_top_shifts_the_scale() -> None:
    """A 0–4 scale with top=4 gives the numbers of the 1–5 scale."""
    shifted = {"q": {d: g - 1 for d, g in QRELS["q"].items()}}
    a = ranklens.evaluate(QRELS, ranked(TOP5), ["RAnWG@5", "Harm@5", "NRecall4p@5"]).aggregates
    b = ranklens.evaluate(shifted, ranked(TOP5), ["RAnWG(top=4)@5", "Harm(top=4)@5", "NRecall4p(top=4)@5"]).aggregates
    assert a == pytest.approx(b)


def test_measure_language() -> None:
    assert parse("RA-nWG@10") == parse("RAnWG@10") == parse("ranwg@10")
    assert str(parse("N-Recall5@5")) == "NRecall5@5"
    assert str(parse("pct_proc(depth=50)@10")) == "PctPROC(depth=50)@10"
    with pytest.raises(MeasureError, match="needs a cutoff"):
        parse("RAnWG").validate()
    with pytest.raises(MeasureError, match="depth"):
        parse("PROC(depth=5)@10")
    with pytest.raises(MeasureError, match="b5 must be > 0"):
        parse("RAnWG(b5=0)@10")


def test_multiple_queries_are_independent() -> None:
    """Vectorised over queries: each query's value is what it gets alone."""
    rng = np.random.default_rng(11)
    qrels, run = {}, {}
    for q in range(12):
        grades = rng.integers(1, 6, 15)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in enumerate(grades)}
        run[f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(rng.permutation(15)[:10])}
    ms = ["RAnWG@5", "PROC@5", "PctPROC@5", "NRecall4p@5", "Harm@3"]
    together = ranklens.evaluate(qrels, run, ms)
    for q in qrels:
        alone = ranklens.evaluate({q: qrels[q]}, {q: run[q]}, ms)
        np.testing.assert_allclose(together.values[together.query_ids.index(q)], alone.values[0], equal_nan=True)


def test_cli_eval_and_rag(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(COMMANDS, "rag", ("ranklens.cli.rag_cmd", "command", "RAG set measures."))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in QRELS["q"].items()))
    run = tmp_path / "sys.run"
    run.write_text("".join(f"q Q0 {d} {i + 1} {10 - i} sys\n" for i, d in enumerate(TOP5)))
    pool = tmp_path / "pool.run"
    pool.write_text("".join(f"q Q0 {d} {i + 1} {20 - i} pool\n" for i, d in enumerate(POOL10)))
    out = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "RA-nWG@5", "-f", "tsv"])
    assert out.exit_code == 0, out.output
    assert "RAnWG@5\tall\t0.47878787878" in out.output
    out = CliRunner().invoke(cli, ["rag", str(qrels), str(run), "--pool", str(pool), "-k", "5", "-f", "tsv"])
    assert out.exit_code == 0, out.output
    assert "PROC@5\tall\t0.5696969" in out.output and "PctPROC@5\tall\t0.84042553" in out.output


def test_the_kernel_table_has_the_rag_kernels() -> None:
    from ranklens.engine.kernels import KERNELS
    from ranklens.engine.kernels.rag import RAG_KERNELS

    assert {"RAnWG", "PROC", "PctPROC", "Harm"} <= set(RAG_KERNELS)
    assert all(KERNELS[name] is kernel for name, kernel in RAG_KERNELS.items())
