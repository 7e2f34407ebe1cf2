"""One rules file, one meaning (issue 24): the same table of rule cases through ``ranklens gate --rules``
and through the monitor (service in-process) gives the same verdict in every scope.

Data (3 segments × 20 queries, nDCG@10; ``e`` = ±0.01 and ``f`` = ±0.005, alternating, mean 0):

============  ============  ====================  ======================================
segment       baseline      candidate             so, by hand
============  ============  ====================  ======================================
books         0.92 + e      0.92 + f              no change (mean difference 0)
toys          0.90 + e      0.80 + e              falls 0.10 on every query (p ≈ 0)
garden        0.88 + e      0.885 + f             rises 0.005
all           0.90          (0.92+0.80+0.885)/3   0.8683; falls 0.0317 (t ≈ −5, p < 1e-4)
============  ============  ====================  ======================================

The monitor sees the baseline as three earlier daily snapshots of the same system (for the trailing window)
and as the latest snapshot of system ``base`` (for ``vs=base``); the gate gets it as ``--baseline``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from .conftest import backends, in_process_monitor

SEGS = {f"{seg}-{i:02d}": seg for seg in ("books", "toys", "garden") for i in range(20)}
BASE = {"books": 0.92, "toys": 0.90, "garden": 0.88}
CAND = {"books": 0.92, "toys": 0.80, "garden": 0.885}
DAY0 = dt.datetime(2026, 10, 1, 6, tzinfo=dt.timezone.utc)


def _values(means: dict[str, float], swing: float) -> dict[str, float]:
    return {q: means[seg] + (swing if int(q[-2:]) % 2 else -swing) for q, seg in SEGS.items()}


def _doc(values: dict[str, float], run: str) -> dict[str, Any]:
    per_query = {q: {"nDCG@10": v} for q, v in sorted(values.items())}
    agg = sum(values.values()) / len(values)
    return {"ranklens_version": "0", "runs": [{"run": run, "measures": ["nDCG@10"], "aggregate": {"nDCG@10": agg},
                                               "num_queries": len(values), "per_query": per_query, "notes": [], "options": {}}]}


BASE_VALUES = _values(BASE, 0.01)
CAND_VALUES = {q: (CAND[s] + (0.01 if int(q[-2:]) % 2 else -0.01)) if s == "toys" else
               CAND[s] + (0.005 if int(q[-2:]) % 2 else -0.005) for q, s in SEGS.items()}

# (name, rules file body, with a segments file, expected verdict per scope: "" = all queries)
CASES: list[tuple[str, str, bool, dict[str, str]]] = [
    ("threshold, segments", 'rules = ["nDCG@10 >= 0.85"]', True,
     {"": "pass", "books": "pass", "toys": "fail", "garden": "pass"}),
    ("threshold, no segments", 'rules = ["nDCG@10 >= 0.85"]', False, {"": "pass"}),
    ("maximum, segments", '[max]\n"nDCG@10" = 0.9', True,
     {"": "pass", "books": "fail", "toys": "pass", "garden": "pass"}),
    ("segment override", 'rules = ["nDCG@10 >= 0.85"]\n[segment.books]\nrules = ["nDCG@10 >= 0.95"]', True,
     {"": "pass", "books": "fail", "toys": "fail", "garden": "pass"}),
    ("rule of one segment", 'rules = ["nDCG@10 >= 0.85 segment=garden"]', True, {"garden": "pass"}),
    ("drop vs baseline, paired test", 'rules = ["nDCG@10 drop <= 0 vs=base alpha=0.05"]', True,
     {"": "fail", "books": "pass", "toys": "fail", "garden": "pass"}),
    ("drop vs baseline, paired test, no segments", 'rules = ["nDCG@10 drop <= 0 vs=base alpha=0.05"]', False,
     {"": "fail"}),
    ("window drop", 'rules = ["nDCG@10 drop <= 0.02 window=7"]', True,
     {"": "fail", "books": "pass", "toys": "fail", "garden": "pass"}),
    ("window drop, no segments", 'window = 7\n[max_drop]\n"nDCG@10" = 0.05', False, {"": "pass"}),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("rule-cases")
    out = {"qrels": d / "qrels.txt", "segments": d / "segments.tsv", "base": d / "base.json", "cand": d / "cand.json"}
    out["qrels"].write_text("".join(f"{q} 0 d1 1\n" for q in SEGS))
    out["segments"].write_text("query_id\tsegment\n" + "".join(f"{q}\t{s}\n" for q, s in SEGS.items()))
    out["base"].write_text(json.dumps(_doc(BASE_VALUES, "base")))
    out["cand"].write_text(json.dumps(_doc(CAND_VALUES, "prod")))
    return out


def _gate(files: dict[str, Path], rules: Path, segments: bool) -> dict[str, str]:
    from ranklens.cli.main import cli

    args = ["gate", str(files["qrels"]), str(files["cand"]), "--rules", str(rules), "-f", "json", "--quiet"]
    if "drop" in rules.read_text() or "max_drop" in rules.read_text():
        args += ["--baseline", str(files["base"])]
    if segments:
        args += ["--segments", str(files["segments"])]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code in (0, 1), res.output
    report = json.loads(res.stdout)
    return {c["segment"] or "": c["status"] for c in report["checks"]}


def _monitor(monitor: Any, project: str, rules: Path, segments: bool) -> dict[str, str]:
    from ranklens.monitor.schemas import SnapshotIn

    monitor.add_rules_file(project, str(rules))
    seg = {"query_segments": SEGS} if segments else {}

    def push(system: str, values: dict[str, float], day: int) -> dict[str, Any]:
        body = SnapshotIn.model_validate({"id": f"{system}-{day}", "system": system, "at": DAY0 + dt.timedelta(days=day),
                                          "results": _doc(values, system), **seg})
        return monitor.ingest(project, body)[0]

    push("base", BASE_VALUES, 3)
    for day in range(3):
        push("prod", BASE_VALUES, day)
    out = push("prod", CAND_VALUES, 3)
    verdict = {"ok": "pass", "breach": "fail"}
    checks = [r for r in out["rules"] if not r["rule"].startswith("query_coverage")]
    assert all(r["status"] in verdict for r in checks), checks
    return {r["segment"] or "": verdict[r["status"]] for r in checks}


@pytest.fixture(scope="module", params=backends())
def monitor(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with in_process_monitor(request.param, tmp_path_factory.mktemp("rule-cases-db")) as m:
        yield m


@pytest.mark.parametrize(("name", "body", "segments", "expected"), CASES, ids=[c[0] for c in CASES])
def test_one_rules_file_one_verdict(
    name: str, body: str, segments: bool, expected: dict[str, str], files: dict[str, Path], monitor: Any, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(body + "\n")
    gate = _gate(files, rules, segments)
    assert gate == expected
    project = "case-" + "".join(ch if ch.isalnum() else "-" for ch in name)
    assert _monitor(monitor, project, rules, segments) == expected
