"""One adapter per evaluation tool: how it loads files, computes, and is called from a shell.

Each adapter uses the tool's own public API the way its documentation shows, on its own loaded
structures. Computations return ``(means, native)``: the timed part ends when the tool has produced
its answer; turning ``native`` per-query results into a common ``{measure: {query: value}}`` form for
the agreement check happens afterwards, untimed.

Common measure names: ``nDCG@10``, ``AP``, ``R@100``, ``RR`` (trec_eval ``ndcg_cut.10``, ``map``,
``recall.100``, ``recip_rank``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["FOUR", "NDCG", "TOOLS", "TREC_EVAL_MISSING", "Tool", "available_tools", "trec_eval_binary"]

NDCG = "nDCG@10"
FOUR = ("nDCG@10", "AP", "R@100", "RR")
PerQuery = dict[str, dict[str, float]]
Means = dict[str, float]


def _is_parquet(path: str | Path) -> bool:
    return str(path).endswith(".parquet")


class Tool:
    """The interface; subclasses implement it for one tool."""

    name: str = ""
    module: str = ""  # what must be importable
    package: str = ""  # the distribution, for its version

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.package)
        except PackageNotFoundError:
            return "?"

    def warm_import(self) -> None:
        """Import the library (not timed: the CLI phase is where import time counts)."""
        importlib.import_module(self.module)

    def load_qrels(self, path: str) -> Any:
        raise NotImplementedError

    def load_run(self, path: str) -> Any:
        raise NotImplementedError

    def counts(self, qrels: Any, run: Any) -> dict[str, int]:
        """Queries and rows loaded, to check that every tool read the same thing."""
        raise NotImplementedError

    def ndcg(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        """Mean nDCG@10 (and whatever per-query form the tool gives on the way)."""
        raise NotImplementedError

    def four(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        """nDCG@10, AP, R@100, RR: means and per-query values."""
        raise NotImplementedError

    def per_query(self, native: Any, run: Any) -> PerQuery:
        """``native`` per-query results as ``{measure: {query: value}}`` (empty if the tool gives none)."""
        raise NotImplementedError

    def many(self, qrels_path: str, run_paths: Sequence[str]) -> list[float]:
        """Mean nDCG@10 of each run against the same qrels, each run loaded from its file in turn."""
        raise NotImplementedError

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        """A fresh-process command that imports, reads, computes and prints mean nDCG@10."""
        raise NotImplementedError


# --------------------------------------------------------------------------------------------- ranklens


class Ranklens(Tool):
    name, module, package = "ranklens", "ranklens", "ranklens"

    def load_qrels(self, path: str) -> Any:
        from ranklens.data.io import read_qrels

        return read_qrels(path)

    def load_run(self, path: str) -> Any:
        from ranklens.data.io import read_run

        return read_run(path)

    def counts(self, qrels: Any, run: Any) -> dict[str, int]:
        return {
            "qrels_queries": qrels.num_queries,
            "qrels_rows": len(qrels),
            "run_queries": run.num_queries,
            "run_rows": len(run),
        }

    def ndcg(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        import ranklens

        res = ranklens.Evaluator([NDCG], qrels)(run)
        return {NDCG: res[NDCG]}, res

    def four(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        import ranklens

        res = ranklens.Evaluator(list(FOUR), qrels)(run)
        return {m: res[m] for m in FOUR}, res

    def per_query(self, native: Any, run: Any) -> PerQuery:
        return {str(m): native.per_query(m) for m in native.measures}

    def many(self, qrels_path: str, run_paths: Sequence[str]) -> list[float]:
        import ranklens

        ev = ranklens.Evaluator([NDCG], self.load_qrels(qrels_path))
        return [ev(self.load_run(path))[NDCG] for path in run_paths]

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        exe = shutil.which("ranklens", path=os.path.dirname(sys.executable)) or "ranklens"
        return [exe, "eval", qrels_path, run_path, "-m", NDCG]


# --------------------------------------------------------------------------------------------- pytrec_eval

_PYTREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "R@100": "recall_100", "RR": "recip_rank"}
_PYTREC_REQUEST = {"nDCG@10": "ndcg_cut.10", "AP": "map", "R@100": "recall.100", "RR": "recip_rank"}


def _nested(path: str, value: str, cast: type) -> dict[str, dict[str, Any]]:
    """``{query: {doc: value}}`` from a Parquet file: what a pytrec_eval user writes for Parquet input."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["query_id", "doc_id", value])
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    columns = [table.column(c).to_pylist() for c in ("query_id", "doc_id", value)]
    for q, d, v in zip(*columns):
        out[q][d] = cast(v)
    return dict(out)


class PytrecEval(Tool):
    name, module, package = "pytrec_eval", "pytrec_eval", "pytrec-eval-terrier"

    def load_qrels(self, path: str) -> Any:
        import pytrec_eval

        if _is_parquet(path):
            return _nested(path, "relevance", int)
        with open(path) as handle:
            return pytrec_eval.parse_qrel(handle)

    def load_run(self, path: str) -> Any:
        import pytrec_eval

        if _is_parquet(path):
            return _nested(path, "score", float)
        with open(path) as handle:
            return pytrec_eval.parse_run(handle)

    def counts(self, qrels: Any, run: Any) -> dict[str, int]:
        return {
            "qrels_queries": len(qrels),
            "qrels_rows": sum(map(len, qrels.values())),
            "run_queries": len(run),
            "run_rows": sum(map(len, run.values())),
        }

    def _evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> tuple[Means, Any]:
        import pytrec_eval

        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {_PYTREC_REQUEST[m] for m in measures})
        values = evaluator.evaluate(run)
        n = len(values)
        means = {m: sum(v[_PYTREC[m]] for v in values.values()) / n for m in measures}
        return means, values

    def ndcg(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        return self._evaluate(qrels, run, [NDCG])

    def four(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        return self._evaluate(qrels, run, FOUR)

    def per_query(self, native: Any, run: Any) -> PerQuery:
        first: dict[str, float] = next(iter(native.values()), {})
        return {m: {q: v[key] for q, v in native.items()} for m, key in _PYTREC.items() if key in first}

    def many(self, qrels_path: str, run_paths: Sequence[str]) -> list[float]:
        import pytrec_eval

        evaluator = pytrec_eval.RelevanceEvaluator(self.load_qrels(qrels_path), {"ndcg_cut.10"})
        out = []
        for path in run_paths:
            values = evaluator.evaluate(self.load_run(path))
            out.append(sum(v["ndcg_cut_10"] for v in values.values()) / len(values))
        return out

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        if _is_parquet(qrels_path):
            load = "from bench.tools import _nested; q = _nested(a[1], 'relevance', int); r = _nested(a[2], 'score', float)"
        else:
            load = "q = pytrec_eval.parse_qrel(open(a[1])); r = pytrec_eval.parse_run(open(a[2]))"
        code = (
            f"import sys, pytrec_eval; a = sys.argv; {load}; "
            "v = pytrec_eval.RelevanceEvaluator(q, {'ndcg_cut.10'}).evaluate(r); "
            "print('ndcg_cut_10', sum(x['ndcg_cut_10'] for x in v.values()) / len(v))"
        )
        return [sys.executable, "-c", code, qrels_path, run_path]


# --------------------------------------------------------------------------------------------- ranx

_RANX = {"nDCG@10": "ndcg@10", "AP": "map", "R@100": "recall@100", "RR": "mrr"}


def _ranx_frame(path: str) -> Any:
    """A Parquet file as the DataFrame ranx accepts. ``Qrels/Run.from_parquet`` fail here: under pandas 3
    ids are read as the ``str`` dtype (ranx asserts ``object``) and ranx wants int64 labels (the file has
    int8), so the columns are cast, as a user has to."""
    import pandas as pd

    frame = pd.read_parquet(path)
    types: dict[str, Any] = {"query_id": object, "doc_id": object}
    if "relevance" in frame.columns:
        types["relevance"] = "int64"
    return frame.astype(types)


class Ranx(Tool):
    name, module, package = "ranx", "ranx", "ranx"

    def load_qrels(self, path: str) -> Any:
        from ranx import Qrels

        if _is_parquet(path):
            return Qrels.from_df(_ranx_frame(path), q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
        return Qrels.from_file(path, kind="trec")

    def load_run(self, path: str) -> Any:
        from ranx import Run

        if _is_parquet(path):
            return Run.from_df(_ranx_frame(path), q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        return Run.from_file(path, kind="trec")

    def counts(self, qrels: Any, run: Any) -> dict[str, int]:
        return {
            "qrels_queries": len(qrels.qrels),
            "qrels_rows": sum(len(qrels.qrels[q]) for q in qrels.qrels),
            "run_queries": len(run.run),
            "run_rows": sum(len(run.run[q]) for q in run.run),
        }

    def _evaluate(self, qrels: Any, run: Any, measures: Sequence[str]) -> tuple[Means, Any]:
        import numpy as np
        from ranx import evaluate

        values = evaluate(qrels, run, [_RANX[m] for m in measures], return_mean=False)
        if not isinstance(values, dict):  # one metric: ranx returns the bare array
            values = {_RANX[measures[0]]: values}
        return {m: float(np.mean(values[_RANX[m]])) for m in measures}, values

    def ndcg(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        return self._evaluate(qrels, run, [NDCG])

    def four(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        return self._evaluate(qrels, run, FOUR)

    def per_query(self, native: Any, run: Any) -> PerQuery:
        queries = run.get_query_ids()
        return {m: dict(zip(queries, map(float, native[key]))) for m, key in _RANX.items() if key in native}

    def many(self, qrels_path: str, run_paths: Sequence[str]) -> list[float]:
        from ranx import evaluate

        qrels = self.load_qrels(qrels_path)
        return [float(evaluate(qrels, self.load_run(path), "ndcg@10")) for path in run_paths]

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        if _is_parquet(qrels_path):
            load = (
                "from bench.tools import _ranx_frame as f; "
                "q = Qrels.from_df(f(a[1]), q_id_col='query_id', doc_id_col='doc_id', score_col='relevance'); "
                "r = Run.from_df(f(a[2]), q_id_col='query_id', doc_id_col='doc_id', score_col='score')"
            )
        else:
            load = "q = Qrels.from_file(a[1], kind='trec'); r = Run.from_file(a[2], kind='trec')"
        code = f"import sys; from ranx import Qrels, Run, evaluate; a = sys.argv; {load}; print('ndcg@10', evaluate(q, r, 'ndcg@10'))"
        return [sys.executable, "-c", code, qrels_path, run_path]


# --------------------------------------------------------------------------------------------- ir_measures


class IrMeasures(Tool):
    name, module, package = "ir_measures", "ir_measures", "ir-measures"

    def load_qrels(self, path: str) -> Any:
        import ir_measures

        if _is_parquet(path):
            import pandas as pd

            return pd.read_parquet(path)
        return list(ir_measures.read_trec_qrels(path))

    def load_run(self, path: str) -> Any:
        import ir_measures

        if _is_parquet(path):
            import pandas as pd

            return pd.read_parquet(path)
        return list(ir_measures.read_trec_run(path))

    def counts(self, qrels: Any, run: Any) -> dict[str, int]:
        def count(rows: Any) -> tuple[int, int]:
            if hasattr(rows, "query_id") and not isinstance(rows, list):  # a DataFrame
                return int(rows["query_id"].nunique()), len(rows)
            return len({r.query_id for r in rows}), len(rows)

        (qq, qr), (rq, rr) = count(qrels), count(run)
        return {"qrels_queries": qq, "qrels_rows": qr, "run_queries": rq, "run_rows": rr}

    @staticmethod
    def _measures(names: Sequence[str]) -> list[Any]:
        import ir_measures

        return [ir_measures.parse_measure(m) for m in names]

    def ndcg(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        import ir_measures

        agg = ir_measures.calc_aggregate(self._measures([NDCG]), qrels, run)
        return {NDCG: float(next(iter(agg.values())))}, None

    def four(self, qrels: Any, run: Any) -> tuple[Means, Any]:
        import ir_measures

        measures = self._measures(FOUR)
        agg, per_query = ir_measures.calc(measures, qrels, run)
        values: dict[Any, Any] = dict(agg)  # type: ignore[arg-type]
        return {name: float(values[m]) for name, m in zip(FOUR, measures)}, per_query

    def per_query(self, native: Any, run: Any) -> PerQuery:
        out: PerQuery = defaultdict(dict)
        for metric in native or ():
            out[str(metric.measure)][metric.query_id] = float(metric.value)
        return dict(out)

    def many(self, qrels_path: str, run_paths: Sequence[str]) -> list[float]:
        import ir_measures

        evaluator = ir_measures.evaluator(self._measures([NDCG]), self.load_qrels(qrels_path))
        return [float(next(iter(evaluator.calc_aggregate(self.load_run(p)).values()))) for p in run_paths]

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        if _is_parquet(qrels_path):
            load = "import pandas as pd; q = pd.read_parquet(a[1]); r = pd.read_parquet(a[2])"
        else:
            load = "q = ir_measures.read_trec_qrels(a[1]); r = ir_measures.read_trec_run(a[2])"
        code = (
            f"import sys, ir_measures; a = sys.argv; {load}; "
            "print(ir_measures.calc_aggregate([ir_measures.parse_measure('nDCG@10')], q, r))"
        )
        return [sys.executable, "-c", code, qrels_path, run_path]


# --------------------------------------------------------------------------------------------- trec_eval


#: Set by ``bench.run --trec-eval-src DIR`` to the binary it built; wins over every other place.
TREC_EVAL_OVERRIDE: str | None = None
TREC_EVAL_MISSING = (
    "trec_eval: missing (no binary built or found); give its source tree with --trec-eval-src DIR "
    "(a clone of https://github.com/usnistgov/trec_eval) or a binary with $TREC_EVAL"
)


def trec_eval_binary() -> str | None:
    """The trec_eval C binary: the one built by ``--trec-eval-src``, ``$TREC_EVAL``, the last build in
    ``bench/out/trec_eval/``, next to this Python (the venv's bin), else on PATH."""
    from bench.trec_eval_build import cached_binary

    candidates = [TREC_EVAL_OVERRIDE or "", os.environ.get("TREC_EVAL", ""), cached_binary() or ""]
    candidates.append(os.path.join(os.path.dirname(sys.executable), "trec_eval"))
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("trec_eval")


class TrecEval(Tool):
    """Only the CLI phase: trec_eval is a C program, not a library."""

    name, module, package = "trec_eval", "", ""

    def available(self) -> bool:
        return trec_eval_binary() is not None

    def version(self) -> str:
        return "C binary"

    def warm_import(self) -> None:
        return None

    def cli(self, qrels_path: str, run_path: str) -> list[str]:
        return [trec_eval_binary() or "trec_eval", "-m", "ndcg_cut.10", qrels_path, run_path]


TOOLS: dict[str, Tool] = {t.name: t for t in (Ranklens(), PytrecEval(), Ranx(), IrMeasures(), TrecEval())}


def available_tools(names: Sequence[str] | None = None) -> tuple[list[Tool], list[str]]:
    """The requested tools that can run here, and notes on those that cannot."""
    chosen, skipped = [], []
    for name in names or list(TOOLS):
        if name not in TOOLS:
            raise SystemExit(f"unknown tool {name!r}; known: {', '.join(TOOLS)}")
        tool = TOOLS[name]
        if tool.available():
            chosen.append(tool)
        elif name == "trec_eval":
            skipped.append(TREC_EVAL_MISSING)
        else:
            skipped.append(f"{name}: not installed (pip install -e '.[bench]')")
    return chosen, skipped
