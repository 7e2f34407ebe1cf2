"""The one dispatcher of backends (issue 26, ``ranklens.backends``): the compiled provider declares the
resolved parameter values and the policy it implements, declines with a reason, ``RANKLENS_BACKEND`` forces a
backend and ``RANKLENS_DEBUG`` says which one ran. ``eval``, ``compare``, ``gate`` and ``evaluate_files``
all choose through it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
import ranklens.evaluation as evaluation
from ranklens.backends import choose_backend
from ranklens.cli.main import cli
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError
from ranklens.evaluation import evaluate_files
from ranklens.express import _PASSED_PARAMS, PASSED, SUPPORTED_MEASURES, SUPPORTED_POLICY, available, measures_declined
from ranklens.measures import get_family, parse_many

ROOT = Path(__file__).resolve().parents[2]
QRELS, BM25, DENSE = (str(ROOT / "examples" / n) for n in ("toy.qrels", "toy_bm25.run", "toy_dense.run"))

needs_compiled = pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANKLENS_BACKEND", "RANKLENS_DEBUG", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


@contextlib.contextmanager
def registry_default(family: str, param: str, value: object) -> Iterator[None]:
    """The registry's default of ``family``'s ``param`` changed to ``value`` for a while (a one-line edit of
    ``measures/definitions.py``, as the review's demonstration of C3 did)."""
    p = get_family(family).param(param)
    old = p.default
    object.__setattr__(p, "default", value)
    try:
        yield
    finally:
        object.__setattr__(p, "default", old)


def test_the_declaration_is_the_registry_defaults() -> None:
    """A plain word of ``ranklens eval``'s express form (``nDCG@10``) means the registry's defaults; the
    compiled declaration must name exactly those values, every parameter of each family it declares."""
    for name, declared in SUPPORTED_MEASURES.items():
        defaults = {p.name: p.default for p in get_family(name).all_params}
        passed = {p for p, v in declared.items() if v is PASSED}  # (handed to the C code with the measure)
        assert {p: v for p, v in defaults.items() if p not in passed} == {p: v for p, v in declared.items() if p not in passed}, name
        assert set(defaults) == set(declared), name
        assert passed == ({_PASSED_PARAMS[name]} if name in _PASSED_PARAMS else set()), name


def test_the_policy_declaration_names_every_field() -> None:
    import dataclasses

    assert {f.name for f in dataclasses.fields(EvalPolicy)} == set(SUPPORTED_POLICY)
    assert all(getattr(EvalPolicy(), f) in accepted for f, accepted in SUPPORTED_POLICY.items())


@pytest.mark.parametrize(
    ("words", "reason"),
    [
        (["nDCG(gain=exp)@10"], "nDCG(gain=exp)@10: gain=exp; the compiled pass implements gain=linear"),
        (["nDCG(ideal=local)@10"], "ideal=local; the compiled pass implements ideal=global"),
        (["DCG(discount=log,base=10)@5"], "discount=log; the compiled pass implements discount=log2"),
        (["P(ties=average)@5"], "ties=average; the compiled pass implements ties=trec"),
        (["RR(rel=2)"], "rel=2; the compiled pass implements rel=1"),
        (["nDCG@10", "ERR@10"], "ERR@10: the compiled pass does not implement ERR (ranklens.express.SUPPORTED_MEASURES lists what it does)"),
        (["Utility(a=2)"], "a=2.0; the compiled pass implements a=1.0"),
        (["IPrec(recall=0.25)", "RprecMult(mult=0.5)", "SetF(beta2=0.5)", "TrecRBP(p=0.5)"], None),
        (["nDCG", "nDCG(gain=exp)"], "nDCG(gain=exp): gain=exp; the compiled pass implements gain=linear"),
        (["nDCG(agg=median)@10"], "agg=median; the compiled pass implements agg=mean"),
        (["P(judged_only=True)@10"], "judged_only=True; the compiled pass implements judged_only=False"),
        (["nDCG@10", "AP"], None),
    ],
)
def test_declines_say_which_parameter(words: list[str], reason: str | None) -> None:
    got = measures_declined(parse_many(words))
    assert got == reason if reason is None else reason in (got or "")


def test_a_measure_twice_is_declined() -> None:
    assert measures_declined(parse_many(["P@5"]) * 2) == "P@5: asked for twice"


def test_a_changed_registry_default_is_declined_not_diverged() -> None:
    """The review's C3: with nDCG's default gain changed to exp, the support check used to see "no parameter
    written" and run the compiled (linear) pass, so ``eval`` and the Python API printed different numbers."""
    with registry_default("nDCG", "gain", "exp"):
        wanted = parse_many(["nDCG@10"])
        assert measures_declined(wanted) == "nDCG@10: gain=exp; the compiled pass implements gain=linear"
        (res,) = evaluate_files(QRELS, [BM25], ["nDCG@10"]).results
        api = ranklens.evaluate(QRELS, BM25, ["nDCG@10"])
        assert res.per_query("nDCG@10") == api.per_query("nDCG@10")
        assert res.aggregates == api.aggregates


@needs_compiled
def test_a_changed_registry_default_changes_evals_number_as_the_apis() -> None:
    """The same on the command line (the express form included): the value follows the registry."""
    with registry_default("nDCG", "gain", "exp"):
        exp = ranklens.evaluate(QRELS, BM25, ["nDCG@10"]).aggregates[0]
        out = CliRunner().invoke(cli, ["eval", QRELS, BM25, "-m", "nDCG@10", "-f", "tsv"]).stdout
    linear = ranklens.evaluate(QRELS, BM25, ["nDCG@10"]).aggregates[0]
    assert exp != linear
    assert out == f"nDCG@10\tall\t{exp!r}\n"


def test_forcing_an_unknown_backend_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKLENS_BACKEND", "numba")
    result = CliRunner().invoke(cli, ["eval", QRELS, BM25, "-m", "nDCG@10"])
    assert result.exit_code == 2
    assert result.stderr == "ranklens: error: RANKLENS_BACKEND must be one of compiled, reference; got 'numba'\n"


@needs_compiled
@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["eval", QRELS, BM25, "-m", "nDCG(gain=exp)@10"], "nDCG(gain=exp)@10: gain=exp; the compiled pass implements gain=linear"),
        (["eval", QRELS, BM25, "--missing", "error"], "policy missing='error': the compiled pass implements missing='skip'"),
        (["gate", QRELS, BM25, "--min", "nDCG@10=0.1", "-J"],
         "policy judged_only=True: the compiled pass implements judged_only=False"),
        (["compare", QRELS, BM25, DENSE, "-m", "ERR@10"], "ERR@10: the compiled pass does not implement ERR (ranklens.express.SUPPORTED_MEASURES lists what it does)"),
        (["explain", QRELS, BM25, "--query", "q3", "-m", "nDCG@5"],
         "it returns values, not the kernel's per-rank intermediates (explain prints those)"),
    ],
)
def test_forcing_a_backend_that_declines_is_one_line(args: list[str], reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKLENS_BACKEND", "compiled")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr == f"ranklens: error: RANKLENS_BACKEND=compiled: the compiled backend declines: {reason}\n"


@needs_compiled
def test_a_late_decline_of_a_forced_backend_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the compiled pass finds while reading (here a negative label) is a decline too."""
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b -1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 2.0 s\nq1 Q0 b 2 1.0 s\n")
    monkeypatch.setenv("RANKLENS_BACKEND", "compiled")
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "P@1"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"ranklens: error: RANKLENS_BACKEND=compiled: the compiled backend declines: {tmp_path / 'q.txt'}: "
        "a line or column it does not read beyond doubt\n"
    )


@needs_compiled
@pytest.mark.parametrize(
    ("args", "env", "note"),
    [
        (["eval", QRELS, BM25], {}, "backend compiled: it declares these measures, policy and inputs"),
        (["eval", QRELS, BM25], {"RANKLENS_BACKEND": "reference"}, "backend reference: forced by RANKLENS_BACKEND=reference"),
        (["eval", QRELS, BM25], {"RANKLENS_EXPRESS": "0"},
         "backend reference: it takes everything (compiled declined: switched off (RANKLENS_EXPRESS=0))"),
        (["gate", QRELS, BM25, "--min", "nDCG@10=0.1"], {}, "backend compiled: it declares these measures, policy and inputs"),
        (["gate", QRELS, BM25, "--min", "nDCG@10=0.1", "--missing", "error"], {},
         "backend reference: it takes everything (compiled declined: policy missing='error': the compiled pass "
         "implements missing='skip')"),
        (["gate", QRELS, BM25, "--min", "nDCG@10=0.1", "--missing", "skip"], {},
         "backend compiled: it declares these measures, policy and inputs"),
        (["compare", QRELS, BM25, DENSE], {}, "backend compiled: it declares these measures, policy and inputs"),
        (["explain", QRELS, BM25, "--query", "q3", "-m", "nDCG@5"], {},
         "backend reference: it takes everything (compiled declined: it returns values, not the kernel's per-rank "
         "intermediates (explain prints those))"),
        (["trec-eval", "-m", "ndcg_cut.10", "-m", "map", QRELS, BM25], {},
         "backend compiled: it declares these measures, policy and inputs"),
    ],
)
def test_the_debug_note_says_which_backend_ran_and_why(args: list[str], env: dict[str, str], note: str) -> None:
    result = CliRunner().invoke(cli, args, env={"RANKLENS_DEBUG": "1", **env})
    assert result.exit_code in (0, 1), result.stderr
    assert f"ranklens: debug: {note}\n" in result.stderr
    assert result.stderr.count("ranklens: debug:") == 1


@needs_compiled
@pytest.mark.parametrize(
    "args",
    [
        ["gate", QRELS, DENSE, "--min", "nDCG@10=0.3", "--missing", "skip"],
        ["gate", QRELS, DENSE, "--baseline", BM25, "--max-drop", "nDCG@10=0.01", "--missing", "skip", "-f", "json"],
    ],
)
def test_gate_takes_the_compiled_backend_and_prints_the_references_bytes(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``gate`` used to choose its engine itself and never ran the compiled pass; now the dispatcher does."""
    taken: list[bool] = []
    real = evaluation.compiled_results

    def spy(*a: object) -> object:
        got = real(*a)  # type: ignore[arg-type]
        taken.append(got is not None)
        return got

    monkeypatch.setattr(evaluation, "compiled_results", spy)
    fast = CliRunner().invoke(cli, args)
    assert taken == [True] * (2 if "--baseline" in args else 1)
    ref = CliRunner().invoke(cli, args, env={"RANKLENS_BACKEND": "reference"})
    assert (fast.exit_code, fast.stdout, fast.stderr) == (ref.exit_code, ref.stdout, ref.stderr)


@pytest.mark.parametrize("command", [["eval", QRELS, BM25], ["compare", QRELS, BM25, DENSE], ["gate", QRELS, BM25, "--min", "P@5=0"]])
def test_a_forced_backend_and_engine_spark_are_one_line(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused by the dispatcher before Spark starts, by every command that has --engine."""
    monkeypatch.setenv("RANKLENS_BACKEND", "reference")
    result = CliRunner().invoke(cli, [*command, "--engine", "spark"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "ranklens: error: RANKLENS_BACKEND=reference and --engine spark ask for two backends; choose one\n"


def test_spark_is_chosen_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose_backend(parse_many(["P@5"]), None, QRELS, [BM25], engine="spark").name == "spark"
    monkeypatch.setenv("RANKLENS_BACKEND", "reference")
    with pytest.raises(InputError, match="ask for two backends"):
        choose_backend(parse_many(["P@5"]), None, QRELS, [BM25], engine="spark")


@pytest.mark.parametrize(
    ("qrels", "runs", "stream", "reason"),
    [
        ({"q1": {"a": 1}}, [BM25], None, "qrels given as dict, not a file path"),
        (QRELS, ["-"], None, "a run read from standard input"),
        (QRELS, [BM25], True, "stream=True asked for"),
        (QRELS, [], None, "no run file"),
    ],
)
def test_inputs_it_does_not_take_are_declined(qrels: object, runs: list[str], stream: bool | None, reason: str) -> None:
    if not available():
        pytest.skip("ranklens._cexpress is not built")
    choice = choose_backend(parse_many(["P@5"]), None, qrels, runs, stream=stream)
    assert choice.name == "reference"
    assert reason in choice.declined[0][1]


def test_columns_are_an_input_kind_of_the_compiled_provider(monkeypatch):
    """The Spark engine's buckets (Arrow columns, issue 30) are asked of the one dispatcher: taken as files
    are, the measures and the policy declined the same way."""
    from ranklens.backends import choose_backend, compiled_declines
    from ranklens.engine.policy import EvalPolicy
    from ranklens.express import available
    from ranklens.measures import parse_many

    monkeypatch.delenv("RANKLENS_BACKEND", raising=False)
    if not available():
        pytest.skip("the compiled pass is not built here")
    assert compiled_declines(parse_many(["nDCG@10", "AP"]), EvalPolicy(), None, [], inputs="columns") is None
    assert compiled_declines(parse_many(["nDCG@10"]), EvalPolicy(), None, []) == "qrels given as NoneType, not a file path"
    assert choose_backend(parse_many(["nDCG@10"]), None, None, [], inputs="columns", note=False).name == "compiled"
    said = compiled_declines(parse_many(["nDCG(gain=exp)@10"]), None, None, [], inputs="columns")
    assert said == "nDCG(gain=exp)@10: gain=exp; the compiled pass implements gain=linear"
    said = compiled_declines(parse_many(["AP"]), EvalPolicy(missing="zero"), None, [], inputs="columns")
    assert said is not None and said.startswith("policy missing='zero'")
