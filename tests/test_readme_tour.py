"""The README's 5-minute tour works as written on a plain install (what `make demo` installs): every
`$ ranklens …` command of the tour and its Python block run, and what they need is in the base install."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TOUR = README[README.index("## A 5-minute tour") : README.index("## Why another evaluation tool?")]


def _commands() -> list[str]:
    out = []
    for block in re.findall(r"```console\n(.*?)```", TOUR, re.S):
        for line in block.splitlines():
            if line.startswith("$ ranklens "):
                out.append(line[2:].split("  #")[0].strip())
    return out


COMMANDS = [c for c in _commands() if " push " not in c]  # push needs the running server (tests/monitor)


def test_the_tour_has_commands() -> None:
    assert len(COMMANDS) >= 8


@pytest.fixture
def in_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
def test_tour_command(command: str, in_a_copy: Path) -> None:
    args = shlex.split(command)[1:]
    redirect = None
    if ">" in args:  # `… > results.json`
        redirect = in_a_copy / args[args.index(">") + 1]
        args = args[: args.index(">")]
    result = CliRunner().invoke(cli, args)
    if redirect is not None:
        redirect.write_text(result.stdout)
    expected = (0, 1) if args[0] == "gate" else (0,)  # the tour's second gate fails on purpose
    assert result.exit_code in expected, f"{command}\n{result.output}"
    assert "Traceback" not in result.output
    if "-o" in args:
        assert (in_a_copy / args[args.index("-o") + 1]).stat().st_size > 0


@pytest.mark.filterwarnings("ignore::ranklens.errors.RanklensWarning")  # the notes, as a notebook shows them
def test_tour_python_block(in_a_copy: Path) -> None:
    block = re.search(r"\*\*From Python\.\*\*\n\n```python\n(.*?)```", TOUR, re.S)
    assert block, "the tour lost its Python block"
    exec(compile(block.group(1), "README.md", "exec"), {})  # noqa: S102 - our own README


def test_what_the_tour_needs_is_in_the_base_install() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    assert {"pandas", "plotly"} <= names  # res.to_pandas() and compare -o report.html


def test_the_tour_starts_the_server_with_the_token_it_pushes_with() -> None:
    assert "RANKLENS_TOKEN=secret make dashboard" in TOUR
    assert "RANKLENS_TOKEN=secret ranklens push" in TOUR
