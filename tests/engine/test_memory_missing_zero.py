"""``ranklens.evaluate(..., missing="zero")`` on data in memory counts the qrels queries the run lacks as 0
(trec_eval ``-c``) on every kind of input (issue 26).

The defect this holds: once the file pass declared ``missing="zero"`` (it adds the absent queries itself), the
in-memory pass, which does not add them, was chosen for it too and printed the mean over the run's queries
(AP 1 instead of 1/3 below). The in-memory pass declines ``missing="zero"`` whatever the file pass declares.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

import ranklens
from ranklens import express
from ranklens.errors import InputError, RanklensWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from backends_under_test import MEMORY_KINDS, as_kind, forced  # noqa: E402

#: three queries, one relevant document each; the run retrieves q1 only, its relevant document first
QRELS = {"q1": {"a": 1, "x": 0}, "q2": {"b": 1}, "q3": {"c": 1}}
RUN = {"q1": {"a": 2.0, "x": 1.0}}
#: by hand: AP(q1) = 1/1 = 1; q2 and q3 are absent: 0 under missing="zero", left out under "skip"
ZERO = {"q1": 1.0, "q2": 0.0, "q3": 0.0}


def _evaluate(kind: str, **options: object) -> ranklens.Results:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        return ranklens.evaluate(as_kind(kind, QRELS, "relevance"), as_kind(kind, RUN, "score"), ["AP", "P@1"], **options)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANKLENS_BACKEND", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_DEBUG"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("kind", MEMORY_KINDS)
def test_missing_zero_counts_the_absent_queries(kind: str) -> None:
    res = _evaluate(kind, missing="zero")
    assert res["AP"] == pytest.approx(1 / 3, abs=1e-15)
    assert res.per_query("AP") == ZERO and res.per_query("P@1") == ZERO
    skip = _evaluate(kind)
    assert skip["AP"] == 1.0 and skip.per_query("AP") == {"q1": 1.0}


@pytest.mark.parametrize("kind", MEMORY_KINDS)
def test_missing_zero_is_declined_with_its_reason(kind: str) -> None:
    with forced("compiled"), pytest.raises(InputError, match=r"declines: policy missing='zero'"):
        _evaluate(kind, missing="zero")


@pytest.mark.parametrize("kind", MEMORY_KINDS)
def test_declined_even_when_the_file_pass_declares_missing_zero(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge defect, seeded: the compiled provider declares ``missing="zero"`` for files."""
    monkeypatch.setitem(express.SUPPORTED_POLICY, "missing", ("skip", "zero"))
    assert express.policy_declined(ranklens.EvalPolicy(missing="zero")) is None  # (the seed took)
    res = _evaluate(kind, missing="zero")
    assert res["AP"] == pytest.approx(1 / 3, abs=1e-15) and res.per_query("AP") == ZERO
