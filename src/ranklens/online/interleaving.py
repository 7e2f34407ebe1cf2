"""Team-draft interleaving (Radlinski, Kurup & Joachims, CIKM 2008): each impression shows one list merged
from rankers A and B, each shown item credited to the ranker ("team") that contributed it; a click is a vote
for its team. Per impression the ranker with more clicked items wins; the preference over impressions is
:math:`\\Delta_{AB} = \\frac{wins_A + ties/2}{N} - \\frac12` (Chapelle, Joachims, Radlinski & Yue, TOIS 2012,
"Large-scale validation and analysis of interleaved search evaluation")."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ranklens.errors import FormatError, InputError
from ranklens.stats._common import Seed, rng, scipy_stats

__all__ = ["Credit", "InterleaveResult", "credit", "interleave", "read_log", "team_draft"]

_TEAMS = {"a": "A", "b": "B"}


@dataclass(frozen=True)
class Credit:
    """One impression: clicks credited to A and to B, the winner (``A``, ``B`` or ``tie``) and its segment."""

    impression: str
    clicks_a: int
    clicks_b: int
    segment: str | None = None

    @property
    def winner(self) -> str:
        return "A" if self.clicks_a > self.clicks_b else "B" if self.clicks_b > self.clicks_a else "tie"


def team_draft(a: Sequence[str], b: Sequence[str], *, k: int | None = None, seed: Seed = 0) -> list[tuple[str, str]]:
    """Interleave rankings ``a`` and ``b`` by team draft: in each round a coin decides which ranker picks
    first, then each picks its highest-ranked item not yet shown. Returns ``(item, team)`` pairs, ``k`` long
    at most.

    >>> team_draft(["d1", "d2", "d3"], ["d2", "d4", "d1"], seed=1)
    [('d2', 'B'), ('d1', 'A'), ('d4', 'B'), ('d3', 'A')]
    """
    gen = rng(seed)
    limit = k if k is not None else len(set(a) | set(b))
    out: list[tuple[str, str]] = []
    shown: set[str] = set()
    ia = ib = 0
    while len(out) < limit:
        order = ("A", "B") if gen.random() < 0.5 else ("B", "A")
        progressed = False
        for team in order:
            ranking, i = (a, ia) if team == "A" else (b, ib)
            while i < len(ranking) and ranking[i] in shown:
                i += 1
            if i < len(ranking) and len(out) < limit:
                out.append((ranking[i], team))
                shown.add(ranking[i])
                progressed = True
                i += 1
            if team == "A":
                ia = i
            else:
                ib = i
        if not progressed:
            break
    return out


def read_log(source: Any) -> list[dict[str, Any]]:
    """The rows of an interleaving log: CSV/TSV with a header or JSON Lines, one row per shown item with
    ``impression``, ``team`` (``A``/``B``), ``click`` (0/1) and optionally ``segment`` (other columns such as
    ``position`` and ``item`` are ignored). A list of dicts passes through.

    Raises:
        FormatError: a missing column, a team other than A/B or a click other than 0/1 (names file and line).
    """
    where = str(source) if isinstance(source, (str, os.PathLike)) else "log"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FormatError(where, "no such file")
        text = path.read_text(encoding="utf-8")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines:
            raise FormatError(where, "empty file")
        if lines[0].lstrip().startswith("{"):
            rows = []
            for n, ln in enumerate(lines, 1):
                try:
                    rows.append((n, json.loads(ln)))
                except json.JSONDecodeError as exc:
                    raise FormatError(where, f"not a JSON object ({exc.msg})", n) from None
        else:
            delimiter = "\t" if "\t" in lines[0] else ","
            reader = csv.DictReader(lines, delimiter=delimiter)
            header = [h.strip() for h in reader.fieldnames or []]
            lacking = [c for c in ("impression", "team", "click") if c not in header]
            if lacking:
                raise FormatError(
                    where, f"expected a header naming the columns impression, team, click[, segment]; got {lines[0][:80]!r}", 1
                )
            rows = [(n, {k.strip(): v for k, v in r.items() if k is not None}) for n, r in enumerate(reader, 2)]
    else:
        rows = [(n, dict(r)) for n, r in enumerate(source, 1)]
    out = []
    for n, row in rows:
        if not isinstance(row, Mapping):
            raise FormatError(where, f"expected an object with impression, team, click; got {row!r}", n)
        for col in ("impression", "team", "click"):
            if row.get(col) in (None, ""):
                raise FormatError(where, f"expected a value in column {col!r} (impression, team, click[, segment]); got none", n)
        team = _TEAMS.get(str(row["team"]).strip().lower())
        if team is None:
            raise FormatError(where, f"expected team A or B, got {row['team']!r}", n)
        click = str(row["click"]).strip().lower()
        if click not in ("0", "1", "true", "false", "0.0", "1.0"):
            raise FormatError(where, f"expected click 0 or 1, got {row['click']!r}", n)
        seg = row.get("segment")
        out.append({
            "impression": str(row["impression"]), "team": team, "click": click in ("1", "true", "1.0"),
            "segment": None if seg in (None, "") else str(seg),
        })
    return out


def credit(rows: Iterable[Mapping[str, Any]]) -> list[Credit]:
    """Per impression, the clicks on A's items and on B's items (in the order impressions first appear).

    >>> rows = [{"impression": "i1", "team": "A", "click": True}, {"impression": "i1", "team": "B", "click": False},
    ...         {"impression": "i2", "team": "B", "click": True}]
    >>> [(c.impression, c.clicks_a, c.clicks_b, c.winner) for c in credit(rows)]
    [('i1', 1, 0, 'A'), ('i2', 0, 1, 'B')]
    """
    counts: dict[str, list[int]] = {}
    segment: dict[str, str | None] = {}
    for r in rows:
        imp = str(r["impression"])
        c = counts.setdefault(imp, [0, 0])
        segment.setdefault(imp, r.get("segment"))
        if r["click"]:
            c[0 if r["team"] == "A" else 1] += 1
    return [Credit(imp, a, b, segment[imp]) for imp, (a, b) in counts.items()]


@dataclass(frozen=True)
class InterleaveResult:
    """The preference over ``impressions``: wins of A and B and ties; ``delta`` = Δ_AB (positive: A
    preferred); ``p`` the two-sided sign (binomial) test of A's wins among the decided impressions;
    ``ci`` a bootstrap percentile interval of Δ_AB over impressions."""

    impressions: int
    wins_a: int
    wins_b: int
    ties: int
    delta: float
    p: float
    ci: tuple[float, float]
    segment: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "segment": self.segment, "impressions": self.impressions, "wins_a": self.wins_a, "wins_b": self.wins_b,
            "ties": self.ties, "delta_ab": self.delta, "p": self.p, "ci": list(self.ci),
        }


def _summary(credits: Sequence[Credit], segment: str | None, level: float, samples: int, seed: Seed) -> InterleaveResult:
    n = len(credits)
    wa = sum(c.winner == "A" for c in credits)
    wb = sum(c.winner == "B" for c in credits)
    ties = n - wa - wb
    delta = (wa + 0.5 * ties) / n - 0.5
    p = 1.0 if wa + wb == 0 else float(scipy_stats().binomtest(wa, wa + wb, 0.5).pvalue)
    score = np.array([1.0 if c.winner == "A" else 0.0 if c.winner == "B" else 0.5 for c in credits])
    gen = rng(seed)
    means = np.concatenate([
        score[gen.integers(0, n, size=(min(1000, samples - s), n))].mean(axis=1) for s in range(0, samples, 1000)
    ]) - 0.5
    low, high = np.quantile(means, [0.5 - level / 2, 0.5 + level / 2])
    return InterleaveResult(n, wa, wb, ties, delta, min(1.0, p), (float(low), float(high)), segment)


def interleave(
    log: Any, *, alpha: float = 0.05, samples: int = 10_000, seed: Seed = 0
) -> list[InterleaveResult]:
    """Analyse a team-draft interleaving log: overall, then per segment (when the log has segments).

    Impressions without any click are ties (they count in N, as in Chapelle et al. 2012).

    >>> log = [{"impression": "i1", "team": "A", "click": 1}, {"impression": "i2", "team": "A", "click": 1},
    ...        {"impression": "i3", "team": "B", "click": 1}, {"impression": "i4", "team": "B", "click": 0}]
    >>> r = interleave(log, samples=200)[0]
    >>> r.wins_a, r.wins_b, r.ties, r.delta, r.p
    (2, 1, 1, 0.125, 1.0)
    """
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be between 0 and 1; got {alpha!r}")
    credits = credit(read_log(log))
    if not credits:
        raise InputError("the interleaving log holds no impression")
    gen = rng(seed)
    out = [_summary(credits, None, 1.0 - alpha, samples, gen)]
    for seg in sorted({c.segment for c in credits if c.segment is not None}):
        out.append(_summary([c for c in credits if c.segment == seg], seg, 1.0 - alpha, samples, gen))
    return out

