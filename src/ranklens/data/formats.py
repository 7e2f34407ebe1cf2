"""The format registry: for each kind of file ranklens reads or writes, its format names, the file extensions
that imply one, and the one rule that picks a format (architecture issue 11).

The rule, written once in :meth:`FileKind.detect`:

1. a format given by name (``format=``, ``--run-format`` …) is used as it is, after :meth:`FileKind.check`;
2. else the file extension says it (``.gz`` after it means gzip, for the kinds that read gzip);
3. else, for the kinds that have one, a look at the content decides (:attr:`FileKind.sniff`);
4. else the kind's :attr:`FileKind.default`, if it has one;
5. else the one "unknown format" error (:func:`unknown_format`), listing the extensions and format names.

What each kind holds (``.txt`` means one thing per kind, listed here on purpose):

==========  =========================================  ==============================================================
kind        formats                                    extensions → format
==========  =========================================  ==============================================================
qrels, run  trec msmarco msmarco-rank msmarco-score    ``.qrels .run .txt .trec`` → trec; ``.json``; ``.jsonl``
            json jsonl csv tsv parquet                 ``.ndjson`` → jsonl; ``.csv``; ``.tsv``; ``.parquet`` (+ ``.gz``).
                                                       No name (standard input): trec. No content fallback: the
                                                       readers sniff *layouts* within a format (docs/inputs.md).
segments    text json                                  ``.json`` → json; any other name by content: ``{``/``[``
                                                       first → json, else text (``query_id segment`` lines or a
                                                       CSV/TSV with a header), so ``.txt``/``.tsv``/``.csv`` → text.
results     json csv tsv parquet trec                  ``.json .csv .tsv .parquet``; ``.txt`` → tsv (trec_eval -q
                                                       style); ``.trec`` → trec (trec_eval's text output).
report      table markdown latex json html             ``.md .markdown`` → markdown; ``.tex`` → latex; ``.json``;
                                                       ``.html .htm`` → html; ``.txt`` → table.
costs       csv tsv                                    any name, by content: a tab in the first line → tsv, else csv.
intents     trec                                       any name: ``qid intent docid rel`` lines (gzip by its magic).
events      csv tsv jsonl parquet                      ``.csv .tsv .jsonl``; ``.ndjson`` → jsonl; ``.parquet`` (+ ``.gz``).
==========  =========================================  ==============================================================

This module imports nothing but the standard library and :mod:`ranklens.errors`: the CLI reads it to build
its ``--help`` (``DATA_FORMATS``) without loading numpy or pyarrow.
"""

from __future__ import annotations

import os
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

from ranklens.errors import FormatError, Hint, did_you_mean

__all__ = [
    "COST_FILES",
    "EVENT_FILES",
    "INTENT_FILES",
    "KINDS",
    "QRELS_FILES",
    "REPORT_FILES",
    "RESULTS_FILES",
    "RUN_FILES",
    "SEGMENT_FILES",
    "FileKind",
    "file_kind",
    "unknown_format",
]

GZIP = ".gz"


class FileKind:
    """One kind of file: its format names and how a file's name or content picks one of them.

    Attributes:
        name: the kind (``qrels``, ``run``, ``segments``, ``results``, ``report``, ``costs``, ``intents``,
            ``events``).
        formats: the format names, in the order messages list them.
        extensions: ``{".ext": format}`` (lower case, with the dot), in the order messages list them.
        gzip: a ``.gz`` after the extension means gzip-compressed (the format is the extension before it).
        sniff: ``text → format or None``: the content decides when the extension does not.
        default: the format when neither the extension nor the content decides (``None``: an error).
        unnamed: the format of an input without a name (standard input, ``-``).
        option: how the user chooses a format, for messages (``format=``).

    Immutable; equal when all but :attr:`sniff` are equal. (A plain class rather than a dataclass:
    ``dataclasses`` imports ``inspect``, which costs more than evaluating a small collection.)
    """

    __slots__ = ("name", "formats", "extensions", "gzip", "sniff", "default", "unnamed", "option")
    name: str
    formats: tuple[str, ...]
    extensions: Mapping[str, str]
    gzip: bool
    sniff: Callable[[str], str | None] | None
    default: str | None
    unnamed: str | None
    option: str

    def __init__(
        self,
        name: str,
        formats: tuple[str, ...],
        extensions: Mapping[str, str],
        gzip: bool = False,
        sniff: Callable[[str], str | None] | None = None,
        default: str | None = None,
        unnamed: str | None = None,
        option: str = "format=",
    ) -> None:
        values = (name, formats, MappingProxyType(dict(extensions)), gzip, sniff, default, unnamed, option)
        for slot, value in zip(self.__slots__, values):
            object.__setattr__(self, slot, value)
        for fmt in (*self.extensions.values(), self.default, self.unnamed):
            if fmt is not None and fmt not in self.formats:
                raise ValueError(f"{self.name}: {fmt!r} is not one of its formats {self.formats}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FileKind is immutable: cannot set {name!r}")

    def _key(self) -> tuple[object, ...]:
        return (self.name, self.formats, dict(self.extensions), self.gzip, self.default, self.unnamed, self.option)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileKind) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FileKind({self.name!r}, formats={self.formats!r}, extensions={dict(self.extensions)!r})"

    def check(self, format: str, display: str) -> str:
        """``format`` normalised (stripped, lower case), or the unknown-format error naming ``display``.

        >>> RUN_FILES.check(" TREC ", "run.x")
        'trec'
        """
        chosen = format.strip().lower()
        if chosen not in self.formats:
            raise unknown_format(self, display, format=format)
        return chosen

    def extension_of(self, path: str | os.PathLike[str]) -> tuple[str, bool]:
        """``(extension, gzipped)`` of a path: the lower-case extension that names the format (the one
        before ``.gz`` for the kinds that read gzip) and whether the name ends in ``.gz``.

        >>> RUN_FILES.extension_of("runs/bm25.TREC.gz"), SEGMENT_FILES.extension_of("seg.json.gz")
        (('.trec', True), ('.gz', False))
        """
        suffixes = _suffixes(os.fspath(path))
        compressed = self.gzip and bool(suffixes) and suffixes[-1] == GZIP
        core = suffixes[:-1] if compressed else suffixes
        return (core[-1] if core else ""), compressed

    def detect(
        self, path: str | os.PathLike[str], format: str | None = None, *, text: str | None = None
    ) -> tuple[str, bool]:
        """``(format, gzipped)`` of the file at ``path``: the rule of the module docstring. ``text`` is
        (the start of) the file's content, for the kinds that look at it.

        >>> RUN_FILES.detect("qrels.txt"), RESULTS_FILES.detect("out.txt"), REPORT_FILES.detect("r.txt")
        (('trec', False), ('tsv', False), ('table', False))
        >>> SEGMENT_FILES.detect("segments.txt", text='{"q1": "nav"}')
        ('json', False)
        """
        display = os.fspath(path)
        extension, compressed = self.extension_of(display)
        if format is not None:
            return self.check(format, display), compressed
        if extension in self.extensions:
            return self.extensions[extension], compressed
        if self.sniff is not None and text is not None:
            sniffed = self.sniff(text)
            if sniffed is not None:
                return sniffed, compressed
        if self.default is not None:
            return self.default, compressed
        raise unknown_format(self, display, extension=extension)

    def strip_name(self, name: str) -> str:
        """``name`` without its format extension and ``.gz`` (``bm25.run.gz`` → ``bm25``); ``""`` stays ``""``.

        >>> RUN_FILES.strip_name("bm25.run.gz"), RUN_FILES.strip_name("v1.2.trec")
        ('bm25', 'v1.2')
        """
        for _ in range(2):
            stem, dot, extension = name.rpartition(".")
            if dot and stem and ("." + extension.lower() in self.extensions or (self.gzip and extension.lower() == "gz")):
                name = stem
        return name


def unknown_format(kind: FileKind, display: str, *, format: str | None = None, extension: str | None = None) -> FormatError:
    """The one "unknown format" error: an unknown ``format`` name, or a file whose ``extension`` (``""``: none)
    names no format of ``kind``; it lists the choices and suggests the closest one.

    >>> str(unknown_format(EVENT_FILES, "log.xls", extension=".xls"))
    "log.xls: unknown file extension '.xls'; expected one of .csv, .tsv, .jsonl, .ndjson, .parquet (optionally .gz), or choose the format with format= (one of: csv, tsv, jsonl, parquet)"
    """
    if format is not None:
        chosen = format.strip().lower()
        return FormatError(
            display,
            f"unknown format {format!r}; expected one of {', '.join(kind.formats)}{did_you_mean(chosen, kind.formats)}",
        )
    extension = extension or ""
    found = f"unknown file extension '{extension}'" if extension else "no file extension"
    listed = ", ".join(kind.extensions) if kind.extensions else "(any name)"
    return FormatError(
        display,
        (f"{found}; expected one of {listed}{' (optionally .gz)' if kind.gzip else ''}, or choose the format with ",
         Hint("choose", choices=kind.formats), did_you_mean(extension, kind.extensions)),
    )


def _suffixes(display: str) -> list[str]:
    """The lower-case suffixes of the file name (``.trec``, ``.gz``), as :attr:`pathlib.PurePath.suffixes`
    reads them (without importing pathlib, which costs more than reading a small run).

    >>> _suffixes("runs/bm25.TREC.gz"), _suffixes("a/.hidden"), _suffixes("x."), _suffixes("d/r.run/")
    (['.trec', '.gz'], [], [], ['.run'])
    """
    separators = os.sep + (os.altsep or "")
    parts = [p for p in "".join("/" if c in separators else c for c in display).split("/") if p not in ("", ".")]
    name = parts[-1] if parts else ""
    if name.endswith("."):
        return []
    return ["." + suffix.lower() for suffix in name.lstrip(".").split(".")[1:]]


# ------------------------------------------------------------------------------------------------- kinds

_DATA_FORMATS = ("trec", "msmarco", "msmarco-rank", "msmarco-score", "json", "jsonl", "csv", "tsv", "parquet")
_DATA_EXTENSIONS = {
    ".qrels": "trec",
    ".run": "trec",
    ".txt": "trec",
    ".trec": "trec",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
}

#: Qrels files. ``msmarco-rank``/``msmarco-score`` are accepted names so the reader can say they are run formats.
QRELS_FILES = FileKind("qrels", _DATA_FORMATS, _DATA_EXTENSIONS, gzip=True, unnamed="trec")
#: Run files (the same table as qrels: one extension means one format for both).
RUN_FILES = FileKind("run", _DATA_FORMATS, _DATA_EXTENSIONS, gzip=True, unnamed="trec")


def _sniff_segments(text: str) -> str | None:
    return "json" if text.lstrip()[:1] in ("{", "[") else None


#: Query → segment files (one reader: :func:`ranklens.data.segments.read_segments`).
SEGMENT_FILES = FileKind("segments", ("text", "json"), {".json": "json"}, sniff=_sniff_segments, default="text")

#: Saved evaluation results (:func:`ranklens.results.write_results`).
RESULTS_FILES = FileKind(
    "results",
    ("json", "csv", "tsv", "parquet", "trec"),
    {".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".txt": "tsv", ".trec": "trec"},
)

#: Comparison reports (:func:`ranklens.report.write_report`).
REPORT_FILES = FileKind(
    "report",
    ("table", "markdown", "latex", "json", "html"),
    {".md": "markdown", ".markdown": "markdown", ".tex": "latex", ".json": "json", ".html": "html", ".htm": "html",
     ".txt": "table"},
)


def _sniff_costs(text: str) -> str | None:
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), None)
    return None if first is None else "tsv" if "\t" in first else "csv"


#: Per-system cost tables (``compare --costs``): the delimiter is read from the first line.
COST_FILES = FileKind("costs", ("csv", "tsv"), {}, sniff=_sniff_costs, default="csv")

#: Intent-level qrels (``qid intent docid rel``, :func:`ranklens.diversity.read_intent_qrels`).
INTENT_FILES = FileKind("intents", ("trec",), {}, default="trec")

#: Engagement event logs (:func:`ranklens.labels.read_events`).
EVENT_FILES = FileKind(
    "events",
    ("csv", "tsv", "jsonl", "parquet"),
    {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"},
    gzip=True,
)

#: Every kind by name.
KINDS: Mapping[str, FileKind] = MappingProxyType(
    {k.name: k for k in (QRELS_FILES, RUN_FILES, SEGMENT_FILES, RESULTS_FILES, REPORT_FILES, COST_FILES, INTENT_FILES,
                         EVENT_FILES)}
)


def file_kind(name: str) -> FileKind:
    """The :class:`FileKind` called ``name`` (``"qrels"``, ``"run"``, ``"segments"`` …).

    >>> file_kind("results").extensions[".txt"]
    'tsv'
    """
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown kind of file {name!r}; expected one of {', '.join(KINDS)}{did_you_mean(name, KINDS)}") from None
