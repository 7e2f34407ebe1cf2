"""``ranklens ab CONTROL_QRELS CONTROL_RUN TREATMENT_QRELS TREATMENT_RUN -m MEASURE...``: an online A/B test of
two rankers between users (each user saw one arm)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ranklens.cli._common import policy_options
from ranklens.cli._measure_args import MeasureArgsCommand

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy

FORMATS = ("table", "markdown", "latex", "json", "html")
_EXT = {".md": "markdown", ".json": "json", ".txt": "table", ".tex": "latex", ".html": "html"}


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("control_qrels", type=click.Path(dir_okay=False))
@click.argument("control_run", type=click.Path(dir_okay=False))
@click.argument("treatment_qrels", type=click.Path(dir_okay=False))
@click.argument("treatment_run", type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, required=True, help="Per-user measures, e.g. -m nDCG@4 P@1.")
@click.option("--assignment", type=click.Path(dir_okay=False), help="'user arm' lines (or CSV/TSV/JSON): the sample-ratio check counts its users per arm.")
@click.option("--expected-split", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.5, show_default=True, help="Planned share of the control arm.")
@click.option("--pre", nargs=2, type=click.Path(dir_okay=False), metavar="CONTROL_PRE TREATMENT_PRE", help="Per-user results of the pre-period (eval -q -f json): CUPED.")
@click.option("--sequential", is_flag=True, help="Add the always-valid p-value and confidence sequence (mSPRT): safe under daily peeking.")
@click.option("--exposure", type=click.Path(dir_okay=False), help="'user time' of first exposure (ISO dates): the sequential result looks once per time.")
@click.option("--tau", type=click.FloatRange(0, min_open=True), help="mSPRT mixing sd on the scale of the difference (default: 0.1 × pooled sd).")
@click.option("--test", "-t", type=click.Choice(("welch", "mannwhitney", "bootstrap"), case_sensitive=False), default="welch", show_default=True, help="The test behind significance and the correction.")
@click.option("--ci", type=click.Choice(("welch", "bootstrap"), case_sensitive=False), default="welch", show_default=True, help="Interval of the difference.")
@click.option("--correction", type=click.Choice(("holm", "bonferroni", "bh", "none"), case_sensitive=False), default="holm", show_default=True, help="Correction over the measures (and measures × segments).")
@click.option("--segments", type=click.Path(dir_okay=False), help="'user segment' pairs: every statistic per segment too.")
@click.option("--allow-overlap", type=click.Choice(("drop", "keep"), case_sensitive=False), help="Users in both arms are refused; drop leaves them out, keep keeps them in both.")
@click.option("--names", nargs=2, default=("control", "treatment"), show_default=True, metavar="CONTROL TREATMENT", help="The arms' names (as the assignment file names them).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level.")
@click.option("--samples", "-B", type=click.IntRange(min=1), default=10_000, show_default=True, help="Bootstrap samples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS, case_sensitive=False), help="Report format (default: table, or from the --output extension).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to this file (.md, .tex, .json, .html, .txt).")
@click.option("--per-user", "per_user", type=click.Path(dir_okay=False), help="Also write each arm's per-user values (.json, .csv, .parquet: a results file of two runs, a pilot for ranklens plan).")
@click.option("--quiet", is_flag=True, help="No notes on stderr.")
@policy_options
def command(
    control_qrels: str,
    control_run: str,
    treatment_qrels: str,
    treatment_run: str,
    measures: tuple[str, ...],
    assignment: str | None,
    expected_split: float,
    pre: tuple[str, str] | None,
    sequential: bool,
    exposure: str | None,
    tau: float | None,
    test: str,
    ci: str,
    correction: str,
    segments: str | None,
    allow_overlap: str | None,
    names: tuple[str, str],
    alpha: float,
    samples: int,
    seed: int,
    fmt: str | None,
    output: str | None,
    per_user: str | None,
    quiet: bool,
    policy: EvalPolicy,
) -> None:
    """Compare two rankers served to different users (an online A/B test).

    Each arm is its qrels (labels from its own users' engagement) and its run (what it showed them), or a
    per-user results file (eval -q -f json) as the run. Per measure: each arm's n, mean and sd; the
    difference treatment − control with its interval; the relative lift (delta method); p-values of
    Welch's t-test (default), Mann–Whitney and a bootstrap; a sample-ratio-mismatch check (a mismatch is
    the first line of every report); CUPED with --pre; an always-valid p-value with --sequential.
    Users shown a list but without any engagement label are counted and scored by --missing (skip: left
    out; zero: scored 0).

    \b
    Examples:
      ranklens ab control.qrels control.run treatment.qrels treatment.run -m nDCG@4 --missing zero
      ranklens ab c.qrels c.run t.qrels t.run -m nDCG@4 --assignment assignment.tsv --pre c_pre.json t_pre.json
      ranklens ab c.qrels c.run t.qrels t.run -m nDCG@4 P@1 --sequential -f json
    """
    from ranklens.online.experiment import ab
    from ranklens.online.report import render_ab

    result = ab(
        control_qrels, control_run, treatment_qrels, treatment_run, list(measures), assignment=assignment,
        expected_split=expected_split, pre=tuple(pre) if pre else None, sequential=sequential, exposure=exposure,  # type: ignore[arg-type]
        tau=tau, test=test, ci=ci, correction=correction, segments=segments, allow_overlap=allow_overlap,
        names=names, alpha=alpha, samples=samples, seed=seed, policy=policy,
    )
    for w in result.warnings:
        click.echo(f"ranklens: WARNING: {w}", err=True)
    if not quiet:
        for note in result.notes:
            click.echo(f"ranklens: note: {note}", err=True)
    if per_user:
        from ranklens.results.io import write_results

        write_results(list(result.per_user), per_user)
    report_format = (fmt or (_EXT.get(Path(output).suffix.lower(), "table") if output else "table")).lower()
    text = render_ab(result, report_format)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        return
    click.echo(text, nl=False)
