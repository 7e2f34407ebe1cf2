"""The Spark Arrow path before and after issue 30, against Spark's own ``RankingEvaluator`` (issue 30).

    python -m bench.spark_arrow --rows 1000000 --before /work/main/src

Every contender runs in a fresh process (a fresh JVM and fresh Python workers) on the same Parquet files:
binary qrels (labels 0/1), nDCG@10, so the anchor — ``pyspark.ml.evaluation.RankingEvaluator``
(``metricName="ndcgAtK"``: binary relevance; its inputs built in Spark from the same rows: each query's
documents ranked by score then document id, descending, as trec_eval ties; the relevant documents) — computes
the same number. Contenders: this tree with ``RANKLENS_BACKEND=reference`` (the reference engine in the
workers: what the compiled pass adds), ``--engine spark``'s Arrow path of ``--before`` (a source tree, e.g. main's) on
local[2], this tree's on local[1] and local[2], RankingEvaluator on local[1] and local[2]. Each child warms up
on 1,000 rows first (JVM, Python workers), then times reading the Parquet files and evaluating; the session's
start (the JVM's: a fixed cost) is reported apart. Besides the wall clock, the CPU seconds of the child's whole
process tree (the driver, the JVM and its Python workers, from /proc) over the timed part: on a shared machine
they say what the work costs where the wall clock says how busy the machine was. Every child runs with
``--driver-memory 3g`` (``--driver-memory``). The means must agree to 1e-9. Prints a Markdown table for
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _prefixed(prefix: str, numbers: object) -> object:
    """``[f"{prefix}{i}" for i in numbers]`` as an Arrow string array, built by Arrow (no Python string per
    row: 20M rows stay far below a gigabyte)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    digits = pc.cast(pa.array(numbers), pa.string())
    return pc.binary_join_element_wise(pa.scalar(prefix), digits, "")


def make_files(rows: int, docs_per_query: int, out: str) -> tuple[str, str]:
    """``rows`` run rows and about half as many binary qrels rows, as Parquet files in ``out``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(30)
    nq = max(rows // docs_per_query, 1)
    q = np.repeat(np.arange(nq), docs_per_query)
    d = np.arange(q.size) % docs_per_query * 4 + rng.integers(0, 4, size=q.size)
    qid = _prefixed("q", q)
    did = _prefixed("d", d)
    run = pa.table({"query_id": qid, "doc_id": did, "score": np.round(rng.random(q.size), 3)})  # ties on purpose
    pick = pa.array(rng.random(q.size) < 0.5)
    qrels = pa.table({
        "query_id": qid.filter(pick), "doc_id": did.filter(pick),
        "relevance": pa.array(rng.integers(0, 2, size=int(pick.to_numpy(zero_copy_only=False).sum())).astype(np.int32)),
    })
    paths = os.path.join(out, "run.parquet"), os.path.join(out, "qrels.parquet")
    pq.write_table(run, paths[0])
    pq.write_table(qrels, paths[1])
    return paths


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and every live descendant, read from /proc (Linux; 0.0
    elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    mine, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        p = frontier.pop()
        for child_pid, ppid in parent.items():
            if ppid == p and child_pid not in mine:
                mine.add(child_pid)
                frontier.append(child_pid)
    return sum(cpu.get(p, 0.0) for p in mine)


def child(kind: str, master: str, run_path: str, qrels_path: str, partitions: int) -> dict[str, float]:
    """One contender in this process: ``ranklens`` (the Arrow path of the ranklens on sys.path) or ``spark-ml``."""
    import warnings

    warnings.simplefilter("ignore")
    from ranklens.spark import evaluate, session

    t = time.perf_counter()
    spark = session(master, shuffle_partitions=partitions)
    start = time.perf_counter() - t

    def ranklens_ndcg(run_df: object, qrels_df: object) -> float:
        ev = evaluate(run_df, qrels_df, ["nDCG@10"], path="arrow", warn=False)
        ev.unpersist()
        return ev["nDCG@10"]

    def spark_ml_ndcg(run_df: object, qrels_df: object) -> float:
        from pyspark.ml.evaluation import RankingEvaluator
        from pyspark.sql import functions as F

        as_num = F.expr("cast(substring(doc_id, 2) as double)")
        ranked = run_df.groupBy("query_id").agg(  # type: ignore[attr-defined]
            F.sort_array(F.collect_list(F.struct("score", "doc_id", as_num.alias("d"))), asc=False).alias("r")
        ).select("query_id", F.col("r.d").alias("prediction"))
        relevant = qrels_df.groupBy("query_id").agg(  # type: ignore[attr-defined]
            F.collect_list(F.when(F.col("relevance") > 0, as_num)).alias("label")
        )
        data = ranked.join(relevant, "query_id")
        ev = RankingEvaluator(predictionCol="prediction", labelCol="label", metricName="ndcgAtK", k=10)
        return float(ev.evaluate(data))

    def ranklens_scan(run: str, qrels: str) -> float:
        ev = evaluate(run, qrels, ["nDCG@10"], path="arrow", plan="scan", warn=False, spark=spark)
        ev.unpersist()
        assert ev.plan == "scan", ev.plan_note
        return ev["nDCG@10"]

    if kind == "ranklens-scan":  # (the warm-up on the first 1,000 rows of each file, as Parquet files)
        import pyarrow as pa
        import pyarrow.parquet as pq

        small = tempfile.mkdtemp(prefix="ranklens-scan-warm-")
        for src, name in ((run_path, "run"), (qrels_path, "qrels")):
            first = next(pq.ParquetFile(src).iter_batches(batch_size=1000))
            pq.write_table(pa.Table.from_batches([first]), os.path.join(small, f"{name}.parquet"))
        ranklens_scan(os.path.join(small, "run.parquet"), os.path.join(small, "qrels.parquet"))
        t, c = time.perf_counter(), tree_cpu()
        value = ranklens_scan(run_path, qrels_path)
        sec, cpu = time.perf_counter() - t, tree_cpu() - c
        spark.stop()
        return {"start": start, "seconds": sec, "cpu": cpu, "value": value}
    fn = ranklens_ndcg if kind == "ranklens" else spark_ml_ndcg
    fn(spark.read.parquet(run_path).limit(1000), spark.read.parquet(qrels_path).limit(1000))  # warm-up
    t, c = time.perf_counter(), tree_cpu()
    value = fn(spark.read.parquet(run_path), spark.read.parquet(qrels_path))
    sec, cpu = time.perf_counter() - t, tree_cpu() - c
    spark.stop()
    return {"start": start, "seconds": sec, "cpu": cpu, "value": value}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--docs-per-query", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=8, help="spark.sql.shuffle.partitions (the Arrow path's buckets)")
    ap.add_argument("--before", default="", help="the source tree of 'before' (e.g. /work/main/src); empty: skipped")
    ap.add_argument("--driver-memory", default="3g", help="spark.driver.memory of every child (local mode: the executors' too)")
    ap.add_argument("--only", default="", help="comma-separated contenders to run: before,reference,after1,after2,scan1,scan2,ml1,ml2 (default all)")
    ap.add_argument("--data", default="", help="a directory holding run.parquet and qrels.parquet (kept); default: generated, deleted")
    ap.add_argument("--child", nargs=4, metavar=("KIND", "MASTER", "RUN", "QRELS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.partitions)))
        return
    tmp = args.data or tempfile.mkdtemp(prefix="ranklens-spark-arrow-")
    if args.data and os.path.exists(os.path.join(tmp, "run.parquet")):
        run_path, qrels_path = os.path.join(tmp, "run.parquet"), os.path.join(tmp, "qrels.parquet")
    else:
        run_path, qrels_path = make_files(args.rows, args.docs_per_query, tmp)
    contenders = [("before", "ranklens Arrow path, before", "ranklens", "local[2]", args.before),
                  ("reference", "ranklens Arrow path, after, reference engine in the workers", "ranklens", "local[2]", SRC),
                  ("after1", "ranklens Arrow path, after", "ranklens", "local[1]", SRC),
                  ("scan1", "ranklens Arrow path, scan plan", "ranklens-scan", "local[1]", SRC),
                  ("scan2", "ranklens Arrow path, scan plan", "ranklens-scan", "local[2]", SRC),
                  ("after2", "ranklens Arrow path, after", "ranklens", "local[2]", SRC),
                  ("ml1", "Spark RankingEvaluator (ndcgAtK)", "spark-ml", "local[1]", SRC),
                  ("ml2", "Spark RankingEvaluator (ndcgAtK)", "spark-ml", "local[2]", SRC)]
    only = set(filter(None, args.only.split(",")))
    contenders = [c for c in contenders if (not only or c[0] in only) and (c[0] != "before" or args.before)]
    results = []
    for _key, name, kind, master, src in contenders:
        env = dict(os.environ, PYTHONPATH=src, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   PYSPARK_SUBMIT_ARGS=f"--driver-memory {args.driver_memory} pyspark-shell")
        if "reference engine" in name:
            env["RANKLENS_BACKEND"] = "reference"  # (the dispatcher then keeps the compiled pass out of the workers)
        cmd = [sys.executable, "-m", "bench.spark_arrow", "--partitions", str(args.partitions),
               "--child", kind, master, run_path, qrels_path]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=os.path.dirname(SRC))
        if proc.returncode:
            sys.exit(f"{name} {master} failed:\n{proc.stderr[-3000:]}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append((name, master, got))
        print(f"{name} {master}: {got['seconds']:.1f} s, {got['cpu']:.1f} CPU s (session start {got['start']:.1f} s), "
              f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    import shutil

    if not args.data:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.rows:,} run rows, {args.docs_per_query} docs/query, binary qrels, nDCG@10, "
          f"{args.partitions} shuffle partitions, driver memory {args.driver_memory}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print("| contender | master | seconds | CPU seconds | session start | mean nDCG@10 |")
    print("|---|---|---:|---:|---:|---:|")
    for name, master, got in results:
        print(f"| {name} | {master} | {got['seconds']:.1f} | {got['cpu']:.1f} | {got['start']:.1f} | {got['value']:.12f} |")
    by = {(n.split(",", 1)[-1].strip() if "Arrow" in n else "ml", m): g["seconds"] for n, m, g in results}
    cpu = {(n.split(",", 1)[-1].strip() if "Arrow" in n else "ml", m): g["cpu"] for n, m, g in results}
    ref = results[0][2]["value"]
    for name, master, got in results:
        assert abs(got["value"] - ref) <= 1e-9, f"{name} {master}: {got['value']} vs {ref}"
    def ratio(what: str, a: tuple[str, str], b: tuple[str, str]) -> None:
        if a in by and b in by:
            print(f"{what}: {by[a] / by[b]:.2f}x (wall), {cpu[a] / cpu[b]:.2f}x (CPU)")

    print()
    ratio("after vs before (local[2]), faster by", ("before", "local[2]"), ("after", "local[2]"))
    ratio("after vs RankingEvaluator (local[2]), faster by", ("ml", "local[2]"), ("after", "local[2]"))
    ratio("after vs RankingEvaluator (local[1]), faster by", ("ml", "local[1]"), ("after", "local[1]"))
    ratio("scaling local[1] -> local[2], after", ("after", "local[1]"), ("after", "local[2]"))
    ratio("scan plan vs shuffle plan (local[2]), faster by", ("after", "local[2]"), ("scan plan", "local[2]"))
    ratio("scan plan vs RankingEvaluator (local[2]), faster by", ("ml", "local[2]"), ("scan plan", "local[2]"))
    ratio("scan plan vs RankingEvaluator (local[1]), faster by", ("ml", "local[1]"), ("scan plan", "local[1]"))
    ratio("scaling local[1] -> local[2], scan plan", ("scan plan", "local[1]"), ("scan plan", "local[2]"))
    ratio("scaling local[1] -> local[2], RankingEvaluator", ("ml", "local[1]"), ("ml", "local[2]"))


if __name__ == "__main__":
    main()
