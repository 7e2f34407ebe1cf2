"""What the express forms of the command line (``eval``, ``compare``, ``gate``, ``explain`` before click) print
once their work is done: the notes on standard error, then the output, a reader that stops early (``| head``)
being no error, as in the full interface. Imports nothing but ``os`` and ``sys`` (start-up matters here)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["emit"]


def emit(text: str, err_lines: Iterable[str] = ()) -> None:
    """Write ``err_lines`` (each ended by a newline) to standard error, then ``text`` to standard output.

    >>> emit("nDCG@10 0.5\\n")
    nDCG@10 0.5
    """
    try:
        err = "".join(line + "\n" for line in err_lines)
        if err:
            sys.stderr.write(err)
            sys.stderr.flush()
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # (as the full interface: a reader that stops early, `| head`, is no error)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
