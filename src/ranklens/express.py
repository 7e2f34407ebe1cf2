"""The express evaluation: TREC text files and the common measures, without numpy or pyarrow (issue 12).

Most collections people evaluate are small (TREC DL, BEIR, Robust04: 40 to 7,000 queries), and for them
importing numpy and pyarrow costs several times the evaluation itself. The express path evaluates such a
collection in one compiled pass (``ranklens._cexpress``) and hands back plain Python values. It takes
only what it reads and computes exactly as the general path does:

* files with a TREC name (``.txt``, ``.run``, ``.trec``, ``.qrels`` or none of the known extensions), not
  compressed, ASCII text of at most :data:`LIMIT` bytes per run (bigger runs stream through the general
  path with bounded memory);
* the measures nDCG, AP, P, RR and R, with or without a cutoff, with their default parameters;
* the default evaluation policy (no ``--missing``, ``--judged-only``, ``--max-docs``, plugins …).

Anything else, and any line the compiled pass does not read beyond doubt, gives ``None``: the caller then
runs the general path (:mod:`ranklens.evaluation`), which is the reference, says every error and gives
the same values. ``tests/test_express.py`` checks that both paths print the same bytes.

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "q.txt").write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
>>> _ = (d / "r.txt").write_text("q1 Q0 d2 1 2.0 bm25\\nq1 Q0 d1 2 1.0 bm25\\n")
>>> from ranklens.measures import parse_many
>>> [(r.run, r.aggregates) for r in evaluate_express(str(d / "q.txt"), [str(d / "r.txt")], parse_many(["P@1", "RR"]))]
[('bm25', (0.0, 0.5))]
"""

from __future__ import annotations

import math
import os

from ranklens.data.formats import QRELS_FILES, RUN_FILES
from ranklens.errors import alignment_notes

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: neither typing nor the measure language is imported to evaluate)
    from collections.abc import Sequence

    from ranklens.data.formats import FileKind
    from ranklens.measures.base import Measure

try:
    from ranklens import _cexpress
except ImportError:  # (built without a C compiler: the general path does everything)
    _cexpress = None  # type: ignore[assignment]

__all__ = ["LIMIT", "ExpressMeasure", "ExpressResults", "evaluate_express", "express_measures", "express_specs"]

#: the largest run text (bytes) the express path reads whole
LIMIT = 64 << 20

#: family → the compiled kernel's number (see ranklens/_cexpress.c)
_KINDS = {"nDCG": 1, "AP": 2, "P": 3, "RR": 4, "R": 5}
_GZIP_MAGIC = b"\x1f\x8b"


class ExpressResults:
    """One run's values from the express path: what the renderers read of a :class:`~ranklens.Results`.

    Attributes:
        run: the run's name (its TREC tag, made unique by :func:`ranklens.data.names.unique_names`).
        measures: the measures, in the order asked.
        query_ids: the evaluated queries, in bytewise order.
        rows: one tuple of values per query, one value per measure.
        aggregates: the mean of every measure over the queries (:func:`math.fsum`, as the engine's).
        notes: what was left out (run-only queries, qrels queries without a retrieved document).
    """

    __slots__ = ("run", "measures", "query_ids", "rows", "aggregates", "notes")

    def __init__(
        self,
        run: str,
        measures: tuple[Measure | ExpressMeasure, ...],
        query_ids: tuple[str, ...],
        rows: tuple[tuple[float, ...], ...],
        aggregates: tuple[float, ...],
        notes: tuple[str, ...] = (),
    ) -> None:
        self.run, self.measures, self.query_ids = run, measures, query_ids
        self.rows, self.aggregates, self.notes = rows, aggregates, notes

    def value_rows(self) -> list[list[float]]:
        """The per-query values, a list per query (as :meth:`ranklens.Results.value_rows`)."""
        return [list(row) for row in self.rows]


class _MeanFamily:
    """What the renderers ask of an express measure's family: its values are averaged over queries."""

    aggregate = "mean"

    def is_system(self, m: object) -> bool:
        return False


class ExpressMeasure:
    """A measure of the express path named without the measure language (:func:`express_measures`): its
    canonical name is the one :func:`ranklens.measures.parse` gives."""

    __slots__ = ("name", "cutoff")
    family = _MeanFamily()
    params: tuple[tuple[str, object], ...] = ()

    def __init__(self, name: str, cutoff: int | None) -> None:
        self.name, self.cutoff = name, cutoff

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    def __repr__(self) -> str:
        return f"ExpressMeasure({str(self)!r})"


#: trec_eval names → the family, and whether a cutoff follows a dot (``P.10``) or there is none (``map``)
_TREC_NAMES = {"ndcg_cut": "nDCG", "map_cut": "AP", "P": "P", "recall": "R", "ndcg": "nDCG", "map": "AP", "recip_rank": "RR"}
_NEEDS_CUTOFF = {"P"}


def _cutoffs(text: str) -> list[int] | None:
    parts = text.split(",")
    if not all(p.isdigit() and p.isascii() and p[0] != "0" and len(p) <= 9 for p in parts):
        return None
    return [int(p) for p in parts]


def express_measures(words: Sequence[str]) -> list[ExpressMeasure] | None:
    """The measures of ``words`` in the plain forms the express path reads without the measure language
    (``nDCG@10``, ``AP``, ``P@5,10``, ``RR@3``, ``R@100`` and the trec_eval names ``ndcg_cut.10``, ``map``,
    ``map_cut.5``, ``P.5``, ``recip_rank``, ``recall.100``, ``ndcg``), in order, each once; None when a
    word has another form (the caller then asks :func:`ranklens.measures.parse_many`).

    >>> [str(m) for m in express_measures(["nDCG@5,10", "map", "P.5", "AP"])]
    ['nDCG@5', 'nDCG@10', 'AP', 'P@5']
    >>> express_measures(["nDCG(gain=exp)@10"]) is None
    True
    """
    out: list[ExpressMeasure] = []
    for word in words:
        family, at, rest = word.partition("@")
        if family in _KINDS and "." not in word:
            cutoffs: list[int | None] | None = [None] if not at else _cutoffs(rest)  # type: ignore[assignment]
            if cutoffs is None or (family in _NEEDS_CUTOFF and not at):
                return None
        else:
            name, dot, rest = word.partition(".")
            family = _TREC_NAMES.get(name, "")
            if not family or at or (bool(dot) != (name in ("ndcg_cut", "map_cut", "P", "recall"))):
                return None
            cutoffs = _cutoffs(rest) if dot else [None]  # type: ignore[assignment]
            if cutoffs is None:
                return None
        for k in cutoffs:
            m = ExpressMeasure(family, k)
            if all(str(m) != str(o) for o in out):
                out.append(m)
    return out or None


def express_specs(measures: Sequence[Measure | ExpressMeasure]) -> tuple[tuple[int, int], ...] | None:
    """The compiled kernel's ``(kind, cutoff)`` of every measure, or None when one is not express.

    >>> from ranklens.measures import parse_many
    >>> express_specs(parse_many(["nDCG@10", "AP", "P@5"])), express_specs(parse_many(["nDCG(gain=exp)@10"]))
    (((1, 10), (2, 0), (3, 5)), None)
    """
    specs = []
    for m in measures:
        kind = _KINDS.get(m.name)
        if kind is None or m.params or type(m.cutoff) not in (int, type(None)):
            return None
        specs.append((kind, m.cutoff or 0))
    return tuple(specs) if specs and len(set(specs)) == len(specs) else None


def available() -> bool:
    """Whether the express path may run: compiled, and not switched off (``RANKLENS_EXPRESS=0``,
    ``RANKLENS_PURE=1``) or made unsafe by plugins (``RANKLENS_PLUGINS``)."""
    env = os.environ
    return (
        _cexpress is not None
        and env.get("RANKLENS_EXPRESS", "") in ("", "1")
        and env.get("RANKLENS_PURE", "") in ("", "0")
        and not env.get("RANKLENS_PLUGINS", "")
    )


def _text(path: str, kind: FileKind) -> bytes | None:
    """The bytes of a file the express path may read as TREC text (its name says TREC, it is not
    compressed and not bigger than :data:`LIMIT`); None for anything else (the general path reads it and
    says what is wrong, if anything). The compiled pass checks the bytes themselves."""
    try:
        if kind.detect(path) != ("trec", False):
            return None
        with open(path, "rb") as f:
            if not os.path.isfile(path) or os.fstat(f.fileno()).st_size > LIMIT:
                return None
            data = f.read(LIMIT + 1)
    except Exception:  # noqa: BLE001 (an unknown extension, a missing or unreadable file: the general path says)
        return None
    return None if len(data) > LIMIT or data.startswith(_GZIP_MAGIC) else data


def evaluate_express(
    qrels: str, runs: Sequence[str], measures: Sequence[Measure | ExpressMeasure], *, names: Sequence[str | None] | None = None
) -> list[ExpressResults] | None:
    """Evaluate the run files ``runs`` against the qrels file ``qrels``, or None when the express path does
    not take these inputs (see the module docstring). ``names`` are the names given to the runs (None:
    the run's tag), made unique as the general path does."""
    specs = express_specs(measures)
    if specs is None or not runs or not available():
        return None
    q = _text(qrels, QRELS_FILES)
    if q is None:
        return None
    raw: list[tuple[str, tuple[str, ...], list[float], list[str]]] = []
    for path in runs:
        r = _text(path, RUN_FILES)
        if r is None:
            return None
        out = _cexpress.evaluate(q, r, specs)
        if out is None:
            return None
        tag, query_ids, values, run_only_queries, run_only_rows, qrels_only_queries = out
        notes = alignment_notes(run_only_queries, run_only_rows, qrels_only_queries)
        raw.append((tag.decode("ascii"), tuple(query_ids), values, notes))
    from ranklens.data.names import unique_names

    given = list(names) if names is not None else [None] * len(runs)
    labels = unique_names([(g, None) if g is not None else (tag, path) for g, (tag, *_), path in zip(given, raw, runs)])
    results = []
    width = len(specs)
    for label, (_, query_ids, values, notes) in zip(labels, raw):
        rows = tuple(tuple(values[i : i + width]) for i in range(0, len(values), width))
        means = tuple(math.fsum(values[j::width]) / len(query_ids) for j in range(width))
        results.append(ExpressResults(label, tuple(measures), query_ids, rows, means, tuple(notes)))
    return results
