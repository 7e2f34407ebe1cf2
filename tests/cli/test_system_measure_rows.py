"""System-level measures (Coverage, Gini, EntropyCoverage, Personalization) have one value per run: every
per-query output writes their ``all`` row only, never a NaN row per user (issue 22 item 14)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

SYSTEM = ("Coverage@2", "Gini@2", "EntropyCoverage@2", "Personalization@2")
MEASURES = ("P@2", *SYSTEM)
USERS = ("u1", "u2", "u3")


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, ...]:
    (tmp_path / "test.tsv").write_text("u1 0 a 1\nu2 0 b 1\nu3 0 c 1\n")
    (tmp_path / "recs.run").write_text(
        "".join(f"{u} Q0 {d} {r} {3 - r} s\n" for u, docs in (("u1", "ab"), ("u2", "bc"), ("u3", "ad"))
                for r, d in enumerate(docs, 1))
    )
    (tmp_path / "train.csv").write_text("user,item\nu1,c\nu2,a\nu3,b\nu1,d\nu2,e\n")
    return str(tmp_path / "test.tsv"), str(tmp_path / "recs.run"), str(tmp_path / "train.csv")


def _eval(files: tuple[str, ...], *extra: str) -> str:
    qrels, run, train = files
    out = CliRunner().invoke(cli, ["eval", qrels, run, "--train", train, "-m", *MEASURES, "--per-query", *extra])
    assert out.exit_code == 0, out.output
    return out.stdout


def _check(rows: list[tuple[str, str]]) -> None:
    """(measure, query) rows: P@2 for every user and all; each system-level measure for all only."""
    assert sorted(q for m, q in rows if m == "P@2") == sorted([*USERS, "all"])
    for m in SYSTEM:
        assert [q for name, q in rows if name == m] == ["all"], m


def test_tsv(files: tuple[str, ...]) -> None:
    lines = [line.split("\t") for line in _eval(files, "-f", "tsv").splitlines()]
    _check([(m, q) for m, q, _ in lines])
    assert all(v != "nan" for _, _, v in lines)


def test_csv(files: tuple[str, ...]) -> None:
    rows = list(csv.DictReader(io.StringIO(_eval(files, "-f", "csv"))))
    _check([(r["measure"], r["query_id"]) for r in rows])


def test_trec(files: tuple[str, ...]) -> None:
    lines = [[c.strip() for c in line.split("\t")] for line in _eval(files, "-f", "trec").splitlines()[1:]]
    _check([(m, q) for m, q, _ in lines])


def test_json(files: tuple[str, ...]) -> None:
    run = json.loads(_eval(files, "-f", "json"))["runs"][0]
    assert sorted(run["per_query"]) == list(USERS)
    assert all(set(v) == {"P@2"} for v in run["per_query"].values())
    assert set(run["aggregate"]) == set(MEASURES)


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".tsv", ".json"])
def test_written_files(files: tuple[str, ...], tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"out{suffix}"
    _eval(files, "-o", str(out))
    if suffix == ".parquet":
        t = pq.read_table(out).to_pydict()
        _check(list(zip(t["measure"], t["query_id"])))
    elif suffix == ".csv":
        rows = list(csv.DictReader(io.StringIO(out.read_text())))
        _check([(r["measure"], r["query_id"]) for r in rows])
    elif suffix == ".tsv":
        _check([tuple(line.split("\t")[:2]) for line in out.read_text().splitlines()])  # type: ignore[misc]
    else:
        run = json.loads(out.read_text())["runs"][0]
        assert all(set(v) == {"P@2"} for v in run["per_query"].values())
