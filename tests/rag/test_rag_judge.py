"""The LLM judge fills the labels of retrieved RAG chunks that match no reference (``read_rag(judge=...)``,
``ranklens rag FILE --judge-endpoint …``), against the loopback server of tests/judges, through the same cache: a
rerun sends no request, and the unjudged chunks are counted in the notes."""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.judges import JudgeCache, OpenAIJudge, RagJudge
from ranklens.rag import read_rag


def _fake_module() -> Any:
    path = Path(__file__).resolve().parents[1] / "judges" / "conftest.py"
    spec = importlib.util.spec_from_file_location("ranklens_tests_fake_llm", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAKE = _fake_module()


@pytest.fixture
def llm_server() -> Iterator[Any]:
    """The deterministic OpenAI-compatible server of tests/judges/conftest.py."""
    yield from FAKE._start(FAKE.FakeServer())


SAMPLES = [
    # a good query: the two chunks matching no reference are graded by their [gN] markers
    {"query_id": "q1", "query": "good capital of France?", "reference": ["The capital is Paris, France."],
     "retrieved": ["Paris is the capital. [g3]", "Lyon is a city. [g1]", "The capital is Paris, France."]},
    # the server answers 413: unjudged at once, never retried
    {"query_id": "q2", "query": "too-long question", "retrieved": ["Some text [g2]", "ref two"], "reference": ["ref two"]},
    # no query text: nothing to judge against, unjudged without a request
    {"query_id": "q3", "retrieved": ["no query text [g2]", "ref three"], "reference": ["ref three"]},
]


def _samples(tmp_path: Path, rows: list[dict[str, Any]] = SAMPLES) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _by_rank(run: Any, qid: str) -> list[str]:
    scores = run.to_dict()[qid]
    return sorted(scores, key=lambda d: -scores[d])


def test_read_rag_with_the_judge_and_its_cache(llm_server, tmp_path: Path) -> None:
    path = _samples(tmp_path)
    cache = JudgeCache(tmp_path / "j.sqlite")
    judge = OpenAIJudge(llm_server.url, "test-model", retries=2, backoff=0.0, sleep=lambda s: None)
    hook = RagJudge(judge, cache=cache)
    qrels, run, notes = read_rag(path, judge=hook)
    q1 = _by_rank(run, "q1")
    labels = qrels.to_dict()
    assert labels["q1"] == {q1[0]: 3, q1[1]: 1, q1[2]: 3}  # the reference at the top of the judge's 0-3 scale
    assert len(labels["q2"]) == 1 and len(labels["q3"]) == 1  # the references only
    assert "the judge graded 2 of 4 retrieved chunks matching no reference; 2 unjudged" in notes
    assert llm_server.requests == 3  # q1: 2, q2: 1 (413), q3: none
    assert (hook.asked, hook.from_cache, hook.unjudged, hook.no_query) == (4, 0, 2, 1)

    # a rerun over the same cache: the judged chunks come from it, only the unjudged one is asked again
    again = RagJudge(OpenAIJudge(llm_server.url, "test-model", retries=2, backoff=0.0, sleep=lambda s: None), cache=cache)
    qrels2, _, notes2 = read_rag(path, judge=again)
    assert qrels2.to_dict() == labels and notes2 == notes
    assert llm_server.requests == 4 and (again.from_cache, again.unjudged) == (2, 2)
    cache.close()


def test_retries_then_unjudged_with_exact_accounting(llm_server, tmp_path: Path) -> None:
    rows = [{"query_id": "a", "query": "always-500 x", "retrieved": ["t [g2]", "r"], "reference": ["r"]},
            {"query_id": "b", "query": "malformed-once y", "retrieved": ["u [g2]", "s"], "reference": ["s"]}]
    judge = OpenAIJudge(llm_server.url, "test-model", retries=2, backoff=0.0, sleep=lambda s: None)
    hook = RagJudge(judge)
    qrels, run, notes = read_rag(_samples(tmp_path, rows), judge=hook)
    assert qrels.to_dict()["b"][_by_rank(run, "b")[0]] == 2
    assert len(qrels.to_dict()["a"]) == 1
    assert "the judge graded 1 of 2 retrieved chunks matching no reference; 1 unjudged" in notes
    s = hook.summary()
    assert (s["requests"], s["counters"]["server_errors"], s["counters"]["malformed"], s["unjudged"]) == (5, 3, 1, 1)


def test_cli_judge_flags_and_a_rerun_sends_zero_requests(llm_server, tmp_path: Path) -> None:
    path = _samples(tmp_path, SAMPLES[:1] + SAMPLES[2:])  # no 413 row: a second run has nothing to ask
    cache, qrels_out = tmp_path / "j.sqlite", tmp_path / "rag.qrels"
    args = ["rag", str(path), "--judge-endpoint", llm_server.url, "--judge-model", "test-model",
            "--judge-cache", str(cache), "--qrels-out", str(qrels_out), "-m", "P@3", "-f", "json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "the judge graded 2 of 3 retrieved chunks matching no reference; 1 unjudged" in first.stderr
    assert "judge: 3 chunks asked, 0 from cache, 1 unjudged (1 without a query text), 2 requests" in first.stderr
    assert llm_server.requests == 2
    written = qrels_out.read_text()
    assert sorted(line.split()[-1] for line in written.splitlines()) == ["1", "3", "3", "3"]  # references: 3

    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert llm_server.requests == 2  # all from the cache
    assert "judge: 3 chunks asked, 2 from cache, 1 unjudged (1 without a query text), 0 requests" in second.stderr
    assert qrels_out.read_text() == written and second.stdout == first.stdout


@pytest.mark.parametrize("extra, message", [
    (["--judge-endpoint", "http://127.0.0.1:9/v1"], "--judge-endpoint URL and --judge-model NAME go together"),
    (["--judge-cache", "j.sqlite"], "go together"),
])
def test_cli_judge_flags_need_each_other(tmp_path: Path, extra: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["rag", str(_samples(tmp_path)), *extra])
    assert res.exit_code == 2 and message in res.output


def test_cli_judge_flags_are_refused_for_qrels_and_runs(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    res = CliRunner().invoke(cli, ["rag", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "--judge-model", "m"])
    assert res.exit_code == 2 and "--judge-model applies to RAG sample files" in res.stderr
    assert res.stderr.count("\n") == 1


def _json_values(stdout: str, measure: str) -> dict[str, float]:
    result = json.loads(stdout)["runs"][0]
    return {q: v[measure] for q, v in result["per_query"].items()}


def test_references_sit_at_the_top_of_the_judge_scale(llm_server, tmp_path: Path) -> None:
    # "hit" retrieved its gold passage first, then a distractor the judge grades 3; "miss" only the distractor
    rows = [{"query_id": "hit", "query": "good gold first", "reference": ["the gold passage"],
             "retrieved": ["the gold passage", "a distractor [g3]"]},
            {"query_id": "miss", "query": "good gold never", "reference": ["another gold passage"],
             "retrieved": ["another distractor [g3]"]}]
    args = ["rag", str(_samples(tmp_path, rows)), "--judge-endpoint", llm_server.url, "--judge-model", "m",
            "-m", "nDCG@10", "-q", "-f", "json", "--no-context"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    values = _json_values(res.stdout, "nDCG@10")
    # references get grade 3 (the top of the judge's 0-3 scale), as the distractor:
    #   hit:  DCG = 3/log2(2) + 3/log2(3) = IDCG                    -> 1.0
    #   miss: DCG = 3/log2(2) = 3; IDCG = 3 + 3/log2(3) = 4.892789  -> 0.613147
    # (with references at grade 1 they were 2.892789/3.630930 = 0.796706 and 3/3.630930 = 0.826234)
    assert values["hit"] == pytest.approx(1.0)
    assert values["miss"] == pytest.approx(3 / (3 + 3 / math.log2(3)))
    assert "references graded 3, the top of the judge's scale 0..3 (ranklens-graded-0-3/v1)" in res.stderr


def test_a_judge_scale_file_sets_the_reference_grade(llm_server, tmp_path: Path) -> None:
    scale = tmp_path / "five.toml"
    scale.write_text('version = "five/v1"\nmin = 1\nmax = 5\nrubric = "5 = perfect ... 1 = off topic"\n')
    rows = [{"query_id": "q1", "query": "good x", "reference": ["gold"], "retrieved": ["gold", "y [g4]"]}]
    out = tmp_path / "rag.qrels"
    res = CliRunner().invoke(cli, ["rag", str(_samples(tmp_path, rows)), "--judge-endpoint", llm_server.url,
                                   "--judge-model", "m", "--judge-scale", str(scale), "--qrels-out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(line.split()[-1] for line in out.read_text().splitlines()) == ["4", "5"]
    assert "references graded 5, the top of the judge's scale 1..5 (five/v1)" in res.stderr


def test_a_grade_below_the_judge_scale_top_is_refused(llm_server, tmp_path: Path) -> None:
    args = ["rag", str(_samples(tmp_path)), "--judge-endpoint", llm_server.url, "--judge-model", "m", "--grade", "1"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "references graded 1 (--grade)" in res.stderr and "0..3" in res.stderr
    assert llm_server.requests == 0
    ok = CliRunner().invoke(cli, [*args[:-1], "3"])
    assert ok.exit_code == 0, ok.output


def test_a_reference_grade_off_the_judge_scale_is_refused(llm_server, tmp_path: Path) -> None:
    rows = [{"query_id": "q1", "query": "good x", "reference": [{"text": "gold", "grade": 5}], "retrieved": ["gold", "y [g2]"]}]
    res = CliRunner().invoke(cli, ["rag", str(_samples(tmp_path, rows)), "--judge-endpoint", llm_server.url,
                                   "--judge-model", "m"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "samples.jsonl:1" in res.stderr and "grade 5" in res.stderr and "0..3" in res.stderr


def test_cli_judge_runs_chunks_concurrently_with_the_judge_run_options(llm_server, tmp_path: Path) -> None:
    # two queries whose chunks are held by the server until a second request is in flight: only a run that asks
    # the chunks of several queries at once gets them answered without the server's 3 s fallback
    rows = [{"query_id": f"q{i}", "query": f"gather {i}", "reference": [f"gold {i}"],
             "retrieved": [f"chunk {i} [g2]", f"gold {i}"]} for i in range(2)]
    rows.append({"query_id": "q9", "query": "server-error z", "reference": ["gold z"], "retrieved": ["c [g1]", "gold z"]})
    cache = tmp_path / "j.sqlite"
    args = ["rag", str(_samples(tmp_path, rows)), "--judge-endpoint", llm_server.url, "--judge-model", "m",
            "--judge-cache", str(cache), "--judge-concurrency", "4", "--judge-rpm", "6000", "--judge-tpm", "10000000",
            "--judge-retries", "1", "--judge-timeout", "20", "--judge-backoff", "0.01", "-m", "P@2", "-f", "json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert llm_server.max_in_flight >= 2
    # server-error answers 500 twice: with --judge-retries 1 the chunk is unjudged after 2 requests (default: 3)
    assert llm_server.by_query["server-error z"] == 2 and llm_server.requests == 4
    assert "judge: 3 chunks asked, 0 from cache, 1 unjudged (0 without a query text), 4 requests" in first.stderr
    assert "retries: 1" in first.stderr and "5xx: 2" in first.stderr
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert llm_server.requests == 5  # only the unjudged chunk is asked again (its 3rd ask succeeds); the rest is cached
    third = CliRunner().invoke(cli, args)
    assert third.exit_code == 0 and llm_server.requests == 5  # a cached rerun sends nothing
    assert "3 from cache" in third.stderr and ", 0 requests" in third.stderr
