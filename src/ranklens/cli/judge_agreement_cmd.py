"""``ranklens judge agreement HUMAN_QRELS JUDGE_QRELS [--runs RUN...]``: how far the judge's labels agree
with human labels, and whether the systems rank the same under both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ranklens.cli._common import json_format_option

__all__ = ["agreement", "as_user_errors", "print_tables"]


@contextmanager
def as_user_errors() -> Iterator[None]:
    """Bad input → ``ranklens: error: …`` on one line, exit status 2 (also when the command is invoked
    outside the ``ranklens`` group)."""
    from ranklens.cli.main import UserFacingError
    from ranklens.errors import RanklensError

    try:
        yield
    except RanklensError as exc:
        raise UserFacingError(str(exc)) from None
    except FileNotFoundError as exc:
        raise UserFacingError(f"{exc.filename}: no such file") from None


def print_tables(tables: list[Any]) -> None:
    """Print rich tables (plain text) to stdout at the terminal's width, one blank line apart."""
    import io

    from ranklens.results.fit import console, terminal_width

    buffer = io.StringIO()
    con = console(buffer, terminal_width())
    for i, table in enumerate(tables):
        if i:
            con.print()
        con.print(table)
    click.echo(buffer.getvalue(), nl=False)


def _num(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _tables(res: Any) -> list[Any]:
    from rich.table import Table

    iv = res.kappa_quadratic_interval
    summary = Table(title="Judge vs human labels", title_justify="left")
    summary.add_column("statistic")
    summary.add_column("value", justify="right")
    rows: list[tuple[str, str]] = [
        ("pairs labelled by both", str(res.overlap)),
        ("human only / judge only", f"{res.human_only} / {res.judge_only}"),
        ("unjudged on either side (left out)", str(res.unjudged)),
        ("exact agreement", _num(res.exact)),
        ("Cohen's kappa", _num(res.kappa)),
        ("kappa, linear weights", _num(res.kappa_linear)),
        ("kappa, quadratic weights", _num(res.kappa_quadratic)),
        (f"  {iv.level:.0%} bootstrap interval", f"[{_num(iv.low)}, {_num(iv.high)}]"),
        ("Krippendorff's alpha, ordinal", _num(res.alpha_ordinal)),
        ("Krippendorff's alpha, interval", _num(res.alpha_interval)),
        ("Krippendorff's alpha, nominal", _num(res.alpha_nominal)),
    ]
    for name, value in rows:
        summary.add_row(name, value)
    conf = res.confusion.to_dict()
    matrix = Table(title="Confusion matrix", title_justify="left")
    matrix.add_column("human \\ judge")
    for label in conf["scale"]:
        matrix.add_column(str(label), justify="right")
    for label, counts in zip(conf["scale"], conf["counts"]):
        matrix.add_row(str(label), *(str(c) for c in counts))
    tables = [summary, matrix]
    o = res.ordering
    if o is not None:
        systems = Table(title=f"Systems by {o.measure} over {o.queries} queries", title_justify="left")
        for col, justify in (("system", "left"), ("human", "right"), ("rank", "right"), ("judge", "right"), ("rank ", "right")):
            systems.add_column(col, justify=justify)  # type: ignore[arg-type]
        rank_h = _ranks(o.human)
        rank_j = _ranks(o.judge)
        for i, name in enumerate(o.systems):
            systems.add_row(name, _num(o.human[i], 4), str(rank_h[i]), _num(o.judge[i], 4), str(rank_j[i]))
        tables.append(systems)
        ranking = Table(title="Do the systems rank the same?", title_justify="left")
        ranking.add_column("statistic")
        ranking.add_column("value", justify="right")
        ranking.add_row("Kendall's tau-b", _num(o.kendall_tau))
        ranking.add_row("tau_AP (judge vs human ordering)", _num(o.tau_ap))
        ranking.add_row("top system", f"human: {o.human_top}, judge: {o.judge_top}")
        ranking.add_row("top system agrees", "yes" if o.top_agrees else "NO")
        tables.append(ranking)
    return tables


def _ranks(values: tuple[float, ...]) -> list[int]:
    """Competition ranks (1 = best; ties share the better rank)."""
    return [1 + sum(w > v for w in values) for v in values]


@click.command("agreement", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("human_qrels", type=click.Path(dir_okay=False))
@click.argument("judge_qrels", type=click.Path(dir_okay=False))
@click.option("--runs", "runs", multiple=True, metavar="RUN", type=click.Path(dir_okay=False),
              help="Runs to order under both label sets (repeatable; NAME=PATH names one).")
@click.option("--measure", "-m", default="nDCG@10", show_default=True, help="The measure that orders the runs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap interval of kappa.")
@json_format_option
def agreement(human_qrels: str, judge_qrels: str, runs: tuple[str, ...], measure: str, seed: int, as_json: bool) -> None:
    """Agreement of JUDGE_QRELS with HUMAN_QRELS on the (query, document) pairs both label: Cohen's kappa
    (unweighted, linear, quadratic with a bootstrap interval), Krippendorff's alpha and the confusion matrix.
    With --runs (two or more), also Kendall's tau and tau_AP between the system orderings under human and
    judge labels, and whether the top system agrees.

    \b
    Example:
      ranklens judge agreement human.qrels judged.qrels --runs bm25.run --runs dense.run -m nDCG@10
    """
    with as_user_errors():
        report = _run(human_qrels, judge_qrels, runs, measure, seed)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_tables(_tables(report))


def _run(human_qrels: str, judge_qrels: str, runs: tuple[str, ...], measure: str, seed: int) -> Any:
    from ranklens.judges.agreement import agreement as compute

    named: dict[str, Any] | None = None
    if runs:
        named = _read_runs(runs)
    return compute(human_qrels, judge_qrels, runs=named, measure=measure, seed=seed)


def _read_runs(runs: tuple[str, ...]) -> dict[str, Any]:
    """``{name: Run}`` by the one naming rule of the other commands (NAME=PATH, else the tag, else the stem)."""
    from ranklens.cli._runs import final_names, named_runs
    from ranklens.data.io import read_run

    named = named_runs(runs, ())
    loaded = [read_run(path) for _, path in named]
    names = final_names(named, [r.name for r in loaded])
    return dict(zip(names, loaded))
