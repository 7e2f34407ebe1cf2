"""Issue 22 item 18: no pyarrow worker thread may still hold the bytes of an input when a reader returns.

The flaky SIGABRT (exit 134, "terminate called without an active exception", right after a one-line
input error) was a pyarrow worker finishing a CSV read after ``read_csv`` had returned: it dropped the
last reference to the reader and its ``BufferReader``, whose buffer wrapped the Python bytes of the file.
Dropping such a buffer takes the GIL; when the command had already printed its error and the interpreter
was exiting, Python ended that thread with ``pthread_exit``, and the unwinding through pyarrow's
``noexcept`` frames called ``std::terminate`` (core dump: ``PyBuffer::~PyBuffer`` ← ``BufferReader`` ←
``AsyncThreadedTableReader`` on a ``ThreadPool`` worker, the main thread in ``Py_FinalizeEx``).

So every reader that lends Python memory to a pyarrow reader takes it back before returning. The oracle
is the reference count of the bytes given to the reader: pyarrow's hold on them is one reference, so after
the call it must be back where it was. Measured before the fix: the worker still held the bytes after
about 5 in 100 reads (145 of 3,000), so 600 reads per reader miss it with a probability below 1e-13.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import pytest

from ranklens.data.readers import QRELS, RUN, delimited, json_formats, trec

READS = 600

_TREC = b"".join(b"q%d 0 d%d %d\n" % (i % 7, i, i % 3) for i in range(300))
_CSV = b"query_id,doc_id,relevance\n" + b"".join(b"q%d,d%d,%d\n" % (i % 7, i, i % 3) for i in range(300))
_JSONL = b"".join(b'{"query_id": "q%d", "doc_id": "d%d", "score": %d.5}\n' % (i % 7, i, i) for i in range(300))

# the three calls that hand Python memory to pyarrow's multi-threaded readers (each reader's parse step, right
# where pyarrow returns: the public readers do more work after it, which hides the race in most reads)
READERS: dict[str, tuple[bytes, Callable[[bytes], object]]] = {
    "trec": (_TREC, lambda data: trec._parse(data, b" ", trec._QRELS, skip_blank=False)),
    "csv": (_CSV[26:], lambda data: delimited._parse(data, ["query_id", "doc_id", "relevance"], (0, 1, 2), QRELS, ",")),
    "jsonl": (_JSONL, lambda data: json_formats._parse_jsonl(data, len(data), RUN, None)),
}


def _held_after(read: Callable[[bytes], object], data: bytes) -> int:
    """How many of READS reads returned while something still held a reference to ``data``."""
    baseline = sys.getrefcount(data)
    late = 0
    for _ in range(READS):
        read(data)
        if sys.getrefcount(data) != baseline:
            late += 1
            deadline = time.monotonic() + 5
            while sys.getrefcount(data) != baseline and time.monotonic() < deadline:
                time.sleep(0.001)  # (let the worker finish, so the next read starts clean)
    return late


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_reader_returns_only_once_pyarrow_has_let_go_of_its_input(reader: str) -> None:
    template, read = READERS[reader]
    data = bytes(bytearray(template))  # (a bytes object of our own: nobody else counts on it)
    assert read(data) is not None  # (pyarrow read it: the race is there to be lost)
    assert _held_after(read, data) == 0
