"""compare says when mean nDCG and mean DCG order the systems differently (spec §5 inversion example)."""

from __future__ import annotations

import pytest

import ranklens

# spec §5: x1 has one relevant item, x2 three; A finds x1's at rank 1 and one of x2's at rank 3,
# B finds nothing for x1 and all three of x2's at ranks 1-3. DCG prefers B (1.065 vs 0.750), nDCG A.
QRELS = {"x1": {"r": 1, "n1": 0, "n2": 0}, "x2": {"a": 1, "b": 1, "c": 1, "m1": 0, "m2": 0}}
RUNS = {
    "A": {"x1": {"r": 3, "n1": 2, "n2": 1}, "x2": {"m1": 3, "m2": 2, "a": 1}},
    "B": {"x1": {"n1": 3, "n2": 2}, "x2": {"a": 3, "b": 2, "c": 1}},
}


def test_inversion_is_reported() -> None:
    with pytest.warns(ranklens.RanklensWarning) as record:  # also warnings, for a notebook
        comp = ranklens.compare(QRELS, RUNS, ["nDCG@3"])
    assert [str(w.message) for w in record] == list(comp.notes)
    assert comp.measures == ("nDCG@3",)  # the DCG used for the check is not a compared measure
    joined = "\n".join(comp.notes)
    assert "nDCG@3 ranks A above B" in joined and "DCG@3 ranks B above A" in joined
    assert "consider DCG@3 as the primary measure" in joined


def test_no_note_when_orderings_agree() -> None:
    runs = {"A": RUNS["A"], "C": {"x1": {"r": 3}, "x2": {"a": 3, "b": 2, "c": 1}}}
    comp = ranklens.compare(QRELS, runs, ["nDCG@3"])
    assert not any("order the systems differently" in n for n in comp.notes)


def test_dcg_as_primary_measure() -> None:
    comp = ranklens.compare(QRELS, RUNS, ["DCG@3"])
    row = comp.rows[0]
    assert row.measure == "DCG@3" and row.diff > 0  # B − A on DCG: B better
