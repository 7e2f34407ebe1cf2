"""The backends a measure suite runs on (issue 26, parity by construction): ``backend`` is the fixture's
parameter, one of :data:`UNDER_TEST`:

* ``reference``: the numpy engine, forced (``RANKLENS_BACKEND=reference``);
* ``compiled``: the compiled pass on files: the case's dicts written as TREC files, evaluated through
  :func:`ranklens.evaluation.evaluate_files` with the compiled backend forced;
* ``compiled:dict|pandas|polars|arrow``: the compiled pass on data in memory: the case's dicts given to
  :func:`ranklens.evaluate` as they are, or as pandas/polars frames or Arrow tables, the compiled backend forced.

:func:`evaluate_on` evaluates as ``ranklens.evaluate`` does, through the one dispatcher with that backend
forced. A case the compiled backend declares it does not take (a parameter or policy it does not implement,
an input it does not read, such as a negative label) must decline with the dispatcher's reason; the case is
then the reference's, so its assertions still run."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import ranklens
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError, warn_notes
from ranklens.express import available

DECLINED = "RANKLENS_BACKEND=compiled: the compiled backend declines: "

#: the in-memory kinds the compiled pass reads (ranklens.memory.KINDS)
MEMORY_KINDS = ("dict", "pandas", "polars", "arrow")
#: every backend a measure suite runs on
UNDER_TEST = ("reference", "compiled", *(f"compiled:{k}" for k in MEMORY_KINDS))

#: how many evaluations the compiled backend declined, by reason, and how many it ran
declined: dict[str, int] = {}
ran = [0]


@pytest.fixture(params=UNDER_TEST)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each backend under test, in turn (compiled: skipped where it is not built)."""
    if request.param.startswith("compiled") and not available():
        pytest.skip("ranklens._cexpress is not built")
    for name in ("RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    yield str(request.param)


@contextlib.contextmanager
def forced(name: str) -> Iterator[None]:
    """``RANKLENS_BACKEND=name`` for the block."""
    old = os.environ.get("RANKLENS_BACKEND")
    os.environ["RANKLENS_BACKEND"] = name
    try:
        yield
    finally:
        if old is None:
            del os.environ["RANKLENS_BACKEND"]
        else:
            os.environ["RANKLENS_BACKEND"] = old


def as_kind(kind: str, data: Any, value: str) -> Any:
    """The ``{qid: {doc: value}}`` dict ``data`` as the in-memory ``kind`` (``value``: the value column's name,
    ``relevance`` or ``score``); anything that is not such a dict as it is."""
    if kind == "dict" or not (isinstance(data, Mapping) and data and all(isinstance(v, Mapping) for v in data.values())):
        return data
    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    columns = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], value: [r[2] for r in rows]}
    import pandas as pd

    frame = pd.DataFrame(columns)
    if kind == "pandas":
        return frame
    if kind == "polars":
        import polars as pl

        return pl.from_pandas(frame)
    import pyarrow as pa

    return pa.Table.from_pandas(frame, preserve_index=False)


def _write(folder: Path, qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]) -> tuple[str, str]:
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in qrels.items() for d, lab in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s!r} run\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    (folder / "run.txt").write_text("".join(lines))
    return str(folder / "qrels.txt"), str(folder / "run.txt")


def evaluate_on(backend: str, qrels: Any, run: Any, measures: Sequence[str], **options: Any) -> Any:
    """``ranklens.evaluate(qrels, run, measures, **options)`` on ``backend``: the reference evaluates the dicts;
    the compiled backend is forced on them written as TREC files (``compiled``) or given in memory as the kind
    named (``compiled:KIND``), and either evaluates or declines with the dispatcher's reason (then the reference
    evaluates)."""
    if backend == "reference":
        with forced("reference"):
            return ranklens.evaluate(qrels, run, measures, **options)
    try:
        with forced("compiled"):
            if backend == "compiled":
                res = _on_files(qrels, run, measures, options)
                if res is None:  # (an option of the Evaluator that is no policy field: not a file evaluation)
                    return ranklens.evaluate(qrels, run, measures, **options)
            else:
                kind = backend.split(":", 1)[1]
                try:
                    q, r = as_kind(kind, qrels, "relevance"), as_kind(kind, run, "score")
                except Exception:  # noqa: BLE001 (a dict the frame libraries do not take: the reference's case)
                    q, r = qrels, run
                res = ranklens.evaluate(q, r, measures, **options)
        ran[0] += 1
        return res
    except InputError as e:
        if not str(e).startswith(DECLINED):
            raise
        reason = str(e)[len(DECLINED):]
        declined[reason] = declined.get(reason, 0) + 1
    with forced("reference"):
        return ranklens.evaluate(qrels, run, measures, **options)


def _on_files(qrels: Any, run: Any, measures: Sequence[str], options: Mapping[str, Any]) -> Any:
    try:
        policy = EvalPolicy(**options)
    except TypeError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        (res,) = evaluate_files_of(Path(tmp), qrels, run, measures, policy)
    warn_notes(res.notes)  # (as ranklens.evaluate issues them)
    return res


def evaluate_files_of(folder: Path, qrels: Any, run: Any, measures: Sequence[str], policy: EvalPolicy) -> list[Any]:
    from ranklens.evaluation import evaluate_files

    q, r = _write(folder, qrels, run)
    return evaluate_files(q, [r], list(measures), policy).results
