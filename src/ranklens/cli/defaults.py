"""Defaults of the command line (README "Conventions") that more than one module reads (kept free of click, so the express path
of ``ranklens eval`` can read them without importing it)."""

from __future__ import annotations

__all__ = ["DEFAULT_MEASURES"]

#: what ``ranklens eval`` (and ``compare``, ``gate`` …) evaluates when no ``-m`` is given
DEFAULT_MEASURES = ("nDCG@10", "AP", "P@10", "RR", "R@100")
