"""The layouts people have: MS MARCO, BEIR, 5-column TREC runs, recommender columns, explicit column maps.

Expected values come from pytrec_eval on qrels and runs that this file parses itself (plain ``split``),
never from ranklens output. The notes, sniffing decisions and error messages are test data.
"""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.data import read_qrels, read_run
from ranklens.errors import FormatError

pytrec_eval = pytest.importorskip("pytrec_eval")

FORMATS = Path(__file__).resolve().parent / "formats"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "inputs.md"

# trec_eval measure (as pytrec_eval names it) -> ranklens measure
MEASURES = {
    "ndcg_cut_10": "nDCG@10",
    "ndcg_cut_3": "nDCG@3",
    "map": "AP",
    "recip_rank": "RR",
    "P_5": "P@5",
    "recall_10": "R@10",
}

RANK_NOTE = (
    "3 columns: read as an MS MARCO run (qid docid rank), since the third column counts up from 0 or 1 "
    "within every query; score = -rank (if it is a score, use --run-format msmarco-score, format= in Python)"
)
SCORE_NOTE = (
    "3 columns: read as qid docid score, higher first, since the third column does not count up from 0 or 1 "
    "within every query (if it is a rank, use --run-format msmarco-rank, format= in Python)"
)
NO_TAG_NOTE = "5 columns: read as a TREC run without the tag (qid Q0 docid rank score)"
NO_HEADER_QRELS_NOTE = "no header line: read as TREC qrels (qid iter docid rel), the layout of MS MARCO's qrels.*.tsv"


# ------------------------------------------------------------------ independent parsing and reference


def _fields(path: Path, sep: str | None = None) -> list[list[str]]:
    text = path.read_text(encoding="utf-8")
    return [line.split(sep) for line in text.splitlines() if line.strip()]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        if path.suffix == ".jsonl":
            return [{k: str(v) for k, v in json.loads(line).items()} for line in f if line.strip()]
        return list(csv.DictReader(f, delimiter="\t" if path.suffix == ".tsv" else ","))


def _nest(triples: list[tuple[str, str, float]], cast: type = float) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for q, d, v in triples:
        out.setdefault(q, {})[d] = cast(v)
    return out


def _reference(qrels: dict[str, dict[str, object]], run: dict[str, dict[str, object]]) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    return evaluator.evaluate(run)


def _assert_parity(res: ranklens.Results, expected: dict[str, dict[str, float]]) -> None:
    assert set(res.query_ids) == set(expected)
    for trec_name, ours in MEASURES.items():
        got = res.per_query(ours)
        for q, values in expected.items():
            assert got[q] == pytest.approx(values[trec_name], abs=1e-9), (q, ours)


def _evaluate(qrels: object, run: object, **options: object) -> ranklens.Results:
    with warnings.catch_warnings():  # (the reading notes may be issued as warnings too: checked elsewhere)
        warnings.simplefilter("ignore")
        return ranklens.evaluate(qrels, run, list(MEASURES.values()), **options)


def _msmarco_qrels() -> dict[str, dict[str, object]]:
    return _nest([(f[0], f[2], f[3]) for f in _fields(FORMATS / "msmarco_qrels.dev.tsv", "\t")], int)


# ------------------------------------------------------------------------------------------ MS MARCO


def test_msmarco_qrels_tsv_without_header_is_read_as_trec_qrels() -> None:
    qrels = read_qrels(FORMATS / "msmarco_qrels.dev.tsv")
    assert qrels.to_dict() == _msmarco_qrels()
    assert qrels.notes == (NO_HEADER_QRELS_NOTE,)


def test_msmarco_rank_run_matches_pytrec_eval() -> None:
    path = FORMATS / "msmarco_run.dev.tsv"
    run = read_run(path)
    assert run.notes == ("no header line; " + RANK_NOTE,)
    ranks = [(f[0], f[1], -float(f[2])) for f in _fields(path, "\t")]
    assert run.to_dict() == _nest(ranks)
    # file order is rank order; ties are impossible, so docid order never matters
    assert run.to_arrow().column("doc_id").to_pylist()[:4] == ["7187160", "1000001", "7187158", "9999999"]
    res = _evaluate(FORMATS / "msmarco_qrels.dev.tsv", path)
    _assert_parity(res, _reference(_msmarco_qrels(), _nest(ranks)))
    assert res.per_query("RR") == {"1048585": 1.0, "1048642": 0.2, "524332": 0.5}


def test_msmarco_score_run_matches_pytrec_eval() -> None:
    path = FORMATS / "msmarco_scores.txt"
    run = read_run(path)
    assert run.notes == (SCORE_NOTE,)
    scores = [(f[0], f[1], float(f[2])) for f in _fields(path)]
    assert run.to_dict() == _nest(scores)
    # a tie (13.5, 18.75) is broken as trec_eval breaks it: document id descending
    _assert_parity(_evaluate(FORMATS / "msmarco_qrels.dev.tsv", path), _reference(_msmarco_qrels(), _nest(scores)))


@pytest.mark.parametrize(
    ("text", "is_rank"),
    [
        ("q1 a 1\nq1 b 2\nq1 c 3\nq2 d 1\n", True),  # MS MARCO
        ("q1 a 0\nq1 b 1\nq2 d 0\n", True),  # 0-based ranks
        ("q1 a 1\nq1 b 3\nq1 c 7\n", True),  # gaps, as after filtering
        ("q1 a 1\nq2 b 1\nq1 c 2\nq2 d 2\n", True),  # interleaved queries: counted down each query
        ("q1 a 3\nq1 b 2\nq1 c 1\n", False),  # falls: a score
        ("q1 a 1\nq1 b 1\n", False),  # repeats: a score (ties)
        ("q1 a 2\nq1 b 3\n", False),  # does not start at 0 or 1
        ("q1 a 1\nq1 b 2.5\n", False),  # not whole numbers
        ("q1 a 1.0\nq1 b 2.0\n", True),  # whole numbers, however they are written
        ("q1 a 1\nq1 b 2\nq2 c 5\n", False),  # one query breaks the rule: all are scores
    ],
)
def test_rank_or_score_rule(tmp_path: Path, text: str, is_rank: bool) -> None:
    path = tmp_path / "r.txt"
    path.write_text(text)
    run = read_run(path)
    assert run.notes == ((RANK_NOTE,) if is_rank else (SCORE_NOTE,))
    values = [(f[0], f[1], (-float(f[2]) if is_rank else float(f[2]))) for f in _fields(path)]
    assert run.to_dict() == _nest(values)


def test_msmarco_format_can_be_forced(tmp_path: Path) -> None:
    ascending = tmp_path / "r.tsv"
    ascending.write_text("q1\ta\t1\nq1\tb\t2\n")
    assert read_run(ascending, format="msmarco").notes == (RANK_NOTE,)
    # forced score: higher first, no note
    score = read_run(ascending, format="msmarco-score")
    assert score.to_dict() == {"q1": {"a": 1.0, "b": 2.0}} and score.notes == ()
    # forced rank: rows in any order, ranks need only be distinct whole numbers
    shuffled = tmp_path / "s.txt"
    shuffled.write_text("q1 b 2\nq1 a 1\nq1 c 10\n")
    rank = read_run(shuffled, format="msmarco-rank")
    assert rank.to_dict() == {"q1": {"b": -2.0, "a": -1.0, "c": -10.0}} and rank.notes == ()
    assert read_run(shuffled).notes == (SCORE_NOTE,)  # (sniffed: it does not count up)
    # qrels: MS MARCO qrels are TREC qrels
    assert read_qrels(FORMATS / "msmarco_qrels.dev.tsv", format="msmarco").notes == ()
    assert read_qrels(FORMATS / "msmarco_qrels.dev.tsv", format="msmarco").to_dict() == _msmarco_qrels()


@pytest.mark.parametrize(
    ("text", "fmt", "kind", "expected"),
    [
        ("q1 a 1\nq1 b 1\n", "msmarco-rank", "run",
         "{p}:2: rank 1 appears twice for query 'q1' (first at line 1); a rank orders the documents: give each its own"),
        ("q1 a 1\nq1 b 2.5\n", "msmarco-rank", "run", "{p}:2: expected a whole-number rank (0, 1, 2, …) in column 3, got '2.5'"),
        ("q1 a 1\nq1 b -1\n", "msmarco-rank", "run", "{p}:2: expected a whole-number rank (0, 1, 2, …) in column 3, got '-1'"),
        ("q1 a 1\nq1 b\n", "msmarco", "run", "{p}:2: expected 3 columns (qid docid rank/score), got 2"),
        ("q1 a x\n", "msmarco", "run", "{p}:1: expected a number in column 3 (rank/score), got 'x'"),
        ("q1 a nan\n", "msmarco", "run", "{p}:1: score is NaN (1 row(s) in all); give every document a number"),
        ("q1 0 a 1\n", "msmarco-rank", "qrels",
         "{p}: msmarco-rank is a run format; MS MARCO qrels are TREC qrels: use format trec or msmarco"),
        # forced trec is trec_eval's format: 6 columns
        ("q1 Q0 d1 1 2.0\n", "trec", "run", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("q1 d1 1\n", "trec", "run", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 3"),
    ],
)
def test_forced_layout_errors(tmp_path: Path, text: str, fmt: str, kind: str, expected: str) -> None:
    path = tmp_path / "in.txt"
    path.write_text(text)
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(FormatError) as info:
        reader(path, format=fmt)
    assert str(info.value) == expected.format(p=path)


def test_msmarco_writers_round_trip(tmp_path: Path) -> None:
    from ranklens.data import write_qrels, write_run

    run = read_run({"q1": {"a": 2.0, "b": 2.0, "c": 5.0}, "q2": {"x": 1.0}})
    write_run(run, tmp_path / "r.tsv", format="msmarco")
    # trec_eval's order: score descending, ties by document id descending
    assert (tmp_path / "r.tsv").read_text() == "q1\tc\t1\nq1\tb\t2\nq1\ta\t3\nq2\tx\t1\n"
    back = read_run(tmp_path / "r.tsv")
    assert back.notes == ("no header line; " + RANK_NOTE,)
    assert back.to_dict() == {"q1": {"c": -1.0, "b": -2.0, "a": -3.0}, "q2": {"x": -1.0}}
    write_run(run, tmp_path / "s.txt", format="msmarco-score")
    assert (tmp_path / "s.txt").read_text() == "q1\tc\t5\nq1\tb\t2\nq1\ta\t2\nq2\tx\t1\n"
    assert read_run(tmp_path / "s.txt", format="msmarco-score").to_dict() == run.to_dict()
    qrels = read_qrels(FORMATS / "msmarco_qrels.dev.tsv")
    write_qrels(qrels, tmp_path / "q.tsv", format="msmarco")
    assert (tmp_path / "q.tsv").read_text().splitlines()[0] == "1048585\t0\t7187158\t1"
    assert read_qrels(tmp_path / "q.tsv").to_dict() == qrels.to_dict()
    with pytest.raises(FormatError, match=r"q\.tsv: msmarco-rank is a run format; write MS MARCO qrels with format msmarco$"):
        write_qrels(qrels, tmp_path / "q.tsv", format="msmarco-rank")


def test_standard_input_is_sniffed_unless_the_format_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = (FORMATS / "run_no_tag.trec").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert read_run("-").notes == (NO_TAG_NOTE,)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(FormatError, match=r"^<stdin>:1: expected 6 columns \(qid Q0 docid rank score tag\), got 5$"):
        read_run("-", format="trec")


# ------------------------------------------------------------------------------------- 5-column TREC


def test_trec_run_without_tag_matches_pytrec_eval() -> None:
    path = FORMATS / "run_no_tag.trec"
    run = read_run(path)
    assert run.notes == (NO_TAG_NOTE,)
    assert run.name == "run_no_tag"
    triples = [(f[0], f[2], float(f[4])) for f in _fields(path)]
    assert run.to_dict() == _nest(triples)
    qrels = _nest([(f[0], f[2], f[3]) for f in _fields(FORMATS / "qrels.txt")], int)
    _assert_parity(_evaluate(FORMATS / "qrels.txt", path), _reference(qrels, _nest(triples)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # not a 5-column run: the second column is not Q0/0, the rank is not whole, the score not a number
        ("q1 d1 1 2.5 t\n", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1.5 2\n", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1 t\n", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1 2.0 \n", "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),  # empty tag
        # a 5-column run stays 5 columns
        ("q1 Q0 d1 1 2\nq1 Q0 d2 2 1 t\n", "{p}:2: expected 5 columns (qid Q0 docid rank score), got 6"),
        ("q1 Q0 d1 1 2\nq1 Q0 d2 2 x\n", "{p}:2: expected a number in column 5 (score), got 'x'"),
        ("q1 Q0 d1 1 2\nq1 Q0 d1 2 1\n",
         "{p}:2: document 'd1' appears twice for query 'q1' (first at line 1); 1 duplicate row(s) in all. "
         "A ranking lists each document once: remove the duplicates"),
    ],
)
def test_five_column_sniffing_is_strict(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert str(info.value) == expected.format(p=path)


def test_headerless_tsv_runs_and_swaps(tmp_path: Path) -> None:
    six = tmp_path / "six.tsv"
    six.write_text("q1\tQ0\td1\t1\t2.5\tbm25\n")
    run = read_run(six)
    assert run.name == "bm25" and run.notes == ("no header line: read as a TREC run (qid Q0 docid rank score tag)",)
    five = tmp_path / "five.tsv"
    five.write_text("q1\tQ0\td1\t1\t2.5\n")
    assert read_run(five).notes == ("no header line; " + NO_TAG_NOTE,)
    # a run TSV given as qrels, and a qrels TSV given as a run, still say so
    with pytest.raises(FormatError, match=r"six\.tsv:1: expected 4 columns .* did you swap QRELS and RUN\?$"):
        read_qrels(six)
    with pytest.raises(FormatError, match=r"msmarco_qrels\.dev\.tsv:1: expected 6 columns .* did you swap QRELS and RUN\?$"):
        read_run(FORMATS / "msmarco_qrels.dev.tsv")
    # forced tsv needs its header, and says what the file looks like
    with pytest.raises(FormatError) as info:
        read_qrels(FORMATS / "msmarco_qrels.dev.tsv", format="tsv")
    assert str(info.value).endswith(
        "; the first line must be a header naming the columns (it looks like TREC qrels: use --qrels-format trec, "
        "format= in Python)"
    )


# ---------------------------------------------------------------------------------- BEIR, recommenders


def test_beir_qrels_score_is_the_label() -> None:
    qrels = read_qrels(FORMATS / "beir_qrels.tsv")
    rows = _rows(FORMATS / "beir_qrels.tsv")
    expected_qrels = _nest([(r["query-id"], r["corpus-id"], r["score"]) for r in rows], int)
    assert qrels.to_dict() == expected_qrels and qrels.notes == ()
    run = json.loads((FORMATS / "beir_run.json").read_text())
    _assert_parity(_evaluate(FORMATS / "beir_qrels.tsv", FORMATS / "beir_run.json"), _reference(expected_qrels, run))


def test_recommender_columns_match_pytrec_eval() -> None:
    ratings = _rows(FORMATS / "ratings.csv")
    predictions = _rows(FORMATS / "predictions.csv")
    qrels = _nest([(r["userId"], r["movieId"], r["rating"]) for r in ratings], int)
    run = _nest([(r["user_id"], r["item_id"], r["prediction"]) for r in predictions])
    assert read_qrels(FORMATS / "ratings.csv").to_dict() == qrels
    assert read_run(FORMATS / "predictions.csv").to_dict() == run
    _assert_parity(_evaluate(FORMATS / "ratings.csv", FORMATS / "predictions.csv"), _reference(qrels, run))


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("user_id,item_id,rating", "qrels"),
        ("userId,movieId,rating", "qrels"),
        ("user,item,relevance", "qrels"),
        ("UserID,ItemID,label", "qrels"),
        ("query-id,corpus-id,score", "qrels"),
        ("user_id,item_id,grade", "qrels"),
        ("user_id,item_id,prediction", "run"),
        ("userId,movieId,score", "run"),
        ("query-id,corpus-id,score", "run"),
    ],
)
def test_aliases(tmp_path: Path, header: str, kind: str) -> None:
    path = tmp_path / f"{kind}.csv"
    path.write_text(f"{header}\nu1,i1,3\n")
    if kind == "qrels":
        assert read_qrels(path).to_dict() == {"u1": {"i1": 3}}
    else:
        assert read_run(path).to_dict() == {"u1": {"i1": 3.0}}


def test_score_is_a_label_in_qrels_and_a_score_in_runs(tmp_path: Path) -> None:
    both = {"query_id": ["q1"], "doc_id": ["d1"], "relevance": [2], "score": [0.5]}
    assert read_qrels(both).to_dict() == {"q1": {"d1": 2}}  # relevance wins over score in qrels
    assert read_run(both).to_dict() == {"q1": {"d1": 0.5}}
    only_score = {"query_id": ["q1"], "doc_id": ["d1"], "score": [1]}
    assert read_qrels(only_score).to_dict() == {"q1": {"d1": 1}}
    assert read_run(only_score).to_dict() == {"q1": {"d1": 1.0}}


# ------------------------------------------------------------------------------- explicit column maps

QRELS_MAP = {"member": "query_id", "sku": "doc_id", "stars": "relevance"}
RUN_MAP = {"member": "query", "sku": "doc", "pred": "score"}


def _custom() -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]]]:
    qrels = _nest([(r["member"], r["sku"], r["stars"]) for r in _rows(FORMATS / "custom_qrels.csv")], int)
    run = _nest([(r["member"], r["sku"], r["pred"]) for r in _rows(FORMATS / "custom_run.jsonl")])
    return qrels, run


def _as(kind: str, where: str, tmp_path: Path) -> object:
    """The custom qrels or run as a file of another format or as an in-memory object."""
    import polars as pl

    path = FORMATS / ("custom_qrels.csv" if kind == "qrels" else "custom_run.jsonl")
    rows = _rows(path)
    value = "stars" if kind == "qrels" else "pred"
    table = pa.table({
        "member": [r["member"] for r in rows],
        "sku": [r["sku"] for r in rows],
        value: [int(r[value]) if kind == "qrels" else float(r[value]) for r in rows],
        "other": list(range(len(rows))),
    })
    if where == "file":
        return path
    if where == "parquet":
        out = tmp_path / f"{kind}.parquet"
        pq.write_table(table, out)
        return out
    if where == "tsv":
        out = tmp_path / f"{kind}.tsv"
        lines = ["\t".join(table.column_names)] + ["\t".join(str(v) for v in row.values()) for row in table.to_pylist()]
        out.write_text("\n".join(lines) + "\n")
        return out
    if where == "jsonl":
        out = tmp_path / f"{kind}.jsonl"
        out.write_text("".join(json.dumps(row) + "\n" for row in table.to_pylist()))
        return out
    if where == "csv":
        out = tmp_path / f"{kind}.csv"
        lines = [",".join(table.column_names)] + [",".join(str(v) for v in row.values()) for row in table.to_pylist()]
        out.write_text("\n".join(lines) + "\n")
        return out
    if where == "pandas":
        return table.to_pandas()
    if where == "polars":
        return pl.from_arrow(table)
    if where == "arrow":
        return table
    assert where == "dict"
    return table.to_pydict()


@pytest.mark.parametrize("where", ["file", "csv", "tsv", "jsonl", "parquet", "pandas", "polars", "arrow", "dict"])
def test_explicit_columns_everywhere(tmp_path: Path, where: str) -> None:
    qrels, run = _custom()
    q = read_qrels(_as("qrels", where, tmp_path), columns=QRELS_MAP)
    r = read_run(_as("run", where, tmp_path), columns=RUN_MAP)
    assert q.to_dict() == qrels and r.to_dict() == run
    expected = _reference(qrels, run)
    _assert_parity(_evaluate(q, r), expected)
    # evaluate() and Evaluator take the maps too
    _assert_parity(
        _evaluate(_as("qrels", where, tmp_path), _as("run", where, tmp_path), qrels_columns=QRELS_MAP, run_columns=RUN_MAP),
        expected,
    )
    ev = ranklens.Evaluator(list(MEASURES.values()), _as("qrels", where, tmp_path), qrels_columns=QRELS_MAP, run_columns=RUN_MAP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_parity(ev(_as("run", where, tmp_path)), expected)


def test_a_map_can_be_partial_and_wins_over_aliases(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("query_id,doc_id,relevance,judge2\nq1,d1,0,2\n")
    assert read_qrels(path, columns={"judge2": "label"}).to_dict() == {"q1": {"d1": 2}}
    assert read_qrels(path).to_dict() == {"q1": {"d1": 0}}


@pytest.mark.parametrize(
    ("kind", "columns", "expected"),
    [
        ("qrels", {"stars": "rating"},
         "{p}: columns=: unknown role 'rating' for column 'stars'; expected one of query_id, doc_id, relevance"),
        ("qrels", {"query_id": "member"},
         ("{p}: columns=: unknown role 'member' for column 'query_id'; expected one of query_id, doc_id, relevance "
          "(columns= maps a column name to its role: did you mean {{'member': 'query_id'}}?)")),
        ("run", {"pred": "relevance"},
         "{p}: columns=: 'relevance' is a role of qrels; a run's value is its score: {{'pred': 'score'}}"),
        ("qrels", {"member": "query", "sku": "query"}, "{p}: columns=: 'member' and 'sku' are both mapped to query_id"),
        ("qrels", {"memb": "query"},
         "{p}:1: column 'memb' (mapped to query_id) not found; found: member, sku, stars, ts; did you mean 'member'?"),
    ],
)
def test_column_map_errors(kind: str, columns: dict[str, str], expected: str) -> None:
    path = FORMATS / "custom_qrels.csv"
    reader = read_qrels if kind == "qrels" else read_run
    with pytest.raises(FormatError) as info:
        reader(path, columns=columns)
    assert str(info.value) == expected.format(p=path)


def test_column_maps_refused_where_columns_have_no_names(tmp_path: Path) -> None:
    for path, reader in ((FORMATS / "qrels.txt", read_qrels), (FORMATS / "run.json", read_run)):
        with pytest.raises(FormatError) as info:
            reader(path, columns={"a": "query_id"})
        fmt = "trec" if path.suffix == ".txt" else "json"
        assert str(info.value) == (
            f"{path}: columns= applies to CSV, TSV, JSON Lines, Parquet and tables, whose columns have names; "
            f"a {fmt} file has none"
        )
    with pytest.raises(FormatError, match=r"^<dict>: columns= applies to .*; a \{qid: \{docid: value\}\} dict has none$"):
        read_qrels({"q1": {"d1": 1}}, columns={"a": "query_id"})
    with pytest.raises(FormatError, match=r"^<run>: columns= applies to .*; a Run has none$"):
        read_run(ranklens.Run.from_dict({"q1": {"d1": 1.0}}, source="<run>"), columns={"a": "query_id"})


def test_missing_columns_say_how_to_map_them(tmp_path: Path) -> None:
    path = FORMATS / "custom_qrels.csv"
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    assert str(info.value) == (
        f"{path}:1: missing columns query_id (or qid, query, q_id, topic, query-id, user_id, userid, user) and "
        "doc_id (or docid, docno, doc, corpus-id, item_id, itemid, movieid, item) and relevance (or rel, label, "
        "grade, rating, score); expected columns query_id, doc_id, relevance; found: member, sku, stars, ts; "
        "map them with --qrels-columns query=COLUMN,doc=COLUMN,label=COLUMN (columns= in Python)"
    )


# ------------------------------------------------------------------------------------------------ CLI


def _cli(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_reads_msmarco_with_one_note_each() -> None:
    qrels, run = FORMATS / "msmarco_qrels.dev.tsv", FORMATS / "msmarco_run.dev.tsv"
    code, out, err = _cli("eval", qrels, run, "-m", "RR", "-f", "tsv", "--per-query")
    assert code == 0, err
    assert f"ranklens: note: {qrels}: {NO_HEADER_QRELS_NOTE}\n" in err
    assert f"ranklens: note: {run}: no header line; {RANK_NOTE}\n" in err
    expected = _reference(_msmarco_qrels(), _nest([(f[0], f[1], -float(f[2])) for f in _fields(run, "\t")]))
    got = {line.split("\t")[1]: float(line.split("\t")[2]) for line in out.splitlines() if line.startswith("RR\t")}
    mean = float(np.mean([v["recip_rank"] for v in expected.values()]))
    assert got == pytest.approx({**{q: v["recip_rank"] for q, v in expected.items()}, "all": mean}, abs=1e-12)
    # --quiet drops the notes
    assert _cli("eval", qrels, run, "-m", "RR", "--quiet")[2] == ""


@pytest.mark.parametrize("streamed", [[], ["--no-stream"]])
def test_cli_five_column_and_msmarco_runs_with_and_without_streaming(streamed: list[str]) -> None:
    code, out, err = _cli("eval", FORMATS / "qrels.txt", FORMATS / "run_no_tag.trec", "-m", "nDCG@3", "-f", "tsv", *streamed)
    assert code == 0, err
    assert NO_TAG_NOTE in err
    assert out == _cli("eval", FORMATS / "qrels.txt", FORMATS / "run.trec", "-m", "nDCG@3", "-f", "tsv")[1]


def test_cli_stream_refuses_other_layouts() -> None:
    code, _, err = _cli("eval", FORMATS / "qrels.txt", FORMATS / "run_no_tag.trec", "--stream")
    assert code == 2
    assert err == (
        f"ranklens: error: {FORMATS / 'run_no_tag.trec'}: streaming reads 6-column TREC runs; this one has 5 "
        "columns (use --no-stream)\n"
    )


def test_cli_formats_can_be_forced() -> None:
    qrels, run = FORMATS / "msmarco_qrels.dev.tsv", FORMATS / "msmarco_run.dev.tsv"
    code, out, err = _cli("eval", qrels, run, "-m", "RR", "-f", "tsv", "--qrels-format", "msmarco", "--run-format", "msmarco-rank")
    assert code == 0, err
    assert "columns:" not in err and "no header" not in err  # forced: nothing sniffed, nothing to say
    assert out == _cli("eval", qrels, run, "-m", "RR", "-f", "tsv", "--quiet")[1]
    code, _, err = _cli("eval", qrels, run, "--run-format", "trec")
    assert code == 2 and "expected 6 columns (qid Q0 docid rank score tag), got 3" in err


@pytest.mark.parametrize("command", ["eval", "compare", "gate"])
def test_cli_column_maps(command: str, tmp_path: Path) -> None:
    qrels, run = _custom()
    ref = _reference(qrels, run)
    mean = float(np.mean([v["ndcg_cut_10"] for v in ref.values()]))
    args = [
        "--qrels-columns", "query=member,doc=sku,label=stars",
        "--run-columns", "query=member,doc=sku,score=pred",
    ]
    q, r = FORMATS / "custom_qrels.csv", FORMATS / "custom_run.jsonl"
    if command == "eval":
        code, out, err = _cli("eval", q, r, "-m", "nDCG@10", "-f", "tsv", *args)
        assert code == 0, err
        assert float(out.split("\t")[2]) == pytest.approx(mean, abs=1e-12)
    elif command == "compare":
        other = tmp_path / "other.jsonl"  # the same run with its scores reversed
        rows = _rows(r)
        preds = [row["pred"] for row in rows][::-1]
        other.write_text("".join(json.dumps({**row, "pred": float(p)}) + "\n" for row, p in zip(rows, preds)))
        code, out, err = _cli("compare", q, r, other, "-m", "nDCG@10", "-f", "json", *args)
        assert code == 0, err
        assert json.loads(out)["rows"][0]["mean_baseline"] == pytest.approx(mean, abs=1e-12)
    else:
        code, out, err = _cli("gate", q, r, "--min", f"nDCG@10={mean - 1e-9}", *args)
        assert code == 0, err
        code, out, err = _cli("gate", q, r, "--min", f"nDCG@10={mean + 1e-9}", *args)
        assert code == 1, err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--qrels-columns", "user=query", "unknown role 'user' in 'user=query'; expected query, doc, label"),
        ("--run-columns", "query=member,label=x", "unknown role 'label' in 'label=x'; expected query, doc, score"),
        ("--run-columns", "query", "expected ROLE=COLUMN pairs separated by commas, got 'query'"),
        ("--qrels-columns", "query=a,query=b", "role 'query' given twice"),
    ],
)
def test_cli_column_map_errors(option: str, value: str, message: str) -> None:
    code, _, err = _cli("eval", FORMATS / "custom_qrels.csv", FORMATS / "custom_run.jsonl", option, value)
    assert code == 2
    assert f"Invalid value for '{option}': {message}" in err


def test_ips_commands_take_a_column_map(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    rows = ["session,user,video,slot,watched"]
    rng = np.random.default_rng(0)
    for page in range(300):
        order = rng.permutation(["a", "b", "c"])
        for slot, item in enumerate(order, 1):
            rows.append(f"{page},u{page % 7},{item},{slot},{int(rng.random() < 0.6 / slot)}")
    log.write_text("\n".join(rows) + "\n")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(
        "\n".join(["impression,query,item,position,click"] + rows[1:]) + "\n"
    )
    mapping = "query=user,item=video,position=slot,click=watched,impression=session"
    code, out, err = _cli("ips", "position-bias", log, "--boot", "0", "--json", "--columns", mapping)
    assert code == 0, err
    assert out == _cli("ips", "position-bias", renamed, "--boot", "0", "--json")[1]
    target = tmp_path / "target.run"
    target.write_text("".join(f"u{u} Q0 {d} {i} {3 - i} t\n" for u in range(7) for i, d in enumerate("cab", 1)))
    code, out, err = _cli("ips", "dcg", log, target, "--boot", "0", "--json", "--columns", mapping)
    assert code == 0, err
    assert out == _cli("ips", "dcg", renamed, target, "--boot", "0", "--json")[1]
    code, _, err = _cli("ips", "dcg", log, target, "--columns", "doc=video")
    assert code == 2 and "unknown role 'doc' in 'doc=video'; expected query, item, position, click, impression, intervention" in err


# ------------------------------------------------------------------------------------------------ docs


def test_inputs_doc_covers_every_format_alias_and_rule() -> None:
    from ranklens.data.io import FORMATS as NAMES
    from ranklens.data.readers import DOC_ALIASES, LABEL_ALIASES, QUERY_ALIASES, SCORE_ALIASES

    text = DOCS.read_text(encoding="utf-8")
    for name in NAMES:
        assert f"`{name}`" in text, name
    for alias in (*QUERY_ALIASES, *DOC_ALIASES, *LABEL_ALIASES, *SCORE_ALIASES):
        assert f"`{alias}`" in text, alias
    for phrase in ("--qrels-columns", "--run-columns", "qrels_columns=", "run_columns=", "columns=", "ranklens: note:"):
        assert phrase in text, phrase
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/inputs.md" in readme
