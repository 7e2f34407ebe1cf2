"""``ranklens compare QRELS RUN_A RUN_B [RUN...] -m MEASURE...``: paired significance tests between systems."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ranklens.cli._common import policy_options
from ranklens.cli._measure_args import MeasureArgsCommand

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR")
TESTS = ("t", "randomisation", "bootstrap", "wilcoxon", "sign", "tukey", "randomised-tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
REPORT_FORMATS = ("table", "markdown", "latex", "json", "html")


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help=f"Measures, e.g. -m nDCG@10 AP 'P(rel=2)@5'. Default: {' '.join(DEFAULT_MEASURES)}.",
)
@click.option(
    "--baseline",
    "-b",
    help="Compare every other run against this one (a RUN path, its name or its 0-based index). "
    "Default: every pair, the earlier run as baseline.",
)
@click.option(
    "--test",
    "-t",
    metavar="[" + "|".join(TESTS) + "]",
    default="t",
    show_default=True,
    help="Paired test: t, randomisation (Fisher; exact up to 20 queries), bootstrap (Sakai), wilcoxon, sign; "
    "all pairs of many systems: tukey (blocked two-way Tukey HSD), randomised-tukey. Aliases: student, fisher, "
    "permutation.",
)
@click.option(
    "--correction",
    "-c",
    type=click.Choice(CORRECTIONS, case_sensitive=False),
    default="holm",
    show_default=True,
    help="Multiple-comparison correction over the pairs of each measure (bh = Benjamini–Hochberg).",
)
@click.option(
    "--ci",
    type=click.Choice(("t", "bootstrap"), case_sensitive=False),
    default="t",
    show_default=True,
    help="Confidence interval of the mean difference: Student t or bootstrap percentile (level 1 − alpha).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level.",
)
@click.option(
    "--samples",
    "-B",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Monte Carlo samples (randomisation beyond 20 queries, bootstrap, randomised Tukey).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Random seed: the same seed gives the same result."
)
@click.option(
    "--segments",
    type=click.Path(dir_okay=False),
    help="A file of 'query_id segment' lines: results per segment as well as overall.",
)
@click.option(
    "--costs",
    type=click.Path(dir_okay=False),
    help="A CSV/TSV file with a 'system' column and one column per cost (lower is better): Pareto table.",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(REPORT_FORMATS, case_sensitive=False),
    help="Report format (default: table, or from the --output extension).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    help="Write the report to this file (.md, .tex, .json, .html, .txt).",
)
@click.option("--quiet", is_flag=True, help="Do not print notes about dropped queries.")
@policy_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    baseline: str | None,
    test: str,
    correction: str,
    ci: str,
    alpha: float,
    samples: int,
    seed: int,
    segments: str | None,
    costs: str | None,
    fmt: str | None,
    output: str | None,
    quiet: bool,
    missing: str,
    negative: str,
    judged_only: bool,
    max_docs: int | None,
    rel_level: int | None,
    qrels_format: str | None,
    run_format: str | None,
) -> None:
    """Compare RUNs against QRELS with paired significance tests over queries.

    For each pair and measure: the means, the difference with its confidence interval, the p-value and the
    corrected p-value, paired Cohen's d and wins/ties/losses; per segment with --segments; the cost–quality
    Pareto front with --costs. Pairs are compared on the queries both runs answered; the dropped queries
    are reported on stderr (--missing zero scores them 0 instead).

    \b
    Examples:
      ranklens compare qrels.txt bm25.run dense.run -m nDCG@10 AP
      ranklens compare qrels.txt a.run b.run c.run --baseline a.run --test randomisation
      ranklens compare qrels.txt a.run b.run c.run --test tukey -f latex
      ranklens compare qrels.txt bm25.run dense.run --segments segments.tsv -o report.html
    """
    from ranklens.compare import compare, unique_names
    from ranklens.data.io import read_qrels, read_run
    from ranklens.errors import InputError
    from ranklens.report import format_for_path, render

    if len(runs) < 2:
        raise InputError("compare needs at least two RUN files")
    q = read_qrels(qrels, format=qrels_format)
    loaded = [read_run(path, format=run_format) for path in runs]
    names = unique_names([(r.name, path) for r, path in zip(loaded, runs)])
    base = _baseline(baseline, runs, names)
    comparison = compare(
        q,
        dict(zip(names, loaded)),
        measures or DEFAULT_MEASURES,
        baseline=base,
        test=test,
        correction=correction.lower(),
        ci=ci.lower(),
        segments=segments,
        alpha=alpha,
        samples=samples,
        seed=seed,
        costs=costs,
        missing=missing,
        negative=negative,
        judged_only=judged_only,
        max_docs=max_docs,
        rel_level=rel_level,
    )
    if not quiet:
        for note in comparison.notes:
            click.echo(f"ranklens: note: {note}", err=True)
    report_format = (fmt or (format_for_path(output) if output else "table")).lower()
    text = render(comparison, report_format)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        if not quiet:
            click.echo(f"ranklens: wrote {report_format} report to {output}", err=True)
        return
    click.echo(text, nl=not text.endswith("\n"))


def _baseline(baseline: str | None, runs: tuple[str, ...], names: list[str]) -> str | int | None:
    """The baseline as a system name: a RUN path given on the command line, a name, or an index."""
    if baseline is None:
        return None
    for i, path in enumerate(runs):
        if baseline == path or (os.path.exists(baseline) and os.path.exists(path) and os.path.samefile(baseline, path)):
            return names[i]
    if baseline in names:
        return baseline
    if baseline.isdigit():
        return int(baseline)
    return baseline  # compare() names the systems in its error message
