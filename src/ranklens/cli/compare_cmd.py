"""``ranklens compare QRELS RUN_A RUN_B [RUN...] -m MEASURE...``: paired significance tests between systems."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ranklens.cli._common import DEFAULT_MEASURES, engine_options, policy_options
from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._runs import name_option

if TYPE_CHECKING:
    from ranklens.engine.policy import EvalPolicy

TESTS = ("t", "randomisation", "bootstrap", "wilcoxon", "sign", "tukey", "randomised-tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
REPORT_FORMATS = ("table", "markdown", "latex", "json", "html")


class CompareCommand(MeasureArgsCommand):
    """``-c`` is trec_eval's (``--missing zero``) as in every command; ``-c holm`` (the old short form of
    ``--correction``) still works."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out = list(args)
        for i in range(len(out) - 1):
            if out[i] == "-c" and out[i + 1].lower() in CORRECTIONS:
                out[i] = "--correction"
        return super().parse_args(ctx, out)


@click.command(cls=CompareCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path())
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help=f"Measures, e.g. -m nDCG@10 AP 'P(rel=2)@5'. Default: {' '.join(DEFAULT_MEASURES)} (for saved "
    "results: the measures they all hold).",
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
    help="Query → segment pairs ('query_id segment' lines, CSV/TSV with a header, or JSON {query_id: segment}): "
    "results per segment as well as overall.",
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
@click.option(
    "--worst",
    type=click.IntRange(min=0),
    metavar="N",
    help="Also list the N queries with the largest drop of every pair and measure (terminal table; "
    "-f json always holds every query's difference).",
)
@click.option(
    "--explain-diff",
    "explain_diff",
    type=click.Path(dir_okay=False),
    help="Write an HTML page explaining every pair's change (ranklens diff's view: per-document contributions, "
    "worst queries linked) for the measures diff decomposes (nDCG, DCG, P, RR, AP).",
)
@click.option(
    "--fuse",
    "fuse_specs",
    multiple=True,
    metavar="SPEC",
    help="Add a fused system made of the RUN files: METHOD[:KEY=VALUE]... with norm, weights (W1,W2,…), qrels "
    "(training judgements of a trained method), name, and the method's parameters; e.g. --fuse rrf "
    "--fuse wsum:norm=zmuv:weights=0.3,0.7 (repeatable; docs/fusion.md).",
)
@name_option
@click.option("--quiet", is_flag=True, help="No progress display and no notes about dropped queries.")
@engine_options
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
    worst: int | None,
    explain_diff: str | None,
    fuse_specs: tuple[str, ...],
    names: tuple[str, ...],
    quiet: bool,
    engine: str,
    spark_master: str,
    memory_limit: str | None,
    policy: EvalPolicy,
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
      ranklens compare qrels.parquet a.parquet b.parquet --engine spark
      ranklens compare qrels.parquet runs/a/ runs/b/ --engine duckdb --memory-limit 4GB
    """
    from ranklens.cli._runs import named_runs

    named = named_runs(runs, names)
    options = dict(
        measures=measures, policy=policy, quiet=quiet, baseline=baseline, fmt=fmt, output=output, worst=worst,
        test=test, correction=correction, ci=ci, segments=segments, alpha=alpha, samples=samples, seed=seed,
        costs=costs, engine=engine, spark_master=spark_master, explain_diff=explain_diff, memory_limit=memory_limit,
    )
    if fuse_specs:
        import tempfile

        from ranklens.cli._fuse_spec import fuse_systems

        with tempfile.TemporaryDirectory(prefix="ranklens-fuse-") as tmp:
            named = [*named, *fuse_systems(fuse_specs, named, Path(tmp), policy.run_format)]
            _compare(qrels, named, options)
        return
    _compare(qrels, named, options)


def _compare(qrels: str, named: list[tuple[str | None, str]], a: dict[str, Any]) -> None:
    """The comparison of ``named`` (:func:`ranklens.cli.compare_run.run_compare`, printed by click)."""
    from ranklens.cli._common import echo_note, progress_hook
    from ranklens.cli._progress import wanted
    from ranklens.cli.compare_run import run_compare

    show = wanted(a["quiet"])
    run_compare(
        qrels, named, a, progress=progress_hook(show), show=show, on_note=echo_note,
        out=lambda text: click.echo(text, nl=not text.endswith("\n")), err=lambda text: click.echo(text, err=True),
    )
