"""``compare``'s terminal tables drawn without rich (written to a file or a pipe) are rich's, character for
character: the same comparisons rendered both ways."""

from __future__ import annotations

import random

import pytest

from ranklens.comparison import compare
from ranklens.report.terminal import render_table
from ranklens.results.box import aligned_table
from ranklens.results.fit import UNLIMITED


def _runs(seed: int, systems: list[str], queries: int) -> tuple[dict, dict]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in range(6)} for i in range(queries)}
    runs = {s: {q: {f"d{j}": rng.random() for j in range(6)} for q in qrels} for s in systems}
    return qrels, runs


CASES = [
    (["bm25", "dense"], {}, None),
    (["a", "b", "c"], {"baseline": "a"}, None),
    (["a", "b", "c"], {"correction": "bh", "alpha": 0.1}, None),
    (["a-very-long-system-name", "b"], {}, None),
    (["x", "y"], {}, "segments"),
    (["x", "y"], {"test": "sign"}, None),
    (["[bold]x", "y"], {}, None),  # (never rich markup)
]


@pytest.mark.parametrize(("systems", "options", "segments"), CASES)
def test_plain_tables_are_richs(systems: list[str], options: dict, segments: str | None) -> None:  # type: ignore[type-arg]
    qrels, runs = _runs(len(systems) + len(options), systems, 9)
    seg = {q: ("nav" if i % 2 else "info") for i, q in enumerate(qrels)} if segments else None
    cmp = compare(qrels, runs, ["nDCG@5", "P@3", "RR"], segments=seg, **options)
    plain = render_table(cmp)  # (no terminal: no width limit, the plain tables)
    rich = render_table(cmp, width=UNLIMITED)  # (a width: rich draws and fits)
    assert plain == rich


def test_the_plain_path_is_taken_and_can_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares two drawings: the plain one is used (rich is never asked), and a
    misaligned marker column would be seen."""
    import ranklens.results.fit as fit

    qrels, runs = _runs(1, ["a", "b"], 9)
    cmp = compare(qrels, runs, ["nDCG@5"])
    monkeypatch.setattr(fit, "console", lambda *a, **k: pytest.fail("rich was asked"))
    plain = render_table(cmp)
    assert "▲" in plain or "│   │" in plain
    rows = [["ab", "1"], ["abcd", "22"]]
    assert aligned_table(["system", "x"], rows, "lr") != aligned_table(["system", "x"], rows, "rr")


def test_text_rich_would_change_is_left_to_rich() -> None:
    assert aligned_table(["system"], [[":smile:"]], "l") is None  # (an emoji code)
    assert aligned_table(["system"], [["ünï"]], "l") is None
    assert aligned_table(["a"], [["b"]], "l", title="a title wider than the table") is None
