"""Parity of the backends by construction (issue 26): one fixture, ``backend``, parametrised over every
backend a user can force (``RANKLENS_BACKEND=reference|compiled``) and every kind of input the compiled pass
reads (``compiled`` on files; ``compiled:dict|pandas|polars|arrow`` on data in memory), runs the measure suites'
cases through the one dispatcher (:func:`ranklens.evaluation.evaluate_files` for files, :func:`ranklens.evaluate`
for data in memory, the files read into ``{qid: {doc: value}}`` dicts by plain splitting and given as that
kind) once per backend. The oracles are independent of
ranklens: the golden outputs of the real trec_eval 10.0 (``tests/data/trec_eval``, a copy of
``shared/golden/trec_eval``), the plain-loop reference of ``tests/reference_impl.py`` on generated
collections, and the spec's worked example. A forced backend that declines is an error, so every case
either runs on the backend it names or is one the backend declares it does not take (then the test checks
that it declines, with the reason).
"""

from __future__ import annotations

import math
import shlex
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import ranklens
from ranklens.engine.placeholder import CLEARED
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError, RanklensWarning
from ranklens.evaluation import evaluate_files
from ranklens.express import SUPPORTED_MEASURES, available, policy_declined

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl as ref  # noqa: E402
import trec_eval_reference as tref  # noqa: E402
from backends_under_test import UNDER_TEST, as_kind  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


KIND: list[str | None] = [None]  # the in-memory kind of the test's backend (None: files)


@pytest.fixture(params=UNDER_TEST)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend every evaluation of the test runs on (forced: one that declines fails the test)."""
    if request.param.startswith("compiled") and not available():
        pytest.skip("ranklens._cexpress is not built")
    for name in ("RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    name, _, kind = str(request.param).partition(":")
    monkeypatch.setenv("RANKLENS_BACKEND", name)
    KIND[0] = kind or None
    return str(request.param)


def read_trec(qrels: str, run: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The qrels and run files as ``{qid: {doc: value}}`` dicts, by plain splitting (words 1, 3, 4 of a qrels
    line; 1, 3, 5 of a run line)."""
    q: dict[str, dict[str, int]] = {}
    r: dict[str, dict[str, float]] = {}
    for line in Path(qrels).read_text().splitlines():
        w = line.split()
        if w:
            q.setdefault(w[0], {})[w[2]] = int(w[3])
    for line in Path(run).read_text().splitlines():
        w = line.split()
        if w:
            r.setdefault(w[0], {})[w[2]] = float(w[4])
    return q, r


def per_query(qrels: str, run: str, measures: list[str], policy: EvalPolicy | None = None) -> dict[str, dict[str, float]]:
    """``{measure: {query: value, "all": aggregate}}`` of the one run file ``run``, as the forced backend
    computes it (on the files, or on their dicts given as the in-memory kind of the test)."""
    if KIND[0] is None:
        (res,) = evaluate_files(qrels, [run], measures, policy).results
    else:
        q, r = read_trec(qrels, run)
        with warnings.catch_warnings():  # (the notes: the files' evaluation returns them, this one warns)
            warnings.simplefilter("ignore", RanklensWarning)
            res = ranklens.evaluate(as_kind(KIND[0], q, "relevance"), as_kind(KIND[0], r, "score"), measures,
                                    policy=policy or EvalPolicy())
    return {
        m: {**{str(k): v for k, v in res.per_query(str(evaluated)).items()}, "all": res.aggregates[j]}
        for j, (m, evaluated) in enumerate(zip(measures, res.measures))
    }


# ------------------------------------------------------------------------------- golden trec_eval outputs

#: trec_eval's printed name → ranklens's, for the families the compiled backend declares (every one of
#: trec_eval's default set and all of all_trec but relstring, which is text, and runid)
def _ranklens_name(trec: str) -> str | None:
    from ranklens.measures.trec_names import from_printed_name, language_lookup, parse_trec

    argument = from_printed_name(trec)
    if argument is None:
        spec = language_lookup(trec)
        if spec is None or spec.name != trec or spec.kind == "cutoffs" or spec.kind == "levels":
            return None
        argument = trec
    (printed, m), *_ = [(p, m) for p, m in parse_trec(argument) if p == trec] or [(None, None)]
    return str(m) if m is not None and m.name in SUPPORTED_MEASURES else None


def _golden_case(case: str) -> tuple[list[str], EvalPolicy, dict[str, dict[str, float]]]:
    """(files, policy, {measure: {query or "all": value}}) of a golden case, its trec_eval options as the policy."""
    argv = shlex.split((DATA / f"{case}.cmd").read_text())[1:]
    policy: dict[str, object] = {}
    files: list[str] = []
    gain_map = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            gain_map = gain_map or ("=" in argv[i + 1] and argv[i + 1].startswith("ndcg."))
            i += 2
            continue
        if a == "-c":
            policy["missing"] = "zero"
        elif a == "-J":
            policy["judged_only"] = True
        elif a.startswith("-l"):
            policy["rel_level"] = float(a[2:])
        elif a.startswith("-M"):
            policy["max_docs"] = int(a[2:] or argv[i + 1])
            i += 0 if a[2:] else 1
        elif not a.startswith("-"):
            files.append(str(DATA / a))
        i += 1
    expected: dict[str, dict[str, float]] = {}
    for line in (DATA / f"{case}.out").read_text().splitlines():
        trec, qid, value = line.split()
        name = _ranklens_name(trec)
        if name is not None and not (gain_map and name.startswith("nDCG")):
            expected.setdefault(name, {})[qid] = float(value)
    return files, EvalPolicy(**policy), expected  # type: ignore[arg-type]


GOLDEN = [
    p.stem for p in sorted(DATA.glob("*.cmd"))
    if not any(flag in p.read_text().split() for flag in ("-R", "-Z", "-M0")) and "." not in p.stem.split(".")[0][4:]
]
GOLDEN = [c for c in GOLDEN if _golden_case(c)[2] and "-q" in (DATA / f"{c}.cmd").read_text().split()]


#: golden cases whose files the compiled pass declines to read (trec_eval reads a run line's words beyond six)
#: and a negative label (pooled but unjudged) in the qrels
INPUT_DECLINED = {
    "case8.extra_columns": "case8.run: a line or column it does not read beyond doubt",
    "specA.all_q": "specA.qrels: a line or column it does not read beyond doubt",
    "case2.all_qc": "case2.qrels: a line or column it does not read beyond doubt",
}


#: golden cases the in-memory pass declines (read into dicts, a run line's words beyond six are gone)
MEMORY_DECLINED = {"specA.all_q": "qrels given as a [a-z]+: a (key or value|column) it does not read beyond doubt"}


def test_the_golden_cases_are_collected() -> None:
    assert len(GOLDEN) >= 8, GOLDEN


@pytest.mark.parametrize("case", GOLDEN)
def test_golden_trec_eval_values(case: str, backend: str) -> None:
    """Every per-query and summary value trec_eval printed for the measures the compiled backend declares (its
    default set and all of all_trec but relstring: num_ret … rbp_resid), to its 4 decimals; the options
    the compiled backend does not declare (-J, -l, -M) make it decline, saying which; -c (``missing="zero"``)
    it declares."""
    (qrels, run), policy, expected = _golden_case(case)
    measures = sorted(expected)
    declined = (MEMORY_DECLINED if KIND[0] else INPUT_DECLINED).get(case)
    # (-c is declared on files: missing="zero"; the in-memory pass declines it, it adds no absent query)
    undeclared = policy_declined(policy) is not None or (KIND[0] is not None and policy.missing != "skip")
    if backend != "reference" and (undeclared or declined):
        # (-l2 gives the binary measures rel=2: declined by that parameter, before the policy)
        reason = "(policy |.*rel=2; the compiled pass implements rel=1)" if undeclared else declined
        with pytest.raises(InputError, match=r"^RANKLENS_BACKEND=compiled: the compiled backend declines: .*" + reason):
            per_query(qrels, run, measures, policy)
        return
    got = per_query(qrels, run, measures, policy)
    for m in measures:
        for qid, value in expected[m].items():  # (the "all" line: the family's aggregate, mean, sum or gmean)
            assert got[m].get(qid, 0.0) == pytest.approx(value, abs=5.01e-5, nan_ok=True), (m, qid)


# ------------------------------------------------------------- generated collections, independent reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trec_eval"))
import test_differential as gen  # noqa: E402  (its generator of collections)

MEASURES = {
    # trec_eval's default set and the rest of all_trec (tests/trec_eval_reference.py: trec_eval's m_*.c loops)
    "NumQ": lambda r, j: 1.0,
    "NumRet": lambda r, j: tref.num_ret(r),
    "NumRet@3": lambda r, j: tref.num_ret(r, 3),
    "NumRel": lambda r, j: float(ref.num_rel(j)),
    "NumRelRet": lambda r, j: ref.num_rel_ret(r),
    "GMAP": lambda r, j: ref.average_precision(r, j, None, 1),
    "Rprec": lambda r, j: ref.r_precision(r, j),
    "Bpref": lambda r, j: ref.bpref(r, j),
    "GMBpref": lambda r, j: ref.bpref(r, j),
    "IPrec": lambda r, j: tref.iprec(r, j, 0.0),
    "IPrec(recall=0.3)": lambda r, j: tref.iprec(r, j, 0.3),
    "IPrec(recall=0.5)": lambda r, j: tref.iprec(r, j, 0.5),
    "IPrec(recall=1)": lambda r, j: tref.iprec(r, j, 1.0),
    "IPrecAvg": lambda r, j: tref.iprec_avg(r, j),
    "infAP": lambda r, j: ref.inf_ap(r, j),
    "RprecMult(mult=0.4)": lambda r, j: tref.rprec_mult(r, j, 0.4),
    "RprecMult(mult=1.6)": lambda r, j: tref.rprec_mult(r, j, 1.6),
    "Utility": lambda r, j: tref.utility(r, j),
    "BinG": lambda r, j: tref.bin_g(r, j),
    "G": lambda r, j: tref.g_measure(r, j),
    "nDCGRel": lambda r, j: tref.ndcg_rel(r, j),
    "RnDCG": lambda r, j: tref.rndcg(r, j),
    "RelativeP@3": lambda r, j: tref.relative_p(r, j, 3),
    "Success@3": lambda r, j: ref.success(r, 3),
    "SetP": lambda r, j: tref.set_values(r, j)["SetP"],
    "SetRelativeP": lambda r, j: tref.set_values(r, j)["SetRelativeP"],
    "SetAP": lambda r, j: tref.set_values(r, j)["SetAP"],
    "SetF": lambda r, j: tref.set_values(r, j)["SetF"],
    "SetF(beta2=0.25)": lambda r, j: tref.set_values(r, j, 0.25)["SetF"],
    "Unjudged@3": lambda r, j: tref.unjudged(r, 3),
    "NumNonRelJudgedRet": lambda r, j: tref.num_nonrel_judged_ret(r),
    "TrecRBP": lambda r, j: tref.trec_rbp(r, j),
    "TrecRBP(p=0.5)": lambda r, j: tref.trec_rbp(r, j, 0.5),
    "TrecRBPResidual": lambda r, j: tref.trec_rbp_residual(r),
    "TrecRBPResidual(p=0.8)": lambda r, j: tref.trec_rbp_residual(r, 0.8),
    # the measures of the express form
    "nDCG": lambda r, j: ref.ndcg(r, j),
    "nDCG@5": lambda r, j: ref.ndcg(r, j, 5),
    "nDCG@10": lambda r, j: ref.ndcg(r, j, 10),
    "DCG@5": lambda r, j: ref.dcg(r, 5),
    "AP": lambda r, j: ref.average_precision(r, j, None, 1),
    "AP@5": lambda r, j: ref.average_precision(r, j, 5, 1),
    "P@5": lambda r, j: ref.precision(r, 5, 1),
    "R@10": lambda r, j: ref.recall(r, j, 10, 1),
    "RR": lambda r, j: ref.reciprocal_rank(r, None, 1),
    "RR@3": lambda r, j: ref.reciprocal_rank(r, 3, 1),
}


def write_grouped(tmp: Path, qrels: dict, run: dict) -> tuple[str, str]:
    """The collection as TREC files, each query's rows together (as run files are written), in reverse order."""
    (tmp / "qrels.txt").write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in qrels.items() for d, lab in docs.items()))
    lines = [f"{q} Q0 {d} 0 {s!r} sysR\n" for q, docs in run.items() for d, s in reversed(list(docs.items()))]
    (tmp / "run.txt").write_text("".join(lines))
    return str(tmp / "qrels.txt"), str(tmp / "run.txt")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collection=gen.collections())
def test_generated_collections_match_the_reference(tmp_path: Path, backend: str, collection: tuple[dict, dict]) -> None:
    """Graded and negative labels, ties, unjudged documents, numeric-looking ids, run-only queries and
    qrels queries the run lacks (skipped, the default policy): every value within 1e-12 of the plain loops."""
    qrels, run = collection
    if not set(qrels) & set(run):
        return  # (no query in common: an error for every backend, tested elsewhere)
    if backend != "reference" and any(lab < 0 for docs in qrels.values() for lab in docs.values()):
        q, r = write_grouped(tmp_path, qrels, run)  # (it declines negative labels: they stay the reference's)
        where = r"qrels given as a [a-z]+: a (key or value|column)" if KIND[0] else r"qrels.txt: a line or column"
        with pytest.raises(InputError, match=r"declines: .*" + where + " it does not read"):
            per_query(q, r, list(MEASURES))
        qrels = {qid: {d: max(lab, 0) for d, lab in docs.items()} for qid, docs in qrels.items()}
    q, r = write_grouped(tmp_path, qrels, run)
    got = per_query(q, r, list(MEASURES))
    for qid in sorted(set(qrels) & set(run)):
        ranking = ref.ranked_labels(qrels[qid], ref.trec_order(run[qid]))
        for name, formula in MEASURES.items():
            assert got[name][qid] == pytest.approx(formula(ranking, list(qrels[qid].values())), rel=1e-12, abs=1e-12), (name, qid)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collection=gen.collections())
def test_generated_collections_with_missing_zero(tmp_path: Path, backend: str, collection: tuple[dict, dict]) -> None:
    """``missing="zero"`` (trec_eval -c, the gate's default): every qrels query is evaluated; one the run lacks
    is ranked against one document no qrels lists (trec_eval's placeholder), computed by the plain loops."""
    qrels, run = collection
    qrels = {qid: {d: max(lab, 0) for d, lab in docs.items()} for qid, docs in qrels.items()}
    if not set(qrels) & set(run):
        return  # (no query in common: an error for every backend, tested elsewhere)
    q, r = write_grouped(tmp_path, qrels, run)
    if KIND[0] is not None:  # (the in-memory pass declines missing="zero": it adds no absent query)
        with pytest.raises(InputError, match=r"^RANKLENS_BACKEND=compiled: the compiled backend declines: policy missing='zero'"):
            per_query(q, r, list(MEASURES), EvalPolicy(missing="zero"))
        return
    got = per_query(q, r, list(MEASURES), EvalPolicy(missing="zero"))
    assert all(set(values) - {"all"} == set(qrels) for values in got.values())
    for qid in sorted(qrels):
        order = ref.trec_order(run[qid]) if qid in run else ["ceci_nest_pas_un_docno"]
        ranking = ref.ranked_labels(qrels[qid], order)
        for name, formula in MEASURES.items():
            if qid not in run and name.split("@")[0].split("(")[0] in CLEARED:  # (what trec_eval clears: 0)
                assert got[name][qid] == 0.0, (name, qid)
                continue
            assert got[name][qid] == pytest.approx(formula(ranking, list(qrels[qid].values())), rel=1e-12, abs=1e-12), (name, qid)


# ------------------------------------------------------------------------------------ the spec's example

def test_spec_textbook_example(tmp_path: Path, backend: str) -> None:
    """spec/METRICS.md's worked example (labels 3, 2, 3, 0, 1, 2 in rank order; ideal 3, 3, 2, 2, 1):
    DCG@6 = 6.861127, nDCG@6 = 0.785 (6 decimals)."""
    labels = [3, 2, 3, 0, 1, 2]
    (tmp_path / "q.txt").write_text("".join(f"q1 0 d{i} {lab}\n" for i, lab in enumerate(labels)))
    (tmp_path / "r.txt").write_text("".join(f"q1 Q0 d{i} {i + 1} {10 - i} s\n" for i in range(6)))
    got = per_query(str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), ["DCG@6", "nDCG@6"])
    dcg = sum(lab / math.log2(i + 2) for i, lab in enumerate(labels))
    ideal = sum(lab / math.log2(i + 2) for i, lab in enumerate(sorted(labels, reverse=True)))
    assert got["DCG@6"]["q1"] == pytest.approx(6.861127, abs=1e-6) == pytest.approx(dcg, abs=1e-6)
    assert got["nDCG@6"]["q1"] == pytest.approx(dcg / ideal, rel=1e-12)


def test_the_suites_cover_every_declared_family() -> None:
    """A family the compiled backend declares and no case above evaluates would escape parity."""
    covered = {name.split("@")[0].split("(")[0] for name in MEASURES}
    assert covered == set(SUPPORTED_MEASURES)
