"""compute_windows in slices of whole window groups (``CHUNK_ROWS``) gives the rows of one pass over the log:
the groups are independent, so every value, interval and count must be identical, whatever the slice size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ranklens.production.windows as windows
from ranklens.production import compute_windows

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.refresh_bench import RULES, generate  # noqa: E402


@pytest.mark.parametrize("rows", [1, 700, 5000])
def test_slices_of_groups_give_the_rows_of_one_pass(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    imp, ev = generate(8000, seed=5, hours=4.0)
    kw = dict(window="1h", label_delay="1h", segment_col="segment", system_col="system",
              measures=["nDCG@10", "DCG@5", "IPS-DCG@10", "SNIPS-DCG@5"])
    whole = compute_windows(imp, ev, RULES, **kw).to_dict()
    monkeypatch.setattr(windows, "CHUNK_ROWS", rows)
    calls = []
    real = windows.engine_values
    monkeypatch.setattr(windows, "engine_values", lambda frame, *a: calls.append(frame.height) or real(frame, *a))
    sliced = compute_windows(imp, ev, RULES, **kw).to_dict()
    assert len(calls) > 1 and sum(calls) == imp.height  # several slices, every row in one
    assert sliced == whole
