"""numpy ↔ Arrow for fixed-width columns, through their buffers.

pyarrow's own conversions (``Array.to_numpy``, ``np.asarray(array)``, ``pa.array(ndarray)``, Python scalars
given to compute functions) ask its pandas shim first, and that imports pandas (~0.3 s) whenever pandas is
installed, even for an int32 column. Evaluating never needs pandas, so the hot path converts through the
buffers instead: the same bytes, zero-copy where Arrow allows it, and no import. Anything that is not a
fixed-width number or boolean (strings, nested types) is refused here and goes through pyarrow as before.

>>> import numpy as np
>>> a = from_numpy(np.array([3, 1, 2], dtype=np.int32))
>>> a.type, to_numpy(a).tolist()
(DataType(int32), [3, 1, 2])
>>> to_numpy(a.slice(1)).tolist(), to_numpy(from_numpy(np.array([True, False]))).tolist()
([1, 2], [True, False])
>>> string_array(["q1", "é", ""]).to_pylist()
['q1', 'é', '']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["fill_nulls", "from_numpy", "string_array", "to_numpy"]


def _numpy_dtype(t: pa.DataType) -> np.dtype[Any] | None:
    if pa.types.is_integer(t):
        return np.dtype(f"{'u' if pa.types.is_unsigned_integer(t) else 'i'}{t.bit_width // 8}")
    if pa.types.is_floating(t):
        return np.dtype(f"f{t.bit_width // 8}")
    return None


def to_numpy(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow array without nulls as numpy (zero-copy for numbers).

    Arrays with nulls, or of other types, go through ``Array.to_numpy`` (which may import pandas).
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if arr.null_count == 0:
        if pa.types.is_boolean(arr.type):
            return _bits(arr.buffers()[1], arr.offset, len(arr))
        dtype = _numpy_dtype(arr.type)
        if dtype is not None:
            data = arr.buffers()[1]
            if data is None or len(arr) == 0:
                return np.empty(0, dtype=dtype)
            return np.frombuffer(data, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)
    return np.asarray(arr.to_numpy(zero_copy_only=False))


def fill_nulls(arr: pa.Array | pa.ChunkedArray, value: int | float) -> np.ndarray:
    """A numeric Arrow array as numpy with its nulls replaced by ``value`` (no pandas import)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    dtype = _numpy_dtype(arr.type)
    if dtype is None:
        raise TypeError(f"fill_nulls needs a numeric array, got {arr.type}")
    if len(arr) == 0:
        return np.empty(0, dtype=dtype)
    validity, data = arr.buffers()[:2]
    out = np.frombuffer(data, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize).copy()
    if arr.null_count:
        out[~_bits(validity, arr.offset, len(arr))] = value
    return out


def _bits(buf: pa.Buffer, offset: int, n: int) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=bool)
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little", count=offset + n)
    return bits[offset:].astype(bool)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numeric or boolean numpy array as an Arrow array without nulls (zero-copy for numbers)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), values.size, [None, pa.py_buffer(packed)])
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), values.size, [None, pa.py_buffer(values)])


def string_array(values: list[str] | tuple[str, ...]) -> pa.Array:
    """Python strings (no ``None``) as an Arrow string array, built from its offsets and bytes."""
    encoded = [v.encode("utf-8") for v in values]
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    if lengths.sum() >= 2**31 - 1:  # beyond int32 offsets: let pyarrow choose the layout
        return pa.array(list(values), pa.string())
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), data])
