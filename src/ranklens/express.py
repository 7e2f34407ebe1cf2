"""The express evaluation: TREC text and Parquet files and the common measures, in one compiled pass (issue 12).

``RANKLENS_EXPRESS=0`` in the environment (or ``RANKLENS_PURE=1``, or plugins in ``RANKLENS_PLUGINS``)
switches the path off; :func:`available` reads the environment at each call.

Most collections people evaluate are small (TREC DL, BEIR, Robust04: 40 to 7,000 queries), and for them
importing numpy and pyarrow costs several times the evaluation itself. The express path evaluates such a
collection in one compiled pass (``ranklens._cexpress``) and hands back plain Python values. It takes
only what it reads and computes exactly as the general path does:

* regular files with a TREC name (``.txt``, ``.run``, ``.trec``, ``.qrels``), not compressed, ASCII text;
  runs are read :data:`BLOCK` bytes at a time, each query's rows together (as run files are written: a
  query that comes back after others sends the run to the general path, which reads it whole), without
  importing numpy or pyarrow;
* regular Parquet files (``.parquet``, not gzipped), qrels or runs: their query, document and value
  columns found by name as the general path finds them, ids as Arrow strings of printable ASCII (or
  integers, compared as their decimal strings as the general path compares them), scores
  as floats or integers, labels as integers, no nulls; runs decoded by pyarrow in batches (the next ones
  in a thread while the compiled pass evaluates this one), each batch's buffers read in place;
* the measures nDCG, DCG, AP, P, RR and R, with or without a cutoff, with their default parameters (the words
  of ``ranklens eval``'s express form), and trec_eval's default and ``all_trec`` sets (:data:`SUPPORTED_MEASURES`,
  for ``ranklens trec-eval`` and every face through the dispatcher);
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
from array import array

from ranklens.data.formats import QRELS_FILES, RUN_FILES
from ranklens.errors import alignment_notes
from ranklens.results.core import Results

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: neither typing nor the measure language is imported to evaluate)
    from collections.abc import Callable, Iterator, Sequence
    from contextlib import AbstractContextManager as ContextManager
    from typing import Any, BinaryIO

    from ranklens.data.formats import FileKind
    from ranklens.hooks import ProgressHook
    from ranklens.measures.base import Measure

try:
    from ranklens import _cexpress
except ImportError:  # (built without a C compiler: the general path does everything)
    _cexpress = None  # type: ignore[assignment]

__all__ = [
    "BLOCK",
    "SUPPORTED_MEASURES",
    "SUPPORTED_POLICY",
    "LABEL_AT",
    "PASSED",
    "ExpressMeasure",
    "ExpressResults",
    "RankLabel",
    "available",
    "evaluate_express",
    "express_measures",
    "express_specs",
    "intermediates_declined",
    "measures_declined",
    "policy_declined",
    "unavailable",
]

#: bytes of run text read at a time (each block's queries evaluated before the next is read)
BLOCK = 8 << 20

#: family → the compiled kernel's number (see ranklens/_cexpress.c); the plain words of the express form
_KINDS = {"nDCG": 1, "AP": 2, "P": 3, "RR": 4, "R": 5, "DCG": 6}

#: the families of trec_eval's default and all_trec sets the pass computes too (``trec_measure`` of
#: ``_cexpress.c``; GMAP and GMBpref are AP and bpref per query, aggregated by the family)
_TREC_KINDS = {
    "NumQ": 7, "NumRet": 8, "NumRel": 9, "NumRelRet": 10, "Rprec": 11, "Bpref": 12, "GMBpref": 12, "IPrec": 13,
    "GMAP": 2, "infAP": 14, "RprecMult": 15, "Utility": 16, "IPrecAvg": 17, "BinG": 18, "G": 19, "nDCGRel": 20,
    "RnDCG": 21, "RelativeP": 22, "Success": 23, "SetP": 24, "SetRelativeP": 25, "SetAP": 26, "SetF": 27,
    "Unjudged": 28, "NumNonRelJudgedRet": 29, "TrecRBP": 30, "TrecRBPResidual": 31,
}

#: the kind of trec_eval's relstring, one rank at a time (:class:`RankLabel`; not a measure)
LABEL_AT = 32

#: a declared parameter whose every value the pass takes: it is handed to the C code with the measure
PASSED = "passed to the pass"

#: family → its parameter handed to the C code (``Spec.param``)
_PASSED_PARAMS = {"IPrec": "recall", "RprecMult": "mult", "SetF": "beta2", "TrecRBP": "p", "TrecRBPResidual": "p"}

#: What the compiled pass implements, declared as the compiled provider of :mod:`ranklens.backends`: every
#: parameter of each family at the value ``_cexpress.c`` computes with. A parsed measure is compared by its
#: resolved values (:meth:`ranklens.measures.Measure.get`: the default where none is written), so a changed
#: registry default or a new parameter makes the compiled pass decline instead of print other numbers.
SUPPORTED_MEASURES: dict[str, dict[str, object]] = {
    "nDCG": {
        "gain": "linear", "discount": "log2", "base": 2, "ties": "trec", "ideal": "global", "depth": 0, "max_rel": 0,
        "norm": "ideal", "agg": "mean", "judged_only": False,
    },
    "DCG": {"gain": "linear", "discount": "log2", "base": 2, "ties": "trec", "agg": "mean", "judged_only": False},
    "AP": {"rel": 1, "ties": "trec", "agg": "mean", "judged_only": False},
    "P": {"rel": 1, "ties": "trec", "agg": "mean", "judged_only": False},
    "RR": {"rel": 1, "ties": "trec", "agg": "mean", "judged_only": False},
    "R": {"rel": 1, "ties": "trec", "agg": "mean", "judged_only": False},
    # trec_eval's default (official) set
    "NumQ": {"judged_only": False},
    "NumRet": {"judged_only": False},
    "NumRel": {"rel": 1, "judged_only": False},
    "NumRelRet": {"rel": 1, "judged_only": False},
    "GMAP": {"rel": 1, "judged_only": False},
    "Rprec": {"rel": 1, "agg": "mean", "judged_only": False},
    "Bpref": {"rel": 1, "agg": "mean", "judged_only": False},
    "IPrec": {"recall": PASSED, "rel": 1, "agg": "mean", "judged_only": False},
    # the rest of all_trec (relstring by :class:`RankLabel`)
    "infAP": {"rel": 1, "agg": "mean", "judged_only": False},
    "GMBpref": {"rel": 1, "judged_only": False},
    "RprecMult": {"mult": PASSED, "rel": 1, "agg": "mean", "judged_only": False},
    "Utility": {"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0, "num_docs": 0, "rel": 1, "agg": "mean", "judged_only": False},
    "IPrecAvg": {
        "recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), "rel": 1, "agg": "mean", "judged_only": False,
    },
    "BinG": {"rel": 1, "agg": "mean", "judged_only": False},
    "G": {"gain": "linear", "agg": "mean", "judged_only": False},
    "nDCGRel": {"gain": "linear", "agg": "mean", "judged_only": False},
    "RnDCG": {"gain": "linear", "rel": 1, "agg": "mean", "judged_only": False},
    "RelativeP": {"rel": 1, "agg": "mean", "judged_only": False},
    "Success": {"rel": 1, "ties": "trec", "agg": "mean", "judged_only": False},
    "SetP": {"rel": 1, "agg": "mean", "judged_only": False},
    "SetRelativeP": {"rel": 1, "agg": "mean", "judged_only": False},
    "SetAP": {"rel": 1, "agg": "mean", "judged_only": False},
    "SetF": {"beta2": PASSED, "rel": 1, "agg": "mean", "judged_only": False},
    "Unjudged": {"agg": "mean", "judged_only": False},
    "NumNonRelJudgedRet": {"rel": 1, "judged_only": False},
    "TrecRBP": {"p": PASSED, "gain": "linear", "agg": "mean", "judged_only": False},
    "TrecRBPResidual": {"p": PASSED, "agg": "mean", "judged_only": False},
}

#: The evaluation policy the compiled pass implements: each field of
#: :class:`~ranklens.engine.policy.EvalPolicy` and the values it accepts (a field not listed declines).
SUPPORTED_POLICY: dict[str, tuple[object, ...]] = {
    "missing": ("skip", "zero"), "negative": ("trec",), "judged_only": (False,), "max_docs": (None,), "rel_level": (None,),
    "labels": (None, "int"), "qrels_format": (None,), "run_format": (None,), "qrels_columns": (None,),
    "run_columns": (None,), "train": (None,), "items": (None,), "exclude_seen": (False,), "empty": (None,),
    "aggregate": (None,), "train_columns": (None,), "items_columns": (None,), "intents": (None,),
}
_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"


class ExpressResults(Results):
    """One run's values from the express path: a :class:`~ranklens.Results` (values held in pure Python, no
    numpy), and whether each query's rows came together in the file (:attr:`grouped`; else the general path
    reads it whole: :attr:`ranklens.evaluation.FileEvaluation.read_whole`).

    Attributes (beyond :class:`~ranklens.Results`'):
        rows: one tuple of values per query, one value per measure.
        grouped: whether each query's rows came together in the file.
    """

    grouped: bool

    def __init__(
        self,
        run: str,
        measures: tuple[Measure | ExpressMeasure | RankLabel, ...],
        query_ids: tuple[str, ...],
        values: Any,
        aggregates: tuple[float, ...],
        notes: tuple[str, ...] = (),
        options: dict[str, Any] | None = None,
        id_kind: str = "str",
        *,
        grouped: bool = True,
    ) -> None:
        super().__init__(run, measures, query_ids, values, aggregates, notes, dict(options or {}), id_kind)  # type: ignore[arg-type]
        self.__dict__["grouped"] = grouped

    @property
    def rows(self) -> tuple[tuple[float, ...], ...]:
        """The per-query values, a tuple per query."""
        return tuple(tuple(row) for row in self.value_rows())


class _MeanFamily:
    """What the renderers ask of an express measure's family: its values are averaged over queries."""

    aggregate = "mean"
    params: tuple[object, ...] = ()

    def is_system(self, m: object) -> bool:
        return False


class ExpressMeasure:
    """A measure of the express path named without the measure language (:func:`express_measures`,
    :func:`ranklens.trec_eval.plain.select_plain`): its canonical name is the one
    :func:`ranklens.measures.parse` gives. ``param`` is the value of the family's parameter the compiled pass
    takes (:data:`_PASSED_PARAMS`: IPrec's recall …); every other parameter is the registry's default."""

    __slots__ = ("name", "cutoff", "param")
    family = _MeanFamily()
    params: tuple[tuple[str, object], ...] = ()

    def __init__(self, name: str, cutoff: int | None, param: float | None = None) -> None:
        self.name, self.cutoff, self.param = name, cutoff, param

    def __str__(self) -> str:
        if self.param is not None:
            return f"{self.name}({_PASSED_PARAMS[self.name]}={self.param!r})"
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


def express_specs(measures: Sequence[Measure | ExpressMeasure | RankLabel]) -> tuple[tuple[float, ...], ...] | None:
    """The compiled kernel's ``(kind, cutoff)`` of every measure, or None when it declines one
    (:func:`measures_declined` says why).

    >>> from ranklens.measures import parse_many
    >>> express_specs(parse_many(["nDCG@10", "AP", "P@5"])), express_specs(parse_many(["nDCG(gain=exp)@10"]))
    (((1, 10), (2, 0), (3, 5)), None)
    """
    if measures_declined(measures) is not None:
        return None
    return tuple(_spec(m) for m in measures)


def _spec(m: Measure | ExpressMeasure | RankLabel) -> tuple[float, ...]:
    """The compiled kernel's ``(kind, cutoff)``, or ``(kind, cutoff, parameter)`` (:data:`_PASSED_PARAMS`)."""
    if isinstance(m, RankLabel):
        return (LABEL_AT, m.cutoff)
    kind = _KINDS.get(m.name) or _TREC_KINDS[m.name]
    passed = _PASSED_PARAMS.get(m.name)
    if passed is None:
        return (kind, m.cutoff or 0)
    if isinstance(m, ExpressMeasure):
        return (kind, m.cutoff or 0) if m.param is None else (kind, m.cutoff or 0, float(m.param))
    return (kind, m.cutoff or 0, float(m.get(passed)))


class RankLabel:
    """Not a measure: the label of the document at rank ``cutoff`` (-1 not judged, -2 no document there),
    what trec_eval's relstring prints one character of; asked of the compiled pass by ``ranklens trec-eval``
    (:mod:`ranklens.trec_eval.runner`) and averaged by no one.

    >>> str(RankLabel(3))
    'label@3'
    """

    __slots__ = ("cutoff",)
    name = "label"
    family = _MeanFamily()
    params: tuple[tuple[str, object], ...] = ()

    def __init__(self, cutoff: int) -> None:
        self.cutoff = cutoff

    def __str__(self) -> str:
        return f"label@{self.cutoff}"

    def __repr__(self) -> str:
        return f"RankLabel({self.cutoff})"


def measures_declined(measures: Sequence[Measure | ExpressMeasure | RankLabel]) -> str | None:
    """Why the compiled pass does not compute ``measures`` (None: it does): a family it lacks, or a parameter
    whose resolved value is not the one it implements (:data:`SUPPORTED_MEASURES`). A plain word of the
    command line (:class:`ExpressMeasure`) means the registry's defaults, which the declaration matches
    (``tests/engine/test_backends.py`` checks it without importing the measure language here).

    >>> from ranklens.measures import parse_many
    >>> measures_declined(parse_many(["nDCG@10", "AP"])) is None
    True
    >>> measures_declined(parse_many(["nDCG(gain=exp)@10"]))
    'nDCG(gain=exp)@10: gain=exp; the compiled pass implements gain=linear'
    """
    if not measures:
        return "no measure"
    seen: set[tuple[object, ...]] = set()
    for m in measures:
        if isinstance(m, RankLabel):
            continue
        declared = SUPPORTED_MEASURES.get(m.name)
        if declared is None:
            return f"{m}: the compiled pass does not implement {m.name} (ranklens.express.SUPPORTED_MEASURES lists what it does)"
        if type(m.cutoff) not in (int, type(None)):
            return f"{m}: a cutoff that is not a whole number"
        if isinstance(m, ExpressMeasure):
            continue  # (a plain word: the registry's defaults)
        for param in m.family.all_params:
            value = m.get(param.name)
            if param.name not in declared:
                return f"{m}: {param.name}={value}; the compiled pass declares nothing for {param.name}"
            if declared[param.name] is PASSED:
                if isinstance(value, (int, float)) and math.isfinite(value):
                    continue
                return f"{m}: {param.name}={value}; the compiled pass takes a finite number"
            if value != declared[param.name]:
                return f"{m}: {param.name}={value}; the compiled pass implements {param.name}={declared[param.name]}"
    for m in measures:
        key = (m.name, *_spec(m))
        if key in seen:
            return f"{m}: asked for twice"
        seen.add(key)
    return None


#: the families whose intermediates the pass records for ``explain`` (``_cexpress.trace_queries``)
TRACED_MEASURES = ("nDCG", "DCG", "AP", "P", "RR", "R")


def intermediates_declined(measures: Sequence[Measure | ExpressMeasure], inputs: str = "files") -> str | None:
    """Why the compiled pass does not record the intermediates ``explain`` prints for ``measures`` (None: it
    does; :func:`measures_declined` is asked first): one measure of :data:`TRACED_MEASURES`, read from files
    or data in memory (not Spark's columns).

    >>> from ranklens.measures import parse_many
    >>> intermediates_declined(parse_many(["nDCG@5"])) is None, intermediates_declined(parse_many(["AP"]), "columns")
    (True, 'explain on data in columns: the compiled pass records intermediates when it reads files or data in memory')
    """
    if len(measures) != 1:
        return f"explain takes one measure; {len(measures)} given"
    if measures[0].name not in TRACED_MEASURES:
        return f"{measures[0]}: the compiled pass records the intermediates of {', '.join(TRACED_MEASURES)} only"
    if inputs not in ("files", "memory"):
        return f"explain on data in {inputs}: the compiled pass records intermediates when it reads files or data in memory"
    return None


def policy_declined(policy: object) -> str | None:
    """Why the compiled pass does not evaluate under ``policy`` (an :class:`~ranklens.engine.policy.EvalPolicy`,
    None: the default), or None when it does (:data:`SUPPORTED_POLICY`)."""
    if policy is None:
        return None
    import dataclasses

    for field in dataclasses.fields(policy):  # type: ignore[arg-type]
        value = getattr(policy, field.name)
        accepted = SUPPORTED_POLICY.get(field.name)
        if accepted is None:
            return f"policy {field.name}={value!r}: the compiled pass declares nothing for {field.name}"
        if not any(value == a and type(value) is type(a) for a in accepted):
            return f"policy {field.name}={value!r}: the compiled pass implements {field.name}={accepted[0]!r}"
    return None


def unavailable() -> str | None:
    """Why the compiled pass may not run here (None: it may): not built, switched off or made unsafe by
    plugins (:func:`available`)."""
    env = os.environ
    if _cexpress is None:
        return "not built (ranklens._cexpress is missing: installed without a C compiler)"
    if env.get("RANKLENS_EXPRESS", "") not in ("", "1"):
        return f"switched off (RANKLENS_EXPRESS={env['RANKLENS_EXPRESS']})"
    if env.get("RANKLENS_PURE", "") not in ("", "0"):
        return f"switched off (RANKLENS_PURE={env['RANKLENS_PURE']})"
    if env.get("RANKLENS_PLUGINS", ""):
        return "plugins are loaded (RANKLENS_PLUGINS): they may redefine a measure"
    return None


def available() -> bool:
    """Whether the express path may run: compiled, and not switched off (``RANKLENS_EXPRESS=0``,
    ``RANKLENS_PURE=1``) or made unsafe by plugins (``RANKLENS_PLUGINS``)."""
    return unavailable() is None


def _source(path: str, kind: FileKind) -> BinaryIO | str | None:
    """How the express path reads the file at ``path``: open, when it may read it as TREC text (its name
    says TREC, a regular file, not gzip-compressed); ``"parquet"`` for a regular Parquet file (its name
    says Parquet, it starts with ``PAR1``); None for anything else (the general path reads it and says what
    is wrong, if anything). The compiled pass checks what it reads itself."""
    try:
        fmt = kind.detect(path)
        if fmt not in (("trec", False), ("parquet", False)) or not os.path.isfile(path):
            return None
        f = open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except Exception:  # noqa: BLE001 (an unknown extension, a missing or unreadable file: the general path says)
        return None
    head = f.read(4)
    if fmt[0] == "parquet" or head[:2] == _GZIP_MAGIC:
        f.close()
        return "parquet" if fmt[0] == "parquet" and head == _PARQUET_MAGIC else None
    f.seek(0)
    return f


class _Run:
    """What the blocks of one run add up to."""

    __slots__ = ("tag", "seen", "query_ids", "values", "run_only_queries", "run_only_rows", "rows", "grouped")

    def __init__(self) -> None:
        self.tag: str | None = None
        self.seen: set[str] = set()
        self.query_ids: list[str] = []
        self.values: list[float] = []
        self.run_only_queries = self.run_only_rows = self.rows = 0
        self.grouped = True


def _add_block(out: _Run, got: tuple) -> bool:  # type: ignore[type-arg]
    """Add what the compiled pass gave for a block to ``out``; False when a query comes back after others
    in a later block (not grouped: the general path reads such a run whole)."""
    tag, run_queries, evaluated, values, run_only_rows, _, rows, grouped = got
    if out.tag is None and tag is not None:
        out.tag = tag.decode("ascii")
    before = len(out.seen)
    out.seen.update(run_queries)
    if len(out.seen) != before + len(run_queries):
        return False
    out.query_ids += evaluated
    out.values += values
    out.run_only_queries += len(run_queries) - len(evaluated)
    out.run_only_rows += run_only_rows
    out.rows += rows
    out.grouped = out.grouped and grouped
    return True


def _evaluate_run(
    qrels: object, f: BinaryIO, specs: tuple[tuple[float, ...], ...], block: int, update: Callable[[int, int], None]
) -> _Run | None:
    """One run file evaluated block by block (a query whole in one block), or None when the compiled pass
    declines a block or a query comes back after others in a later block (the general path reads such a
    run whole); ``update(bytes read, rows)`` after each block."""
    out = _Run()
    carry = b""
    want = block
    done = 0
    while True:
        chunk = f.read(want)
        done += len(chunk)
        final = len(chunk) < want
        text = carry + chunk if carry else chunk
        end = len(text) if final else text.rfind(b"\n") + 1
        got = _cexpress.evaluate_block(qrels, text, end, specs, final)
        if got is None:
            return None
        if not _add_block(out, got):
            return None
        consumed = got[5]
        update(done - (len(text) - consumed), out.rows)
        if final:
            return out
        carry = text[consumed:]
        want = block if consumed else 2 * want  # (a query longer than the block: read on)


#: Arrow types → the compiled pass's number kinds (see ranklens/_cexpress.c)
_NUMBER_KINDS = {
    "double": 0, "float": 1, "int32": 2, "int64": 3, "int8": 4, "int16": 5, "uint8": 6, "uint16": 7, "uint32": 8,
}
_STRING_WIDE = {"string": 0, "large_string": 1}


_INTEGER_IDS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _string_ids(batch: object) -> object:
    """``batch`` with integer id columns as their decimal strings, as the general path compares ids
    (``ranklens.data._intern.to_string_array``: a cast to string); other batches as they are."""
    columns = [batch.column(i) for i in range(3)]  # type: ignore[attr-defined]
    if not any(str(c.type) in _INTEGER_IDS for c in columns[:2]):
        return batch
    import pyarrow as pa

    strings = [c.cast(pa.string()) if str(c.type) in _INTEGER_IDS else c for c in columns[:2]]
    return pa.RecordBatch.from_arrays([*strings, columns[2]], names=batch.schema.names)  # type: ignore[attr-defined]


def _segment(batch: object, start: int = 0) -> tuple[object, ...] | None:
    """The compiled pass's segment of rows ``start:`` of a batch of (query id, document id, value) Arrow
    arrays (ids as strings, or as a dictionary of strings with int32 indices), or None when a column has
    nulls or a type it does not read (the general path then reads)."""
    parts: list[object] = []
    for i in (0, 1):
        a = batch.column(i)  # type: ignore[attr-defined]
        if a.null_count:
            return None
        indices, first = 0, a.offset + start
        if str(a.type).startswith("dictionary<values=string, indices=int32"):
            indices = a.indices.buffers()[1].address + 4 * (a.indices.offset + start)
            a, first = a.dictionary, a.dictionary.offset
            if a.null_count:
                return None
        wide = _STRING_WIDE.get(str(a.type))
        if wide is None:
            return None
        buffers = a.buffers()
        parts += [buffers[1].address, buffers[2].address if buffers[2] is not None else 0, wide, first, indices, len(a)]
    v = batch.column(2)  # type: ignore[attr-defined]
    kind = _NUMBER_KINDS.get(str(v.type))
    if kind is None or v.null_count:
        return None
    parts += [v.buffers()[1].address, kind, v.offset + start, batch.num_rows - start]  # type: ignore[attr-defined]
    return tuple(parts)


class _Prefetch:
    """The items of an iterator, read in a thread up to ``depth`` ahead of the consumer: the next batches
    of a Parquet run are decoded while the compiled pass (which lets go of the GIL) evaluates this one.
    Measured on the 10M-row M run (0.5 s of decoding, 0.3 s of evaluation): 0.54–0.61 s for both with two
    batches ahead, 0.57–0.74 s with one, 0.8 s one after the other. An exception of the iterator is raised
    in the consumer, where it would have been."""

    _END = object()

    def __init__(self, items: Iterator[Any], depth: int = 2) -> None:
        import queue
        import threading

        self._full = queue.Full
        self._queue: queue.Queue[Any] = queue.Queue(depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._feed, args=(items,), name="ranklens-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except self._full:
                continue
        return False

    def _feed(self, items: Iterator[Any]) -> None:
        try:
            for item in items:
                if not self._put(item):
                    return
            self._put(self._END)
        except BaseException as e:  # noqa: BLE001 (handed to the consumer, raised there)
            self._put(_Raised(e))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def __iter__(self) -> Iterator[Any]:
        while True:
            item = self._queue.get()
            if item is self._END:
                return
            if isinstance(item, _Raised):
                raise item.error
            yield item

    def close(self) -> None:
        """Stop the reading thread and wait for it (what it read ahead is dropped)."""
        self._stop.set()
        self._thread.join()


class _Raised:
    """An exception of a prefetched iterator, on its way to the consumer."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _parquet_qrels(path: str) -> tuple[object, int] | None:
    """The compiled qrels of the Parquet file at ``path`` (its batches all read: qrels are small), or None."""
    from ranklens.data.columns import QRELS
    from ranklens.data.parquet_batches import parquet_batches
    from ranklens.errors import FormatError

    try:
        batches = [_string_ids(batch) for batch, _ in parquet_batches(path, QRELS, batch_rows=1 << 24)]
    except FormatError:
        return None  # (the general path says what is wrong)
    segments = tuple(_segment(b) for b in batches)
    if not segments or None in segments:
        return None
    return _cexpress.parse_qrels_columns(batches, segments)  # type: ignore[no-any-return]


def _evaluate_parquet_run(
    qrels: object, path: str, specs: tuple[tuple[float, ...], ...], batch_rows: int | None,
    update: Callable[[int, int], None],
) -> _Run | None:
    """One Parquet run evaluated batch by batch (:func:`ranklens.data.parquet_batches.parquet_batches`,
    ``batch_rows`` rows at a time, None: its default; a query's rows carried on to the next batch until
    they are whole), or None as :func:`_evaluate_run`."""
    from ranklens.data.columns import RUN
    from ranklens.data.names import run_name_of
    from ranklens.data.parquet_batches import DEFAULT_BATCH_ROWS, parquet_batches
    from ranklens.errors import FormatError

    out = _Run()
    out.tag = run_name_of(path)
    size = os.path.getsize(path)
    carry: list[tuple[object, int]] = []  # (batch, first row) of the rows waiting for the rest of their query
    reader = _Prefetch(parquet_batches(path, RUN, batch_rows=batch_rows or DEFAULT_BATCH_ROWS, query_dictionary=True))
    read = total = 0
    try:
        for batch, total in reader:
            read += batch.num_rows  # type: ignore[attr-defined]
            carry.append((_string_ids(batch), 0))
            segments = tuple(_segment(b, first) for b, first in carry)
            if None in segments:
                return None
            got = _cexpress.evaluate_columns(qrels, segments, specs, read == total)
            if got is None or not _add_block(out, got):
                return None
            consumed = got[5]
            while carry and consumed >= carry[0][0].num_rows - carry[0][1]:  # type: ignore[attr-defined]
                consumed -= carry[0][0].num_rows - carry[0][1]  # type: ignore[attr-defined]
                carry.pop(0)
            if carry:
                carry[0] = (carry[0][0], carry[0][1] + consumed)
            update(size * read // max(total, 1), out.rows)
    except FormatError:
        return None  # (the general path says what is wrong)
    finally:
        reader.close()
    if carry or read != total:
        return None  # (rows left over: the metadata's row count was wrong; the general path reads)
    return out if out.rows else None


def evaluate_express(
    qrels: str,
    runs: Sequence[str],
    measures: Sequence[Measure | ExpressMeasure | RankLabel],
    *,
    names: Sequence[str | None] | None = None,
    block: int = BLOCK,
    batch_rows: int | None = None,
    progress: ProgressHook | None = None,
    why: list[str] | None = None,
    missing: str = "skip",
    trace: tuple[str, ...] = (),
    traced: dict[str, tuple[Any, ...]] | None = None,
) -> list[ExpressResults] | None:
    """Evaluate the run files ``runs`` against the qrels file ``qrels``, or None when the express path does
    not take these inputs (see the module docstring). ``names`` are the names given to the runs (None:
    the run's tag; a Parquet run's file name), made unique as the general path does; text runs are read
    ``block`` bytes at a time and Parquet runs ``batch_rows`` rows at a time (None: the general path's
    batches), each step shown by ``progress`` (:data:`ranklens.hooks.ProgressHook`) as the general
    path shows it. When it declines, the reason is appended to ``why`` (if given). ``missing="zero"``
    (trec_eval ``-c``, the gate's default) adds every qrels query a run lacks with the value 0 for each
    measure — the reference's value for a query ranked against one unjudged document (the measures of this
    pass count nothing retrieved that is not judged relevant) — and says so in the note; ``"skip"`` leaves
    them out. ``trace``: query ids whose intermediates the pass records (``explain``), put into ``traced``
    (:mod:`ranklens.explain.compiled` reads them; the last run's when there are several)."""
    said = why if why is not None else []
    reason = unavailable() or measures_declined(measures) or (None if runs else "no run")
    if reason is not None:
        said.append(reason)
        return None
    specs = express_specs(measures)
    assert specs is not None
    try:
        return _evaluate(
            qrels, runs, measures, specs, names, block, batch_rows, progress, said, missing == "zero", trace, traced
        )
    except (OSError, MemoryError) as e:  # (a read that fails: the general path reads again, and says what failed)
        said.append(f"a read failed ({type(e).__name__})")
        return None


def _evaluate(
    qrels: str,
    runs: Sequence[str],
    measures: Sequence[Measure | ExpressMeasure | RankLabel],
    specs: tuple[tuple[float, ...], ...],
    names: Sequence[str | None] | None,
    block: int,
    batch_rows: int | None,
    progress: ProgressHook | None,
    why: list[str],
    zero: bool = False,
    trace: tuple[str, ...] = (),
    traced: dict[str, tuple[Any, ...]] | None = None,
) -> list[ExpressResults] | None:
    source = _source(qrels, QRELS_FILES)
    if source is None:
        why.append(f"{qrels}: not an uncompressed regular TREC text or Parquet file")
        return None
    with _step(progress, f"reading {qrels}", None):
        if source == "parquet":
            parsed = _parquet_qrels(qrels)
        else:
            with source:  # type: ignore[union-attr]
                parsed = _cexpress.parse_qrels(source.read())  # type: ignore[union-attr]
    if parsed is None:
        why.append(f"{qrels}: a line or column it does not read beyond doubt")
        return None
    judged, n_judged_queries = parsed
    if trace:
        _cexpress.trace_queries(judged, trace)
    done: list[_Run] = []
    for path in runs:
        source = _source(path, RUN_FILES)
        if source is None:
            why.append(f"{path}: not an uncompressed regular TREC text or Parquet file")
            return None
        with _step(progress, f"evaluating {os.path.basename(path)}", os.path.getsize(path)) as update:
            if source == "parquet":
                run = _evaluate_parquet_run(judged, path, specs, batch_rows, update)
            else:
                with source:  # type: ignore[union-attr]
                    run = _evaluate_run(judged, source, specs, block, update)  # type: ignore[arg-type]
        if run is None or not run.query_ids or run.tag is None:
            why.append(
                f"{path}: a line or column it does not read beyond doubt, queries not grouped, or no query in common"
            )
            return None  # (no query in common: the general path says so)
        done.append(run)
    if trace and traced is not None:
        traced.update(_cexpress.traced(judged, len(specs)))
    from ranklens.data.names import unique_names

    given = list(names) if names is not None else [None] * len(runs)
    candidates: list[tuple[str, str | None]] = [
        (g, None) if g is not None else (r.tag or "", path) for g, r, path in zip(given, done, runs)
    ]
    labels = unique_names(candidates)
    results = []
    width = len(specs)
    every = _cexpress.qrels_query_ids(judged) if zero else ()
    placeholder: list[float] | None = None
    for label, r in zip(labels, done):
        absent = n_judged_queries - len(r.query_ids)
        if zero and absent:  # (missing="zero": the qrels queries the run lacks, against trec_eval's placeholder)
            answered = set(r.query_ids)
            if placeholder is None:
                placeholder = _cexpress.placeholder_values(judged, specs)
            for i, q in enumerate(every):
                if q not in answered:
                    r.query_ids.append(q)
                    r.values += placeholder[i * width : (i + 1) * width]
        order = sorted(range(len(r.query_ids)), key=r.query_ids.__getitem__)  # (bytewise: the ids are ASCII)
        query_ids = tuple(r.query_ids[i] for i in order)
        rows = array("d")
        for i in order:
            rows.extend(r.values[i * width : (i + 1) * width])
        means = tuple(math.fsum(r.values[j::width]) / len(query_ids) for j in range(width))
        notes = alignment_notes(r.run_only_queries, r.run_only_rows, absent, zero)
        results.append(ExpressResults(label, tuple(measures), query_ids, rows, means, tuple(notes), grouped=r.grouped))
    return results


class _NoStep:
    """A progress step that shows nothing."""

    def __enter__(self) -> Callable[[int, int], None]:
        return lambda done, rows: None

    def __exit__(self, *exc: object) -> None:
        return None


def _step(progress: ProgressHook | None, label: str, total: int | None) -> ContextManager[Callable[[int, int], None]]:
    return progress(label, total) if progress is not None else _NoStep()
