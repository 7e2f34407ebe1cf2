"""Randomised differential test: ``ranklens trec-eval`` and ``ranklens eval`` against an independent
reference of trec_eval 10.0's main loop, on generated collections.

The reference is this file plus ``tests/reference_impl.py`` (per-query formulas written from the spec,
plain lists and loops). It re-implements, one query at a time, what ``trec_eval.c`` and
``form_res_rels.c`` do around the measures:

* queries are the qrels queries, in ``strcmp`` order; run-only queries are ignored;
* a qrels query the run lacks stops the program (status 4) unless ``-c``, which ranks it against one
  document no qrels lists and then reports ``num_ret`` 0;
* each ranking is sorted by score descending, ties by document id descending (bytewise), cut at ``-M``,
  then ``-J`` drops every document without a non-negative label;
* ``-l`` is the relevance threshold of the binary measures (nDCG's gains are the labels whatever ``-l``);
* summary lines: the mean over queries (sums for the counts), added in query order.

The generator makes small collections with graded labels 0–3, negative labels (pooled, unjudged), ties
(few distinct scores), unjudged retrieved documents, numeric-looking ids, qrels queries missing from the
run and run queries missing from the qrels. No trec_eval binary is involved.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl as ref  # noqa: E402

Ranking = list[int | None]
PLACEHOLDER = object()

#: trec_eval name → (ranklens eval name, per-query reference value from (ranking, judged, rel))
MEASURES: dict[str, tuple[str, Callable[[Ranking, list[int], int], float]]] = {
    "num_ret": ("NumRet", lambda r, j, rel: float(len(r))),
    "num_rel": ("NumRel", lambda r, j, rel: float(ref.num_rel(j, rel))),
    "num_rel_ret": ("NumRelRet", lambda r, j, rel: ref.num_rel_ret(r, None, rel)),
    "map": ("AP", lambda r, j, rel: ref.average_precision(r, j, None, rel)),
    "Rprec": ("Rprec", lambda r, j, rel: ref.r_precision(r, j, rel)),
    "bpref": ("Bpref", lambda r, j, rel: ref.bpref(r, j, rel)),
    "recip_rank": ("RR", lambda r, j, rel: ref.reciprocal_rank(r, None, rel)),
    "P_5": ("P@5", lambda r, j, rel: ref.precision(r, 5, rel)),
    "P_10": ("P@10", lambda r, j, rel: ref.precision(r, 10, rel)),
    "recall_5": ("R@5", lambda r, j, rel: ref.recall(r, j, 5, rel)),
    "recall_10": ("R@10", lambda r, j, rel: ref.recall(r, j, 10, rel)),
    "infAP": ("infAP", lambda r, j, rel: ref.inf_ap(r, j, rel)),
    "ndcg": ("nDCG", lambda r, j, rel: ref.ndcg(r, j)),
    "ndcg_cut_5": ("nDCG@5", lambda r, j, rel: ref.ndcg(r, j, 5)),
    "ndcg_cut_10": ("nDCG@10", lambda r, j, rel: ref.ndcg(r, j, 10)),
    "success_1": ("Success@1", lambda r, j, rel: ref.success(r, 1, rel)),
    "success_5": ("Success@5", lambda r, j, rel: ref.success(r, 5, rel)),
}
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
#: the -m arguments that select exactly MEASURES, printed in trec_eval's table order
TREC_ARGS = ("-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", "-m", "Rprec", "-m", "bpref",
             "-m", "recip_rank", "-m", "P.5,10", "-m", "recall.5,10", "-m", "infAP", "-m", "ndcg",
             "-m", "ndcg_cut.5,10", "-m", "success.1,5")  # fmt: skip
TABLE_ORDER = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P_5", "P_10",
               "recall_5", "recall_10", "infAP", "ndcg", "ndcg_cut_5", "ndcg_cut_10", "success_1", "success_5"]  # fmt: skip

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


# ------------------------------------------------------------------------------------------- reference


def reference(
    qrels: Qrels, run: Run, *, complete: bool, judged_only: bool, max_docs: int | None, rel: int
) -> tuple[list[str], dict[str, list[float]]] | str:
    """Per-query values (query ids in strcmp order) of every measure, or the first missing query id
    when trec_eval would stop (no -c)."""
    queries = sorted(qrels, key=lambda q: q.encode())
    values: dict[str, list[float]] = {name: [] for name in MEASURES}
    for qid in queries:
        judged = list(qrels[qid].values())
        if qid not in run:
            if not complete:
                return qid
            ranking: Ranking = [None]  # the placeholder document, in no qrels
        else:
            order = ref.trec_order(run[qid])
            if max_docs is not None:
                order = order[: max(max_docs, 0)]
            ranking = ref.ranked_labels(qrels[qid], order)
        if judged_only:
            ranking = [lab for lab in ranking if lab is not None and lab >= 0]
        for name, (_, formula) in MEASURES.items():
            value = formula(ranking, judged, rel)
            if name == "num_ret" and qid not in run:
                value = 0.0  # trec_eval clears num_ret after ranking the placeholder
            values[name].append(value)
    return queries, values


def mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:  # in query order, as trec_eval adds them
        total += v
    return total / len(values)


# ------------------------------------------------------------------------------------------- generator


@st.composite
def collections(draw: st.DrawFn) -> tuple[Qrels, Run]:
    docs = [f"d{i}" for i in range(12)] + ["7", "07", "D-3"]
    n_queries = draw(st.integers(1, 6))
    names = draw(st.lists(st.sampled_from(["q1", "q2", "q10", "2", "a", "Q3", "q01", "b_x"]), min_size=n_queries,
                          max_size=n_queries, unique=True))  # fmt: skip
    qrels: Qrels = {}
    run: Run = {}
    for qid in names:
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=10, unique=True))
        qrels[qid] = {d: draw(st.sampled_from([0, 0, 1, 1, 2, 3, -1, -2])) for d in judged}
    for qid in names + ["run_only"]:
        if qid != "run_only" and draw(st.integers(0, 5)) == 0:
            continue  # a qrels query the run lacks
        retrieved = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=14, unique=True))
        scores = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.25, -1.0])  # few values: many ties
        run[qid] = {d: draw(scores) for d in retrieved}
    return qrels, run


def write(tmp: Path, qrels: Qrels, run: Run) -> tuple[str, str]:
    q = tmp / "qrels.txt"
    r = tmp / "run.txt"
    q.write_text("".join(f"{qid} 0 {d} {lab}\n" for qid, docs in qrels.items() for d, lab in docs.items()))
    # shuffled-looking but deterministic: queries interleaved, reverse order within each
    lines = [f"{qid} Q0 {d} 0 {s!r} sysR\n" for qid, docs in run.items() for d, s in reversed(list(docs.items()))]
    r.write_text("".join(lines[::2] + lines[1::2]))
    return str(q), str(r)


OPTIONS = st.fixed_dictionaries(
    {
        "complete": st.booleans(),
        "judged_only": st.booleans(),
        "max_docs": st.one_of(st.none(), st.integers(1, 8)),
        "rel": st.sampled_from([1, 1, 2, 3]),
    }
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def trec_eval_args(opts: dict[str, object]) -> list[str]:
    args = ["trec-eval", "-q", *TREC_ARGS, f"-l{opts['rel']}"]
    if opts["complete"]:
        args.append("-c")
    if opts["judged_only"]:
        args.append("-J")
    if opts["max_docs"] is not None:
        args.append(f"-M{opts['max_docs']}")
    return args


# ------------------------------------------------------------------------------------------- the tests


@SETTINGS
@given(collection=collections(), opts=OPTIONS)
def test_trec_eval_matches_the_reference(tmp_path: Path, collection: tuple[Qrels, Run], opts: dict[str, object]) -> None:
    qrels, run = collection
    q, r = write(tmp_path, qrels, run)
    result = CliRunner().invoke(cli, [*trec_eval_args(opts), q, r])
    expected = reference(qrels, run, **opts)  # type: ignore[arg-type]
    if isinstance(expected, str):
        assert result.exit_code == 4
        assert result.stderr == f"trec_eval: result qid '{expected}' not found in qrels\n"
        return
    assert result.exit_code == 0, result.stderr
    queries, values = expected
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    want: list[tuple[str, str, float]] = []
    for i, qid in enumerate(queries):
        want.extend((name, qid, values[name][i]) for name in TABLE_ORDER)
    want.extend((name, "all", sum(values[name]) if name in COUNTS else mean(values[name])) for name in TABLE_ORDER)
    assert [(n.strip(), qid) for n, qid, _ in lines] == [(n, qid) for n, qid, _ in want]
    for (name, qid, text), (_, _, value) in zip(lines, want):
        if name.strip() in COUNTS:
            assert text == str(int(value)), (name, qid)
        else:
            assert abs(float(text) - value) <= 5e-5 + 1e-12, (name, qid, text, value)
            assert len(text) == 6 and text[1] == "."  # %6.4f


@SETTINGS
@given(collection=collections(), opts=OPTIONS)
def test_eval_matches_the_reference(tmp_path: Path, collection: tuple[Qrels, Run], opts: dict[str, object]) -> None:
    """``ranklens eval`` with the same policies, at full precision. ``--missing zero`` is ``-c``;
    without it ranklens skips (and says so) the queries that trec_eval 10.0 would abort on."""
    qrels, run = collection
    q, r = write(tmp_path, qrels, run)
    args = ["eval", q, r, "-m", *(MEASURES[n][0] for n in TABLE_ORDER), "--per-query", "-f", "tsv",
            "-l", str(opts["rel"]), "--missing", "zero" if opts["complete"] else "skip"]  # fmt: skip
    if opts["judged_only"]:
        args.append("-J")
    if opts["max_docs"] is not None:
        args += ["-M", str(opts["max_docs"])]
    result = CliRunner().invoke(cli, args)
    evaluated = {qid: docs for qid, docs in qrels.items() if opts["complete"] or qid in run}
    if not evaluated:
        assert result.exit_code == 2 and "no query to evaluate" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    expected = reference(evaluated, run, **opts)  # type: ignore[arg-type]
    assert not isinstance(expected, str)
    queries, values = expected
    got = {(m, qid): float(v) for m, qid, v in (line.split("\t") for line in result.stdout.splitlines())}
    printed = list(dict.fromkeys(m for m, _ in got))  # as asked, with "(rel=2)" spelled out under -l 2
    assert len(printed) == len(TABLE_ORDER)
    for name, ours in zip(TABLE_ORDER, printed):
        for i, qid in enumerate(queries):
            assert got[(ours, qid)] == pytest.approx(values[name][i], abs=1e-12), (name, qid)
        summary = sum(values[name]) if name in COUNTS else mean(values[name])  # counts add up, as in trec_eval
        assert got[(ours, "all")] == pytest.approx(summary, abs=1e-12), name
    assert len(got) == len(TABLE_ORDER) * (len(queries) + 1)


def test_the_reference_knows_the_spec_example() -> None:
    """The reference itself on the textbook query (spec §0): labels 3,0,3,2,0 → nDCG 0.909816."""
    queries, values = reference(  # type: ignore[misc]
        {"q": {"a": 3, "b": 0, "c": 3, "d": 2, "e": 0}},
        {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}},
        complete=False, judged_only=False, max_docs=None, rel=1,
    )
    assert queries == ["q"]
    assert math.isclose(values["ndcg"][0], 0.909816, abs_tol=1e-6)
    assert values["P_5"] == [0.6]
