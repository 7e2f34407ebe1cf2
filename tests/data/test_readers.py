"""Readers: golden files per format, in-memory inputs, and one exact message per kind of bad input."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.data import Qrels, Run, read_qrels, read_run
from ranklens.data.readers import trec
from ranklens.errors import DuplicateError, FormatError

FORMATS = Path(__file__).resolve().parent / "formats"

QRELS = {
    "q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0},
    "q2": {"dA": 1, "dB": 0, "dC": 0},
    "q3": {"x1": 2, "x2": -1},
}
RUN = {
    "q1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0},
    "q2": {"dA": 1.0, "dB": 1.0, "dC": 1.0},
    "q3": {"x3": 0.001, "y9": -math.inf},
}


# ------------------------------------------------------------------------------------------- golden


@pytest.mark.parametrize(
    "name",
    ["qrels.txt", "qrels_tabs.qrels", "qrels.txt.gz", "qrels.json", "qrels.jsonl", "qrels.csv", "qrels.tsv",
     "qrels.parquet"],
)
def test_golden_qrels(name: str) -> None:
    qrels = read_qrels(FORMATS / name)
    assert qrels.to_dict() == QRELS
    assert qrels.source == str(FORMATS / name)


@pytest.mark.parametrize(
    ("name", "run_name"),
    [
        ("run.trec", "bm25"),
        ("run_irregular.trec", "bm25"),
        ("run.trec.gz", "bm25"),
        ("run.json", "run"),
        ("run.jsonl", "run"),
        ("run.csv", "run"),
        ("run.csv.gz", "run"),
        ("run.tsv", "run"),
        ("run.parquet", "run"),
    ],
)
def test_golden_run(name: str, run_name: str) -> None:
    run = read_run(FORMATS / name)
    assert run.to_dict() == RUN
    assert run.name == run_name


def test_run_keeps_file_order() -> None:
    run = read_run(FORMATS / "run.trec")
    assert run.to_arrow().column("doc_id").to_pylist() == ["d1", "d2", "d3", "d4", "d5", "dC", "dB", "dA", "x3", "y9"]


def test_name_argument_wins_over_tag() -> None:
    assert read_run(FORMATS / "run.trec", name="mine").name == "mine"


def test_name_defaults_to_stem(tmp_path: Path) -> None:
    path = tmp_path / "dense.v2.csv.gz"
    path.write_bytes(gzip.compress(b"qid,docno,score\nq1,d1,1\n"))
    assert read_run(path).name == "dense.v2"


def test_mixed_tags_use_the_first(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 2 first\nq1 Q0 d2 2 1 second\n")
    assert read_run(path).name == "first"


def test_format_argument_overrides_extension(tmp_path: Path) -> None:
    path = tmp_path / "results.dat"
    path.write_bytes((FORMATS / "run.trec").read_bytes())
    assert read_run(path, format="trec").to_dict() == RUN
    assert read_run(str(path), format="TREC").to_dict() == RUN


def test_gzip_recognised_by_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes((FORMATS / "run.trec.gz").read_bytes())
    assert read_run(path).to_dict() == RUN


def test_gzipped_parquet(tmp_path: Path) -> None:
    path = tmp_path / "qrels.parquet.gz"
    path.write_bytes(gzip.compress((FORMATS / "qrels.parquet").read_bytes()))
    assert read_qrels(path).to_dict() == QRELS


def test_utf8_ids_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes("\ufeffq1 Q0 café 1 2 t\nq1 Q0 naïve 2 1 t\n".encode())
    assert read_run(path).to_dict() == {"q1": {"café": 2.0, "naïve": 1.0}}


def test_trec_scores(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1e-3 t\nq1 Q0 b 2 -inf t\nq1 Q0 c 3 +1.5 t\nq1 Q0 d 4 -2E2 t\nq1 Q0 e 5 .5 t\n")
    assert read_run(path).to_dict() == {"q1": {"a": 0.001, "b": -math.inf, "c": 1.5, "d": -200.0, "e": 0.5}}


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 d1 1\r\nq1 0 d2 0\r\n")
    assert read_qrels(path).to_dict() == {"q1": {"d1": 1, "d2": 0}}


def test_comment_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("# judged by NIST\nq1 0 d#1 1\n   # second thoughts\nq1 0 d2 x\n")
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:4: expected an integer relevance label in column 4 (rel), got 'x'"
    path.write_text("# judged by NIST\nq1 0 d#1 1\n   # second thoughts\nq1 0 d2 0\n")
    assert read_qrels(path).to_dict() == {"q1": {"d#1": 1, "d2": 0}}


def test_blank_lines_keep_line_numbers_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("\nq1 Q0 d1 1 2 t\n   \n\nq1 Q0 d1 2 1 t\n")
    with pytest.raises(DuplicateError) as info:
        read_run(path)
    assert str(info.value).startswith(f"{path}:5: document 'd1' appears twice for query 'q1' (first at line 2)")


# ------------------------------------------------------------ TREC: the fast paths agree with the reference


_token = st.text(alphabet="abcXYZ019._-é", min_size=1, max_size=4)
_separator = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(_token, _token, st.floats(allow_nan=False, width=32)), min_size=1, max_size=12),
    separators=st.lists(_separator, min_size=5, max_size=5),
    edges=st.lists(st.sampled_from(["", " ", "\t", "\r"]), min_size=2, max_size=2),
    blank=st.sampled_from(["", "\n", " \n", "\t\n", "# a comment\n", "  #q1 Q0 d 1 2 t\n"]),
)
def test_any_whitespace_layout_reads_like_split(rows, separators, edges, blank) -> None:  # type: ignore[no-untyped-def]
    seen = set()
    lines = []
    expected: dict[str, dict[str, float]] = {}
    for i, (q, d, s) in enumerate(rows):
        if (q, d) in seen:
            continue
        seen.add((q, d))
        sep = separators[i % 5]
        fields = [q, "Q0", d, str(i + 1), repr(float(s)), "tag"]
        line = edges[0].replace("\r", "") + sep.join(fields) + edges[1]
        lines.append(line + "\n" + (blank if i % 2 else ""))
        expected.setdefault(q, {})[d] = float(s)
    data = "".join(lines).encode()
    columns = trec.read_run(data, "x.trec")
    reference = trec._scan(data, "x.trec", trec._RUN)
    assert columns.query_id.to_pylist() == reference.query_id.to_pylist()
    assert columns.doc_id.to_pylist() == reference.doc_id.to_pylist()
    assert np.array_equal(np.asarray(columns.value), np.asarray(reference.value))
    got_lines = columns.line_numbers if columns.line_numbers is not None else np.arange(1, len(reference.line_numbers) + 1)
    assert np.array_equal(got_lines, reference.line_numbers)
    run = Run.from_arrays(columns.query_id, columns.doc_id, columns.value)
    assert run.to_dict() == expected


@pytest.mark.parametrize("irregular", [False, True])
def test_large_file_line_numbers(tmp_path: Path, irregular: bool) -> None:
    """Several parser blocks and normalising chunks: the line of a late error is still exact."""
    n, bad_row = 120_000, 119_990
    sep = " \t " if irregular else " "
    physical: list[str] = []
    bad_line = 0
    for i in range(n):
        score = "nan" if i == bad_row else f"{i / 7:.6f}"
        physical.append(sep.join((f"q{i // 1000}", "Q0", f"doc{i}", str(i % 1000 + 1), score, "run")))
        if i == bad_row:
            bad_line = len(physical)
        if irregular and i % 3 == 0:
            physical.append("  ")  # blank lines: rows and lines differ
    path = tmp_path / "big.trec"
    path.write_text("\n".join(physical) + "\n")
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:{bad_line}: score is NaN (1 row(s) in all); give every document a number"
    path.write_text("\n".join(physical).replace(" nan ", " 1 ").replace("\tnan\t", "\t1\t") + "\n")
    run = read_run(path)
    assert len(run) == n and run.num_queries == n // 1000


# ------------------------------------------------------------------------------------------- bad input


def _message(error: pytest.ExceptionInfo[FormatError]) -> str:
    text = str(error.value)
    assert "\n" not in text, "messages are one line"
    return text


@pytest.mark.parametrize(
    ("name", "reader", "expected"),
    [
        ("bad_columns.run", read_run, "{p}:4: expected 6 columns (qid Q0 docid rank score tag), got 5"),
        ("bad_score.run", read_run, "{p}:2: expected a number in column 5 (score), got 'high'"),
        ("nan_score.run", read_run, "{p}:2: score is NaN (1 row(s) in all); give every document a number"),
        (
            "duplicate.run",
            read_run,
            ("{p}:3: document 'd1' appears twice for query 'q1' (first at line 1); 1 duplicate row(s) in all. "
            "A ranking lists each document once: remove the duplicates"),
        ),
        ("bad_label.qrels", read_qrels, "{p}:2: expected an integer relevance label in column 4 (rel), got '2.5'"),
        (
            "duplicate.qrels",
            read_qrels,
            ("{p}:3: document 'd1' is judged twice for query 'q1' (first at line 1); 1 duplicate pair(s) in all. "
            "Remove the duplicates"),
        ),
        ("empty.run", read_run, "{p}: expected at least one line (qid Q0 docid rank score tag), got an empty file"),
        ("binary.run", read_run, "{p}:2: expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)"),
        (
            "latin1.run",
            read_run,
            "{p}:2: expected UTF-8 text, found byte 0xe9 (is this a binary file, or text in another encoding?)",
        ),
        (
            "qrels_as_run.run",
            read_run,
            ("{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 4; this looks like a qrels file "
            "(qid iter docid rel); did you swap QRELS and RUN?"),
        ),
        (
            "run.trec",
            read_qrels,
            ("{p}:1: expected 4 columns (qid iter docid rel), got 6; this looks like a run file "
            "(qid Q0 docid rank score tag); did you swap QRELS and RUN?"),
        ),
        (
            "run.xyz",
            read_run,
            ("{p}: unknown file extension '.xyz'; expected one of .qrels, .run, .txt, .trec, .json, .jsonl, .ndjson, "
            ".csv, .tsv, .parquet (optionally .gz), or choose the format with format= (one of: "
            "trec, msmarco, msmarco-rank, msmarco-score, json, jsonl, csv, tsv, parquet)"),
        ),
        ("missing.run", read_run, "{p}: no such file"),
        ("bad_score.json", read_run, "{p}:1: query 'q1', document 'd2': expected a number (score), got \"high\""),
        (
            "missing_column.csv",
            read_run,
            ("{p}:1: missing column score (or sim, prediction); expected columns query_id, doc_id, score; "
             "found: qid, docno, rank; map it with --run-columns score=COLUMN (columns= in Python); a column of "
             "positions (1 = first) is mapped with --run-columns rank=rank"),
        ),
        ("not_parquet.parquet", read_run, "{p}: expected a Parquet file: "),
    ],
)
def test_bad_golden_files(name: str, reader, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = FORMATS / name
    with pytest.raises(FormatError) as info:
        reader(path)
    message = _message(info)
    if expected.endswith(": "):
        assert message.startswith(expected.format(p=path))
    else:
        assert message == expected.format(p=path)


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


# Each case: (file name, content, reader, expected message with {p} for the path).
BAD_INPUT = [
    # TREC runs, fast path (single spaces), irregular path (tabs and runs of spaces) and the error scan
    ("r.trec", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 t\n", "run", "{p}:2: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("r.trec", "q1\tQ0  d1 1 2 t\n\nq1 Q0 d2 2 1\n", "run",
     "{p}:3: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("r.trec", "q1 Q0  d1 2 t\n", "run",
     "{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 5"),
    ("r.trec", "q1,Q0,d1,1,2,t\n", "run",
     ("{p}:1: expected 6 columns (qid Q0 docid rank score tag), got 1; the line has commas: "
     "is this a CSV file? (use --run-format csv, format= in Python)")),
    ("r.trec", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1_0 t\n", "run", "{p}:2: expected a number in column 5 (score), got '1_0'"),
    ("r.trec", "q1\tQ0\td1\t1\tNaN\tt\n", "run", "{p}:1: score is NaN (1 row(s) in all); give every document a number"),
    ("r.trec", " \n\t\n", "run", "{p}: expected at least one line (qid Q0 docid rank score tag), got an empty file"),
    # TREC qrels
    ("q.txt", "q1 0 d1 1\nq1 0 d2\n", "qrels", "{p}:2: expected 4 columns (qid iter docid rel), got 3"),
    ("q.txt", "q1 0 d1 1\nq1 0 d2 high\n", "qrels",
     "{p}:2: expected an integer relevance label in column 4 (rel), got 'high'"),
    ("q.txt", "q1 0 d1 1e0\n", "qrels", "{p}:1: expected an integer relevance label in column 4 (rel), got '1e0'"),
    ("q.txt", "", "qrels", "{p}: expected at least one line (qid iter docid rel), got an empty file"),
    ("q.txt", b"\x1f\x8bnot really gzip", "qrels", "{p}: expected gzip-compressed data, but it is corrupt or truncated"),
    ("q.txt.gz", "q1 0 d1 1\n", "qrels", "{p}: expected gzip-compressed data (the name ends in .gz), got uncompressed bytes"),
    # JSON (dict form)
    ("r.json", '{"q1": {"d1": 1,\n "d2": }}', "run", "{p}:2: expected JSON {{query_id: {{doc_id: score}}}}: Expecting value (column 8)"),
    ("r.json", '{"q1": {"d1": 1}}\n{"q2": {"d1": 1}}\n', "run",
     ("{p}:2: expected JSON {{query_id: {{doc_id: score}}}}: Extra data (column 1); this looks like JSON Lines "
     "(one object per line): use a .jsonl name or --run-format jsonl, format= in Python")),
    ("r.json", '[{"query_id": "q1"}]', "run", "{p}:1: expected a JSON object {{query_id: {{doc_id: score}}}}, got a list"),
    ("r.json", '{"q1": [1, 2]}', "run", "{p}:1: query 'q1': expected an object {{doc_id: score}}, got a list"),
    ("r.json", '{"q1": {"d1": 1},\n "q2": {"d1": 2,\n  "d2": NaN}}', "run",
     "{p}:3: query 'q2', document 'd2': score is NaN; give every document a number"),
    ("r.json", '{"q1": {"d1": true}}', "run", "{p}:1: query 'q1', document 'd1': expected a number (score), got true"),
    ("r.json", '{"q1": {"d1": 1,\n  "d1": 2}}', "run",
     "{p}:2: document 'd1' appears twice for query 'q1'; list each document once"),
    ("r.json", '{"q1": {"d1": 1},\n "q1": {"d2": 2}}', "run", "{p}:2: query 'q1' appears twice; list each query once"),
    ("r.json", "{}", "run", "{p}: expected at least one (query, document) pair, got none"),
    ("r.json", "", "run", "{p}: expected at least one line, got an empty file"),
    ("q.json", '{"q1": {"d1": 2.5}}', "qrels",
     "{p}:1: query 'q1', document 'd1': expected an integer relevance label, got 2.5"),
    ("q.json", '{"q1": {"d1": "2"}}', "qrels",
     "{p}:1: query 'q1', document 'd1': expected an integer relevance label, got \"2\""),
    ("q.json", b'{"q1": {"d1": 1}}\x00', "qrels",
     "{p}:1: expected UTF-8 text, found a NUL byte (is this a binary or compressed file?)"),
    # JSON Lines
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": "q1", "doc_id": "d2"}\n', "run",
     ("{p}:2: missing key score (or sim, prediction); expected keys query_id, doc_id, score; found: query_id, doc_id; "
      "map it with --run-columns score=COLUMN (columns= in Python)")),
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n{"query_id": "q1", "doc_id": "d2", "score": "x"}\n',
     "run", "{p}:3: expected a number (score), got \"x\""),
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": "q1", "doc_id": "d2", "score": 1\n',
     "run", "{p}:2: expected a JSON object per line: Expecting ',' delimiter (column 46)"),
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n[1, 2]\n', "run",
     "{p}:2: expected a JSON object per line, got a list"),
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": "q1", "doc_id": "d2", "score": NaN}\n',
     "run", "{p}:2: score is NaN; give every document a number"),
    ("r.jsonl", '{"query_id": "q1", "doc_id": null, "score": 1}\n', "run",
     "{p}:1: expected a document id (doc_id) string, got null"),
    ("r.jsonl", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n{"query_id": "q1", "doc_id": "d1", "score": 2}\n',
     "run",
     ("{p}:3: document 'd1' appears twice for query 'q1' (first at line 1); 1 duplicate row(s) in all. "
     "A ranking lists each document once: remove the duplicates")),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "relevance": 2.5}\n', "qrels",
     "{p}:1: expected an integer relevance label, got 2.5"),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "sim": 2}\n', "qrels",
     ("{p}:1: missing key relevance (or rel, label, grade, rating, score); expected keys query_id, doc_id, relevance; "
     "found: query_id, doc_id, sim; this looks like run data: did you swap QRELS and RUN?")),
    ("q.jsonl", "\n\n", "qrels", "{p}: expected at least one line, got an empty file"),
    # CSV / TSV
    ("r.csv", "qid,docno\nq1,d1\n", "run",
     ("{p}:1: missing column score (or sim, prediction); expected columns query_id, doc_id, score; found: qid, docno; "
      "map it with --run-columns score=COLUMN (columns= in Python)")),
    ("r.csv", "q1,d1,2.5\nq1,d2,1\n", "run",
     ("{p}:1: missing columns query_id (or qid, query, q_id, topic, query-id, user_id, userid, user) and doc_id (or "
     "docid, docno, doc, corpus-id, item_id, itemid, movieid, item) and score (or sim, prediction); expected "
     "columns query_id, doc_id, score; found: q1, d1, 2.5; the first line must be a header naming the columns")),
    ("r.csv", "qid,docno,score\nq1,d1,1\n\nq1,d2\n", "run",
     "{p}:4: expected 3 fields as in the header (qid,docno,score), got 2"),
    ("r.csv", "qid,docno,score\nq1,d1,1\nq1,d2,abc\n", "run", "{p}:3: expected a number in column 3 (score), got 'abc'"),
    ("r.csv", "qid,docno,score\nq1,d1,1\nq1,,2\n", "run",
     "{p}:3: expected a document id in column 2 (docno), got an empty value"),
    ("r.csv", "qid,docno,score\nq1,d1,1\n\nq1,d2,nan\n", "run",
     "{p}:4: score is NaN (1 row(s) in all); give every document a number"),
    ("r.csv", "qid,docno,score\n", "run", "{p}:1: expected at least one row after the header, got none"),
    ("r.csv", "", "run", "{p}: expected at least one line, got an empty file"),
    ("q.csv", "qid,docno,rel\nq1,d1,1\nq1,d2,2.5\n", "qrels",
     "{p}:3: expected an integer relevance label in column 3 (rel), got '2.5'"),
    ("q.csv", "qid,docno,rel\nq1,d1,1\nq1,d1,0\n", "qrels",
     ("{p}:3: document 'd1' is judged twice for query 'q1' (first at line 2); 1 duplicate pair(s) in all. "
     "Remove the duplicates")),
    ("r.tsv", "qid\tdocno\tscore\nq1\td1\t1\nq1\td2 2\n", "run",
     "{p}:3: expected 3 fields as in the header (qid\tdocno\tscore), got 2"),
    ("r.tsv", "qid\tdocno\tscore\nq1\td1\t1\nq1\td2\t\n", "run",
     "{p}:3: expected a number in column 3 (score), got ''"),
    ("q.tsv", b"qid\tdocno\trel\nq1\td\xff\t1\n", "qrels",
     "{p}:2: expected UTF-8 text, found byte 0xff (is this a binary file, or text in another encoding?)"),
    # format selection
    ("r", "q1 Q0 d1 1 2 t\n", "run",
     ("{p}: no file extension; expected one of .qrels, .run, .txt, .trec, .json, .jsonl, .ndjson, .csv, .tsv, "
     ".parquet (optionally .gz), or choose the format with format= (one of: trec, msmarco, "
     "msmarco-rank, msmarco-score, json, jsonl, csv, tsv, parquet)")),
]


@pytest.mark.parametrize(("name", "content", "kind", "expected"), BAD_INPUT)
def test_bad_input(tmp_path: Path, name: str, content: str | bytes, kind: str, expected: str) -> None:
    path = _write(tmp_path, name, content)
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(FormatError) as info:
        reader(path)
    message = _message(info)
    full = expected.format(p=path)
    if "gzip-compressed data, but" in full:
        assert message.startswith(full)
    else:
        assert message == full


def test_unknown_extension_suggests(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.jsn", "{}")
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert _message(info).endswith("csv, tsv, parquet); did you mean '.json'?")


def test_unknown_format_argument_suggests(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.trec", "q1 Q0 d1 1 2 t\n")
    with pytest.raises(FormatError) as info:
        read_run(path, format="jsn")
    assert _message(info) == (
        f"{path}: unknown format 'jsn'; expected one of trec, msmarco, msmarco-rank, msmarco-score, json, jsonl, csv, "
        "tsv, parquet; did you mean 'json'?"
    )


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_qrels(tmp_path)
    assert _message(info) == f"{tmp_path}: expected a file, got a directory"


def test_errors_are_value_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        read_run(tmp_path / "nope.run")


# --------------------------------------------------------------------------------------- Parquet


def _parquet(tmp_path: Path, table: pa.Table) -> Path:
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    return path


def test_parquet_integer_ids_and_extra_columns(tmp_path: Path) -> None:
    path = _parquet(tmp_path, pa.table({"qid": [301, 301], "docno": ["d1", "d2"], "rank": [1, 2], "sim": [2.0, 1]}))
    assert read_run(path).to_dict() == {"301": {"d1": 2.0, "d2": 1.0}}


def test_parquet_null_value(tmp_path: Path) -> None:
    path = _parquet(tmp_path, pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, None]}))
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert _message(info) == f"{path}:2: expected a score in column 'score', got null"


def test_parquet_missing_column(tmp_path: Path) -> None:
    path = _parquet(tmp_path, pa.table({"query_id": ["q1"], "doc_id": ["d1"], "sim": [1.0]}))
    with pytest.raises(FormatError) as info:
        read_qrels(path)
    assert _message(info) == (
        f"{path}: missing column relevance (or rel, label, grade, rating, score); expected columns query_id, doc_id, "
        "relevance; found: query_id, doc_id, sim; this looks like run data: did you swap QRELS and RUN?"
    )
    # 'score' alone is a label in qrels (BEIR's query-id, corpus-id, score)
    beir = _parquet(tmp_path, pa.table({"query-id": ["q1"], "corpus-id": ["d1"], "score": [2]}))
    assert read_qrels(beir).to_dict() == {"q1": {"d1": 2}}


def test_parquet_empty_and_duplicates(tmp_path: Path) -> None:
    empty = _parquet(tmp_path, pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                                         "score": pa.array([], pa.float64())}))
    with pytest.raises(FormatError) as info:
        read_run(empty)
    assert _message(info) == f"{empty}: expected at least one row, got none"
    dup = _parquet(tmp_path, pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1, 2]}))
    with pytest.raises(DuplicateError) as dinfo:
        read_qrels(dup)
    assert str(dinfo.value).startswith(f"{dup}:2: document 'd1' is judged twice for query 'q1' (first at line 1)")


def test_parquet_empty_id(tmp_path: Path) -> None:
    path = _parquet(tmp_path, pa.table({"query_id": ["q1", "q1"], "docno": ["d1", ""], "score": [1.0, 2.0]}))
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert _message(info) == f"{path}:2: expected a document id in column 'docno', got an empty value"


def test_parquet_empty_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "e.parquet", b"")
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert _message(info).startswith(f"{path}: expected a Parquet file")


# ---------------------------------------------------------------------------------- in-memory inputs


def _frame_rows() -> dict[str, list[object]]:
    return {"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d1"], "score": [2.0, 1.0, 0.5], "rel": [2, 0, 1]}


EXPECTED_RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}}
EXPECTED_QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}


def test_pandas_frame() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_frame_rows())
    run = read_run(frame, name="x")
    assert run.to_dict() == EXPECTED_RUN and run.name == "x" and run.source == "<pandas.DataFrame>"
    assert read_qrels(frame).to_dict() == EXPECTED_QRELS


def test_pandas_categorical_and_integer_ids() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": pd.Categorical(["a", "a"]), "doc_id": [10, 9], "score": [1, 2]})
    assert read_run(frame).to_dict() == {"a": {"10": 1.0, "9": 2.0}}


def test_pandas_bad_value_names_row() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "score": [1.0, "high"]})
    with pytest.raises(FormatError) as info:
        read_run(frame)
    assert _message(info) == "<pandas.DataFrame>:2: score must be a number, got 'high'"


def test_pandas_missing_id_names_row() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"qid": ["a", None, "b"], "doc_id": ["x", "y", "z"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(FormatError) as info:
        read_run(frame)
    assert _message(info) == "<pandas.DataFrame>:2: expected a query id in column 'qid', got null"


def test_polars_frame() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(_frame_rows())
    assert read_run(frame).to_dict() == EXPECTED_RUN
    assert read_qrels(frame.lazy()).to_dict() == EXPECTED_QRELS


def test_arrow_table_and_batch() -> None:
    table = pa.table(_frame_rows())
    assert read_run(table).to_dict() == EXPECTED_RUN
    assert read_qrels(table.to_batches()[0]).to_dict() == EXPECTED_QRELS


def test_jsonl_integer_ids(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.jsonl", '{"qid": 301, "docno": "d1", "score": 1}\n{"qid": "302", "docno": 7, "score": 2}\n')
    assert read_run(path).to_dict() == {"301": {"d1": 1.0}, "302": {"7": 2.0}}


def test_dicts() -> None:
    assert read_run({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}}).to_dict() == EXPECTED_RUN
    assert read_qrels({"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}).to_dict() == EXPECTED_QRELS
    assert read_run(_frame_rows()).to_dict() == EXPECTED_RUN
    assert read_qrels(_frame_rows()).to_dict() == EXPECTED_QRELS


def test_containers_pass_through() -> None:
    run = Run.from_dict(EXPECTED_RUN, name="a")
    qrels = Qrels.from_dict(EXPECTED_QRELS)
    assert read_run(run) is run
    assert read_run(run, name="b").name == "b"
    assert read_qrels(qrels) is qrels


def test_swapped_containers() -> None:
    with pytest.raises(FormatError) as info:
        read_run(Qrels.from_dict(EXPECTED_QRELS))
    assert _message(info) == "<dict>: expected a run, got a Qrels; did you swap QRELS and RUN?"
    with pytest.raises(FormatError) as info2:
        read_qrels(Run.from_dict(EXPECTED_RUN))
    assert _message(info2) == "<dict>: expected qrels, got a Run; did you swap QRELS and RUN?"


def test_frame_missing_columns() -> None:
    table = pa.table({"query": ["q1"], "document": ["d1"], "score": [1.0]})
    with pytest.raises(FormatError) as info:
        read_run(table)
    assert _message(info) == (
        "<pyarrow.Table>: missing column doc_id (or docid, docno, doc, corpus-id, item_id, itemid, movieid, item); "
        "expected columns query_id, doc_id, score; found: query, document, score; map it with --run-columns "
        "doc=COLUMN (columns= in Python)"
    )


def test_unsupported_object() -> None:
    with pytest.raises(FormatError) as info:
        read_run(42)
    assert _message(info) == (
        "<builtins.int>: expected a path, a Qrels/Run, a dict, a pandas or polars DataFrame or an Arrow table, got int"
    )


def test_no_optional_library_imported_by_readers() -> None:
    import subprocess
    import sys

    code = "import sys, ranklens.data; print('pandas' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_jsonl_names_a_broken_line_before_an_earlier_nan(tmp_path: Path) -> None:
    """As every reader, JSON Lines says what is wrong with the syntax of any line before a NaN score (found
    by the fuzz tests: the line scan said the NaN of line 1 and never got to line 3); a NaN alone is
    still named with its line."""
    broken = tmp_path / "r.jsonl"
    broken.write_text(
        '{"query_id": "q1", "doc_id": "d2", "score": NaN}\n{"query_id": "q1", "doc_id": "d1", "score": 1.5}\n'
        '"query_id": "q2", "doc_id": "e1", "score": 1.0}\n'
    )
    with pytest.raises(FormatError, match=r"r\.jsonl:3: expected a JSON object per line"):
        read_run(str(broken))
    broken.write_text('{"query_id": "q1", "doc_id": "d1", "score": 1.5}\n{"query_id": "q1", "doc_id": "d2", "score": NaN}\n')
    with pytest.raises(FormatError, match=r"r\.jsonl:2: score is NaN"):
        read_run(str(broken))
