"""The Python API on data in memory (issue 26): mean nDCG@10 of a run of ``--rows`` rows already in memory,
from pandas frames and from ``{qid: {doc: value}}`` dicts, against pytrec_eval from dicts (and ranx and
ir_measures), each in a fresh process.

    python -m bench.api_memory --rows 1000000 --repeat 3
    python -m bench.api_memory --rows 20000 --tools ranklens-dicts,pytrec_eval      # a quick look

Each worker first makes the same call on one query (imports, ranx's numba compilation: not timed), builds
its inputs (10 judged documents per query, 100 retrieved; scores distinct, so every tool ranks alike), then
times the one call that turns them into the mean (pytrec_eval: building its evaluator and evaluating; ranx:
building its Qrels and Run and evaluating). Memory: the process's peak RSS (``VmHWM``,
data included: every tool holds the same inputs) and the call's own growth (the peak during the call, reset
with ``/proc/self/clear_refs`` just before it, less the RSS before it). Wall times are the call's, the
median of the repetitions (tools interleaved); every value is checked against pytrec_eval's to 1e-9 before
a time is shown. The call's CPU time (``time.process_time``, every thread of the process) is shown too: on
a shared machine it moves less with the load than the wall time does. ``ranklens-*-reference`` force the reference engine (``RANKLENS_BACKEND=reference``) for
comparison. Writes nothing but the table (standard output).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]

TOOLS = (
    "ranklens-pandas", "ranklens-dicts", "pytrec_eval", "ir_measures", "ranx", "ranklens-pandas-reference",
    "ranklens-dicts-reference",
)
DEFAULT_TOOLS = TOOLS[:5]
DOCS_PER_QUERY = 100
JUDGED_PER_QUERY = 10


def _status(field: str) -> float:
    """A field of /proc/self/status in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def build(rows: int, kind: str) -> tuple[Any, Any]:
    """The qrels and the run of ``rows`` rows as dicts (``kind="dicts"``) or pandas frames: deterministic."""
    import numpy as np

    n_q = max(1, rows // DOCS_PER_QUERY)
    rng = np.random.default_rng(26)
    scores = rng.permutation(n_q * DOCS_PER_QUERY).astype(np.float64) / 7.0  # (distinct: no ties)
    labels = rng.integers(0, 4, size=n_q * JUDGED_PER_QUERY)
    judged_at = rng.integers(0, DOCS_PER_QUERY * 2, size=n_q * JUDGED_PER_QUERY)  # (half of them retrieved)
    qids = [f"q{i}" for i in range(n_q)]
    if kind == "dicts":
        run = {q: {f"d{j}": float(scores[i * DOCS_PER_QUERY + j]) for j in range(DOCS_PER_QUERY)} for i, q in enumerate(qids)}
        qrels: dict[str, dict[str, int]] = {}
        for k in range(n_q * JUDGED_PER_QUERY):
            qrels.setdefault(qids[k // JUDGED_PER_QUERY], {})[f"d{judged_at[k]}"] = int(labels[k])
        return qrels, run
    import pandas as pd

    run_df = pd.DataFrame({
        "query_id": np.repeat(np.array(qids, dtype=object), DOCS_PER_QUERY),
        "doc_id": [f"d{j}" for _ in range(n_q) for j in range(DOCS_PER_QUERY)],
        "score": scores,
    })
    q_rows: dict[tuple[str, str], int] = {}
    for k in range(n_q * JUDGED_PER_QUERY):
        q_rows[(qids[k // JUDGED_PER_QUERY], f"d{judged_at[k]}")] = int(labels[k])
    qrels_df = pd.DataFrame({
        "query_id": [q for q, _ in q_rows], "doc_id": [d for _, d in q_rows], "relevance": list(q_rows.values()),
    })
    return qrels_df, run_df


def worker(tool: str, rows: int) -> dict[str, Any]:
    """Build the inputs, reset the peak RSS, time the one call; the value, the seconds and the memory."""
    kind = "pandas" if "pandas" in tool else "dicts"
    if tool.endswith("-reference"):
        os.environ["RANKLENS_BACKEND"] = "reference"
    import warnings

    warnings.simplefilter("ignore")  # (ranklens's notes, ranx's numba warnings: not timed, not shown)
    call(tool, *build(DOCS_PER_QUERY, kind))  # (warm-up on one query: imports, numba compilation; not timed)
    qrels, run = build(rows, kind)
    build_peak = _status("VmHWM")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # (resets VmHWM to the current RSS)
    before = _status("VmRSS")
    start, cpu = time.perf_counter(), time.process_time()
    value = call(tool, qrels, run)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    call_peak = _status("VmHWM")
    return {
        "tool": tool, "value": value, "seconds": seconds, "cpu_s": cpu, "rss_before_mb": before, "call_growth_mb": call_peak - before,
        "peak_mb": max(build_peak, call_peak),
    }


def call(tool: str, qrels: Any, run: Any) -> float:
    """The mean nDCG@10 of ``run`` by ``tool``: the call a user makes with the inputs in memory."""
    if tool == "pytrec_eval":
        import pytrec_eval

        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        return statistics.fmean(v["ndcg_cut_10"] for v in per_query.values())
    if tool == "ir_measures":
        import ir_measures

        return float(ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)[ir_measures.nDCG @ 10])
    if tool == "ranx":
        import ranx

        return float(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@10"))
    import ranklens

    return float(ranklens.evaluate(qrels, run, "nDCG@10")["nDCG@10"])


def _spawn(tool: str, rows: int) -> dict[str, Any]:
    from bench.measure import spawn

    env = {k: v for k, v in os.environ.items() if k not in ("RANKLENS_BACKEND", "RANKLENS_DEBUG")}
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    argv = [sys.executable, "-m", "bench.api_memory", "--worker", tool, "--rows", str(rows)]
    done = spawn(argv, timeout=1800, env=env, cwd=repo)
    if not done.ok:
        raise SystemExit(f"{tool}: {done.failure()}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_s"] = done.seconds
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.api_memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--tools", default=",".join(DEFAULT_TOOLS), help=f"comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.rows)))
        return 0
    tools = [t for t in args.tools.split(",") if t]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; expected some of {', '.join(TOOLS)}")
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    for _ in range(args.repeat):
        for t in tools:  # (interleaved: a load change on the machine touches every tool alike)
            runs[t].append(_spawn(t, args.rows))
    oracle = runs["pytrec_eval"][0]["value"] if "pytrec_eval" in runs else None
    for t, got in runs.items():
        if oracle is not None and abs(got[0]["value"] - oracle) > 1e-9:
            raise SystemExit(f"{t}: mean nDCG@10 {got[0]['value']!r} differs from pytrec_eval's {oracle!r}")
    base = statistics.median(r["seconds"] for r in runs["pytrec_eval"]) if "pytrec_eval" in runs else None
    base_cpu = statistics.median(r["cpu_s"] for r in runs["pytrec_eval"]) if "pytrec_eval" in runs else None
    base_peak = max(r["peak_mb"] for r in runs["pytrec_eval"]) if "pytrec_eval" in runs else None
    print(f"mean nDCG@10 of {args.rows:,} rows in memory ({args.rows // DOCS_PER_QUERY:,} queries), "
          f"median of {args.repeat}, fresh processes; value {oracle if oracle is not None else runs[tools[0]][0]['value']:.6f}")
    print()
    print("| tool | call s | vs pytrec_eval | call CPU s | vs pytrec_eval (CPU) | process peak RSS MB | held before the call MB "
          "| call's own growth MB |")
    print("|---|---|---|---|---|---|---|---|")
    summary: dict[str, tuple[float, float, float, float]] = {}
    for t, got in runs.items():
        s = statistics.median(r["seconds"] for r in got)
        peak = max(r["peak_mb"] for r in got)
        growth = max(r["call_growth_mb"] for r in got)
        held = statistics.median(r["rss_before_mb"] for r in got)
        summary[t] = (s, peak, growth, held)
        cpu = statistics.median(r["cpu_s"] for r in got)
        ratio = f"{base / s:.1f}× faster" if base else "—"
        cpu_ratio = f"{base_cpu / cpu:.1f}×" if base_cpu and cpu > 0 else "—"
        print(f"| {t} | {s:.3f} | {ratio} | {cpu:.3f} | {cpu_ratio} | {peak:.0f} | {held:.0f} | {growth:.0f} |")
    if base and base_peak:
        print()
        print("| target | measured | met? |")
        print("|---|---|---|")
        for t, want in (("ranklens-pandas", 5.0), ("ranklens-dicts", 2.0)):
            if t in summary:
                got_ratio = base / summary[t][0]
                print(f"| {t} ≥ {want:g}× faster than pytrec_eval from dicts | {got_ratio:.1f}× | {'yes' if got_ratio >= want else 'no'} |")
        base_growth = summary["pytrec_eval"][2]
        for t in ("ranklens-pandas", "ranklens-dicts"):
            if t in summary:
                share = summary[t][1] / base_peak
                print(f"| {t} process peak ≤ ½ of pytrec_eval's | {summary[t][1]:.0f} / {base_peak:.0f} MB = {share:.2f} "
                      f"(held before the call: {summary[t][3]:.0f} MB, pytrec_eval {summary['pytrec_eval'][3]:.0f} MB) "
                      f"| {'yes' if share <= 0.5 else 'no'} |")
                grown = summary[t][2]
                print(f"| {t} memory the call adds ≤ ½ of pytrec_eval's | {grown:.0f} / {base_growth:.0f} MB "
                      f"| {'yes' if grown <= 0.5 * base_growth else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
