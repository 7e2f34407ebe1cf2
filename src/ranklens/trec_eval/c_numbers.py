"""Numbers read the way trec_eval's C code reads them (``atol``, ``atof``): the leading number of the text.

trec_eval parses option values and measure cutoffs with ``atol``, so ``-M20abc`` means 20, ``-lx`` means 0
and a cutoff ``23.4`` means 23. ``ranklens trec-eval`` reproduces that; the rest of ranklens refuses such
text.
"""

from __future__ import annotations

import re

__all__ = ["atol", "cutoffs_as_atol"]

_ATOL = re.compile(r"\s*([+-]?[0-9]+)")


def atol(text: str | None) -> int:
    """C's ``atol``: the leading integer of ``text`` (after spaces), 0 when there is none.

    >>> atol("2"), atol("20abc"), atol("x"), atol(" -3"), atol("23.4")
    (2, 20, 0, -3, 23)
    """
    match = _ATOL.match(text or "")
    return int(match.group(1)) if match else 0


def cutoffs_as_atol(params: str) -> str:
    """A comma-separated cutoff list as trec_eval reads it: each item through ``atol``.

    >>> cutoffs_as_atol("10,20,23.4"), cutoffs_as_atol("1.5")
    ('10,20,23', '1')
    """
    return ",".join(str(atol(item)) for item in params.split(","))
