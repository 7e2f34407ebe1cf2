"""`ranklens gate`: exit 0 when every rule holds, 1 when one fails (which, by how much, where), 2 on bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from ranklens.cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_impl as ref  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")
#: the 12 queries of toy.qrels; toy_dense.run never answers q12
ALL_QUERIES = {f"q{i}" for i in range(1, 13)}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["gate", *args])
    return result.exit_code, result.stdout, result.stderr


def _table(path: str, value_column: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        fields = line.split()
        out.setdefault(fields[0], {})[fields[2]] = float(fields[value_column])
    return out


def per_query(run_path: str, measure: str, *, missing: str = "skip") -> dict[str, float]:
    """The reference (tests/reference_impl.py) value of each query; ``missing="zero"`` adds every qrels query
    the run lacks with 0, as trec_eval -c does."""
    qrels = {q: {d: int(v) for d, v in docs.items()} for q, docs in _table(QRELS, 3).items()}
    scores = _table(run_path, 4)
    values = {}
    for q, judged in qrels.items():
        if q not in scores:
            if missing == "zero":
                values[q] = 0.0
            continue
        ranking = ref.ranked_labels(judged, ref.trec_order(scores[q]))
        labels = list(judged.values())
        values[q] = {
            "nDCG@10": lambda ranking=ranking, labels=labels: ref.ndcg(ranking, labels, 10),
            "AP": lambda ranking=ranking, labels=labels: ref.average_precision(ranking, labels),
            "P@5": lambda ranking=ranking: ref.precision(ranking, 5),
        }[measure]()
    return values


def mean(run_path: str, measure: str, queries: set[str] | None = None, *, missing: str = "skip") -> float:
    pq = per_query(run_path, measure, missing=missing)
    return float(np.mean([v for q, v in pq.items() if queries is None or q in queries]))


@pytest.fixture()
def segments(tmp_path: Path) -> Path:
    path = tmp_path / "segments.tsv"
    path.write_text("".join(f"q{i}\t{'odd' if i % 2 else 'even'}\n" for i in range(1, 13)))
    return path


ODD = {f"q{i}" for i in range(1, 13, 2)}
EVEN = {f"q{i}" for i in range(2, 13, 2)}


def test_min_rule_passes_and_fails_at_the_threshold() -> None:
    m = mean(BM25, "nDCG@10")
    code, out, _ = run(QRELS, BM25, "--min", f"nDCG@10={m - 1e-6:.7f}")
    assert code == 0 and out.startswith("PASS") and "all 1 checks passed" in out
    code, out, _ = run(QRELS, BM25, "--min", f"nDCG@10={m + 0.01:.6f}")
    assert code == 1
    assert f"FAIL nDCG@10 ≥ {m + 0.01:.6f}".rstrip("0") in out
    assert "on all queries" in out and "below the minimum" in out
    assert f"{m:.4f}" in out


def test_min_rule_is_checked_in_every_segment(segments: Path) -> None:
    odd, even = mean(BM25, "nDCG@10", ODD), mean(BM25, "nDCG@10", EVEN)
    threshold = (odd + even) / 2
    code, out, _ = run(QRELS, BM25, "--min", f"nDCG@10={threshold}", "--segments", str(segments), "-f", "json")
    assert code == 1
    checks = {c["segment"]: c for c in json.loads(out)["checks"]}
    worse, better = ("odd", "even") if odd < even else ("even", "odd")
    assert checks[worse]["status"] == "fail" and checks[better]["status"] == "pass"
    assert checks[worse]["value"] == pytest.approx(min(odd, even))
    assert f"{threshold - min(odd, even):.4f} below the minimum" in checks[worse]["message"]


def test_max_drop_against_baseline_with_alpha() -> None:
    # with --missing skip, bm25 trails dense on nDCG@10 over the 11 queries both answered
    pq_b, pq_d = per_query(BM25, "nDCG@10"), per_query(DENSE, "nDCG@10")
    common = [q for q in pq_b if q in pq_d]
    assert len(common) == 11
    xb, xd = np.array([pq_b[q] for q in common]), np.array([pq_d[q] for q in common])
    drop = float((xd - xb).mean())
    p = scipy.stats.ttest_rel(xb, xd).pvalue
    assert p < 0.05
    skip = ("--missing", "skip")
    code, out, err = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.01", "--alpha", "0.05", *skip)
    assert code == 1
    assert "on 11 of 12 queries" in out
    assert f"dropped {drop:.4f}, {drop - 0.01:.4f} over the limit" in out
    assert f"p={p:.4g} ≤ α=0.05" in out
    assert "dropped 1 query only in dense" in err or "only in bm25" in err
    # a generous limit passes
    code, out, _ = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", f"nDCG@10={drop + 0.001}", *skip)
    assert code == 0
    # the improved run against the old one never fails a drop rule
    code, out, _ = run(QRELS, DENSE, "--baseline", BM25, "--max-drop", "nDCG@10=0", *skip)
    assert code == 0 and "gained" in out


def test_insignificant_drop_passes_with_alpha(segments: Path) -> None:
    code, out, _ = run(
        QRELS, BM25, "--baseline", DENSE, "--max-drop", "AP=0.0", "--alpha", "0.001", "--segments", str(segments)
    )
    assert code == 0
    assert out.count("but not significantly") == 3


def test_rules_file_with_segment_override(tmp_path: Path, segments: Path) -> None:
    odd = mean(BM25, "nDCG@10", ODD)
    rules = tmp_path / "gate.toml"
    rules.write_text(
        f"""
alpha = 0.05
test = "randomisation"
[min]
"nDCG@10" = 0.1
[segment.odd.min]
"nDCG@10" = {odd + 0.05}
"""
    )
    code, out, _ = run(QRELS, BM25, "--rules", str(rules), "--segments", str(segments))
    assert code == 1
    lines = out.splitlines()
    assert sum(line.startswith("PASS") for line in lines) == 2  # all queries, even
    fail = [line for line in lines if line.startswith("FAIL")]
    assert len(fail) == 1 and "segment 'odd'" in fail[0] and "0.0500 below the minimum" in fail[0]


@pytest.mark.parametrize(
    ("args", "toml", "message"),
    [
        ([], None, "no rule given"),
        (["--min", "nDCG@10"], None, "expected MEASURE=VALUE"),
        (["--min", "nDCG@10=high"], None, "expected a number, got 'high'"),
        (["--min", "ndgc@10=0.5"], None, "did you mean 'nDCG@10'"),
        (["--max-drop", "nDCG@10=0.01"], None, "need --baseline"),
        (["--max-drop", "nDCG@10=-1", "--baseline", DENSE], None, "must be ≥ 0"),
        (["--min", "P.5,10=0.1"], None, "a rule names one measure"),
        ([], "[min]\n'nDCG@10' = 'x'\n", "expected a number"),
        ([], "aplha = 0.05\n", "did you mean 'alpha'"),
        ([], "[min\n", "not valid TOML"),
        ([], "[segment.odd.min]\n'AP' = 0.1\n", "needs --segments"),
        (["--test", "tukey", "--min", "AP=0.1"], None, "use a paired test"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, args: list[str], toml: str | None, message: str) -> None:
    if toml is not None:
        path = tmp_path / "rules.toml"
        path.write_text(toml)
        args = [*args, "--rules", str(path)]
    code, out, err = run(QRELS, BM25, *args)
    assert code == 2, out
    assert message in err and "Traceback" not in err


def test_unknown_segment_in_rules_suggests(tmp_path: Path, segments: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text("[segment.od.min]\n'AP' = 0.1\n")
    code, _, err = run(QRELS, BM25, "--rules", str(path), "--segments", str(segments))
    assert code == 2 and "did you mean 'odd'" in err


# ------------------------------------------------------------------------------------- fail closed (issue 10 §1)

#: the 5 queries bm25 does best on; a run answering only these must not pass a gate the full run fails
EASY = {"q3", "q6", "q7", "q10", "q11"}


@pytest.fixture()
def easy_run(tmp_path: Path) -> Path:
    path = tmp_path / "easy.run"
    path.write_text("".join(line + "\n" for line in Path(BM25).read_text().splitlines() if line.split()[0] in EASY))
    return path


def test_queries_the_run_misses_count_as_zero_by_default(easy_run: Path) -> None:
    # by hand: each absent query scores 0 and counts (trec_eval -c), so the mean is Σ over the 5 answered / 12
    easy = per_query(str(easy_run), "nDCG@10")
    assert set(easy) == EASY
    expected = sum(easy.values()) / 12
    full = mean(BM25, "nDCG@10")
    assert expected < full < 0.7 < mean(str(easy_run), "nDCG@10")  # the trap: the 5 easy ones alone pass
    for extra in ([], ["--missing", "zero"]):
        code, out, err = run(QRELS, str(easy_run), "--min", "nDCG@10=0.7", *extra)
        assert code == 1, out
        assert f"FAIL nDCG@10 ≥ 0.7 on all queries: {expected:.4f} is {0.7 - expected:.4f} below the minimum (n=12)" in out
        assert "7 qrels queries with no retrieved document: scored 0" in err
    code, out, _ = run(QRELS, BM25, "--min", "nDCG@10=0.7")
    assert code == 1 and f"{full:.4f}" in out and "(n=12)" in out


def test_skipping_missing_queries_says_on_how_many(easy_run: Path) -> None:
    skipped = mean(str(easy_run), "nDCG@10")
    code, out, err = run(QRELS, str(easy_run), "--min", "nDCG@10=0.7", "--missing", "skip", "-f", "json")
    assert code == 0
    (check,) = json.loads(out)["checks"]
    assert check["n"] == 5 and check["total"] == 12
    assert check["value"] == pytest.approx(skipped)
    assert check["message"] == f"nDCG@10 ≥ 0.7 on 5 of 12 queries: {skipped:.4f} (n=5)"
    assert "7 qrels queries with no retrieved document: skipped" in err
    code, out, _ = run(QRELS, BM25, "--min", "nDCG@10=0.1", "--missing", "skip")
    assert code == 0 and "on all queries" in out  # nothing skipped: all queries


def test_max_drop_counts_every_qrels_query_by_default() -> None:
    # dense lacks q12: it scores 0 there, so both runs are paired on all 12 qrels queries
    pq_b, pq_d = per_query(BM25, "nDCG@10", missing="zero"), per_query(DENSE, "nDCG@10", missing="zero")
    assert set(pq_b) == set(pq_d) == ALL_QUERIES and pq_d["q12"] == 0.0
    queries = sorted(ALL_QUERIES)
    xb, xd = np.array([pq_b[q] for q in queries]), np.array([pq_d[q] for q in queries])
    drop = float((xd - xb).mean())
    p = scipy.stats.ttest_rel(xb, xd).pvalue
    assert drop > 0.01 and p > 0.05  # q12 (0 for dense) narrows the gap: too far, but not significantly
    code, out, _ = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.01", "--alpha", "0.05")
    assert code == 0, out
    assert (
        f"PASS nDCG@10 drop ≤ 0.01 vs baseline 'dense' on all queries: dropped {drop:.4f} ({drop - 0.01:.4f} over "
        f"the limit) but not significantly (p={p:.4g} > α=0.05; {xb.mean():.4f} vs {xd.mean():.4f}, n=12)"
    ) in out
    code, out, _ = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.01")
    assert code == 1, out
    assert f"dropped {drop:.4f}, {drop - 0.01:.4f} over the limit ({xb.mean():.4f} vs {xd.mean():.4f}, n=12)" in out


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_qrels_sharing_no_query_with_the_run_is_an_input_error(tmp_path: Path, missing: str) -> None:
    other = tmp_path / "other.qrels"
    other.write_text("zz 0 doc01001 1\n")
    # even a rule every value meets (≥ 0) must not pass: exit 2, as for any input error
    code, out, err = run(str(other), BM25, "--min", "nDCG@10=0", "--missing", missing)
    assert code == 2, out
    assert "shares no query with the qrels" in err and "Traceback" not in err
    assert "passed" not in out


def test_a_baseline_sharing_no_query_with_the_qrels_is_an_input_error(tmp_path: Path) -> None:
    other = tmp_path / "other.run"
    other.write_text("zz Q0 doc01001 1 1.0 other\n")
    code, out, err = run(QRELS, BM25, "--baseline", str(other), "--max-drop", "nDCG@10=1")
    assert code == 2, out
    assert f"{other}: no query to evaluate" in err


def test_a_check_over_no_query_fails(tmp_path: Path) -> None:
    # q1 alone is segment 'lonely'; the run never answers q1, so under --missing skip 'lonely' has no query
    without_q1 = tmp_path / "no_q1.run"
    without_q1.write_text("".join(line + "\n" for line in Path(BM25).read_text().splitlines() if line.split()[0] != "q1"))
    segs = tmp_path / "segs.tsv"
    segs.write_text("q1\tlonely\n" + "".join(f"q{i}\trest\n" for i in range(2, 13)))
    skip = ("--missing", "skip", "--segments", str(segs))
    code, out, _ = run(QRELS, str(without_q1), "--min", "nDCG@10=0", *skip)
    assert code == 1, out
    lines = out.splitlines()
    assert "FAIL nDCG@10 ≥ 0 on 0 of 1 query of segment 'lonely': no evaluated query" in lines
    assert "PASS nDCG@10 ≥ 0 on 11 of 12 queries" in out and "PASS nDCG@10 ≥ 0 on segment 'rest'" in out
    # a rule written for the segment fails the same way, and so does a drop rule
    rules = tmp_path / "gate.toml"
    rules.write_text("[segment.lonely.max_drop]\n'nDCG@10' = 1.0\n")
    code, out, _ = run(QRELS, str(without_q1), "--baseline", BM25, "--rules", str(rules), *skip)
    assert code == 1, out
    # (both runs are tagged bm25: they are told apart by their file names)
    assert "FAIL nDCG@10 drop ≤ 1 vs baseline 'toy_bm25' on 0 of 1 query of segment 'lonely': no query both runs answered" in out
    # with the default (--missing zero) q1 counts as 0 and the segment is checked
    code, out, _ = run(QRELS, str(without_q1), "--min", "nDCG@10=0", "--segments", str(segs))
    assert code == 0 and "PASS nDCG@10 ≥ 0 on segment 'lonely': 0.0000 (n=1)" in out


def test_json_segments_work_like_lines(tmp_path: Path, segments: Path) -> None:
    as_json = tmp_path / "segments.json"
    as_json.write_text(json.dumps({f"q{i}": "odd" if i % 2 else "even" for i in range(1, 13)}))
    threshold = (mean(BM25, "nDCG@10", ODD) + mean(BM25, "nDCG@10", EVEN)) / 2
    outputs = []
    for path in (segments, as_json):
        code, out, _ = run(QRELS, BM25, "--min", f"nDCG@10={threshold}", "--segments", str(path))
        assert code == 1
        assert "segment 'odd'" in out and "segment 'even'" in out
        outputs.append(out)
    assert outputs[0] == outputs[1]


def test_segments_that_label_no_evaluated_query_are_an_error(tmp_path: Path) -> None:
    segs = tmp_path / "segments.json"
    segs.write_text('{"zz1": "a", "zz2": "b"}')
    code, out, err = run(QRELS, BM25, "--min", "nDCG@10=0", "--segments", str(segs))
    assert code == 2, out
    assert f"{segs}: no evaluated query has a segment" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,segment\nq1,a\nq2\n")
    code, out, err = run(QRELS, BM25, "--min", "nDCG@10=0", "--segments", str(bad))
    assert code == 2 and f"{bad}:3: expected 2 columns" in err and "Traceback" not in err
