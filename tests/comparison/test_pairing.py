"""The pairing core (``ranklens.comparison.pairing``): common queries, segments, ``None`` skipped, the dropped
note, wins/ties/losses and the paired summary, against hand-computed expectations; and the property that
pairing two Results and pairing their query → value mappings give the same pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import stats
from ranklens.comparison.pairing import (
    Pairing,
    common_queries,
    dropped_all_note,
    pair_results,
    pair_values,
    paired_summary,
    query_values,
    values_of,
)
from ranklens.measures import parse
from ranklens.results import Results

AP = parse("AP")


def results(name: str, values: dict[str, float]) -> Results:
    queries = tuple(values)
    col = np.asarray([values[q] for q in queries], dtype=np.float64)[:, None]
    return Results(name, (AP,), queries, col, (float(col.mean()) if queries else math.nan,))


def test_pairs_the_common_queries_in_the_first_order() -> None:
    a = results("a", {"q1": 0.5, "q2": 0.2, "q3": 0.9, "q5": 0.1})
    b = results("b", {"q3": 0.4, "q1": 0.5, "q4": 0.7, "q2": 0.3})
    p = pair_results(a, b, "AP")
    assert p.queries == ("q1", "q2", "q3")
    assert p.a.tolist() == [0.5, 0.2, 0.9] and p.b.tolist() == [0.5, 0.3, 0.4]
    assert p.only_a == ("q5",) and p.only_b == ("q4",)
    assert p.n == 3
    assert p.win_tie_loss() == (1, 1, 1)  # q3 won, q1 tied, q2 lost
    assert p.swapped().win_tie_loss() == (1, 1, 1)
    assert p.swapped().queries == p.queries and p.swapped().only_a == ("q4",)


def test_segment_filtering() -> None:
    a = results("a", {"q1": 0.5, "q2": 0.2, "q3": 0.9})
    b = results("b", {"q1": 0.4, "q2": 0.3, "q3": 0.1})
    segment_of = {"q1": "nav", "q3": "nav", "q2": "info"}
    nav = pair_results(a, b, "AP", segment_of, "nav")
    assert nav.queries == ("q1", "q3") and nav.a.tolist() == [0.5, 0.9] and nav.b.tolist() == [0.4, 0.1]
    assert pair_results(a, b, "AP", segment_of, "info").queries == ("q2",)
    assert pair_results(a, b, "AP", segment_of, "other").n == 0
    assert pair_results(a, b, "AP", None, "nav").n == 0  # a segment without a mapping labels nothing
    assert pair_results(a, b, "AP", segment_of, None).n == 3
    assert common_queries({"a": a, "b": b}, segment_of, "nav") == ["q1", "q3"]


def test_no_common_query_gives_empty_float_arrays() -> None:
    p = pair_results(results("a", {"q1": 0.5}), results("b", {"q2": 0.5}), "AP")
    assert p.n == 0 and p.a.dtype == np.float64 and p.a.size == 0 and p.b.size == 0
    assert p.win_tie_loss() == (0, 0, 0)


def test_mapping_pairing_skips_none() -> None:
    p = pair_values({"q1": 0.5, "q2": None, "q3": 0.25, "q4": 1.0}, {"q1": 0.5, "q2": 0.1, "q3": None, "q5": 0.3})
    assert p.queries == ("q1",)
    assert p.only_a == ("q3", "q4") and p.only_b == ("q2", "q5")


def test_query_values() -> None:
    queries, values, segs = ["q1", "q2", "q3", "q4"], [0.1, None, 0.3, 0.4], ["x", "x", "y", None]
    assert query_values(queries, values) == {"q1": 0.1, "q3": 0.3, "q4": 0.4}
    assert query_values(queries, values, segs, "x") == {"q1": 0.1}
    assert query_values(queries, values, None, "x") == {}


def test_dropped_note_text() -> None:
    a = results("a", {"q1": 0.5, "q2": 0.2, "q9": 0.1})
    b = results("b", {"q1": 0.4, "q2": 0.3})
    assert pair_results(a, b, "AP").dropped_note("base", "sys") == (
        "base vs sys: paired on 2 common queries; dropped 1 query only in base (q9); "
        "score unanswered qrels queries 0 with missing=zero (--missing zero) to keep them"
    )
    assert pair_results(a, a, "AP").dropped_note("a", "a") is None
    many = results("m", {f"q{i}": 0.1 for i in range(1, 9)})
    note = pair_results(b, many, "AP").dropped_note("b", "m")
    assert note is not None and "dropped 6 queries only in m (q3, q4, q5, q6, q7, …)" in note


def test_dropped_all_note_text() -> None:
    rs = {"a": results("a", {"q1": 0.1, "q2": 0.2}), "b": results("b", {"q1": 0.3, "q3": 0.2})}
    common = common_queries(rs)
    assert common == ["q1"]
    assert dropped_all_note(rs, common) == (
        "all-pairs test: paired on the 1 queries every system answered; dropped 2 (q2, q3); "
        "score unanswered qrels queries 0 with missing=zero (--missing zero) to keep them"
    )
    assert values_of(rs["b"], "AP", common).tolist() == [0.3]


def test_paired_summary_against_hand_computed_values() -> None:
    a = np.array([0.62, 0.41, 0.55, 0.70, 0.33])
    b = np.array([0.58, 0.35, 0.56, 0.61, 0.30])
    r = paired_summary(a, b)
    d = a - b
    assert r.n == 5 and r.mean_diff == pytest.approx(d.mean())
    assert (r.wins, r.ties, r.losses) == (4, 0, 1)
    assert r.p_value == pytest.approx(stats.paired_test(a, b, "t").p_value)
    ci = stats.confidence_interval(a, b, "t", level=0.9)
    r90 = paired_summary(a, b, level=0.9)
    assert (r90.ci_low, r90.ci_high) == pytest.approx((ci.low, ci.high))
    assert r.test == "t" and paired_summary(a, b, "sign").test == "sign"


def test_paired_summary_of_fewer_than_two_queries() -> None:
    one = paired_summary(np.array([0.5]), np.array([0.25]), "t")
    assert (one.n, one.mean_diff, one.wins) == (1, 0.25, 1)
    assert math.isnan(one.p_value) and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    none = paired_summary(np.zeros(0), np.zeros(0))
    assert none.n == 0 and math.isnan(none.mean_diff) and (none.wins, none.ties, none.losses) == (0, 0, 0)


def _brute_force(a: dict[str, float], b: dict[str, float]) -> list[tuple[str, float, float]]:
    return [(q, a[q], b[q]) for q in a if q in b]


values = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
query_sets = st.dictionaries(st.sampled_from([f"q{i}" for i in range(12)]), values, max_size=12)


@settings(max_examples=60, deadline=None)
@given(query_sets, query_sets, st.dictionaries(st.sampled_from([f"q{i}" for i in range(12)]), st.sampled_from("xy")))
def test_results_and_mapping_pairing_agree(a: dict[str, float], b: dict[str, float], segment_of: dict[str, str]) -> None:
    ra, rb = results("a", a), results("b", b)
    for segment in (None, "x", "y"):
        by_results = pair_results(ra, rb, "AP", segment_of, segment)
        keep = [q for q in ra.query_ids if segment is None or segment_of.get(q) == segment]
        by_mapping = pair_values({q: a[q] for q in keep}, b)
        for p in (by_results, by_mapping):
            assert isinstance(p, Pairing)
            assert list(zip(p.queries, p.a.tolist(), p.b.tolist())) == _brute_force({q: a[q] for q in keep}, b)
        if segment is None:
            assert set(by_results.only_a) == set(a) - set(b) and set(by_results.only_b) == set(b) - set(a)
            tol = 1e-12  # stats' tie tolerance for scores within [0, 1]
            wins = sum(a[q] - b[q] > tol for q in by_results.queries)
            losses = sum(b[q] - a[q] > tol for q in by_results.queries)
            assert by_results.win_tie_loss() == (wins, by_results.n - wins - losses, losses)
