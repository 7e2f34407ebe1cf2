"""The README documents every command, measure and parameter (datasette habit: docs can't drift)."""

from __future__ import annotations

import re
from pathlib import Path

from ranklens.cli.main import COMMANDS
from ranklens.measures import families
from ranklens.measures.catalog import markdown_measures, markdown_parameters

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _block(name: str) -> str:
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", README, re.S)
    assert m, f"README lacks the generated block '{name}' (run: ranklens measures --markdown)"
    return m.group(1)


def test_measure_table_is_generated_from_the_registry() -> None:
    assert _block("measures") == markdown_measures(), "README measure table is stale: ranklens measures --markdown"


def test_parameter_table_is_generated_from_the_registry() -> None:
    assert _block("parameters") == markdown_parameters(), "README parameter table is stale"


def test_every_family_and_parameter_is_in_the_readme() -> None:
    for f in families():
        assert f"`{f.name}`" in README
        for p in f.params:
            assert f"`{p.name}`" in README


def test_every_command_is_documented() -> None:
    for name in COMMANDS:
        assert f"ranklens {name}" in README, name
