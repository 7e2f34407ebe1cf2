"""`explain` prints the kernel's own intermediates: for every ideal flavour × tie policy the printed
DCG / IDCG equals the printed value, and both equal what ``ranklens.evaluate`` computes (issue 22 item 1)."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.cli.main import cli
from ranklens.explain import explain

IDEALS = ("ideal=global", "ideal=local", "ideal=recall,depth=6", "ideal=max,max_rel=3")
TIES = ("ties=trec", "ties=average", "ties=input")
FAMILIES = ("nDCG", "nDCG(norm=minmax)")
GAINS = ("", "gain=exp,", "gain={-1:-2,0:0,1:1,2:3,3:7},", "discount=jk,base=2,")


def test_local_ideal_with_a_tie_group_straddling_the_cutoff(tmp_path) -> None:
    """The reproduction of the review (architecture-r3 A1), IDCG written out by hand.

    Scores 1.0, 1.0, 1.0, 0.5 for labels 3, 0, 1, 2: the tie group {a, b, c} straddles the cutoff 2, so under
    ties=average the local ideal pool is the whole group {a, b, c} (every document within depth 2 in some
    ordering of the ties): gains 3, 1 at ranks 1, 2 → IDCG = 3 + 1/log2(3) = 3.630930.
    DCG = mean gain (3+0+1)/3 × (1 + 1/log2 3) = 4/3 × 1.630930 = 2.174573.
    """
    (tmp_path / "q.qrels").write_text("q 0 a 3\nq 0 b 0\nq 0 c 1\nq 0 d 2\n")
    (tmp_path / "r.run").write_text("q Q0 a 1 1.0 s\nq Q0 b 2 1.0 s\nq Q0 c 3 1.0 s\nq Q0 d 4 0.5 s\n")
    idcg = 3 + 1 / math.log2(3)
    dcg = 4 / 3 * (1 + 1 / math.log2(3))
    out = CliRunner().invoke(
        cli, ["explain", str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "--query", "q",
              "-m", "nDCG(ideal=local,ties=average)@2"],
    )
    assert out.exit_code == 0, out.output
    assert f"IDCG = {idcg:.6f}" in out.stdout
    assert f"DCG = {dcg:.6f}" in out.stdout
    assert f"= {dcg / idcg:.6f}" in out.stdout
    e = explain(str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "q", "nDCG(ideal=local,ties=average)@2")
    assert [r["doc"] for r in e.ideal_rows] == ["a", "c"]
    assert e.idcg == pytest.approx(idcg, abs=1e-12)


_labels = st.integers(min_value=-2, max_value=3)  # -2: not judged; -1: a negative (harmful) label
_scores = st.sampled_from([1.0, 2.0, 3.0])  # few distinct scores: ties everywhere


@st.composite
def _query(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, float]]:
    n = draw(st.integers(min_value=1, max_value=7))
    labels = draw(st.lists(_labels, min_size=n, max_size=n))
    scores = draw(st.lists(_scores, min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(min_value=0, max_value=3), max_size=3))  # judged, never retrieved
    qrels = {f"d{i}": lab for i, lab in enumerate(labels) if lab >= -1}
    qrels.update({f"x{i}": lab for i, lab in enumerate(extra)})
    if not qrels:
        qrels = {"x": 1}
    return qrels, {f"d{i}": s for i, s in enumerate(scores)}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=_query(),
    family=st.sampled_from(FAMILIES),
    ideal=st.sampled_from(IDEALS),
    ties=st.sampled_from(TIES),
    gain=st.sampled_from(GAINS),
    k=st.integers(min_value=1, max_value=5),
)
def test_explain_equals_kernel(case, family: str, ideal: str, ties: str, gain: str, k: int) -> None:  # type: ignore[no-untyped-def]
    qrels_q, run_q = case
    qrels, run = {"q": qrels_q}, {"q": run_q}
    params = f"{gain}{ideal},{ties}"
    if family.endswith(")"):
        measure = f"{family[:-1]},{params})@{k}"
    else:
        measure = f"{family}({params})@{k}"
    if "depth=6" in measure and k > 6:
        return
    e = explain(qrels, run, "q", measure)
    engine = ranklens.evaluate(qrels, run, [measure]).per_query(measure)["q"]
    assert e.value == engine
    assert e.dcg is not None and e.idcg is not None
    low = e.min_dcg or 0.0
    if e.idcg - low > 0:
        assert (e.dcg - low) / (e.idcg - low) == e.value
    else:
        assert e.value == 0.0
    # the ideal table is what IDCG sums, the ranking table what DCG sums (up to rounding of the sum)
    assert math.fsum(r["contribution"] for r in e.ideal_rows) == pytest.approx(e.idcg, abs=1e-9)
    assert math.fsum(r["contribution"] for r in e.rows) == pytest.approx(e.dcg, abs=1e-9)
    assert len(e.ideal_rows) <= k
    gains = [r["gain"] for r in e.ideal_rows]
    assert gains == sorted(gains, reverse=True) and all(g > 0 for g in gains)


@pytest.mark.parametrize("ideal", IDEALS)
@pytest.mark.parametrize("ties", TIES)
def test_dcg_and_idcg_families_show_their_own_value(ideal: str, ties: str) -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 2}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5, "x": 0.5}}
    for family in ("DCG", "IDCG"):
        params = ties if family == "DCG" else ideal
        measure = f"{family}({params})@2"
        e = explain(qrels, run, "q", measure)
        engine = ranklens.evaluate(qrels, run, [measure]).per_query(measure)["q"]
        assert e.value == engine
        assert (e.dcg if family == "DCG" else e.idcg) == engine
