"""The Arrow path through a Spark Connect session (issue 30): a local Connect server (pyspark 4 ships its jar;
``SparkSession.builder.remote("local[2]")`` starts it inside a fresh process, on an ephemeral port), the
evaluation sent as a Connect plan, the Python workers run by the server — values, query ids and notes equal the
in-memory engine's. In a child process: a JVM holds one SparkContext, and the session fixture's is classic."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ranklens

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'ranklens[spark]'")

# (ties at the cutoff, a query only in the qrels, one only in the run, all-zero grades)
QRELS = {
    "q1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": 3, "f": 2},
    "q2": {"a": 1, "x": 1, "y": 2},
    "q3": {"a": 0, "b": 0},
    "q5": {"z": 1},
}
RUN = {
    "q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0, "g": 0.5, "f": -1.0},
    "q2": {"x": 1.0, "u": 0.0},
    "q3": {"a": 1.0, "b": 1.0, "c": 1.0},
    "q9": {"a": 1.0},
}
#: nDCG@3 and AP: the compiled pass in the workers; ERR@5: the reference engine in the workers
MEASURES = ["nDCG@3", "AP", "ERR@5"]

CHILD = """
import json, sys, warnings
warnings.simplefilter("ignore")
from pyspark.sql import SparkSession
from ranklens.spark import evaluate
spec = json.loads(sys.argv[1])
spark = SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "2").getOrCreate()
connect = type(spark).__module__.startswith("pyspark.sql.connect")
rdf = spark.createDataFrame([tuple(r) for r in spec["run"]], "query_id string, doc_id string, score double")
qdf = spark.createDataFrame([tuple(r) for r in spec["qrels"]], "query_id string, doc_id string, relevance int")
out = {"connect": connect}
for measures in (spec["measures"][:2], spec["measures"]):
    ev = evaluate(rdf, qdf, measures, path="arrow", warn=False)
    per_query = sorted(tuple(r) for r in ev.per_query.collect())
    out[",".join(measures)] = {
        "query_ids": list(ev.results.query_ids), "values": ev.results.values.tolist(),
        "notes": list(ev.results.notes), "per_query": per_query,
    }
    ev.unpersist()
import pyarrow as pa, pyarrow.parquet as pq
for name, rows, value in (("run", spec["run"], "score"), ("qrels", spec["qrels"], "relevance")):
    cols = list(zip(*rows))
    kind = pa.float64() if value == "score" else pa.int32()
    pq.write_table(pa.table({"query_id": list(cols[0]), "doc_id": list(cols[1]), value: pa.array(list(cols[2]), kind)}),
                   f"{name}.parquet", row_group_size=4)
for measures in (spec["measures"][:2], spec["measures"]):  # the scan plan: the server's workers read the files
    ev = evaluate("run.parquet", "qrels.parquet", measures, plan="scan", warn=False, spark=spark)
    per_query = sorted(tuple(r) for r in ev.per_query.collect())
    out["scan:" + ",".join(measures)] = {
        "plan": ev.plan, "query_ids": list(ev.results.query_ids), "values": ev.results.values.tolist(),
        "notes": list(ev.results.notes), "per_query": per_query,
    }
spark.stop()
print("RESULT " + json.dumps(out))
"""


def _connect_ready() -> str | None:
    """Why a local Connect session cannot start here, or None."""
    if int(pyspark.__version__.split(".")[0]) < 4:
        return f"pyspark {pyspark.__version__}: the local Connect server ships with pyspark 4"
    if shutil.which("java") is None:
        return "no Java runtime on this machine"
    try:
        with warnings.catch_warnings():  # (pyspark's FutureWarning about pandas 3)
            warnings.simplefilter("ignore")
            from pyspark.sql.connect.utils import check_dependencies

            check_dependencies()
    except Exception as e:  # (grpcio, grpcio-status, googleapis-common-protos, zstandard: pyspark[connect])
        return f"the Connect client's packages are missing ({e}): pip install 'pyspark[connect]'"
    return None


def test_arrow_path_through_a_spark_connect_session(tmp_path):
    why = _connect_ready()
    if why:
        pytest.skip(why)
    spec = {
        "run": [[q, d, s] for q, ds in RUN.items() for d, s in ds.items()],
        "qrels": [[q, d, g] for q, ds in QRELS.items() for d, g in ds.items()],
        "measures": MEASURES,
    }
    env = dict(os.environ, SPARK_TESTING="1", RANKLENS_DEBUG="1", PYSPARK_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # (the server's workers import this ranklens)
    env.pop("SPARK_REMOTE", None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True, text=True, timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert got["connect"] is True  # (a Connect client, not a classic session)
    # the Connect server's workers ran the compiled pass for nDCG/AP alone (a bucket holding only a qrels-only
    # query goes to the reference engine), the reference engine with ERR (no debug line then)
    # (once by the shuffle plan, once by the scan plan: ERR@5 has no compiled pass either way)
    assert len(re.findall(r"the compiled pass evaluated [1-9] of [1-9]", proc.stderr)) == 2, proc.stderr[-2000:]
    assert proc.stderr.count("spark scan plan:") == 2, proc.stderr[-2000:]
    for key, measures in ((k + ",".join(m), m) for k in ("", "scan:") for m in (MEASURES[:2], MEASURES)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = ranklens.Evaluator(measures, QRELS)(RUN)
        mine = got[key]
        assert mine.get("plan", "scan") == "scan"
        assert mine["query_ids"] == list(ref.query_ids)
        np.testing.assert_allclose(np.array(mine["values"]), ref.values, rtol=0, atol=1e-12)
        assert mine["notes"] == list(ref.notes)
        want = sorted(
            (q, str(m), float(v)) for q, row in zip(ref.query_ids, ref.values.tolist()) for m, v in zip(ref.measures, row)
        )
        assert [(q, m) for q, m, _ in mine["per_query"]] == [(q, m) for q, m, _ in want]
        np.testing.assert_allclose([v for *_, v in mine["per_query"]], [v for *_, v in want], rtol=0, atol=1e-12)
