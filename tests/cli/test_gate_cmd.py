"""`ranklens gate`: exit 0 when every rule holds, 1 when one fails (which, by how much, where), 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["gate", *args])
    return result.exit_code, result.stdout, result.stderr


def mean(run_path: str, measure: str, queries: set[str] | None = None) -> float:
    pq = ranklens.evaluate(QRELS, run_path, [measure]).per_query(measure)
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
    # bm25 trails dense on nDCG@10 over the 11 common queries
    pq_b = ranklens.evaluate(QRELS, BM25, ["nDCG@10"]).per_query("nDCG@10")
    pq_d = ranklens.evaluate(QRELS, DENSE, ["nDCG@10"]).per_query("nDCG@10")
    common = [q for q in pq_b if q in pq_d]
    xb, xd = np.array([pq_b[q] for q in common]), np.array([pq_d[q] for q in common])
    drop = float((xd - xb).mean())
    p = scipy.stats.ttest_rel(xb, xd).pvalue
    assert p < 0.05
    code, out, err = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.01", "--alpha", "0.05")
    assert code == 1
    assert f"dropped {drop:.4f}, {drop - 0.01:.4f} over the limit" in out
    assert f"p={p:.4g} ≤ α=0.05" in out
    assert "dropped 1 query only in dense" in err or "only in bm25" in err
    # a generous limit passes
    code, out, _ = run(QRELS, BM25, "--baseline", DENSE, "--max-drop", f"nDCG@10={drop + 0.001}")
    assert code == 0
    # the improved run against the old one never fails a drop rule
    code, out, _ = run(QRELS, DENSE, "--baseline", BM25, "--max-drop", "nDCG@10=0")
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
