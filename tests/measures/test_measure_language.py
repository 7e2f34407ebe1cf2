"""The measure language: round trips, case-insensitivity, trec_eval names and error messages.

Expected error messages are test data (STYLE.md, Tests): each case names the text and a pattern its
message must match.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

import ranklens
from ranklens.errors import InputError, MeasureError
from ranklens.measures import AP, Family, Measure, P, Param, Success, families, nDCG, parse, parse_many

# sample values per parameter kind (beyond the default), with overrides for some parameter names
SAMPLES_BY_KIND: dict[str, list[Any]] = {
    "int": [2, 3, 10],
    "float": [0.5, 0.95, 1 / 3, 0.123],
    "bool": [True, False],
    "gain": ["exp", "linear", {1: 1, 2: 3, 3: 7}, {0: 0.5, 1: 2.25, 4: 10}, {2: -1}],
}
SAMPLES_BY_NAME: dict[str, list[Any]] = {
    "depth": [],  # only together with ideal=recall (see COMBINATIONS)
    "rel": [0, 2, 3],
    "max_rel": [1, 3, 5],
}


def samples(param: Param) -> list[Any]:
    if param.name in SAMPLES_BY_NAME:
        return SAMPLES_BY_NAME[param.name]
    if param.kind == "choice":
        return list(param.choices)
    return SAMPLES_BY_KIND.get(param.kind, [])  # other kinds: covered by the family's examples


COMBINATIONS = [
    "nDCG(ideal=recall,depth=100)@10",
    "nDCG(gain=exp,discount=jk,base=3,ties=average,ideal=recall,depth=20,max_rel=3)@10",
    "nDCG(gain={0:0,1:1,2:3},ideal=max,max_rel=2)@5",
    "IDCG(ideal=recall,depth=50)@10",
    "IDCG(gain=exp,ideal=local)",
    "DCG(gain=exp,discount=jk,base=2,ties=average)@3",
    "P(rel=2,ties=average)@5",
    "MZRBP(p=0.8,rel=2,max_rel=3)@20",
    "AP(rel=2,ties=input)@100",
]


def sample_measures(family: Family) -> list[Measure]:
    """The family at its defaults and with each parameter set to each sample value, with and without a
    cutoff where the family allows it; combinations its own check rejects are skipped."""
    cutoffs = {"none": [None], "optional": [None, 10], "required": [1, 10]}[family.cutoff]
    out = []
    choices = [{}] + [{p.name: v} for p in family.params for v in samples(p)]
    for params, cutoff in itertools.product(choices, cutoffs):
        try:
            out.append(Measure.build(family, params, cutoff))
        except MeasureError:
            continue
    # the documented examples ("nDCG@10, nDCG(gain=exp,ideal=local)@10") must parse too
    out += [parse(text) for text in re.split(r",\s+", family.example) if text.strip()]
    return out


@pytest.mark.parametrize("family", families(), ids=str)
def test_every_family_is_sampled(family: Family) -> None:
    """Each family parses at its defaults and with each parameter set to a non-default value."""
    built = sample_measures(family)
    assert built, family.name
    for p in family.params:
        if p.name != "depth":
            assert any(dict(m.params).get(p.name, p.default) != p.default for m in built), (family.name, p.name)


def _check_round_trip(m: Measure) -> None:
    back = parse(str(m))
    assert back == m, str(m)
    assert hash(back) == hash(m)
    assert str(back) == str(m)
    assert repr(m) == str(m)
    assert {m: 1}[back] == 1
    # case-insensitive: names, parameter names and choice values
    assert parse(str(m).upper()) == m, str(m)
    assert parse(str(m).lower()) == m, str(m)


@pytest.mark.parametrize("family", families(), ids=str)
def test_round_trip(family: Family) -> None:
    """parse(str(m)) == m, with the same hash and text, in any letter case, for every registered family
    with sample parameters."""
    for m in sample_measures(family):
        _check_round_trip(m)


@pytest.mark.parametrize("text", COMBINATIONS)
def test_round_trip_combinations(text: str) -> None:
    _check_round_trip(parse(text))


@pytest.mark.parametrize("text", ["NDCG@10", "ndcg@10", "nDcG@10", " nDCG@10 ", "NDCG(GAIN=LINEAR)@10"])
def test_case_variants_of_ndcg(text: str) -> None:
    assert parse(text) == nDCG @ 10
    assert str(parse(text)) == "nDCG@10"


def test_python_api_equals_language() -> None:
    assert nDCG(gain="exp", ideal="local") @ 10 == parse("nDCG(gain=exp,ideal=local)@10")
    assert AP(rel=2) @ 100 == parse("AP(rel=2)@100")
    assert str(nDCG(gain="linear", ties="trec") @ 10) == "nDCG@10"  # defaults are not written
    assert nDCG(gain={3: 7, 1: 1}) == parse("nDCG(gain={1:1,3:7})")  # the map is sorted
    assert str(nDCG(gain={3: 7, 1: 1.5})) == "nDCG(gain={1:1.5,3:7})"
    assert (nDCG @ 10)(gain="exp") == parse("nDCG(gain=exp)@10")
    assert parse(nDCG @ 10) == nDCG @ 10


def test_python_api_parameters_then_required_cutoff() -> None:
    """measures/__init__.py: "measures can be written in Python the way they are written in the measure
    language: … P(rel=2)@5"."""
    assert P(rel=2) @ 5 == parse("P(rel=2)@5")
    assert Success(ties="average") @ 3 == parse("Success(ties=average)@3")


def test_aliases() -> None:
    assert parse("map") == AP(ties="trec") == parse("AP")
    assert parse("mrr") == parse("reciprocal_rank") == parse("RR")
    assert parse("precision@5") == P @ 5
    assert parse("hitrate@3") == Success @ 3 == parse("hit@3")
    assert parse("recall@100") == parse("R@100")


def test_measures_in_results_by_any_spelling() -> None:
    res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["ndcg_cut.10", "P.1"])
    assert res["nDCG@10"] == res["NDCG@10"] == res[nDCG @ 10] == 1.0
    assert res["P@1"] == res[P @ 1] == 1.0


# --- trec_eval names ---------------------------------------------------------------------------------

TREC_NAMES = [
    ("ndcg_cut.5,10", ["nDCG@5", "nDCG@10"]),
    ("NDCG_CUT.5", ["nDCG@5"]),
    ("ndcg_cut", ["nDCG@5", "nDCG@10", "nDCG@15", "nDCG@20", "nDCG@30", "nDCG@100", "nDCG@200", "nDCG@500", "nDCG@1000"]),
    ("P", ["P@5", "P@10", "P@15", "P@20", "P@30", "P@100", "P@200", "P@500", "P@1000"]),
    ("P.5", ["P@5"]),
    ("P.1,3", ["P@1", "P@3"]),
    ("recall.5,100", ["R@5", "R@100"]),
    ("map", ["AP"]),
    ("map_cut.10,100", ["AP@10", "AP@100"]),
    ("recip_rank", ["RR"]),
    ("Rprec", ["Rprec"]),
    ("bpref", ["Bpref"]),
    ("infAP", ["infAP"]),
    ("success", ["Success@1", "Success@5", "Success@10"]),
    ("success.3", ["Success@3"]),
    ("ndcg", ["nDCG"]),
    ("ndcg.1=1,2=3,3=7", ["nDCG(gain={1:1,2:3,3:7})"]),
    ("dcg", ["DCG"]),
    ("ideal_dcg", ["IDCG"]),
    ("num_q", ["NumQ"]),
    ("num_ret", ["NumRet"]),
    ("num_rel", ["NumRel"]),
    ("num_rel_ret", ["NumRelRet"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), TREC_NAMES)
def test_trec_names(text: str, expected: list[str]) -> None:
    assert parse_many(text) == [parse(e) for e in expected]
    assert [str(m) for m in parse_many(text)] == expected


def test_parse_many_mixes_languages_and_deduplicates() -> None:
    got = parse_many(["ndcg_cut.5,10", "nDCG@10", "map", "AP", "ap", "P.5", "P@5"])
    assert [str(m) for m in got] == ["nDCG@5", "nDCG@10", "AP", "P@5"]


def test_parse_many_rel_level() -> None:
    """trec_eval -l sets rel where a measure has it and does not set it already."""
    got = parse_many(["P@5", "nDCG@10", "AP(rel=3)", "map"], rel_level=2)
    assert [str(m) for m in got] == ["P(rel=2)@5", "nDCG@10", "AP(rel=3)", "AP(rel=2)"]


# --- errors --------------------------------------------------------------------------------------------

# (text, pattern of the message)
PARSE_ERRORS = [
    # misspelt measures and parameters suggest the nearest name
    ("ndgc@10", r"unknown measure 'ndgc@10'; did you mean 'nDCG@10'\?"),
    ("sucess@5", r"did you mean 'Success@5'\?"),
    ("mapp", r"did you mean 'map'\?"),
    ("recip_rnk", r"did you mean 'recip_rank'\?"),
    ("ndcg_ct.10", r"did you mean 'ndcg_cut.10'\?"),
    ("nDCG(gian=exp)@10", r"nDCG has no parameter 'gian'; did you mean 'gain'\?"),
    ("P(rell=2)@5", r"P has no parameter 'rell'; did you mean 'rel'\?"),
    ("xyzzy", r"unknown measure 'xyzzy'"),
    # cutoffs
    ("P@0", r"cutoff must be a positive integer; got 0"),
    ("P@x", r"cannot read '@x'.*a cutoff looks like '@10'"),
    ("P@-1", r"cannot read '@-1'"),
    ("P@1.5", r"cannot read '@1.5'"),
    ("P", r"P needs a cutoff, e\.g\. 'P@10'"),
    ("Success", r"Success needs a cutoff"),
    ("Judged", r"Judged needs a cutoff"),
    ("Rprec@5", r"Rprec takes no cutoff; drop '@5'"),
    ("NumQ@5", r"NumQ takes no cutoff"),
    ("@5", r"is not a measure name"),
    # parameter values
    ("nDCG(gain=cubic)", r"parameter 'gain' must be linear, exp or a map"),
    ("nDCG(gain={1:x})", r"a gain map looks like"),
    ("nDCG(ideal=best)", r"parameter 'ideal' must be one of global, local, recall, max; got 'best'"),
    ("nDCG(ties=avg)@5", r"parameter 'ties' must be one of trec, average, input"),
    ("nDCG(discount=ln)", r"parameter 'discount' must be one of log2, log, jk"),
    ("nDCG(base=10)@10", r"base applies to discount=log or discount=jk"),
    ("nDCG(base=1)", r"parameter 'base' must be ≥ 2"),
    ("MZRBP(p=1.5)", r"p must be in \(0, 1\); got 1.5"),
    ("MZRBP(p=0)", r"p must be in \(0, 1\)"),
    ("MZRBP(p=x)", r"parameter 'p' must be a number; got 'x'"),
    ("P(rel=x)@5", r"parameter 'rel' must be an integer; got 'x'"),
    ("AP(rel=inf)", r"parameter 'rel' must be an integer"),  # (rel=1.5 is a threshold for real-valued labels)
    ("ERR(max_rel=-1)", r"parameter 'max_rel' must be ≥ 0"),
    ("nDCG(ideal=recall)", r"ideal=recall needs depth=K"),
    ("nDCG(depth=5)", r"depth applies only with ideal=recall"),
    ("nDCG(ideal=recall,depth=5)@10", r"depth \(5\) must be ≥ the cutoff \(10\)"),
    # syntax
    ("nDCG(gain=exp,gain=linear)", r"parameter 'gain' given twice"),
    ("nDCG(gain)@10", r"parameter 'gain' in 'nDCG\(gain\)@10' needs a value: name=value"),
    ("nDCG(gain=exp@10", r"unbalanced parentheses"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "pattern"), PARSE_ERRORS)
def test_parse_errors(text: str, pattern: str) -> None:
    with pytest.raises(MeasureError, match=pattern) as info:
        parse(text)
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)


# (text, pattern): the message quotes the measure and says what is wrong
TREC_ERRORS = [
    ("ndcg_cut.0", r"'ndcg_cut\.0'.*positive"),
    ("ndcg_cut.5,5", r"'ndcg_cut\.5,5'.*duplicate"),
    ("P.x", r"'P\.x'.*positive integers"),
    ("map.5", r"'map'.*no parameters"),
    ("ndcg.1=x", r"'ndcg\.1=x'.*'1=x'"),
    ("ndcg.1", r"'ndcg\.1'.*pairs like 1=1,2=3"),
]


@pytest.mark.parametrize(("text", "pattern"), TREC_ERRORS)
def test_trec_name_errors(text: str, pattern: str) -> None:
    with pytest.raises(MeasureError, match=pattern):
        parse_many(text)


def test_python_api_errors() -> None:
    with pytest.raises(MeasureError, match=r"did you mean 'gain'\?"):
        nDCG(gian="exp")
    with pytest.raises(MeasureError, match="positive integer"):
        nDCG @ 0
    with pytest.raises(MeasureError, match="positive integer"):
        nDCG @ True  # type: ignore[operator]
    with pytest.raises(MeasureError, match="must be an integer"):
        P(rel="high") @ 5
    assert str(P(rel=1.5) @ 5) == "P(rel=1.5)@5"  # a real threshold, for real-valued labels


def test_evaluate_reports_unknown_measure() -> None:
    with pytest.raises(MeasureError, match=re.escape("did you mean 'nDCG@10'?")):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndgc@10"])
