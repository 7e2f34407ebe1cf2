"""The trec_eval layer: measure table, -m selection, output formats, run id and the -c placeholder."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklens.measures.trec_names import TREC_MEASURES, lookup
from ranklens.trec_eval import TrecEvalOptions, run_trec_eval
from ranklens.trec_eval.output import format_float
from ranklens.trec_eval.select import TrecUsageError, select
from ranklens.trec_eval.table import NICKNAMES, TABLE


def test_every_nickname_member_is_in_the_table() -> None:
    names = {m.name for m in TABLE}
    for members in NICKNAMES.values():
        assert set(members) <= names


def test_every_numeric_table_entry_has_a_trec_name() -> None:
    for entry in TABLE:  # (yaap and the prefs / judgment-group measures have no ranklens measure)
        if entry.value in ("float", "long") and entry.rel_format == "qrels" and entry.name != "yaap":
            spec = lookup(entry.name)
            assert spec is not None and spec.name == entry.name


def test_all_trec_expands_to_trec_evals_columns() -> None:
    printed = [name for sel in select(["all_trec"]) for name, _ in sel.columns]
    assert printed[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert printed[-5:] == ["num_nonrel_judged_ret", "rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"][-5:]
    assert "iprec_at_recall_0.00" in printed and "Rprec_mult_2.00" in printed and "relstring" in printed
    assert "dcg" not in printed  # dcg and ideal_dcg are not in all_trec


def test_rel_level_and_collection_size_reach_the_measures() -> None:
    cols = {name: m for sel in select(["P.5", "utility", "ndcg"], rel_level=2, num_docs=50) for name, m in sel.columns}
    assert str(cols["P_5"]) == "P(rel=2)@5"
    assert str(cols["utility"]) == "Utility(num_docs=50,rel=2)"
    assert str(cols["ndcg"]) == "nDCG"  # ndcg ignores -l


def test_single_measures_ignore_parameters_like_trec_eval() -> None:
    assert [name for sel in select(["map.5"]) for name, _ in sel.columns] == ["map"]


def test_relstring_length_parameter() -> None:
    (sel,) = select(["relstring.3"])
    assert sel.columns == (("relstring_3", None),)
    assert sel.relstring_len == 3


def test_unknown_measure() -> None:
    with pytest.raises(TrecUsageError) as info:
        select(["ndgc"])
    assert info.value.status == 1


def test_trec_names_of_new_families_are_registered() -> None:
    for name in ("gm_map", "iprec_at_recall", "11pt_avg", "Rprec_mult", "binG", "G", "ndcg_rel", "Rndcg",
                 "relative_P", "set_P", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj", "utility"):
        assert name.lower() in TREC_MEASURES


def test_family_names_keep_their_case_over_trec_names() -> None:
    assert lookup("rbp") is not None
    assert lookup("RBP") is None  # a family name in another case: the measure language reads it (TrecRBP too)


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.5, "0.5000"), (0.03125, "0.0312"), (1.0, "1.0000"), (-0.6, "-0.6000"), (12.5, "12.5000"),
     (float("nan"), "  -nan"), (float("-nan"), "  -nan")],
)  # fmt: skip
def test_format_float(value: float, text: str) -> None:
    assert format_float(value) == text


def _write(tmp_path: Path, qrels: str, run: str) -> tuple[str, str]:
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


def test_runid_is_the_last_lines_tag(tmp_path: Path) -> None:
    q, r = _write(tmp_path, "q1 0 a 1\n", "q1 Q0 a 1 2.0 first\nq1 Q0 b 2 1.0 last\n\n  \n")
    out = run_trec_eval(TrecEvalOptions(q, r, measures=("runid",))).stdout
    assert out == "runid                 \tall\tlast\n"


def test_complete_uses_a_placeholder_document(tmp_path: Path) -> None:
    """q2 has no retrieved document: with -c it is ranked against one unjudged document, then num_ret,
    relstring, unj and rbp_resid are cleared; set_P sees 1 document (0/1 = 0), num_nonrel_judged_ret 0."""
    q, r = _write(tmp_path, "q1 0 a 1\nq2 0 b 1\n", "q1 Q0 a 1 2.0 t\n")
    args = ("num_ret", "relstring", "unj.1", "rbp_resid", "set_P", "iprec_at_recall.0", "utility")
    out = run_trec_eval(TrecEvalOptions(q, r, measures=args, per_query=True, complete=True)).stdout
    q2 = [line.split("\t") for line in out.splitlines() if "\tq2\t" in line]
    assert [(n.strip(), v) for n, _, v in q2] == [
        ("num_ret", "0"), ("iprec_at_recall_0.00", "0.0000"), ("relstring", "''"), ("utility", "0.0000"),
        ("set_P", "0.0000"), ("rbp_resid", "0.0000"), ("unj_1", "0.0000"),
    ]  # fmt: skip
    # with -J the placeholder (not in the qrels) is dropped: nothing retrieved, iprec is 0/0
    out = run_trec_eval(TrecEvalOptions(q, r, measures=("iprec_at_recall.0",), per_query=True, complete=True, judged_only=True)).stdout
    assert "iprec_at_recall_0.00  \tq2\t  -nan\n" in out
    assert out.endswith("iprec_at_recall_0.00  \tall\t  -nan\n")


def test_relstring_characters(tmp_path: Path) -> None:
    q, r = _write(tmp_path, "q1 0 a 12\nq1 0 b -1\nq1 0 c 0\n", "q1 Q0 a 1 4 t\nq1 Q0 b 2 3 t\nq1 Q0 x 3 2 t\nq1 Q0 c 4 1 t\n")
    out = run_trec_eval(TrecEvalOptions(q, r, measures=("relstring",), per_query=True)).stdout
    assert out == "relstring             \tq1\t'>.-0'\n"
