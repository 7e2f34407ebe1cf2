"""The one SQL formulation of the measures, written once (DuckDB's dialect; other dialects by sqlglot).

Semantics are the engine's defaults (trec_eval's, docs/METRICS): a query's documents ranked by score
descending, ties by document id descending (bytewise, as trec_eval's ``strcmp``); ``-M`` cuts each ranking at
``max_docs`` first, then ``-J`` drops the unjudged documents and ranks again; a retrieved document not in
the qrels, or judged with a negative label under ``negative="trec"`` (pooled but unjudged), has gain 0, is
never relevant and is not judged (``negative="zero"`` reads a negative label as 0); relevant = label ≥
``rel``; DCG@k = Σ_{i≤k} g(label_i)/log2(i+1) with g = label or 2^label − 1 for positive labels, else 0; the
ideal is every positive judged label of the query, best first; nDCG = DCG/IDCG, 0 when IDCG = 0; P@k divides
by k; R@k, AP and Rprec divide by R = #judged labels ≥ ``rel``, 0 when R = 0; RR is 1/rank of the first
relevant document within k, 0 if none; Success@k is 1 when one is; Judged@k is the judged fraction of the top
min(k, retrieved), 0 when none is retrieved. Queries of the qrels absent from the run are skipped
(``missing="skip"``) or score 0 (``missing="zero"``); queries only in the run are never evaluated.

Portability: every number is written as a DOUBLE (``CAST(1 AS DOUBLE)``: Spark reads ``1.0`` as a DECIMAL
and rounds the values to its scale), every division is between DOUBLEs (PostgreSQL divides integers as
integers), and the discount is ``LOG2(x)`` (sqlglot writes each dialect's spelling: ``LOG(2, x)``, ``LOG(x, 2)``).

>>> from ranklens.measures import parse_many
>>> text = per_query_sql(parse_many(["P@2"]), run_table="r", qrels_table="q")
>>> "ORDER BY r0.score DESC, r0.doc_id DESC" in text
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy
    from ranklens.measures.base import Measure

__all__ = ["POLICY", "SQL_MEASURES", "measures_declined", "per_query_sql", "policy_declined", "values_sql"]

_BINARY = {"rel": None, "ties": ("trec",), "agg": ("mean",), "judged_only": (False,)}

#: family → {parameter: the values the formulation computes (None: any positive number)}; a parameter
#: not listed declines
SQL_MEASURES: dict[str, dict[str, tuple[object, ...] | None]] = {
    "nDCG": {
        "gain": ("linear", "exp"), "discount": ("log2",), "base": (2,), "ties": ("trec",), "ideal": ("global",),
        "depth": (0,), "max_rel": (0,), "norm": ("ideal",), "agg": ("mean",), "judged_only": (False,),
    },
    "DCG": {"gain": ("linear", "exp"), "discount": ("log2",), "base": (2,), "ties": ("trec",), "agg": ("mean",),
            "judged_only": (False,)},
    "P": dict(_BINARY), "R": dict(_BINARY), "AP": dict(_BINARY), "RR": dict(_BINARY), "Success": dict(_BINARY),
    "Rprec": {"rel": None, "agg": ("mean",), "judged_only": (False,)},
    "Judged": {"agg": ("mean",), "judged_only": (False,)},
}

#: the evaluation policy the formulation expresses: each field of EvalPolicy and the values it takes
#: (None: any); reading fields (formats, column maps) are the engine's, not the formulation's
POLICY: dict[str, tuple[object, ...] | None] = {
    "missing": ("skip", "zero", "error"), "negative": ("trec", "zero", "error"), "judged_only": None,
    "max_docs": None, "rel_level": None, "labels": (None, "int", "float"), "train": (None,), "items": (None,),
    "exclude_seen": (False,), "empty": (None,), "aggregate": (None,), "train_columns": (None,),
    "items_columns": (None,), "intents": (None,),
}
_READING = ("qrels_format", "run_format", "qrels_columns", "run_columns")


def measures_declined(measures: Sequence[Measure]) -> str | None:
    """Why the formulation does not express ``measures`` (None: it does).

    >>> from ranklens.measures import parse_many
    >>> measures_declined(parse_many(["nDCG(gain=exp)@10", "Rprec", "Judged@10"])) is None
    True
    >>> measures_declined(parse_many(["ERR@10"]))
    'ERR@10: the SQL formulation expresses nDCG, DCG, P, R, AP, RR, Success, Rprec, Judged only'
    >>> measures_declined(parse_many(["nDCG(ties=average)@10"]))
    'nDCG(ties=average)@10: ties=average; the SQL formulation expresses ties=trec'
    """
    if not measures:
        return "no measure"
    seen: set[str] = set()
    for m in measures:
        declared = SQL_MEASURES.get(m.family.name)
        if declared is None:
            return f"{m}: the SQL formulation expresses {', '.join(SQL_MEASURES)} only"
        for param in m.family.all_params:
            value = m.get(param.name)
            if param.name not in declared:
                return f"{m}: {param.name}={value}; the SQL formulation declares nothing for {param.name}"
            allowed = declared[param.name]
            if allowed is None:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                    return f"{m}: {param.name}={value}; the SQL formulation expresses a positive threshold"
            elif value not in allowed:
                return f"{m}: {param.name}={value}; the SQL formulation expresses {' or '.join(f'{param.name}={a}' for a in allowed)}"
        if str(m) in seen:
            return f"{m}: asked for twice"
        seen.add(str(m))
    return None


def policy_declined(policy: EvalPolicy | None) -> str | None:
    """Why the formulation does not evaluate under ``policy`` (None: it does); the reading fields (formats,
    column maps) are not its concern.

    >>> from ranklens.engine.policy import EvalPolicy
    >>> policy_declined(EvalPolicy(missing="zero", judged_only=True, max_docs=100)) is None
    True
    >>> policy_declined(EvalPolicy(aggregate="median"))
    "policy aggregate='median': the SQL formulation takes aggregate=None"
    """
    if policy is None:
        return None
    import dataclasses

    for field in dataclasses.fields(policy):
        if field.name in _READING:
            continue
        value = getattr(policy, field.name)
        allowed = POLICY.get(field.name, ())
        if allowed is not None and value not in allowed:
            return f"policy {field.name}={value!r}: the SQL formulation takes {' or '.join(f'{field.name}={a!r}' for a in allowed)}"
    return None


def _d(x: object) -> str:
    """A number as a DOUBLE literal (never ``1.0``: Spark reads that as a DECIMAL).

    >>> _d(2), _d(1.0), _d(0.5)
    ('CAST(2 AS DOUBLE)', 'CAST(1 AS DOUBLE)', "CAST('0.5' AS DOUBLE)")
    """
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"CAST({x} AS DOUBLE)" if isinstance(x, int) else f"CAST('{float(x)!r}' AS DOUBLE)"  # type: ignore[arg-type]


def _gain(col: str, gain: object) -> str:
    g = col if gain == "linear" else f"(POWER({_d(2)}, {col}) - {_d(1)})"
    return f"CASE WHEN {col} > {_d(0)} THEN {g} ELSE {_d(0)} END"


def _ratio(num: str, den: str) -> str:
    return f"CASE WHEN {den} > 0 THEN CAST({num} AS DOUBLE) / CAST({den} AS DOUBLE) ELSE {_d(0)} END"


def per_query_sql(
    measures: Sequence[Measure], policy: EvalPolicy | None = None, *, run_table: str = "run", qrels_table: str = "qrels",
    top: str = "window",
) -> str:
    """One query (DuckDB's dialect) giving a row per query of either input: ``query_id, n_run`` (its run rows,
    NULL when only the qrels have it), ``in_qrels`` (1/0), ``truncated``, ``removed`` (rows cut by ``-M``,
    dropped by ``-J``), ``evaluated`` (1: it counts in the mean) and ``m0 … m{n-1}``, the measures' values.

    ``run_table`` has columns ``query_id, doc_id, score``; ``qrels_table`` ``query_id, doc_id, relevance``.
    The inputs are not checked here (ids, NaN, duplicates: the engine checks them first; the ``aggregate``
    top needs a query's document ids distinct).

    ``top``: how a ranking bounded by the cutoffs (every measure has one, no ``-J``, no Rprec) is kept:
    ``"window"`` (portable: ``ROW_NUMBER()`` over every run row, a sort of them all) or ``"aggregate"``
    (DuckDB only: each query's k-th best score by ``MAX(score, k)``, a hash aggregate, and the window over the
    rows at or above it only — ties at the k-th score included, so the order is the window's —; the ideal's
    best k labels by ``MAX(label, k)``); the values are the same. A ranking not bounded (no ``-J``) is, with
    ``"aggregate"``, one window over the run joined to the labels: the rank and the running relevant counts
    (AP) from one sort, where the portable text sorts again by rank.

    >>> from ranklens.measures import parse_many
    >>> "MAX(score, 10)" in per_query_sql(parse_many(["nDCG@10"]), top="aggregate")
    True
    >>> "MAX(score, " in per_query_sql(parse_many(["nDCG"]), top="aggregate")  # (no cutoff: every row is ranked)
    False
    """
    if top not in ("window", "aggregate"):
        raise ValueError(f"top must be 'window' or 'aggregate'; got {top!r}")
    from ranklens.engine.policy import EvalPolicy

    policy = policy if policy is not None else EvalPolicy()
    label = "CAST(relevance AS DOUBLE)"
    if policy.negative == "zero":
        label = f"GREATEST({label}, {_d(0)})"
    thresholds = sorted({float(m.get("rel")) for m in measures if "rel" in {p.name for p in m.family.all_params}})
    big = 2**31 - 1
    cut = policy.max_docs if policy.max_docs is not None else big
    # the depth that matters: without -J, a ranking beyond the largest cutoff changes no value when every
    # measure has one (Rprec looks R deep): a top k per query is kept, and the labels of those joined
    depths = [m.cutoff for m in measures]
    bounded = not policy.judged_only and all(d is not None for d in depths) and not any(m.family.name == "Rprec" for m in measures)
    depth = min(cut, max(d for d in depths if d is not None)) if bounded else cut
    by_aggregate = bounded and top == "aggregate"
    # (DuckDB, every row ranked, no -J: the labels joined first, the rank and the running relevant counts of one
    # window — one sort of the run, not a second one by rank for the running counts)
    one_window = top == "aggregate" and not bounded and not policy.judged_only
    win = "PARTITION BY r0.query_id ORDER BY r0.score DESC, r0.doc_id DESC"
    # (DuckDB would materialise q0, read three times, into a buffer: a scan of the qrels is cheaper)
    ctes = [
        f"q0 AS {'NOT MATERIALIZED ' if top == 'aggregate' else ''}(SELECT CAST(query_id AS VARCHAR) AS query_id, CAST(doc_id AS VARCHAR) AS doc_id, {label} AS label FROM {qrels_table})",
        f"r0 AS (SELECT CAST(query_id AS VARCHAR) AS query_id, CAST(doc_id AS VARCHAR) AS doc_id, CAST(score AS DOUBLE) AS score FROM {run_table})",
        "qq AS (SELECT query_id, "
        + ", ".join([f"SUM(CASE WHEN label >= {_d(0)} AND label >= {_d(t)} THEN 1 ELSE 0 END) AS big_r{i}" for i, t in enumerate(thresholds)] + ["COUNT(*) AS n_qrels"])
        + " FROM q0 GROUP BY query_id)",
    ]
    if by_aggregate:  # (each query's `depth`-th best score by one hash aggregate; only the rows at or above it,
        # ties included, are ranked by the window: a sort of about `depth` rows per query, not of every row)
        ctes += [
            f"rq AS (SELECT query_id, COUNT(*) AS n_run, MAX(score, {depth})[-1] AS kth FROM r0 GROUP BY query_id)",
            "ranked0 AS (SELECT r0.query_id AS query_id, r0.doc_id AS doc_id, "
            "ROW_NUMBER() OVER (PARTITION BY r0.query_id ORDER BY r0.score DESC, r0.doc_id DESC) AS rank0 "
            "FROM r0 JOIN rq ON r0.query_id = rq.query_id WHERE r0.score >= rq.kth)",
        ]
    elif one_window:
        ctes += [
            "rq AS (SELECT query_id, COUNT(*) AS n_run FROM r0 GROUP BY query_id)",
            f"ranked0 AS (SELECT r0.query_id AS query_id, CASE WHEN q0.label >= {_d(0)} THEN q0.label END AS jl, "
            f"ROW_NUMBER() OVER ({win}) AS rank0"
            + "".join(
                f", SUM(CASE WHEN q0.label >= {_d(0)} AND q0.label >= {_d(t)} THEN 1 ELSE 0 END) "
                f"OVER ({win} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cum{i}"
                for i, t in enumerate(thresholds)
            )
            + " FROM r0 LEFT JOIN q0 ON r0.query_id = q0.query_id AND r0.doc_id = q0.doc_id)",
        ]
    else:
        ctes += [
            # every run row ranked once (the run-only queries too: they are never evaluated, and a join to the
            # qrels' queries first would cost a pass over the run); each query's row count from the same window
            "ranked0 AS (SELECT r0.query_id AS query_id, r0.doc_id AS doc_id, "
            "ROW_NUMBER() OVER (PARTITION BY r0.query_id ORDER BY r0.score DESC, r0.doc_id DESC) AS rank0, "
            "COUNT(*) OVER (PARTITION BY r0.query_id) AS n_run FROM r0)",
            "rq AS (SELECT query_id, n_run FROM ranked0 WHERE rank0 = 1)",
        ]
    labelled = (
        f"SELECT ranked0.query_id AS query_id, CASE WHEN q0.label >= {_d(0)} THEN q0.label END AS jl, rank0 FROM ranked0 "
        "LEFT JOIN q0 ON ranked0.query_id = q0.query_id AND ranked0.doc_id = q0.doc_id"
    )
    counted = policy.max_docs is not None or policy.judged_only
    if counted and (by_aggregate or one_window):  # (no -J: -M cuts what is beyond it, nothing is removed)
        ctes.append(f"counts AS (SELECT query_id, GREATEST(n_run - {cut}, 0) AS truncated, 0 AS removed FROM rq)")
    elif counted:  # (else nothing is cut or removed: no pass over the rows)
        ctes.append(
            "counts AS (SELECT query_id, "
            f"SUM(CASE WHEN rank0 > {cut} THEN 1 ELSE 0 END) AS truncated, "
            + (f"SUM(CASE WHEN jl IS NULL AND rank0 <= {cut} THEN 1 ELSE 0 END)" if policy.judged_only else "0")
            + f" AS removed FROM ({labelled}) AS l GROUP BY query_id)"
        )
    if policy.judged_only:
        kept = f"SELECT query_id, jl, rank0 FROM ({labelled}) AS l WHERE rank0 <= {cut} AND jl IS NOT NULL"
    elif one_window:
        kept = "SELECT * FROM ranked0" + (f" WHERE rank0 <= {depth}" if depth < big else "")
    else:
        kept = labelled.replace(" FROM ranked0 ", f" FROM (SELECT * FROM ranked0 WHERE rank0 <= {depth}) AS ranked0 ")
    rank = "ROW_NUMBER() OVER (PARTITION BY query_id ORDER BY rank0)" if policy.judged_only else "rank0"
    counts_kept = "".join(f", cum{i}" for i in range(len(thresholds))) if one_window else ""
    ctes.append(f"ranked1 AS (SELECT query_id, jl, {rank} AS rnk{counts_kept} FROM ({kept}) AS k)")
    rprec = any(m.family.name == "Rprec" for m in measures)
    cum = "OVER (PARTITION BY ranked1.query_id ORDER BY rnk ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    cols = ["ranked1.query_id AS query_id", "jl", "rnk"]
    for i, t in enumerate(thresholds):
        cols.append(f"CASE WHEN jl >= {_d(t)} THEN 1 ELSE 0 END AS rel{i}")
        cols.append(f"ranked1.cum{i} AS cum{i}" if one_window else f"SUM(CASE WHEN jl >= {_d(t)} THEN 1 ELSE 0 END) {cum} AS cum{i}")
        cols.append(f"qq.big_r{i} AS big_r{i}" if rprec else f"0 AS big_r{i}")
    join = " JOIN qq ON ranked1.query_id = qq.query_id" if rprec else ""  # (R per row: Rprec's depth)
    ctes.append(f"ranked AS (SELECT {', '.join(cols)} FROM ranked1{join})")

    disc = f"LOG2(CAST(rnk AS DOUBLE) + {_d(1)})"
    row_aggs = ["COUNT(*) AS n_ranked"]
    ideal_aggs: list[str] = []
    finals: list[str] = []
    for j, m in enumerate(measures):
        k = m.cutoff
        within = f"rnk <= {k}" if k is not None else "1 = 1"
        fam = m.family.name
        if fam in ("nDCG", "DCG"):
            row_aggs.append(f"SUM(CASE WHEN {within} THEN ({_gain('jl', m.get('gain'))}) / {disc} ELSE {_d(0)} END) AS dcg{j}")
            dcg = f"COALESCE(pr.dcg{j}, {_d(0)})"
            if fam == "DCG":
                finals.append(f"{dcg} AS m{j}")
                continue
            itop = f"irank <= {k}" if k is not None else "1 = 1"
            idisc = f"LOG2(CAST(irank AS DOUBLE) + {_d(1)})"
            ideal_aggs.append(f"SUM(CASE WHEN {itop} THEN ({_gain('label', m.get('gain'))}) / {idisc} ELSE {_d(0)} END) AS idcg{j}")
            idcg = f"COALESCE(ig.idcg{j}, {_d(0)})"
            finals.append(f"CASE WHEN {idcg} > {_d(0)} THEN {dcg} / {idcg} ELSE {_d(0)} END AS m{j}")
            continue
        if fam == "Judged":
            row_aggs.append(f"SUM(CASE WHEN {within} AND jl IS NOT NULL THEN 1 ELSE 0 END) AS n{j}")
            shown = "COALESCE(pr.n_ranked, 0)" if k is None else f"LEAST(COALESCE(pr.n_ranked, 0), {k})"
            finals.append(f"{_ratio(f'COALESCE(pr.n{j}, 0)', shown)} AS m{j}")
            continue
        i = thresholds.index(float(m.get("rel")))
        big_r = f"COALESCE(qq.big_r{i}, 0)"
        if fam == "Rprec":
            row_aggs.append(f"SUM(CASE WHEN rnk <= big_r{i} THEN rel{i} ELSE 0 END) AS n{j}")
            finals.append(f"{_ratio(f'COALESCE(pr.n{j}, 0)', big_r)} AS m{j}")
        elif fam in ("P", "R", "Success"):
            row_aggs.append(f"SUM(CASE WHEN {within} THEN rel{i} ELSE 0 END) AS n{j}")
            n = f"COALESCE(pr.n{j}, 0)"
            if fam == "P":
                finals.append(f"CAST({n} AS DOUBLE) / {_d(k)} AS m{j}")
            elif fam == "R":
                finals.append(f"{_ratio(n, big_r)} AS m{j}")
            else:
                finals.append(f"CASE WHEN {n} > 0 THEN {_d(1)} ELSE {_d(0)} END AS m{j}")
        elif fam == "RR":
            row_aggs.append(f"MIN(CASE WHEN {within} AND rel{i} = 1 THEN rnk END) AS first{j}")
            finals.append(f"CASE WHEN pr.first{j} IS NULL THEN {_d(0)} ELSE {_d(1)} / CAST(pr.first{j} AS DOUBLE) END AS m{j}")
        else:  # AP
            row_aggs.append(
                f"SUM(CASE WHEN {within} AND rel{i} = 1 THEN CAST(cum{i} AS DOUBLE) / CAST(rnk AS DOUBLE) ELSE {_d(0)} END) AS ap{j}"
            )
            finals.append(f"{_ratio(f'COALESCE(pr.ap{j}, {_d(0)})', big_r)} AS m{j}")
    ctes.append(f"pr AS (SELECT query_id, {', '.join(row_aggs)} FROM ranked GROUP BY query_id)")
    ideal_depths = [m.cutoff for m in measures if m.family.name == "nDCG"]
    if top == "aggregate" and ideal_depths and all(d is not None for d in ideal_depths):  # (the best k labels)
        ctes.append(
            "ideal AS (SELECT query_id, UNNEST(top_labels) AS label, GENERATE_SUBSCRIPTS(top_labels, 1) AS irank FROM "
            f"(SELECT query_id, MAX(label, {max(d for d in ideal_depths if d is not None)}) AS top_labels FROM q0 "
            f"WHERE label > {_d(0)} GROUP BY query_id) AS t)"
        )
    else:
        ctes.append(
            "ideal AS (SELECT query_id, label, ROW_NUMBER() OVER (PARTITION BY query_id ORDER BY label DESC) AS irank "
            f"FROM q0 WHERE label > {_d(0)})"
        )
    ctes.append(f"ig AS (SELECT query_id, {', '.join(ideal_aggs + ['COUNT(*) AS n_ideal'])} FROM ideal GROUP BY query_id)")
    ctes.append(
        "queries AS (SELECT COALESCE(rq.query_id, qq.query_id) AS query_id, rq.n_run AS n_run, "
        "CASE WHEN qq.query_id IS NULL THEN 0 ELSE 1 END AS in_qrels FROM rq FULL OUTER JOIN qq ON rq.query_id = qq.query_id)"
    )
    zero = "1 = 1" if policy.missing == "zero" else "1 = 0"
    select = (
        "SELECT queries.query_id AS query_id, queries.n_run AS n_run, queries.in_qrels AS in_qrels, "
        + ("COALESCE(counts.truncated, 0) AS truncated, COALESCE(counts.removed, 0) AS removed, " if counted else "0 AS truncated, 0 AS removed, ")
        + f"CASE WHEN queries.in_qrels = 1 AND (queries.n_run IS NOT NULL OR {zero}) THEN 1 ELSE 0 END AS evaluated, "
        + ", ".join(finals)
        + " FROM queries LEFT JOIN qq ON queries.query_id = qq.query_id"
        + (" LEFT JOIN counts ON queries.query_id = counts.query_id" if counted else "")
        + " "
        "LEFT JOIN pr ON queries.query_id = pr.query_id LEFT JOIN ig ON queries.query_id = ig.query_id"
    )
    return "WITH " + ",\n".join(ctes) + "\n" + select


def values_sql(
    measures: Sequence[Measure], policy: EvalPolicy | None = None, *, run_table: str = "run", qrels_table: str = "qrels",
    top: str = "window",
) -> str:
    """One query (DuckDB's dialect) returning ``query_id, measure, value``: a row per evaluated query and
    measure, and the mean over them as ``query_id = 'all'``.

    >>> import duckdb
    >>> from ranklens.measures import parse_many
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE run AS SELECT * FROM (VALUES ('q1', 'a', 2.0), ('q1', 'b', 1.0)) t(query_id, doc_id, score)")
    >>> _ = con.execute("CREATE TABLE qrels AS SELECT * FROM (VALUES ('q1', 'b', 1)) t(query_id, doc_id, relevance)")
    >>> con.execute(values_sql(parse_many(["RR"])) + " ORDER BY 1").fetchall()
    [('all', 'RR', 0.5), ('q1', 'RR', 0.5)]
    """
    inner = per_query_sql(measures, policy, run_table=run_table, qrels_table=qrels_table, top=top)
    head, select = inner.rsplit("\n", 1)
    names = [str(m).replace("'", "''") for m in measures]
    long = " UNION ALL ".join(f"SELECT query_id, '{name}' AS measure, m{j} AS value FROM wide WHERE evaluated = 1" for j, name in enumerate(names))
    return (
        f"{head},\nwide AS ({select}),\nlong_values AS ({long})\n"
        "SELECT query_id, measure, value FROM long_values "
        "UNION ALL SELECT 'all' AS query_id, measure, AVG(value) AS value FROM long_values GROUP BY measure"
    )
