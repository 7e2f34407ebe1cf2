"""A wall-clock bound for tests that must never hang (FIFOs, endless inputs): ``with deadline(10): ...``."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so neither ranklens nor CliRunner can swallow it."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` if the block runs longer than ``seconds`` (SIGALRM; main thread only)."""

    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
