"""Every measure with trec_eval semantics × ``missing`` (skip / zero, trec_eval ``-c``) × ``rel_level``
(trec_eval ``-l``): the Python API, ``ranklens eval`` and ``ranklens trec-eval`` give the same value for
every query and in aggregate (issue 22 item 8), and the API equals the golden outputs of trec_eval 10.0.

trec_eval 10.0 without ``-c`` stops at a qrels query the run lacks, so ``missing="skip"`` is compared with
``trec-eval`` on the qrels of the run's queries (trec_eval 9's behaviour); ``missing="zero"`` with
``trec-eval -c`` on the whole qrels. Values are compared as trec_eval prints them (4 decimals, ``-nan``).
"""

from __future__ import annotations

import math
import random
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.measures.trec_names import TREC_MEASURES
from ranklens.trec_eval.select import select

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
#: every trec_eval name ranklens reads as measures (relstring and runid print text; yaap has no family)
NAMES = tuple(spec.name for key, spec in sorted(TREC_MEASURES.items()))


def _collection(tmp: Path) -> tuple[Path, Path, Path]:
    """Graded labels 0-3 and -1, ties, unjudged documents, qrels queries absent from the run (q4, and q6
    judged 0 only), a query judged 0 only (q3), a run-only query (q9)."""
    rnd = random.Random(22)
    qrels: dict[str, dict[str, int]] = {"q1": {}, "q2": {}, "q3": {}, "q4": {}, "q5": {}, "q6": {}}
    for q, judged in qrels.items():
        for d in range(12):
            if rnd.random() < 0.6:
                judged[f"d{d}"] = 0 if q in ("q3", "q6") else rnd.choice([-1, 0, 0, 1, 2, 3])
    run = {q: {f"d{d}": float(rnd.choice([1, 2, 3, 4])) for d in rnd.sample(range(15), 9)} for q in ("q1", "q2", "q3", "q5", "q9")}
    lines = [f"{q} 0 {d} {lab}" for q, docs in qrels.items() for d, lab in docs.items()]
    (tmp / "full.qrels").write_text("\n".join(lines) + "\n")
    (tmp / "present.qrels").write_text("\n".join(x for x in lines if x.split()[0] not in ("q4", "q6")) + "\n")
    (tmp / "r.run").write_text(
        "".join(f"{q} Q0 {d} {i} {s} t\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1))
    )
    return tmp / "full.qrels", tmp / "present.qrels", tmp / "r.run"


def _printed(text: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in text.splitlines():
        name, qid, value = (c.strip() for c in line.split("\t"))
        if name not in ("runid", "relstring"):
            out[(name, qid)] = value
    return out


def _as_printed(value: float, count: bool) -> str:
    if math.isnan(value):
        return "-nan"
    return str(int(value)) if count else f"{value:.4f}"


def _columns(names: tuple[str, ...], level: int) -> dict[str, tuple[str, bool]]:
    """ranklens canonical name → (trec_eval's printed name, printed as a count)."""
    out = {}
    for sel in select(list(names), rel_level=level):
        for printed, m in sel.columns:
            if m is not None:
                out[str(m)] = (printed, sel.entry.value == "long")
    return out


def _api(qrels: Path, run: Path, names: tuple[str, ...], missing: str, level: int | None) -> ranklens.Results:
    """The Python API (its notes kept in the results, not warned)."""
    return ranklens.Evaluator(list(names), str(qrels), missing=missing, rel_level=level)(str(run), warn=False)


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return _collection(tmp_path_factory.mktemp("sweep"))


@pytest.mark.parametrize("missing", ["skip", "zero"])
@pytest.mark.parametrize("level", [None, 0, 1, 2])  # None: no -l / --rel-level (eval's compiled path)
def test_api_eval_and_trec_eval_agree(collection: tuple[Path, Path, Path], missing: str, level: int | None) -> None:
    full, present, run = collection
    args = ["-q", *(["-l", str(level)] if level is not None else []), *(["-c"] if missing == "zero" else [])]
    m_args = [x for name in NAMES for x in ("-m", name)]
    te = CliRunner().invoke(cli, ["trec-eval", *args, *m_args, str(full if missing == "zero" else present), str(run)])
    assert te.exit_code == 0, te.output
    theirs = _printed(te.stdout)
    columns = _columns(NAMES, 1 if level is None else level)

    res = _api(full, run, NAMES, missing, level)
    api: dict[tuple[str, str], str] = {}
    for j, m in enumerate(res.measures):
        printed, count = columns[str(m)]
        if (printed, "all") not in theirs:
            continue
        api[(printed, "all")] = _as_printed(res.aggregates[j], count)
        for q, v in zip(res.query_ids, res.values[:, j].tolist()):
            if (printed, q) in theirs:
                api[(printed, q)] = _as_printed(v, count)
    assert {k: v for k, v in theirs.items() if k in api} == api
    assert set(theirs) == set(api), sorted(set(theirs) ^ set(api))[:10]

    out = CliRunner().invoke(
        cli, ["eval", str(full), str(run), "-m", *NAMES, *(["--missing", missing] if missing == "zero" else []),
              *(["--rel-level", str(level)] if level is not None else []), "-q", "-f", "tsv"]
    )
    assert out.exit_code == 0, out.output
    assert _cli_values(out.stdout, columns, api) == api


def test_compiled_path_agrees(tmp_path: Path) -> None:
    """eval's compiled path (default policy, its measures, no negative label) against trec-eval and the API."""
    from ranklens.engine.policy import EvalPolicy
    from ranklens.evaluation import compiled_results

    full, present, run = _collection(tmp_path)
    for f in (full, present):
        f.write_text(f.read_text().replace(" -1\n", " 0\n"))
    names = ("map", "ndcg_cut.5,10", "P.5,10", "recip_rank", "recall.5,100", "ndcg")
    from ranklens.measures import parse_many

    why: list[str] = []
    assert compiled_results(str(full), [(None, str(run))], parse_many(list(names)), EvalPolicy(), None, why) is not None, why
    te = CliRunner().invoke(cli, ["trec-eval", "-q", *(x for n in names for x in ("-m", n)), str(present), str(run)])
    theirs = _printed(te.stdout)
    columns = _columns(names, 1)
    out = CliRunner().invoke(cli, ["eval", str(full), str(run), "-m", *names, "-q", "-f", "tsv"])
    assert out.exit_code == 0, out.output
    got = _cli_values(out.stdout, columns, theirs)
    assert len(got) > 40 and got == {k: theirs[k] for k in got}
    res = _api(full, run, names, "skip", None)
    for j, m in enumerate(res.measures):
        printed, count = columns[str(m)]
        assert _as_printed(res.aggregates[j], count) == got[(printed, "all")]


def _cli_values(text: str, columns: dict[str, tuple[str, bool]], api: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    out = {}
    for line in text.splitlines():
        name, q, value = line.split("\t")
        printed, count = columns[name]
        if (printed, q) in api:
            out[(printed, q)] = _as_printed(float(value), count)
    return out


GOLDEN_CASES = ["case1.all_q", "case1.level2", "case2.all_qc", "case3.all_qc"]


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_api_equals_golden_trec_eval(case: str) -> None:
    argv = shlex.split((GOLDEN / f"{case}.cmd").read_text())
    level = int(next((a[2:] for a in argv if a.startswith("-l")), "1"))
    missing = "zero" if "-c" in argv else "skip"
    qrels, run = GOLDEN / argv[-2], GOLDEN / argv[-1]
    theirs = _printed((GOLDEN / f"{case}.out").read_text())
    names = tuple(n for n in NAMES if n.lower() in {k.lower() for k in TREC_MEASURES})
    columns = _columns(names, level)
    res = _api(qrels, run, names, missing, level)
    compared = 0
    for j, m in enumerate(res.measures):
        printed, count = columns[str(m)]
        rows = [("all", res.aggregates[j]), *zip(res.query_ids, res.values[:, j].tolist())]
        for q, v in rows:
            if (printed, q) in theirs:
                assert _as_printed(v, count) == theirs[(printed, q)].replace("  ", ""), (printed, q)
                compared += 1
    assert compared > 500


def test_judged_only_with_c(collection: tuple[Path, Path, Path]) -> None:
    """-J drops trec_eval's placeholder (judged by no one): the query is evaluated on an empty ranking."""
    full, _, run = collection
    te = CliRunner().invoke(cli, ["trec-eval", "-q", "-c", "-J", *(x for n in NAMES for x in ("-m", n)), str(full), str(run)])
    assert te.exit_code == 0, te.output
    theirs = _printed(te.stdout)
    columns = _columns(NAMES, 1)
    res = ranklens.Evaluator(list(NAMES), str(full), missing="zero", judged_only=True)(str(run), warn=False)
    api = {}
    for j, m in enumerate(res.measures):
        printed, count = columns[str(m)]
        for q, v in [("all", res.aggregates[j]), *zip(res.query_ids, res.values[:, j].tolist())]:
            if (printed, q) in theirs:
                api[(printed, q)] = _as_printed(v, count)
    assert len(api) > 300 and api == {k: theirs[k] for k in api}
