"""``ranklens synth`` and :func:`ranklens.judges.synthesize` against the loopback server: strict contract, retries,
failed documents, the BM25 round trip and the written files, with exact counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.judges import OpenAIJudge, synthesize
from ranklens.judges.prompt import MalformedVerdict
from ranklens.judges.synth import parse_queries

CORPUS = {
    "cats": "Cats purr when they are content. <<why do cats purr>>",
    "dogs": "Dogs bark at strangers near the house. <<why do dogs bark at strangers>>",
    # its question's words are far more frequent in "pets": the round trip ranks it 2nd
    "mixed": "A note. <<cats dogs>>",
    "pets": "cats cats cats dogs dogs dogs: a shelter for cats and dogs. <<where is the shelter>>",
    "prose": "Tea is brewed from leaves. [synth:prose-once] <<how is tea brewed>>",
    "broken": "Coffee beans are roasted. [synth:always-malformed] <<how are coffee beans roasted>>",
    "flaky": "Bread rises with yeast. [synth:500-once] <<why does bread rise>>",
    "refused": "A very long document. [synth:refuse] <<what is long>>",
    "blank": "   ",
    "short": "Rivers flow to the sea. [synth:wrong-count-once] <<where do rivers flow>>",
}


def _writer(url: str, **kw: object) -> OpenAIJudge:
    return OpenAIJudge(url, "test-model", retries=2, backoff=0.0, timeout=5, sleep=lambda s: None, **kw)  # type: ignore[arg-type]


def test_contract_retries_failures_and_round_trip_with_exact_counts(llm_server) -> None:
    res = synthesize(CORPUS, _writer(llm_server.url), round_trip_k=1)
    got = {q.query_id: (q.query, q.kept, q.rank) for q in res.queries}
    assert got == {
        "cats:q1": ("why do cats purr", True, 1),
        "dogs:q1": ("why do dogs bark at strangers", True, 1),
        "mixed:q1": ("cats dogs", False, 2),
        "pets:q1": ("where is the shelter", True, 1),
        "prose:q1": ("how is tea brewed", True, 1),
        "flaky:q1": ("why does bread rise", True, 1),
        "short:q1": ("where do rivers flow", True, 1),
    }
    assert [d for d, _ in res.failed] == ["broken", "refused", "blank"]
    why = dict(res.failed)
    assert "after 3 attempts" in why["broken"] and "malformed" in why["broken"]
    assert "rejected" in why["refused"] and "blank" in why["blank"]
    # 1 each for cats, dogs, mixed, pets, refused; 2 for prose, flaky, short; 3 for broken; 0 for blank
    assert llm_server.requests == 14
    c = res.usage
    assert (c["requests"], c["retries"], c["malformed"], c["server_errors"], c["rejected"]) == (14, 5, 5, 1, 1)
    s = res.summary()
    assert (s["documents"], s["queries"], s["kept"], s["dropped_by_round_trip"], s["failed_documents"]) == (10, 7, 6, 1, 3)
    assert res.qrels() == {q: {q.split(":")[0]: 1} for q in got if q != "mixed:q1"}
    fmt = llm_server.bodies[0]["response_format"]
    assert fmt["json_schema"]["name"] == "synthetic_queries" and llm_server.bodies[0]["temperature"] == 0


def test_without_round_trip_every_query_is_kept_and_unranked(llm_server) -> None:
    res = synthesize({"cats": CORPUS["cats"], "mixed": CORPUS["mixed"]}, _writer(llm_server.url))
    assert [(q.kept, q.rank) for q in res.queries] == [(True, None), (True, None)]
    assert res.summary()["retriever"] is None


def test_several_queries_per_document_and_the_plain_json_fallback(plain_server) -> None:
    corpus = {"d1": "Owls hunt at night. <<when do owls hunt>> <<what do owls hunt>>",
              "d2": "Only one. <<what is one>>"}
    res = synthesize(corpus, _writer(plain_server.url), per_doc=2, round_trip_k=5)
    assert [q.query_id for q in res.queries] == ["d1:q1", "d1:q2"]
    assert [d for d, _ in res.failed] == ["d2"]  # one question for two asked, three times
    # the first request is refused for response_format and asked again plain; then d2: 3 attempts
    assert plain_server.requests == 5 and res.usage["response_format_refused"] == 1


@pytest.mark.parametrize("content, why", [
    ("not json", "not JSON"), ('["a"]', "expected"), ('{"queries": ["a"], "extra": 1}', "expected"),
    ('{"queries": ["a", 2]}', "non-blank string"), ('{"queries": ["a", " "]}', "non-blank string"),
    ('{"queries": ["Same?", "same?"]}', "repeat"), ('{"queries": ["a", "b", "c"]}', "expected 2 queries"),
])
def test_malformed_answers_are_refused(content: str, why: str) -> None:
    with pytest.raises(MalformedVerdict, match=why):
        parse_queries(content, 2)


def _corpus(path: Path, docs: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in docs.items()))
    return path


def test_cli_writes_queries_qrels_and_summary(llm_server, tmp_path: Path) -> None:
    docs = {k: CORPUS[k] for k in ("cats", "mixed", "pets", "broken")}
    corpus = _corpus(tmp_path / "docs.jsonl", docs)
    out, qrels, summary = tmp_path / "q.jsonl", tmp_path / "synth.qrels", tmp_path / "s.json"
    args = ["synth", str(corpus), "--endpoint", llm_server.url, "--model", "m", "-o", str(out), "--qrels", str(qrels),
            "--round-trip-k", "1", "--retriever", "bm25", "--retries", "1", "--backoff", "0", "--summary", str(summary)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [
        {"query_id": "cats:q1", "query": "why do cats purr", "source_doc_id": "cats", "kept": True, "rank": 1},
        {"query_id": "mixed:q1", "query": "cats dogs", "source_doc_id": "mixed", "kept": False, "rank": 2},
        {"query_id": "pets:q1", "query": "where is the shelter", "source_doc_id": "pets", "kept": True, "rank": 1},
    ]
    assert qrels.read_text() == "cats:q1 0 cats 1\npets:q1 0 pets 1\n"
    s = json.loads(summary.read_text())
    assert (s["queries"], s["kept"], s["failed_documents"], s["requests"]) == (3, 2, 1, 5)
    assert "failed documents: 1" in res.stderr and "failed: broken:" in res.stderr
    # the synthetic set evaluates at once
    run = tmp_path / "bm25.run"
    run.write_text("cats:q1 Q0 cats 1 2.0 r\ncats:q1 Q0 pets 2 1.0 r\npets:q1 Q0 cats 1 2.0 r\npets:q1 Q0 pets 2 1.0 r\n")
    ev = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "RR", "-f", "json"])
    assert ev.exit_code == 0, ev.output
    assert "0.75" in ev.stdout


@pytest.mark.parametrize("extra, message", [
    (["--retriever", "bm25"], "--retriever needs --round-trip-k"),
    (["--per-doc", "0"], "--per-doc"),
])
def test_cli_usage_errors_exit_2(tmp_path: Path, extra: list[str], message: str) -> None:
    corpus = _corpus(tmp_path / "docs.jsonl", {"d": "x"})
    res = CliRunner().invoke(cli, ["synth", str(corpus), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                                   "-o", str(tmp_path / "q.jsonl"), *extra])
    assert res.exit_code == 2 and message in res.output


def test_cli_empty_corpus_is_a_one_line_error(tmp_path: Path) -> None:
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text("\n")
    res = CliRunner().invoke(cli, ["synth", str(corpus), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                                   "-o", str(tmp_path / "q.jsonl")])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "found none" in res.stderr
