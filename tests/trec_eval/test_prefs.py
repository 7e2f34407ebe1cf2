"""trec_eval 10.0's preference measures (``-R prefs``, ``-R qrels_prefs``): reader, measures, golden files.

Expected values of the hand-made examples are derived in the comments ("internal rank" = the position
trec_eval gives a judged document: retrieved ones first, in ranking order, then the others by docno);
each was also checked against the real binary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklens.errors import FormatError, InputError
from ranklens.trec_eval.prefs import (
    PREFS_MEASURES,
    PREFS_PRINT,
    PrefLine,
    QueryPrefs,
    prefs_query_values,
    prefs_ranking,
    read_prefs,
    read_qrels_prefs,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
PLACEHOLDER = "ceci_nest_pas_un_docno"


def query(text: str, qid: str = "q") -> QueryPrefs:
    """A query from ``jg jsg docno level`` lines (one per line)."""
    lines = []
    for number, line in enumerate(text.strip().splitlines(), start=1):
        jg, jsg, docno, level = line.split()
        lines.append(PrefLine(jg, jsg, docno, float(level), number))
    return QueryPrefs(qid, tuple(lines), "test.prefs")


def write(tmp_path: Path, text: str | bytes, name: str = "t.prefs") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


# ----------------------------------------------------------------------------------------------- reading


def test_read_prefs_skips_comments_and_blank_lines_and_counts_physical_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "# header\n\nq2 u s d1 2\n  \n# again\n# twice\nq1 u s d9 0.5\r\nq2 u s d2 0\n")
    prefs = read_prefs(path)
    assert list(prefs) == ["q1", "q2"]  # strcmp order, the order trec_eval evaluates in
    assert prefs["q1"].judgments == (PrefLine("u", "s", "d9", 0.5, 7),)
    assert [(j.docno, j.line) for j in prefs["q2"].judgments] == [("d1", 3), ("d2", 8)]
    assert prefs["q2"].source == path
    assert prefs["q2"].docnos == ("d1", "d2")


def test_read_qrels_prefs_uses_iter_as_group_and_one_sub_group(tmp_path: Path) -> None:
    path = write(tmp_path, "q1 0 d1 2.5\nq1 1 d2 0\n", "t.qrels")
    prefs = read_qrels_prefs(path)
    # the label is read as a number (trec_eval's atof), not an integer
    assert prefs["q1"].judgments == (PrefLine("0", "0", "d1", 2.5, 1), PrefLine("1", "0", "d2", 0.0, 2))


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 u s d1 1\nq1 u s d2\n", 2, "expected 5 columns (qid, judgment group, sub-group, docno, relevance level), got 4"),
        ("q1 u s d1 1 extra\n", 1, "expected 5 columns (qid, judgment group, sub-group, docno, relevance level), got 6"),
        ("q1 u s d1 high\n", 1, "expected a number as the relevance level, got 'high'"),
        ("q1 u s d1 2x\n", 1, "expected a number as the relevance level, got '2x'"),
        ("q1 u s d1 nan\n", 1, "expected a number as the relevance level, got 'nan'"),
        (b"q1 u s d\xff 1\n", 1, "expected UTF-8 text, got byte 0xff"),
    ],
)  # fmt: skip
def test_read_prefs_rejects_malformed_lines_naming_file_and_line(
    tmp_path: Path, text: str | bytes, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(FormatError) as info:
        read_prefs(path)
    assert info.value.line == line
    assert str(info.value) == f"{path}:{line}: {message}"


def test_read_qrels_prefs_wants_four_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "q1 0 d1 1\nq1 0 u d2 1\n", "t.qrels")
    with pytest.raises(FormatError, match=r"t\.qrels:2: expected 4 columns .*, got 5$"):
        read_qrels_prefs(path)


def test_read_prefs_rejects_a_file_without_judgments(tmp_path: Path) -> None:
    path = write(tmp_path, "# nothing\n\n")
    with pytest.raises(FormatError, match="expected at least one judgment line"):
        read_prefs(path)


# ------------------------------------------------------------------------------------------ the ranking


def test_prefs_ranking_breaks_ties_by_docno_ascending_then_cuts() -> None:
    # form_prefs_counts.c sorts ties by strcmp(docno) ascending (the other measures: descending)
    assert prefs_ranking(["b", "a", "c", "d"], [1.0, 1.0, 3.0, 0.5]) == ["c", "a", "b", "d"]
    assert prefs_ranking(["b", "a", "c", "d"], [1.0, 1.0, 3.0, 0.5], max_docs=2) == ["c", "a"]
    assert prefs_ranking(["b", "a"], [1.0, 1.0], max_docs=0) == []
    # d2 > d1 with d1, d2 tied: d1 ranks first, so the preference fails
    v = prefs_query_values(query("u s d2 1\nu s d1 0"), prefs_ranking(["d2", "d1"], [1.0, 1.0]))
    assert v["prefs_simp_ret"] == 0.0


# ------------------------------------------------------------------------------------------- measures


def expect(values: dict[str, float], **expected: float) -> None:
    assert set(values) == set(PREFS_MEASURES)
    for name, value in expected.items():
        assert values[f"prefs_{name}"] == pytest.approx(value, abs=1e-12), name


def test_one_sub_group_counts_retrieved_implied_and_missed_preferences() -> None:
    # d1(3) > d2(2) > {d3, d4}(0): 5 preferences. Ranking d3 d1 x d2; d4 not retrieved.
    # Internal ranks d3=0 d1=1 d2=2 | d4=3. d1>d2 ret fulfilled; d1>d3, d2>d3 ret missed;
    # d1>d4, d2>d4 implied fulfilled (d4 not retrieved). ful_ret=1, poss_ret=3, ful=3, poss=5.
    # Rnonrel: R=2 rel, N=2 nonrel, R>=N adds nothing: 3/5. Rnonrel_ret: R=2 rel ret, N=1 (d3):
    # ful = 1 + R_ret*(R-N) = 3, poss = 3 + num_rel*(R-N) = 5 -> 0.6.
    v = prefs_query_values(query("u s d1 3\nu s d2 2\nu s d3 0\nu s d4 0"), ["d3", "d1", "x", "d2"])
    expect(
        v, num_prefs_poss=5, num_prefs_ful=3, num_prefs_ful_ret=1, simp=0.6, simp_ret=1 / 3, simp_imp=0.6,
        pair=0.6, pair_ret=1 / 3, pair_imp=0.6, avgjg=0.6, avgjg_ret=1 / 3, avgjg_imp=0.6,
        avgjg_Rnonrel=0.6, avgjg_Rnonrel_ret=0.6,
    )  # fmt: skip


def test_sub_groups_form_a_transitive_preference_matrix() -> None:
    # s1: d1 > d2 > d3; s2: d2 > d4. Closure adds d1 > d4: 5 preferences (none between d3 and d4).
    # Ranking d4 d1 d2: internal d4=0 d1=1 d2=2 | d3=3. d1>d2 ret ful; d2>d4, d1>d4 ret missed;
    # d1>d3, d2>d3 implied ful. Every level > 0: num_rel=4, num_nonrel=0, so Rnonrel adds
    # num_rel_ret*(R-N) = 3*4 fulfilled and num_rel*(R-N) = 16 possible: (3+12)/(5+16) = 15/21;
    # Rnonrel_ret: R=3, N=0: (1 + 3*3) / (3 + 4*3) = 10/15.
    q = query("u s1 d1 3\nu s1 d2 2\nu s1 d3 1\nu s2 d2 5\nu s2 d4 4")
    v = prefs_query_values(q, ["d4", "d1", "d2"])
    expect(
        v, num_prefs_poss=5, num_prefs_ful=3, num_prefs_ful_ret=1, simp=0.6, simp_ret=1 / 3,
        avgjg_Rnonrel=15 / 21, avgjg_Rnonrel_ret=10 / 15,
    )  # fmt: skip


def test_pair_measures_average_the_groups_votes_per_document_pair() -> None:
    # a: d1 > d2; b: d2 > d1; c: d1 > d2 > d3. Ranking d1 d2 d3: 4 of 5 preferences fulfilled.
    # Pairs: {d1,d2} 2 votes of 3 fulfilled -> 2/3; {d1,d3} 1; {d2,d3} 1: pair = (2/3 + 2)/3.
    # avgjg = (1 + 0 + 1)/3. Rnonrel: a and b have R=N=1 -> 1 and 0; c has R=2, N=1 ->
    # (3 + 2*1)/(3 + 2*1) = 1: (1 + 0 + 1)/3.
    q = query("a s d1 1\na s d2 0\nb s d2 1\nb s d1 0\nc s d1 2\nc s d2 1\nc s d3 0")
    v = prefs_query_values(q, ["d1", "d2", "d3"])
    expect(v, simp=0.8, pair=(2 / 3 + 2) / 3, pair_ret=(2 / 3 + 2) / 3, avgjg=2 / 3, avgjg_Rnonrel=2 / 3)


def test_rnonrel_recount_compares_the_nonrelevant_class_with_itself() -> None:
    # d1 (1) > d2, d3, d4 (0), ranking d1 d2 d3 d4: R=1 < N=3, so recalculate() keeps the first R=1
    # nonrelevant doc (d2) but, looping over every class, also pairs the nonrelevant class {d2,d3,d4}
    # with {d2}: d1-d2 fulfilled, d2-d2, d3-d2, d4-d2 not: 1/4 (bpref-like reasoning would say 1).
    v = prefs_query_values(query("u s d1 1\nu s d2 0\nu s d3 0\nu s d4 0"), ["d1", "d2", "d3", "d4"])
    expect(v, simp=1.0, avgjg=1.0, avgjg_Rnonrel=0.25, avgjg_Rnonrel_ret=0.25)


def test_a_group_with_zero_possible_rnonrel_preferences_zeroes_the_query() -> None:
    # group a has only nonrelevant docs: R=0 < N=2, recount gives 0/0 = NaN in C; the sum over groups
    # is then NaN, "sum > 0" fails, and the value stays 0. prefs_avgjg skips the 0-preference group:
    # (0 + 1)/2.
    v = prefs_query_values(query("a s d1 0\na s d2 0\nb s d1 1\nb s d2 0"), ["d1", "d2"])
    expect(v, simp=1.0, avgjg=0.5, avgjg_ret=0.5, avgjg_Rnonrel=0.0, avgjg_Rnonrel_ret=0.0)


def test_duplicate_lines_count_twice_in_one_sub_group_but_once_in_a_matrix() -> None:
    # one sub-group: d1 listed twice -> d1 > d2 counted twice (2 possible), num_rel=2 (N=1), so
    # Rnonrel = (0 + num_rel_ret*(2-1)) / (2 + num_rel*(2-1)) = 2/4.
    v = prefs_query_values(query("a s d1 1\na s d1 1\na s d2 0"), ["d2", "d1"])
    expect(v, num_prefs_poss=2, num_prefs_ful=0, pair=0.0, avgjg_Rnonrel=0.5)
    # two sub-groups (a matrix): the duplicate adds nothing: 1 preference; rel docs d1, d3 (R=2, N=1),
    # retrieved rel d1: Rnonrel = (0 + 1*1)/(1 + 2*1) = 1/3
    v = prefs_query_values(query("a s d1 1\na s d1 1\na s d2 0\na t d3 1"), ["d2", "d1"])
    expect(v, num_prefs_poss=1, num_prefs_ful=0, avgjg_Rnonrel=1 / 3, avgjg_Rnonrel_ret=0.0)


@pytest.mark.parametrize("ranked", [[PLACEHOLDER], []])
def test_an_unretrieved_query_has_only_not_occurring_preferences(ranked: list[str]) -> None:
    # -c ranks the placeholder alone: nothing judged is retrieved. 1 possible preference, none
    # fulfilled; the pair {d1,d2} counts in prefs_pair's denominator only.
    v = prefs_query_values(query("u s d1 1\nu s d2 0"), ranked)
    assert v == {name: (1.0 if name == "prefs_num_prefs_poss" else 0.0) for name in PREFS_MEASURES}


def test_inconsistent_judgments_are_errors_when_the_query_is_evaluated() -> None:
    with pytest.raises(FormatError, match=r"^test\.prefs:3: expected one relevance level per document"):
        prefs_query_values(query("u s d1 2\nu s d2 1\nu s d1 1"), ["d1"])
    with pytest.raises(FormatError, match=r"^test\.prefs:3: expected 'd2' to be relevant in every sub-group"):
        prefs_query_values(query("u s d1 2\nu s d2 0\nu t d2 1\nu t d3 0"), [])
    with pytest.raises(FormatError, match="expected consistent preferences .* 'd1' over 'd2' and 'd2' over 'd1'"):
        prefs_query_values(query("u s d1 2\nu s d2 1\nu t d2 2\nu t d1 1"), [])
    with pytest.raises(InputError, match="ranked twice"):
        prefs_query_values(query("u s d1 2\nu s d2 1"), ["d1", "d1"])
    # different levels in different groups are fine (users disagree)
    prefs_query_values(query("u s d1 2\nu s d2 1\nv s d1 1\nv s d2 2"), ["d1"])


def test_measure_table_order_and_how_values_print() -> None:
    assert PREFS_MEASURES[:3] == ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
    assert PREFS_MEASURES[-1] == "prefs_avgjg_imp" and len(PREFS_MEASURES) == 14
    assert list(PREFS_PRINT) == list(PREFS_MEASURES)
    assert {m for m, how in PREFS_PRINT.items() if how == ("long", "sum")} == set(PREFS_MEASURES[:3])
    assert all(how == ("float", "mean") for m, how in PREFS_PRINT.items() if m not in PREFS_MEASURES[:3])


# ---------------------------------------------------------------------------------------- golden files


def read_trec_run(path: Path) -> dict[str, tuple[list[str], list[float]]]:
    run: dict[str, tuple[list[str], list[float]]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields:
            docs, scores = run.setdefault(fields[0], ([], []))
            docs.append(fields[2])
            scores.append(float(fields[4]))
    return run


@pytest.mark.parametrize(
    ("judgments", "reader", "golden"),
    [("case5.prefs", read_prefs, "case5.prefs_q.out"), ("case6.qrels", read_qrels_prefs, "case6.qrels_prefs_q.out")],
)
def test_golden_per_query_and_summary_lines(judgments: str, reader: object, golden: str) -> None:
    prefs = reader(str(DATA / judgments))  # type: ignore[operator]
    run = read_trec_run(DATA / "case4.run")
    expected = [line for line in (DATA / golden).read_text().splitlines() if not line.startswith(("runid", "num_q"))]
    got: list[str] = []
    totals = dict.fromkeys(PREFS_MEASURES, 0.0)

    def show(name: str, value: float) -> str:
        return str(int(value)) if PREFS_PRINT[name][0] == "long" else f"{value:6.4f}"

    for qid, q in prefs.items():
        docs, scores = run.get(qid, ([PLACEHOLDER], [1.0]))
        values = prefs_query_values(q, prefs_ranking(docs, scores))
        for name in PREFS_MEASURES:
            got.append(f"{name:<22}\t{qid}\t{show(name, values[name])}")
            totals[name] += values[name]
    for name in PREFS_MEASURES:
        value = totals[name] if PREFS_PRINT[name][1] == "sum" else totals[name] / len(prefs)
        got.append(f"{name:<22}\tall\t{show(name, value)}")
    assert got == expected
