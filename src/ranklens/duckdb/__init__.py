"""The DuckDB engine (issue 30): the one SQL formulation (:mod:`ranklens.sql`) executed by DuckDB, with the
in-memory engine's numbers, notes and refusals; ``--engine duckdb [--memory-limit SIZE]`` in ``eval``,
``compare`` and ``gate``, and :func:`evaluate` in Python. duckdb is imported only when a function runs
(``pip install 'ranklens[duckdb]'``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate", "evaluate_run_paths"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from ranklens.duckdb.api import evaluate

        return evaluate
    if name == "evaluate_run_paths":
        from ranklens.duckdb.files import evaluate_run_paths

        return evaluate_run_paths
    raise AttributeError(f"module 'ranklens.duckdb' has no attribute {name!r}")
