"""Spark backend: the engine's measures on Spark DataFrames, with exactly the in-memory engine's numbers.

Two execution paths (issue 15):

* ``path="arrow"`` (default): run and qrels are hash-partitioned by the query id together in one shuffle
  (``union(...).repartition(n, "query_id").mapInArrow(...)``: no sort, no pandas); every bucket is evaluated
  by the compiled pass or the engine's own :class:`~ranklens.engine.evaluator.Evaluator` (the one dispatcher
  decides), so every measure the engine supports is available and the values agree by construction.
* ``path="sql"``: pure Spark SQL (window functions, no Python worker) for nDCG, DCG, P, R, AP, RR and
  Success with trec_eval semantics; it runs where Python UDFs cannot (Spark Connect, serverless).

Both return a :class:`SparkEvaluation`: a per-query Spark DataFrame (``query_id, measure, value``) and the
driver-side :class:`~ranklens.results.core.Results` built with the one ``assemble``.

pyspark is imported only when a function runs (``pip install 'ranklens[spark]'``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SparkEvaluation", "evaluate", "evaluate_files", "session"]


def __getattr__(name: str) -> Any:
    if name in ("SparkEvaluation", "evaluate"):
        from ranklens.spark import core

        return getattr(core, name)
    if name == "evaluate_files":
        from ranklens.spark import files

        return files.evaluate_files
    if name == "session":
        from ranklens.spark import runtime

        return runtime.session
    raise AttributeError(f"module 'ranklens.spark' has no attribute {name!r}")
