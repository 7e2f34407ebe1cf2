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

import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

__all__ = ["fill_nulls", "from_numpy", "read_lent", "string_array", "to_numpy"]

T = TypeVar("T")
_TAKE_BACK_SECONDS = 10.0  # (a worker holds the bytes for microseconds; this only bounds a wait that never ends)


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


def read_lent(data: Any, read: Callable[[pa.BufferReader], T], errors: tuple[type[BaseException], ...] = ()) -> T | None:
    """``read`` (a pyarrow reader) over the memory of ``data`` (bytes, a memoryview, a numpy array) without a
    copy; None if it raises one of ``errors``. Returns only once pyarrow has let go of the memory.

    pyarrow's CSV reader finishes on its worker threads, which may drop the last reference to the input after
    the call has returned. Dropping a buffer that wraps Python memory takes the GIL, and a thread that asks
    for the GIL while the interpreter exits is ended by ``pthread_exit``, whose unwinding through pyarrow's
    frames aborts the process ("terminate called without an active exception", exit 134, right after a
    command printed its error: issue 22 item 18). So the memory is lent through a memoryview and taken back
    (``memoryview.release()`` succeeds only once no buffer export is left) before this returns.

    >>> import pyarrow.csv as pacsv
    >>> read_lent(b"a,b\\n1,2\\n", pacsv.read_csv).num_rows
    1
    """
    view = memoryview(data)
    try:
        try:
            return read(pa.BufferReader(pa.py_buffer(view)))
        except errors:
            return None
        except BaseException as e:  # (its traceback's frames would keep the buffer: cleared, so it can be taken back)
            traceback.clear_frames(e.__traceback__)
            raise
    finally:
        _take_back(view)


def _take_back(view: memoryview) -> None:
    deadline = time.monotonic() + _TAKE_BACK_SECONDS
    while True:
        try:
            view.release()
            return
        except BufferError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.0005)  # (lets the worker take the GIL and drop its reference)
