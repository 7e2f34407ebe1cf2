"""Issue 24: ``--quiet`` on every command, and one spelling of the confidence level (``--alpha``, as in
``compare`` and ``gate``; ``--confidence``/``--level`` still accepted, with a note)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from ranklens.cli.main import COMMANDS, cli


def _all_commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    out = []
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        out.append((name, cmd))
        if isinstance(cmd, click.Group):  # (subcommands a group loads lazily too)
            sub_ctx = click.Context(cmd)
            out.extend((f"{name} {sub}", cmd.get_command(sub_ctx, sub)) for sub in cmd.list_commands(sub_ctx))
    return out


@pytest.mark.parametrize(("name", "command"), _all_commands(), ids=[n for n, _ in _all_commands()])
def test_every_command_takes_quiet(name: str, command: click.Command) -> None:
    assert any("--quiet" in getattr(p, "opts", ()) for p in command.params), name


def _load(relative: str) -> Any:
    """A sibling test module (the tests folders are not packages)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / relative
    spec = importlib.util.spec_from_file_location(path.stem + "_for_quiet", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ppi_files(tmp_path: Path) -> list[str]:
    _world = _load("judges/test_ppi_cmd.py")._world

    human, judge, a, _ = _world()
    paths = []
    for name, data, run in (("h.qrels", human, False), ("j.qrels", judge, False), ("a.run", a, True)):
        p = tmp_path / name
        rows = (f"{q} Q0 {d} 0 {v} t\n" if run else f"{q} 0 {d} {v}\n" for q, ds in data.items() for d, v in ds.items())
        p.write_text("".join(rows))
        paths.append(str(p))
    return paths


def test_ppi_level_is_spelled_alpha(tmp_path: Path) -> None:
    files = _ppi_files(tmp_path)
    base = ["judge", "ppi", *files, "-m", "nDCG@10", "-f", "json"]
    new = CliRunner().invoke(cli, [*base, "--alpha", "0.1"])
    old = CliRunner().invoke(cli, [*base, "--level", "0.9"])
    default = CliRunner().invoke(cli, base)
    assert new.exit_code == old.exit_code == default.exit_code == 0, (new.output, old.output)
    assert json.loads(new.stdout) == json.loads(old.stdout) != json.loads(default.stdout)
    assert new.stderr == ""
    assert old.stderr == "ranklens: note: --level 0.9 is spelled --alpha 0.1 in every command; --level will go\n"
    quiet = CliRunner().invoke(cli, [*base, "--level", "0.9", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and json.loads(quiet.stdout) == json.loads(new.stdout)
    clash = CliRunner().invoke(cli, [*base, "--level", "0.9", "--alpha", "0.05"])
    assert clash.exit_code == 2 and "--level 0.9 and --alpha 0.05 disagree" in clash.output


def test_ips_confidence_is_spelled_alpha(tmp_path: Path) -> None:
    import polars as pl

    simulated_log = _load("unbiased/test_position_bias.py").simulated_log

    path = tmp_path / "clicks.csv"
    pl.DataFrame(simulated_log(seed=3, intervention_every=1)).write_csv(path)
    base = ["ips", "position-bias", str(path), "--boot", "20", "--json"]
    new = CliRunner().invoke(cli, [*base, "--alpha", "0.2"])
    old = CliRunner().invoke(cli, [*base, "--confidence", "0.8"])
    assert new.exit_code == old.exit_code == 0, (new.output, old.output)
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert "--confidence 0.8 is spelled --alpha 0.2" in old.stderr
