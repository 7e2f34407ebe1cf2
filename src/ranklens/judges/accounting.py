"""Counting what a run did: requests, retries and why, tokens, and the cost from a price table."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from ranklens.errors import FormatError
from ranklens.judges._files import read_table

#: the counters a run keeps, in the order the summary prints them
COUNTERS = ("requests", "retries", "malformed", "rate_limited", "server_errors", "timeouts",
            "connection_errors", "rejected", "response_format_refused", "too_large", "retry_after_capped",
            "claimed_elsewhere", "prompt_tokens", "completion_tokens")


@dataclass
class Usage:
    """Thread-safe counters of one run (see :data:`COUNTERS`).

    >>> u = Usage(); u.add("requests"); u.add("prompt_tokens", 120)
    >>> u.as_dict()["requests"], u.as_dict()["prompt_tokens"]
    (1, 120)
    """

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, n: int = 1) -> None:
        """Add ``n`` to counter ``name``."""
        with self._lock:
            self.counts[name] += n

    def as_dict(self) -> dict[str, int]:
        """A copy of the counters."""
        with self._lock:
            return dict(self.counts)


@dataclass(frozen=True)
class Price:
    """Prices of one model in currency units per million tokens."""

    prompt_per_million: float
    completion_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of the tokens.

        >>> Price(0.15, 0.60).cost(1_000_000, 500_000)
        0.45
        """
        return round((prompt_tokens * self.prompt_per_million + completion_tokens * self.completion_per_million) / 1e6, 10)


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a price table (TOML): one table per model with ``prompt_per_million`` and ``completion_per_million``::

        [models."gpt-4o-mini"]
        prompt_per_million = 0.15
        completion_per_million = 0.60

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "prices.toml"
    >>> _ = p.write_text('[models.m]\\nprompt_per_million = 1.0\\ncompletion_per_million = 2.0\\n')
    >>> load_prices(p)["m"].cost(1000, 1000)
    0.003
    """
    display = str(path)
    data = read_table(path)
    models = data.get("models")
    if set(data) != {"models"} or not isinstance(models, dict):
        raise FormatError(display, 'expected only tables [models."NAME"] with prompt_per_million, completion_per_million')
    out: dict[str, Price] = {}
    for name, entry in models.items():
        keys = {"prompt_per_million", "completion_per_million"}
        if not isinstance(entry, dict) or set(entry) != keys:
            raise FormatError(display, f"model {name!r}: expected exactly prompt_per_million and completion_per_million")
        values = [entry[k] for k in ("prompt_per_million", "completion_per_million")]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in values):
            raise FormatError(display, f"model {name!r}: prices must be non-negative numbers")
        out[name] = Price(float(values[0]), float(values[1]))
    return out
