"""Issue 27: one language with ir_measures. Every measure string in ir_measures' own documentation and source
(read from the installed package: its README in the package metadata, its docstrings and examples) that names
a measure ranklens has parses to one ranklens measure with the same per-query values as ir_measures computes
on a generated collection; the others are listed in docs/measures-ir_measures.md.

Oracle: ir_measures itself (its pytrec_eval provider and the others installed), never our code."""

from __future__ import annotations

import importlib.metadata
import math
import random
import re
from pathlib import Path

import pytest

import ranklens
from ranklens.errors import MeasureError
from ranklens.measures import parse_many

ir_measures = pytest.importorskip("ir_measures")

DOC = Path(__file__).resolve().parents[2] / "docs" / "measures-ir_measures.md"

#: the spellings the issue names, beside the ones found in the package
ISSUE_STRINGS = (
    "nDCG(dcg='exp-log2')@10", "nDCG(gains={0:0,1:1,2:3})@10", "P(judged_only=True)@10", "IPrec@0.5", "SetR",
    "NumRet(rel=1)", "SetF(beta=1)", "SetF(beta=1.0)", "SetF(beta=0.5)", "ERR@10", "nDCG(dcg='exp-log2')@5", "nDCG(judged_only=True)@5", "AP(rel=2)", "RR(rel=2)@10",
    "R@20", "Success@3", "SetP(relative=True)", "Rprec(rel=2)", "Bpref(rel=2)", "SetAP", "NumRel(rel=2)",
)

_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_.'\"])([A-Za-z_α][A-Za-z0-9_]*(?:\([^()\n]*\))?(?:@[0-9.]+)?)")


def package_measure_strings() -> list[str]:
    """Every string in the installed ir_measures' README (package metadata) and source text that
    ir_measures itself parses as one of its measures, in first-seen order."""
    meta = importlib.metadata.metadata("ir-measures")
    texts = [meta.get_payload() or "", meta.get("Description") or ""]  # type: ignore[attr-defined]
    root = Path(ir_measures.__file__).parent
    texts += [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))]
    names = {m.NAME for m in ir_measures.measures.registry.values()}
    found: dict[str, None] = {}
    for text in texts:
        for s in _CANDIDATE.findall(text):
            if re.match(r"[A-Za-z_α][A-Za-z0-9_]*", s).group(0) not in names:  # type: ignore[union-attr]
                continue
            try:
                ir_measures.parse_measure(s)
            except Exception:  # noqa: BLE001,S112 (not a measure to ir_measures: not a measure string)
                continue
            found.setdefault(s, None)
    return list(found)


def _collection() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(27)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(25):
        qid = str(101 + q)  # (numbers: gdeval, ir_measures' provider of dcg='exp-log2' and ERR, reads no other)
        docs = [f"d{q}x{i}" for i in range(40)]
        judged = rng.sample(docs, 22)
        qrels[qid] = {d: rng.choice((0, 0, 0, 1, 1, 2, 3)) for d in judged}
        retrieved = rng.sample(docs, 30)  # some judged documents are not retrieved, some retrieved are unjudged
        scores = rng.sample(range(1000), len(retrieved))  # distinct: no tie to break
        run[qid] = {d: float(s) for d, s in zip(retrieved, scores)}
    qrels["101"] = {d: 0 for d in qrels["101"]}  # a query without a relevant document
    return qrels, run


def _ir_values(measure: object, qrels: dict, run: dict) -> dict[str, float] | None:  # type: ignore[type-arg]
    try:
        return {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}
    except Exception:  # noqa: BLE001 (no provider installed computes it: nothing to compare with)
        return None


#: ir_measures strings that ranklens reads otherwise, on purpose (each said in docs/measures-ir_measures.md)
READ_OTHERWISE = {
    "RBP": "trec_eval's rbp (TrecRBP; ir_measures': Moffat & Zobel's, p = 0.8); write MZRBP(p=0.8)@k",
    "ERR": "R = (2^g − 1)/2^max_rel with max_rel the largest label (ir_measures' gdeval: 4); write ERR(max_rel=4)@k",
}


def classify() -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(ir_measures string, ranklens measure) pairs read as one measure; strings ranklens refuses; strings it
    reads otherwise."""
    supported: list[tuple[str, str]] = []
    unsupported: list[str] = []
    otherwise: list[str] = []
    for s in dict.fromkeys([*package_measure_strings(), *ISSUE_STRINGS]):
        if re.match(r"[A-Za-z_]+", s).group(0) in READ_OTHERWISE:  # type: ignore[union-attr]
            otherwise.append(s)
            continue
        try:
            found = parse_many(s)
        except MeasureError:
            unsupported.append(s)
            continue
        if len(found) > 1:  # a bare name needing a cutoff (P, Success) is trec_eval's list of them here
            otherwise.append(s)
            continue
        supported.append((s, str(found[0])))
    return supported, unsupported, otherwise


def test_the_package_documents_measure_strings() -> None:
    strings = package_measure_strings()
    assert len(strings) >= 30 and "nDCG@10" in strings and "P(rel=2)@5" in strings, strings


def test_every_supported_string_has_ir_measures_values() -> None:
    qrels, run = _collection()
    supported, _, _ = classify()
    compared = []
    for s, ours in supported:
        theirs = _ir_values(ir_measures.parse_measure(s), qrels, run)
        if theirs is None:
            continue
        # ir_measures reads qrels without an intent column as one intent per query ('0'): so do the intents here
        intents = {q: {"0": labels} for q, labels in qrels.items()}
        res = ranklens.Evaluator([ours], qrels, intents=intents)(run, warn=False)  # (judged_only's note: said)
        got = {q: v for q, v in res.per_query(ours).items() if not math.isnan(v)}  # (NA: ir_measures reports none)
        assert set(got) == set(theirs), s
        rounded = "exp-log2" in s or s.startswith("ERR")  # (gdeval prints 5 decimals)
        for q, v in theirs.items():
            if math.isnan(v):  # ndeval's nNRBP on a query without a relevant document (0/0): 0 here
                assert s.startswith("nNRBP") and got[q] == 0.0, (s, q, got[q])
                continue
            assert math.isclose(got[q], v, rel_tol=1e-9, abs_tol=5.1e-6 if rounded else 1e-12), (s, ours, q, got[q], v)
        compared.append(s)
    # the spellings the issue names are all computed by ir_measures' installed providers and compared
    for s in ("nDCG(dcg='exp-log2')@10", "nDCG(gains={0:0,1:1,2:3})@10", "P(judged_only=True)@10", "IPrec@0.5",
              "SetR", "NumRet(rel=1)", "SetF(beta=1.0)"):
        assert s in compared, (s, compared)


def test_unsupported_strings_name_the_nearest_measure() -> None:
    _, unsupported, _ = classify()
    for s in unsupported:
        with pytest.raises(MeasureError, match="nearest it has|needs a cutoff, e.g."):
            parse_many(s)


def test_the_docs_list_what_ranklens_lacks() -> None:
    _, refused, otherwise = classify()
    bare = [s for s in refused if _needs_cutoff(s)]  # a bare name whose measure needs a cutoff, as in ir_measures
    unsupported = [s for s in refused if s not in bare]
    text = DOC.read_text(encoding="utf-8")
    for block, names in (("unsupported", unsupported), ("cutoff", bare)):
        listed = re.search(rf"<!-- {block}:start -->\n(.*?)<!-- {block}:end -->", text, re.DOTALL)
        assert listed, f"docs/measures-ir_measures.md lacks the {block} block"
        assert listed.group(1) == "".join(f"- `{s}`\n" for s in names), (
            f"docs/measures-ir_measures.md's {block} block is stale; the list is:\n" + "".join(f"- `{s}`\n" for s in names)
        )
    for s in otherwise:  # each said, by its name
        assert "`" + re.match(r"[A-Za-z_]+", s).group(0) in text, s  # type: ignore[union-attr]


def _needs_cutoff(s: str) -> bool:
    try:
        parse_many(s)
    except MeasureError as e:
        return "needs a cutoff" in str(e)
    return False


def test_hr_is_hit_rate_not_recall() -> None:
    assert [str(m) for m in parse_many("HR@10")] == ["Success@10"]


@pytest.mark.parametrize(("theirs", "ours"), [("RBP(p=0.8)@20", "MZRBP(p=0.8)@20"), ("ERR@10", "ERR(max_rel=4)@10")])
def test_what_reads_otherwise_has_a_spelling_with_their_values(theirs: str, ours: str) -> None:
    qrels, run = _collection()
    values = _ir_values(ir_measures.parse_measure(theirs), qrels, run)
    if values is None:
        pytest.skip(f"no installed ir_measures provider computes {theirs}")
    got = ranklens.Evaluator([ours], qrels)(run, warn=False).per_query(ours)
    for q, v in values.items():
        assert math.isclose(got[q], v, rel_tol=1e-9, abs_tol=5.1e-6), (theirs, q, got[q], v)


def test_ir_measures_objects_mean_what_ir_measures_means() -> None:
    from ranklens.measures.language import measure_items

    assert [str(m) for m in parse_many([ir_measures.RBP, ir_measures.ERR @ 10, ir_measures.nDCG @ 10])] == [
        "MZRBP(p=0.8)", "ERR(max_rel=4)@10", "nDCG@10"]
    assert measure_items(ir_measures.SetR) == parse_many("SetR")
    qrels, run = _collection()
    theirs = _ir_values(ir_measures.ERR @ 10, qrels, run)
    if theirs is None:
        pytest.skip("no installed ir_measures provider computes ERR@10")
    got = ranklens.evaluate(qrels, run, ir_measures.ERR @ 10).per_query("ERR(max_rel=4)@10")
    for q, v in theirs.items():
        assert math.isclose(got[q], v, abs_tol=5.1e-6), (q, got[q], v)
