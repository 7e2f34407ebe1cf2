"""``ranklens trec-eval`` without click (:mod:`ranklens.cli.trec_eval_express`, what the console script runs
for ``[-q] [-c] [-n] [-m NAME]... QRELS RUN``) prints trec_eval's bytes on every golden case it reads, and the
same output, messages and exit status as the click command on the rest and on errors."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.cli.trec_eval_express import parse, run

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
CASES = sorted(p.stem for p in DATA.glob("*.cmd"))


@pytest.fixture(autouse=True)
def _in_golden_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    for name in ("RANKLENS_BACKEND", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_DEBUG"):
        monkeypatch.delenv(name, raising=False)


def express(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str, str]:
    status = run(["trec-eval", *args])
    out, err = capsys.readouterr()
    return status, out, err


def clicked(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["trec-eval", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("case", CASES)
def test_golden_cases(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = shlex.split((DATA / f"{case}.cmd").read_text())[1:]
    status, out, err = express(args, capsys)
    if parse(args) is None:  # (an option read by the click command only: -J, -l2, -M, -R, -Z)
        assert status is None and out == err == ""
        return
    assert (status, err) == (0, "")
    assert out == (DATA / f"{case}.out").read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["nofile.qrels", "case1.run"], ["-m", "nope", "case1.qrels", "case1.run"], ["-m", "P.5,5", "case1.qrels", "case1.run"],
        ["-mP.", "case1.qrels", "case1.run"], ["case3.qrels", "case3.run"], ["-q", "case2.qrels", "case2.run"],
        ["-q", "-n", "-m", "map", "-m", "P.3", "specA.qrels", "specA.run"], ["-c", "-m", "all_trec", "case2.qrels", "case2.run"],
    ],
)
def test_the_same_as_the_click_command(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert express(args, capsys) == clicked(args)


@pytest.mark.parametrize("args", [["-J", "a", "b"], ["-qc", "a", "b"], ["a", "-"], ["--help"], ["a"], ["-m"], ["a", "b", "c"]])
def test_anything_else_is_the_click_commands(args: list[str]) -> None:
    assert parse(args) is None
