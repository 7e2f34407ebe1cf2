"""An offline judge: cosine similarity of static embeddings, mapped to grades by calibrated thresholds.

The default model is WordLlama's ``l2_supercat`` 256-dimensional token embeddings, whose weights and tokenizer ship
inside the ``wordllama`` wheel on PyPI (``pip install 'ranklens[judges-embed]'``); nothing is downloaded at run
time: the files are read from the installed package and a missing file is an error, never a download. Any other
model plugs in through the :class:`Embedder` protocol.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ranklens.errors import FormatError, InputError, MissingDependencyError
from ranklens.judges.types import Judgment

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    """Texts → unit-length vectors (one row per text). ``name`` identifies the model (it is part of the cache key)."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An array of shape ``(len(texts), dim)`` with unit-length rows."""
        ...


class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` (256 dimensions), loaded from the files inside the installed ``wordllama`` package.

    >>> WordLlamaEmbedder.name
    'wordllama-l2_supercat-256'

    ``WordLlamaEmbedder().embed(["relevance"])`` is an array of shape ``(1, 256)``.
    """

    name = "wordllama-l2_supercat-256"
    WEIGHTS = ("weights", "l2_supercat_256.safetensors")
    TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")

    def __init__(self) -> None:
        spec = importlib.util.find_spec("wordllama")
        if spec is None or spec.origin is None:
            raise MissingDependencyError("wordllama", "judges-embed", "the offline embedding judge")
        root = Path(spec.origin).parent
        weights, tokenizer = root.joinpath(*self.WEIGHTS), root.joinpath(*self.TOKENIZER)
        for path in (weights, tokenizer):
            if not path.is_file():
                raise InputError(f"{path}: the model file is not in the installed wordllama package")
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        with safe_open(str(weights), framework="np") as f:
            matrix = f.get_tensor("embedding.weight")
        self._model = WordLlamaInference(matrix, Tokenizer.from_file(str(tokenizer)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors of the texts."""
        import numpy as np

        return np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float64)


def similarities(embedder: Embedder, query: str, documents: Sequence[str]) -> list[float]:
    """Cosine similarity of each document to the query."""
    vectors = embedder.embed([query, *documents])
    return [float(v) for v in vectors[1:] @ vectors[0]]


@dataclass(frozen=True)
class Thresholds:
    """Similarity cut-offs: a document gets grade ``low + k`` where ``k`` is how many cuts its similarity reaches.

    >>> t = Thresholds("m", 0, 3, [0.2, 0.4, 0.6])
    >>> [t.grade(s) for s in (0.1, 0.2, 0.5, 0.9)]
    [0, 1, 2, 3]
    """

    model: str
    low: int
    high: int
    cuts: list[float]
    agreement: float | None = None
    pairs: int | None = None

    def grade(self, similarity: float) -> int:
        """The grade of a similarity."""
        return self.low + sum(similarity >= c for c in self.cuts)

    def save(self, path: str | Path) -> None:
        """Write as JSON."""
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Thresholds:
        """Read the JSON written by :meth:`save` (``ranklens judge calibrate``), checking every field."""
        from ranklens.judges._files import read_table

        display = str(path)
        if not display.endswith(".json"):
            raise FormatError(display, "a thresholds file is JSON (.json), as written by ranklens judge calibrate")
        data = read_table(path)
        try:
            t = cls(**data)
        except TypeError as exc:
            raise FormatError(display, f"not a thresholds file: {exc}") from None
        ok = (isinstance(t.model, str) and isinstance(t.low, int) and isinstance(t.high, int) and t.low < t.high
              and isinstance(t.cuts, list) and len(t.cuts) == t.high - t.low
              and all(isinstance(c, (int, float)) and math.isfinite(c) for c in t.cuts)
              and t.cuts == sorted(t.cuts))
        if not ok:
            raise FormatError(display, "expected model, low < high and high - low ascending finite cuts")
        return t


class EmbeddingJudge:
    """A :class:`~ranklens.judges.Judge` grading by embedding similarity and calibrated thresholds.

    The verdict's ``raw`` is the similarity; ``reason`` says which cut it reached.
    """

    def __init__(self, thresholds: Thresholds, embedder: Embedder | None = None) -> None:
        self.embedder = embedder or WordLlamaEmbedder()
        if thresholds.model != self.embedder.name:
            raise InputError(f"the thresholds were calibrated for {thresholds.model!r}, not {self.embedder.name!r}")
        self.thresholds = thresholds
        cuts = ",".join(f"{c:.6g}" for c in thresholds.cuts)
        self.identity = (f"embedding:{self.embedder.name}", self.embedder.name, f"cos-{thresholds.low}-{thresholds.high}:{cuts}")

    def judge(self, query: str, documents: Sequence[str]) -> list[Judgment]:
        """One judgment per document."""
        out = []
        for sim in similarities(self.embedder, query, documents):
            g = self.thresholds.grade(sim)
            out.append(Judgment(g, f"cosine similarity {sim:.3f} reaches the cut of grade {g}", f"{sim:.6f}"))
        return out
