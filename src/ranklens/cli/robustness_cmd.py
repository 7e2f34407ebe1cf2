"""``ranklens robustness QRELS RUN_A RUN_B -m MEASURE``: does the comparison's conclusion survive the
evaluation choices (a multiverse analysis)?"""

from __future__ import annotations

from pathlib import Path

import click

TESTS = ("t", "randomisation", "wilcoxon", "bootstrap", "sign")
MISSING = ("skip", "zero")


def _split(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    from ranklens.errors import InputError

    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise InputError(f"--{what}: expected a comma-separated list of {', '.join(allowed)}; found {text!r}")
    return list(dict.fromkeys(items))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("-m", "--measure", required=True, help="One measure, e.g. nDCG@10 (its own parameters are the default).")
@click.option("--tests", default="t,randomisation,wilcoxon", show_default=True,
              help="Paired tests to vary over (the first is the default analysis's).")
@click.option("--missing", "missing", default="skip,zero", show_default=True,
              help="Missing-query policies to vary over (the first is the default analysis's).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level.")
@click.option("--samples", "-B", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Monte Carlo samples of the randomisation test beyond 20 queries (and bootstrap).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed: the same seed gives the same result.")
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Depth of the recall ideal (ideal=recall; at least the cutoff).")
@click.option("--only", "only", multiple=True, metavar="DIM=V1,V2",
              help="Keep only these values of a dimension (gain, ideal, ties, judged_only, missing, test), e.g. "
              "--only ideal=global,local (repeatable; the first value kept is the default).")
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json"), case_sensitive=False), default="table",
              show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the output to this file.")
@click.option("--quiet", is_flag=True, help="No notes on stderr.")
def command(qrels: str, run_a: str, run_b: str, measure: str, tests: str, missing: str, alpha: float, samples: int,
            seed: int, depth: int, only: tuple[str, ...], fmt: str, output: str | None, quiet: bool) -> None:
    """Re-run the comparison of RUN_B against RUN_A under every evaluation choice.

    The choices: the measure's gain (linear, exp), ideal (global, local, recall, max) and tie policy (trec,
    average) where it has them, judged-only or not, missing queries skipped or scored 0, and the paired test.
    Reports in what share of the analyses the default analysis's conclusion (direction and significance at
    alpha) holds, and which choices flip it.

    \b
    Examples:
      ranklens robustness qrels.txt bm25.run dense.run -m nDCG@10
      ranklens robustness qrels.txt bm25.run dense.run -m 'P@5' --tests t,wilcoxon -f json
      ranklens robustness qrels.txt bm25.run dense.run -m nDCG@10 --only ideal=global,local
    """
    from ranklens.comparison.robustness import robustness
    from ranklens.errors import InputError

    restricted: dict[str, list[str]] = {}
    for item in only:
        dim, eq, values = item.partition("=")
        if not eq or not dim.strip() or not values.strip():
            raise InputError(f"--only: expected DIM=V1,V2 (e.g. ideal=global,local); found {item!r}")
        restricted[dim.strip()] = [v for v in values.split(",") if v.strip()]

    result = robustness(
        qrels, run_a, run_b, measure, tests=_split(tests, TESTS, "tests"),
        missing=_split(missing, MISSING, "missing"), alpha=alpha, samples=samples, seed=seed, depth=depth,
        only=restricted,
    )
    if not quiet:
        for note in result.notes:
            click.echo(f"ranklens: note: {note}", err=True)
    text = result.to_json() + "\n" if fmt.lower() == "json" else _table(result)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        return
    click.echo(text, nl=False)


def _table(result: object) -> str:
    from ranklens.comparison.robustness import Robustness

    assert isinstance(result, Robustness)
    s = result.summary()
    d = result.default
    a, b = result.systems
    lines = [
        f"{b} vs {a} on {result.measure}: {s['analyses']} analyses "
        f"({' × '.join(f'{k} {len(v)}' for k, v in result.choices.items())})",
        f"default ({', '.join(f'{k}={v}' for k, v in d.choices.items())}): difference {d.mean_difference:+.4f}, "
        f"p = {d.p:.4g}, {'significant' if d.significant else 'not significant'} at {result.alpha:g}",
        f"agree with the default: {s['agree']} of {s['analyses']} ({s['share_agree']:.0%}); "
        f"significant: {s['significant']}; {b} better: {s['directions']['better']}, "
        f"worse: {s['directions']['worse']}, equal: {s['directions']['equal']}",
        "",
        f"{'choice':<12} {'value':<14} {'analyses':>8} {'agree':>6} {'flips':>6} {'significant':>11}",
    ]
    for dim, values in s["per_choice"].items():
        for v, c in values.items():
            lines.append(f"{dim:<12} {str(v):<14} {c['analyses']:>8} {c['agree']:>6} {c['flips']:>6} "
                         f"{c['significant']:>11}")
    flips = s["one_change_flips"]
    lines.append("")
    lines.append("single changes that flip the conclusion: " + (", ".join(
        f"{f['choice']}={f['value']} ({f['direction']}, {'significant' if f['significant'] else 'not significant'})"
        for f in flips) or "none"))
    return "\n".join(lines) + "\n"
