"""Reading the two input files the way trec_eval 10.0 sees them.

Parsing itself is :mod:`ranklens.data.io`'s job (TREC format: whitespace-separated columns, rank column
ignored, scores as float64, duplicates fatal). Two things are trec_eval-specific and live here:

* the run id trec_eval prints is the tag of the **last** content line of the run file
  (``get_trec_results.c`` keeps only that one);
* with ``-c``, a query of the qrels that the run lacks is evaluated against a one-document ranking of a
  document that no qrels lists (``trec_eval.c``: ``"ceci_nest_pas_un_docno"`` with score 1.0), so that
  every measure sees a non-empty ranking; :func:`ranklens.engine.placeholder.with_placeholders` adds those
  rows (the Evaluator's ``missing="zero"`` ranks such a query the same way).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow.compute as pc

from ranklens.data._arrow import from_numpy, string_array, to_numpy
from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.placeholder import PLACEHOLDER_DOC, with_placeholders
from ranklens.trec_eval.run_tag import last_run_tag, last_tag

__all__ = ["PLACEHOLDER_DOC", "last_run_tag", "load", "missing_queries", "with_placeholders"]


def load(qrels_path: str, run_path: str) -> tuple[Qrels, Run, str]:
    """Read the qrels and the run (TREC format; ``-`` is standard input) and the run id trec_eval prints."""
    from ranklens.data.io import read_qrels

    qrels = read_qrels(qrels_path, format="trec")
    run, runid = load_run(run_path)
    return qrels, run, runid


def load_run(run_path: str) -> tuple[Run, str]:
    """The run (TREC format) and the run id trec_eval would print. ``-`` is standard input; a pipe or
    FIFO is read once, whole (it cannot be opened twice to find the last line's tag)."""
    from ranklens.data.io import read_run

    if run_path != "-" and os.path.isfile(run_path):
        run = read_run(run_path, format="trec")
        return run, last_run_tag(run_path) or run.name
    from ranklens.data.io import read_text_bytes
    from ranklens.data.readers import RUN, no_rows, to_run, trec

    display, data = read_text_bytes(run_path)
    columns = trec.read_run(data, display)
    if len(columns.query_id) == 0:  # type: ignore[arg-type]
        raise no_rows(RUN, display)
    run = to_run(columns, display, columns.tag or "run")
    return run, last_tag(data.splitlines()) or run.name


def only_query(qrels: Qrels, query_id: str) -> Qrels | None:
    """The qrels of one query (``-D level.qid``), or None when the qrels do not have it."""
    rows = np.flatnonzero(np.asarray(qrels.query_ids.take(from_numpy(qrels.query)).to_pylist(), dtype=object) == query_id)
    if rows.size == 0:
        return None
    return Qrels.from_arrays(
        string_array([query_id] * rows.size),
        qrels.doc_ids.take(from_numpy(qrels.doc[rows])),
        qrels.label[rows],
        source=qrels.source,
    )


def missing_queries(qrels: Qrels, run: Run) -> np.ndarray:
    """Mask over ``qrels.query_ids``: the queries with no retrieved document."""
    present = pc.is_in(qrels.query_ids, value_set=run.query_ids)
    return ~to_numpy(present)
