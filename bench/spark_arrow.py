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
start is reported apart. The means must agree to 1e-9. Prints a Markdown table for docs/benchmarks.md.
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


def make_files(rows: int, docs_per_query: int, out: str) -> tuple[str, str]:
    """``rows`` run rows and about half as many binary qrels rows, as Parquet files in ``out``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(30)
    nq = max(rows // docs_per_query, 1)
    q = np.repeat(np.arange(nq), docs_per_query)
    d = np.arange(q.size) % docs_per_query * 4 + rng.integers(0, 4, size=q.size)
    qid = pa.array([f"q{i}" for i in q])
    did = pa.array([f"d{i}" for i in d])
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

    fn = ranklens_ndcg if kind == "ranklens" else spark_ml_ndcg
    fn(spark.read.parquet(run_path).limit(1000), spark.read.parquet(qrels_path).limit(1000))  # warm-up
    t = time.perf_counter()
    value = fn(spark.read.parquet(run_path), spark.read.parquet(qrels_path))
    sec = time.perf_counter() - t
    spark.stop()
    return {"start": start, "seconds": sec, "value": value}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--docs-per-query", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=8, help="spark.sql.shuffle.partitions (the Arrow path's buckets)")
    ap.add_argument("--before", default="", help="the source tree of 'before' (e.g. /work/main/src); empty: skipped")
    ap.add_argument("--child", nargs=4, metavar=("KIND", "MASTER", "RUN", "QRELS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.partitions)))
        return
    tmp = tempfile.mkdtemp(prefix="ranklens-spark-arrow-")
    run_path, qrels_path = make_files(args.rows, args.docs_per_query, tmp)
    contenders = [("ranklens Arrow path, after, reference engine in the workers", "ranklens", "local[2]", SRC),
                  ("ranklens Arrow path, after", "ranklens", "local[1]", SRC),
                  ("ranklens Arrow path, after", "ranklens", "local[2]", SRC),
                  ("Spark RankingEvaluator (ndcgAtK)", "spark-ml", "local[1]", SRC),
                  ("Spark RankingEvaluator (ndcgAtK)", "spark-ml", "local[2]", SRC)]
    if args.before:
        contenders.insert(0, ("ranklens Arrow path, before", "ranklens", "local[2]", args.before))
    results = []
    for name, kind, master, src in contenders:
        env = dict(os.environ, PYTHONPATH=src, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
        if "reference engine" in name:
            env["RANKLENS_BACKEND"] = "reference"  # (the dispatcher then keeps the compiled pass out of the workers)
        cmd = [sys.executable, "-m", "bench.spark_arrow", "--partitions", str(args.partitions),
               "--child", kind, master, run_path, qrels_path]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=os.path.dirname(SRC))
        if proc.returncode:
            sys.exit(f"{name} {master} failed:\n{proc.stderr[-3000:]}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append((name, master, got))
        print(f"{name} {master}: {got['seconds']:.1f} s (session start {got['start']:.1f} s)", file=sys.stderr)
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.rows:,} run rows, {args.docs_per_query} docs/query, binary qrels, nDCG@10, "
          f"{args.partitions} shuffle partitions, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n")
    print("| contender | master | seconds | session start | mean nDCG@10 |")
    print("|---|---|---:|---:|---:|")
    for name, master, got in results:
        print(f"| {name} | {master} | {got['seconds']:.1f} | {got['start']:.1f} | {got['value']:.12f} |")
    by = {(n.split(",", 1)[-1].strip() if "Arrow" in n else "ml", m): g["seconds"] for n, m, g in results}
    ref = results[0][2]["value"]
    for name, master, got in results:
        assert abs(got["value"] - ref) <= 1e-9, f"{name} {master}: {got['value']} vs {ref}"
    if ("before", "local[2]") in by:
        print(f"\nafter vs before (local[2]): {by[('before', 'local[2]')] / by[('after', 'local[2]')]:.2f}x faster")
    print(f"after vs RankingEvaluator (local[2]): {by[('ml', 'local[2]')] / by[('after', 'local[2]')]:.2f}x faster")
    print(f"scaling local[1] -> local[2]: after {by[('after', 'local[1]')] / by[('after', 'local[2]')]:.2f}x, "
          f"RankingEvaluator {by[('ml', 'local[1]')] / by[('ml', 'local[2]')]:.2f}x")


if __name__ == "__main__":
    main()
