"""Issue 27: ``mypy --strict`` users of the public API get no ``Any`` at the boundary. The typed sample
tests/typing_samples/public_api.py (measure objects, Results, Evaluator, compare, Comparison) is checked with
``--strict --disallow-any-expr``: an API return typed ``Any`` or a parameter that refuses a measure object
fails it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent / "typing_samples" / "public_api.py"


def test_the_typed_sample_passes_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--disallow-any-expr", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(SAMPLE)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
