"""``bounds --settle``: the documents to judge to settle which of two runs is better, checked against an
exhaustive search on small generated cases — every labelling of every unjudged document evaluated by a plain
``ranklens.evaluate`` call on qrels written out in full, every subset of documents tried as the set to judge:
the answer is sufficient, no smaller set is, and no other set of its size is."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.research.settle import settle

EX = Path(__file__).resolve().parents[2] / "examples"


def _case(seed: int) -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(7)]
    qrels: dict[str, dict[str, int]] = {}
    a: dict[str, dict[str, float]] = {}
    b: dict[str, dict[str, float]] = {}
    for q in ("q1", "q2"):
        judged = rng.choice(pool, size=4, replace=False)
        qrels[q] = {str(d): int(rng.integers(0, 3)) for d in judged}
        qrels[q][str(judged[0])] = 2  # (every query has a relevant document and grades 0..2 occur)
        qrels[q][str(judged[1])] = 0
        for run in (a, b):
            docs = rng.choice(pool, size=3, replace=False)
            run[q] = {str(d): float(3 - i) for i, d in enumerate(docs)}
    return qrels, a, b


def _unjudged(qrels: dict, runs: list[dict], k: int) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    out = set()
    for run in runs:
        for q, docs in run.items():
            ranked = sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d]))[:k]
            out.update((q, d) for d in ranked if d not in qrels[q])
    return sorted(out)


def _sign(x: float) -> int:
    return 0 if abs(x) <= 1e-12 else (1 if x > 0 else -1)


def _signs(qrels: dict, a: dict, b: dict, measure: str, docs: list[tuple[str, str]]) -> dict[tuple[int, ...], int]:  # type: ignore[type-arg]
    out = {}
    for bits in itertools.product((0, 2), repeat=len(docs)):
        full = {q: dict(v) for q, v in qrels.items()}
        for (q, d), g in zip(docs, bits):
            full[q][d] = g
        va = ranklens.evaluate(full, a, measure).per_query(measure)
        vb = ranklens.evaluate(full, b, measure).per_query(measure)
        out[bits] = _sign(float(np.mean([vb[q] - va[q] for q in sorted(set(va) & set(vb))])))
    return out


def _sufficient(signs: dict[tuple[int, ...], int], subset: tuple[int, ...], n: int) -> bool:
    seen: dict[tuple[int, ...], int] = {}
    for bits, s in signs.items():
        key = tuple(bits[i] for i in subset)
        if seen.setdefault(key, s) != s:
            return False
    return True


@pytest.mark.parametrize("measure", ["P@3", "RR@3", "nDCG@3", "AP@3"])
def test_settle_is_the_unique_smallest_sufficient_set(measure: str) -> None:
    tried = 0
    for seed in range(6):
        qrels, a, b = _case(seed)
        docs = _unjudged(qrels, [a, b], 3)
        if not docs or len(docs) > 6:
            continue
        tried += 1
        signs = _signs(qrels, a, b, measure, docs)
        n = len(docs)
        sufficient = [s for r in range(n + 1) for s in itertools.combinations(range(n), r) if _sufficient(signs, s, n)]
        smallest = min(len(s) for s in sufficient)
        minimal = [s for s in sufficient if len(s) == smallest]
        assert len(minimal) == 1  # (unique)
        got = settle(qrels, {"a": a, "b": b}, measure)
        assert got.exact
        assert got.to_judge == tuple(docs[i] for i in minimal[0]), (seed, measure)
        assert got.settled == (smallest == 0) == (len(set(signs.values())) == 1)
    assert tried >= 3


def test_to_judge_is_what_judge_pairs_pools(tmp_path: Path) -> None:
    """--to-judge writes a run whose pool (judge pairs, depth 100) is exactly the documents to judge."""
    to_judge = tmp_path / "tj.trec"
    qrels, bm25, dense = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")
    result = CliRunner().invoke(cli, ["bounds", qrels, bm25, dense, "-m", "RR@10", "--settle", "--to-judge", str(to_judge), "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    want = {(t["query"], t["doc"]) for t in doc["settle"]["to_judge"]}
    assert doc["settle"]["fewest"] == len(want) == 2 and not doc["settle"]["settled"]
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q}\n" for q in sorted({q for q, _ in want})))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": d, "text": f"text {d}"}) + "\n" for d in sorted({d for _, d in want})))
    pairs = tmp_path / "pairs.jsonl"
    r = CliRunner().invoke(cli, ["judge", "pairs", str(to_judge), "--depth", "100", "--topics", str(topics),
                                 "--corpus", str(corpus), "-o", str(pairs)])
    assert r.exit_code == 0, r.output
    got = {(p["query_id"], p["doc_id"]) for p in map(json.loads, pairs.read_text().splitlines())}
    assert got == want


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-m", "P@5", "--to-judge", "x.trec"], "--to-judge needs --settle"),
        (["-m", "P@5", "-m", "RR@10", "--settle"], "--settle compares two runs on one measure"),
    ],
)
def test_settle_bad_input_is_one_line_exit_2(args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["bounds", str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run"), *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.output


@pytest.mark.parametrize("measure", ["nDCG@3", "AP@3"])
def test_thinned_sums_never_drop_a_needed_document(measure: str) -> None:
    """With the other queries' sums thinned to a few values (max_sums=2), the answer still holds every
    pivotal document; it equals the exact answer when it says ``exact``."""
    for seed in range(6):
        qrels, a, b = _case(seed)
        docs = _unjudged(qrels, [a, b], 3)
        if not docs or len(docs) > 6:
            continue
        full = settle(qrels, {"a": a, "b": b}, measure)
        thin = settle(qrels, {"a": a, "b": b}, measure, max_sums=2)
        assert set(full.to_judge) <= set(thin.to_judge)
        if thin.exact:
            assert thin.to_judge == full.to_judge
        else:
            assert thin.notes
