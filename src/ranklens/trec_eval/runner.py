"""One trec_eval invocation: options in, stdout text, stderr text and exit status out.

The flow mirrors ``trec_eval.c`` (v10.0):

1. read the qrels and the run (exit 2 on unreadable or malformed input);
2. for each qrels query (``strcmp`` order): without ``-c``, a query the run lacks aborts with
   ``trec_eval: result qid '<qid>' not found in qrels`` and exit status 4, after the ``-q`` lines of the
   queries before it (trec_eval prints as it goes); with ``-c`` it is ranked against a placeholder
   document. Run queries absent from the qrels are ignored;
3. print the ``-q`` lines, then (unless ``-n``) the ``all`` lines.

The values of the measures the compiled backend declares (trec_eval's whole default set and every measure of
``all_trec`` at trec_eval's default parameters, relstring included: :data:`ranklens.express.SUPPORTED_MEASURES`)
come from it when the dispatcher chooses it (:func:`ranklens.backends.choose_backend`; not with ``-J``, ``-M``,
``-D``, another ``-R`` or a run on standard input); the other measures (gain maps, ``-l`` other than 1,
``utility``'s coefficients, ``relstring.N`` …) from the reference kernels (:mod:`.compute`), both into one
:class:`QueryValues` printed once. When every selected measure is compiled, the reference engine is not
imported at all, and when they are also at their default parameters (:mod:`.plain`) neither is the measure
language: the pass's floats are printed as they are.
``RANKLENS_BACKEND=reference`` computes everything on the reference; ``RANKLENS_DEBUG=1`` says which ran.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

from ranklens.errors import RanklensError
from ranklens.trec_eval.output import query_lines, summary_lines
from ranklens.trec_eval.table import Selected
from ranklens.trec_eval.values import QueryValues
from ranklens.trec_eval.zscores import Reference, read_zscores, standardise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ranklens.measures.base import Measure

__all__ = ["TrecEvalOptions", "TrecEvalResult", "run_trec_eval"]


class TrecEvalOptions(NamedTuple):
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


class TrecEvalResult(NamedTuple):
    """What trec_eval would write and return."""

    stdout: str
    stderr: str = ""
    status: int = 0


def run_trec_eval(options: TrecEvalOptions) -> TrecEvalResult:
    """Evaluate ``options.run`` against ``options.qrels`` and render trec_eval's output."""
    plain = _run_plain(options)
    if isinstance(plain, TrecEvalResult):
        return plain
    from ranklens.trec_eval.select import TrecUsageError, foreign_measure, select

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
    quick = None if plain == "declined" else _compiled_values(options, selected, max_docs)
    if quick is not None and quick[3]:  # (every selected measure compiled: no reference engine)
        from ranklens.trec_eval.run_tag import last_run_tag

        query_ids, numbers, texts, _, tag = quick
        values = QueryValues(query_ids, numbers, texts)
        return _render(options, selected, values, last_run_tag(options.run) or tag, reference, None, None)
    import numpy as np

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
    compiled_texts = quick[2] if quick is not None else {}
    try:
        values = compute(
            qrels,
            run,
            selected,
            placeholder_queries=missing_ids if options.complete else (),
            judged_only=options.judged_only,
            max_docs=max_docs,
            rel_level=options.rel_level,
            skip=frozenset(compiled) | frozenset(compiled_texts),
        )
    except RanklensError as exc:
        return TrecEvalResult("", f"trec_eval: {exc}\n", 4)
    if compiled:
        if quick is not None and quick[0] == values.query_ids:
            values = values._replace(numbers={**values.numbers, **compiled}, texts={**values.texts, **compiled_texts})
        else:  # (the two backends evaluated other queries: never expected; the reference computes all)
            values = compute(qrels, run, selected, placeholder_queries=missing_ids if options.complete else (),
                             judged_only=options.judged_only, max_docs=max_docs, rel_level=options.rel_level)
    first = int(np.flatnonzero(missing)[0]) if missing_ids and not options.complete else None
    stop = None if first is None else qrels.query_ids[first].as_py()
    return _render(options, selected, values, runid, reference, stop, first)


def _run_plain(options: TrecEvalOptions) -> TrecEvalResult | str | None:
    """trec_eval's output when every selected measure is at its default parameters
    (:func:`ranklens.trec_eval.plain.select_plain`: named without the measure language) and the compiled pass
    computes them all; ``"declined"`` when the dispatcher chose another backend or the pass declined (the
    reference then computes every column: the same choice would be made again); None otherwise (the measure
    language selects them)."""
    if (options.rel_level, options.num_docs, options.rel_format, options.zscores) != (1, 0, "qrels", None):
        return None
    from ranklens.trec_eval.plain import select_plain

    selected = select_plain(options.measures)
    if selected is None or options.max_docs is not None:
        return None
    quick = _compiled_values(options, selected, None)
    if quick is None:
        return "declined"
    if not quick[3]:  # (never expected: every plain measure is declared)
        return None
    from ranklens.trec_eval.run_tag import last_run_tag

    query_ids, numbers, texts, _, tag = quick
    return _render(options, selected, QueryValues(query_ids, numbers, texts), last_run_tag(options.run) or tag, None, None, None)


def _compiled_values(
    options: TrecEvalOptions, selected: list[Selected], max_docs: int | None
) -> tuple[list[str], dict[str, Sequence[float]], dict[str, list[str]], bool, str] | None:
    """``(query ids, {printed column: values}, {relstring column: texts}, every column compiled, run tag)`` of
    the columns whose measure the compiled backend declares (and trec_eval's default ``relstring``, from the
    labels of the top ranks: :class:`ranklens.express.RankLabel`), when the dispatcher chooses it and it reads
    the files; else None (the reference computes every column). Without ``-c``, a qrels query the run lacks
    makes trec_eval stop there (the reference says where), so the compiled values are not used. With ``-c``
    the pass ranks such a query against trec_eval's placeholder and clears what trec_eval clears."""
    if options.debug_query is not None or options.judged_only or max_docs is not None or options.run == "-":
        return None
    from ranklens.express import RankLabel, measures_declined

    cols: list[tuple[str, Measure]] = []
    strings: list[tuple[str, list[RankLabel]]] = []
    every = True
    for sel in selected:
        if sel.entry.value == "runid":
            continue
        for printed, m in sel.columns:
            if sel.entry.value == "relstring" and printed == "relstring":  # (relstring_N: trec_eval keeps it for -c)
                strings.append((printed, [RankLabel(r) for r in range(1, sel.relstring_len + 1)]))
                continue
            takes = m is not None and sel.entry.name != "yaap" and measures_declined([m]) is None
            if takes:
                cols.append((printed, m))  # type: ignore[arg-type]
            every = every and takes
    if not cols:
        return None
    from ranklens.backends import Choice, choose_backend, debug_note, run_compiled
    from ranklens.express import evaluate_express

    policy = None  # (the default: missing="skip"; -c asks for missing="zero")
    if options.complete:
        from ranklens.engine.policy import EvalPolicy

        policy = EvalPolicy(missing="zero")
    measures = list(dict.fromkeys(m for _, m in cols))
    labels = [label for _, ranks in strings for label in ranks]
    wanted: list[Measure | RankLabel] = [*measures, *labels]
    choice = choose_backend(measures, policy, options.qrels, [options.run])
    # (the compiled pass's own values, plain floats: printing them needs neither numpy nor a Results)
    missing = "zero" if options.complete else "skip"
    got = run_compiled(
        choice, lambda why: evaluate_express(options.qrels, [options.run], wanted, why=why, missing=missing)
    )
    if got is None:
        return None
    res = got[0]
    if not options.complete and any(getattr(n, "kind", None) == "qrels_only_queries" for n in res.notes):
        debug_note(Choice("reference", "trec_eval stops at the first qrels query the run lacks (no -c)"))
        return None  # (a Note: the compiled pass counted qrels queries the run lacks)
    if not every:
        debug_note(Choice("reference", f"the measures the compiled backend does not declare ({len(cols)} columns compiled)"))
    where = {id(m): j for j, m in enumerate(wanted)}
    columns = list(zip(*res.rows)) if res.rows else [() for _ in wanted]  # (a tuple of values per measure)
    numbers: dict[str, Sequence[float]] = {p: columns[where[id(m)]] for p, m in cols}
    texts = {
        p: _relstrings([list(ranked) for ranked in zip(*(columns[where[id(r)]] for r in ranks))]) if ranks
        else [""] * len(res.rows)
        for p, ranks in strings
    }
    return list(res.query_ids), numbers, texts, every, res.run


#: trec_eval's relstring character of a label 0-9 (m_relstring.c); above 9 ``>``, not in the qrels ``-``
_DIGITS = "0123456789"


def _relstrings(labels: list[list[float]]) -> list[str]:
    """The relstring of every query from the labels of its top ranks (a row per query, a column per rank;
    -1 not judged, -2 no document at that rank). The parsers decline negative labels, so neither ``.``
    (pooled but unjudged) nor ``<`` arises here.

    >>> _relstrings([[2.0, -1.0, 12.0, -2.0], [-2.0, -2.0, -2.0, -2.0]])
    ['2->', '']
    """
    out = []
    for row in labels:
        chars = []
        for value in row:
            label = int(value)
            if label == -2:
                break
            chars.append("-" if label < 0 else ">" if label > 9 else _DIGITS[label])
        out.append("".join(chars))
    return out


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
        from dataclasses import replace

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
