"""One name, one measure: case-insensitivity without exceptions, the names other tools print or take
(trec_eval output names, ranx names), cutoff lists, suggestions that point at the measure meant, and one
language for ``parse``, ``parse_many`` and ``Results[...]`` (issue 10 §4, issue 11 V3/V4)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.errors import MeasureError
from ranklens.measures import parse, parse_many

# --- rbp / RBP ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["rbp", "RBP", "Rbp", "rBP"])
def test_rbp_is_one_measure_in_any_case(text: str) -> None:
    """rbp is trec_eval's name: in any case it is trec_eval's RBP (TrecRBP), as in `ranklens trec-eval`."""
    assert parse(text) == parse("TrecRBP")
    assert parse_many([text]) == [parse("TrecRBP")]
    assert str(parse(text)) == "TrecRBP"


def test_moffat_zobel_rbp_has_its_own_name() -> None:
    assert str(parse("MZRBP")) == "MZRBP"
    assert parse("mzrbp") == parse("MZRBP")
    assert parse("MZRBP") != parse("RBP")
    assert str(parse("RBPResidual")) == "TrecRBPResidual" and str(parse("MZRBPResidual")) == "MZRBPResidual"


def test_trec_eval_rbp_parameters_in_the_language() -> None:
    assert parse_many(["rbp.p=0.8"]) == [parse("TrecRBP(p=0.8)")] == [parse("RBP(p=0.8)")]


def test_trec_eval_command_keeps_rbp() -> None:
    from ranklens.trec_eval.select import select

    [sel] = select(["rbp"])
    assert [(printed, str(m)) for printed, m in sel.columns] == [("rbp", "TrecRBP")]


# --- names other tools use -----------------------------------------------------------------------------

OTHER_NAMES = [
    # trec_eval's printed (output) names
    ("P_5", ["P@5"]),
    ("p_5", ["P@5"]),
    ("ndcg_cut_10", ["nDCG@10"]),
    ("recall_100", ["R@100"]),
    ("map_cut_10", ["AP@10"]),
    ("success_1", ["Success@1"]),
    ("iprec_at_recall_0.10", ["IPrec(recall=0.1)"]),
    ("Rprec_mult_0.20", ["RprecMult(mult=0.2)"]),
    # ranx names
    ("hit_rate@10", ["Success@10"]),
    ("hits@10", ["Hits@10"]),
    ("hits", ["Hits"]),
    ("ndcg_burges@10", ["nDCG(gain=exp)@10"]),
    ("ndcg_burges", ["nDCG(gain=exp)"]),
    ("dcg_burges@5", ["DCG(gain=exp)@5"]),
    ("f1", ["SetF"]),
    ("mrr", ["RR"]),
    ("mrr@10", ["RR@10"]),
    ("precision@5", ["P@5"]),
    ("recall@100", ["R@100"]),
    ("recall", [f"R@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),  # trec_eval's recall
    ("r-precision", ["Rprec"]),
    ("r_precision", ["Rprec"]),
    ("map@100", ["AP@100"]),
    ("ndcg@10", ["nDCG@10"]),
    # cutoff lists
    ("nDCG@5,10", ["nDCG@5", "nDCG@10"]),
    ("P@[5,10]", ["P@5", "P@10"]),
    ("nDCG(gain=exp)@[3, 5]", ["nDCG(gain=exp)@3", "nDCG(gain=exp)@5"]),
    ("hit_rate@1,5", ["Success@1", "Success@5"]),
]


@pytest.mark.parametrize(("text", "expected"), OTHER_NAMES)
def test_names_of_other_tools(text: str, expected: list[str]) -> None:
    assert [str(m) for m in parse_many([text])] == expected


def test_hits_is_the_mean_number_of_relevant_in_the_top_k() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"x": 2.0, "c": 1.0}}
    res = ranklens.evaluate(qrels, run, ["hits@2", "NumRelRet@2", "hits@1"])
    assert res.per_query("Hits@2") == {"q1": 2.0, "q2": 1.0}
    assert res["Hits@2"] == 1.5  # ranx averages
    assert res["NumRelRet@2"] == 3.0  # trec_eval sums
    assert res["Hits@1"] == 0.5


def test_ndcg_burges_is_exp_gain() -> None:
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    res = ranklens.evaluate(qrels, run, ["ndcg_burges@2", "nDCG(gain=exp)@2"])
    assert res["ndcg_burges@2"] == res["nDCG(gain=exp)@2"]


def test_one_measure_where_one_is_asked_for() -> None:
    assert parse("ndcg_cut.10") == parse("nDCG@10")
    assert parse("P_5") == parse("P@5")
    assert parse("map") == parse("AP")
    with pytest.raises(MeasureError, match=r"'nDCG@5,10' names 2 measures \(nDCG@5, nDCG@10\)"):
        parse("nDCG@5,10")
    with pytest.raises(MeasureError, match=r"'ndcg_cut\.5,10' names 2 measures"):
        parse("ndcg_cut.5,10")
    with pytest.raises(MeasureError, match=r"P needs a cutoff"):
        parse("P")


def test_results_by_any_name_the_evaluation_accepted() -> None:
    """V4: evaluate(q, r, "ndcg_cut.10")["ndcg_cut.10"] works."""
    res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "ndcg_cut.10")
    assert res["ndcg_cut.10"] == 1.0
    assert res["ndcg_cut_10"] == res["nDCG@10"] == 1.0
    assert res.per_query("ndcg_cut.10") == {"q": 1.0}
    with pytest.raises(MeasureError, match="names 2 measures"):
        res["ndcg_cut.5,10"]


# --- cutoffs: ASCII digits only (V3) ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ["nDCG@²", "nDCG@١٠", "P@５", "nDCG@1²"])
def test_non_ascii_digits_are_not_cutoffs(text: str) -> None:
    with pytest.raises(MeasureError, match=r"a cutoff looks like '@10'"):
        parse(text)
    with pytest.raises(MeasureError):
        parse_many([text])


def test_non_ascii_cutoff_on_the_command_line_is_a_one_line_error(tmp_path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "-m", "nDCG@²"])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert "a cutoff looks like '@10'" in out.output


# --- suggestions ---------------------------------------------------------------------------------------

SUGGESTIONS = [
    ("recal@100", "recall@100"),
    ("ncdg", "nDCG"),
    ("ndgc@10", "nDCG@10"),
    ("NDGC@10", "nDCG@10"),
    ("sucess@5", "Success@5"),
    ("mapp", "map"),
    ("recip_rnk", "recip_rank"),
    ("ndcg_ct.10", "ndcg_cut.10"),
    ("ncdg_cut.10", "ndcg_cut.10"),
    ("hit_rat@10", "hit_rate@10"),
    ("ndcg_burgs@10", "ndcg_burges@10"),
    ("r-precison", "r-precision"),
    ("precison@5", "precision@5"),
    ("nDCG(gian=exp)@10", None),  # a parameter typo: the parameter is suggested, not a measure
]


@pytest.mark.parametrize(("text", "suggestion"), SUGGESTIONS)
def test_suggestions_are_plausible(text: str, suggestion: str | None) -> None:
    with pytest.raises(MeasureError) as info:
        parse_many([text])
    message = str(info.value)
    if suggestion is None:
        assert "did you mean 'gain'?" in message
    else:
        assert message.endswith(f"did you mean '{suggestion}'?"), message


def test_no_suggestion_for_nonsense() -> None:
    with pytest.raises(MeasureError) as info:
        parse("xyzzy@10")
    assert "did you mean" not in str(info.value)


# --- a typo after -m is a measure typo, not a file name ----------------------------------------------------


def _files(tmp_path) -> tuple[str, str]:
    q = tmp_path / "q.qrels"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r = tmp_path / "r.run"
    r.write_text("q1 Q0 a 1 2.0 sys\nq1 Q0 b 2 1.0 sys\n")
    return str(q), str(r)


@pytest.mark.parametrize(
    ("typo", "message"),
    [
        ("ncdg", "'ncdg' is neither a measure nor a file; did you mean 'nDCG'?"),
        ("ncdg_cut.10", "'ncdg_cut.10' is neither a measure nor a file; did you mean 'ndcg_cut.10'?"),
        ("recal@100", "'recal@100' is neither a measure nor a file; did you mean 'recall@100'?"),
    ],
)
def test_typo_after_m_is_reported_as_a_measure(tmp_path, typo: str, message: str) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "-m", "nDCG@10", typo])
    assert out.exit_code == 2, out.output
    assert message in out.output


def test_files_after_m_still_work(tmp_path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", "-m", "nDCG@10", "P_1", q, r])
    assert out.exit_code == 0, out.output
    assert "P@1" in out.output


def test_a_missing_run_file_after_m_is_still_a_missing_file(tmp_path) -> None:
    q, _ = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", "-m", "nDCG@10", q, str(tmp_path / "nope.run")])
    assert out.exit_code == 2, out.output
    assert "nope.run: no such file" in out.output


def test_cutoff_list_on_the_command_line(tmp_path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "-m", "nDCG@1,2", "P@[1,2]", "-f", "tsv"])
    assert out.exit_code == 0, out.output
    assert [line.split("\t")[0] for line in out.output.splitlines()] == ["nDCG@1", "nDCG@2", "P@1", "P@2"]


def test_a_parameter_typo_after_m_names_the_parameter(tmp_path) -> None:
    q, r = _files(tmp_path)
    out = CliRunner().invoke(cli, ["eval", q, r, "-m", "nDCG@10", "nDCG(gian=exp)@10"])
    assert out.exit_code == 2, out.output
    assert "is neither a measure nor a file: nDCG has no parameter 'gian'; did you mean 'gain'?" in out.output


def test_non_ascii_digits_in_parameters_are_refused() -> None:
    with pytest.raises(MeasureError, match="must be an integer"):
        parse("P(rel=١)@5")
    with pytest.raises(MeasureError, match="must be a number"):
        parse("RBP(p=٠.٥)")
