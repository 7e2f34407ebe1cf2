"""`ranklens trec-eval` against the real trec_eval 10.0: byte-identical stdout for every golden case.

``tests/data/trec_eval/NAME.cmd`` is a trec_eval command line run in that folder and ``NAME.out`` what the
real binary printed (see the README there). Every line is compared, ``rbp`` and ``rbp_resid`` included:
trec_eval 10.0 reads two uninitialised variables (min, max) in ``te_calc_rbp``, but on these inputs the
values it printed are the ones its formula gives with min/max taken over the gain table, which is what
ranklens computes, so no line needs an exception. A measure ranklens does not support fails the test.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
CASES = sorted(p.stem for p in DATA.glob("*.cmd"))


def trec_eval(*args: str) -> tuple[int, str, str]:
    """Run ``ranklens trec-eval ARGS`` in the golden folder; (exit status, stdout, stderr)."""
    result = CliRunner().invoke(cli, ["trec-eval", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _in_golden_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)


def test_every_golden_case_is_collected() -> None:
    assert len(CASES) == 20  # case1-3, specA, and case4-8 (other -R formats, -Z, extra words, atol cutoffs, -M0)


#: the golden cases whose measures the compiled backend computes in part (the rest on the reference): every
#: -R qrels case but those it declines to read (case2's negative labels, case8's words after the tag, specA's
#: labels) and those with -J or -M; under -l2 it takes ndcg (whose gains -l does not change), not P or map
COMPILED = {"case1.all_q", "case1.default", "case1.level2", "case1.params", "case3.all_qc", "case3.default_c",
            "case7.zscores_q", "case8.float_cutoffs"}


@pytest.mark.parametrize("backend", ["reference", "compiled"])
@pytest.mark.parametrize("case", CASES)
def test_golden_stdout_is_byte_identical(case: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case on the reference alone (forced) and with the compiled backend taking the measures it
    declares: the same bytes, trec_eval's."""
    import ranklens.express as express

    taken: list[bool] = []
    real = express.evaluate_express

    def spy(*args: object, **kwargs: object) -> object:
        got = real(*args, **kwargs)  # type: ignore[arg-type]
        taken.append(got is not None)
        return got

    monkeypatch.setattr(express, "evaluate_express", spy)
    for name in ("RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    if backend == "reference":
        monkeypatch.setenv("RANKLENS_BACKEND", "reference")
    else:
        monkeypatch.delenv("RANKLENS_BACKEND", raising=False)
    argv = shlex.split((DATA / f"{case}.cmd").read_text())
    assert argv[0] == "trec_eval"
    code, out, err = trec_eval(*argv[1:])
    assert any(taken) == (backend == "compiled" and case in COMPILED), taken
    expected = (DATA / f"{case}.out").read_text()
    assert (code, err) == (0, "")
    if out != expected:  # name the first differing line, then compare everything
        for got_line, exp_line in zip(out.splitlines(), expected.splitlines()):
            assert got_line == exp_line
    assert out == expected


def test_missing_query_without_c_aborts_like_trec_eval_10() -> None:
    """case2's qrels have q034 and q039, which the run lacks: trec_eval 10.0 prints the queries before
    the first of them, then stops with status 4 (version 9 skipped such queries)."""
    code, out, err = trec_eval("-q", "-m", "all_trec", "case2.qrels", "case2.run")
    assert code == 4
    assert err == "trec_eval: result qid 'q034' not found in qrels\n"
    # the per-query lines before q034 do not depend on -c
    complete = (DATA / "case2.all_qc.out").read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(complete) if line.split("\t")[1] == "q034")
    assert out == "".join(complete[:first])


def test_missing_query_without_q_prints_nothing() -> None:
    code, out, err = trec_eval("case3.qrels", "case3.run")
    assert (code, out) == (4, "")
    assert err.startswith("trec_eval: result qid '")


def test_nosummary_keeps_only_per_query_lines() -> None:
    code, out, _ = trec_eval("-q", "-n", "-m", "all_trec", "specA.qrels", "specA.run")
    expected = [line for line in (DATA / "specA.all_q.out").read_text().splitlines(keepends=True) if "\tall\t" not in line]
    assert code == 0
    assert out == "".join(expected)


def test_nosummary_without_q_prints_nothing() -> None:
    assert trec_eval("-n", "specA.qrels", "specA.run") == (0, "", "")


def test_attached_and_long_option_spellings() -> None:
    short = trec_eval("-q", "-l2", "-M20", "-mP.1,5", "case1.qrels", "case1.run")
    spaced = trec_eval("-q", "-l", "2", "-M", "20", "-m", "P.1,5", "case1.qrels", "case1.run")
    long = trec_eval(
        "--query_eval_wanted", "--level_for_rel=2", "--Max_retrieved_per_topic=20", "--measure=P.1,5",
        "case1.qrels", "case1.run",
    )
    assert short == spaced == long
    assert short[0] == 0 and short[1].count("\n") == 2 * (21 + 1)


def test_measure_order_is_trec_evals_not_the_command_lines() -> None:
    _, out, _ = trec_eval("-m", "ndcg", "-m", "P.5", "-m", "map", "specA.qrels", "specA.run")
    assert [line.split()[0] for line in out.splitlines()] == ["map", "P_5", "ndcg"]


def test_first_parameters_given_for_a_measure_win() -> None:
    _, out, _ = trec_eval("-m", "P.3", "-m", "P.7", "-m", "P", "specA.qrels", "specA.run")
    assert [line.split()[0] for line in out.splitlines()] == ["P_3"]


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("-m", "nope"), 1, "trec_eval: illegal measure 'nope'\n"),
        (("-m", "P."), 1, "trec_eval: improper measure in parameter 'P'\ntrec_eval: illegal measure 'P'\n"),
        (("-m", "P.5,5"), 2, "Cannot initialize measure 'P'"),
        (("-m", "prefs_simp"), 4, "trec_eval: Can't calculate measure 'prefs_simp'\n"),
        (("-R", "prefs", "-m", "map"), 4, "trec_eval: Can't calculate measure 'map'\n"),
    ],
)
def test_bad_measures(args: tuple[str, ...], status: int, message: str) -> None:
    code, out, err = trec_eval(*args, "specA.qrels", "specA.run")
    assert (code, out) == (status, "")
    assert message in err


def test_unreadable_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1\n")
    code, out, err = trec_eval(str(bad), "specA.run")
    assert (code, out) == (2, "")
    assert err.startswith("trec_eval: ")


#: every measure of trec_eval 10.0's table (te_trec_measures[] in measures.c), in its order
TREC_EVAL_10_MEASURES = """
runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring recall
infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P
success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret prefs_num_prefs_poss
prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret
prefs_pair_ret prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp map_avgjg
P_avgjg Rprec_mult_avgjg yaap rbp rbp_resid unj
""".split()


def test_help_lists_every_format_and_every_measure_of_trec_eval_10() -> None:
    code, out, _ = trec_eval("-h")
    assert code == 0
    listed = set(out.replace(",", " ").replace(";", " ").split())
    missing = [m for m in TREC_EVAL_10_MEASURES if m not in listed]
    assert not missing
    for fmt in ("qrels", "qrels_jg", "prefs", "qrels_prefs", "trec_results"):
        assert fmt in listed
    for nickname in ("official:", "set:", "all_trec:", "all_prefs:", "prefs:", "qrels_jg:"):
        assert nickname in listed
    assert max(len(line) for line in out.splitlines()) <= 100


def test_every_measure_of_trec_eval_10_is_selectable() -> None:
    from ranklens.trec_eval.table import TABLE

    assert [m.name for m in TABLE] == TREC_EVAL_10_MEASURES
