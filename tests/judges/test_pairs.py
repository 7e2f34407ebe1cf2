"""Reading pairs strictly and building them from a pool of runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ranklens.errors import FormatError
from ranklens.judges import Pair, build_pairs, pool, read_corpus, read_pairs, read_topics, write_pairs


def _line(**kw: object) -> str:
    return json.dumps(kw) + "\n"


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("{not json\n", "pairs.jsonl:2: not a JSON object"),
        ("[1, 2]\n", "pairs.jsonl:2: expected a JSON object, got list"),
        (_line(query_id="q1", query="a", doc_id="d2"), "pairs.jsonl:2: missing field 'text'"),
        (_line(query_id="q1", query="a", doc_id=7, text="t"), "pairs.jsonl:2: field 'doc_id' must be a string"),
        (_line(query_id="q1", query="a", doc_id="d1", text="t"), "pairs.jsonl:2: pair (q1, d1) repeats line 1"),
        (_line(query_id="q1", query="b", doc_id="d2", text="t"), "pairs.jsonl:2: query q1 has two different"),
        (_line(query_id="", query="a", doc_id="d2", text="t"), "pairs.jsonl:2: empty query_id"),
        (_line(query_id="q1", query="a", doc_id="d 2", text="t"), "pairs.jsonl:2: query_id and doc_id must have no"),
    ],
)
def test_a_bad_line_names_file_and_line(tmp_path: Path, second: str, message: str) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(_line(query_id="q1", query="a", doc_id="d1", text="t") + second)
    with pytest.raises(FormatError) as err:
        read_pairs(path)
    assert str(err.value).startswith(str(tmp_path / message))


def test_pairs_round_trip(tmp_path: Path) -> None:
    pairs = [Pair("q1", "ndcg", "d1", "ünïcode\ntext"), Pair("q2", "map", "d1", "x")]
    write_pairs(pairs, tmp_path / "p.jsonl")
    assert read_pairs(tmp_path / "p.jsonl") == pairs


def test_the_pool_takes_top_k_per_run_minus_judged(tmp_path: Path) -> None:
    runs = [{"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}}, {"q1": {"c": 5.0, "d": 4.0, "a": 0.0}}]
    assert pool(runs, 2) == {"q1": ["a", "b", "c", "d"], "q2": ["x"]}
    assert pool(runs, 2, judged={"q1": {"a": 1, "c": 0}, "q2": {"x": 2}}) == {"q1": ["b", "d"]}
    assert pool([{"q1": {"a": 1.0, "b": 1.0}}], 1) == {"q1": ["b"]}  # trec_eval's tie order


def test_topics_and_corpus(tmp_path: Path) -> None:
    (tmp_path / "t.tsv").write_text("q1\tfirst query\nq2 no tab\n")
    with pytest.raises(FormatError, match=r"t.tsv:2: expected query_id<TAB>query text"):
        read_topics(tmp_path / "t.tsv")
    (tmp_path / "c.jsonl").write_text(_line(_id="d1", title="T", text="body") + _line(id="d2", contents="c2")
                                      + _line(docid="d3", text="unwanted"))
    assert read_corpus(tmp_path / "c.jsonl", {"d1", "d2"}) == {"d1": "T\nbody", "d2": "c2"}
    with pytest.raises(FormatError, match="no text for 1 pooled document"):
        build_pairs({"q1": ["d9"]}, {"q1": "x"}, {}, "t.tsv", "c.jsonl")
    with pytest.raises(FormatError, match="no topic for 1 pooled query"):
        build_pairs({"q9": ["d1"]}, {"q1": "x"}, {"d1": "t"}, "t.tsv", "c.jsonl")
