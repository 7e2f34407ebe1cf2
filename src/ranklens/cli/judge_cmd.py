"""``ranklens judge``: relevance labels from a judge — ``pairs`` (build what to judge from a pool of runs), ``run``
(judge the pairs with an OpenAI-compatible endpoint or the offline embedding model, write TREC qrels),
``calibrate`` (embedding thresholds from human labels) and, when their modules exist, ``agreement`` and ``ppi``.

``ranklens judge PAIRS …`` without a subcommand is refused on purpose: a pairs file named ``pairs`` or ``run``
would be read as a subcommand, so the meaning of a command line would depend on file names. The error says
``ranklens judge run PAIRS …``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

AGREEMENT_MODULE = "ranklens.cli.judge_agreement_cmd"
PPI_MODULE = "ranklens.cli.judge_ppi_cmd"
CONTEXT = {"help_option_names": ["-h", "--help"]}


def optional_commands() -> dict[str, str]:
    """Subcommands written in their own modules: name → module (the click command is the attribute ``name``)."""
    return {"agreement": AGREEMENT_MODULE, "ppi": PPI_MODULE}


class JudgeGroup(click.Group):
    """The ``judge`` group; ``agreement`` and ``ppi`` come from their own modules when those modules exist."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx))
        names.update(n for n, m in optional_commands().items() if _module_exists(m))
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = optional_commands().get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            if not _module_exists(module):
                return None
            found = getattr(importlib.import_module(module), cmd_name, None)
            return found if isinstance(found, click.Command) else None
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None and os.path.isfile(name):
            # ``ranklens judge PAIRS --endpoint …`` (the form) is ``ranklens judge run PAIRS …``; a
            # subcommand name always wins, so a pairs file named ``run`` is given as ``judge run run``
            return super().resolve_command(ctx, ["run", *args])
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(f"no subcommand '{name}' (to judge a pairs file: ranklens judge run {name} --endpoint URL "
                     f"--model NAME -o judged.qrels); subcommands: {', '.join(self.list_commands(ctx))}")
        return super().resolve_command(ctx, args)


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


@click.group(cls=JudgeGroup, context_settings=CONTEXT)
def command() -> None:
    """Relevance labels from an LLM (any OpenAI-compatible endpoint) or an offline embedding judge.

    \b
    Example:
      ranklens judge pairs bm25.run dense.run --depth 10 --topics topics.tsv --corpus docs.jsonl \\
          --qrels human.qrels -o pairs.jsonl
      ranklens judge run pairs.jsonl --endpoint http://127.0.0.1:11434/v1 --model qwen2.5:7b \\
          -o judged.qrels --cache judge.sqlite --summary summary.json
    """


@contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    if not enabled or total == 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("judging", total=total)
        yield lambda n: bar.advance(task, n)


@command.command("run", context_settings=CONTEXT)
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.option("--endpoint", help="Base URL of an OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1).")
@click.option("--model", help="The model name the endpoint serves.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False), help="Write the judged qrels here (TREC).")
@click.option("--backend", type=click.Choice(["openai", "embedding"]), default="openai", show_default=True,
              help="openai: a chat model at --endpoint; embedding: the offline model with --thresholds.")
@click.option("--thresholds", type=click.Path(dir_okay=False), help="embedding: the JSON from `ranklens judge calibrate`.")
@click.option("--cache", type=click.Path(dir_okay=False), help="SQLite verdict cache (reused across runs).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Requests in flight.")
@click.option("--rpm", type=click.IntRange(min=1), help="At most this many requests per minute.")
@click.option("--tpm", type=click.IntRange(min=1), help="At most this many tokens per minute (estimated, then as reported).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds per request, in total (the whole answer must arrive within it).")
@click.option("--retries", type=click.IntRange(min=0), default=4, show_default=True, help="Retries per request.")
@click.option("--backoff", type=click.FloatRange(min=0), default=1.0, show_default=True, help="First retry wait in seconds (doubles).")
@click.option("--max-wait", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Longest wait between attempts, also when the server's Retry-After asks for more (said in the summary).")
@click.option("--batch-size", type=click.IntRange(min=1), default=1, show_default=True, help="Documents per request (1 = the contract's default).")
@click.option("--scale", "scale_file", type=click.Path(dir_okay=False), help="A scale/rubric file (TOML or JSON); default 0-3.")
@click.option("--prices", type=click.Path(dir_okay=False), help='Prices per model (TOML: [models."NAME"] prompt_per_million, completion_per_million).')
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="The environment variable with the API key.")
@click.option("--summary", "summary_file", type=click.Path(dir_okay=False), help="Also write the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run(pairs: str, endpoint: str | None, model: str | None, output: str, backend: str, thresholds: str | None,
        cache: str | None, concurrency: int, rpm: int | None, tpm: int | None, timeout: float, retries: int,
        backoff: float, max_wait: float, batch_size: int, scale_file: str | None, prices: str | None,
        api_key_env: str, summary_file: str | None, quiet: bool) -> None:
    """Judge every pair of PAIRS (JSONL: query_id, query, doc_id, text) and write the graded ones as TREC qrels.

    Pairs without a valid verdict after the retries are not written: they are counted and listed in the summary
    (stderr, and --summary). A rerun with the same --cache sends no request for the pairs already judged.
    """
    from ranklens.cli._progress import wanted
    from ranklens.judges import JudgeCache, judge_pairs, read_pairs
    from ranklens.judges.accounting import load_prices

    judge, usage, price_name = _make_judge(backend, endpoint, model, thresholds, scale_file, api_key_env, timeout,
                                           retries, backoff, rpm, tpm, max_wait)
    price_table = load_prices(prices) if prices else {}
    todo = read_pairs(pairs)
    store = JudgeCache(cache) if cache else None
    try:
        with _progress(len(todo), wanted(quiet)) as advance:
            result = judge_pairs(todo, judge, cache=store, concurrency=concurrency, batch_size=batch_size,
                                 usage=usage, price=price_table.get(price_name), on_progress=advance)
    finally:
        _close(judge, store)
    if prices and price_name not in price_table:
        result.notes.append(f"{prices} has no price for model {price_name!r}: cost unknown")
    _write_trec_qrels(result.labels(), output)
    click.echo(result.summary_text(), nl=False, err=True)
    if summary_file:
        with open(summary_file, "w", encoding="utf-8") as out:
            json.dump(result.summary(), out, indent=2)
            out.write("\n")


def _close(judge: Any, store: Any) -> None:
    """Close the judge's connections and the cache (both may be absent or have nothing to close)."""
    close = getattr(judge, "close", None)
    if callable(close):
        close()
    if store is not None:
        store.close()


def _make_judge(backend: str, endpoint: str | None, model: str | None, thresholds: str | None, scale_file: str | None,
                api_key_env: str, timeout: float, retries: int, backoff: float, rpm: int | None,
                tpm: int | None, max_wait: float = 60.0) -> tuple[Any, Any, str]:
    from ranklens.judges.accounting import Usage

    usage = Usage()
    if backend == "embedding":
        if not thresholds:
            raise click.UsageError("--backend embedding needs --thresholds (from `ranklens judge calibrate`)")
        if endpoint or model:
            raise click.UsageError("--endpoint and --model are for --backend openai")
        from ranklens.judges import EmbeddingJudge, Thresholds

        offline = EmbeddingJudge(Thresholds.load(thresholds))
        return offline, usage, offline.embedder.name
    if not endpoint or not model:
        raise click.UsageError("--backend openai needs --endpoint URL and --model NAME")
    if thresholds:
        raise click.UsageError("--thresholds is for --backend embedding")
    from ranklens.judges import OpenAIJudge, RateLimiter, load_scale

    scale = load_scale(scale_file) if scale_file else None
    judge = OpenAIJudge(endpoint, model, scale=scale, api_key_env=api_key_env, timeout=timeout, retries=retries,
                        backoff=backoff, max_wait=max_wait, limiter=RateLimiter(rpm, tpm), usage=usage)
    return judge, usage, model


def _write_trec_qrels(labels: dict[str, dict[str, int]], path: str) -> None:
    """``qid 0 docid grade`` lines, queries and documents in input order."""
    with open(path, "w", encoding="utf-8") as out:
        for qid, docs in labels.items():
            for doc, grade in docs.items():
                out.write(f"{qid} 0 {doc} {grade}\n")


@command.command("pairs", context_settings=CONTEXT)
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--depth", "-k", required=True, type=click.IntRange(min=1), help="Pool the top K of each run.")
@click.option("--topics", required=True, type=click.Path(dir_okay=False), help="TSV: query_id<TAB>query text.")
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="JSONL with doc_id (or _id/id) and text (or contents).")
@click.option("--qrels", type=click.Path(dir_okay=False), help="Existing qrels: their documents are not pooled again.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False), help="Write the pairs here (JSONL).")
def pairs_cmd(runs: tuple[str, ...], depth: int, topics: str, corpus: str, qrels: str | None, output: str) -> None:
    """Build the pairs to judge from the pool of RUN... (top K per run), leaving out what --qrels already judges."""
    from ranklens.data.io import read_qrels, read_run
    from ranklens.judges import build_pairs, pool, read_corpus, read_topics, write_pairs

    judged = read_qrels(qrels).to_dict() if qrels else None
    pooled = pool([read_run(r).to_dict() for r in runs], depth, judged)
    wanted_docs = {d for docs in pooled.values() for d in docs}
    built = build_pairs(pooled, read_topics(topics), read_corpus(corpus, wanted_docs), topics, corpus)
    n = write_pairs(built, output)
    click.echo(f"wrote {n} pairs over {len(pooled)} queries to {output}", err=True)


@command.command("calibrate", context_settings=CONTEXT)
@click.argument("human_qrels", type=click.Path(dir_okay=False))
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False), help="Write the thresholds here (JSON).")
@click.option("--scale", "scale_file", type=click.Path(dir_okay=False), help="A scale file (TOML or JSON); default 0-3.")
def calibrate_cmd(human_qrels: str, pairs: str, output: str, scale_file: str | None) -> None:
    """Choose the offline judge's similarity thresholds that agree best with HUMAN_QRELS on the PAIRS they label
    (mean linear weighted agreement), and write them for `ranklens judge run --backend embedding --thresholds`."""
    from ranklens.data.io import read_qrels
    from ranklens.judges import Scale, WordLlamaEmbedder, calibrate, load_scale, read_pairs

    scale = load_scale(scale_file) if scale_file else Scale()
    found = calibrate(read_qrels(human_qrels).to_dict(), read_pairs(pairs), WordLlamaEmbedder(), scale.low, scale.high)
    found.save(output)
    cuts = ", ".join(f"{c:.4f}" for c in found.cuts)
    click.echo(f"calibrated on {found.pairs} labelled pairs: cuts {cuts}; weighted agreement {found.agreement:.3f}; "
               f"wrote {output}", err=True)

