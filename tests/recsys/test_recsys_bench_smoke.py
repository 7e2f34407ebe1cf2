"""Smoke test of ``bench.recsys_bench`` on tiny generated data (no timing asserted): the streamed run (users
in blocks of Parquet row batches) and the run read whole give the same values, and the peak RSS it prints
agrees with the kernel's high-water mark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import recsys_bench  # noqa: E402


def _bench(*args: str) -> dict:
    """``python -m bench.recsys_bench ARGS`` in a fresh, small process: its children's ``ru_maxrss`` then starts
    from that process's size, not from this test process's (Linux keeps the high-water mark across exec)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "bench.recsys_bench", *args], cwd=REPO, env=env, check=True,
                          capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout)


def test_streamed_and_whole_agree(tmp_path, monkeypatch):
    monkeypatch.setattr(recsys_bench, "CHUNK_USERS", 70)  # several generated row groups
    data = str(tmp_path / "data")
    recsys_bench.generate(data, 300, 20, 50, 4)
    streamed = _bench("--users", "300", "--data", data)
    whole = _bench("--users", "300", "--data", data, "--mode", "memory", "--only-all")
    assert streamed["all"]["users"] == whole["all"]["users"] == 300
    assert streamed["all"]["values"] == whole["all"]["values"]
    assert len(streamed["all"]["values"]) == 13 and streamed["nDCG@10"]["users"] == 300
    assert streamed["all"]["rss_agree"] and whole["all"]["rss_agree"]
    assert sorted(os.listdir(data)) == ["items.parquet", "qrels.parquet", "run.parquet", "train.parquet"]
