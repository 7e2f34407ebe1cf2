"""``explain`` on both backends: what the compiled pass records while it evaluates (``_cexpress.trace_queries``)
is the reference kernels' explanation, field for field and bit for bit, for every measure the compiled pass
records (nDCG, DCG, AP, P, RR, R, with and without a cutoff) on generated collections with ties, unjudged
documents, run-only and qrels-only queries — as files, dicts and frames; and the text drawn without rich is
rich's, byte for byte."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens.cli.main import cli
from ranklens.explain import explain
from ranklens.explain.text import _rich_text, plain_text
from ranklens.express import TRACED_MEASURES, available

pytestmark = pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@contextmanager
def backend(name: str) -> Iterator[None]:
    saved = os.environ.get("RANKLENS_BACKEND")
    os.environ["RANKLENS_BACKEND"] = name
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("RANKLENS_BACKEND")
        else:
            os.environ["RANKLENS_BACKEND"] = saved


_SCORES = st.sampled_from(["1", "2.5", "2.5", "0.125", "-3", "7e-1", "1e2"])  # few distinct scores: ties


@st.composite
def collection(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(qrels text, run text, the queries both hold)."""
    qrels, run, both = [], [], []
    for q in range(draw(st.integers(1, 4))):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in range(draw(st.integers(1, 12)))]
        judged = draw(st.lists(st.sampled_from(docs + ["x1", "x2"]), unique=True, max_size=10))
        labels = draw(st.lists(st.integers(0, 3), min_size=len(judged), max_size=len(judged)))
        if draw(st.booleans()) or not judged:
            judged, labels = [*judged, "y"], [*labels, draw(st.integers(0, 3))]
        qrels += [f"{qid} 0 {d} {lab}" for d, lab in zip(judged, labels)]
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        run += [f"{qid} Q0 {d} {r} {draw(_SCORES)} sys" for r, d in enumerate(retrieved, 1)]
        both.append(qid)
    if draw(st.booleans()):  # a query of the run only, and one of the qrels only
        run.append("zz Q0 d00 1 1.0 sys")
        qrels.append("qq 0 d00 1")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", both


MEASURES = [f"{family}{cutoff}" for family in TRACED_MEASURES for cutoff in ("", "@1", "@3", "@20")
            if not (family == "P" and not cutoff)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=collection(), measure=st.sampled_from(MEASURES))
def test_compiled_intermediates_are_the_references(tmp_path: Path, case: tuple[str, str, list[str]], measure: str) -> None:
    qrels_text, run_text, queries = case
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    for query in queries:
        with backend("compiled"):
            compiled = explain(str(qrels), str(run), query, measure)
        with backend("reference"):
            reference = explain(str(qrels), str(run), query, measure)
        assert compiled == reference, (measure, query)
        text = plain_text(compiled)
        assert text is not None and text == _rich_text(reference)


def _dicts(qrels_text: str, run_text: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for line in qrels_text.split("\n"):
        if line:
            q, _, d, label = line.split()
            qrels.setdefault(q, {})[d] = int(label)
    for line in run_text.split("\n"):
        if line:
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, {})[d] = float(score)
    return qrels, run


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=collection(), measure=st.sampled_from(MEASURES), frames=st.booleans())
def test_compiled_intermediates_in_memory_are_the_references(case: tuple[str, str, list[str]], measure: str,
                                                            frames: bool) -> None:
    """The same on ``{qid: {doc: value}}`` dicts and on pandas frames (the in-memory pass: ``ranklens.memory``)."""
    qrels, run = _dicts(case[0], case[1])
    if frames:
        pd = pytest.importorskip("pandas")
        qrels = pd.DataFrame([(q, d, v) for q, docs in qrels.items() for d, v in docs.items()],  # type: ignore[assignment]
                             columns=["query_id", "doc_id", "relevance"])
        run = pd.DataFrame([(q, d, v) for q, docs in run.items() for d, v in docs.items()],  # type: ignore[assignment]
                           columns=["query_id", "doc_id", "score"])
    for query in case[2]:
        with backend("compiled"):
            compiled = explain(qrels, run, query, measure)
        with backend("reference"):
            reference = explain(qrels, run, query, measure)
        assert compiled == reference, (measure, query)


def test_every_traced_family_is_generated() -> None:
    """The generated measures cover every family the compiled pass records (a new one is tested, or fails here)."""
    assert {m.rstrip("@0123456789") for m in MEASURES} == set(TRACED_MEASURES)


def test_the_cli_prints_the_same_bytes_on_both_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["explain", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_dense.run"), "--query", "q3"]
    for measure in ("nDCG@5", "AP", "P@10", "DCG", "RR@3", "R@20"):
        monkeypatch.setenv("RANKLENS_BACKEND", "compiled")
        compiled = CliRunner().invoke(cli, [*args, "-m", measure])
        monkeypatch.setenv("RANKLENS_BACKEND", "reference")
        reference = CliRunner().invoke(cli, [*args, "-m", measure])
        assert compiled.exit_code == reference.exit_code == 0, compiled.output
        assert compiled.stdout == reference.stdout


def test_a_query_the_compiled_pass_did_not_evaluate_is_the_references_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKLENS_DEBUG", "1")
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "toy.qrels"), str(EXAMPLES / "toy_bm25.run"),
                                      "--query", "q99x", "-m", "AP"])
    assert result.exit_code == 2
    assert "query 'q99x' is not in the qrels" in result.stderr
    assert "compiled declined: query 'q99x' is not among the queries it evaluated" in result.stderr


@pytest.mark.parametrize("doc", ["d:smile:", "[bold]d", "d" * 120])
def test_text_rich_would_draw_differently_is_left_to_rich(tmp_path: Path, doc: str) -> None:
    """Markup, emoji codes and tables wider than the console: the plain drawer steps aside, rich draws."""
    (tmp_path / "q.qrels").write_text(f"q 0 {doc} 1\n")
    (tmp_path / "r.run").write_text(f"q Q0 {doc} 1 1.0 s\n")
    e = explain(str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "q", "nDCG@5")
    assert plain_text(e) is None
    assert CliRunner().invoke(cli, ["explain", str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "--query", "q",
                                    "-m", "nDCG@5"]).stdout == _rich_text(e)
