"""``ranklens judge ppi HUMAN_QRELS JUDGE_QRELS RUN [--vs RUN2] -m nDCG@10``: a mean measure (or a paired
difference) from few human-labelled and many judge-labelled queries, by prediction-powered inference."""

from __future__ import annotations

import json
from typing import Any

import click

from ranklens.cli._alpha import alpha_options, confidence_level
from ranklens.cli._common import json_format_option
from ranklens.cli.judge_agreement_cmd import as_user_errors, print_tables

__all__ = ["ppi"]


def _table(report: Any) -> Any:
    from rich.table import Table

    p = report.ppi
    what = "mean difference" if " - " in report.system else "mean"
    table = Table(title=f"{report.system}: {what} {report.measure}, {p.level:.0%} intervals", title_justify="left")
    for col, justify in (("method", "left"), ("estimate", "right"), ("interval", "right"), ("std. error", "right"),
                         ("queries", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    label = f"PPI++ (tuned, lambda={p.lam:.2f})" if p.method == "ppi++" else "PPI"
    rows = [
        (label, p, f"{p.n} human + {p.n_unlabelled} judge-only"),
        ("human labels only", report.human_only, str(report.human_only.n)),
        ("judge labels only (naive)", report.judge_only, str(report.judge_only.n)),
    ]
    for name, est, queries in rows:
        table.add_row(name, f"{est.estimate:.4f}", f"[{est.low:.4f}, {est.high:.4f}]", f"{est.std_error:.4f}", queries)
    return table


@click.command("ppi", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("human_qrels", type=click.Path(dir_okay=False))
@click.argument("judge_qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--vs", "vs", type=click.Path(dir_okay=False), metavar="RUN2",
              help="A second run: estimate the mean per-query difference RUN - RUN2.")
@click.option("--measure", "-m", default="nDCG@10", show_default=True, help="The measure.")
@alpha_options("--level")
@click.option("--no-tune", is_flag=True, help="Classic PPI (lambda = 1) instead of power-tuned PPI++.")
@json_format_option
def ppi(human_qrels: str, judge_qrels: str, run: str, vs: str | None, measure: str, alpha: float | None,
        legacy_level: float | None, no_tune: bool, as_json: bool) -> None:
    """Estimate the mean MEASURE of RUN (with --vs: of RUN - RUN2) from the queries HUMAN_QRELS labels plus
    the queries only JUDGE_QRELS labels: the judge's mean corrected by its mean error on the human-labelled
    queries (prediction-powered inference), with a confidence interval, next to the human-only and the naive
    judge-only estimates. Valid when the human-labelled queries are a random sample of all the queries.

    \b
    Example:
      ranklens judge ppi human.qrels judged.qrels dense.run --vs bm25.run -m nDCG@10
    """
    from ranklens.cli._runs import split_name
    from ranklens.judges.ppi import ppi_evaluate

    level = confidence_level(alpha, legacy_level, "--level")
    (name_a, path_a) = split_name(run)
    (name_b, path_b) = split_name(vs) if vs is not None else (None, None)
    with as_user_errors():
        report = ppi_evaluate(human_qrels, judge_qrels, path_a, vs=path_b, measure=measure, level=level,
                              tune=not no_tune, names=(name_a, name_b))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_tables([_table(report)])


command = ppi
