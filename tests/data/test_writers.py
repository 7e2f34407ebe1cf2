"""Writers: exact TREC output, and read(write(x)) == x for every format, plain and gzipped."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from ranklens.data import Qrels, Run, read_qrels, read_run, write_qrels, write_run
from ranklens.errors import FormatError

QRELS = Qrels.from_dict(
    {"q1": {"d1": 3, "d2": 0, "d3": 3, "d4": 2, "d5": 0}, "q2": {"dA": 1, "dB": 0, "dC": 0}, "q10": {"x": -1}}
)
RUN = Run.from_dict(
    {
        "q2": {"dA": 1.0, "dB": 1.0, "dC": 1.0},
        "q1": {"d1": 5.0, "d2": 0.1 + 0.2, "d3": -math.inf, "d4": 1e-300, "d5": math.inf, "9": 2.0, "10": 2.0},
        "q3": {"é": 123456789.123456789, "x,y": -0.0, 'say"hi"': 7.0},
    },
    name="bm25",
)

SUFFIXES = [".trec", ".json", ".jsonl", ".csv", ".tsv", ".parquet"]


def test_trec_run_exact_text(tmp_path: Path) -> None:
    run = Run.from_dict({"q1": {"b": 1.0, "a": 1.0, "c": 2.5, "9": 1.0, "10": 1.0}, "q0": {"z": 0.001}}, name="x")
    path = tmp_path / "out.run"
    write_run(run, path)
    # ranks follow trec_eval: score descending, ties by doc id descending (bytewise: "b" > "a" > "9" > "10")
    assert path.read_text() == (
        "q0 Q0 z 1 0.001 x\n"
        "q1 Q0 c 1 2.5 x\n"
        "q1 Q0 b 2 1 x\n"
        "q1 Q0 a 3 1 x\n"
        "q1 Q0 9 4 1 x\n"
        "q1 Q0 10 5 1 x\n"
    )


def test_trec_run_tag_argument(tmp_path: Path) -> None:
    path = tmp_path / "out.trec"
    write_run(Run.from_dict({"q1": {"d": 1.0}}), path, tag="dense")
    assert path.read_text() == "q1 Q0 d 1 1 dense\n"
    assert read_run(path).name == "dense"


def test_trec_qrels_exact_text(tmp_path: Path) -> None:
    path = tmp_path / "out.qrels"
    write_qrels(Qrels.from_dict({"q2": {"b": 1, "a": 0}, "q1": {"z": -1}}), path)
    assert path.read_text() == "q1 0 z -1\nq2 0 a 0\nq2 0 b 1\n"


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_run_round_trip(tmp_path: Path, suffix: str, compressed: bool) -> None:
    path = tmp_path / ("bm25" + suffix + (".gz" if compressed else ""))
    write_run(RUN, path)
    back = read_run(path)
    assert back.to_dict() == RUN.to_dict()
    assert back.name == "bm25"
    if compressed:
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    for q, docs in RUN.to_dict().items():  # bit-exact scores, including the sign of zero
        for d, s in docs.items():
            assert np.float64(back.to_dict()[q][d]).tobytes() == np.float64(s).tobytes()


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".tsv", ".parquet"])
def test_run_round_trip_keeps_row_order(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / ("r" + suffix)
    write_run(RUN, path)
    if suffix == ".json":  # the dict form groups rows by query, in first-seen order
        assert read_run(path).to_dict() == RUN.to_dict()
    else:
        assert read_run(path).to_arrow().equals(RUN.to_arrow())


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("suffix", [".qrels", ".json", ".jsonl", ".csv", ".tsv", ".parquet"])
def test_qrels_round_trip(tmp_path: Path, suffix: str, compressed: bool) -> None:
    path = tmp_path / ("q" + suffix + (".gz" if compressed else ""))
    write_qrels(QRELS, path)
    back = read_qrels(path)
    assert back.to_dict() == QRELS.to_dict()
    assert back.to_arrow().equals(QRELS.to_arrow())


def test_random_scores_round_trip_through_trec(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    scores = rng.standard_normal(2000) * 10.0 ** rng.integers(-300, 300, 2000)
    run = Run.from_arrays(np.repeat(["q1", "q2"], 1000), [f"d{i}" for i in range(2000)], scores)
    path = tmp_path / "r.trec.gz"
    write_run(run, path)
    assert read_run(path).to_dict() == run.to_dict()


def test_format_argument(tmp_path: Path) -> None:
    path = tmp_path / "results.out"
    write_run(RUN, path, format="jsonl")
    assert read_run(path, format="jsonl").to_dict() == RUN.to_dict()


def test_csv_text(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    write_qrels(Qrels.from_dict({"q1": {"d1": 2}}), path)
    assert path.read_text() == '"query_id","doc_id","relevance"\n"q1","d1",2\n'


def test_tsv_text(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    write_run(Run.from_dict({"q1": {"d1": 2.5, "d2": 1e-7}}), path)
    assert path.read_text() == "query_id\tdoc_id\tscore\nq1\td1\t2.5\nq1\td2\t1e-7\n"


def test_gzip_output_is_reproducible(tmp_path: Path) -> None:
    a = tmp_path / "a.trec.gz"
    write_run(RUN, a)
    first = a.read_bytes()
    write_run(RUN, a)
    assert a.read_bytes() == first  # no timestamp in the header
    assert gzip.decompress(a.read_bytes()).decode().startswith("q1 Q0 d5 1 inf bm25\n")


def test_empty_containers(tmp_path: Path) -> None:
    run = Run.from_dict({})
    path = tmp_path / "e.trec"
    write_run(run, path)
    assert path.read_bytes() == b""


# --------------------------------------------------------------------------------------------- errors


def test_whitespace_in_id_cannot_be_written_as_trec(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    run = Run.from_dict({"q1": {"my doc": 1.0}})
    with pytest.raises(FormatError) as info:
        write_run(run, path)
    assert str(info.value) == (
        f"{path}: cannot write document id 'my doc' to a TREC file: TREC columns are separated by whitespace"
    )
    assert list(tmp_path.iterdir()) == []  # nothing left behind, not even a temporary file


def test_existing_file_untouched_when_write_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_text("keep me\n")
    with pytest.raises(FormatError):
        write_run(Run.from_dict({"q1": {"d": 1.0}}), path, tag="two words")
    assert path.read_text() == "keep me\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.trec"]


def test_bad_tag(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        write_run(Run.from_dict({"q1": {"d": 1.0}}), tmp_path / "r.trec", tag="two words")
    assert str(info.value) == (
        f"{tmp_path / 'r.trec'}: cannot write run tag 'two words': a TREC tag must be non-empty, without whitespace"
    )


def test_tab_in_id_cannot_be_written_as_tsv(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    with pytest.raises(FormatError) as info:
        write_qrels(Qrels.from_dict({"q\t1": {"d": 1}}), path)
    assert str(info.value) == f"{path}: cannot write id 'q\\t1': it contains a tab or line break"


def test_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        write_run(RUN, tmp_path / "r.xlsx")
    assert "unknown file extension '.xlsx'" in str(info.value)


def test_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "r.trec"
    with pytest.raises(FormatError) as info:
        write_run(RUN, path)
    assert str(info.value) == f"{path}: cannot write: no such directory '{tmp_path / 'nowhere'}'"
