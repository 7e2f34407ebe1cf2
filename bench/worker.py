"""One timed phase of one tool, in a process of its own (so its peak memory is its own).

    python -m bench.worker TOOL PHASE OUT.json QRELS RUN [RUN ...]

Phases: ``load`` (read qrels and run from files), ``ndcg`` (mean nDCG@10 on loaded data), ``four``
(nDCG@10, AP, R@100, RR with per-query values, on loaded data), ``many`` (qrels once, then each run
read and evaluated in turn). The library is imported before the clock starts; the CLI phase, which
counts import time, is run by ``bench.run`` directly. Writes ``{"seconds", "means", "per_query",
"counts", "many"}`` as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.tools import TOOLS

PHASES = ("load", "ndcg", "four", "many")


def run_phase(tool_name: str, phase: str, qrels_path: str, run_paths: list[str]) -> dict[str, Any]:
    tool = TOOLS[tool_name]
    tool.warm_import()
    out: dict[str, Any] = {}
    if phase == "many":
        start = time.perf_counter()
        out["many"] = tool.many(qrels_path, run_paths)
        out["seconds"] = time.perf_counter() - start
        return out
    start = time.perf_counter()
    qrels, run = tool.load_qrels(qrels_path), tool.load_run(run_paths[0])
    loaded = time.perf_counter()
    if phase == "load":
        out["seconds"] = loaded - start
        out["counts"] = tool.counts(qrels, run)
        return out
    compute = tool.ndcg if phase == "ndcg" else tool.four
    start = time.perf_counter()
    means, native = compute(qrels, run)
    out["seconds"] = time.perf_counter() - start
    out["means"] = means
    out["per_query"] = tool.per_query(native, run)  # untimed: conversion for the agreement check
    return out


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 5 or args[1] not in PHASES or args[0] not in TOOLS:
        raise SystemExit(__doc__)
    tool_name, phase, out_path, qrels_path, *run_paths = args
    result = run_phase(tool_name, phase, qrels_path, run_paths)
    with open(out_path, "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
