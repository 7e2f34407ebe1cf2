"""``compare --fuse SPEC``: fused systems added to a comparison.

A SPEC is ``METHOD[:KEY=VALUE]...`` with the keys ``norm`` (a normalisation, default min-max), ``weights``
(``W1,W2,…``, one per run), ``qrels`` (training judgements of a trained method: never the evaluation qrels
by default, so a trained method does not learn on what it is judged on), ``name`` (the system's name, default
``fused-METHOD``) and the method's parameters (``k=60``, ``n_segments=10`` …).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklens.errors import InputError

__all__ = ["FuseSpec", "fuse_systems", "parse_spec"]


@dataclass(frozen=True)
class FuseSpec:
    """One ``--fuse`` value, parsed."""

    method: str
    norm: str | None = "min-max"
    weights: tuple[float, ...] | None = None
    params: dict[str, float] = field(default_factory=dict)
    qrels: str | None = None
    name: str | None = None


def _number(spec: str, key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"--fuse {spec!r}: {key} expects a number, got {text!r}") from None


def parse_spec(spec: str) -> FuseSpec:
    """Parse a ``--fuse`` value (a one-line :class:`InputError` naming the part that is wrong).

    >>> parse_spec("wsum:norm=zmuv:weights=0.3,0.7:name=hybrid")
    FuseSpec(method='wsum', norm='zmuv', weights=(0.3, 0.7), params={}, qrels=None, name='hybrid')
    >>> parse_spec("rrf:k=20").params
    {'k': 20.0}
    """
    from ranklens.fusion.combine import check_method
    from ranklens.fusion.normalise import check_norm

    method, *parts = spec.split(":")
    check_method(method.strip())
    norm: str | None = "min-max"
    weights: tuple[float, ...] | None = None
    params: dict[str, float] = {}
    qrels = name = None
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key or not value:
            raise InputError(f"--fuse {spec!r}: expected METHOD[:KEY=VALUE]... (e.g. wsum:norm=zmuv:weights=0.3,0.7), got {part!r}")
        if key == "norm":
            norm = check_norm(value)
        elif key == "weights":
            weights = tuple(_number(spec, key, w) for w in value.split(","))
        elif key == "qrels":
            qrels = value
        elif key == "name":
            name = value
        else:
            params[key] = _number(spec, key, value)
    return FuseSpec(method.strip(), norm, weights, params, qrels, name)


def fuse_systems(
    specs: Sequence[str], named: Sequence[tuple[str | None, str]], directory: Path, run_format: str | None = None
) -> list[tuple[str | None, str]]:
    """Fuse the run files of ``named`` once per spec; write each fused run (TREC) in ``directory`` and
    return its ``(name, path)``, ready to be compared with the runs."""
    from ranklens.data.io import read_run, write_run
    from ranklens.fusion.combine import fuse, resolve

    parsed = [parse_spec(s) for s in specs]
    if len(named) < 2:
        raise InputError("--fuse needs at least two RUN files to fuse")
    for spec in parsed:  # (every spec checked before any run is read)
        resolve(spec.method, len(named), spec.weights, spec.params)
    runs = [read_run(path, format=run_format, name=given) for given, path in named]
    out: list[tuple[str | None, str]] = []
    for i, spec in enumerate(parsed):
        name = spec.name or f"fused-{spec.method}"
        fused = fuse(runs, spec.method, norm=spec.norm, weights=spec.weights, params=spec.params, qrels=spec.qrels, name=name)
        path = directory / f"fused{i}.trec"
        write_run(fused.run, path, tag=name)
        out.append((name, str(path)))
    return out
