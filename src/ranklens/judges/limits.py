"""Requests-per-minute and tokens-per-minute limits shared by the threads of one run."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable


class RateLimiter:
    """A sliding one-minute window over requests and tokens; :meth:`acquire` blocks until both fit.

    A request larger than the whole token budget is let through alone (when the window is empty), so the run
    cannot deadlock. :meth:`settle` replaces a request's estimated tokens by the tokens the server reported.

    >>> lim = RateLimiter(rpm=2)
    >>> a = lim.acquire(10); b = lim.acquire(10)
    >>> lim.requests_in_window()
    2
    """

    def __init__(self, rpm: int | None = None, tpm: int | None = None, *, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._entries: collections.deque[list[float]] = collections.deque()  # [time, tokens]

    def _expire(self, now: float) -> None:
        while self._entries and self._entries[0][0] <= now - self.window:
            self._entries.popleft()

    def requests_in_window(self) -> int:
        """How many requests the current window holds."""
        with self._lock:
            self._expire(self._clock())
            return len(self._entries)

    def acquire(self, tokens: int) -> list[float]:
        """Wait until a request of ``tokens`` (estimated) fits; returns its handle for :meth:`settle`."""
        while True:
            with self._lock:
                now = self._clock()
                self._expire(now)
                used = sum(e[1] for e in self._entries)
                fits_rpm = self.rpm is None or len(self._entries) < self.rpm
                fits_tpm = self.tpm is None or used + tokens <= self.tpm or not self._entries
                if fits_rpm and fits_tpm:
                    entry = [now, float(tokens)]
                    self._entries.append(entry)
                    return entry
                wait = self._entries[0][0] + self.window - now
            self._sleep(max(wait, 0.001))

    def settle(self, entry: list[float], tokens: int) -> None:
        """Record the tokens a request really used."""
        with self._lock:
            entry[1] = float(tokens)
