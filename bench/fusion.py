"""Fusion speed against ranx, each contender in its own capped process: ``python -m bench.fusion --queries 1000,3000,10000``.

Three runs of ``queries × docs`` are generated once per size as Parquet under ``--data`` (each run retrieves
``docs`` documents per query out of a pool of ``1.5 × docs``, so documents are missing from some runs). Then,
for every size, method and contender (ranx, ranklens), a **fresh process** reads the three files, builds its
library's runs (not timed), warms up on a small fusion (ranx's numba kernels compile there), times only the
``fuse`` call (min-max normalisation, best of ``--repeat``) and reports its time and its peak RSS. Every
contender runs under a hard address-space cap (``RLIMIT_AS``, ``--cap-gb``, 12 by default), so a process that
would not fit fails cleanly with a MemoryError instead of waking the OOM killer; such a row says "did not fit in
N GB". Contenders run one after the other, never together, so their memory is not summed. ``--check`` writes
each fused run to Parquet (not timed) and prints the largest absolute score difference where both fitted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

CONTENDERS = ("ranx", "ranklens")
WEIGHTS = [0.5, 0.3, 0.2]


def generate(queries: int, docs: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run's rows: query index, document index (out of ``1.5 × docs``) and a uniform score."""
    rng = np.random.default_rng(seed)
    pool = int(docs * 1.5)
    doc = np.empty((queries, docs), dtype=np.int64)
    for start in range(0, queries, 1000):  # bounded memory at 10k queries
        stop = min(queries, start + 1000)
        doc[start:stop] = np.argsort(rng.random((stop - start, pool)), axis=1)[:, :docs]
    score = rng.random((queries, docs))
    query = np.repeat(np.arange(queries), docs)
    return query, doc.ravel(), score.ravel()


def write_runs(data: Path, queries: int, docs: int, row_order: str = "random") -> list[Path]:
    """Write the three runs of one size as Parquet (once; reused when present). ``row_order``: ``random``
    (each query's rows in random order) or ``trec`` (score descending, as retrieval systems and TREC run files
    write them; the same rows, so ranx's work is the same)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tag = "" if row_order == "random" else f"_{row_order}"
    paths = [data / f"fusion_{queries}x{docs}{tag}_r{seed}.parquet" for seed in range(3)]
    if all(p.exists() for p in paths):
        return paths
    data.mkdir(parents=True, exist_ok=True)
    qids = np.array([f"q{i}" for i in range(queries)])
    dids = np.array([f"d{i}" for i in range(int(docs * 1.5))])
    for seed, path in enumerate(paths):
        q, d, s = generate(queries, docs, seed)
        if row_order == "trec":  # (scores are distinct floats: no tie to break by document id)
            order = np.lexsort((-s, q))
            q, d, s = q[order], d[order], s[order]
        table = pa.table({"query_id": pa.array(qids[q]), "doc_id": pa.array(dids[d]), "score": s})
        pq.write_table(table, path)
    return paths


def peak_rss_mb() -> float:
    """This process's peak resident set (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mb() -> float:
    """This process's resident set now (Linux; 0 elsewhere)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


class RssSampler:
    """The largest resident set seen while a block runs (sampled every 5 ms by a thread): a fusion's own peak,
    which ``ru_maxrss`` hides when loading the runs peaked higher."""

    def __enter__(self) -> RssSampler:
        import threading

        self.peak, self._stop = rss_now_mb(), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_now_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_now_mb())


def worker(args: argparse.Namespace) -> None:
    """One contender, one method, in this (fresh, capped) process; prints one JSON line."""
    cap = int(args.cap_gb * 1e9)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    warnings.filterwarnings("ignore")
    import pyarrow.parquet as pq

    params = {"weights": WEIGHTS} if args.method == "wsum" else {}
    tables = [pq.read_table(p) for p in args.files]
    out: dict[str, object] = {"contender": args.worker, "method": args.method, "phase": "building the runs"}
    try:
        if args.worker == "ranx":
            import ranx

            runs = []
            for i, table in enumerate(tables):
                q = table["query_id"].to_numpy(zero_copy_only=False)
                d = table["doc_id"].to_numpy(zero_copy_only=False)
                s = table["score"].to_numpy()
                starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1], True])
                as_dict = {
                    str(q[a]): dict(zip(d[a:b].tolist(), s[a:b].tolist())) for a, b in zip(starts[:-1], starts[1:])
                }
                del q, d, s
                runs.append(ranx.Run(as_dict, name=f"r{i}"))
                del as_dict
            del tables
            small = [ranx.Run({q: dict(r[q]) for q in list(r.keys())[:20]}) for r in runs]
            ranx.fuse(small, norm="min-max", method=args.method, params=params)  # numba warm-up, same types

            def call() -> object:
                return ranx.fuse(runs, norm="min-max", method=args.method, params=params)
        else:
            from ranklens.data import Run
            from ranklens.fusion import fuse

            runs = [
                Run.from_arrays(t["query_id"], t["doc_id"], t["score"].to_numpy(), name=f"r{i}")
                for i, t in enumerate(tables)
            ]
            small = [
                Run.from_arrays(t["query_id"][:20000], t["doc_id"][:20000], t["score"].to_numpy()[:20000])
                for t in tables
            ]
            fuse(small, args.method, norm="min-max", weights=params.get("weights"))
            del tables, small

            def call() -> object:
                return fuse(runs, args.method, norm="min-max", weights=params.get("weights"))

        out["rss_loaded_mb"] = peak_rss_mb()
        import gc

        gc.collect()
        if "pyarrow" in sys.modules:
            sys.modules["pyarrow"].default_memory_pool().release_unused()
        out["rss_before_fuse_mb"] = rss_now_mb()
        out["phase"] = "fusing"
        times, cpu = [], []
        for _ in range(args.repeat):
            with RssSampler() as sampled:
                t, c = time.perf_counter(), time.process_time()
                got = call()
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            out["fuse_rss_growth_mb"] = max(float(out.get("fuse_rss_growth_mb", 0.0)), sampled.peak - float(out["rss_before_fuse_mb"]))  # type: ignore[arg-type]
            if _ + 1 < args.repeat:
                del got
        out["seconds"] = min(times)
        out["cpu_seconds"] = min(cpu)
        out["peak_rss_mb"] = peak_rss_mb()
        if args.dump:
            write_fused(got, args.worker, Path(args.dump))
    except (MemoryError, RuntimeError) as exc:
        # Under RLIMIT_AS numpy raises MemoryError; numba's typed dict raises
        # "RuntimeError: dict.__setitem__ failed unexpectedly" when its allocation fails.
        if isinstance(exc, RuntimeError) and "failed unexpectedly" not in str(exc):
            raise
        out["error"] = f"did not fit in {args.cap_gb:g} GB ({type(exc).__name__} while {out['phase']})"
        out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out), flush=True)


def write_fused(got: object, contender: str, path: Path) -> None:
    """Write a fused run as Parquet (query_id, doc_id, score) for ``--check``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if contender == "ranklens":
        table = got.run.to_arrow()  # type: ignore[attr-defined]
        table = pa.table(
            {
                "query_id": table.column(0).cast(pa.string()),
                "doc_id": table.column(1).cast(pa.string()),
                "score": table.column(2),
            }
        )
    else:
        qs, ds, ss = [], [], []
        for q, row in got.to_dict().items():  # type: ignore[attr-defined]
            qs.extend([q] * len(row))
            ds.extend(row.keys())
            ss.extend(row.values())
        table = pa.table({"query_id": qs, "doc_id": ds, "score": pa.array(ss, pa.float64())})
    pq.write_table(table, path)


def max_difference(a: Path, b: Path) -> float:
    """The largest absolute score difference between two fused runs (a missing pair counts as infinite)."""
    import pyarrow.parquet as pq

    x = pq.read_table(a).to_pandas()
    y = pq.read_table(b).to_pandas()
    joined = x.merge(y, on=["query_id", "doc_id"], how="outer")
    if joined["score_x"].isna().any() or joined["score_y"].isna().any():
        return float("inf")
    return float((joined["score_x"] - joined["score_y"]).abs().max())


def run_one(
    contender: str, method: str, files: list[Path], args: argparse.Namespace, dump: Path | None
) -> dict[str, object]:
    """Run one contender in a fresh process; a child killed or crashing is reported, never raised."""
    cmd = [
        sys.executable,
        "-m",
        "bench.fusion",
        "--worker",
        contender,
        "--method",
        method,
        "--repeat",
        str(args.repeat),
        "--cap-gb",
        str(args.cap_gb),
    ]
    if dump is not None:
        cmd += ["--dump", str(dump)]
    cmd += ["--files", *map(str, files)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    wall = time.perf_counter() - started
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == 0 and lines:
        result: dict[str, object] = json.loads(lines[-1])
    else:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        fitted = "MemoryError" in proc.stderr or "std::bad_alloc" in proc.stderr or "Cannot allocate" in proc.stderr
        result = {
            "contender": contender,
            "method": method,
            "error": f"did not fit in {args.cap_gb:g} GB" if fitted else f"exit {proc.returncode}: {tail[:120]}",
        }
    result["process_wall_s"] = wall
    return result


def show(result: dict[str, object]) -> str:
    if "error" in result:
        peak = f", peak RSS {result['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in result else ""
        return f"{result['error']} (process {result['process_wall_s']:.0f} s{peak})"
    cpu = f" (CPU {result['cpu_seconds']:.3f} s)" if "cpu_seconds" in result else ""
    growth = f" (fuse +{result['fuse_rss_growth_mb']:.0f} MB)" if "fuse_rss_growth_mb" in result else ""
    return f"{result['seconds']:8.3f} s{cpu}  peak RSS {result['peak_rss_mb']:7.0f} MB{growth}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--queries", default="1000", help="comma-separated sizes, e.g. 1000,3000,10000")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument(
        "--row-order", choices=("random", "trec"), default="random",
        help="each query's rows in random order (default) or in trec order (score descending), as run files come",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", default="rrf,wsum")
    parser.add_argument("--contenders", default="ranx,ranklens")
    parser.add_argument("--check", action="store_true", help="print the largest score difference where both fitted")
    parser.add_argument("--cap-gb", type=float, default=12.0, help="address-space cap of each contender process")
    parser.add_argument("--data", default="/tmp/ranklens_fusion_bench", help="where the generated runs go")
    parser.add_argument("--worker", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    data = Path(args.data)
    print(
        f"3 runs × queries × {args.docs} docs ({args.row_order} row order), min-max, best of {args.repeat}, each contender a fresh process capped at {args.cap_gb:g} GB",
        flush=True,
    )
    for queries in (int(x) for x in args.queries.split(",")):
        files = write_runs(data, queries, args.docs, args.row_order)
        for method in args.methods.split(","):
            results = {}
            for contender in args.contenders.split(","):
                dump = data / f"fused_{queries}_{method}_{contender}.parquet" if args.check else None
                results[contender] = run_one(contender, method, files, args, dump)
                print(f"{queries:6d} {method:5s} {contender:8s} {show(results[contender])}", flush=True)
            ours, theirs = results.get("ranklens", {}), results.get("ranx", {})
            if "seconds" in ours and "seconds" in theirs and "error" not in ours and "error" not in theirs:
                line = f"{queries:6d} {method:5s} ratio {float(theirs['seconds']) / float(ours['seconds']):.1f}× (ranx / ranklens)"  # type: ignore[arg-type]
                if "cpu_seconds" in ours and "cpu_seconds" in theirs:
                    line += f", CPU time {float(theirs['cpu_seconds']) / float(ours['cpu_seconds']):.1f}×"  # type: ignore[arg-type]
                if args.check:
                    line += f"  max score difference {max_difference(data / f'fused_{queries}_{method}_ranx.parquet', data / f'fused_{queries}_{method}_ranklens.parquet'):.1e}"
                print(line, flush=True)
            print(
                "RESULT " + json.dumps({"queries": queries, "method": method, **{k: v for k, v in results.items()}}),
                flush=True,
            )


if __name__ == "__main__":
    main()
