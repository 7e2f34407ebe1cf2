"""64-bit keys for (query, document) pairs.

Every document id is hashed with one function, :func:`string_hash` (64-bit FNV-1a over the UTF-8 bytes,
then the murmur3 finaliser): computed by the compiled tokenizer during its pass over a TREC block
(``ranklens.data._ctrec``), by ``_ctrec.hash_strings`` for any other string array (the qrels' ids, a block
read by the pure path), and by :func:`_hash_numpy` when the extension is not built, with identical values
(``tests/data/test_hash_paths.py``), so run and qrels keys always agree.

A hash is only ever used to *find candidates*: every match and every duplicate it reports is confirmed on
the exact strings before anything depends on it, so a collision can cost time, never a wrong number.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

try:  # the compiled id hash and duplicate test (src/ranklens/data/_ctrec.c); optional
    from ranklens.data import _ctrec
except ImportError:  # pragma: no cover - a build without a C compiler
    _ctrec = None  # type: ignore[assignment]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB93FE53EC53)
_S33 = np.uint64(33)

#: Below this many rows the exact paths (interned codes, one sort) are as fast as hashing.
HASH_FROM_ROWS = 1 << 19

#: A run's duplicate check hashes from this many rows on: a dictionary encode of 400k ids costs ~70 ms, their
#: hash a few ms, and the alignment reuses the hash (measured on the M collection's 16 MiB blocks).
HASH_DUPLICATES_FROM_ROWS = 1 << 17


def _compiled() -> object | None:
    """The extension, unless ``RANKLENS_PURE`` asks for the pure paths (tests, debugging)."""
    if _ctrec is None or os.environ.get("RANKLENS_PURE", "") not in ("", "0"):
        return None
    return _ctrec


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def string_hash(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The uint64 id hash of every string (the same in every process, on every path)."""
    if isinstance(values, pa.ChunkedArray):
        parts = [string_hash(c) for c in values.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    n = len(values)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32, count=n + 1, offset=values.offset * 4)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.empty(0, dtype=np.uint8)
    c = _compiled()
    if c is not None:
        out = c.hash_strings(_address(offsets), _address(data) if data.size else 0, data.size, n)  # type: ignore[attr-defined]
        return np.frombuffer(out, dtype=np.uint64)
    return _hash_numpy(offsets, data)


def _hash_numpy(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """:func:`string_hash` in numpy: byte position by byte position over the strings still that long
    (longest first), so the work is the total length of the strings, as in C."""
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    n = lengths.size
    order = np.argsort(-lengths, kind="stable")
    by_len, from_ = lengths[order], starts[order]
    h = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    longest = int(by_len[0]) if n else 0
    # how many strings are longer than j, for every j: by_len is descending
    active = np.searchsorted(-by_len, -np.arange(longest), side="left")
    with np.errstate(over="ignore"):
        for j in range(longest):
            k = int(active[j])
            part = h[:k]
            part ^= data[from_[:k] + j].astype(np.uint64)
            part *= _FNV_PRIME
        h ^= h >> _S33
        h *= _M1
        h ^= h >> _S33
        h *= _M2
        h ^= h >> _S33
    out = np.empty(n, dtype=np.uint64)
    out[order] = h
    return out


def pair_keys(query_codes: np.ndarray, doc_hashes: np.ndarray) -> np.ndarray:
    """Mix a query code into a document hash: one uint64 key per (query, document) pair."""
    q = query_codes.astype(np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        return doc_hashes ^ (q * _GOLDEN)


#: the top bits of a query-major key that hold the query code (:func:`query_major_keys`)
QUERY_BITS = 24


def query_major_keys(query_codes: np.ndarray, doc_hashes: np.ndarray) -> np.ndarray:
    """One uint64 key per (query, document) pair, ordered by query first: the query code in the top
    :data:`QUERY_BITS` bits, the top 40 bits of the document hash below. Sorted, each query's keys are
    contiguous, so looking a run's rows (grouped by query) up in the sorted qrels keys stays within a few
    cache lines per query, where :func:`pair_keys` sends every lookup across the whole array (5M qrels
    keys: ~1 µs a row). For query codes of :data:`QUERY_BITS` bits; a key still only proposes a match.

    >>> query_major_keys(np.array([0, 1]), np.array([2**63, 5], dtype=np.uint64)).tolist()
    [549755813888, 1099511627776]
    """
    with np.errstate(over="ignore"):
        return (query_codes.astype(np.uint64) << np.uint64(64 - QUERY_BITS)) | (doc_hashes >> np.uint64(QUERY_BITS))


def has_repeats(keys: np.ndarray, bounds: np.ndarray | None = None) -> bool:
    """True when some key occurs twice (within one segment ``[bounds[j], bounds[j+1])``, when given:
    the rows of one query, when each query's rows are contiguous)."""
    if keys.size < 2:
        return False
    c = _compiled()
    if c is not None:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if bounds is None:
            return bool(c.any_repeat(_address(keys), keys.size, 0, 0))  # type: ignore[attr-defined]
        b = np.ascontiguousarray(bounds, dtype=np.int64)
        return bool(c.any_repeat(_address(keys), keys.size, _address(b), b.size))  # type: ignore[attr-defined]
    s = np.sort(keys)  # segments or not: a repeat across segments is only a false "maybe", confirmed exactly
    return bool(np.any(s[1:] == s[:-1]))
