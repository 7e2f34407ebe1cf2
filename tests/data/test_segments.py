"""``read_segments``: one reader of query → segment tables for compare, gate, push and eval --segments.

Every accepted form gives the same mapping; every bad file names the file and the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from ranklens.data.segments import read_segments
from ranklens.errors import FormatError, InputError

EXPECTED = {"q1": "books", "q2": "fashion", "q3": "books"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # today's compare/gate form: `qid segment`, tab, comma or spaces; the segment is the rest of the line
        ("lines.txt", "q1 books\nq2 fashion\nq3 books\n"),
        ("tabs.tsv", "q1\tbooks\nq2\tfashion\nq3\tbooks\n"),
        ("commas.csv", "q1,books\nq2,fashion\nq3,books\n"),
        ("comments.txt", "# query → category\n\nq1   books\n  q2 fashion  \nq3 books\n"),
        # push's form: a JSON object
        ("push.json", json.dumps(EXPECTED)),
        ("push.txt", json.dumps(EXPECTED, indent=2)),  # sniffed from the content, not the extension
        # CSV/TSV with a header naming the columns, in any order, with extra columns ignored
        ("header.csv", "query_id,segment\nq1,books\nq2,fashion\nq3,books\n"),
        ("header.tsv", "category\tqid\tclicks\nbooks\tq1\t10\nfashion\tq2\t3\nbooks\tq3\t7\n"),
        ("group.csv", "Query,Group\nq1,books\nq2,fashion\nq3,books\n"),
        ("quoted.csv", 'topic,category\n"q1","books"\n"q2","fashion"\nq3,books\n'),
        ("bom.tsv", "\ufeffquery_id\tcategory\nq1\tbooks\nq2\tfashion\nq3\tbooks\n"),
        ("crlf.txt", "q1 books\r\nq2 fashion\r\nq3 books\r\n"),
    ],
)
def test_every_file_form_gives_the_same_mapping(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    assert read_segments(path) == EXPECTED
    assert read_segments(str(path)) == EXPECTED


def test_a_segment_may_hold_spaces_and_a_header_may_have_two_unnamed_columns(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("qid cat\nq1 long tail\nq2 head\n")  # `qid` names the query column; the other is the segment
    assert read_segments(path) == {"q1": "long tail", "q2": "head"}
    path.write_text('query_id,segment\nq1,"home, garden"\n')
    assert read_segments(path) == {"q1": "home, garden"}


def test_json_numbers_become_strings(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"1": 7, "2": "x"}')
    assert read_segments(path) == {"1": "7", "2": "x"}


def test_in_memory_forms() -> None:
    assert read_segments(EXPECTED) == EXPECTED
    assert read_segments({1: 2}) == {"1": "2"}
    columns = {"qid": ["q1", "q2", "q3"], "category": ["books", "fashion", "books"]}
    assert read_segments(columns) == EXPECTED
    assert read_segments(pa.table(columns)) == EXPECTED
    assert read_segments(pa.table({"a": ["q1"], "b": ["x"]})) == {"q1": "x"}  # exactly two columns: in order
    pd = pytest.importorskip("pandas")
    assert read_segments(pd.DataFrame(columns)) == EXPECTED
    assert read_segments(pd.Series({"q1": "books", "q2": "fashion", "q3": "books"})) == EXPECTED
    assert read_segments(pd.DataFrame({"query_id": [1, 2], "segment": ["x", None]})) == {"1": "x"}  # null: none
    pl = pytest.importorskip("polars")
    assert read_segments(pl.DataFrame(columns)) == EXPECTED


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("one.txt", "q1 a\nq2\n", "one.txt:2: expected 2 columns (query_id segment), got 'q2'"),
        ("twice.txt", "q1 a\n\nq1 b\n", "twice.txt:3: query 'q1' is in segment 'a' and 'b'"),
        ("empty.txt", "# nothing\n\n", "empty.txt: no query → segment pair found"),
        ("bad.json", '{"q1": "a",\n "q2": }', "bad.json:2: not valid JSON"),
        ("list.json", '["q1", "a"]', "list.json:1: expected a JSON object {query_id: segment}, got a list"),
        ("nested.json", '{"q1": "a",\n "q2": {"x": 1}}', "nested.json:2: segment of query 'q2': expected a non-empty string"),
        ("dup.json", '{"q1": "a",\n "q1": "b"}', "dup.json:2: query 'q1' is in segment 'a' and 'b'"),
        ("blank.json", '{"q1": ""}', "blank.json:1: segment of query 'q1': expected a non-empty string or a number, got ''"),
        ("cols.csv", "query_id,text,n\nq1,hello,3\n", "cols.csv:1: expected a segment column (segment, category or group)"),
        ("short.csv", "query_id,segment,clicks\nq1,a,1\nq2,b\n", "short.csv:3: expected 3 columns (query_id, segment, clicks), got 2"),
        ("void.csv", "query_id,segment\nq1,\n", "void.csv:2: empty segment"),
        ("noquery.tsv", "segment\tclicks\na\t1\n", "noquery.tsv:1: expected a query column (query_id, qid, query"),
        ("binary.txt", "q1 a\n\x00", "binary.txt:2: expected UTF-8 text"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_segments(path)
    assert str(info.value).startswith(f"{path}{message[len(name):]}"), str(info.value)
    assert isinstance(info.value, ValueError)


def test_missing_file_and_bad_objects() -> None:
    with pytest.raises(FormatError, match=r"nope\.tsv: no such file"):
        read_segments("nope.tsv")
    with pytest.raises(InputError, match="expected a file, a {query_id: segment} mapping or a DataFrame"):
        read_segments(42)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="expected a query column"):
        read_segments({"a": ["q1"], "b": ["x"], "c": [1]})
    with pytest.raises(FormatError, match="query 'q1' is in segment 'x' and 'y'"):
        read_segments({"qid": ["q1", "q1"], "segment": ["x", "y"]})


def test_compare_load_segments_still_works(tmp_path: Path) -> None:
    from ranklens.comparison import load_segments

    path = tmp_path / "s.json"
    path.write_text(json.dumps(EXPECTED))
    assert load_segments(path) == EXPECTED
    assert load_segments(None) is None
