"""trec_eval's judgment-group input (``-R qrels_jg``) and measures (``map_avgjg``, ``P_avgjg``,
``Rprec_mult_avgjg``), plus ``yaap``: reader errors, hand-computed values, and golden case4."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ranklens.errors import DuplicateError, FormatError, MeasureError
from ranklens.trec_eval.judgment_groups import (
    JG_MEASURES,
    JG_PRINT,
    QueryJudgmentGroups,
    jg_columns,
    jg_query_values,
    read_qrels_jg,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
PLACEHOLDER = "ceci_nest_pas_un_docno"


def _write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "judgments.qrels_jg"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return str(path)


def _columns(**params: str | None) -> dict[str, list[tuple[str, float | None]]]:
    return {name: jg_columns(name, params.get(name)) for name in JG_MEASURES}


# --------------------------------------------------------------------------------------------- reader


def test_reader_groups_queries_and_groups_in_trec_eval_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "# header\n"
        "q2 u1 d1 1\n"
        "# one comment\n"
        "# and another right after it\n"  # trec_eval would parse this one as data
        "q10 bob d#3 2\r\n"  # '#' inside a field is data; \r is blank space
        "q10\talice  d1 0\n"
        "q10 bob d1 -1\n"
        "q10 alice d1x +3\n"
        "# a comment as the last line\n",  # trec_eval crashes on this
    )
    got = read_qrels_jg(path)
    assert list(got) == ["q10", "q2"]  # strcmp order, not numeric
    q10 = got["q10"]
    assert q10.query_id == "q10"
    assert q10.groups == ("alice", "bob")
    assert [dict(m) for m in q10.labels] == [{"d1": 0, "d1x": 3}, {"d#3": 2, "d1": -1}]
    assert got["q2"] == QueryJudgmentGroups.of("q2", {"u1": {"d1": 1}})


def test_reader_same_document_in_two_groups_is_fine(tmp_path: Path) -> None:
    got = read_qrels_jg(_write(tmp_path, "q1 a d1 1\nq1 b d1 0\n"))
    assert [dict(m) for m in got["q1"].labels] == [{"d1": 1}, {"d1": 0}]


def test_reader_hash_after_blanks_is_not_a_comment(tmp_path: Path) -> None:
    # get_qrels_jg.c only skips a '#' in the first column; this line is the query '#'
    got = read_qrels_jg(_write(tmp_path, "q1 a d1 1\n  # x y 0\n"))
    assert list(got) == ["#", "q1"]
    assert dict(got["#"].labels[0]) == {"y": 0}


def test_reader_comment_only_file_has_no_queries(tmp_path: Path) -> None:
    assert read_qrels_jg(_write(tmp_path, "# nothing judged\n")) == {}


def test_reader_skips_blank_lines_as_the_qrels_reader_does(tmp_path: Path) -> None:
    judged = read_qrels_jg(_write(tmp_path, "q1 a d1 1\n\n \t \nq1 a d2 0\n"))
    assert [dict(m) for m in judged["q1"].labels] == [{"d1": 1, "d2": 0}]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 a d1 1\nq1 a d2\n", 2, "expected 4 columns (qid jg docno rel), got 3: 'q1 a d2'"),
        ("q1 a d1 1 extra\n", 1, "expected 4 columns (qid jg docno rel), got 5: 'q1 a d1 1 extra'"),
        ("# c\nq1 a d1 1.5\n", 2, "expected an integer relevance label in column 4 (rel), got '1.5'"),
        ("q1 a d1 high\n", 1, "expected an integer relevance label in column 4 (rel), got 'high'"),
        (
            "q1 a d1 99999999999\n", 1,
            "expected a relevance label in the 32-bit range (±2147483647) in column 4, got '99999999999'",
        ),
        ("", None, "expected at least one line (qid jg docno rel), got an empty file"),
    ],
)  # fmt: skip
def test_reader_errors_name_file_line_expected_and_found(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(FormatError) as info:
        read_qrels_jg(path)
    assert info.value.line == line
    assert info.value.detail == message
    where = f"{path}:{line}" if line is not None else path
    assert str(info.value) == f"{where}: {message}"


def test_reader_duplicate_document_in_one_group(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 a d1 1\nq1 b d1 1\nq1 a d1 0\n")
    with pytest.raises(DuplicateError) as info:
        read_qrels_jg(path)
    assert str(info.value) == (
        f"{path}:3: expected each document once per query and judgment group, got 'd1' again for query "
        "'q1', group 'a' (first on line 1)"
    )


def test_reader_rejects_binary_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r":2: expected UTF-8 text, found a NUL byte"):
        read_qrels_jg(_write(tmp_path, b"q1 a d1 1\nq1 a d\x002 1\n"))
    with pytest.raises(FormatError, match="cannot read the judgment-group qrels"):
        read_qrels_jg(str(tmp_path / "missing"))


# --------------------------------------------------------------------------------------------- columns


def test_columns_defaults() -> None:
    assert jg_columns("map_avgjg", None) == [("map_avgjg", None)]
    assert jg_columns("P_avgjg", None) == [
        (f"P_avgjg_{c}", c) for c in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    ]
    assert [n for n, _ in jg_columns("Rprec_mult_avgjg", None)] == [
        f"Rprec_mult_avgjg_{m}" for m in ("0.20", "0.40", "0.60", "0.80", "1.00", "1.20", "1.40", "1.60",
                                          "1.80", "2.00")
    ]  # fmt: skip


def test_columns_parameters_as_meas_init_reads_them() -> None:
    # atol: "10.7" is 10, "2x" is 2; sorted ascending
    assert jg_columns("P_avgjg", "10.7,2x,3") == [("P_avgjg_2", 2), ("P_avgjg_3", 3), ("P_avgjg_10", 10)]
    # atof: "abc" is 0, any sign, sorted; %3.2f keeps 8 characters of the number (append_double's buffer)
    assert jg_columns("Rprec_mult_avgjg", "1e3,-1,abc,99999.999,123456.789") == [
        ("Rprec_mult_avgjg_-1.00", -1.0),
        ("Rprec_mult_avgjg_0.00", 0.0),
        ("Rprec_mult_avgjg_1000.00", 1000.0),
        ("Rprec_mult_avgjg_100000.0", 99999.999),
        ("Rprec_mult_avgjg_123456.7", 123456.789),
    ]
    assert jg_columns("map_avgjg", "5,10") == [("map_avgjg", None)]  # no parameters, ignored


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("P_avgjg", "0", "Negative cutoff detected"),
        ("P_avgjg", "-3,4", "Negative cutoff detected"),
        ("P_avgjg", "5,", "Negative cutoff detected"),  # atol("") is 0
        ("P_avgjg", "5,5.9", "duplicate cutoffs detected"),
        ("Rprec_mult_avgjg", "0.5,.5", "duplicate cutoffs detected"),
    ],
)
def test_columns_errors_say_what_trec_eval_says(name: str, params: str, message: str) -> None:
    with pytest.raises(MeasureError) as info:
        jg_columns(name, params)
    assert str(info.value) == message


def test_columns_unknown_measure() -> None:
    with pytest.raises(MeasureError, match="'map_avg' is not a judgment-group measure; did you mean 'map_avgjg'"):
        jg_columns("map_avg", None)


def test_print_table() -> None:
    assert JG_MEASURES == ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
    assert JG_PRINT == {m: ("float", "mean") for m in JG_MEASURES}


# --------------------------------------------------------------------------------------------- values

# Query of the hand examples: ranking d1 d2 d3 d4 d5 judged by three users who disagree.
#   a: d1=1 d3=2 d4=0 d6=1 (d6 not retrieved)  -> R=3 at -l1, R=1 at -l2 (d3)
#   b: d1=0 d2=1 d5=3                          -> R=2 at -l1, R=1 at -l2 (d5)
#   c: d7=2 (not retrieved)                    -> R=1 at -l1 and -l2
RANKED = ["d1", "d2", "d3", "d4", "d5"]
THREE_USERS = QueryJudgmentGroups.of(
    "q1",
    {
        "b": {"d1": 0, "d2": 1, "d5": 3},
        "a": {"d1": 1, "d3": 2, "d4": 0, "d6": 1},
        "c": {"d7": 2},
    },
)


def test_map_avgjg_averages_ap_over_groups() -> None:
    # a: relevant at ranks 1, 3 -> (1/1 + 2/3) / 3 = 5/9
    # b: relevant at ranks 2, 5 -> (1/2 + 2/5) / 2 = 9/20
    # c: nothing retrieved      -> 0
    # mean over the 3 groups: (5/9 + 9/20 + 0) / 3
    got = jg_query_values(THREE_USERS, RANKED, {"map_avgjg": jg_columns("map_avgjg", None)})
    assert got == {"map_avgjg": pytest.approx((5 / 9 + 9 / 20) / 3)}


def test_P_avgjg_counts_missing_documents_as_nonrelevant() -> None:
    # P@2: a 1/2 (d1), b 1/2 (d2), c 0 -> 1/3
    # P@5: a 2/5, b 2/5, c 0           -> 0.8/3
    # P@10 beyond the 5 retrieved: a 2/10, b 2/10, c 0 -> 0.4/3
    got = jg_query_values(THREE_USERS, RANKED, {"P_avgjg": jg_columns("P_avgjg", "10,2,5")})
    assert got == pytest.approx({"P_avgjg_2": 1 / 3, "P_avgjg_5": 0.8 / 3, "P_avgjg_10": 0.4 / 3})


def test_Rprec_mult_avgjg_uses_each_groups_own_R() -> None:
    # cutoff = (long)(m * R + 0.9)
    # a (R=3): m=0.5 -> 2: P@2 = 1/2;  m=1 -> 3: P@3 = 2/3;  m=2 -> 6 > 5 retrieved: 2/6
    # b (R=2): m=0.5 -> 1: P@1 = 0;    m=1 -> 2: P@2 = 1/2;  m=2 -> 4: P@4 = 1/4
    # c (R=1): cutoffs 1, 1, 2, nothing relevant retrieved -> 0
    got = jg_query_values(THREE_USERS, RANKED, {"Rprec_mult_avgjg": jg_columns("Rprec_mult_avgjg", "0.5,1,2")})
    assert got == pytest.approx(
        {
            "Rprec_mult_avgjg_0.50": (1 / 2 + 0) / 3,
            "Rprec_mult_avgjg_1.00": (2 / 3 + 1 / 2) / 3,
            "Rprec_mult_avgjg_2.00": (2 / 6 + 1 / 4) / 3,
        }
    )


def test_rel_level_decides_relevance_and_R_per_group() -> None:
    # -l2: a: only d3 (rank 3), R=1 -> 1/3;  b: only d5 (rank 5), R=1 -> 1/5;  c: 0
    got = jg_query_values(THREE_USERS, RANKED, {"map_avgjg": jg_columns("map_avgjg", None)}, rel_level=2)
    assert got == {"map_avgjg": pytest.approx((1 / 3 + 1 / 5) / 3)}


def test_judged_only_drops_each_groups_unjudged_documents_separately() -> None:
    # -J: a ranks d1 d3 d4 -> AP (1/1 + 2/2)/3 = 2/3, P@2 = 2/2
    #     b ranks d1 d2 d5 -> AP (1/2 + 2/3)/2 = 7/12, P@2 = 1/2
    #     c ranks nothing  -> 0
    cols = {"map_avgjg": jg_columns("map_avgjg", None), "P_avgjg": jg_columns("P_avgjg", "2")}
    got = jg_query_values(THREE_USERS, RANKED, cols, judged_only=True)
    assert got == pytest.approx({"map_avgjg": (2 / 3 + 7 / 12) / 3, "P_avgjg_2": (1 + 1 / 2) / 3})


def test_one_group_is_not_divided_and_negative_labels_are_unjudged() -> None:
    # d2 is labelled -1: not relevant, not in R, and dropped by -J.
    # plain: d1 relevant at rank 2, R=1 -> AP 1/2;  -J: ranking is d1 alone -> AP 1
    q = QueryJudgmentGroups.of("q1", {"only": {"d1": 1, "d2": -1}})
    cols = {"map_avgjg": jg_columns("map_avgjg", None)}
    assert jg_query_values(q, ["d2", "d1"], cols) == {"map_avgjg": 0.5}
    assert jg_query_values(q, ["d2", "d1"], cols, judged_only=True) == {"map_avgjg": 1.0}


def test_placeholder_ranking_of_a_missing_query_and_empty_ranking() -> None:
    # -c ranks "ceci_nest_pas_un_docno" alone: judged by nobody, so every value is 0 (P@5 = 0/5, and
    # Rprec_mult cutoffs beyond the one document give 0/cutoff); an empty ranking (-M0) is the same.
    cols = _columns()
    for ranked in ([PLACEHOLDER], []):
        got = jg_query_values(THREE_USERS, ranked, cols)
        assert set(got) == {name for c in cols.values() for name, _ in c}
        assert all(v == 0.0 for v in got.values())
    # a group that happens to judge the placeholder relevant: P@5 = 1/5 for it, 0 for the other -> 1/10
    odd = QueryJudgmentGroups.of("q1", {"a": {PLACEHOLDER: 1}, "b": {"d1": 1}})
    assert jg_query_values(odd, [PLACEHOLDER], {"P_avgjg": jg_columns("P_avgjg", "5")}) == {
        "P_avgjg_5": pytest.approx(0.1)
    }


def test_negative_rel_level_quirks_follow_the_c_code() -> None:
    # -l-1: a document the group did not judge (code -1) counts as relevant in the ranking, but R only
    # counts labels >= 0. Ranking d9 (not judged), d1 (label 1); R = 1:
    #   map: (1/1 + 2/2) / 1 = 2 (m_map_avgjg.c divides by R regardless);
    #   P@1 = 1;
    #   Rprec_mult 1.0 -> cutoff 1: m_Rprec_mult_avgjg.c walks back from rank 2 starting at the
    #   relevant-retrieved count (1, judged documents only), decrements at d1 and stops at 0 before
    #   reaching rank 1, so that cutoff stays 0.
    q = QueryJudgmentGroups.of("q1", {"a": {"d1": 1}})
    cols = {
        "map_avgjg": jg_columns("map_avgjg", None),
        "P_avgjg": jg_columns("P_avgjg", "1"),
        "Rprec_mult_avgjg": jg_columns("Rprec_mult_avgjg", "1"),
    }
    assert jg_query_values(q, ["d9", "d1"], cols, rel_level=-1) == {
        "map_avgjg": 2.0, "P_avgjg_1": 1.0, "Rprec_mult_avgjg_1.00": 0.0,
    }  # fmt: skip
    # R = 0 but a "relevant" document retrieved: sum / 0 is +inf in C
    none = QueryJudgmentGroups.of("q1", {"a": {"d1": -1}})
    assert jg_query_values(none, ["d9"], {"map_avgjg": cols["map_avgjg"]}, rel_level=-1) == {
        "map_avgjg": math.inf
    }


def _trec_eval_yaap(tmp_path: Path, run_lines: str, *args: str) -> dict[str, float]:
    """``ranklens trec-eval -q -m yaap`` on the qrels of test_yaap: per-query values by query id."""
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    qrels = tmp_path / "y.qrels"
    qrels.write_text("q 0 d1 1\nq 0 d2 0\nq 0 d3 2\nq 0 d9 1\nz 0 d1 1\n")
    run = tmp_path / "y.run"
    run.write_text(run_lines)
    result = CliRunner().invoke(cli, ["trec-eval", "-q", "-m", "yaap", *args, str(qrels), str(run)])
    assert result.exit_code == 0, result.stderr
    return {qid: float(v) for _, qid, v in (line.split("\t") for line in result.stdout.splitlines())}


def test_yaap(tmp_path: Path) -> None:
    """yaap reads plain qrels; computed on the engine's ranked lists (trec_eval/compute.py)."""
    three = "q Q0 d1 1 3 t\nq Q0 d2 2 2 t\nq Q0 d3 3 1 t\nz Q0 d1 1 1 t\n"
    # d1, d3 relevant at ranks 1 and 3, R = 3 (d9 not retrieved): S = 1/1 + 2/3 = 5/3
    # yaap = log((1 + 5/3) / (1 + 3 - 5/3)) = log((8/3) / (7/3)) = log(8/7) = 0.1335
    assert _trec_eval_yaap(tmp_path, three)["q"] == pytest.approx(math.log(8 / 7), abs=5e-5)
    # -l2: only d3 (rank 3), R = 1: S = 1/3 -> log((4/3) / (5/3)) = log(4/5) = -0.2231
    assert _trec_eval_yaap(tmp_path, three, "-l2")["q"] == pytest.approx(math.log(4 / 5), abs=5e-5)
    # -J drops d7 (unjudged) in front: the same as without it
    four = "q Q0 d7 1 4 t\n" + three
    assert _trec_eval_yaap(tmp_path, four, "-J")["q"] == pytest.approx(math.log(8 / 7), abs=5e-5)
    # -c with q absent: the placeholder gives S = 0 -> log(1 / (1 + 3)) = -1.3863 (trec_eval keeps it)
    assert _trec_eval_yaap(tmp_path, "z Q0 d1 1 1 t\n", "-c")["q"] == pytest.approx(math.log(1 / 4), abs=5e-5)


# --------------------------------------------------------------------------------------------- golden


def _read_trec_run(path: Path) -> dict[str, list[str]]:
    """Docnos per query in trec_eval's order: score descending, ties by docno descending."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields:
            rows.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    return {qid: [doc for _, doc in sorted(pairs, reverse=True)] for qid, pairs in rows.items()}


def test_golden_case4_every_query_and_the_means() -> None:
    assert (DATA / "case4.jg_q.cmd").read_text().split() == [
        "trec_eval", "-q", "-m", "qrels_jg", "-R", "qrels_jg", "case4.qrels_jg", "case4.run",
    ]  # fmt: skip
    judgments = read_qrels_jg(str(DATA / "case4.qrels_jg"))
    run = _read_trec_run(DATA / "case4.run")
    cols = _columns()
    expected_q: list[tuple[str, str, str]] = []
    expected_all: list[tuple[str, str]] = []
    for line in (DATA / "case4.jg_q.out").read_text().splitlines():
        name, qid, value = line.split("\t")
        if name.strip() in ("runid", "num_q"):
            continue
        if qid == "all":
            expected_all.append((name.strip(), value))
        else:
            expected_q.append((name.strip(), qid, value))
    got_q: list[tuple[str, str, str]] = []
    sums: dict[str, float] = {}
    evaluated = [qid for qid in judgments if qid in run]
    for qid in evaluated:
        values = jg_query_values(judgments[qid], run[qid], cols)
        for name in JG_MEASURES:
            for printed, _ in cols[name]:
                got_q.append((printed, qid, f"{values[printed]:6.4f}"))
                sums[printed] = sums.get(printed, 0.0) + values[printed]
    assert len(evaluated) == 12
    assert any(len(q.groups) > 1 for q in judgments.values())
    assert got_q == expected_q
    got_all = [(printed, f"{sums[printed] / len(evaluated):6.4f}") for name in JG_MEASURES for printed, _ in cols[name]]
    assert got_all == expected_all
