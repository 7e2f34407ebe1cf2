"""``ranklens gate QRELS RUN --min nDCG@10=0.85 [--baseline BASE --max-drop nDCG@10=0.01 --alpha 0.05]``.

A regression gate for CI: exit 0 when every rule holds, 1 when one fails (saying which, by how much and on
which segment), 2 on bad input. The gate fails closed: every qrels query counts (one the run misses scores
0, as with trec_eval -c) unless ``--missing skip`` says otherwise, and then each check says on how many
queries it was made ("on 5 of 12 queries"); a check over no query fails; a run (or baseline) sharing no
query with the qrels, or segments labelling none of its queries, is bad input (exit 2).
Rules come from the command line and/or a small TOML file::

    # gate.toml
    alpha = 0.05            # optional: a drop fails only when it is also significant
    test = "t"              # paired test for drops (t, randomisation, bootstrap, wilcoxon, sign)
    correction = "holm"     # across segments

    [min]                   # the run's mean must be at least this (overall and in every segment)
    "nDCG@10" = 0.85

    [max_drop]              # the run may trail the baseline by at most this much
    "nDCG@10" = 0.01

    [segment.navigational.min]   # per-segment thresholds replace the general ones for that segment
    "nDCG@10" = 0.9
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import click

from ranklens.cli._common import policy_options
from ranklens.cli._runs import name_option
from ranklens.comparison import parse_number

__all__ = ["Check", "GateSettings", "Rule", "check_rules", "command", "parse_rule", "read_rules"]

#: Slack on threshold comparisons, so that a mean equal to the threshold up to float rounding passes.
_EPS = 1e-12
_TOP_KEYS = ("alpha", "test", "correction", "seed", "samples", "min", "max_drop", "segment")
_SEGMENT_KEYS = ("min", "max_drop")


@dataclass(frozen=True)
class Rule:
    """``kind`` is ``min`` or ``max_drop``; ``segment`` is ``None`` for a general rule (all queries and,
    with segments, every segment) or the one segment it is written for."""

    kind: str
    measure: str
    threshold: float
    segment: str | None = None


@dataclass(frozen=True)
class Check:
    """One rule checked on one scope (``segment`` ``None`` = all queries)."""

    kind: str
    measure: str
    segment: str | None
    threshold: float
    value: float
    n: int
    status: str  # pass or fail (a check over no query fails)
    message: str
    p_value: float | None = None
    total: int | None = None  # the qrels queries in scope: n < total when --missing skip left some out


@dataclass
class GateSettings:
    alpha: float | None = None
    test: str = "t"
    correction: str = "holm"
    seed: int = 0
    samples: int = 10_000


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "--min",
    "mins",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="The run's mean MEASURE must be at least VALUE, e.g. --min nDCG@10=0.85 (repeatable).",
)
@click.option("--baseline", "-b", type=click.Path(dir_okay=False), help="A baseline run for --max-drop rules.")
@click.option(
    "--max-drop",
    "max_drops",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="The run may trail the baseline's mean MEASURE by at most VALUE, e.g. --max-drop nDCG@10=0.01.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="With --max-drop: fail only when the drop is also significant at this level (paired test, "
    "Holm-corrected across segments).",
)
@click.option("--test", "-t", help="Paired test for drops: t (default), randomisation, bootstrap, wilcoxon, sign.")
@click.option(
    "--segments",
    type=click.Path(dir_okay=False),
    help="Query → segment pairs ('query_id segment' lines, CSV/TSV with a header, or JSON {query_id: segment}): "
    "every rule is also checked in every segment.",
)
@click.option(
    "--rules",
    type=click.Path(dir_okay=False),
    help='A TOML file of rules: [min] and [max_drop] tables of "MEASURE" = VALUE, optional alpha, test, '
    "correction and [segment.NAME.min] / [segment.NAME.max_drop] overrides.",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["table", "json", "text"]),
    metavar="[table|json]",
    default="table",
    show_default=True,
    help="Report as lines of text (table) or JSON.",
)
@name_option
@click.option("--quiet", is_flag=True, help="No progress display and no notes.")
@policy_options(missing="zero")
def command(
    qrels: str,
    run: str,
    mins: tuple[str, ...],
    baseline: str | None,
    max_drops: tuple[str, ...],
    alpha: float | None,
    test: str | None,
    segments: str | None,
    rules: str | None,
    fmt: str,
    names: tuple[str, ...],
    quiet: bool,
    missing: str,
    negative: str,
    judged_only: bool,
    max_docs: int | None,
    rel_level: float | None,
    label_kind: str,
    qrels_format: str | None,
    run_format: str | None,
    qrels_columns: dict[str, str] | None,
    run_columns: dict[str, str] | None,
) -> None:
    """Check RUN against quality rules: exit 0 when every rule holds, 1 when one fails, 2 on bad input.

    --min rules bound the run's mean; --max-drop rules bound how far it may trail --baseline (paired
    query by query). With --alpha a drop beyond the limit fails only when it is significant. With
    --segments every rule is checked over all queries and within every segment.

    Every qrels query counts: one a run misses scores 0 (--missing zero, the gate's default). With
    --missing skip the checks use the queries the run answered and say how many ("on 5 of 12 queries").
    A check over no query fails.

    \b
    Examples:
      ranklens gate qrels.txt run.txt --min nDCG@10=0.85 --min P@5=0.4
      ranklens gate qrels.txt new.run --baseline prod.run --max-drop nDCG@10=0.01 --alpha 0.05
      ranklens gate qrels.txt new.run --baseline prod.run --rules gate.toml --segments segments.tsv
    """
    from ranklens.data.io import read_qrels
    from ranklens.engine.evaluator import Evaluator
    from ranklens.errors import InputError
    from ranklens.stats import canonical_correction, canonical_test

    from ranklens.cli._progress import wanted
    from ranklens.cli._runs import final_names, named_runs

    named = named_runs([run, *([baseline] if baseline else [])], names)
    run, baseline = named[0][1], (named[1][1] if baseline else None)
    show = wanted(quiet)
    settings = GateSettings()
    rule_list: list[Rule] = []
    if rules:
        file_rules, settings = read_rules(rules)
        rule_list.extend(file_rules)
    rule_list.extend(parse_rule("min", text) for text in mins)
    rule_list.extend(parse_rule("max_drop", text) for text in max_drops)
    if alpha is not None:
        settings.alpha = alpha
    if test is not None:
        settings.test = test
    settings.test = canonical_test(settings.test)
    settings.correction = canonical_correction(settings.correction)
    if settings.test in ("tukey", "randomised-tukey"):
        raise InputError(f"the gate compares one run with one baseline; use a paired test, not {settings.test!r}")
    if not rule_list:
        raise InputError("no rule given: use --min MEASURE=VALUE, --max-drop MEASURE=VALUE or --rules FILE")
    if any(r.kind == "max_drop" for r in rule_list) and baseline is None:
        raise InputError("--max-drop rules need --baseline BASE.run")

    resolved = {r.measure: _one_measure(r.measure, rel_level) for r in rule_list}
    rule_list = [Rule(r.kind, str(resolved[r.measure]), r.threshold, r.segment) for r in rule_list]
    q = read_qrels(qrels, format=qrels_format, columns=qrels_columns, labels=label_kind)
    for note in () if quiet else q.notes:
        click.echo(f"ranklens: note: {qrels}: {note}", err=True)
    evaluator = Evaluator(
        list(dict.fromkeys(resolved.values())),
        q,
        missing=missing,
        negative=negative,
        judged_only=judged_only,
        max_docs=max_docs,
        rel_level=rel_level,
    )
    res = _evaluate(evaluator, run, run_format, show, run_columns)
    base_res = _evaluate(evaluator, baseline, run_format, show, run_columns) if baseline else None
    labels = final_names(named, [r.run for r in (res, base_res) if r is not None])
    res = dataclasses.replace(res, run=labels[0])
    base_res = dataclasses.replace(base_res, run=labels[1]) if base_res is not None else None
    for path, r in ((run, res), (baseline, base_res)):
        for note in r.notes if r is not None and not quiet else ():
            click.echo(f"ranklens: note: {path}: {note}", err=True)

    checks, notes = check_rules(
        rule_list,
        res,
        base_res,
        segments,
        settings,
        run_path=run,
        baseline_path=baseline,
        universe=evaluator.qrels.query_ids.to_pylist(),
    )
    for note in notes:
        click.echo(f"ranklens: note: {note}", err=True)
    failed = [c for c in checks if c.status == "fail"]
    if fmt == "json":
        payload = {"passed": not failed, "failed": len(failed), "checks": [_check_json(c) for c in checks]}
        click.echo(json.dumps(payload, indent=2, allow_nan=False))
    else:
        for c in checks:
            click.echo(f"{c.status.upper():4} {c.message}")
        verdict = (
            f"gate: {len(failed)} of {len(checks)} checks failed"
            if failed
            else f"gate: all {len(checks)} checks passed"
        )
        click.echo(verdict)
    if failed:
        sys.exit(1)


def _evaluate(
    evaluator: Any, path: str, run_format: str | None, show: bool = False, columns: dict[str, str] | None = None
) -> Any:
    """The Results of the run at ``path`` (or the saved results there: ``eval --per-query -f json``,
    ``--per-query -o FILE.parquet``); a run that answers no qrels query is bad input under any policy (with
    --missing zero it would score 0 everywhere, and a lenient rule would pass it)."""
    from ranklens.cli._progress import status
    from ranklens.cli._runs import is_results_file
    from ranklens.data.io import read_run
    from ranklens.engine.evaluator import nothing_evaluated
    from ranklens.errors import InputError

    if is_results_file(path):
        return _saved(evaluator, path)
    with status(f"reading {path}", enabled=show):
        r = read_run(path, format=run_format, columns=columns)
    judged = set(evaluator.qrels.query_ids.to_pylist())
    if not any(q in judged for q in r.query_ids.to_pylist()):
        raise InputError(nothing_evaluated(r.source, evaluator.qrels.num_queries, r.num_queries))
    with status(f"evaluating {os.path.basename(path)} ({len(r):,} rows)", enabled=show):
        return evaluator(r)


def _saved(evaluator: Any, path: str) -> Any:
    """Saved per-query results used as the run: they must hold every measure of the rules; qrels queries
    they lack score 0 under --missing zero (the gate's default), fail under --missing error, and are left
    out under --missing skip, as for a run."""
    import numpy as np

    from ranklens.errors import InputError, QuerySetError
    from ranklens.results import Results, aggregate
    from ranklens.results_io import read_results

    found = read_results(path)
    if len(found) != 1:
        raise InputError(f"{path}: holds the results of {len(found)} runs ({', '.join(r.run for r in found)}); "
                         "the gate checks one")
    res = found[0]
    if not res.query_ids:
        raise InputError(f"{path}: holds aggregates only; the gate needs per-query values: write them with "
                         "ranklens eval … --per-query -o FILE (.json, .csv or .parquet)")
    absent_from = [m for m in evaluator.measures if m not in res.measures]
    if absent_from:
        raise InputError(f"{path}: the saved results have no {', '.join(map(str, absent_from))}; they hold "
                         f"{', '.join(map(str, res.measures))}")
    qrels_ids = evaluator.qrels.query_ids.to_pylist()
    if not set(qrels_ids) & set(res.query_ids):
        raise InputError(f"{path}: the saved results share no query with the qrels")
    cols = [res.measures.index(m) for m in evaluator.measures]
    index = {q: i for i, q in enumerate(res.query_ids)}
    absent = [q for q in qrels_ids if q not in index]
    notes = list(res.notes)
    if absent and evaluator.query_set == "error":
        raise QuerySetError(f"{path}: {len(absent)} qrels queries have no saved result ({', '.join(absent[:5])})")
    judged = set(qrels_ids)
    keep = [q for q in res.query_ids if q in judged]  # queries the qrels lack are ignored, as in a run
    rows = [res.values[index[q], cols] for q in keep]
    if absent and evaluator.query_set == "qrels":
        rows.extend(np.zeros(len(cols)) for _ in absent)
        keep = keep + absent
        notes.append(f"{len(absent)} qrels quer{'y' if len(absent) == 1 else 'ies'} without a saved result: scored 0")
    order = sorted(range(len(keep)), key=lambda i: keep[i].encode("utf-8"))
    values = np.array([rows[i] for i in order], dtype=np.float64).reshape(len(keep), len(cols))
    measures = tuple(evaluator.measures)
    aggs = tuple(aggregate(m, values[:, j]) for j, m in enumerate(measures))
    return Results(res.run, measures, tuple(keep[i] for i in order), values, aggs, tuple(notes), res.options)


def parse_rule(kind: str, text: str, segment: str | None = None) -> Rule:
    """``"nDCG@10=0.85"`` → a Rule; the value follows the last ``=`` (measure names may hold ``=``)."""
    from ranklens.errors import InputError

    flag = "--min" if kind == "min" else "--max-drop"
    measure, sep, value = text.rpartition("=")
    if not sep or not measure.strip():
        raise InputError(f"{flag} {text!r}: expected MEASURE=VALUE, e.g. nDCG@10=0.85")
    threshold = parse_number(value, f"{flag} {text!r}")
    if kind == "max_drop" and threshold < 0:
        raise InputError(f"{flag} {text!r}: the allowed drop must be ≥ 0")
    _one_measure(measure.strip(), None)  # raises MeasureError with a suggestion
    return Rule(kind, measure.strip(), threshold, segment)


def read_rules(path: str) -> tuple[list[Rule], GateSettings]:
    """Rules and settings from a TOML file (keys: alpha, test, correction, seed, samples, [min],
    [max_drop], [segment.NAME.min], [segment.NAME.max_drop])."""
    from ranklens.errors import FormatError, did_you_mean

    data = _load_toml(path)
    settings = GateSettings()
    for key in data:
        if key not in _TOP_KEYS:
            raise FormatError(
                path, f"unknown key {key!r}; expected one of {', '.join(_TOP_KEYS)}" + did_you_mean(key, _TOP_KEYS)
            )
    if "alpha" in data:
        settings.alpha = parse_number(data["alpha"], f"{path}: alpha")
        if not 0 < settings.alpha < 1:
            raise FormatError(path, f"alpha must be between 0 and 1; got {data['alpha']!r}")
    for key in ("test", "correction"):
        if key in data:
            if not isinstance(data[key], str):
                raise FormatError(path, f"{key} must be a string; got {data[key]!r}")
            setattr(settings, key, data[key])
    for key in ("seed", "samples"):
        if key in data:
            if (
                not isinstance(data[key], int)
                or isinstance(data[key], bool)
                or data[key] < (1 if key == "samples" else 0)
            ):
                raise FormatError(path, f"{key} must be a non-negative integer; got {data[key]!r}")
            setattr(settings, key, data[key])
    rules = _table_rules(data, path, None)
    segments = data.get("segment", {})
    if not isinstance(segments, dict):
        raise FormatError(path, "[segment] must be a table of segments, e.g. [segment.navigational.min]")
    for name, body in segments.items():
        if not isinstance(body, dict):
            raise FormatError(path, f"[segment.{name}] must be a table with min and/or max_drop")
        for key in body:
            if key not in _SEGMENT_KEYS:
                raise FormatError(path, f"[segment.{name}]: unknown key {key!r}; expected min or max_drop")
        rules.extend(_table_rules(body, path, str(name)))
    return rules, settings


def _table_rules(data: dict[str, Any], path: str, segment: str | None) -> list[Rule]:
    from ranklens.errors import FormatError

    out = []
    for kind in _SEGMENT_KEYS:
        table = data.get(kind, {})
        if not isinstance(table, dict):
            raise FormatError(path, f'[{kind}] must be a table of "MEASURE" = VALUE lines')
        for measure, value in table.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise FormatError(path, f"[{kind}] {measure!r}: expected a number, got {value!r}")
            out.append(parse_rule(kind, f"{measure}={value}", segment))
    return out


def _load_toml(path: str) -> dict[str, Any]:
    from ranklens.errors import FormatError, MissingDependencyError

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise MissingDependencyError("tomli", "gate", "reading --rules files on Python 3.10") from None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise FormatError(path, f"not valid TOML: {e}") from None


def check_rules(
    rules: list[Rule],
    run: Any,
    baseline: Any,
    segments: Any,
    settings: GateSettings,
    *,
    run_path: str = "run",
    baseline_path: str | None = None,
    universe: Sequence[str] | None = None,
) -> tuple[list[Check], list[str]]:
    """Check every rule over all queries and, with segments, in every segment (segment-specific rules
    replace the general rule of the same kind and measure in their segment). Returns the checks and the
    notes of the paired comparison (dropped queries …).

    ``universe`` is every query a check could count (the qrels queries; default: the run's). A check
    says on how many of them it was made, and a check over none fails. ``segments`` go through
    :func:`ranklens.data.segments.read_segments`; labelling none of the universe is an InputError."""
    from ranklens.comparison import compare, load_segments, unique_names
    from ranklens.data.segments import check_overlap
    from ranklens.errors import InputError, did_you_mean

    queries = list(universe) if universe is not None else list(run.query_ids)
    segment_of = load_segments(segments)
    if segment_of is not None:
        source = str(segments) if isinstance(segments, (str, os.PathLike)) else "segments"
        check_overlap(segment_of, queries, source=source)
    labels = sorted(set(segment_of.values())) if segment_of else []
    for r in rules:
        if r.segment is None:
            continue
        if segment_of is None:
            raise InputError(f"the rule for segment {r.segment!r} needs --segments FILE")
        if r.segment not in labels:
            raise InputError(
                f"the rule for segment {r.segment!r} names no segment of the segments file "
                f"({', '.join(labels)})" + did_you_mean(r.segment, labels)
            )
    # every segment with a query to count, evaluated or not: a segment the run skipped entirely fails
    seg_names = sorted({segment_of[q] for q in queries if q in segment_of}) if segment_of else []
    scoped = _scoped(rules, seg_names, segment_of is not None)
    comparison = None
    if baseline is not None and any(r.kind == "max_drop" for r, _ in scoped):
        names = unique_names([(baseline.run, baseline_path), (run.run, run_path)])
        comparison = compare(
            None,
            dict(zip(names, (baseline, run))),
            [r.measure for r, _ in scoped if r.kind == "max_drop"],
            baseline=0,
            test=settings.test,
            correction=settings.correction,
            segments=segment_of,
            alpha=settings.alpha or 0.05,
            samples=settings.samples,
            seed=settings.seed,
        )
    checks = []
    for rule, scope in scoped:
        total = sum(1 for q in queries if scope is None or (segment_of or {}).get(q) == scope)
        if rule.kind == "min":
            checks.append(_check_min(rule, scope, run, segment_of, total))
        else:
            if comparison is None:
                raise InputError("--max-drop rules need --baseline BASE.run")
            checks.append(_check_drop(rule, scope, comparison, settings.alpha, total))
    if comparison is None:
        return checks, []
    own = tuple(f"{name}: " for name in comparison.systems)  # the runs' own notes, already printed
    return checks, [n for n in comparison.notes if not n.startswith(own)]


def _scoped(rules: list[Rule], seg_names: list[str], with_segments: bool) -> list[tuple[Rule, str | None]]:
    specific = {(r.kind, r.measure, r.segment) for r in rules if r.segment is not None}
    out: list[tuple[Rule, str | None]] = []
    for r in rules:
        if r.segment is not None:
            out.append((r, r.segment))
            continue
        out.append((r, None))
        if with_segments:
            out.extend((r, s) for s in seg_names if (r.kind, r.measure, s) not in specific)
    return out


def _where(segment: str | None, n: int, total: int) -> str:
    """``all queries`` / ``segment 'nav'`` when the check counts every query in scope, else how many:
    ``5 of 12 queries`` / ``0 of 1 query of segment 'nav'``."""
    if n == total:
        return "all queries" if segment is None else f"segment {segment!r}"
    of = f"{n} of {total} quer{'y' if total == 1 else 'ies'}"
    return of if segment is None else f"{of} of segment {segment!r}"


def _check_min(rule: Rule, segment: str | None, run: Any, segment_of: dict[str, str] | None, total: int) -> Check:
    import numpy as np

    col = run.column(rule.measure)
    mask = [segment is None or (segment_of or {}).get(q) == segment for q in run.query_ids]
    values = np.asarray(col)[np.asarray(mask, dtype=bool)] if len(mask) else np.zeros(0)
    n = int(values.size)
    head = f"{rule.measure} ≥ {rule.threshold:g} on {_where(segment, n, total)}"
    if n == 0:  # a check over nothing must not pass a gate
        return Check(
            "min", rule.measure, segment, rule.threshold, math.nan, 0, "fail", f"{head}: no evaluated query", None, total
        )
    mean = float(values.mean())
    if mean + _EPS * max(1.0, abs(rule.threshold)) >= rule.threshold:
        return Check(
            "min", rule.measure, segment, rule.threshold, mean, n, "pass", f"{head}: {mean:.4f} (n={n})", None, total
        )
    short = rule.threshold - mean
    return Check(
        "min",
        rule.measure,
        segment,
        rule.threshold,
        mean,
        n,
        "fail",
        f"{head}: {mean:.4f} is {short:.4f} below the minimum (n={n})",
        None,
        total,
    )


def _check_drop(rule: Rule, segment: str | None, comparison: Any, alpha: float | None, total: int) -> Check:
    from ranklens.errors import InputError

    base, system = comparison.systems
    try:
        row = comparison.row(base, system, rule.measure, segment)
    except InputError:
        head = f"{rule.measure} drop ≤ {rule.threshold:g} vs baseline {base!r} on {_where(segment, 0, total)}"
        return Check(
            "max_drop",
            rule.measure,
            segment,
            rule.threshold,
            math.nan,
            0,
            "fail",  # a check over nothing must not pass a gate
            f"{head}: no query both runs answered",
            None,
            total,
        )
    head = f"{rule.measure} drop ≤ {rule.threshold:g} vs baseline {base!r} on {_where(segment, row.n, total)}"
    drop = -row.diff
    p = row.p_value_adjusted
    detail = f"{row.mean_system:.4f} vs {row.mean_baseline:.4f}, n={row.n}"
    too_far = drop > rule.threshold + _EPS * max(1.0, abs(rule.threshold))
    p_text = "p=—" if math.isnan(p) else f"p={p:.4g}"
    if not too_far:
        what = f"dropped {drop:.4f}" if drop > 0 else f"gained {-drop:.4f}"
        return Check(
            "max_drop",
            rule.measure,
            segment,
            rule.threshold,
            drop,
            row.n,
            "pass",
            f"{head}: {what} ({detail})",
            _p(p),
            total,
        )
    over = drop - rule.threshold
    if alpha is not None and not p <= alpha:  # a NaN p is never significant
        return Check(
            "max_drop",
            rule.measure,
            segment,
            rule.threshold,
            drop,
            row.n,
            "pass",
            f"{head}: dropped {drop:.4f} ({over:.4f} over the limit) but not significantly ({p_text} > α={alpha:g}; {detail})",
            _p(p),
            total,
        )
    sig = f", {p_text} ≤ α={alpha:g}" if alpha is not None else ""
    return Check(
        "max_drop",
        rule.measure,
        segment,
        rule.threshold,
        drop,
        row.n,
        "fail",
        f"{head}: dropped {drop:.4f}, {over:.4f} over the limit ({detail}{sig})",
        _p(p),
        total,
    )


def _p(p: float) -> float | None:
    return None if math.isnan(p) else p


def _one_measure(text: str, rel_level: float | None) -> Any:
    """The single Measure a rule names (a trec_eval list such as ``ndcg_cut.5,10`` is refused)."""
    from ranklens.errors import InputError
    from ranklens.measures import parse_many

    found = parse_many([text], rel_level=rel_level)
    if len(found) != 1:
        raise InputError(f"a rule names one measure; {text!r} names {len(found)}: {', '.join(map(str, found))}")
    return found[0].validate()


def _check_json(c: Check) -> dict[str, Any]:
    d = asdict(c)
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


