"""RAG sample files → qrels + run: the golden files of every layout, matching rules, malformed input, the judge hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ranklens
from ranklens.errors import FormatError, InputError
from ranklens.rag import evaluate_rag_file, read_rag
from ranklens.rag.convert import build_rag, load_rag
from ranklens.rag.inputs import parse_samples, sniff_layout
from ranklens.rag.matching import match_sample, normalize

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "rag"
GOLDEN = ["samples.jsonl", "samples_ids.jsonl", "ragas.jsonl", "ragas_ids.json", "llamaindex.jsonl"]
LAYOUT = {"samples.jsonl": "ranklens", "samples_ids.jsonl": "ranklens", "ragas.jsonl": "ragas",
          "ragas_ids.json": "ragas", "llamaindex.jsonl": "llamaindex"}
# q1: relevant at rank 2 of 3; q2: 2 references, relevant at ranks 1 and 3; q3: nothing found
EXPECTED = {
    "P@5": (0.2 + 0.4 + 0) / 3,
    "R@5": 2 / 3,
    "RR": (0.5 + 1 + 0) / 3,
    "nDCG@10": (1 / 1.584962500721156 + 1.5 / (1 + 1 / 1.584962500721156)) / 3,
    "ContextPrecision": (0.5 + (1 + 2 / 3) / 2 + 0) / 3,
    "ContextRecall": 2 / 3,
}


def write(tmp_path: Path, lines: list[object] | str, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    text = lines if isinstance(lines, str) else "".join(json.dumps(x) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_files_of_every_layout_give_the_same_numbers(name: str) -> None:
    assert sniff_layout(str(DATA / name)) == LAYOUT[name]
    res = evaluate_rag_file(DATA / name, ["P@5", "R@5", "RR", "nDCG@10"])
    got = {str(m): v for m, v in zip(res.measures, res.aggregates)}
    assert got == pytest.approx(EXPECTED, abs=1e-12)
    assert res.query_ids == ("q1", "q2", "q3")
    assert "5 retrieved chunks match no reference: unjudged, counted as not relevant" in res.notes


def test_read_rag_returns_qrels_and_run_that_every_measure_takes() -> None:
    qrels, run, notes = read_rag(DATA / "llamaindex.jsonl")
    assert qrels.to_dict() == {"q1": {"P1": 1}, "q2": {"S1": 1, "S2": 1}, "q3": {"E": 1}}
    assert run.to_dict()["q2"] == {"S2": 3.0, "X": 2.0, "S1": 1.0}
    assert run.name == "llamaindex"
    res = ranklens.evaluate(qrels, run, ["AP", "RAnWG(top=1)@2", "Success@1"])
    assert res["Success@1"] == pytest.approx(1 / 3)


def test_text_ids_are_stable_across_files_so_runs_of_two_systems_compare() -> None:
    q_a, run_a, _ = read_rag(DATA / "samples.jsonl")  # upper-cased, spaced-out references
    q_b, run_b, _ = read_rag(DATA / "ragas.jsonl")
    assert q_a.to_dict() == q_b.to_dict()
    assert run_a.to_dict() == run_b.to_dict()


def test_normalize_is_nfkc_casefold_and_collapsed_whitespace() -> None:
    assert normalize("Stra\u00dfe\u2003 \uff21\n") == normalize("STRASSE a")
    assert normalize("café") == normalize("cafe\u0301")


def _one(retrieved: list[object], reference: list[object], **kw: object) -> dict[str, object]:
    return {"query_id": "q", "query": "x", "retrieved": retrieved, "reference": reference, **kw}


def test_contains_rule_credits_chunks_that_hold_or_sit_inside_a_reference(tmp_path: Path) -> None:
    p = write(tmp_path, [_one(["intro. Paris is the capital. more", "capital", "Lyon"], ["paris is the CAPITAL."])])
    exact = load_rag(p)
    assert exact.context["q"] == (0.0, 0.0)
    contains = load_rag(p, match="contains")
    # chunk 1 holds the whole reference; chunk 2 ("capital") sits inside it: both relevant, one credited
    assert contains.context["q"] == (1.0, 1.0)
    (ref_doc,) = contains.qrels.to_dict()["q"]
    assert list(contains.run.to_dict()["q"])[0] == ref_doc
    assert ranklens.evaluate(contains.qrels, contains.run, ["P@3"])["P@3"] == pytest.approx(1 / 3)
    assert "1 retrieved chunk matches only references already matched higher up" in " ".join(contains.notes)


def test_repeated_chunks_and_references(tmp_path: Path) -> None:
    p = write(tmp_path, [_one(["a", "a", "b"], ["A", "a ", "b"])])
    data = load_rag(p)
    assert any("1 reference context repeats" in n for n in data.notes)
    m = match_sample(parse_samples("s", p.read_text())[0])
    assert m.relevant == (True, True, True) and m.credited == (True, False, True)
    # RAGAS-style precision counts the repeat as relevant; the run has it as a distinct, unjudged document
    assert data.context["q"] == (1.0, 1.0)
    assert ranklens.evaluate(data.qrels, data.run, ["P@3"])["P@3"] == pytest.approx(2 / 3)


def test_id_rule_with_bare_strings_and_grades(tmp_path: Path) -> None:
    p = write(tmp_path, [_one(["d2", "d1"], [{"id": "d1", "grade": 3}, "d9"])])
    qrels, run, _ = read_rag(p, match="id")
    assert qrels.to_dict() == {"q": {"d1": 3, "d9": 1}}
    qrels, _, _ = read_rag(p, match="id", grade=2)
    assert qrels.to_dict() == {"q": {"d1": 3, "d9": 2}}


def test_unmatched_chunk_whose_own_id_is_a_reference_id_is_never_relevant_by_accident(tmp_path: Path) -> None:
    p = write(tmp_path, [_one([{"id": "d1", "text": "other text"}], [{"id": "d1", "text": "the text"}])])
    qrels, run, _ = read_rag(p, match="text")
    assert list(run.to_dict()["q"]) == ["d1#1"]
    assert ranklens.evaluate(qrels, run, ["RR"])["RR"] == 0.0


def test_empty_retrieved_scores_zero_and_empty_reference_is_left_out(tmp_path: Path) -> None:
    p = write(tmp_path, [
        {"query_id": "a", "query": "x", "retrieved": [], "reference": ["r"]},
        {"query_id": "b", "query": "x", "retrieved": ["r"], "reference": []},
        {"query_id": "c", "query": "x", "retrieved": ["r"], "reference": ["r"]},
    ])
    res = evaluate_rag_file(p, ["RR"])
    assert res.query_ids == ("a", "c")
    assert res.per_query("RR") == {"a": 0.0, "c": 1.0}
    assert "1 query has an empty retrieved list: scored 0" in res.notes
    assert "1 query has no reference context: left out" in res.notes
    assert res.aggregates[1:] == (0.5, 0.5)  # ContextPrecision, ContextRecall: 0 for the empty list


def test_no_reference_anywhere_is_an_error(tmp_path: Path) -> None:
    p = write(tmp_path, [_one(["a"], [])])
    with pytest.raises(FormatError, match=r"s\.jsonl: expected reference contexts; found none in 1 sample"):
        read_rag(p)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"query": "x", "retrieved": ["a"], "reference": ["a"]}\n{"query": "x", "retrieved": [\n',
         r"s\.jsonl:2: expected a JSON object; found invalid JSON"),
        ('{"query": "x", "retrieved": ["a"]}\n', r"s\.jsonl:1: expected the key 'reference'; found keys query, retrieved"),
        ('{"query": "x", "retrieved": "a", "reference": []}\n', r"s\.jsonl:1: 'retrieved': expected a list; found a string"),
        ('{"query": "x", "retrieved": [3.5], "reference": []}\n', r"'retrieved'\[0\]: expected a string or an object"),
        ('{"query": "x", "retrieved": [""], "reference": []}\n', r"'retrieved'\[0\]: expected a non-empty string"),
        ('{"query": 7, "retrieved": [], "reference": []}\n', r"'query': expected a string; found a number"),
        ('{"retrieved": [], "reference": []}\n', r"expected the key 'query'"),
        ('{"query": "x", "retrieved": [], "reference": [{"id": "a", "grade": "high"}]}\n', r"grade: expected an integer; found a string"),
        ('{"query": "x", "retrieved": [{"grade": 2, "id": "a"}], "reference": []}\n', r"only reference contexts carry a grade"),
        ('{"qid": "1", "doc": "a"}\n', r"s\.jsonl:1: expected the keys of a RAG sample"),
        ('[1, 2]\n', r"s\.jsonl: sample 1: expected a JSON object"),
        ('\n\n', r"s\.jsonl: expected RAG samples"),
        ('{"query_id": "q", "query": "x", "retrieved": [], "reference": ["a"]}\n'
         '{"query_id": "q", "query": "y", "retrieved": [], "reference": ["a"]}\n', r"s\.jsonl:2: query id 'q' appears twice"),
        ('{"user_input": "x", "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["1"], "reference_contexts": ["a"]}\n',
         r"'retrieved_context_ids': expected 2 ids \(one per 'retrieved_contexts' entry\); found 1"),
        ('{"query": "x", "expected_ids": ["a"], "retrieved_ids": [["a"]]}\n', r"'retrieved_ids'\[0\]: expected a string or an object"),
    ],
)
def test_malformed_input_names_file_line_expected_and_found(tmp_path: Path, text: str, message: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(FormatError, match=message):
        read_rag(p)


def test_id_rule_needs_ids_and_text_rule_needs_texts(tmp_path: Path) -> None:
    p = write(tmp_path, [_one([{"id": "a"}], [{"text": "b"}])])
    with pytest.raises(FormatError, match="reference context 1 has no id"):
        read_rag(p, match="id")
    with pytest.raises(FormatError, match="retrieved context 1 has no text"):
        read_rag(p)  # auto: not every entry has an id → text


def test_json_pretty_printed_and_a_forced_layout(tmp_path: Path) -> None:
    p = write(tmp_path, json.dumps([_one(["a"], ["a"])], indent=2), name="s.json")
    assert sniff_layout(str(p)) == "ranklens"
    assert read_rag(p)[0].to_dict() == read_rag(p, layout="ranklens")[0].to_dict()
    with pytest.raises(FormatError, match="sample 1: expected the key 'retrieved_contexts'"):
        read_rag(p, layout="ragas")


def test_judge_hook_grades_unmatched_chunks_and_unjudged_are_counted(tmp_path: Path) -> None:
    p = write(tmp_path, [_one(["Lyon is big", "Paris", "no text here"], ["paris"])])
    calls: list[tuple[str | None, list[str]]] = []

    def judge(query: str | None, texts: list[str]) -> list[int | None]:
        calls.append((query, list(texts)))
        return [2 if "Lyon" in t else None for t in texts]

    data = load_rag(p, judge=judge)
    assert calls == [("x", ["Lyon is big", "no text here"])]
    assert sorted(data.qrels.to_dict()["q"].values()) == [1, 2]
    assert data.unjudged == 1
    assert "the judge graded 1 of 2 retrieved chunks matching no reference; 1 unjudged" in data.notes
    # the reference-based context measures ignore judge labels
    assert data.context["q"] == (0.5, 1.0)
    with pytest.raises(InputError, match="returned 1 grades for 2 texts"):
        load_rag(p, judge=lambda q, t: [1])
    with pytest.raises(InputError, match="expected an integer grade or None"):
        load_rag(p, judge=lambda q, t: ["high"] * len(t))


def test_build_rag_rejects_a_bad_grade() -> None:
    with pytest.raises(InputError, match="grade must be an integer"):
        build_rag(parse_samples("s", json.dumps(_one(["a"], ["a"]))), grade=1.5)  # type: ignore[arg-type]
