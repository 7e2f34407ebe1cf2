"""The format registry (architecture issue 11): one table per kind of file, one detection rule, one error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.data import formats
from ranklens.data.formats import (
    COST_FILES,
    INTENT_FILES,
    KINDS,
    QRELS_FILES,
    REPORT_FILES,
    RESULTS_FILES,
    RUN_FILES,
    SEGMENT_FILES,
    FileKind,
    file_kind,
    unknown_format,
)
from ranklens.errors import FormatError

EVERY_EXTENSION = [(kind, ext, fmt) for kind in KINDS.values() for ext, fmt in kind.extensions.items()]


@pytest.mark.parametrize(("kind", "ext", "fmt"), EVERY_EXTENSION, ids=[f"{k.name}{e}" for k, e, _ in EVERY_EXTENSION])
def test_every_registered_extension_resolves(kind: FileKind, ext: str, fmt: str) -> None:
    assert fmt in kind.formats
    assert kind.detect(f"dir/file{ext}") == (fmt, False)
    assert kind.detect(f"dir/FILE{ext.upper()}") == (fmt, False)
    if kind.gzip:
        assert kind.detect(f"file{ext}.gz") == (fmt, True)


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_every_format_name_resolves(kind: FileKind) -> None:
    for fmt in kind.formats:
        assert kind.check(fmt.upper() + " ", "x") == fmt
        assert kind.detect("file.unknown", fmt)[0] == fmt


def test_txt_means_one_thing_per_kind_as_documented() -> None:
    assert QRELS_FILES.detect("qrels.txt") == RUN_FILES.detect("run.txt") == ("trec", False)
    assert RESULTS_FILES.detect("results.txt") == ("tsv", False)
    assert REPORT_FILES.detect("report.txt") == ("table", False)
    assert SEGMENT_FILES.detect("segments.txt", text="q1 nav\n") == ("text", False)
    assert SEGMENT_FILES.detect("segments.txt", text=' \n{"q1": "nav"}') == ("json", False)
    for kind in (QRELS_FILES, RUN_FILES, RESULTS_FILES, REPORT_FILES):
        assert ".txt" in (formats.__doc__ or "") and kind.extensions[".txt"] in kind.formats


def test_unknown_extension_is_the_one_error_listing_the_choices() -> None:
    for kind in KINDS.values():
        if kind.default is not None:
            continue  # any name is read (by content or as the default)
        with pytest.raises(FormatError) as info:
            kind.detect("data.xyz")
        message = str(info.value)
        assert message.startswith("data.xyz: unknown file extension '.xyz'; expected one of ")
        assert all(ext in message for ext in kind.extensions) and all(f in message for f in kind.formats)
        assert str(unknown_format(kind, "data.xyz", extension=".xyz")) == message
        with pytest.raises(FormatError, match=r"^noext: no file extension; expected one of "):
            kind.detect("noext")


def test_unknown_format_name_is_the_one_error() -> None:
    for kind in KINDS.values():
        with pytest.raises(FormatError) as info:
            kind.check("nope", "f")
        assert str(info.value) == f"f: unknown format 'nope'; expected one of {', '.join(kind.formats)}"
    with pytest.raises(FormatError, match=r"unknown format 'jsn'.*; did you mean 'json'\?"):
        RUN_FILES.detect("r.run", "jsn")


def test_qrels_and_run_messages_are_unchanged() -> None:
    with pytest.raises(FormatError) as info:
        RUN_FILES.detect("qrels.xlsx")
    assert str(info.value) == (
        "qrels.xlsx: unknown file extension '.xlsx'; expected one of .qrels, .run, .txt, .trec, .json, .jsonl, "
        ".ndjson, .csv, .tsv, .parquet (optionally .gz), or choose the format with format= (one of: trec, msmarco, "
        "msmarco-rank, msmarco-score, json, jsonl, csv, tsv, parquet)"
    )


def test_content_decides_for_the_kinds_without_extensions() -> None:
    assert COST_FILES.detect("costs.csv", text="# c\nsystem\tlatency\n") == ("tsv", False)
    assert COST_FILES.detect("costs.tsv", text="system,latency\n") == ("csv", False)
    assert COST_FILES.detect("costs.any") == ("csv", False)
    assert INTENT_FILES.detect("div.qrels.gz") == ("trec", False)
    assert SEGMENT_FILES.detect("s.json", text="q1 nav") == ("json", False)  # the extension first


def test_strip_name_and_kind_lookup() -> None:
    assert RUN_FILES.strip_name("bm25.run.gz") == "bm25"
    assert RUN_FILES.strip_name("a.b.c") == "a.b.c"
    assert file_kind("segments") is SEGMENT_FILES
    with pytest.raises(ValueError, match="did you mean 'results'"):
        file_kind("result")


def test_a_registry_entry_must_name_its_own_formats() -> None:
    with pytest.raises(ValueError, match="not one of its formats"):
        FileKind("x", ("a",), {".b": "b"})


def test_the_places_that_map_formats_use_the_registry() -> None:
    import ranklens.report as report
    from ranklens.cli import _common, _measure_args
    from ranklens.data import io
    from ranklens.labels import events

    assert io.FORMATS == RUN_FILES.formats and _common.DATA_FORMATS == list(RUN_FILES.formats)
    assert set(_measure_args._PATH_SUFFIXES) == {*RUN_FILES.extensions, ".gz"}
    assert report.FORMATS == REPORT_FILES.formats and dict(report._EXTENSIONS) == dict(REPORT_FILES.extensions)
    assert dict(events._FORMATS) == dict(formats.EVENT_FILES.extensions)


def test_segments_are_read_by_the_registry_rule(tmp_path: Path) -> None:
    from ranklens.data.segments import read_segments

    (tmp_path / "s.tsv").write_text('{"q1": "nav"}')
    (tmp_path / "s.json").write_text("")
    (tmp_path / "s.txt").write_text("q1 nav\n")
    assert read_segments(tmp_path / "s.tsv") == {"q1": "nav"}
    assert read_segments(tmp_path / "s.txt") == {"q1": "nav"}
    with pytest.raises(FormatError, match="no query → segment pair found"):
        read_segments(tmp_path / "s.json")


def test_the_registry_imports_nothing_heavy() -> None:
    code = "import sys, ranklens.data.formats; print(sorted(m for m in sys.modules if m.split('.')[0] in "
    code += "('numpy', 'pyarrow', 'polars', 'pandas')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", ".", "/", "b", "gz", "..", "x.y", "T", "TREC", "\\\\"]), max_size=8).map("".join))
def test_suffixes_are_read_as_pathlib_reads_them(path: str) -> None:
    """formats reads a name's suffixes without importing pathlib; they are PurePath's."""
    from pathlib import PurePath

    from ranklens.data.formats import _suffixes

    assert _suffixes(path) == [s.lower() for s in PurePath(path).suffixes]


def test_a_file_kind_is_immutable_and_compares_by_value() -> None:
    from ranklens.data.formats import QRELS_FILES, RUN_FILES, FileKind

    with pytest.raises(AttributeError):
        RUN_FILES.gzip = False  # type: ignore[misc]
    same = FileKind("run", RUN_FILES.formats, dict(RUN_FILES.extensions), gzip=True, unnamed="trec")
    assert same == RUN_FILES and QRELS_FILES != RUN_FILES
    with pytest.raises(ValueError, match="not one of its formats"):
        FileKind("x", ("a",), {".b": "b"})
