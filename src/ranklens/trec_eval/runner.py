"""One trec_eval invocation: options in, stdout text, stderr text and exit status out.

The flow mirrors ``trec_eval.c`` (v10.0):

1. read the qrels and the run (exit 2 on unreadable or malformed input);
2. for each qrels query (``strcmp`` order): without ``-c``, a query the run lacks aborts with
   ``trec_eval: result qid '<qid>' not found in qrels`` and exit status 4, after the ``-q`` lines of the
   queries before it (trec_eval prints as it goes); with ``-c`` it is ranked against a placeholder
   document. Run queries absent from the qrels are ignored;
3. print the ``-q`` lines, then (unless ``-n``) the ``all`` lines.

The values of the measures the compiled backend declares (``map``, ``map_cut``, ``ndcg``, ``ndcg_cut``, ``P``,
``recall``, ``recip_rank`` at trec_eval's parameters) come from it when the dispatcher chooses it
(:func:`ranklens.backends.choose_backend`; not with ``-J``, ``-M``, ``-D``, another ``-R`` or a run on standard
input); the other measures from the reference kernels (:mod:`.compute`), both into one :class:`QueryValues`
printed once. When every selected measure is compiled, the reference engine is not imported at all.
``RANKLENS_BACKEND=reference`` computes everything on the reference; ``RANKLENS_DEBUG=1`` says which ran.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

from ranklens.errors import RanklensError
from ranklens.trec_eval.output import query_lines, summary_lines
from ranklens.trec_eval.select import Selected, TrecUsageError, foreign_measure, select
from ranklens.trec_eval.values import QueryValues
from ranklens.trec_eval.zscores import Reference, read_zscores, standardise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ranklens.measures.base import Measure

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
    foreign = foreign_measure(selected, options.rel_format)
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
    except (RanklensError, OSError, EOFError, zlib.error) as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 2)
    quick = _compiled_values(options, selected, max_docs)
    if quick is not None and quick[2]:  # (every selected measure compiled: no reference engine)
        from ranklens.trec_eval.run_tag import last_run_tag

        query_ids, numbers, _, tag = quick
        values = QueryValues(query_ids, numbers, {}, [False] * len(query_ids))
        return _render(options, selected, values, last_run_tag(options.run) or tag, reference, None, None)
    from ranklens.data._arrow import from_numpy
    from ranklens.trec_eval import inputs
    from ranklens.trec_eval.compute import compute

    try:
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
    compiled = quick[1] if quick is not None else {}
    try:
        values = compute(
            qrels,
            run,
            selected,
            placeholder_queries=missing_ids if options.complete else (),
            judged_only=options.judged_only,
            max_docs=max_docs,
            rel_level=options.rel_level,
            skip=frozenset(compiled),
        )
    except RanklensError as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 4)
    if compiled:
        if quick is not None and quick[0] == values.query_ids:
            values = replace(values, numbers={**values.numbers, **compiled})
        else:  # (the two backends evaluated other queries: never expected; the reference computes all)
            values = compute(qrels, run, selected, placeholder_queries=missing_ids if options.complete else (),
                             judged_only=options.judged_only, max_docs=max_docs, rel_level=options.rel_level)
    first = missing.tolist().index(True) if missing_ids and not options.complete else None
    stop = None if first is None else qrels.query_ids[first].as_py()
    return _render(options, selected, values, runid, reference, stop, first)


#: printed columns trec_eval clears for a -c placeholder query (:mod:`.compute`): the reference's
_RESET_EXACT = frozenset({"num_ret", "utility", "rbp_resid"})


def _compiled_values(
    options: TrecEvalOptions, selected: list[Selected], max_docs: int | None
) -> tuple[list[str], dict[str, list[float]], bool, str] | None:
    """``(query ids, {printed column: values}, every column compiled, run tag)`` of the columns whose measure
    the compiled backend declares, when the dispatcher chooses it and it reads the files; else None (the
    reference computes every column). Without ``-c``, a qrels query the run lacks makes trec_eval stop there
    (the reference says where), so the compiled values are not used."""
    if options.debug_query is not None or options.judged_only or max_docs is not None or options.run == "-":
        return None
    from ranklens.express import measures_declined

    cols: list[tuple[str, Measure]] = []
    every = True
    for sel in selected:
        if sel.entry.value == "runid":
            continue
        for printed, m in sel.columns:
            takes = (
                m is not None and sel.entry.name != "yaap" and printed not in _RESET_EXACT
                and not printed.startswith("unj") and measures_declined([m]) is None
            )
            if takes:
                cols.append((printed, m))  # type: ignore[arg-type]
            every = every and takes
    if not cols:
        return None
    from ranklens.backends import Choice, choose_backend, compiled_results, debug_note, run_compiled
    from ranklens.engine.policy import EvalPolicy

    policy = EvalPolicy(missing="zero" if options.complete else "skip")
    measures = list(dict.fromkeys(m for _, m in cols))
    choice = choose_backend(measures, policy, options.qrels, [options.run])
    got = run_compiled(
        choice, lambda why: compiled_results(options.qrels, [(None, options.run)], measures, policy, None, why)
    )
    if got is None:
        return None
    res = got[0][0]
    if not options.complete and any(getattr(n, "kind", None) == "qrels_only_queries" for n in res.notes):
        debug_note(Choice("reference", "trec_eval stops at the first qrels query the run lacks (no -c)"))
        return None  # (a Note: the compiled pass counted qrels queries the run lacks)
    if not every:
        debug_note(Choice("reference", f"the measures the compiled backend does not declare ({len(cols)} columns compiled)"))
    return list(res.query_ids), {p: res.column_values(m) for p, m in cols}, every, res.run


def _run_other_format(options: TrecEvalOptions, selected: list[Selected]) -> TrecEvalResult:
    """``-R qrels_jg``, ``prefs`` or ``qrels_prefs``: the same main loop over per-query measures."""
    from ranklens.trec_eval import inputs, rel_formats
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
