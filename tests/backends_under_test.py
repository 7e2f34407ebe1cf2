"""The backends a measure suite runs on (issue 26, parity by construction): ``backend`` is the fixture's
parameter (``reference`` | ``compiled``), :func:`evaluate_on` evaluates as ``ranklens.evaluate`` does, through
the one dispatcher with that backend forced. A case the compiled backend declares it does not take (a
parameter or policy it does not implement, an input it does not read, such as a negative label) must decline
with the dispatcher's reason; the case is then the reference's, so its assertions still run."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import ranklens
from ranklens.backends import BACKENDS
from ranklens.engine.policy import EvalPolicy
from ranklens.errors import InputError, warn_notes
from ranklens.express import available

DECLINED = "RANKLENS_BACKEND=compiled: the compiled backend declines: "

#: how many evaluations the compiled backend declined, by reason, and how many it ran
declined: dict[str, int] = {}
ran = [0]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each backend a user can force, in turn (compiled: skipped where it is not built)."""
    if request.param == "compiled" and not available():
        pytest.skip("ranklens._cexpress is not built")
    for name in ("RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "RANKLENS_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    yield str(request.param)


def _write(folder: Path, qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]) -> tuple[str, str]:
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in qrels.items() for d, lab in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s!r} run\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    (folder / "run.txt").write_text("".join(lines))
    return str(folder / "qrels.txt"), str(folder / "run.txt")


def evaluate_on(backend: str, qrels: Any, run: Any, measures: Sequence[str], **options: Any) -> Any:
    """``ranklens.evaluate(qrels, run, measures, **options)`` on ``backend``: the reference evaluates the dicts;
    the compiled backend is forced on them written as TREC files, and either evaluates or declines with the
    dispatcher's reason (then the reference evaluates)."""
    if backend == "reference":
        return ranklens.evaluate(qrels, run, measures, **options)
    try:
        policy = EvalPolicy(**options)
    except TypeError:  # (an option of the Evaluator that is no policy field: not a file evaluation)
        return ranklens.evaluate(qrels, run, measures, **options)
    old = os.environ.get("RANKLENS_BACKEND")
    os.environ["RANKLENS_BACKEND"] = "compiled"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            (res,) = evaluate_files_of(Path(tmp), qrels, run, measures, policy)
        warn_notes(res.notes)  # (as ranklens.evaluate issues them)
        ran[0] += 1
        return res
    except InputError as e:
        if not str(e).startswith(DECLINED):
            raise
        reason = str(e)[len(DECLINED):]
        declined[reason] = declined.get(reason, 0) + 1
    finally:
        if old is None:
            del os.environ["RANKLENS_BACKEND"]
        else:
            os.environ["RANKLENS_BACKEND"] = old
    return ranklens.evaluate(qrels, run, measures, **options)


def evaluate_files_of(folder: Path, qrels: Any, run: Any, measures: Sequence[str], policy: EvalPolicy) -> list[Any]:
    from ranklens.evaluation import evaluate_files

    q, r = _write(folder, qrels, run)
    return evaluate_files(q, [r], list(measures), policy).results
