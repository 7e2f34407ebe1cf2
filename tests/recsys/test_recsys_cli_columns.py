"""``--train-columns``/``--items-columns`` and the system-level marks of the terminal tables (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli._common import _column_map, _items_columns
from ranklens.cli.main import cli

ML = Path(__file__).resolve().parents[2] / "examples" / "movielens"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def _renamed(tmp_path: Path, year: bool = False) -> tuple[Path, Path]:
    """The example's train and items with other column names (a timestamp column kept: ignored), the items
    with a numeric ``year`` column if asked."""
    train = tmp_path / "log.csv"
    lines = (ML / "train.csv").read_text().splitlines()
    train.write_text("\n".join(["member,sku,stars,ts", *lines[1:]]) + "\n")
    items = tmp_path / "catalog.csv"
    rows = (ML / "items.csv").read_text().splitlines()[1:]
    if year:
        rows = ["sku,kind,year", *(f"{r},{1990 + i % 30}" for i, r in enumerate(rows))]
    else:
        rows = ["sku,kind", *rows]
    items.write_text("\n".join(rows) + "\n")
    return train, items


def _aggregate(out: str) -> dict[str, float]:
    doc = json.loads(out[out.index("{"):])
    return (doc["runs"][0] if "runs" in doc else doc)["aggregate"]


def test_train_and_items_columns_give_the_same_values_as_the_python_keywords(tmp_path: Path) -> None:
    train, items = _renamed(tmp_path)
    measures = ["Novelty@10", "Coverage@10", "ILD@10", "ARP@10"]
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(train), "--train-columns",
        "user=member,item=sku,weight=stars", "--items", str(items), "--items-columns", "item=sku,category=kind",
        "--exclude-seen", "-m", *measures, "-f", "json",
    )
    assert code == 0, out
    got = _aggregate(out)
    ev = ranklens.Evaluator(
        measures, ranklens.read_qrels(ML / "test.csv"), train=train, items=items, exclude_seen=True,
        train_columns={"member": "query_id", "sku": "doc_id", "stars": "weight"},
        items_columns={"sku": "item", "kind": "category"},
    )
    want = ev(ranklens.read_run(ML / "recs.csv"), warn=False)
    assert got == pytest.approx({m: want[m] for m in measures})
    # the original files give the same values (same data, other names)
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"), "--items",
        str(ML / "items.csv"), "--exclude-seen", "-m", *measures, "-f", "json",
    )
    assert code == 0, out
    assert _aggregate(out) == pytest.approx(got)


def test_items_columns_feature_may_repeat_and_selects_features(tmp_path: Path) -> None:
    _, items = _renamed(tmp_path, year=True)
    # a numeric feature instead of the category: ILD changes, and the run still evaluates
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--items", str(items), "--items-columns",
        "item=sku,feature=year", "-m", "ILD@10", "-f", "json",
    )
    assert code == 0, out
    assert 0 <= _aggregate(out)["ILD@10"] <= 1
    assert _items_columns(None, None, "item=sku, feature=a, features=b") == {"sku": "item", "a": "feature", "b": "feature"}  # type: ignore[arg-type]


def test_column_flags_reject_what_they_cannot_read() -> None:
    train = _column_map("train")
    assert train(None, None, "query=member,doc=sku") == {"member": "query_id", "sku": "doc_id"}  # type: ignore[arg-type]
    for bad, message in [
        ("user=a,user=b", "given twice"), ("who=a", "unknown role"), ("user", "ROLE=COLUMN"), ("item=", "no column"),
    ]:
        with pytest.raises(click.BadParameter, match=message):
            train(None, None, bad)  # type: ignore[arg-type]
    with pytest.raises(click.BadParameter, match="given twice"):
        _items_columns(None, None, "item=a,item=b")  # type: ignore[arg-type]
    with pytest.raises(click.BadParameter, match="unknown role"):
        _items_columns(None, None, "weight=w")  # type: ignore[arg-type]
    code, out = _run("eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train-columns", "who=x")
    assert code == 2 and "--train-columns" in out and "unknown role" in out


def test_the_table_marks_system_level_measures_and_says_what_the_mark_means() -> None:
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"),
        "-m", "nDCG@10", "Coverage@10", "Gini@10", "--quiet",
    )
    assert code == 0, out
    assert "│ Coverage@10 † │" in out and "│ Gini@10 †     │" in out and "│ nDCG@10       │" in out
    assert out.rstrip().endswith("† system-level: one value per run, no per-query values")
    code, out = _run(
        "eval", str(ML / "test.csv"), str(ML / "recs.csv"), "--train", str(ML / "train.csv"),
        "-m", "nDCG@10", "Coverage@10", "--per-query", "--quiet",
    )
    assert code == 0, out
    assert "Coverage@10 †" in out and "† system-level" in out
    code, out = _run("eval", str(ML / "test.csv"), str(ML / "recs.csv"), "-m", "nDCG@10", "Novelty@10", "--train",
                     str(ML / "train.csv"), "--quiet")
    assert code == 0, out
    assert "†" not in out  # per-list measures only: the table as before


def test_compare_table_shows_both_values_and_the_difference_without_a_p_value(tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    lines = (ML / "recs.csv").read_text().splitlines()
    other.write_text("\n".join([lines[0]] + [",".join(l.split(",")[:2] + [str(i % 7)]) for i, l in enumerate(lines[1:])]) + "\n")
    code, out = _run(
        "compare", str(ML / "test.csv"), str(ML / "recs.csv"), str(other), "--train", str(ML / "train.csv"),
        "-m", "nDCG@10", "Coverage@10", "-f", "table",
    )
    assert code == 0, out
    assert "nDCG@10 — all queries" in out
    assert "Coverage@10 — system-level (one value per run): no paired test, no p-value" in out
    assert "Coverage@10 is a system-level measure (one value per run): shown without a p-value" in out
    block = out[out.index("Coverage@10 — system-level"):]
    row = next(line for line in block.splitlines() if line.startswith("│ other"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    # system, baseline, n, mean base, mean sys, Δ, Δ%, CI, p, p (holm), d, W/T/L, marker
    base, sys_, delta = float(cells[3]), float(cells[4]), float(cells[5])
    assert abs((sys_ - base) - delta) < 1e-3 and cells[8] == "—" and cells[9] == "—" and cells[-1] == ""


def test_serendipity_reads_the_same_similarities_from_the_dense_and_the_sparse_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ranklens.engine.kernels import recsys as kernels

    rng = np.random.default_rng(5)
    users, items = [f"u{i}" for i in range(60)], [f"i{i}" for i in range(40)]
    train = {u: list(rng.choice(items, size=int(rng.integers(1, 9)), replace=False)) for u in users}
    qrels = {u: {str(i): int(rng.integers(0, 3)) for i in rng.choice(items, size=4, replace=False)} for u in users}
    run = {u: {str(i): float(rng.random()) for i in rng.choice(items, size=15, replace=False)} for u in users}
    measures = ["Serendipity@10", "Serendipity(rel=2)@5"]
    dense = ranklens.Evaluator(measures, qrels, train=train)(run, warn=False)
    monkeypatch.setattr(kernels, "_DENSE_SIM_MAX", 0)
    sparse = ranklens.Evaluator(measures, qrels, train=train)(run, warn=False)
    assert np.array_equal(dense.values, sparse.values, equal_nan=True) and dense.values.size
