"""``ranklens rag``: RA-nWG@K and its companions for RAG context sets (``QRELS RUN [--pool POOL] -k 10``), or the
retrieval evaluation of RAG sample files (``SAMPLES.jsonl -m P@5 nDCG@10``, optionally written as TREC files)."""

from __future__ import annotations

from typing import Any

import click

from ranklens.cli._measure_args import MeasureArgsCommand
from ranklens.cli._quiet import say
from ranklens.results.rendering import FORMATS, render

LAYOUT_CHOICES = ("ranklens", "ragas", "llamaindex")
MATCH_CHOICES = ("auto", "id", "text", "contains")


@click.command(cls=MeasureArgsCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-k", "ks", multiple=True, type=click.IntRange(min=1), help="Context-set size K (repeatable). Default: 10, 20, 30.")
@click.option("--pool", type=click.Path(dir_okay=False), help="The candidate-pool run for PROC/%PROC (default: each run's own list).")
@click.option("--top", type=click.IntRange(min=1), help="The label that plays grade 5 (default 5).")
@click.option("--rarity", "alpha", type=click.FloatRange(min=0), help="Rarity exponent alpha (default 1; 0 = none).")
# the old name, hidden: --alpha is a significance level in every other command
@click.option("--alpha", "alpha_old", type=click.FloatRange(min=0), hidden=True)
@click.option("--cap4", type=click.FloatRange(min=0), help="Cap of the grade-4 weight (default 1.0).")
@click.option("--cap3", type=click.FloatRange(min=0), help="Cap of the grade-3 weight (default 0.25).")
@click.option("--ties", type=click.Choice(["trec", "average"]), help="Cutting ties at K: doc-id order (default) or expectation.")
@click.option("-m", "--measure", "measures", multiple=True, help="RAG sample files: measures (default P@5 R@5 RR nDCG@10).")
@click.option("--layout", type=click.Choice(LAYOUT_CHOICES), help="RAG sample files: the layout (default: from the keys).")
@click.option("--match", "match", type=click.Choice(MATCH_CHOICES), default="auto", show_default=True,
              help="RAG sample files: match references to retrieved chunks by id, normalised text, or containment.")
@click.option("--grade", type=int, help="RAG sample files: the label of a reference context (default 1; with "
              "--judge-endpoint the top of the judge's scale, and no other value).")
@click.option("--no-context", is_flag=True, help="RAG sample files: leave out ContextPrecision and ContextRecall.")
@click.option("--qrels-out", type=click.Path(dir_okay=False), help="RAG sample files: also write the qrels (TREC by extension).")
@click.option("--run-out", type=click.Path(dir_okay=False), help="One RAG sample file: also write its run (TREC by extension).")
@click.option("--judge-endpoint", help="RAG sample files: grade chunks matching no reference with the LLM judge at this URL.")
@click.option("--judge-model", help="RAG sample files: the judge's model name (with --judge-endpoint).")
@click.option("--judge-cache", type=click.Path(dir_okay=False), help="RAG sample files: the judge's SQLite verdict cache.")
@click.option("--judge-concurrency", type=click.IntRange(min=1), help="The judge's requests in flight (default 4), as `judge run`.")
@click.option("--judge-rpm", type=click.IntRange(min=1), help="The judge's requests per minute at most.")
@click.option("--judge-tpm", type=click.IntRange(min=1), help="The judge's tokens per minute at most.")
@click.option("--judge-timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per judge request, in total (default 60).")
@click.option("--judge-retries", type=click.IntRange(min=0), help="Retries per judge request (default 4).")
@click.option("--judge-backoff", type=click.FloatRange(min=0), help="First retry wait in seconds, doubling (default 1).")
@click.option("--judge-max-wait", type=click.FloatRange(min=0), help="Longest wait between attempts, Retry-After included (default 60).")
@click.option("--judge-scale", type=click.Path(dir_okay=False), help="The judge's scale/rubric file (TOML or JSON), as `judge run --scale`; default 0-3.")
@click.option("--judge-api-key-env", help="The environment variable with the judge's API key (default OPENAI_API_KEY).")
@click.option("--per-query", "-q", is_flag=True, help="Also show the value of every query (NA = nan).")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help="Output format.")
@click.option(
    "--missing", type=click.Choice(["skip", "zero", "error"]), default="skip", show_default=True,
    help="Queries in the qrels but not in the run: skip, score 0, or fail.",
)
def command(
    qrels: str, runs: tuple[str, ...], ks: tuple[int, ...], pool: str | None, top: int | None, alpha: float | None,
    alpha_old: float | None, cap4: float | None, cap3: float | None, ties: str | None, measures: tuple[str, ...],
    layout: str | None, match: str, grade: int | None, no_context: bool, qrels_out: str | None, run_out: str | None,
    judge_endpoint: str | None, judge_model: str | None, judge_cache: str | None, per_query: bool, fmt: str,
    missing: str, **judge_options: Any,
) -> None:
    """RA-nWG@K, N-Recall4+@K, N-Recall5@K, Precision4+@K, Harm@K, PROC@K and %PROC of each RUN (the run's
    top K is the set handed to the generator). NA queries are excluded from the means and counted in the
    notes. The same measures are available in `ranklens eval` as RAnWG@10, NRecall4p@10, PctPROC@10 ….

    Given RAG sample files instead (JSONL/JSON: {"query", "retrieved", "reference"}, RAGAS samples or
    LlamaIndex rows), evaluates each file's retrieved lists against its reference contexts with any
    measures, plus RAGAS's non-LLM ContextPrecision and ContextRecall (see docs/rag.md).

    \b
    Examples:
      ranklens rag qrels.txt reranked.run --pool first_stage.run -k 10 -k 20
      ranklens rag samples.jsonl -m P@5 R@5 RR nDCG@10
      ranklens rag samples.jsonl --qrels-out rag.qrels --run-out dense.run
      ranklens rag samples.jsonl --judge-endpoint http://127.0.0.1:8000/v1 --judge-model m --judge-cache j.sqlite
    """
    from ranklens.rag.inputs import sniff_layout

    files = (qrels, *runs)
    if layout is not None or sniff_layout(qrels) is not None:
        rag_only = {"--pool": pool, "--top": top, "--rarity": alpha if alpha is not None else alpha_old, "--cap4": cap4,
                    "--cap3": cap3, "--ties": ties, "-k": ks or None}
        _refuse([flag for flag, v in rag_only.items() if v is not None], "QRELS RUN (RA-nWG), not to RAG sample files")
        judge = (judge_endpoint, judge_model, judge_cache)
        _samples(files, measures, layout, match, grade, no_context, qrels_out, run_out, per_query, fmt, judge,
                 judge_options)
        return
    sample_only = {"-m": measures or None, "--layout": layout, "--no-context": no_context or None,
                   "--qrels-out": qrels_out, "--run-out": run_out, "--grade": grade,
                   "--match": None if match == "auto" else match, "--judge-endpoint": judge_endpoint,
                   "--judge-model": judge_model, "--judge-cache": judge_cache,
                   **{"--" + k.replace("_", "-"): v for k, v in judge_options.items()}}
    _refuse([flag for flag, v in sample_only.items() if v is not None],
            "RAG sample files (JSONL/JSON with retrieved and reference contexts); for QRELS RUN use `ranklens eval -m`")
    if not runs:
        from ranklens.errors import InputError

        raise InputError(
            f"{qrels}: expected QRELS RUN... or a RAG sample file (JSONL with query, retrieved, reference; "
            "RAGAS or LlamaIndex keys); found one file that is neither (name its layout with --layout)"
        )
    _ranwg(qrels, runs, ks, pool, top, alpha, alpha_old, cap4, cap3, ties, per_query, fmt, missing)


def _refuse(flags: list[str], applies_to: str) -> None:
    if flags:
        from ranklens.errors import InputError

        raise InputError(f"{', '.join(flags)} appl{'ies' if len(flags) == 1 else 'y'} to {applies_to}")


def _samples(
    files: tuple[str, ...], measures: tuple[str, ...], layout: str | None, match: str, grade: int | None,
    no_context: bool, qrels_out: str | None, run_out: str | None, per_query: bool, fmt: str,
    judge_opts: tuple[str | None, str | None, str | None] = (None, None, None),
    judge_options: dict[str, Any] | None = None,
) -> None:
    from ranklens.errors import InputError

    if run_out and len(files) > 1:
        raise InputError("--run-out writes the run of one RAG sample file; give one file per call")
    hook, store = _rag_judge(*judge_opts, judge_options or {})
    try:
        results = _evaluate_files(files, measures, layout, match, grade, no_context, qrels_out, run_out, hook)
    finally:
        if hook is not None:
            hook.judge.close()
        if store is not None:
            store.close()
    if hook is not None:
        s = hook.summary()
        c = s["counters"]
        say(f"ranklens: note: judge: {s['asked']} chunks asked, {s['from_cache']} from cache, {s['unjudged']} "
            f"unjudged ({s['without_query']} without a query text), {s['requests']} requests; retries: "
            f"{c.get('retries', 0)}  malformed: {c.get('malformed', 0)}  429: {c.get('rate_limited', 0)}  "
            f"5xx: {c.get('server_errors', 0)}  timeouts: {c.get('timeouts', 0)}")
        for note in s["notes"]:
            say(f"ranklens: note: judge: {note}")
    click.echo(render(results, fmt, per_query=per_query, meta={"rag_files": list(files)}), nl=False)


def _evaluate_files(
    files: tuple[str, ...], measures: tuple[str, ...], layout: str | None, match: str, grade: int | None,
    no_context: bool, qrels_out: str | None, run_out: str | None, hook: Any,
) -> list[Any]:
    """Each RAG sample file's results (notes on stderr), writing --qrels-out / --run-out on the way."""
    from ranklens.data.io import write_qrels, write_run
    from ranklens.errors import InputError
    from ranklens.rag.convert import load_rag
    from ranklens.rag.report import DEFAULT_RAG_MEASURES, evaluate_rag_data

    results = []
    first_qrels = None
    for path in files:
        data = load_rag(path, layout=layout, match=match, grade=grade, judge=hook)
        if qrels_out:
            if first_qrels is None:
                first_qrels = data.qrels.to_dict()
            elif data.qrels.to_dict() != first_qrels:
                raise InputError(f"{path}: its reference contexts differ from {files[0]}'s; --qrels-out needs the same references in every file")
        res = evaluate_rag_data(data, measures or DEFAULT_RAG_MEASURES, context=not no_context)
        for note in res.notes:
            say(f"ranklens: note: {path}: {note}")
        results.append(res)
        if run_out:
            write_run(data.run, run_out)
        if qrels_out and path == files[0]:
            write_qrels(data.qrels, qrels_out)
    return results


#: the judge's options as `ranklens judge run` has them, with the same defaults
JUDGE_DEFAULTS: dict[str, Any] = {"judge_concurrency": 4, "judge_rpm": None, "judge_tpm": None, "judge_timeout": 60.0,
                  "judge_retries": 4, "judge_backoff": 1.0, "judge_max_wait": 60.0, "judge_scale": None,
                  "judge_api_key_env": "OPENAI_API_KEY"}


def _rag_judge(endpoint: str | None, model: str | None, cache: str | None,
               options: dict[str, Any]) -> tuple[Any, Any]:
    """The LLM judge as the RAG reader's grading hook, and its cache (both None without --judge-endpoint)."""
    given = [k for k, v in options.items() if v is not None]
    if endpoint is None and model is None and cache is None and not given:
        return None, None
    if not endpoint or not model:
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise click.UsageError("--judge-endpoint URL and --judge-model NAME go together (--judge-cache"
                               + (f", {flags}" if flags else "") + " need both)")
    from ranklens.judges import JudgeCache, OpenAIJudge, RateLimiter, load_scale
    from ranklens.judges.rag_hook import RagJudge

    o: dict[str, Any] = {k: (options.get(k) if options.get(k) is not None else v) for k, v in JUDGE_DEFAULTS.items()}
    scale = load_scale(o["judge_scale"]) if o["judge_scale"] else None
    judge = OpenAIJudge(endpoint, model, scale=scale, api_key_env=o["judge_api_key_env"], timeout=o["judge_timeout"],
                        retries=o["judge_retries"], backoff=o["judge_backoff"], max_wait=o["judge_max_wait"],
                        limiter=RateLimiter(o["judge_rpm"], o["judge_tpm"]))
    store = JudgeCache(cache) if cache else None
    return RagJudge(judge, cache=store, concurrency=o["judge_concurrency"]), store


def _ranwg(
    qrels: str, runs: tuple[str, ...], ks: tuple[int, ...], pool: str | None, top: int | None, alpha: float | None,
    alpha_old: float | None, cap4: float | None, cap3: float | None, ties: str | None, per_query: bool, fmt: str,
    missing: str,
) -> None:
    from ranklens.data.io import read_qrels, read_run
    from ranklens.rag import evaluate_rag

    alpha = alpha if alpha is not None else alpha_old
    q = read_qrels(qrels)
    params: dict[str, Any] = {k: v for k, v in (("top", top), ("alpha", alpha), ("cap4", cap4), ("cap3", cap3), ("ties", ties)) if v is not None}
    pool_run = read_run(pool) if pool else None
    results = []
    for path in runs:
        res = evaluate_rag(q, read_run(path), k=ks or (10, 20, 30), pool=pool_run, missing=missing, **params)
        for note in res.notes:
            say(f"ranklens: note: {path}: {note}")
        results.append(res)
    click.echo(render(results, fmt, per_query=per_query, meta={"qrels": qrels, "run_files": list(runs)}), nl=False)
