"""The two ways of matching (query, document) pairs give the same numbers.

Small inputs are matched on interned ids (exact, no Polars import); from ``HASH_FROM_ROWS`` rows on (the duplicate check from ``HASH_DUPLICATES_FROM_ROWS``), on
64-bit hashes whose every match is confirmed on the strings. These tests force each path on the same
data, and force hash collisions, so both stay correct whatever the size threshold is.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens.data import _hashing
from ranklens.errors import DuplicateError

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "R@100", "nDCG(ties=trec)@3"]


def _collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{int(x)}" for x in rng.choice(200, size=40, replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:25]}
        # coarse scores make ties, so the doc-id tie-break is exercised too
        run[f"q{q}"] = {d: float(rng.integers(0, 5)) for d in docs[10:]}
    return qrels, run


def _modules() -> tuple[object, object]:
    import importlib  # (``ranklens.data.run`` the attribute is not the module: import it by name)

    return importlib.import_module("ranklens.data.run"), importlib.import_module("ranklens.engine.alignment")


def _force(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    run_module, align_module = _modules()
    for module in (_hashing, run_module, align_module):
        for name in ("HASH_FROM_ROWS", "HASH_DUPLICATES_FROM_ROWS"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hashed_and_exact_matching_agree(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    qrels, run = _collection(seed)
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    hashed = ranklens.evaluate(qrels, run, MEASURES)
    assert exact.query_ids == hashed.query_ids
    np.testing.assert_array_equal(exact.values, hashed.values)


def test_colliding_hashes_cost_time_not_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _collection(3)
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    run_module, align_module = _modules()

    def constant(values: object) -> np.ndarray:  # every id hashes alike: every key collides
        return np.zeros(len(values), dtype=np.uint64)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "string_hash", constant)
    monkeypatch.setattr(align_module, "string_hash", constant)
    collided = ranklens.evaluate(qrels, run, MEASURES)
    np.testing.assert_array_equal(exact.values, collided.values)


@pytest.mark.parametrize("rows", [0, 1 << 40])
def test_a_repeated_document_is_refused_on_both_paths(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    _force(monkeypatch, rows)
    with pytest.raises(DuplicateError, match="appears twice for query 'q1'"):
        ranklens.Run.from_arrays(["q1", "q2", "q1"], ["a", "a", "a"], [3.0, 2.0, 1.0])


# ------------------------------------------------------------------ one id hash on every path (issue 12)

import pyarrow as pa  # noqa: E402

from ranklens.data import _intern  # noqa: E402
from ranklens.data.readers import trec  # noqa: E402

needs_c = pytest.mark.skipif(_hashing._ctrec is None, reason="ranklens.data._ctrec is not built")

IDS = ["", "a", "d91797410", "é中文", "x" * 300, "b", "clueweb12-0000tw-05-12114", " ", "\t", "d1", "d10", "1d"]


def _py_hash(b: bytes) -> int:  # the definition, byte by byte: FNV-1a 64, then the murmur3 finaliser
    m = (1 << 64) - 1
    h = 0xCBF29CE484222325
    for x in b:
        h = ((h ^ x) * 0x100000001B3) & m
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & m
    h ^= h >> 33
    h = (h * 0xC4CEB93FE53EC53) & m
    return h ^ (h >> 33)


def _arrays() -> list[pa.Array]:
    rng = np.random.default_rng(7)
    rand = ["".join(chr(int(c)) for c in rng.integers(33, 0x3000, size=int(n))) for n in rng.integers(0, 40, size=300)]
    whole = pa.array(IDS * 3 + rand)
    return [whole, whole.slice(5, 40), whole.slice(len(IDS)), pa.array([], pa.string()), pa.array(["", ""]), pa.array(["q"])]


@pytest.mark.parametrize("pure", [False, True])
def test_the_id_hash_is_its_definition_on_every_path(monkeypatch: pytest.MonkeyPatch, pure: bool) -> None:
    if not pure and _hashing._ctrec is None:
        pytest.skip("ranklens.data._ctrec is not built")
    monkeypatch.setenv("RANKLENS_PURE", "1" if pure else "0")
    for arr in _arrays():
        got = _hashing.string_hash(arr)
        assert got.dtype == np.uint64 and got.size == len(arr)
        assert got.tolist() == [_py_hash(s.encode()) for s in arr.to_pylist()]
    chunked = pa.chunked_array([pa.array(IDS[:4]), pa.array(IDS[4:])])
    assert _hashing.string_hash(chunked).tolist() == [_py_hash(s.encode()) for s in IDS]


@needs_c
def test_the_tokenizer_hashes_documents_as_string_hash_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKLENS_PURE", "0")
    text = "".join(f"q{i % 3}\tQ0  {d} {i} {10 - i}.5 tag extra\n" for i, d in enumerate(x for x in IDS if x.strip()))
    cols = trec.read_run(("# comment\n\n" + text).encode(), "r.run")
    assert cols.doc_hash is not None
    assert cols.doc_hash.tolist() == [_py_hash(s.encode()) for s in cols.doc_id.to_pylist()]
    monkeypatch.setenv("RANKLENS_PURE", "1")
    pure = trec.read_run(("# comment\n\n" + text).encode(), "r.run")
    assert pure.doc_hash is None  # computed later by string_hash: the same values (test above)


@pytest.mark.parametrize("pure", [False, True])
def test_repeat_detection_on_both_paths(monkeypatch: pytest.MonkeyPatch, pure: bool) -> None:
    if not pure and _hashing._ctrec is None:
        pytest.skip("ranklens.data._ctrec is not built")
    monkeypatch.setenv("RANKLENS_PURE", "1" if pure else "0")
    u = np.uint64
    assert not _hashing.has_repeats(np.array([], u))
    assert not _hashing.has_repeats(np.array([0], u))
    assert _hashing.has_repeats(np.array([0, 5, 0], u))  # the key 0 counts like any other
    assert _hashing.has_repeats(np.array([7, 1, 2, 3, 7], u))
    assert not _hashing.has_repeats(np.arange(1, 5000, dtype=u) * u(0x9E3779B97F4A7C15))
    assert _hashing.has_repeats(np.array([1, 2, 3, 3], u), np.array([0, 2, 4]))  # within the second segment
    assert not _hashing.has_repeats(np.array([1, 2, 3, 4], u), np.array([0, 2, 4]))
    # a repeat across segments (two queries) is no duplicate: C does not look there, numpy may say "maybe"
    # (the caller confirms every "maybe" on the exact ids)
    assert _hashing.has_repeats(np.array([5, 5], u), np.array([0, 1, 2])) == pure
    rng = np.random.default_rng(0)
    for _ in range(50):
        keys = rng.integers(0, 40, size=int(rng.integers(2, 60))).astype(u)
        assert _hashing.has_repeats(keys) == (np.unique(keys).size != keys.size)


@pytest.mark.parametrize("seed", range(6))
def test_grouped_interning_is_sorted_interning(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"q{int(x)}" for x in rng.integers(0, 12, size=int(rng.integers(0, 80)))]
    if seed % 2:
        ids.sort(key=lambda q: hash(q) % 7)  # contiguous runs, not sorted
    arr = pa.array(ids, pa.string())
    codes, vocab, bounds = _intern.intern_grouped(arr)
    ref_codes, ref_vocab = _intern.intern_sorted(arr)
    assert codes.tolist() == ref_codes.tolist() and vocab.to_pylist() == ref_vocab.to_pylist()
    if bounds is not None:  # every id one contiguous run, bounds its offsets
        assert bounds[0] == 0 and bounds[-1] == len(ids) and np.unique(codes[bounds[:-1]]).size == bounds.size - 1
        assert all(len(set(codes[a:b].tolist())) == 1 for a, b in zip(bounds[:-1], bounds[1:]))


def test_run_documents_colliding_with_judged_ones_cost_time_not_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    """The qrels keys are distinct, but unjudged run documents hash like judged ones: the sorted-keys
    search finds them, the check on the strings refuses them."""
    qrels, run = _collection(4)
    run = {q: {**docs, **{"x" + d[1:]: 0.5 for d in qrels[q]}} for q, docs in run.items()}
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    run_module, align_module = _modules()
    real = _hashing.string_hash

    def alike(values: object) -> np.ndarray:  # 'x5' hashes as 'd5'
        return real(pa.array([v.replace("x", "d", 1) for v in values.to_pylist()], pa.string()))  # type: ignore[attr-defined]

    monkeypatch.setattr(run_module, "string_hash", alike)
    monkeypatch.setattr(align_module, "string_hash", alike)
    collided = ranklens.evaluate(qrels, run, MEASURES)
    np.testing.assert_array_equal(exact.values, collided.values)


@pytest.mark.parametrize("pure", [False, True])
def test_streamed_blocks_match_on_the_tokenizer_hash(monkeypatch: pytest.MonkeyPatch, tmp_path: object, pure: bool) -> None:
    """The stream hands the tokenizer's hashes to the run, the qrels are hashed by string_hash: same keys."""
    from ranklens.engine.stream import evaluate_stream

    qrels, run = _collection(5)
    path = tmp_path / "r.run"  # type: ignore[operator]
    path.write_text("".join(
        f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())
    ))
    _force(monkeypatch, 1 << 40)
    exact = ranklens.evaluate(qrels, run, MEASURES)
    _force(monkeypatch, 0)
    monkeypatch.setenv("RANKLENS_PURE", "1" if pure else "0")
    for block_bytes in (200, 4000, 1 << 20):
        streamed = evaluate_stream(ranklens.Evaluator(MEASURES, qrels), str(path), block_bytes=block_bytes)
        assert streamed.query_ids == exact.query_ids
        np.testing.assert_array_equal(streamed.values, exact.values)


@pytest.mark.filterwarnings("ignore:.*not in the qrels")
@pytest.mark.parametrize("limit", [0, 1 << 20])
def test_query_codes_by_dictionary_and_by_index_in_agree(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    _, align_module = _modules()
    qrels, run = _collection(6)
    run["only-in-run"] = {"d1": 1.0}
    monkeypatch.setattr(align_module, "QUERY_DICT_MAX", 1 << 40)
    ref = ranklens.evaluate(qrels, run, MEASURES)
    monkeypatch.setattr(align_module, "QUERY_DICT_MAX", limit)
    got = ranklens.evaluate(qrels, run, MEASURES)
    assert got.query_ids == ref.query_ids
    np.testing.assert_array_equal(got.values, ref.values)


@pytest.mark.parametrize("seed", range(6))
def test_interning_by_one_sort_is_sorted_interning(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"d{int(x)}" for x in rng.integers(0, 10 ** (seed % 3 + 1), size=int(rng.integers(0, 200)))] + ["", "é", "D"]
    arr = pa.array(ids, pa.string()).slice(seed % 2)
    codes, vocab = _intern.intern_distinct(arr)
    ref_codes, ref_vocab = _intern.intern_sorted(arr)
    assert codes.tolist() == ref_codes.tolist() and vocab.to_pylist() == ref_vocab.to_pylist()


@pytest.mark.parametrize("seed", range(3))
def test_query_major_keys_sort_by_query_first(seed: int) -> None:
    """The join's keys put each query's pairs together when sorted, whatever the document hashes."""
    from ranklens.data._hashing import QUERY_BITS, query_major_keys

    rng = np.random.default_rng(seed)
    q = rng.integers(0, (1 << QUERY_BITS) - 1, 1000)
    h = rng.integers(0, 2**63, 1000, dtype=np.uint64) * np.uint64(2)
    keys = query_major_keys(q, h)
    assert np.array_equal(np.sort(q), q[np.argsort(keys, kind="stable")])
    assert np.array_equal(keys >> np.uint64(64 - QUERY_BITS), q.astype(np.uint64))
