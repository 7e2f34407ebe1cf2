"""Issue 12: the compiled tokenizer of TREC runs (``ranklens.data._ctrec``) and the pure reader agree.

Both paths are fed the same bytes: the golden files, every mutation of the fuzz tests (their own
strategies), and random byte strings built from TREC-ish tokens, separators, CR, NUL, non-UTF-8 bytes,
very long lines, missing fields and odd numbers. For each, the columns (ids, scores bit for bit, line
numbers, tag, count of lines with extra words) must be identical, or both must raise the same exception
type with the same message and the same line. ``RANKLENS_PURE=1`` selects the pure path.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens.data.readers import check_text, text_end, trec
from ranklens.engine.stream import iter_trec_blocks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fuzz_inputs import LINES, MUTATION, TOKENS, base_file, mutate  # noqa: E402

pytestmark = pytest.mark.skipif(
    trec._ctrec is None,
    reason="ranklens.data._ctrec is not built (no C compiler when ranklens was installed): only the pure path exists",
)

SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
ROOT = Path(__file__).resolve().parents[2]


def _outcome(data: bytes, pure: bool, monkeypatch: pytest.MonkeyPatch, layout: str = "trec") -> tuple:  # type: ignore[type-arg]
    monkeypatch.setenv("RANKLENS_PURE", "1" if pure else "0")
    try:
        c = trec.read_run(data, "r.run", layout=layout)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return ("error", type(e), str(e), getattr(e, "line", None))
    finally:
        monkeypatch.delenv("RANKLENS_PURE")
    q = _strings(c.query_id)
    values = np.asarray(c.value.to_numpy() if hasattr(c.value, "to_numpy") else c.value, dtype=np.float64)
    lines = np.arange(1, len(q) + 1) if c.line_numbers is None else np.asarray(c.line_numbers)
    return ("ok", q, _strings(c.doc_id), values.view(np.int64).tolist(), lines.tolist(), c.tag, c.extra_fields, c.notes)


def _strings(a: object) -> list[str]:
    return list(a.to_pylist())  # type: ignore[attr-defined]


def _compiled_accepts(data: bytes) -> bool:
    try:
        text = check_text(data, "r.run")
    except Exception:  # noqa: BLE001
        return False
    end = text_end(text)
    return end > 0 and not isinstance(trec._ctrec.tokenize_run(text, end), int)


def assert_same(data: bytes, monkeypatch: pytest.MonkeyPatch, layout: str = "trec") -> None:
    pure = _outcome(data, True, monkeypatch, layout)
    compiled = _outcome(data, False, monkeypatch, layout)
    assert compiled == pure, data[:300]


# ------------------------------------------------------------------------------------------ golden files


def _golden() -> list[Path]:
    files = [p for p in sorted((ROOT / "tests" / "data").rglob("*")) if p.is_file() and p.suffix not in (".py", ".pyc")]
    return files + sorted((ROOT / "examples").glob("*.run"))


@pytest.mark.parametrize("path", _golden(), ids=lambda p: str(p.relative_to(ROOT)))
def test_golden_files_read_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    for layout in ("trec", "auto"):
        assert_same(data, monkeypatch, layout)


def test_the_compiled_path_is_taken_for_plain_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    for data in (base_file("trec", "run"), (ROOT / "examples" / "toy_bm25.run").read_bytes(),
                 b"# c\n\nq1\tQ0  d1 1 1.5 t extra words\r\nq2 Q0 d2 1 -2e-3 u\n"):
        assert _compiled_accepts(data)
        assert_same(data, monkeypatch)
    calls = []
    monkeypatch.setattr(trec._ctrec, "tokenize_run", lambda *a: calls.append(a) or 1)
    monkeypatch.setenv("RANKLENS_PURE", "1")
    trec.read_run(base_file("trec", "run"), "r.run")
    assert not calls  # RANKLENS_PURE=1: the compiled tokenizer is not even asked


@pytest.mark.parametrize(
    "data",
    [
        b"q1 Q0 d1 1 2.5\n",  # a missing field
        b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2\n",
        b"q1 Q0 d1 1 high t\n",
        b"q1 Q0 d1 1 1_0 t\n",
        b"q1 Q0 d1 1 0x10 t\n",
        b"q1 Q0 d1 1 nan t\nq1 Q0 d2 2 -nan t\nq1 Q0 d3 3 NaN t\n",
        b"q1 Q0 d1 1 inf t\nq1 Q0 d2 2 -Infinity t\nq1 Q0 d3 3 +INF t\n",
        b"q1 Q0 d1 1 1e400 t\nq1 Q0 d2 2 -1e400 t\nq1 Q0 d3 3 1e-400 t\nq1 Q0 d4 4 4.9e-324 t\n",
        b"q1 Q0 d1 1 " + b"1" + b"0" * 400 + b" t\n",
        b"q1 Q0 d1 1 0.1000000000000000055511151231257827 t\nq1 Q0 d2 2 9007199254740993 t\n",
        b"q1 Q0 d1 1 -0 t\nq1 Q0 d2 2 -0.0 t\nq1 Q0 d3 3 .5 t\nq1 Q0 d4 4 5. t\nq1 Q0 d5 5 +.5e+1 t\n",
        b"q1 Q0 d1 1 . t\n", b"q1 Q0 d1 1 e5 t\n", b"q1 Q0 d1 1 1e t\n", b"q1 Q0 d1 1 1.5\x1c t\n",
        b"q1 Q0 d1 1 2 t\x00\n",
        b"q1 Q0 d\xff 1 2 t\n",
        "q\u00e9 Q0 d\u00a01 1 2 t\n".encode(),
        b"\xef\xbb\xbf\xef\xbb\xbfq1 Q0 d1 1 2 t\n",
        b"# only a comment\n",
        b"\n\n   \n",
        b"q1 Q0 d1 1 2 t\r\n\r\nq1 Q0 d2 2 1 t\r\n",
        b"q1 Q0 d1 1 2 t\rq1 Q0 d2 2 1 t\r",
        b"q1 0 d1 1\nq1 0 d2 0\n",  # a qrels file given as the run
        b"q1,Q0,d1,1,2,t\n",
        b"q1 Q0 d1 1 2 t\n" * 3 + b"x" * 100_000 + b"\n",
        b"q1 Q0 d1 1 2 t " + b"w " * 50_000 + b"\n",
        b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 u\n",  # two tags: the first one is the run's
        b"q1 Q0 d1 1 2\tt\x0bx\x0cy\n",
    ],
)
def test_edge_cases_read_the_same(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    for layout in ("trec", "auto"):
        assert_same(data, monkeypatch, layout)


# ------------------------------------------------------------------------------------------ fuzzing


@settings(max_examples=300, **SETTINGS)
@given(st.lists(MUTATION, min_size=0, max_size=4))
def test_mutations_of_the_fuzz_tests_read_the_same(mutations: list[tuple]) -> None:  # type: ignore[type-arg]
    data = base_file("trec", "run")
    for m in mutations:
        data = mutate(data, m)
    with pytest.MonkeyPatch.context() as mp:
        assert_same(data, mp)


_WORD = st.sampled_from([b"q1", b"q2", b"Q0", b"0", b"d1", b"d7", b"1", b"12", b"bm25", b"#", b"#x", b"-", b"+", b"."])
_NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: repr(f).encode()),
    st.floats(-1e6, 1e6).map(lambda f: f"{f:.4f}".encode()),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: repr(f).encode()),
    st.integers(-(10**30), 10**30).map(lambda i: str(i).encode()),
    st.sampled_from([b"1e400", b"-1e-400", b"1E5", b"1e+05", b".5", b"5.", b"-0", b"00.0100", b"nan", b"-inf",
                     b"Infinity", b"1_0", b"0x1p3", b"9" * 40, b"0." + b"0" * 30 + b"1", b"1.5\x1f", b"\xc2\xa01"]),
)
_SEP = st.sampled_from([b" "] * 12 + [b"\t"] * 4 + [b"  ", b" \t ", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\xa0"])
_NOISE = st.sampled_from([*TOKENS, b"\x00", b"\xff\xfe", b"\xe9", b"x" * 5000])


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    fields = [draw(_WORD), draw(_WORD), draw(_WORD), draw(_WORD), draw(_NUMBER), draw(_WORD)]
    fields += draw(st.lists(_WORD, max_size=2))
    if draw(st.integers(0, 29)) == 0:
        del fields[draw(st.integers(0, len(fields) - 1))]
    if draw(st.integers(0, 39)) == 0:
        fields.insert(draw(st.integers(0, len(fields))), draw(_NOISE))
    parts = [draw(_SEP) if draw(st.integers(0, 7)) == 0 else b""]
    for f in fields:
        parts += [f, draw(_SEP)]
    if draw(st.booleans()):
        parts.pop()
    return b"".join(parts) + draw(st.sampled_from([b"\n", b"\r\n", b"\n", b""]))


@settings(max_examples=400, **SETTINGS)
@given(st.lists(st.one_of(_line(), _line(), _line(), st.sampled_from(LINES).map(lambda b: b + b"\n")), max_size=12))
def test_random_trec_ish_bytes_read_the_same(lines: list[bytes]) -> None:
    data = b"".join(lines)
    with pytest.MonkeyPatch.context() as mp:
        assert_same(data, mp)
        assert_same(data, mp, "auto")


@settings(max_examples=200, **SETTINGS)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_read_the_same(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as mp:
        assert_same(data, mp)


# ------------------------------------------------------------------------------------------ streaming


def _blocks(path: str, pure: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:  # type: ignore[type-arg]
    monkeypatch.setenv("RANKLENS_PURE", "1" if pure else "0")
    out = []
    try:
        for cols, lines, done in iter_trec_blocks(path, block_bytes=64):
            out.append((cols.query_id.to_pylist(), cols.doc_id.to_pylist(), lines.tolist(), done))
    except Exception as e:  # noqa: BLE001
        out.append(("error", type(e), str(e), getattr(e, "line", None)))
    finally:
        monkeypatch.delenv("RANKLENS_PURE")
    return tuple(map(repr, out))


@pytest.mark.parametrize(
    "data",
    [
        base_file("trec", "run"),
        b"# head\n\n" + base_file("trec", "run").replace(b"\n", b"\r\n\n", 3),
        base_file("trec", "run") + b"q9 Q0 d1 1 oops t\n",
        base_file("trec", "run").replace(b" bm25\n", b" bm25 extra\n"),
    ],
)
def test_streamed_blocks_are_the_same(data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(data)
    assert _blocks(str(path), False, monkeypatch) == _blocks(str(path), True, monkeypatch)


@settings(max_examples=300, **SETTINGS)
@given(st.lists(_line(), min_size=1, max_size=6))
def test_random_mostly_plain_runs_read_the_same(lines: list[bytes]) -> None:
    data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    with pytest.MonkeyPatch.context() as mp:
        assert_same(data, mp)


# ------------------------------------------------------- the bit-mask field split of lines up to 64 bytes


def _hashes_agree(data: bytes) -> None:
    from ranklens.data._hashing import string_hash

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKLENS_PURE", "0")
        try:
            c = trec.read_run(data, "r.run")
        except Exception:  # noqa: BLE001 - errors are compared by assert_same
            return
    if c.doc_hash is not None:
        assert c.doc_hash.tolist() == string_hash(c.doc_id).tolist()


@settings(max_examples=300, **SETTINGS)
@given(st.lists(_line(), min_size=1, max_size=8), st.sampled_from([b"\n" * 64, b" " * 70, b"\n \t" * 30]))
def test_random_lines_read_the_same_with_room_after_them(lines: list[bytes], pad: bytes) -> None:
    """Trailing whitespace (not part of the text) puts 64 readable bytes after every line: the bit-mask split
    (lines of at most 64 bytes with 64 bytes of the buffer from their start) is then taken for every line."""
    data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines) + pad
    with pytest.MonkeyPatch.context() as mp:
        assert_same(data, mp)
    _hashes_agree(data)


@pytest.mark.parametrize("width", [11, 62, 63, 64, 65, 66, 127, 128, 129])
@pytest.mark.parametrize("sep", [b" ", b"\t", b"\r", b" \x0b\x0c "])
def test_lines_around_64_bytes_read_the_same(width: int, sep: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    head = sep.join([b"q1", b"Q0", b"d", b"1", b"2.5", b"t"])
    line = head + b"x" * max(0, width - len(head))  # the tag grows to the width
    extra = sep.join([b"q1", b"Q0", b"d2", b"2", b"1.5", b"t", b"more"])
    extra += b"y" * max(0, width - len(extra))
    for data in (line + b"\n", (line + b"\n") * 3 + b"\n" * 80, (extra + b"\n" + line + b"\n") * 2 + b" " * 64):
        assert_same(data, monkeypatch)
        _hashes_agree(data)
