"""A thread-safe LRU cache of computed read results, bounded in bytes (and in entries).

The A/B page caches its paired per-query values per snapshot pair, measure, segment and test; a 200,000-query
pair is some 15 MB, so a cache bounded by the number of entries could grow to gigabytes. Each value here
comes with its estimated size; the least recently used entries go until the total is within ``max_bytes``,
and a value larger than the whole budget is computed and returned but not kept.

    >>> c = BoundedCache(max_bytes=100)
    >>> c.get("a", lambda: "x" * 60, size=lambda v: len(v)), c.get("b", lambda: "y" * 60, size=len)[:1], c.keys()
    ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'y', ['b'])
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["BoundedCache"]


class BoundedCache:
    """LRU of at most ``max_entries`` values whose estimated sizes add up to at most ``max_bytes``."""

    def __init__(self, *, max_bytes: int, max_entries: int = 1024) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.bytes = 0
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Any], size: Callable[[Any], int]) -> Any:
        """The cached value of ``key``, else ``compute()`` (kept when ``size(value)`` fits the budget)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key][0]
        value = compute()
        n = int(size(value))
        if n > self.max_bytes:
            return value
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._data[key] = (value, n)
            self.bytes += n
            while self.bytes > self.max_bytes or len(self._data) > self.max_entries:
                _, (_, dropped) = self._data.popitem(last=False)
                self.bytes -= dropped
        return value

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0
