"""What unjudged documents could do: the range of a measure over every labelling of a run's unjudged
top-k documents with the lowest and the highest grade of the qrels.

Per query, the ``u`` documents within the measure's cutoff (every retrieved document when it has none)
that the qrels do not judge are labelled each way, and the engine (:class:`ranklens.Evaluator`) evaluates
every labelling: all ``2^u`` of them at once as pseudo-queries of one evaluation when ``u`` is at most
``exhaustive_limit`` (16 by default), so ``low`` and ``high`` are attained by an explicit labelling. This
matters for nDCG and AP: a document that becomes relevant raises the ideal (nDCG) or R (AP) too, so the
extremes are not always the all-lowest and all-highest labellings.

Beyond the limit (or when one query's labellings would exceed 8 million pseudo-query rows): for measures that never decrease when a label rises (P, DCG, RR, Success) the two
uniform labellings are still the exact extremes; for nDCG and AP the range is a bound that may not be
attained (``exact`` false, and a note): DCG_low/IDCG_high … DCG_high/IDCG_low for nDCG, S_low/R_high …
S_high/R_low for AP (S the sum of the precisions, AP·R); any other measure is refused. The labellings of
different queries are independent, so the mean's range is the mean of the per-query ranges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.data.qrels import Qrels
from ranklens.data.run import Run
from ranklens.engine.evaluator import Evaluator
from ranklens.engine.kernels._common import rel_threshold
from ranklens.engine.ranked import NONPOOL, RankedLists
from ranklens.errors import InputError
from ranklens.measures.base import Measure
from ranklens.measures.language import parse, parse_many

__all__ = ["Bounds", "bounds"]

#: families that never decrease when a label rises: the uniform labellings are the extremes
MONOTONE = ("P", "DCG", "RR", "Success")
#: pseudo-query rows evaluated in one batch (memory bound)
_BATCH_ROWS = 2_000_000
#: at most this many pseudo-query rows for one query's labellings; beyond, the query is bounded as past the limit
_QUERY_ROWS = 8_000_000


@dataclass(frozen=True)
class Bounds:
    """What :func:`bounds` returns: ``runs[name][measure]`` → value/low/high means, ``per_query`` the same
    per query (with ``unjudged``, the number of documents labelled, and ``exact``)."""

    runs: dict[str, dict[str, dict[str, float]]]
    per_query: dict[str, dict[str, dict[str, dict[str, Any]]]]
    grades: tuple[float, float]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``ranklens bounds -f json`` document."""
        return {"grades": {"low": self.grades[0], "high": self.grades[1]}, "runs": self.runs,
                "per_query": self.per_query, "notes": self.notes}


def bounds(qrels: Any, runs: Mapping[str, Any], measures: Any, *, exhaustive_limit: int = 16,
           **options: Any) -> Bounds:
    """The range of each measure of each run over the labellings of its unjudged top-k documents.

    >>> qrels = {"q": {"a": 1, "b": 0}}
    >>> b = bounds(qrels, {"r": {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}}, "P@2")
    >>> b.runs["r"]["P@2"]
    {'value': 0.5, 'low': 0.5, 'high': 1.0}
    """
    parsed = parse_many(measures)
    if not 0 <= exhaustive_limit <= 20:
        raise InputError(f"bounds: the exhaustive limit must be between 0 and 20; got {exhaustive_limit}")
    out_runs: dict[str, dict[str, dict[str, float]]] = {}
    out_q: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    notes: list[str] = []
    grades = (0.0, 0.0)
    for name, run in runs.items():
        out_runs[name], out_q[name] = {}, {}
        for m in parsed:
            ev = Evaluator([m], qrels, **options)
            judged = ev.qrels.label[ev.qrels.label >= 0]
            grades = (float(judged.min()) if judged.size else 0.0, float(judged.max()) if judged.size else 0.0)
            per_query = _measure_bounds(ev, run, m, grades, exhaustive_limit, options)
            inexact = [q for q, r in per_query.items() if not r["exact"]]
            if inexact:
                notes.append(f"{name}: {m}: {len(inexact)} queries have more than {exhaustive_limit} unjudged "
                             "documents: their range is a bound, not attained by a labelling")
            if grades[0] > 0 and f"lowest grade is {grades[0]:g}" not in " ".join(notes):
                notes.append(f"the qrels' lowest grade is {grades[0]:g}: no labelling makes an unjudged document "
                             "non-relevant, so a value (which does) may lie outside [low, high]")
            out_q[name][str(m)] = per_query
            out_runs[name][str(m)] = {
                key: float(np.mean([r[key] for r in per_query.values()])) for key in ("value", "low", "high")
            }
    return Bounds(out_runs, out_q, grades, notes)


def _measure_bounds(ev: Evaluator, run: Any, m: Measure, grades: tuple[float, float], limit: int,
                    options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    res = ev(run, warn=False)
    values = {str(q): v for q, v in res.per_query(m).items()}
    lists, _ = ev.align(run, order="input" if dict(m.params).get("ties") == "input" else "score")
    ids = [str(q) for q in lists.query_ids.to_pylist()]
    depth = m.cutoff
    plans: list[tuple[int, np.ndarray]] = []  # (query index, unjudged rows)
    for i in range(len(ids)):
        lo, hi = int(lists.offsets[i]), int(lists.offsets[i + 1])
        top = hi if depth is None else min(hi, lo + depth)
        plans.append((i, lo + np.flatnonzero(lists.labels[lo:top] == NONPOOL)))
    size = np.diff(lists.offsets) + np.diff(lists.ideal_offsets)
    every = {i: rows.size <= limit and 2**rows.size * int(size[i] + rows.size) <= _QUERY_ROWS for i, rows in plans}
    big = [i for i, _ in plans if not every[i]]
    if big and m.name not in MONOTONE and m.name not in ("nDCG", "AP"):
        raise InputError(f"bounds: {m}: query {ids[big[0]]} has {plans[big[0]][1].size} unjudged documents, too many "
                         f"to label every way (--exhaustive-limit {limit}), and no bound is known for this measure")
    wanted = [m]
    if big and m.name == "nDCG":
        if dict(m.params).get("norm") == "minmax":
            raise InputError(f"bounds: {m}: no bound beyond the exhaustive limit for norm=minmax")
        wanted += [parse("DCG" + str(m)[4:]), parse("IDCG" + str(m)[4:])]
    labellings = {i: _labellings(rows.size, limit if every[i] else -1) for i, rows in plans}
    got = _evaluate_labellings(lists, plans, labellings, grades, wanted, options)
    out: dict[str, dict[str, Any]] = {}
    for i, rows in plans:
        vals = got[0][i]
        exact = every[i] or m.name in MONOTONE
        low, high = float(vals.min()), float(vals.max())
        if not exact and m.name == "nDCG":
            (dcg_lo, dcg_hi), (idcg_lo, idcg_hi) = got[1][i], got[2][i]
            low = dcg_lo / idcg_hi if idcg_hi > 0 else 0.0
            high = min(1.0, dcg_hi / idcg_lo) if idcg_lo > 0 else (1.0 if dcg_hi > 0 else 0.0)
        elif not exact:  # AP: S = AP·R; R ranges over R0 + (u if a grade is relevant)
            rel = rel_threshold(m)
            r0 = float(lists.num_relevant(rel)[i])
            r_lo = r0 + rows.size * (grades[0] >= rel)
            r_hi = r0 + rows.size * (grades[1] >= rel)
            s_lo, s_hi = vals[0] * r_lo, vals[1] * r_hi
            low = s_lo / r_hi if r_hi > 0 else 0.0
            high = min(1.0, s_hi / r_lo) if r_lo > 0 else (1.0 if s_hi > 0 else 0.0)
        out[ids[i]] = {"value": values[ids[i]], "low": low, "high": high,
                       "unjudged": int(rows.size), "exact": bool(exact)}
    for q, v in values.items():  # queries the run lacks, scored by the engine (missing="zero"): nothing to label
        out.setdefault(q, {"value": v, "low": v, "high": v, "unjudged": 0, "exact": True})
    return out


def _labellings(u: int, limit: int) -> np.ndarray:
    """Every labelling of ``u`` documents (row j: bit t set = document t takes the high grade) when
    ``u <= limit``, else the two uniform ones.

    >>> _labellings(2, 16).astype(int).tolist()
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    if u > limit:
        return np.array([np.zeros(u, dtype=bool), np.ones(u, dtype=bool)])
    return ((np.arange(2**u)[:, None] >> np.arange(u)[None, :]) & 1).astype(bool)


def _evaluate_labellings(lists: RankedLists, plans: list[tuple[int, np.ndarray]], labellings: dict[int, np.ndarray],
                         grades: tuple[float, float], wanted: list[Measure],
                         options: dict[str, Any]) -> list[dict[int, np.ndarray]]:
    """Evaluate every labelling (:func:`_labellings`) as a pseudo-query of one engine evaluation per batch; per measure, per query, the values in mask order."""
    out: list[dict[int, np.ndarray]] = [{} for _ in wanted]
    batch: list[tuple[int, np.ndarray]] = []
    rows_in_batch = 0
    for i, rows in plans:
        n = int(lists.offsets[i + 1] - lists.offsets[i]) + int(lists.ideal_offsets[i + 1] - lists.ideal_offsets[i])
        batch.append((i, rows))
        rows_in_batch += labellings[i].shape[0] * (n + rows.size)
        if rows_in_batch >= _BATCH_ROWS:
            _run_batch(lists, batch, labellings, grades, wanted, options, out)
            batch, rows_in_batch = [], 0
    if batch:
        _run_batch(lists, batch, labellings, grades, wanted, options, out)
    return out


def _run_batch(lists: RankedLists, batch: list[tuple[int, np.ndarray]], labellings: dict[int, np.ndarray],
               grades: tuple[float, float], wanted: list[Measure], options: dict[str, Any],
               out: list[dict[int, np.ndarray]]) -> None:
    qq: list[np.ndarray] = []
    qd: list[np.ndarray] = []
    ql: list[np.ndarray] = []
    rq: list[np.ndarray] = []
    rd: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    owner: list[np.ndarray] = []
    first = 0
    for i, rows in batch:
        lo, hi = int(lists.offsets[i]), int(lists.offsets[i + 1])
        ilo, ihi = int(lists.ideal_offsets[i]), int(lists.ideal_offsets[i + 1])
        docs = np.asarray(lists.doc_ids.take(lists.docs[lo:hi]).to_pylist(), dtype=object)
        judged = np.asarray(lists.qrels_doc_ids.take(lists.ideal_docs[ilo:ihi]).to_pylist(), dtype=object)
        unjudged = np.asarray(lists.doc_ids.take(lists.docs[rows]).to_pylist(), dtype=object)
        bits = labellings[i]
        count = bits.shape[0]
        pids = np.arange(first, first + count)
        first += count
        owner.append(np.full(count, i))
        qq.append(np.repeat(pids, judged.size + rows.size))
        qd.append(np.tile(np.concatenate((judged, unjudged)), count))
        labels = np.where(bits, grades[1], grades[0])
        ql.append(np.hstack((np.tile(lists.ideal_labels[ilo:ihi].astype(np.float64), (count, 1)), labels)).ravel())
        rq.append(np.repeat(pids, docs.size))
        rd.append(np.tile(docs, count))
        rs.append(np.tile(lists.scores[lo:hi], count))
    kind = "float" if lists.labels.dtype.kind == "f" else "int"
    labels = np.concatenate(ql) if kind == "float" else np.concatenate(ql).astype(np.int64)
    pseudo_qrels = Qrels.from_arrays(np.concatenate(qq), np.concatenate(qd), labels, label_kind=kind)
    pseudo_run = Run.from_arrays(np.concatenate(rq), np.concatenate(rd), np.concatenate(rs), name="labellings")
    kept = {k: v for k, v in options.items() if k not in ("qrels_columns", "run_columns", "labels")}
    res = Evaluator(wanted, pseudo_qrels, labels=kind, **kept)(pseudo_run, warn=False)
    who = np.concatenate(owner)
    for w, m in enumerate(wanted):
        per = res.per_query(m)
        column = np.array([per[pid] for pid in range(who.size)])
        for i, _ in batch:
            out[w][i] = column[who == i]
