"""One trec_eval invocation: options in, stdout text, stderr text and exit status out.

The flow mirrors ``trec_eval.c`` (v10.0):

1. read the qrels and the run (exit 2 on unreadable or malformed input);
2. for each qrels query (``strcmp`` order): without ``-c``, a query the run lacks aborts with
   ``trec_eval: result qid '<qid>' not found in qrels`` and exit status 4, after the ``-q`` lines of the
   queries before it (trec_eval prints as it goes); with ``-c`` it is ranked against a placeholder
   document. Run queries absent from the qrels are ignored;
3. print the ``-q`` lines, then (unless ``-n``) the ``all`` lines.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from ranklens.data._arrow import from_numpy
from ranklens.errors import RanklensError
from ranklens.trec_eval import inputs, rel_formats
from ranklens.trec_eval.compute import QueryValues, compute
from ranklens.trec_eval.output import query_lines, summary_lines
from ranklens.trec_eval.select import Selected, TrecUsageError, select
from ranklens.trec_eval.zscores import Reference, read_zscores, standardise

__all__ = ["TrecEvalOptions", "TrecEvalResult", "run_trec_eval"]


@dataclass(frozen=True)
class TrecEvalOptions:
    """trec_eval's command line.

    Attributes:
        qrels, run: the two files (relevance information and TREC run; ``-`` reads the run from stdin).
        measures: the ``-m`` arguments in order (``official`` when empty).
        per_query: ``-q``, print every query's values too.
        complete: ``-c``, evaluate every qrels query (missing ones against a placeholder ranking).
        summary: ``False`` for ``-n``: no ``all`` lines.
        rel_level: ``-l``, the smallest label that counts as relevant for binary measures.
        max_docs: ``-M``, evaluate only the first documents of each ranking (0 or less: none).
        judged_only: ``-J``, drop retrieved documents without a judgement first.
        num_docs: ``-N``, the collection size (used by ``utility``).
        rel_format: ``-R``: ``qrels`` (default), ``qrels_jg``, ``prefs`` or ``qrels_prefs``.
        zscores: ``-Z``, a file of reference means and deviations: print z-scores.
        debug_query: the query of ``-D level.qid``: evaluate only that query.
    """

    qrels: str
    run: str
    measures: tuple[str, ...] = ()
    per_query: bool = False
    complete: bool = False
    summary: bool = True
    rel_level: int = 1
    max_docs: int | None = None
    judged_only: bool = False
    num_docs: int = 0
    rel_format: str = "qrels"
    zscores: str | None = None
    debug_query: str | None = None


@dataclass(frozen=True)
class TrecEvalResult:
    """What trec_eval would write and return."""

    stdout: str
    stderr: str = ""
    status: int = 0


def run_trec_eval(options: TrecEvalOptions) -> TrecEvalResult:
    """Evaluate ``options.run`` against ``options.qrels`` and render trec_eval's output."""
    try:
        selected = select(options.measures, rel_level=options.rel_level, num_docs=options.num_docs)
    except TrecUsageError as exc:
        return TrecEvalResult("", exc.message + "\n", exc.status)
    foreign = rel_formats.foreign_measure(selected, options.rel_format)
    if foreign is not None:
        return TrecEvalResult(
            "",
            f"trec_eval: measure '{foreign}' cannot be computed from -R {options.rel_format} input\n"
            f"trec_eval: Can't calculate measure '{foreign}'\n",
            4,
        )
    if options.rel_format != "qrels":
        return _run_other_format(options, selected)
    max_docs = None if options.max_docs is None else max(options.max_docs, 0)
    try:
        reference = read_zscores(options.zscores) if options.zscores else None
        qrels, run, runid = inputs.load(options.qrels, options.run)
    except (RanklensError, OSError, EOFError, zlib.error) as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 2)
    if options.debug_query is not None:
        one = inputs.only_query(qrels, options.debug_query)
        if one is None:
            return TrecEvalResult("", "trec_eval: No queries with both results and relevance info\n", 7)
        qrels = one

    missing = inputs.missing_queries(qrels, run)
    missing_ids = qrels.query_ids.filter(from_numpy(missing)).to_pylist() if missing.any() else []
    if missing_ids and options.complete:
        run = inputs.with_placeholders(run, missing_ids)
    try:
        values = compute(
            qrels,
            run,
            selected,
            placeholder_queries=missing_ids if options.complete else (),
            judged_only=options.judged_only,
            max_docs=max_docs,
            rel_level=options.rel_level,
        )
    except RanklensError as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 4)
    first = int(np.flatnonzero(missing)[0]) if missing_ids and not options.complete else None
    stop = None if first is None else qrels.query_ids[first].as_py()
    return _render(options, selected, values, runid, reference, stop, first)


def _run_other_format(options: TrecEvalOptions, selected: list[Selected]) -> TrecEvalResult:
    """``-R qrels_jg``, ``prefs`` or ``qrels_prefs``: the same main loop over per-query measures."""
    max_docs = None if options.max_docs is None else max(options.max_docs, 0)
    try:
        reference = read_zscores(options.zscores) if options.zscores else None
        judgments = rel_formats.read_judgments(options.qrels, options.rel_format)
        run, runid = inputs.load_run(options.run)
    except (RanklensError, OSError, EOFError, zlib.error) as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 2)
    if options.debug_query is not None:
        if options.debug_query not in judgments.by_query:
            return TrecEvalResult("", "trec_eval: No queries with both results and relevance info\n", 7)
        judgments = replace(judgments, by_query={options.debug_query: judgments.by_query[options.debug_query]})
    try:
        values, stop = rel_formats.compute_other(
            judgments, run, selected, complete=options.complete, max_docs=max_docs,
            rel_level=options.rel_level, judged_only=options.judged_only,
        )
    except RanklensError as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 4)
    return _render(options, selected, values, runid, reference, stop, len(values.query_ids))


def _render(
    options: TrecEvalOptions,
    selected: list[Selected],
    values: QueryValues,
    runid: str,
    reference: Reference | None,
    stop: str | None,
    printed_before_stop: int | None,
) -> TrecEvalResult:
    """trec_eval's stdout for ``values``; ``stop`` is the first judged query the run lacks without -c
    (trec_eval has printed the ``-q`` lines of the queries before it, then exits with status 4)."""
    zscore = reference is not None
    if reference is not None:
        geometric = [p for sel in selected if sel.entry.summary == "gmean" for p, _ in sel.columns]
        values = standardise(values, reference, geometric=geometric)
    if stop is not None:
        done = range(printed_before_stop or 0)
        out = "".join(query_lines(selected, values, done, zscore=zscore)) if options.per_query else ""
        return TrecEvalResult(out, f"trec_eval: result qid '{stop}' not found in qrels\n", 4)
    parts: list[str] = []
    if options.per_query:
        parts.extend(query_lines(selected, values, range(len(values.query_ids)), zscore=zscore))
    if options.summary:
        parts.extend(summary_lines(selected, values, runid, zscore=zscore))
    return TrecEvalResult("".join(parts))
