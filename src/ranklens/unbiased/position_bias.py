"""Position bias θ_k from click logs, under the position-based model P(click) = θ_k · ρ(query, item).

Two estimators:

* ``method="em"`` — expectation–maximisation of the position-based model (the EM of Chuklin, Markov &
  de Rijke, *Click Models for Web Search*, 2015, §4; the regression-EM of Wang et al., WSDM 2018, with one
  free relevance per (query, item) in place of a regression). It needs the same item to appear at
  different positions for the same query (natural variation of the logging policy); θ is identified only
  up to a scale, so we report θ_k/θ_1.
* ``method="intervention"`` — from rows marked as coming from a randomised experiment (a shuffle of the
  top positions, or random pair swaps *including the un-swapped control pages*): the experiment makes the
  items at every position exchangeable, so CTR_k ∝ θ_k and θ_k/θ_1 = CTR_k/CTR_1 (Joachims, Swaminathan &
  Schnabel, WSDM 2017).

Confidence intervals: a Poisson bootstrap over queries (every query's rows get one Poisson(1) weight per
replicate), percentile intervals; EM replicates are warm-started from the full fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.errors import InputError, MissingDependencyError
from ranklens.labels.events import read_events

__all__ = ["PositionBias", "estimate_position_bias"]


@dataclass(frozen=True, eq=False)
class PositionBias:
    """Relative examination probabilities θ_k/θ_1 per position, with confidence intervals.

    Attributes:
        positions: 1, 2, …, K.
        theta: θ_k/θ_1 (``theta[0] == 1``).
        ci_low, ci_high: the percentile bootstrap interval of each θ_k/θ_1 at ``confidence``.
        impressions: rows per position used by the estimate.
        clicks: clicks per position.
        method: ``"em"`` or ``"intervention"``.
    """

    positions: np.ndarray
    theta: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    method: str
    confidence: float = 0.95
    iterations: int = 0
    converged: bool = True
    notes: tuple[str, ...] = field(default=())

    def propensity(self, positions: Any) -> np.ndarray:
        """θ at 1-based ``positions``; a position beyond the estimated ones is an error.

        >>> pb = PositionBias.from_values([1.0, 0.5, 0.25])
        >>> pb.propensity([1, 3]).tolist()
        [1.0, 0.25]
        """
        pos = np.asarray(positions, dtype=np.int64)
        if pos.size and (pos.min() < 1 or pos.max() > self.positions.shape[0]):
            raise InputError(
                f"position {int(pos.max() if pos.max() > self.positions.shape[0] else pos.min())} is outside the "
                f"estimated positions 1..{self.positions.shape[0]}"
            )
        return np.asarray(self.theta[pos - 1], dtype=np.float64)

    @classmethod
    def from_values(cls, theta: Any) -> PositionBias:
        """A PositionBias from known θ_1..θ_K (no intervals), e.g. from an earlier study."""
        t = np.asarray(theta, dtype=np.float64)
        if t.ndim != 1 or t.size == 0 or np.any(t <= 0) or not np.all(np.isfinite(t)):
            raise InputError(f"theta must be a non-empty list of positive numbers; got {theta!r}")
        zeros = np.zeros(t.size, dtype=np.int64)
        return cls(np.arange(1, t.size + 1), t, t.copy(), t.copy(), zeros, zeros, "given")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: method, confidence and one record per position."""
        return {
            "method": self.method,
            "confidence": self.confidence,
            "iterations": self.iterations,
            "converged": self.converged,
            "positions": [
                {
                    "position": int(p),
                    "theta": float(t),
                    "ci_low": float(lo),
                    "ci_high": float(hi),
                    "impressions": int(n),
                    "clicks": int(c),
                }
                for p, t, lo, hi, n, c in zip(self.positions, self.theta, self.ci_low, self.ci_high, self.impressions, self.clicks)
            ],
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """A plain-text table: position, θ, interval, impressions, clicks, and 1/log2(k+1) for reference."""
        pct = f"{self.confidence:.0%}"
        lines = [f"position bias ({self.method}); θ_k/θ_1 with {pct} intervals", f"{'k':>3}  {'theta':>7}  {pct + ' CI':>17}  {'1/log2(k+1)':>11}  {'impr.':>7}  {'clicks':>6}"]
        for p, t, lo, hi, n, c in zip(self.positions, self.theta, self.ci_low, self.ci_high, self.impressions, self.clicks):
            lines.append(f"{p:>3}  {t:7.4f}  [{lo:6.4f}, {hi:6.4f}]  {1 / math.log2(p + 1):11.4f}  {n:7d}  {c:6d}")
        return "\n".join(lines + [f"note: {n}" for n in self.notes]) + "\n"

    def plot(self, path: str | None = None) -> Any:
        """A plotly figure of θ_k/θ_1 with its intervals and the DCG discount 1/log2(k+1) for reference;
        written to ``path`` (.html, or an image format if kaleido is installed) when given.

        Raises:
            MissingDependencyError: plotly is not installed (``pip install 'ranklens[plot]'``).
        """
        try:
            import plotly.graph_objects as go
        except ImportError:
            raise MissingDependencyError("plotly", "plot", "the position-bias plot") from None
        fig = go.Figure()
        fig.add_trace(
            go.Scatter(
                x=self.positions.tolist(),
                y=self.theta.tolist(),
                mode="lines+markers",
                name=f"θ_k/θ_1 ({self.method})",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (self.ci_high - self.theta).tolist(),
                    "arrayminus": (self.theta - self.ci_low).tolist(),
                },
            )
        )
        fig.add_trace(
            go.Scatter(
                x=self.positions.tolist(),
                y=(1.0 / np.log2(self.positions + 1.0)).tolist(),
                mode="lines",
                name="1/log2(k+1) (DCG discount)",
                line={"dash": "dash"},
            )
        )
        fig.update_layout(
            title=f"Position bias, {self.confidence:.0%} bootstrap intervals",
            xaxis_title="position k",
            yaxis_title="examination θ_k / θ_1",
        )
        if path:
            if str(path).endswith(".html"):
                fig.write_html(path, include_plotlyjs=True)  # self-contained: opens offline
            else:
                fig.write_image(path)
        return fig


def estimate_position_bias(
    log: Any,
    *,
    method: str = "em",
    max_position: int | None = None,
    query: str = "query",
    item: str = "item",
    position: str = "position",
    click: str = "click",
    intervention: str = "intervention",
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    max_iter: int = 5000,
    tol: float = 1e-7,
) -> PositionBias:
    """Estimate θ_k/θ_1 from a click log (one row per impression of an item at a position).

    Args:
        log: an event log (path, DataFrame, dict of columns; see :func:`ranklens.labels.read_events`).
        method: ``"em"`` (position-based model EM over all rows) or ``"intervention"`` (rows whose
            ``intervention`` column is 1).
        max_position: only positions 1..max_position (default: the largest in the log).
        n_boot: bootstrap replicates for the intervals (0: no intervals).

    The click log of a uniform shuffle reveals θ directly (exchangeable items):

    >>> rng = np.random.default_rng(1)
    >>> n = 40000
    >>> pos = rng.integers(1, 4, n)
    >>> rho = rng.choice([0.2, 0.6], n)
    >>> clicks = rng.random(n) < (1 / np.log2(pos + 1)) * rho
    >>> log = {"query": ["q"] * n, "item": ["i"] * n, "position": pos, "click": clicks.astype(int),
    ...        "intervention": np.ones(n, int)}
    >>> pb = estimate_position_bias(log, method="intervention", n_boot=50)
    >>> [round(float(t), 1) for t in pb.theta]
    [1.0, 0.6, 0.5]
    """
    if method not in ("em", "intervention"):
        raise InputError(f"method must be 'em' or 'intervention'; got {method!r}")
    if not 0 < confidence < 1:
        raise InputError(f"confidence must be in (0, 1); got {confidence}")
    ev = read_events(log)
    needed = {query: "the query of each row", item: "the item shown", position: "its 1-based position", click: "1 if clicked"}
    if method == "intervention":
        needed[intervention] = "1 for rows of a randomised swap/shuffle experiment"
    ev.require(needed)
    pos = ev.positions(position)
    clk = ev.indicator(click)
    queries = ev.ids(query)
    keep = np.ones(pos.shape[0], dtype=bool)
    notes: list[str] = []
    if method == "intervention":
        keep &= ev.indicator(intervention) == 1
        if not keep.any():
            raise InputError(f"{ev.source}: no row has {intervention} = 1; use method='em' or mark the experiment's rows")
    if max_position is not None:
        if max_position < 1:
            raise InputError(f"max_position must be ≥ 1; got {max_position}")
        keep &= pos <= max_position
    pos, clk, queries = pos[keep], clk[keep], queries[keep]
    items = ev.ids(item)[keep]
    K = int(pos.max()) if pos.size else 0
    if K == 0:
        raise InputError(f"{ev.source}: no rows to estimate from")
    qcode = np.unique(queries, return_inverse=True)[1].astype(np.int64)
    impressions = np.bincount(pos - 1, minlength=K).astype(np.int64)
    clicks = np.bincount(pos - 1, weights=clk, minlength=K).astype(np.int64)
    if clicks[0] == 0:
        raise InputError(f"{ev.source}: no click at position 1; θ_k/θ_1 is undefined")
    rng = np.random.default_rng(seed)
    nq = int(qcode.max()) + 1
    if method == "intervention":
        theta = _ctr_ratio(np.ones(nq), qcode, pos, clk, K)
        boot = np.empty((0, K))
        if n_boot:
            boot = np.vstack([_ctr_ratio(w, qcode, pos, clk, K) for w in rng.poisson(1.0, (n_boot, nq)).astype(np.float64)])
        iterations, converged = 0, True
    else:
        pair = np.unique(np.char.add(np.char.add(queries.astype(str), "\x1f"), items.astype(str)), return_inverse=True)[1]
        cells = _cells(pair.astype(np.int64), pos - 1, clk, qcode)
        theta_abs, rho, iterations, converged = _em(cells, np.ones(nq), K, None, None, max_iter, tol)
        if not converged:
            notes.append(f"EM stopped after {max_iter} iterations without converging to {tol:g}")
        shown = np.bincount(cells.pos, minlength=K) > 0
        theta = theta_abs / theta_abs[0]
        boot_rows = []
        for w in rng.poisson(1.0, (n_boot, nq)).astype(np.float64):
            t, _, _, _ = _em(cells, w, K, theta_abs, rho, 500, 1e-5)
            boot_rows.append(t / t[0] if t[0] > 0 else np.full(K, np.nan))
        boot = np.vstack(boot_rows) if boot_rows else np.empty((0, K))
        if not shown.all():
            notes.append("some positions have no rows; their θ is not identified")
        if _single_position_pairs(cells) == 1.0:
            notes.append("every (query, item) appears at a single position: θ is not identified by EM; use interventions")
    if boot.shape[0]:
        low_q, high_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2
        with np.errstate(invalid="ignore"):
            ci_low = np.nanquantile(boot, low_q, axis=0)
            ci_high = np.nanquantile(boot, high_q, axis=0)
    else:
        ci_low, ci_high = theta.copy(), theta.copy()
    return PositionBias(
        np.arange(1, K + 1), theta, ci_low, ci_high, impressions, clicks, method, confidence, iterations, converged, tuple(notes)
    )


def _ctr_ratio(qweight: np.ndarray, qcode: np.ndarray, pos: np.ndarray, clk: np.ndarray, K: int) -> np.ndarray:
    w = qweight[qcode]
    n = np.bincount(pos - 1, weights=w, minlength=K)
    c = np.bincount(pos - 1, weights=w * clk, minlength=K)
    with np.errstate(divide="ignore", invalid="ignore"):
        ctr = c / n
        return np.asarray(ctr / ctr[0], dtype=np.float64)


@dataclass(frozen=True)
class _Cells:
    pair: np.ndarray  # (query, item) code of each cell
    pos: np.ndarray  # 0-based position
    query: np.ndarray  # query code
    clicks: np.ndarray
    shows: np.ndarray


def _cells(pair: np.ndarray, pos0: np.ndarray, clk: np.ndarray, qcode: np.ndarray) -> _Cells:
    """Aggregate rows into (pair, position) cells with click and impression counts."""
    K = int(pos0.max()) + 1
    key = pair * K + pos0
    uniq, inv = np.unique(key, return_inverse=True)
    shows = np.bincount(inv).astype(np.float64)
    clicks = np.bincount(inv, weights=clk)
    first = np.zeros(uniq.shape[0], dtype=np.int64)
    first[inv[::-1]] = np.arange(inv.shape[0])[::-1]
    return _Cells(uniq // K, uniq % K, qcode[first], clicks, shows)


def _single_position_pairs(cells: _Cells) -> float:
    per_pair = np.bincount(cells.pair)
    present = per_pair > 0
    return float(np.mean(per_pair[present] == 1)) if present.any() else 1.0


def _em(
    cells: _Cells, qweight: np.ndarray, K: int, theta0: np.ndarray | None, rho0: np.ndarray | None, max_iter: int, tol: float
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """EM for P(C=1) = θ_k ρ_p over aggregated cells (weighted by each cell's query weight)."""
    w = qweight[cells.query]
    c, n = cells.clicks * w, cells.shows * w
    npair = int(cells.pair.max()) + 1
    theta = np.full(K, 0.5) if theta0 is None else theta0.copy()
    rho = np.full(npair, 0.5) if rho0 is None else rho0.copy()
    shows_k = np.bincount(cells.pos, weights=n, minlength=K)
    shows_p = np.bincount(cells.pair, weights=n, minlength=npair)
    for it in range(1, max_iter + 1):
        t, r = theta[cells.pos], rho[cells.pair]
        denom = np.maximum(1.0 - t * r, 1e-12)
        noclick = n - c
        post_e = c + noclick * t * (1.0 - r) / denom
        post_r = c + noclick * (1.0 - t) * r / denom
        with np.errstate(divide="ignore", invalid="ignore"):
            new_theta = np.where(shows_k > 0, np.bincount(cells.pos, weights=post_e, minlength=K) / shows_k, theta)
            new_rho = np.where(shows_p > 0, np.bincount(cells.pair, weights=post_r, minlength=npair) / shows_p, rho)
        new_theta = np.clip(new_theta, 1e-9, 1.0)
        new_rho = np.clip(new_rho, 0.0, 1.0)
        # converged when θ/θ_1 (what is reported) stops moving
        delta = float(np.max(np.abs(new_theta / new_theta[0] - theta / theta[0])))
        theta, rho = new_theta, new_rho
        if delta < tol:
            return theta, rho, it, True
    return theta, rho, max_iter, False
