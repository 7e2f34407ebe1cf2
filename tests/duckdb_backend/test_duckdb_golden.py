"""The DuckDB engine against the real trec_eval 10.0: every per-query value and mean trec_eval printed
(``tests/data/trec_eval``, a copy of ``shared/golden/trec_eval``) for the measures the SQL formulation
expresses (ndcg, ndcg_cut, map, map_cut, P, recall, recip_rank, Rprec, success), to its 4 decimals, under the
case's options (-c, -J, -l, -M) as the policy."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import test_backend_parity as golden  # noqa: E402

from ranklens.duckdb.files import evaluate_run_paths  # noqa: E402


def _name(trec: str) -> str | None:
    """The ranklens name of a trec_eval column whose family the SQL formulation expresses."""
    from ranklens.sql import SQL_MEASURES

    if trec == "Rprec":
        return "Rprec"
    if trec.startswith("success_") and trec[8:].isdigit():
        return f"Success@{trec[8:]}"
    name = golden._ranklens_name(trec)  # (the compiled declaration's: more families than SQL's)
    return name if name is not None and name.split("@")[0] in SQL_MEASURES else None


def _expected(case: str) -> dict[str, dict[str, float]]:
    gain_map = "ndcg." in (golden.DATA / f"{case}.cmd").read_text() and "=" in (golden.DATA / f"{case}.cmd").read_text()
    out: dict[str, dict[str, float]] = {}
    for line in (golden.DATA / f"{case}.out").read_text().splitlines():
        trec, qid, value = line.split()
        name = _name(trec)
        if name is not None and not (gain_map and name.startswith("nDCG")):
            out.setdefault(name, {})[qid] = float(value)
    return out


@pytest.mark.parametrize("case", golden.GOLDEN)
def test_golden_trec_eval_values_on_duckdb(case: str) -> None:
    (qrels, run), policy, _ = golden._golden_case(case)
    expected = _expected(case)
    measures = sorted(expected)
    (res,) = evaluate_run_paths(qrels, [run], measures, policy)
    checked = 0
    for m, evaluated in zip(measures, res.measures):
        got = res.per_query(evaluated)
        for qid, value in expected[m].items():
            if qid != "all":
                assert got.get(qid, 0.0) == pytest.approx(value, abs=5.01e-5), (m, qid)
                checked += 1
        assert math.fsum(got.values()) / len(got) == pytest.approx(expected[m]["all"], abs=5.01e-5), (m, "all")
    assert checked > 0


def test_the_golden_cases_cover_rprec_and_success() -> None:
    names = {m for case in golden.GOLDEN for m in _expected(case)}
    assert "Rprec" in names and any(n.startswith("Success@") for n in names)
