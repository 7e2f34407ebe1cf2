"""Interning of string ids to integer codes with pyarrow (one pass, multi-threaded)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data._arrow import fill_nulls, from_numpy, string_array, to_numpy


def to_string_array(values: Any) -> pa.Array:
    """Return ``values`` as a flat Arrow string array (ids are always compared as strings)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, (list, tuple)) and all(type(v) is str for v in values):
        values = string_array(values)
    if not isinstance(values, pa.Array):
        values = pa.array(np.asarray(values, dtype=object) if not isinstance(values, list) else values)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
        values = values.cast(pa.string())
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
    return values


def intern_sorted(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Intern ``values`` to int32 codes whose order is the byte order of the ids (``strcmp`` order).

    Returns ``(codes, vocabulary)`` with ``vocabulary[codes[i]] == values[i]`` and the vocabulary sorted.

    >>> codes, vocab = intern_sorted(to_string_array(["b", "a", "b", "10", "9"]))
    >>> codes.tolist(), vocab.to_pylist()
    ([3, 2, 3, 0, 1], ['10', '9', 'a', 'b'])
    """
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    dictionary = encoded.dictionary
    indices = to_numpy(encoded.indices)
    order = to_numpy(pc.sort_indices(dictionary))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[indices], dictionary.take(from_numpy(order))


def lookup(vocabulary_from: pa.Array, vocabulary_to: pa.Array) -> np.ndarray:
    """Map each id of ``vocabulary_from`` to its code in ``vocabulary_to`` (-1 when absent)."""
    if len(vocabulary_from) == 0:
        return np.empty(0, dtype=np.int32)
    idx = pc.index_in(vocabulary_from, value_set=vocabulary_to)
    return fill_nulls(idx, -1).astype(np.int32, copy=False)
