"""``ranklens.evaluate`` on data in memory through the one dispatcher (issue 26): the compiled pass takes
``{qid: {doc: value}}`` dicts (walked in C), pandas and polars frames and Arrow tables (their Arrow buffers in
place), gives the whole Results the reference gives (values, notes, options, id types), and declines with a
reason what it does not read beyond doubt; the reference then evaluates it, or says what is wrong.

The values themselves are checked against independent oracles per backend in ``test_backend_parity.py`` and
``tests/measures/test_spec_vectors.py``; here the Results as a whole are compared with the reference's."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import ranklens
from ranklens import memory
from ranklens.errors import FormatError, InputError, RanklensError, RanklensWarning
from ranklens.express import available

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trec_eval"))
import test_differential as gen  # noqa: E402

from backends_under_test import MEMORY_KINDS, as_kind, forced  # noqa: E402

pytestmark = pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")

MEASURES = ["nDCG", "nDCG@5", "DCG@5", "AP", "AP@5", "P@5", "R@10", "RR", "RR@3"]
#: every measure with a cutoff: the compiled pass orders only the first 5 rows of each query (top_rows)
CUT = ["nDCG@5", "DCG@3", "AP@5", "P@5", "R@5", "RR@3", "nDCG@1"]
DECLINES = "RANKLENS_BACKEND=compiled: the compiled backend declines: "


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANKLENS_BACKEND", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_DEBUG"):
        monkeypatch.delenv(name, raising=False)


def on(backend: str, qrels: Any, run: Any, measures: Any = MEASURES, **options: Any) -> ranklens.Results:
    with forced(backend), warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        return ranklens.evaluate(qrels, run, measures, **options)


def same(a: ranklens.Results, b: ranklens.Results) -> None:
    assert a.to_json_dict() == b.to_json_dict()
    assert a.ids == b.ids and a.id_kind == b.id_kind


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collection=gen.collections())
@pytest.mark.parametrize("measures", [MEASURES, CUT], ids=["whole ranking", "cutoffs only"])
@pytest.mark.parametrize("kind", MEMORY_KINDS)
def test_whole_results_equal_the_reference(kind: str, measures: list[str], collection: tuple[dict, dict]) -> None:
    """Run-only queries, qrels queries the run lacks, ties, numeric-looking ids: the same Results (per-query
    values, aggregates, notes, options, run name, id types); a negative label declines, with its reason."""
    qrels, run = collection
    if not set(qrels) & set(run):
        return  # (no query in common: an error, below)
    q, r = as_kind(kind, qrels, "relevance"), as_kind(kind, run, "score")
    if any(lab < 0 for docs in qrels.values() for lab in docs.values()):
        with pytest.raises(InputError, match="^" + DECLINES + f"qrels given as a {kind}: a (key or value|column) it"):
            on("compiled", q, r, measures)
        q = as_kind(kind, {qid: {d: max(lab, 0) for d, lab in docs.items()} for qid, docs in qrels.items()}, "relevance")
    same(on("compiled", q, r, measures), on("reference", q, r, measures))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collection=gen.collections())
@pytest.mark.parametrize("kind", ["dict", "pandas", "arrow"])
def test_a_run_given_a_few_rows_at_a_time(kind: str, collection: tuple[dict, dict], monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs are evaluated ``memory.BLOCK_ROWS`` rows at a time: a frame's query rows carried on to the next
    block, a dict's queries whole in each; with blocks of 3 rows (queries straddle them, some longer than a
    block) the Results are the reference's, and for frames the blocks answered (not the whole-run fallback)
    since these frames hold each query's rows together."""
    qrels, run = collection
    if not set(qrels) & set(run):
        return
    qrels = {qid: {d: max(lab, 0) for d, lab in docs.items()} for qid, docs in qrels.items()}
    answered: list[bool] = []
    by_blocks = memory._by_blocks

    def spy(*args: Any) -> Any:
        got = by_blocks(*args)
        answered.append(got is not None)
        return got

    monkeypatch.setattr(memory, "BLOCK_ROWS", 3)
    monkeypatch.setattr(memory, "_by_blocks", spy)
    q, r = as_kind(kind, qrels, "relevance"), as_kind(kind, run, "score")
    for measures in (MEASURES, CUT):
        same(on("compiled", q, r, measures), on("reference", q, r, measures))
    assert answered == ([] if kind == "dict" else [True, True])


@pytest.mark.parametrize("kind", MEMORY_KINDS)
def test_integer_query_ids_keep_their_type(kind: str) -> None:
    qrels = {1: {"a": 1, "b": 0}, 20: {"c": 2}, 3: {"d": 1}}
    run = {1: {"a": 1.0, "b": 2.0}, 20: {"c": 5, "e": 7}}  # (an int score too)
    q, r = as_kind(kind, qrels, "relevance"), as_kind(kind, run, "score")
    res = on("compiled", q, r, ["RR", "nDCG@10"])
    assert res.id_kind == "int" and res.ids == (1, 20)  # (bytewise order of "1" < "20", as the reference)
    assert res.per_query("RR") == {1: 0.5, 20: 0.5}  # by hand: the relevant document second in both
    same(res, on("reference", q, r, ["RR", "nDCG@10"]))
    assert res.to_pandas().index.tolist() == [1, 20]


def test_mixed_query_ids_are_strings() -> None:
    res = on("compiled", {1: {"a": 1}, "q": {"b": 1}}, {1: {"a": 1.0}, "q": {"b": 1.0}}, ["RR"])
    assert res.id_kind == "str" and res.per_query("RR") == {"1": 1.0, "q": 1.0}


def test_one_query_given_as_1_and_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its rows are one query, as the reference reads them (by hand: the relevant "a" ranks second after
    "b"); in two blocks of a dict's walk the compiled pass declines it instead, and the reference answers."""
    qrels, run = {"1": {"a": 1}}, {1: {"a": 1.0}, "1": {"b": 2.0}}
    expected = on("reference", qrels, run, ["RR"])
    assert expected.per_query("RR") == {"1": 0.5}
    same(on("compiled", qrels, run, ["RR"]), expected)
    monkeypatch.setattr(memory, "BLOCK_ROWS", 1)
    with pytest.raises(InputError, match="declines: run given as a dict: a key or value"):
        on("compiled", qrels, run, ["RR"])
    same(on("", qrels, run, ["RR"]), expected)


def test_the_debug_note_says_the_compiled_backend_ran(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKLENS_DEBUG", "1")
    ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "RR")
    assert capsys.readouterr().err == "ranklens: debug: backend compiled: it declares these measures, policy and inputs\n"
    ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "RR", judged_only=True)
    assert "backend reference: it takes everything (compiled declined: policy judged_only=True" in capsys.readouterr().err


def test_dicts_are_walked_without_the_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """No frame and no Run are built from dicts: the reference's readers are not called (a counter, not a clock)."""
    from ranklens.data.readers import frames

    calls = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        raise AssertionError("the reference's reader was called")

    monkeypatch.setattr(frames, "run_from_object", counted)
    monkeypatch.setattr(frames, "qrels_from_object", counted)
    res = on("compiled", {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 2.0}}, ["RR"])
    assert calls == [0] and res.per_query("RR") == {"q": 0.5}


def test_arrow_buffers_are_read_in_place() -> None:
    import pyarrow as pa

    from ranklens.data.columns import RUN
    from ranklens.memory import _segments

    table = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    batches, segments, int_ids = _segments(table, RUN, [], "run")  # type: ignore[misc]
    assert not int_ids and len(segments) == 1
    for i in range(3):  # (data buffers: the table's own, not copies)
        assert batches[0].column(i).buffers()[-1].address == table.column(i).chunk(0).buffers()[-1].address


# ----------------------------------------------------------------------------------- what it declines

GOOD_Q = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
GOOD_R = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}

#: (qrels, run, the decline's reason, what the reference then does: an error's text, or None: it evaluates)
DECLINED: dict[str, tuple[Any, Any, str, str | None]] = {
    "NaN score": (GOOD_Q, {"q1": {"a": math.nan}}, "run given as a dict: a key or value", "score is NaN"),
    "bool score": (GOOD_Q, {"q1": {"a": True}}, "run given as a dict: a key or value", "expected a number"),
    "string score": (GOOD_Q, {"q1": {"a": "1.5"}}, "run given as a dict: a key or value", None),
    "id with a space": (GOOD_Q, {"q1": {"a b": 1.0, "a": 0.5}}, "run given as a dict: a key or value", None),
    "float label": ({"q1": {"a": 1.5}}, GOOD_R, "qrels given as a dict: a key or value", "expected an integer relevance label"),
    "negative label": ({"q1": {"a": -1, "b": 1}}, GOOD_R, "qrels given as a dict: a key or value", None),
    "a document twice (1 and '1')": (GOOD_Q, {"q1": {1: 1.0, "1": 2.0}}, "run given as a dict: a key or value", "twice"),
    "a later value no dict": (GOOD_Q, {"q1": {"a": 1.0}, "q2": [1.0]}, "run given as a dict: a key or value", "missing columns"),
    "dict of columns": (GOOD_Q, {"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}, "run given as a dict that is not", None),
    "no query in common": (GOOD_Q, {"zz": {"a": 1.0}}, "run given as a dict: no query in common", "no query to evaluate"),
    "a Run": (GOOD_Q, "READ", "run given as ranklens.Run, not a dict, frame or Arrow table", None),
}


@pytest.mark.parametrize("case", list(DECLINED))
def test_declines_with_a_reason_and_the_reference_says(case: str) -> None:
    qrels, run, reason, reference = DECLINED[case]
    if run == "READ":
        run = ranklens.read_run(GOOD_R)
    with pytest.raises(InputError) as declined:
        on("compiled", qrels, run, ["RR"])
    assert str(declined.value).startswith(DECLINES + reason), str(declined.value)
    if reference is None:  # (the reference reads it: the automatic choice gives its Results)
        same(on("", qrels, run, ["RR"]), on("reference", qrels, run, ["RR"]))
    else:
        with pytest.raises(RanklensError, match=reference):
            on("", qrels, run, ["RR"])


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow"])
def test_a_null_in_a_frame_declines_and_the_reference_says(kind: str) -> None:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    frame = pd.DataFrame({"query_id": ["q1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    run = {"pandas": frame, "polars": pl.from_pandas(frame), "arrow": pa.Table.from_pandas(frame)}[kind]
    with pytest.raises(InputError, match="^" + DECLINES + "run: a column with nulls"):
        on("compiled", GOOD_Q, run, ["RR"])
    with pytest.raises(FormatError, match="got null"):
        on("", GOOD_Q, run, ["RR"])
