"""The body of ``ranklens compare`` without click: the runs evaluated through the one dispatcher, compared and
rendered, written through the printers it is given. :mod:`ranklens.cli.compare_cmd` runs it with click's
options and printers; the express form (:mod:`ranklens.cli.express_compare`) with its own, for the plain
command lines it recognises before click."""

from __future__ import annotations

from ranklens.cli.defaults import DEFAULT_MEASURES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ranklens.engine.policy import EvalPolicy
    from ranklens.hooks import ProgressHook

__all__ = ["run_compare"]


def run_compare(
    qrels: str,
    named: list[tuple[str | None, str]],
    a: dict[str, Any],
    *,
    progress: ProgressHook | None,
    show: bool,
    on_note: Callable[[str], None],
    out: Callable[[str], object],
    err: Callable[[str], object],
) -> None:
    """The comparison of ``named`` (the body of ``ranklens compare``; ``a`` its options): evaluated through the
    one dispatcher, compared, rendered; ``on_note`` says a note of the evaluation (none with ``--quiet``),
    ``err`` a line of notes, ``out`` the report (as it is: it ends in a newline or gets one)."""
    from ranklens.cli._progress import status
    from ranklens.comparison import compare
    from ranklens.errors import InputError
    from ranklens.evaluation import evaluate_systems, resolve_baseline
    from ranklens.report import format_for_path, render

    measures, policy, quiet, baseline, fmt, output, worst = (
        a["measures"], a["policy"], a["quiet"], a["baseline"], a["fmt"], a["output"], a["worst"]
    )
    test, correction, ci, segments, alpha, samples, seed, costs, engine, spark_master = (
        a["test"], a["correction"], a["ci"], a["segments"], a["alpha"], a["samples"], a["seed"], a["costs"],
        a["engine"], a["spark_master"],
    )
    if len(named) < 2:
        raise InputError("compare needs at least two RUN files")
    if a["explain_diff"]:
        _diff_measures(list(measures or DEFAULT_MEASURES))
    labels, systems, paths, asked = evaluate_systems(
        qrels, named, measures, policy, default_measures=DEFAULT_MEASURES, progress=progress,
        on_note=None if quiet else on_note, engine=engine, spark_master=spark_master,
        memory_limit=a["memory_limit"],
    )
    base = resolve_baseline(baseline, paths, labels)
    with status(f"comparing {len(labels)} systems", enabled=show):
        comparison = compare(
            None,
            dict(zip(labels, systems)),
            asked,
            baseline=base,
            test=test,
            correction=correction.lower(),
            ci=ci.lower(),
            segments=segments,
            alpha=alpha,
            samples=samples,
            seed=seed,
            costs=costs,
            **{k: getattr(policy, k) for k in ("missing", "negative", "judged_only", "max_docs", "rel_level")},
        )
    if not quiet:
        for note in comparison.notes:
            err(f"ranklens: note: {note}")
    if a["explain_diff"]:
        _explain(qrels, dict(zip(labels, paths)), comparison, a["explain_diff"], policy)
        if not quiet:
            err(f"ranklens: wrote the explained differences to {a['explain_diff']}")
    report_format = (fmt or (format_for_path(output) if output else "table")).lower()
    options = {"worst": worst} if worst and report_format == "table" else {}
    text = render(comparison, report_format, **options)
    if output:
        with open(output, "w", encoding="utf-8") as fh:  # (as Path.write_text: pathlib is not imported for it)
            fh.write(text)
        if not quiet:
            err(f"ranklens: wrote {report_format} report to {output}")
        return
    out(text)


def _explain(qrels: str, paths: dict[str, Any], comparison: Any, out: str, policy: EvalPolicy) -> None:
    """``--explain-diff``: ``ranklens diff`` of every compared pair, on the measures it decomposes, one page."""
    from ranklens.errors import InputError
    from ranklens.research.diff import diff_runs
    from ranklens.research.diff_html import render_html

    rows = comparison.select()
    measures = _diff_measures(list(dict.fromkeys(r.measure for r in rows)))
    pairs = list(dict.fromkeys((r.baseline, r.system) for r in rows if r.segment is None))
    unread = [n for pair in pairs for n in pair if not isinstance(paths.get(n), str)]
    if unread:
        raise InputError(f"--explain-diff needs run files; {unread[0]!r} is saved results")
    diffs = [(a, b, diff_runs(qrels, paths[a], paths[b], measures, missing=policy.missing)) for a, b in pairs]
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(render_html(diffs, title="ranklens compare: the differences explained"))


def _diff_measures(names: list[str]) -> list[str]:
    """The measures of ``names`` that ``diff`` decomposes (a one-line error when there is none)."""
    from ranklens.errors import InputError, MeasureError
    from ranklens.measures.language import parse_many
    from ranklens.research.terms import check_supported

    kept = []
    for m in parse_many(names):
        try:
            check_supported(m)
            kept.append(str(m))
        except (InputError, MeasureError):
            continue
    if not kept:
        raise InputError("--explain-diff: none of the measures is one diff decomposes (nDCG, DCG, P, RR, AP)")
    return kept
