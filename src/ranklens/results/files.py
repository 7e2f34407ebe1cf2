"""What evaluating run files gives, whichever backend evaluated them (the reference, the compiled pass, Spark):
:class:`FileEvaluation`, the runs' names (:func:`label_runs`) and their notes said with their file
(:func:`pass_notes`). Here, below every backend, so none of them imports another to say its results."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ranklens._record import record

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: the faces that import this module need no numpy for it)
    from typing import NamedTuple

    from ranklens.results.core import Results
else:
    NamedTuple = object  # (no typing at run time: ranklens._record.record makes the named tuple)

__all__ = ["FileEvaluation", "label_runs", "pass_notes"]


@record
class FileEvaluation(NamedTuple):
    """What :func:`evaluate_files` returns: one Results per run (in order, named), the notes to show
    (each prefixed with its file) and the run files read whole because their queries were not grouped."""

    results: list[Results]
    notes: list[str]
    read_whole: list[str]


def pass_notes(path: str, res: Results, notes: list[str], on_note: Callable[[str], None] | None) -> None:
    """Append the notes of ``res`` (read from ``path``) to ``notes``, each prefixed with the path, and pass each
    to ``on_note`` at once (so a later failure still shows the notes before it)."""
    for note in (f"{path}: {n}" for n in res.notes):
        notes.append(note)
        if on_note:
            on_note(note)


def label_runs(named: Sequence[tuple[str | None, str]], results: Sequence[Results]) -> list[Results]:
    """Each run's name: the one given (``NAME=PATH``), else the run's own made unique (tag, then file name)."""
    pairs = [(given, None) if given is not None else (r.run, path) for (given, path), r in zip(named, results)]
    from ranklens.data.names import unique_names

    labels = unique_names(pairs)
    return [r if r.run == label else r.replace(run=label) for r, label in zip(results, labels)]
