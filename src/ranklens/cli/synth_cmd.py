"""``ranklens synth CORPUS.jsonl --endpoint URL --model NAME -o queries.jsonl``: synthetic evaluation queries from a
document collection through an OpenAI-compatible endpoint, with a round-trip filter (:mod:`ranklens.judges.synth`)."""

from __future__ import annotations

import json

import click

from ranklens.cli._quiet import say


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("corpus", type=click.Path(dir_okay=False))
@click.option("--endpoint", required=True, help="Base URL of an OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1).")
@click.option("--model", required=True, help="The model name the endpoint serves.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False), help="Write the queries here (JSONL).")
@click.option("--qrels", "qrels", type=click.Path(dir_okay=False), help="Also write the kept queries' qrels (TREC; source document, grade 1).")
@click.option("--per-doc", type=click.IntRange(min=1), default=1, show_default=True, help="Queries asked for per document.")
@click.option("--round-trip-k", type=click.IntRange(min=1), help="Keep a query only if the retriever ranks its source document in the top K.")
@click.option("--retriever", type=click.Choice(["bm25"]), help="The round-trip retriever (default bm25; needs --round-trip-k).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True, help="Seconds per request.")
@click.option("--retries", type=click.IntRange(min=0), default=4, show_default=True, help="Retries per request (malformed, 429, 5xx, timeouts).")
@click.option("--backoff", type=click.FloatRange(min=0), default=1.0, show_default=True, help="First retry wait in seconds (doubles).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="The environment variable with the API key.")
@click.option("--summary", "summary_file", type=click.Path(dir_okay=False), help="Also write the summary as JSON.")
def command(corpus: str, endpoint: str, model: str, output: str, qrels: str | None, per_doc: int,
            round_trip_k: int | None, retriever: str | None, timeout: float, retries: int, backoff: float,
            api_key_env: str, summary_file: str | None) -> None:
    """Ask the model for --per-doc questions each document of CORPUS answers (JSONL with doc_id/_id/id and
    text/contents), as the strict JSON {"queries": [...]}; a malformed answer is retried, then the document is
    counted as failed (never guessed). With --round-trip-k K, a query is kept only if BM25 over CORPUS ranks its
    source document in the top K. Every query is written ({"query_id", "query", "source_doc_id", "kept", "rank"});
    --qrels writes the kept ones for `ranklens eval`.

    \b
    Example:
      ranklens synth docs.jsonl --endpoint http://127.0.0.1:11434/v1 --model qwen2.5:7b \\
          -o queries.jsonl -q synth.qrels --per-doc 2 --round-trip-k 10 --retriever bm25
    """
    if retriever is not None and round_trip_k is None:
        raise click.UsageError("--retriever needs --round-trip-k K")
    from ranklens.errors import FormatError
    from ranklens.judges import OpenAIJudge, read_corpus
    from ranklens.judges.synth import synthesize

    docs = read_corpus(corpus)
    if not docs:
        raise FormatError(corpus, "expected documents (JSONL with an id and a text); found none")
    with OpenAIJudge(endpoint, model, api_key_env=api_key_env, timeout=timeout, retries=retries, backoff=backoff) as writer:
        result = synthesize(docs, writer, per_doc=per_doc, round_trip_k=round_trip_k, retriever=retriever or "bm25")
    result.write(output, qrels)
    say(result.summary_text(), nl=False)
    if summary_file:
        with open(summary_file, "w", encoding="utf-8") as out:
            json.dump(result.summary(), out, indent=2)
            out.write("\n")
