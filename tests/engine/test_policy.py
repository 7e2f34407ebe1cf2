"""EvalPolicy: one value for the evaluation policy, shared by Evaluator, streaming and the CLI (issue 11)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.engine import EvalPolicy, Evaluator
from ranklens.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
RUN = str(EXAMPLES / "toy_bm25.run")
MEASURES = ["nDCG@10", "AP", "P@5", "RR", "Bpref"]


def test_defaults_equal_the_evaluator_defaults() -> None:
    params = inspect.signature(Evaluator.__init__).parameters
    for field in dataclasses.fields(EvalPolicy):
        if field.name in params:
            assert params[field.name].default == field.default, field.name
    assert {f.name for f in dataclasses.fields(EvalPolicy)} >= {
        name for name, p in params.items() if p.kind is p.KEYWORD_ONLY and name != "policy"
    }
    assert Evaluator(MEASURES, QRELS).policy == EvalPolicy()


def test_public_names() -> None:
    assert ranklens.EvalPolicy is EvalPolicy and "EvalPolicy" in ranklens.__all__


@pytest.mark.parametrize(
    "policy",
    [EvalPolicy(), EvalPolicy(missing="zero", negative="zero"), EvalPolicy(missing="error", judged_only=True, max_docs=7),
     EvalPolicy(labels="float")],
)
def test_options_round_trip(policy: EvalPolicy) -> None:
    assert EvalPolicy.from_options(policy.options()) == policy
    assert EvalPolicy.from_options({**policy.options(), "streamed": True}) == policy


def test_recorded_options_are_the_evaluators() -> None:
    ev = Evaluator(MEASURES, QRELS, missing="zero", max_docs=20)
    res = ev(RUN, warn=False)
    assert res.options == ev.options() == ev.policy.options()
    assert EvalPolicy.from_options(res.options) == ev.policy


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@pytest.mark.parametrize(
    "keywords",
    [{}, {"missing": "zero"}, {"missing": "qrels"}, {"negative": "zero", "judged_only": True},
     {"max_docs": 5, "rel_level": 2}, {"missing": "error"}],
)
def test_policy_equals_keywords(keywords: dict[str, object]) -> None:
    a = Evaluator(MEASURES, QRELS, **keywords)(RUN, warn=False)  # type: ignore[arg-type]
    b = Evaluator(MEASURES, QRELS, policy=EvalPolicy(**keywords))(RUN, warn=False)  # type: ignore[arg-type]
    assert a.measures == b.measures and a.query_ids == b.query_ids and a.notes == b.notes
    assert a.options == b.options
    np.testing.assert_array_equal(a.values, b.values)
    c = ranklens.evaluate(QRELS, RUN, MEASURES, policy=EvalPolicy(**keywords))  # type: ignore[arg-type]
    np.testing.assert_array_equal(a.values, c.values)


def test_missing_aliases_are_normalised() -> None:
    assert EvalPolicy(missing="intersect") == EvalPolicy()
    assert EvalPolicy(missing="qrels").missing == "zero" and EvalPolicy(missing="qrels").query_set == "qrels"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"missing": "drop"}, "missing-query policy must be skip, zero or error; got 'drop'"),
        ({"negative": "minmax"}, "negative-label policy must be trec, zero or error; got 'minmax'"),
        ({"max_docs": 0}, "max_docs must be a positive integer, got 0"),
        ({"labels": "real"}, "labels must be 'int' or 'float'; got 'real'"),
    ],
)
def test_bad_values_say_what_is_expected(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message) as direct:
        EvalPolicy(**fields)  # type: ignore[arg-type]
    with pytest.raises(InputError) as via:
        Evaluator(MEASURES, QRELS, **fields)  # type: ignore[arg-type]
    assert str(via.value) == str(direct.value)


def test_policy_and_other_keywords_are_not_mixed() -> None:
    with pytest.raises(InputError, match=r"give the policy once: .*also given: max_docs"):
        Evaluator(MEASURES, QRELS, policy=EvalPolicy(missing="zero"), max_docs=3)


def test_frozen_hashable_and_copies_column_maps() -> None:
    columns = {"user": "query_id"}
    p = EvalPolicy(qrels_columns=columns)
    columns["item"] = "doc_id"
    assert p.qrels_columns == {"user": "query_id"}
    assert hash(p) == hash(EvalPolicy(qrels_columns={"user": "query_id"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.missing = "zero"  # type: ignore[misc]
    assert p.replace(max_docs=3).max_docs == 3 and p.max_docs is None


def test_formats_of_the_policy_read_paths(tmp_path: Path) -> None:
    qrels = tmp_path / "judgements.dat"
    qrels.write_text("q1 0 a 1\n")
    run = tmp_path / "ranking.dat"
    run.write_text("q1 Q0 a 1 1.0 t\n")
    ev = Evaluator(["P@1"], str(qrels), policy=EvalPolicy(qrels_format="trec", run_format="trec"))
    assert ev(str(run), warn=False).per_query("P@1") == {"q1": 1.0}
