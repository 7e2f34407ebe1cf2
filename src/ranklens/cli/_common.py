"""Options shared by the evaluating commands."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

import click

from ranklens.cli.defaults import DEFAULT_MEASURES  # noqa: F401 (re-exported: eval, compare and gate read it here)
from ranklens.data.formats import RUN_FILES

F = TypeVar("F", bound=Callable[..., Any])

DATA_FORMATS = list(RUN_FILES.formats)



def json_format_option(func: F) -> F:
    """``-f/--format table|json`` for commands whose body takes ``as_json``; the old ``--json`` flag still
    works (hidden), so scripts keep running."""

    @functools.wraps(func)
    def wrapper(*args: Any, fmt: str = "table", json_flag: bool = False, **kwargs: Any) -> Any:
        return func(*args, as_json=json_flag or fmt == "json", **kwargs)

    wrapper = click.option("--json", "json_flag", is_flag=True, hidden=True)(wrapper)
    wrapper = click.option(
        "--format", "-f", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
        help="table (readable) or json.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def _level(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """``--rel-level 2`` stays the integer 2; ``0.5`` is a real threshold (for ``--labels float``)."""
    return int(value) if value is not None and value.is_integer() else value


def _load_plugins(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    if not value and not os.environ.get("RANKLENS_PLUGINS"):
        return  # (no plugin named: ranklens.plugins imports numpy and the engine)
    from ranklens.plugins import cli_callback

    cli_callback(ctx, param, value)


def parse_column_pairs(text: str, roles: Sequence[str], synonyms: Mapping[str, str] | None = None) -> dict[str, str]:
    """``ROLE=COLUMN,ROLE=COLUMN`` → ``{role: column}``; ``synonyms`` maps other spellings to a role.

    >>> parse_column_pairs("query=user, doc=item", ["query", "doc", "label"])
    {'query': 'user', 'doc': 'item'}
    """
    out: dict[str, str] = {}
    for part in text.split(","):
        role, equals, column = part.partition("=")
        key = role.strip().lower()
        if not equals or not key:
            raise click.BadParameter(f"expected ROLE=COLUMN pairs separated by commas, got {part.strip()!r}")
        key = (synonyms or {}).get(key, key)
        if key not in roles:
            raise click.BadParameter(f"unknown role {role.strip()!r} in {part.strip()!r}; expected {', '.join(roles)}")
        if not column.strip():
            raise click.BadParameter(f"no column name after {role.strip()}=")
        if key in out:
            raise click.BadParameter(f"role {key!r} given twice")
        out[key] = column.strip()
    return out


_QUERY_DOC = {"query_id": "query", "qid": "query", "doc_id": "doc", "docid": "doc", "docno": "doc"}
_USER_ITEM = {"query": "user", "query_id": "user", "qid": "user", "user_id": "user", "doc": "item", "doc_id": "item",
              "docid": "item", "docno": "item", "item_id": "item"}
_COLUMN_ROLES = {
    "qrels": (("query", "doc", "label"), {**_QUERY_DOC, "relevance": "label", "rel": "label", "grade": "label"}),
    "run": (("query", "doc", "score", "rank", "score_desc"), {**_QUERY_DOC, "position": "rank"}),
    "train": (("user", "item", "weight"), {**_USER_ITEM, "rating": "weight", "label": "weight", "value": "weight"}),
}


def _column_map(kind: str) -> Callable[[click.Context, click.Parameter, str | None], dict[str, str] | None]:
    """The callback of ``--qrels-columns``/``--run-columns``: ``query=user,doc=item,label=rating`` →
    ``columns=`` of the readers (``{"user": "query_id", "item": "doc_id", "rating": "relevance"}``)."""
    roles, synonyms = _COLUMN_ROLES[kind]
    python_role = {"query": "query_id", "doc": "doc_id", "label": "relevance", "score": "score", "user": "query_id",
                   "item": "doc_id", "weight": "weight", "rank": "rank", "score_desc": "score_desc"}

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str] | None:
        if value is None:
            return None
        return {column: python_role[role] for role, column in parse_column_pairs(value, roles, synonyms).items()}

    return callback


def _items_columns(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str] | None:
    """The callback of ``--items-columns``: ``item=sku,category=genre,feature=year,feature=price`` → ``columns=``
    of :func:`ranklens.data.interactions.read_catalog` (``feature=`` may be given once per feature column)."""
    if value is None:
        return None
    roles = ("item", "category", "feature")
    synonyms = {"doc": "item", "doc_id": "item", "item_id": "item", "features": "feature", "genre": "category"}
    out: dict[str, str] = {}
    for part in value.split(","):
        ((role, column),) = parse_column_pairs(part, roles, synonyms).items()
        if role != "feature" and role in out.values():
            raise click.BadParameter(f"role {role!r} given twice")
        if column in out:
            raise click.BadParameter(f"column {column!r} given twice")
        out[column] = role
    return out


#: the options of :func:`policy_options` that are :class:`EvalPolicy` fields of the same name
_POLICY_FIELDS = (
    "missing", "negative", "judged_only", "max_docs", "rel_level", "qrels_format", "run_format", "qrels_columns",
    "run_columns", "train", "items", "exclude_seen", "empty", "aggregate", "train_columns", "items_columns",
    "intents",
)


@overload
def policy_options(func: F, *, missing: str = "skip") -> F: ...


@overload
def policy_options(func: None = None, *, missing: str = "skip") -> Callable[[F], F]: ...


def policy_options(func: F | None = None, *, missing: str = "skip") -> F | Callable[[F], F]:
    """``--missing`` (and ``-c``), ``--negative``, ``--judged-only``, ``--max-docs``, ``--rel-level``,
    ``--labels``, input formats and column maps (``--qrels-columns``/``--run-columns``), passed to the command
    as one ``policy`` (:class:`ranklens.engine.policy.EvalPolicy`), and ``--plugin`` (eager, not passed to the
    command: it imports measure plugins before measures are parsed).

    Use as ``@policy_options``, or ``@policy_options(missing="zero")`` for another ``--missing`` default
    (``gate`` counts every qrels query, so a run cannot pass by leaving the hard queries out)."""
    if func is None:
        return lambda f: policy_options(f, missing=missing)
    options = [
        click.option(
            "--missing",
            type=click.Choice(["skip", "zero", "error"]),
            default=missing,
            show_default=True,
            help="Queries in the qrels but not in the run: skip them, score them 0 (trec_eval -c), or fail.",
        ),
        click.option(
            "--negative",
            type=click.Choice(["trec", "zero", "error"]),
            default="trec",
            show_default=True,
            help="Negative qrels labels: trec = pooled but unjudged (gain 0, not in the ideal); zero = judged 0.",
        ),
        click.option("--judged-only", "-J", is_flag=True, help="Drop unjudged retrieved documents first (trec_eval -J)."),
        click.option("--max-docs", "-M", type=click.IntRange(min=1), help="Evaluate only the top N documents per query."),
        click.option(
            "--rel-level",
            "-l",
            type=float,
            callback=_level,
            help="Default relevance threshold of binary measures (label ≥ LEVEL); any number with --labels float.",
        ),
        click.option(
            "--labels",
            "label_kind",
            type=click.Choice(["int", "float"]),
            default="int",
            show_default=True,
            help="Qrels labels: int = integer grades (trec_eval); float = real values (watch completion 0.93, "
            "CTR): graded measures use them as gains, binary ones need a threshold (rel= or --rel-level). "
            "docs/labels.md.",
        ),
        click.option(
            "--qrels-format",
            type=click.Choice(DATA_FORMATS),
            help="Qrels format (default: by extension; a headerless .tsv of TREC lines, as MS MARCO's, is TREC).",
        ),
        click.option(
            "--run-format",
            type=click.Choice(DATA_FORMATS),
            help="Run format (default: by extension, recognising 5-column TREC and 3-column MS MARCO runs; "
            "msmarco-rank/msmarco-score say what the third column is).",
        ),
        click.option(
            "--qrels-columns",
            callback=_column_map("qrels"),
            metavar="query=COL,doc=COL,label=COL",
            help="Which qrels columns hold the query, document and label (CSV, TSV, JSON Lines, Parquet); "
            "the others are found by name (docs/inputs.md).",
        ),
        click.option(
            "--run-columns",
            callback=_column_map("run"),
            metavar="query=COL,doc=COL,score=COL",
            help="Which run columns hold the query, document and score (CSV, TSV, JSON Lines, Parquet); "
            "rank=COL for a column of positions (1 = first); a column named rank/position/pos needs rank= "
            "(or score_desc= when higher values are better).",
        ),
        click.option(
            "--train",
            type=click.Path(dir_okay=False),
            help="Training interactions (user, item[, weight, timestamp]; any input format, columns named as in "
            "qrels) for the recommender measures: Novelty, ARP, Serendipity, Coverage, Gini (docs/recsys.md).",
        ),
        click.option(
            "--items",
            type=click.Path(dir_okay=False),
            help="The item catalog (item[, category][, numeric features]) for ILD and the catalog of Coverage/Gini.",
        ),
        click.option(
            "--train-columns",
            callback=_column_map("train"),
            metavar="user=COL,item=COL,weight=COL",
            help="Which --train columns hold the user, item and weight (query=/doc= work too); the others are "
            "found by name.",
        ),
        click.option(
            "--items-columns",
            callback=_items_columns,
            metavar="item=COL,category=COL,feature=COL",
            help="Which --items columns hold the item, its category and its numeric features (feature= once "
            "per column); without feature=, every numeric column is a feature.",
        ),
        click.option(
            "--intents",
            type=click.Path(dir_okay=False),
            help="Intent-level qrels (qid intent docid rel) for the intent-aware measures: alpha-nDCG, alpha-DCG, "
            "ERR-IA, nERR-IA, NRBP, nNRBP, P-IA, AP-IA, StRecall (docs/diversity.md).",
        ),
        click.option(
            "--exclude-seen",
            is_flag=True,
            help="Drop from each user's list the items the user has in --train before computing (a note counts them).",
        ),
        click.option(
            "--empty",
            type=click.Choice(["skip", "zero", "one"]),
            help="Users with no relevant test item: skip them, or score their relevance measures 0 or 1 "
            "(default: each measure's own value).",
        ),
        click.option(
            "--aggregate",
            type=click.Choice(["mean", "median", "p10", "p25", "p75", "p90", "p95", "p99", "min", "max"]),
            help="How the per-query (per-user) values of every measure averaged over queries combine (default mean; "
            "per measure: nDCG(agg=median)@10); sums and geometric means (NumRet, GMAP) are refused with it.",
        ),
        click.option(
            "--plugin",
            multiple=True,
            is_eager=True,
            expose_value=False,
            callback=_load_plugins,
            metavar="MODULE",
            help="Import a measure plugin first (a module name or a .py file; repeatable; also $RANKLENS_PLUGINS).",
        ),
    ]
    options.insert(1, click.option("-c", "missing_zero", is_flag=True, help="Same as --missing zero (trec_eval -c)."))

    @functools.wraps(func)
    def wrapper(*args: Any, missing_zero: bool = False, **kwargs: Any) -> Any:
        from ranklens.engine.policy import EvalPolicy  # (here, not at import: `--help` stays light)

        fields = {name: kwargs.pop(name) for name in _POLICY_FIELDS}
        if missing_zero:
            fields["missing"] = "zero"
        fields["labels"] = kwargs.pop("label_kind")
        policy = EvalPolicy(**fields)
        return func(*args, policy=policy, **kwargs)  # (a refused real label's hint is data: cli.main words it)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


def engine_options(func: F) -> F:
    """``--engine memory|spark|duckdb``, ``--spark-master URL``, ``--spark-plan auto|scan|shuffle`` (held in
    :data:`ranklens.spark.files.PLAN` while the command runs) and ``--memory-limit SIZE``, passed to the
    command as ``engine``, ``spark_master`` and ``memory_limit`` (``eval``, ``compare``, ``gate``: the same
    numbers on every engine). ``--engine spark`` without pyspark, or ``--engine duckdb`` without duckdb, prints
    the one-line install hint and exits 2 before the command runs."""

    @functools.wraps(func)
    def wrapper(
        *args: Any, engine: str = "memory", memory_limit: str | None = None, spark_plan: str = "auto", **kwargs: Any
    ) -> Any:
        import importlib.util

        if engine == "spark" and importlib.util.find_spec("pyspark") is None:
            click.echo("--engine spark needs pyspark: pip install 'ranklens[spark]'", err=True)
            raise SystemExit(2)
        if engine == "duckdb" and importlib.util.find_spec("duckdb") is None:
            click.echo("--engine duckdb needs duckdb: pip install 'ranklens[duckdb]'", err=True)
            raise SystemExit(2)
        if memory_limit is not None and engine != "duckdb":
            from ranklens.errors import InputError

            raise InputError("--memory-limit bounds DuckDB's memory: use it with --engine duckdb")
        if spark_plan != "auto" and engine != "spark":
            from ranklens.errors import InputError

            raise InputError("--spark-plan chooses how --engine spark reads Parquet: use it with --engine spark")
        if engine == "spark":
            from ranklens.spark.files import PLAN

            token = PLAN.set(spark_plan)
            try:
                return func(*args, engine=engine, memory_limit=memory_limit, **kwargs)
            finally:
                PLAN.reset(token)
        return func(*args, engine=engine, memory_limit=memory_limit, **kwargs)

    wrapper = click.option(
        "--spark-master", default="local[2]", show_default=True, help="Spark master URL for --engine spark."
    )(wrapper)
    wrapper = click.option(
        "--spark-plan", type=click.Choice(["auto", "scan", "shuffle"]), default="auto", show_default=True,
        help="With --engine spark: how Parquet inputs are read. scan: the Python workers read the row groups "
        "themselves (no rows through Spark's JVM); shuffle: Spark reads and shuffles them by query; auto: the scan "
        "for Parquet directories, URIs and files with columns query_id, doc_id, score/relevance.",
    )(wrapper)
    wrapper = click.option(
        "--memory-limit", metavar="SIZE", default=None,
        help="With --engine duckdb: DuckDB's memory limit (512MB, 4GB), spilling to disk beyond it.",
    )(wrapper)
    wrapper = click.option(
        "--engine", type=click.Choice(["memory", "spark", "duckdb"]), default="memory", show_default=True,
        help="memory; spark: evaluate on Apache Spark (pip install 'ranklens[spark]'); duckdb: on DuckDB "
        "(pip install 'ranklens[duckdb]'); the same numbers.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def progress_hook(enabled: bool) -> Callable[[str, int | None], Any]:
    """The library's progress hook (:data:`ranklens.evaluation.ProgressHook`) drawn on the terminal: a bar
    over the bytes when the total is known, else a spinner; nothing unless ``enabled``."""
    import contextlib

    from ranklens.cli._progress import byte_progress, status

    @contextlib.contextmanager
    def hook(label: str, total: int | None) -> Any:
        if total is None:
            with status(label, enabled=enabled):
                yield lambda done, rows: None
        else:
            with byte_progress(label, total, enabled=enabled) as update:
                yield update

    return hook


def echo_note(note: str) -> None:
    """A note on standard error, as every command prints them (none under ``--quiet``)."""
    from ranklens.cli._quiet import say

    say(f"ranklens: note: {note}")
