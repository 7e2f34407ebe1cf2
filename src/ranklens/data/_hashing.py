"""64-bit keys for (query, document) pairs, hashed with Polars (multi-threaded, ~10× faster than
interning with a dictionary encode on millions of distinct ids).

A hash is only ever used to *find candidates*: every match and every duplicate it reports is confirmed on
the exact strings before anything depends on it, so a collision can cost time, never a wrong number.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

#: Below this many rows the exact paths (interned codes, one sort) are as fast as hashing, and they spare
#: the Polars import (~0.15 s), which is most of the time on a small collection.
HASH_FROM_ROWS = 1 << 19

#: A run's duplicate check hashes from this many rows on: a dictionary encode of 400k ids costs ~70 ms, their
#: hash ~10 ms, and the alignment reuses the hash (measured on the M collection's 16 MiB blocks).
HASH_DUPLICATES_FROM_ROWS = 1 << 17


def string_hash(values: pa.Array) -> np.ndarray:
    """A uint64 hash of every string (deterministic within one process)."""
    import polars as pl

    if len(values) == 0:
        return np.empty(0, dtype=np.uint64)
    return pl.Series(values=values).hash(seed=0).to_numpy()


def pair_keys(query_codes: np.ndarray, doc_hashes: np.ndarray) -> np.ndarray:
    """Mix a query code into a document hash: one uint64 key per (query, document) pair."""
    q = query_codes.astype(np.uint64) + np.uint64(1)
    return doc_hashes ^ (q * _GOLDEN)


def has_repeats(keys: np.ndarray) -> bool:
    """True when some key occurs twice (hash-based, multi-threaded)."""
    import polars as pl

    if keys.size < 2:
        return False
    return bool(pl.Series(values=keys).n_unique() != keys.size)
