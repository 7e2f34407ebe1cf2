"""``ranklens rules add|list|edit|disable|enable --url URL --token TOKEN PROJECT …``: a monitor project's
rules, over the HTTP API (:class:`ranklens.monitor.client.MonitorClient`).

``ranklens rules add --file rules.toml PROJECT`` reads the rules file ``ranklens gate --rules`` reads
(:func:`ranklens.gates.files.read_rules`), so one file serves CI and monitoring. Adding a rule the project
already has returns that rule (same id): running the same ``add`` twice does not make two rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from ranklens.errors import InputError, MissingDependencyError

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _server_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--token", envvar="RANKLENS_TOKEN", help="Write token ($RANKLENS_TOKEN).")(fn)
    fn = click.option(
        "--url", envvar="RANKLENS_URL", default="http://127.0.0.1:8000", show_default=True, help="Server ($RANKLENS_URL)."
    )(fn)
    return fn


def _client(url: str, token: str | None) -> Any:
    try:
        from ranklens.monitor.client import MonitorClient
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(exc.name or "httpx", "monitor", "ranklens rules") from None
    return MonitorClient(url, token)


def _show(rules: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rules, indent=2, ensure_ascii=False))
        return
    if not rules:
        click.echo("no rule")
        return
    for r in rules:
        state = "enabled " if r.get("enabled", True) else "disabled"
        scope = "" if r.get("segment") else "  (all queries and every segment)"  # the gate's meaning too
        click.echo(f"{r['id']:>5}  {state}  {r.get('description') or r.get('name')}{scope}")


_FORMAT = click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)


@click.group(context_settings=CONTEXT)
def command() -> None:
    """Manage a monitor project's rules (the server's HTTP API).

    \b
    Examples:
      ranklens rules add search "nDCG@10 >= 0.85" --segment books --url http://monitor:8000
      ranklens rules add search --file rules.toml        # the file `ranklens gate --rules` reads
      ranklens rules list search
      ranklens rules edit search 3 "nDCG@10 >= 0.8"
      ranklens rules disable search 3
      ranklens rules headline search P@5                  # the measure the pages open on
    """


@command.command("add", context_settings=CONTEXT)
@click.argument("project")
@click.argument("expr", required=False)
@click.option("--file", "rules_file", type=click.Path(dir_okay=False, exists=True),
              help="A TOML rules file (the format of `ranklens gate --rules`): add every rule in it.")
@click.option("--segment", help="Check the value of this segment (default: all queries).")
@click.option("--system", help="Only this system (default: every system of the project).")
@click.option("--name", help="A name for the rule.")
@_FORMAT
@_server_options
def add(project: str, expr: str | None, rules_file: str | None, segment: str | None, system: str | None,
        name: str | None, fmt: str, url: str, token: str | None) -> None:
    """Add the rule EXPR (`nDCG@10 >= 0.85`, `nDCG@10 drop <= 0.02 window=7`, `nDCG@10 drop <= 0 vs=bm25`)
    or every rule of --file to PROJECT. A rule the project already has is not added twice."""
    if (expr is None) == (rules_file is None):
        raise InputError("give a rule expression or --file RULES.toml (one of the two)")
    with _client(url, token) as c:
        if rules_file is not None:
            if segment or system or name:
                raise InputError("--segment, --system and --name go with an expression; a rules file names its own")
            rules = c.add_rules_file(project, rules_file)
        else:
            fields = {k: v for k, v in {"segment": segment, "system": system, "name": name}.items() if v is not None}
            rules = [c.add_rule(project, expr, **fields)]
    _show(rules, fmt)


@command.command("list", context_settings=CONTEXT)
@click.argument("project")
@_FORMAT
@_server_options
def list_(project: str, fmt: str, url: str, token: str | None) -> None:
    """List PROJECT's rules (id, enabled or disabled, description)."""
    with _client(url, token) as c:
        _show(c.rules(project), fmt)


@command.command("edit", context_settings=CONTEXT)
@click.argument("project")
@click.argument("rule_id", type=click.IntRange(1, 2**63 - 1))
@click.argument("expr", required=False)
@click.option("--segment", help="Check this segment instead ('' for all queries).")
@click.option("--system", help="Only this system ('' for every system).")
@click.option("--name", help="A new name.")
@click.option("--enable/--disable", "enabled", default=None, help="Enable or disable the rule.")
@_FORMAT
@_server_options
def edit(project: str, rule_id: int, expr: str | None, segment: str | None, system: str | None, name: str | None,
         enabled: bool | None, fmt: str, url: str, token: str | None) -> None:
    """Change rule RULE_ID of PROJECT in place (it keeps its id): a new EXPR, segment, system, name or state."""
    fields: dict[str, Any] = {}
    if segment is not None:
        fields["segment"] = segment or None
    if system is not None:
        fields["system"] = system or None
    if name is not None:
        fields["name"] = name
    if enabled is not None:
        fields["enabled"] = enabled
    if expr is None and not fields:
        raise InputError("nothing to change: give an expression, --segment, --system, --name or --enable/--disable")
    with _client(url, token) as c:
        _show([c.edit_rule(project, rule_id, expr, **fields)], fmt)


@command.command("disable", context_settings=CONTEXT)
@click.argument("project")
@click.argument("rule_id", type=click.IntRange(1, 2**63 - 1))
@_FORMAT
@_server_options
def disable(project: str, rule_id: int, fmt: str, url: str, token: str | None) -> None:
    """Disable rule RULE_ID of PROJECT (it is no longer checked; `enable` turns it back on)."""
    with _client(url, token) as c:
        _show([c.disable_rule(project, rule_id)], fmt)


@command.command("enable", context_settings=CONTEXT)
@click.argument("project")
@click.argument("rule_id", type=click.IntRange(1, 2**63 - 1))
@_FORMAT
@_server_options
def enable(project: str, rule_id: int, fmt: str, url: str, token: str | None) -> None:
    """Enable rule RULE_ID of PROJECT again."""
    with _client(url, token) as c:
        _show([c.enable_rule(project, rule_id)], fmt)


@command.command("headline", context_settings=CONTEXT)
@click.argument("project")
@click.argument("measure", required=False)
@click.option("--clear", is_flag=True, help="Back to the default (nDCG@10 when present).")
@_server_options
def headline(project: str, measure: str | None, clear: bool, url: str, token: str | None) -> None:
    """Set the headline MEASURE of PROJECT: the measure its dashboard pages open on. Default: nDCG@10
    when the project has it."""
    if (measure is None) != clear:
        raise InputError("give a MEASURE or --clear (one of the two)")
    with _client(url, token) as c:
        out = c.set_headline_measure(project, None if clear else measure)
    click.echo(f"{out['name']}: headline measure {out['headline_measure'] or '(default: nDCG@10 when present)'}")
