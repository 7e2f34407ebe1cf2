"""The Evaluator: measures and qrels prepared once, applied to any number of runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.alignment import AlignReport, Negative, QuerySet, align
from ranklens.engine.blocked import BLOCK_USERS, BlockTally, absent_note, split_run
from ranklens.engine.kernels import SIDE_KERNELS, kernel_for
from ranklens.engine.kernels.recsys_system import SYSTEM_FAMILIES, Accumulator
from ranklens.engine.labels import check_measures
from ranklens.engine.policy import EvalPolicy
from ranklens.engine.pool import POOL_IDEAL_FAMILIES, SelfPool, self_pool_depths, self_pool_note
from ranklens.engine.ranked import RankedLists
from ranklens.errors import InputError, Note, QuerySetError, warn_notes
from ranklens.measures.base import Measure
from ranklens.measures.language import MeasuresArg, parse_many
from ranklens.results.core import Results, assemble, stack_columns

__all__ = ["Evaluator", "evaluate"]


class Evaluator:
    """Evaluate runs against one set of qrels.

    Args:
        measures: measure names (``"nDCG@10"``, ``"ndcg_cut.10"``) or :class:`Measure` values.
        qrels: a :class:`Qrels`, a path, a DataFrame/Arrow table or a ``{qid: {doc: label}}`` dict.
        missing: queries of the qrels absent from the run: ``"skip"`` (default; evaluate the
            intersection), ``"zero"`` (they score 0 and count in the mean: trec_eval ``-c``) or ``"error"``.
        negative: negative qrels labels: ``"trec"`` (pooled but unjudged: gain 0, not in the ideal;
            default), ``"zero"`` (a judged 0) or ``"error"``.
        judged_only: drop unjudged retrieved documents before computing (trec_eval ``-J``).
        max_docs: only the first ``max_docs`` documents per query count (trec_eval ``-M``).
        rel_level: default relevance threshold ``rel`` of binary measures (trec_eval ``-l``); any number
            with real-valued labels.
        labels: ``"int"`` or ``"float"``: how qrels read from a path, frame or dict are typed; ``None``
            (default) reads integers, or keeps the kind of a given :class:`Qrels`. With ``"float"`` the
            graded measures use the labels as gains and binary measures need an explicit ``rel`` or
            ``rel_level`` (docs/labels.md).
        qrels_columns, run_columns: ``{column name: role}`` for qrels and runs given as files or tables
            with named columns (``{"user": "query_id", "item": "doc_id", "rating": "relevance"}``;
            :func:`ranklens.read_qrels` ``columns=``); ``run_columns`` applies to every run evaluated.
        train: training interactions (a path, frame, dict ``{user: [items]}`` or
            :class:`~ranklens.data.interactions.Interactions`) for the recommender measures (Novelty, ARP,
            Serendipity, Coverage, Gini); read once, columns found as in qrels or named by ``train_columns``.
        items: the item catalog (category or numeric features) for ILD, and the catalog of Coverage/Gini;
            ``items_columns`` names its columns (``{"sku": "item", "genre": "category", "year": "feature"}``).
        exclude_seen: drop from each user's list the items that user has in ``train`` before anything
            is computed (a note counts the rows dropped).
        empty: users with no relevant test item: ``None`` (default: each measure's own value), ``"skip"``
            (left out of the per-user measures), ``"zero"`` or ``"one"`` (their relevance measures score 0 or 1).
        aggregate: default ``agg=`` of the measures that take one (``"median"``, ``"p90"`` …).
        intents: intent-level qrels (a path to ``qid intent docid rel`` lines, a dict ``{qid: {intent: {doc:
            rel}}}``, a table or :class:`~ranklens.data.intents.IntentQrels`), read once, for the intent-aware
            measures (``alpha-nDCG@10``, ``ERR-IA@20``, ``NRBP`` …: docs/diversity.md).
        policy: all of the above as one :class:`~ranklens.engine.policy.EvalPolicy` (its formats are used
            for qrels and runs given as paths), instead of the keywords: a keyword given a value other
            than its default next to ``policy=`` is an error.

    >>> ev = Evaluator(["nDCG@5", "P@1"], {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}})
    >>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
    >>> round(ev(run)["nDCG@5"], 6)
    0.909816
    """

    def __init__(
        self,
        measures: MeasuresArg,
        qrels: Any,
        *,
        missing: str = "skip",
        negative: str = "trec",
        judged_only: bool = False,
        max_docs: int | None = None,
        rel_level: float | None = None,
        labels: str | None = None,
        qrels_columns: Mapping[str, str] | None = None,
        run_columns: Mapping[str, str] | None = None,
        policy: EvalPolicy | None = None,
        train: Any = None,
        items: Any = None,
        exclude_seen: bool = False,
        empty: str | None = None,
        aggregate: str | None = None,
        train_columns: Mapping[str, str] | None = None,
        items_columns: Mapping[str, str] | None = None,
        intents: Any = None,
    ) -> None:
        keywords = dict(
            missing=missing, negative=negative, judged_only=judged_only, max_docs=max_docs, rel_level=rel_level,
            labels=labels, qrels_columns=qrels_columns, run_columns=run_columns, train=train, items=items,
            exclude_seen=exclude_seen, empty=empty, aggregate=aggregate, train_columns=train_columns,
            items_columns=items_columns, intents=intents,
        )
        if policy is not None:
            both = [k for k, v in keywords.items() if _given(v, getattr(_DEFAULT, k))]
            if both:
                raise InputError(f"give the policy once: policy= or keywords, not both (also given: {', '.join(both)})")
            rel_level = policy.rel_level
        self.measures: tuple[Measure, ...] = tuple(m.validate() for m in parse_many(measures, rel_level=rel_level))
        if not self.measures:
            raise InputError("no measure given; e.g. nDCG@10")
        #: the evaluation policy (as given; :meth:`options` records it with the kind of the qrels read)
        self.policy: EvalPolicy = policy if policy is not None else EvalPolicy(**keywords)  # type: ignore[arg-type]
        p = self.policy
        self._side = _SideTables(p, self.measures)
        self.measures = self._side.measures
        self.qrels: Qrels = _as_qrels(qrels, p.qrels_columns, p.labels, p.qrels_format)
        self.labels = self.qrels.label_kind
        self.rel_level = p.rel_level
        check_measures(self.measures, labels=self.labels, negative=p.negative, judged_only=p.judged_only, rel_level=p.rel_level)
        self.run_columns = p.run_columns
        self.run_format = p.run_format
        self.query_set: QuerySet = p.query_set  # type: ignore[assignment]
        self.negative: Negative = p.negative  # type: ignore[assignment]
        self.judged_only = p.judged_only
        self.max_docs = p.max_docs
        self.depth = rows_needed(self.measures)

    def align(self, run: Any, *, order: str = "score") -> tuple[RankedLists, list[str]]:
        """The :class:`RankedLists` of ``run`` (for explanations and custom kernels) and the notes."""
        lists, report = self._align(_as_run(run, columns=self.run_columns, format=self.run_format), order)
        return lists, report.messages()

    def _align(self, run: Run, order: str, judged_only: bool = False, judged_by: np.ndarray | None = None) -> tuple[RankedLists, AlignReport]:
        return align(
            self.qrels,
            run,
            order=order,  # type: ignore[arg-type]
            query_set=self.query_set,
            negative=self.negative,
            judged_only=self.judged_only or judged_only,
            max_docs=self.max_docs,
            depth=self.depth,
            map_negative_labels=True,
            judged_by=judged_by,
        )

    def __call__(self, run: Any, *, name: str | None = None, warn: bool = True) -> Results:
        """Evaluate one run (a :class:`Run`, a path, a frame or a ``{qid: {doc: score}}`` dict).

        ``warn=False`` keeps the notes in :attr:`Results.notes` only (for callers that report them).

        Raises:
            InputError: no query is evaluated (the run and the qrels share none): a mean over nothing
                is an error, never NaN.

        Warns:
            RanklensWarning: once per note: queries skipped or scored 0, run-only queries ignored, rows cut …
        """
        res = self.results(_as_run(run, name=name, columns=self.run_columns, format=self.run_format))
        if warn:
            warn_notes(res.notes, f"{res.run}: ")
        return res

    def results(
        self, r: Run, *, allow_empty: bool = False, block_users: int | None = None, tally: BlockTally | None = None,
        judged_by: np.ndarray | None = None,
    ) -> Results:
        """Evaluate a :class:`Run`; ``allow_empty`` returns a Results over zero queries instead of raising
        (for callers that evaluate a run in parts, such as streaming).

        An evaluator with side tables or system-level measures evaluates a run of more than
        :data:`~ranklens.engine.blocked.BLOCK_USERS` users (or ``block_users``, any size) a block of users at a
        time: the same values, bit for bit (:mod:`ranklens.engine.blocked`), with the memory of one block's
        alignment. ``tally``: this run is one block of a bigger evaluation; its system-level measures and
        its note counts go into the tally (the caller words them and computes the values at the end).

        ``judged_by``: shared judgements (:func:`~ranklens.engine.alignment.align`): the qrels query judging each
        of the run's queries (by run query code, -1: none); the results are per run query. Not with side tables.

        >>> from ranklens.data.qrels import Qrels
        >>> from ranklens.data.run import Run
        >>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
        >>> run = Run.from_dict({"r1": {"a": 2.0, "b": 1.0}, "r2": {"a": 1.0, "b": 2.0}, "r3": {"a": 1.0}})
        >>> res = Evaluator(["RR"], qrels).results(run, judged_by=np.array([0, 0, -1]))  # r3: no judgements
        >>> res.per_query("RR")
        {'r1': 1.0, 'r2': 0.5}
        """
        if judged_by is not None and (self._side.active or self._blocks(r, block_users)):
            raise InputError("judged_by does not go with side tables or system-level measures")
        if tally is None and self._blocks(r, block_users):
            return self._results_blocked(r, block_users or BLOCK_USERS)
        by_order: dict[tuple[str, bool], list[int]] = {}  # (tie order, the measure's own judged_only)
        for j, m in enumerate(self.measures):
            order = "input" if _ties(m) == "input" else "score"
            by_order.setdefault((order, bool(m.get("judged_only"))), []).append(j)
        columns: list[np.ndarray | None] = [None] * len(self.measures)
        notes: list[str] = list(r.notes) if tally is None else []
        side = self._side
        if side.active:
            r = side.before_align(r, notes) if tally is None else side.before_align(r, notes, tally)
        query_ids: tuple[str, ...] = ()
        system: dict[int, float] = {}
        has_relevant: np.ndarray | None = None
        self.last_report: AlignReport | None = None
        self.last_pool: SelfPool | None = None
        for (order, judged), idx in by_order.items():
            lists, report = self._align(r, order, judged) if judged_by is None else self._align(r, order, judged, judged_by)
            self.last_report = report
            if self.last_pool is None and any(self.measures[j].name in POOL_IDEAL_FAMILIES for j in idx):
                self.last_pool = self_pool_depths(lists)
            for msg in report.messages() if tally is None else ():
                if judged and not self.judged_only and "judged-only" in msg:  # (one measure's own judged_only)
                    msg = f"{', '.join(str(self.measures[j]) for j in idx)}: {msg}"
                if msg not in notes:
                    notes.append(msg)
            query_ids = tuple(lists.query_ids.to_pylist())
            wanted = [self.measures[j] for j in idx]
            inputs = _side_inputs(side, lists, wanted, notes, r, tally) if side.active or any(m.name in SIDE_KERNELS for m in wanted) else None
            if side.empty is not None:
                has_relevant = lists.num_relevant(self.rel_level if self.rel_level is not None else 1) > 0
            by_intents = [j for j in idx if "intents" in self.measures[j].family.needs]
            if by_intents:
                columns_of = intent_columns(lists, side.intents, [self.measures[j] for j in by_intents])
                for j, column in zip(by_intents, columns_of):
                    columns[j] = column
            for j in idx:
                m = self.measures[j]
                if j in by_intents:
                    continue
                if m.family.is_system(m) and m.name in SYSTEM_FAMILIES:
                    acc = tally.accumulator(j, m) if tally is not None else Accumulator(m)
                    acc.add(lists, inputs)
                    if tally is None:
                        system[j] = acc.value()
                    columns[j] = np.full(lists.num_queries, np.nan)
                    continue
                value = kernel_for(m, inputs, side.available)(lists, m)
                if m.family.is_system(m):  # (a plugin's system-level measure: one pass only, see blockable)
                    system[j] = float(value)
                    value = np.full(lists.num_queries, np.nan)
                columns[j] = value
            self._score_absent(
                lists, report, [j for j in idx if not self.measures[j].family.is_system(self.measures[j])], columns,
                judged_only=self.judged_only or judged,
            )
        if not query_ids and not allow_empty:
            raise InputError(nothing_evaluated(r.source, self.qrels.num_queries, r.num_queries))
        pool_note = self_pool_note(self.measures, self.last_pool) if self.last_pool is not None and tally is None else None
        if pool_note is not None:
            notes.append(pool_note)
        values = stack_columns([c for c in columns if c is not None], len(query_ids))
        self.last_query_ids = query_ids  # (the evaluated users, before empty=skip leaves some out)
        if has_relevant is not None:
            query_ids, values = (
                side.apply_empty(query_ids, values, has_relevant, notes) if tally is None
                else side.apply_empty(query_ids, values, has_relevant, notes, tally)
            )
        return assemble(r.name, self.measures, query_ids, values, notes, self.options(), system, id_kind=r.id_kind)

    def _blocks(self, r: Run, block_users: int | None) -> bool:
        """Whether :meth:`results` evaluates ``r`` in blocks of users (see there)."""
        if not self.blockable:
            return False
        if block_users is not None:
            return True
        return (self._side.active or any(m.family.is_system(m) for m in self.measures)) and r.num_queries > BLOCK_USERS

    @property
    def blockable(self) -> bool:
        """True when users can be evaluated in blocks with the same result: no measure with its own
        judged_only (its note is per group) and the query set is not ``qrels`` (a query the run lacks is
        scored once, over the whole run)."""
        return self.query_set != "qrels" and self._side.intents is None and not any(
            m.get("judged_only") or (m.family.is_system(m) and m.name not in SYSTEM_FAMILIES) for m in self.measures
        )

    def _results_blocked(self, r: Run, users: int) -> Results:
        tally = BlockTally()
        ids: list[str] = []
        values: list[np.ndarray] = []
        for part in split_run(r, users):
            res = self.results(part, allow_empty=True, tally=tally)
            tally_block(tally, self)
            ids.extend(res.query_ids)
            values.append(res.values)
        if self.query_set == "error" and tally.report["evaluated"] < self.qrels.num_queries:
            seen = set(ids)
            missing = [q for q in self.qrels.query_ids.to_pylist() if q not in seen]
            raise QuerySetError(
                f"{len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} not in the run {r.source} "
                f"(e.g. {missing[:3]}); use query set 'intersect' or 'qrels'"
            )
        if not tally.report["evaluated"]:
            raise InputError(nothing_evaluated(r.source, self.qrels.num_queries, r.num_queries))
        order = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
        matrix = np.vstack(values)[order]
        report = merged_report(tally, self.qrels.num_queries)
        self.last_report, self.last_pool, self.last_blocks = report, tally.pool, tally.blocks
        notes = tally_notes(tally, self, list(r.notes), report.messages())
        system = {j: acc.value() for j, acc in tally.system.items()}
        return assemble(
            r.name, self.measures, tuple(ids[i] for i in order), matrix, notes, self.options(), system, id_kind=r.id_kind
        )

    def _score_absent(
        self, lists: RankedLists, report: AlignReport, idx: list[int], columns: list[np.ndarray | None], *,
        judged_only: bool,
    ) -> None:
        """``missing="zero"``: the qrels queries the run lacks take the values trec_eval ``-c`` gives them,
        ranked against its placeholder document (:mod:`ranklens.engine.placeholder`); measures that are NA
        by definition (their mean skips NaN) and the recommender measures (which would read the placeholder
        as a recommended item) keep their value on the empty ranking, scored 0 where it is NaN."""
        absent = report.absent
        if absent is None or not absent.any():
            return
        from ranklens.engine.placeholder import placeholder_values

        rows = np.flatnonzero(absent)
        ids = lists.query_ids.take(rows).to_pylist()
        as_trec = [
            j for j in idx
            if self.measures[j].family.aggregate != "nanmean" and self.measures[j].name not in SIDE_KERNELS
            and not self.measures[j].family.needs
        ]
        values, done = placeholder_values(
            self.qrels, ids, [self.measures[j] for j in as_trec], negative=self.negative,
            judged_only=judged_only, max_docs=self.max_docs,
        )
        for k, j in enumerate(as_trec):  # (rows not done: -J dropped the placeholder, an empty ranking)
            column = np.array(columns[j], dtype=np.float64, copy=True)
            column[rows[done]] = values[done, k]
            columns[j] = column
        for j in idx:
            if j not in as_trec:
                columns[j] = absent_scored_zero(columns[j], self.measures[j], absent)  # type: ignore[arg-type]

    @property
    def intents(self) -> Any:
        """The intent-level qrels read for the intent-aware measures (:class:`~ranklens.data.intents.IntentQrels`),
        or None."""
        return self._side.intents

    @property
    def streamable(self) -> bool:
        """False when the evaluation needs the whole run at once: a measure with its own judged_only, intents,
        or side tables or system-level measures with the query set ``qrels`` (``missing="zero"``)."""
        if self._side.intents is not None:
            return False
        if self._side.active or any(m.family.is_system(m) for m in self.measures):
            return self.blockable  # (in blocks of users: engine/blocked.py)
        return not any(m.get("judged_only") for m in self.measures)

    def options(self) -> dict[str, Any]:
        """The policies every Results of this evaluator records (``Results.options``)."""
        return self.policy.options(labels=self.labels)

    def evaluate(self, run: Any, *, name: str | None = None) -> Results:
        """Same as calling the evaluator."""
        return self(run, name=name)

    def evaluate_many(self, runs: Mapping[str, Any] | Sequence[Any]) -> list[Results]:
        """Evaluate several runs against the same prepared qrels: a ``{name: run}`` mapping (each result
        is named by its key) or a sequence, named by the one rule of :func:`ranklens.data.names.unique_names`
        (the run's tag; its file stem where tags collide; then ``#1``, ``#2``)."""
        from ranklens.data.names import unique_names

        if isinstance(runs, Mapping):
            out = [self(r, name=str(n)) for n, r in runs.items()]
            names = [str(n) for n in runs]
        else:
            items = list(runs)
            out = [self(r) for r in items]
            names = unique_names([(res.run, src) for res, src in zip(out, items)])
        return [res if res.run == n else res.replace(run=n) for res, n in zip(out, names)]


def _side_inputs(side: _SideTables, lists: RankedLists, wanted: list[Measure], notes: list[str], r: Run, tally: BlockTally | None) -> Any:
    # (positional, and the tally only when there is one: Spark's buckets watch these steps with their own signature)
    return side.inputs(lists, wanted, notes, r) if tally is None else side.inputs(lists, wanted, notes, r, tally)


def tally_block(tally: BlockTally, ev: Evaluator) -> None:
    """Add what the last block's alignment left out (``ev.last_report``) and its self-pool to ``tally``."""
    tally.blocks += 1
    report = ev.last_report
    if report is not None:
        for key in ("run_only_queries", "run_only_rows", "truncated_rows", "removed_unjudged_rows"):
            tally.report[key] += getattr(report, key)
        tally.report["evaluated"] += ev.qrels.num_queries - report.qrels_only_queries
    if ev.last_pool is not None:
        tally.pool = ev.last_pool if tally.pool is None else tally.pool + ev.last_pool


def merged_report(tally: BlockTally, qrels_queries: int) -> AlignReport:
    """The alignment report of the whole blocked evaluation (its counts summed over the blocks)."""
    t = tally.report
    return AlignReport(
        run_only_queries=t["run_only_queries"], run_only_rows=t["run_only_rows"],
        qrels_only_queries=qrels_queries - t["evaluated"], qrels_only_scored_zero=False,
        truncated_rows=t["truncated_rows"], removed_unjudged_rows=t["removed_unjudged_rows"],
    )


def tally_notes(tally: BlockTally, ev: Evaluator, notes: list[str], alignment: Sequence[str]) -> list[str]:
    """The notes of a blocked evaluation, worded and ordered as one pass words them: the reader's, the side
    tables', exclude-seen's, the alignment's, the side-table coverage, the self-pool, empty users."""
    side = ev._side

    def add(note: str | None) -> None:
        if note is not None and note not in notes:
            notes.append(note)

    if side.active:
        for n in side.notes:
            add(n)
        if tally.seen_applied:
            add(seen_note(tally.seen_dropped, tally.seen_total))
    for n in alignment:
        add(n)
    for n in tally.absent_notes():
        add(n)
    if tally.pool is not None:
        add(self_pool_note(ev.measures, tally.pool))
    if side.empty is not None and tally.blocks:
        add(empty_note(side.empty, tally.empty[0], tally.empty[1]))
    return notes


def seen_note(dropped: int, total: int) -> Note:
    """The exclude-seen note (a :class:`~ranklens.errors.Note`: its counts are data)."""
    return Note("seen_rows_dropped", dropped, total=total)


def empty_note(empty: str, count: int, n: int) -> Note:
    """The ``empty=`` note (a :class:`~ranklens.errors.Note`: its counts are data)."""
    return Note("empty_users", count, total=n, empty=empty, fill=0.0 if empty in ("skip", "zero") else 1.0)


def intent_columns(lists: RankedLists, intents: Any, measures: Sequence[Measure]) -> list[np.ndarray]:
    """The intent-aware measures' columns (:func:`ranklens.engine.intents.intent_values`)."""
    from ranklens.engine.intents import intent_values

    return intent_values(lists, intents, measures)


def absent_scored_zero(values: np.ndarray, measure: Measure, absent: np.ndarray | None) -> np.ndarray:
    """A query the run lacks scores 0 under ``missing="zero"``, as trec_eval ``-c`` scores it.

    trec_eval ranks such a query against one placeholder document that no qrels lists, so a measure
    that is 0/0 on an empty ranking (interpolated precision, IPrecAvg) is 0 there, not NaN. Measures
    that are NA by definition (their mean skips NaN: RA-nWG on a query with nothing relevant) stay NA.
    """
    if absent is None or not absent.any() or measure.family.aggregate == "nanmean":
        return values
    out = np.array(values, dtype=np.float64, copy=True)
    out[absent & np.isnan(out)] = 0.0
    return out


def nothing_evaluated(run_source: str, qrels_queries: int, run_queries: int) -> str:
    """The message for an evaluation over zero queries (an error, never a NaN mean)."""
    return (
        f"{run_source}: no query to evaluate: the run ({run_queries} quer{'y' if run_queries == 1 else 'ies'}) "
        f"shares no query with the qrels ({qrels_queries} quer{'y' if qrels_queries == 1 else 'ies'}); "
        "are these the qrels of this run's topics?"
    )


def evaluate(qrels: Any, run: Any, measures: MeasuresArg, **options: Any) -> Results:
    """Evaluate ``run`` against ``qrels``: a thin wrapper over :class:`Evaluator`.

    >>> qrels = {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}}
    >>> run = {"q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}}
    >>> res = evaluate(qrels, run, ["nDCG@5", "nDCG(gain=exp)@5", "AP"])
    >>> [round(v, 6) for v in res.aggregates]
    [0.909816, 0.912943, 0.805556]

    Ties matter: three documents share a score and only ``dA`` is relevant. trec_eval breaks the tie by
    document id descending (``dC, dB, dA``); ``ties=average`` takes the expectation over the orderings.

    >>> tied = {"q2": {"dA": 1.0, "dB": 1.0, "dC": 1.0}}
    >>> res = evaluate({"q2": {"dA": 1, "dB": 0, "dC": 0}}, tied, ["RR", "RR(ties=average)"])
    >>> [round(v, 6) for v in res.aggregates]
    [0.333333, 0.611111]
    """
    return Evaluator(measures, qrels, **options)(run)


def rows_needed(measures: Iterable[Measure]) -> int | None:
    """The deepest rank any of ``measures`` reads, or None when one reads the whole ranking.

    Each measure's family declares how deep it reads (:meth:`ranklens.measures.Family.rows_read`). Only
    those rows are joined with the qrels: ``nDCG@10`` alone needs 10 rows per query, not 1,000.

    >>> from ranklens.measures import parse_many
    >>> rows_needed(parse_many(["nDCG@10", "P@5", "nDCG(ideal=recall,depth=100)@10"]))
    100
    >>> rows_needed(parse_many(["nDCG@10", "AP"])) is None
    True
    """
    deepest = 0
    for m in measures:
        rows = m.family.rows_read(m)
        if rows is None:
            return None
        deepest = max(deepest, rows)
    return deepest or None


def _ties(m: Measure) -> str:
    try:
        return str(m.get("ties"))
    except Exception:
        return "trec"


_DEFAULT = EvalPolicy()


def _given(value: Any, default: Any) -> bool:
    """A keyword given a value other than its default (side tables may be frames: never compared)."""
    if value is default:
        return False
    if isinstance(value, (str, int, float, bool)) and not isinstance(value, np.ndarray):
        return bool(value != default)
    return True


class _SideTables:
    """The recommender side of an Evaluator: training interactions and item catalog read once, the
    exclude-seen protocol, the empty-user policy and the default aggregate."""

    def __init__(self, p: EvalPolicy, measures: tuple[Measure, ...]) -> None:
        from ranklens.measures.base import AGGREGATES

        self.empty = p.empty
        self.exclude_seen = p.exclude_seen
        if p.aggregate is not None:
            if p.aggregate not in AGGREGATES:
                raise InputError(f"aggregate must be one of {', '.join(AGGREGATES)}; got {p.aggregate!r}")
            fixed = [m for m in measures if not m.family.is_system(m) and all(q.name != "agg" for q in m.family.params)]
            if fixed and p.aggregate != "mean":
                how = ", ".join(f"{m} ({'a sum' if m.family.aggregate == 'sum' else 'a geometric mean' if m.family.aggregate == 'gmean' else m.family.aggregate})" for m in fixed)
                raise InputError(
                    f"aggregate {p.aggregate!r} combines the per-query values of measures averaged over queries; "
                    f"{how} {'is' if len(fixed) == 1 else 'are'} combined by definition: evaluate "
                    f"{'it' if len(fixed) == 1 else 'them'} apart, without it"
                )
            measures = tuple(p.with_aggregate(measures))
        self.measures = measures
        self.train = self.catalog = None
        self.notes: list[str] = []
        if p.train is not None or p.items is not None:
            from ranklens.data.interactions import check_known, read_catalog, read_interactions

            if p.train is not None:
                self.train = read_interactions(p.train, columns=p.train_columns)
                self.notes += [f"{self.train.source}: {n}" for n in self.train.notes]
            if p.items is not None:
                self.catalog = read_catalog(p.items, columns=p.items_columns)
            check_known(self.train, self.catalog)
            import pyarrow as pa

            # the tables read are interned and dropped: give their pages back (Arrow's pool keeps them otherwise,
            # ~0.5 GB for 20M training rows, and the evaluation's own arrays come from another heap)
            pa.default_memory_pool().release_unused()
        available = []
        if self.train is not None:
            available.append("train")
        if self.catalog is not None:
            available.append("items")
        if available:
            available.append("catalog")
        self.intents = None
        if p.intents is not None:
            from ranklens.data.intents import read_intent_qrels

            self.intents = read_intent_qrels(p.intents)
            available.append("intents")
        self.available = tuple(available)
        for m in measures:
            reason = m.family.unavailable(m, self.available)
            if reason is not None and set(m.family.needs) & {"train", "items", "catalog", "intents"}:
                from ranklens.errors import MeasureError

                raise MeasureError(reason)
        self.active = bool(available) or self.exclude_seen
        self._vocab: tuple[Any, dict[str, Any]] | None = None
        self._derived: dict[str, Any] = {}

    def before_align(self, r: Run, notes: list[str], tally: BlockTally | None = None) -> Run:
        if tally is None:
            for n in self.notes:
                if n not in notes:
                    notes.append(n)
        if self.exclude_seen and self.train is not None:
            from ranklens.data.interactions import drop_seen

            total = len(r)
            r, dropped = drop_seen(r, self.train)
            if tally is None:
                notes.append(seen_note(dropped, total))
            else:
                tally.seen_dropped += dropped
                tally.seen_total += total
                tally.seen_applied = True
        return r

    def inputs(
        self, lists: RankedLists, measures: Sequence[Measure], notes: list[str], run: Run | None = None,
        tally: BlockTally | None = None,
    ) -> Any:
        from ranklens.data._intern import intern_sorted
        from ranklens.engine.kernels.recsys import RecsysInputs, recsys_note_counts

        t, c = self.train, self.catalog
        # lists.doc_ids holds the id of every run row: one int32 code per row for the distinct ids (the
        # run's own codes when the lists name its rows, else interned here); the side tables are mapped
        # per distinct id, never per row
        if run is not None and lists.doc_ids is run.docs:
            key, vocab = run.doc, run.doc_ids
        else:
            key, vocab = intern_sorted(lists.doc_ids)
        fields: dict[str, Any] = {"doc_key": key, "num_keys": len(vocab), "doc_vocab": vocab, **self._per_vocab(vocab)}
        if t is not None:
            fields.update(
                num_users=t.num_users, item_users=t.item_users(), query_user=t.user_codes(lists.query_ids),
                train_user=t.user, train_item=t.item, catalog_size=len(t.items),
            )
        if c is not None:
            fields.update(category=c.category, features=c.features, catalog_size=len(c.items))
        side = RecsysInputs(**fields)
        # the derived tables (similarity, unit features) are the same for every block: made once
        side._cache.update(self._derived)
        counts = recsys_note_counts(lists, measures, side)
        if tally is not None:
            tally.add_absent(counts)
        else:
            for h, tail, a, total in counts:
                if a and (n := absent_note(h, tail, a, total)) not in notes:
                    notes.append(n)
        self._derived = side._cache
        return side

    def _per_vocab(self, vocab: Any) -> dict[str, Any]:
        """The side tables' codes of the run's distinct item ids (cached: the blocks of one run share them)."""
        if self._vocab is not None and self._vocab[0] is vocab:
            return self._vocab[1]
        from ranklens.data._intern import lookup

        t, c = self.train, self.catalog
        fields: dict[str, Any] = {}
        if t is not None:
            fields["doc_item"] = fields["doc_catalog"] = lookup(vocab, t.items)
        if c is not None:
            fields["doc_attr"] = fields["doc_catalog"] = lookup(vocab, c.items)
            if t is not None:
                fields["item_attr"] = lookup(t.items, c.items)
        self._vocab = (vocab, fields)
        return fields

    def apply_empty(
        self, query_ids: tuple[str, ...], values: np.ndarray, has_relevant: np.ndarray, notes: list[str],
        tally: BlockTally | None = None,
    ) -> tuple[tuple[str, ...], np.ndarray]:
        from ranklens.measures.recsys import LABEL_FREE

        empty = ~has_relevant
        count = int(empty.sum())
        n = len(query_ids)
        if tally is not None:
            tally.empty[0] += count
            tally.empty[1] += n
        else:
            notes.append(empty_note(str(self.empty), count, n))
        if self.empty == "skip":
            keep = np.flatnonzero(has_relevant)
            return tuple(query_ids[i] for i in keep), values[keep, :]
        fill = 0.0 if self.empty == "zero" else 1.0
        out = values.copy()
        for j, m in enumerate(self.measures):
            if m.family.is_system(m) or m.name in LABEL_FREE or m.family.aggregate == "sum":
                continue
            out[empty, j] = fill
        return query_ids, out


def _as_qrels(
    source: Any, columns: Mapping[str, str] | None = None, labels: str | None = None, format: str | None = None
) -> Qrels:
    if isinstance(source, Qrels) and columns is None:
        return source if labels is None else source.as_label_kind(labels)
    from ranklens.data.io import read_qrels  # (dicts too: both documented forms, checked values)

    return read_qrels(source, format=format, columns=columns, labels=labels or "int")


def _as_run(
    source: Any, name: str | None = None, columns: Mapping[str, str] | None = None, format: str | None = None
) -> Run:
    if isinstance(source, Run):  # (already read: run_columns= is for files and tables)
        return source
    from ranklens.data.io import read_run  # (dicts too: both documented forms, checked values)

    return read_run(source, format=format, name=name, columns=columns)
