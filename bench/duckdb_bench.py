"""DuckDB benchmark (issue 30): N run rows as Parquet, mean nDCG@10 by a hand-written DuckDB query,
``ranklens eval --engine duckdb``, the in-memory engine (``ranklens eval``) and a hand-written Polars query,
each in a fresh process (imports and start-up included, as a user runs them), interleaved in rounds; every
contender's mean must agree to 1e-9.

    python -m bench.duckdb_bench --rows 2000000 --repeat 3

    python -m bench.duckdb_bench --rows 20000000 --repeat 1 --data-dir /tmp/ranklens_20m   # (delete it after)

The data is written under bench/data/duckdb_bench/ (git-ignored) and reused when its size matches, or with
``--data-dir`` a chunk at a time (:mod:`bench.duckdb_data`) where it says. Prints a Markdown table (median
wall and CPU seconds, peak RSS from ``wait4``, ratios to the hand-written DuckDB query and of the in-memory
engine to Polars) for docs/benchmarks.md. ``--only WORD...`` runs the contenders whose name holds a word.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "duckdb_bench"

HAND_SQL = """
import sys, duckdb
run, qrels, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = duckdb.connect()
con.execute("SET enable_progress_bar = false").fetchall()
if sys.argv[4]:
    con.execute(f"SET memory_limit = '{sys.argv[4]}'").fetchall()
sql = f'''
WITH r AS (SELECT query_id, doc_id, row_number() OVER (PARTITION BY query_id ORDER BY score DESC, doc_id DESC) AS rank
           FROM read_parquet('{run}')),
d AS (SELECT r.query_id, sum(greatest(coalesce(q.relevance, 0), 0) / log2(rank + 1)) AS dcg
      FROM r LEFT JOIN read_parquet('{qrels}') q USING (query_id, doc_id) WHERE rank <= {k} GROUP BY r.query_id),
i AS (SELECT query_id, sum(relevance / log2(rank + 1)) AS idcg FROM
      (SELECT query_id, relevance, row_number() OVER (PARTITION BY query_id ORDER BY relevance DESC) AS rank
       FROM read_parquet('{qrels}') WHERE relevance > 0) WHERE rank <= {k} GROUP BY query_id),
e AS (SELECT DISTINCT query_id FROM read_parquet('{run}') INTERSECT SELECT DISTINCT query_id FROM read_parquet('{qrels}'))
SELECT avg(CASE WHEN idcg > 0 THEN coalesce(dcg, 0) / idcg ELSE 0 END) FROM e LEFT JOIN d USING (query_id)
LEFT JOIN i USING (query_id)'''
print(repr(float(con.execute(sql).fetchall()[0][0])))
"""

POLARS = """
import sys
sys.path.insert(0, sys.argv[4])
from bench.spark_bench import polars_ndcg
print(repr(polars_ndcg(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
"""

CLI = """
import sys
from ranklens.cli.entry import main
sys.argv = ["ranklens", "eval", sys.argv[2], sys.argv[1], "-m", f"nDCG@{sys.argv[3]}", "-f", "tsv", "--quiet", *sys.argv[5:]]
sys.exit(main())
"""


def make_inputs(rows: int, docs_per_query: int, data_dir: Path | None = None, parts: int = 1) -> tuple[str, str, int]:
    """The run and qrels Parquet files of ``rows`` run rows (reused when present); the qrels' row count.
    ``data_dir``: written there a chunk at a time by :mod:`bench.duckdb_data` (files, or datasets of ``parts``
    parts), for sizes whose tables would not fit in one process."""
    import pyarrow.parquet as pq

    if data_dir is not None:
        sys.path.insert(0, str(ROOT))
        from bench.duckdb_data import write_inputs

        folder = data_dir / f"{rows}x{docs_per_query}x{parts}"
        names = ("run.parquet", "qrels.parquet") if parts == 1 else ("run", "qrels")
        if not all((folder / n).exists() for n in names):
            done = write_inputs(folder, rows, docs_per_query, parts)
            print(f"wrote {done['run_rows']:,} run rows, {done['qrels_rows']:,} qrels rows: {done['disk_bytes'] / 1e9:.2f} GB "
                  f"on disk, about {done['python_bytes'] / 1e9:.1f} GB as Python objects", flush=True)
        run_p, qrels_p = (str(folder / n) for n in names)
        qrels_rows = pq.ParquetDataset(qrels_p).read(columns=["relevance"]).num_rows if parts > 1 else pq.ParquetFile(qrels_p).metadata.num_rows
        return run_p, qrels_p, qrels_rows
    folder = DATA / f"{rows}x{docs_per_query}"
    run, qrels = folder / "run.parquet", folder / "qrels.parquet"
    if not (run.exists() and qrels.exists()):
        sys.path.insert(0, str(ROOT))
        from bench.spark_bench import make_data

        folder.mkdir(parents=True, exist_ok=True)
        run_t, qrels_t = make_data(rows, docs_per_query)
        pq.write_table(run_t, run)
        pq.write_table(qrels_t, qrels)
    return str(run), str(qrels), pq.ParquetFile(qrels).metadata.num_rows


HAND = "DuckDB, hand-written SQL (nDCG@10 only, no checks)"
ENGINE = "ranklens eval --engine duckdb (checks, notes)"
MEMORY = "ranklens eval (in-memory engine)"
POLARS_LABEL = "Polars lazy, hand-written (nDCG@10 only)"


def contenders(run: str, qrels: str, k: int, memory_limit: str | None = None) -> dict[str, list[str]]:
    py = sys.executable
    limit = ["--memory-limit", memory_limit] if memory_limit else []
    # (a dataset directory: ranklens takes the directory, the hand-written queries a glob of its parts)
    run_g, qrels_g = (os.path.join(p, "*.parquet") if os.path.isdir(p) else p for p in (run, qrels))
    return {
        HAND: [py, "-c", HAND_SQL, run_g, qrels_g, str(k), memory_limit or ""],
        ENGINE: [py, "-c", CLI, run, qrels, str(k), str(ROOT), "--engine", "duckdb", *limit],
        MEMORY: [py, "-c", CLI, run, qrels, str(k), str(ROOT)],
        POLARS_LABEL: [py, "-c", POLARS, run_g, qrels_g, str(k), str(ROOT)],
    }


def run_once(argv: list[str]) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds (user + system, every thread), peak RSS in MB and the printed mean of one
    fresh process (``os.wait4``: this child's own resource use, not the largest of every child so far)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (a user's installation has its byte code: see main's compileall)
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out_file, stderr=err_file, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if code != 0:
        raise SystemExit(f"{argv[2][:40]!r}… failed ({code}): {err.strip()[-500:]}")
    lines = out.strip().splitlines()
    line = next((x for x in lines if "\tall\t" in x), lines[-1])
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, float(line.rsplit("\t", 1)[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000, help="run rows (qrels: about half as many)")
    ap.add_argument("--docs-per-query", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each runs every contender once, in turn")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--memory-limit", help="DuckDB's memory limit for both DuckDB contenders (e.g. 4GB)")
    ap.add_argument("--data-dir", type=Path, help="write the inputs here, a chunk at a time (e.g. /tmp/ranklens_20m)")
    ap.add_argument("--parts", type=int, default=1, help="with --data-dir: datasets of this many parts (1: two files)")
    ap.add_argument("--only", nargs="+", help="only the contenders whose name holds one of these words (e.g. DuckDB Polars)")
    args = ap.parse_args(argv)
    run, qrels, qrels_rows = make_inputs(args.rows, args.docs_per_query, args.data_dir, args.parts)
    import compileall

    for folder in (ROOT / "src", ROOT / "bench"):  # (byte code written once, untimed, as pip install does)
        compileall.compile_dir(folder, quiet=1)
    todo = contenders(run, qrels, args.k, args.memory_limit)
    if args.only:
        todo = {name: cmd for name, cmd in todo.items() if any(word in name for word in args.only)}
    times: dict[str, list[float]] = {name: [] for name in todo}
    cpus: dict[str, list[float]] = {name: [] for name in todo}
    peaks: dict[str, float] = {name: 0.0 for name in todo}
    values: dict[str, float] = {}
    load = [os.getloadavg()[0]]
    for _ in range(args.repeat):
        for name, cmd in todo.items():
            sec, cpu, peak, value = run_once(cmd)
            times[name].append(sec)
            cpus[name].append(cpu)
            peaks[name] = max(peaks[name], peak)
            values[name] = value
    load.append(os.getloadavg()[0])
    med = {name: statistics.median(t) for name, t in times.items()}
    cpu_med = {name: statistics.median(t) for name, t in cpus.items()}
    names = list(todo)
    print(f"{args.rows:,} run rows, {qrels_rows:,} qrels rows, {args.docs_per_query} docs/query, nDCG@{args.k}; "
          f"median of {args.repeat} fresh processes each; {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load (1 min) {load[0]:.1f} before, {load[1]:.1f} after\n")
    print("| contender | wall s (median) | all runs | CPU s (median) | peak RSS MB | mean nDCG@10 |")
    print("|---|---:|---|---:|---:|---:|")
    ref = values[names[0]]
    for name in names:
        print(f"| {name} | {med[name]:.2f} | {', '.join(f'{t:.2f}' for t in times[name])} | {cpu_med[name]:.2f} | "
              f"{peaks[name]:.0f} | {values[name]:.12f} |")
        assert math.isclose(values[name], ref, abs_tol=1e-9), f"{name} disagrees: {values[name]} vs {ref}"
    for (a, b, target) in ((ENGINE, HAND, "≤ 1.2×"), (MEMORY, POLARS_LABEL, "≤ 2×")):
        if a in med and b in med:
            print(f"\n{a} / {b}: wall {med[a] / med[b]:.2f}×, CPU {cpu_med[a] / cpu_med[b]:.2f}× (target {target})")


if __name__ == "__main__":
    main()
