"""Blocked evaluation (issue 30): users evaluated in blocks of any size give the one-pass values bit for bit.

The one-pass path is the evaluation of the whole run at once (the run is below the automatic block size);
the blocked path cuts it into blocks of ``block_users`` users (1, a few, more than there are) and carries the
system-level measures and the notes' counts across them. Per-user values, the aggregates (system-level
ones included) and the notes must be identical: compared with ``==`` on the float bits, not a tolerance.
The streamed path (a TREC run file read in small blocks) must give the same too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.engine.blocked import split_run
from ranklens.engine.stream import evaluate_stream

MEASURES = [
    "nDCG@5", "Novelty@3", "ARP@3", "ILD@4", "ILD(on=cooccurrence)@4", "Serendipity@4", "F1@3", "FallOut@3", "AUC",
    "AUC(pooled=true)", "Coverage@3", "EntropyCoverage@3", "Gini@3", "Personalization@3", "Personalization@50",
]


def collection(seed: int, users: int):
    """Random qrels, run (tied scores included), train and catalog; some items in neither side table."""
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(int(rng.integers(3, 25)))]
    run, qrels, train = {}, {}, {}
    for u in range(users):
        uid = f"u{u:03d}"
        k = int(rng.integers(0 if u else 1, min(len(items), 12) + 1))
        if k:
            run[uid] = {i: float(rng.integers(0, 4)) for i in rng.choice(items, k, replace=False)}
        if rng.random() < 0.9:
            qrels[uid] = {i: int(rng.integers(-1, 3)) for i in rng.choice(items, int(rng.integers(1, min(5, len(items)))), replace=False)}
        if rng.random() < 0.8:
            train[uid] = [str(i) for i in rng.choice(items[:-1], int(rng.integers(1, min(6, len(items)))), replace=False)]
    train.setdefault("t_extra", [items[0]])
    qrels.setdefault("u000", {items[0]: 1})
    catalog = {"item": items[:-2], "genre": [f"g{int(rng.integers(0, 3))}" for _ in items[:-2]]}
    for f in range(3):
        catalog[f"f{f}"] = rng.integers(0, 3, len(items) - 2).astype(float).tolist()
    return qrels, run, train, catalog


def same(a: ranklens.Results, b: ranklens.Results) -> None:
    assert a.query_ids == b.query_ids
    assert a.values.shape == b.values.shape
    assert np.array_equal(a.values, b.values, equal_nan=True)  # the same bits (NaN where NA)
    assert [str(x) for x in a.aggregates] == [str(x) for x in b.aggregates], (a.aggregates, b.aggregates)
    assert a.notes == b.notes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1), users=st.integers(1, 40), block=st.integers(1, 50),
    exclude_seen=st.booleans(), empty=st.sampled_from([None, "skip", "zero", "one"]), shuffle=st.booleans(),
)
def test_blocked_equals_one_pass(seed, users, block, exclude_seen, empty, shuffle):
    qrels, run, train, catalog = collection(seed, users)
    ev = ranklens.Evaluator(MEASURES, qrels, train=train, items=catalog, exclude_seen=exclude_seen, empty=empty)
    r = ranklens.read_run(run)
    if shuffle:  # a query's rows apart: split_run groups them first
        perm = np.random.default_rng(seed).permutation(len(r))
        r = ranklens.Run.from_arrays(r.query_ids.take(r.query[perm]), r.docs.take(perm), r.score[perm])
    try:
        whole = ev.results(r)
    except ranklens.errors.InputError:  # (no user of the run in the qrels: the blocked path says the same)
        with pytest.raises(ranklens.errors.InputError):
            ev.results(r, block_users=block)
        return
    blocked = ev.results(r, block_users=block)
    assert ev.last_blocks == -(-r.num_queries // block)  # it did evaluate block by block
    same(whole, blocked)


def test_blocks_hold_whole_users():
    r = ranklens.read_run({"b": {"x": 1.0, "y": 2.0}, "a": {"x": 1.0}, "c": {"z": 3.0}})
    parts = list(split_run(r, 2))
    assert [p.query_ids.to_pylist() for p in parts] == [["a", "b"], ["c"]]
    assert sum(len(p) for p in parts) == len(r)
    assert [p.doc_ids is r.doc_ids for p in parts] == [True, True]  # one document vocabulary, interned once


@pytest.mark.parametrize("block_bytes", [64, 300, 1 << 20])
def test_streamed_equals_one_pass(tmp_path, block_bytes):
    qrels, run, train, catalog = collection(7, 30)
    lines = [f"{u} Q0 {i} 0 {s} t" for u in sorted(run) for i, s in run[u].items()]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    for policy in ({"exclude_seen": True, "empty": "skip"}, {"empty": "zero"}):
        ev = ranklens.Evaluator(MEASURES, qrels, train=train, items=catalog, **policy)
        whole = ev.results(ranklens.read_run(str(path)))
        streamed = evaluate_stream(ev, str(path), block_bytes=block_bytes)
        assert streamed.options["streamed"] is True
        same(whole, dataclasses.replace(streamed, options=whole.options))


def test_missing_zero_is_not_blocked():
    """A query the run lacks is scored once over the whole run: missing='zero' keeps one pass."""
    qrels, run, train, catalog = collection(3, 12)
    qrels["nobody"] = {"i0": 1}
    ev = ranklens.Evaluator(MEASURES, qrels, train=train, items=catalog, missing="zero")
    assert not ev.blockable and not ev.streamable
    res = ev.results(ranklens.read_run(run), block_users=2)
    assert "nobody" in res.query_ids


def test_a_run_above_the_block_size_is_blocked_by_itself(monkeypatch):
    """Above BLOCK_USERS users (50k; 4 here) an evaluator with side tables blocks the run without being asked;
    without side tables or system-level measures it never does."""
    import ranklens.engine.evaluator as evaluator

    monkeypatch.setattr(evaluator, "BLOCK_USERS", 4)
    qrels, run, train, catalog = collection(11, 10)
    ev = ranklens.Evaluator(MEASURES, qrels, train=train, items=catalog)
    r = ranklens.read_run(run)
    blocked = ev.results(r)
    assert ev.last_blocks == -(-r.num_queries // 4)
    same(ev.results(r, block_users=r.num_queries + 1), blocked)  # one block: the one-pass values
    plain = ranklens.Evaluator(["nDCG@5"], qrels)
    plain.results(r)
    assert not hasattr(plain, "last_blocks")
