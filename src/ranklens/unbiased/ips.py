"""Unbiased (IPS) DCG of a target ranking from the click log of another (logging) policy — spec §5.

Assumptions (Jeunen, Potapov & Ustimenko, KDD 2024, as reconstructed in spec §5): rewards add over
positions; clicks follow the position-based model P(click | x, a, k) = θ_k·ρ(x, a); the examination θ
is the DCG discount (default 1/log2(k+1)) or an estimate (:func:`estimate_position_bias`); the logging
policy gave every item the target ranks a positive exposure. Then the target's expected reward per page is

    V(π) = E_x Σ_a e_π(x, a)·ρ(x, a),   e_π(x, a) = Σ_k π(a@k | x)·θ_k   (a DCG with gain ρ, unnormalised)

and the estimator over n logged pages (impressions) i with rows (x, a, k, c)

    IPS = (1/n) Σ_i Σ_{rows of i} c · w(x, a),   w = e_π(x, a) / e_0(x, a)

is unbiased. ``e_0`` is the logging exposure: by default the empirical one, Σ over the rows of (x, a) of
θ_k divided by the number of pages of x (exact when the log follows the logging policy's frequencies),
or a column of known values. Variance controls: clipping ``min(w, M)`` (biased downwards) and
self-normalisation (divide by the examination-weighted mean weight Σθ_k·w / Σθ_k over rows, whose
expectation is 1 when the target fills as many slots as the logging policy). The interval is a
percentile bootstrap over pages, with the propensities held fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from ranklens.data.run import Run
from ranklens.engine.ips import ips_by_group
from ranklens.errors import FormatError, InputError
from ranklens.labels.events import read_events
from ranklens.unbiased.position_bias import PositionBias

__all__ = ["IPSEstimate", "examination_function", "ips_dcg"]

Examination = Union[None, PositionBias, Callable[[np.ndarray], np.ndarray], "list[float]", np.ndarray]


@dataclass(frozen=True)
class IPSEstimate:
    """The IPS estimate of a target ranking's DCG (expected reward per page) and its diagnostics.

    Attributes:
        value: the estimate.
        ci_low, ci_high: percentile bootstrap interval at ``confidence`` (NaN without bootstrap).
        naive: clicks per page in the log (the logging policy's value: biased for the target).
        impressions: logged pages used; queries: distinct queries among them.
        clip: the clipping threshold M, or None; clipped_rows: rows whose weight was clipped.
        self_normalized: whether the value was self-normalised; mean_weight: Σθw/Σθ over rows.
        max_weight: the largest weight; ess: effective sample size of the row weights (Σw)²/Σw².
    """

    value: float
    ci_low: float
    ci_high: float
    confidence: float
    naive: float
    impressions: int
    queries: int
    clip: float | None
    clipped_rows: int
    self_normalized: bool
    mean_weight: float
    max_weight: float
    ess: float
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        d["notes"] = list(self.notes)
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in d.items()}

    def __str__(self) -> str:
        ci = "" if self.ci_low != self.ci_low else f" [{self.ci_low:.6f}, {self.ci_high:.6f}] ({self.confidence:.0%} CI)"
        opts = []
        if self.clip is not None:
            opts.append(f"clipped at {self.clip:g}: {self.clipped_rows} rows")
        if self.self_normalized:
            opts.append("self-normalised")
        lines = [
            f"IPS DCG = {self.value:.6f}{ci}",
            f"  naive clicks per page (logging policy) = {self.naive:.6f}",
            f"  pages {self.impressions}, queries {self.queries}, max weight {self.max_weight:.4f}, "
            f"mean weight {self.mean_weight:.4f}, ESS {self.ess:.1f}" + (f"; {', '.join(opts)}" if opts else ""),
        ]
        return "\n".join(lines + [f"  note: {n}" for n in self.notes]) + "\n"


def examination_function(examination: Examination) -> Callable[[np.ndarray], np.ndarray]:
    """θ(k) for 1-based positions: the DCG discount by default, a :class:`PositionBias`, a list θ_1..θ_K
    or a function.

    >>> examination_function(None)(np.array([1, 3])).round(6).tolist()
    [1.0, 0.5]
    """
    if examination is None:
        return lambda k: 1.0 / np.log2(np.asarray(k, dtype=np.float64) + 1.0)
    if isinstance(examination, PositionBias):
        return examination.propensity
    if callable(examination):
        fn = examination
        return lambda k: np.asarray(fn(np.asarray(k)), dtype=np.float64)
    return PositionBias.from_values(examination).propensity


def ips_dcg(
    log: Any,
    target: Any,
    *,
    examination: Examination = None,
    k: int | None = None,
    clip: float | None = None,
    self_normalize: bool = False,
    logging_exposure: str | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    query: str = "query",
    item: str = "item",
    position: str = "position",
    click: str = "click",
    impression: str = "impression",
) -> IPSEstimate:
    """Estimate the DCG (expected clicks per page) the ``target`` ranking would get, from ``log``.

    Args:
        log: the click log of the logging policy: one row per shown item with ``query``, ``item``,
            ``position`` (1-based), ``click`` (0/1) and ``impression`` (the page id) columns.
        target: the target ranking per query: a :class:`~ranklens.Run`, a run file or
            ``{query: {item: score}}``, ranked as the engine ranks (score desc, ties by id desc).
        examination: θ_k — None for 1/log2(k+1), a :class:`PositionBias`, a list or a function.
        k: the target shows its top ``k`` (default: the deepest position in the log, i.e. as many
            slots as the logging policy showed; with a PositionBias, at most its number of positions).
        clip: clip weights at this value (M), or None.
        self_normalize: divide by the examination-weighted mean weight.
        logging_exposure: a column holding each row's known logging exposure e_0(x, a); default: the
            empirical exposure from the log.
        n_boot: bootstrap replicates over pages for the interval (0: none).

    Spec §5: items u (ρ = 0.8) and v (ρ = 0.2), logging uniform over (u,v) and (v,u), target (u,v):

    >>> log = {"impression": [1, 1, 2, 2, 3, 3, 4, 4], "query": ["x"] * 8,
    ...        "item": ["u", "v", "v", "u", "u", "v", "v", "u"], "position": [1, 2] * 4,
    ...        "click": [1, 0, 0, 1, 1, 1, 0, 0]}
    >>> target = {"x": {"u": 2.0, "v": 1.0}}
    >>> round(ips_dcg(log, target, n_boot=0).value, 6), round(ips_dcg(log, target, clip=1.1, n_boot=0).value, 6)
    (1.113147, 1.018426)
    """
    if clip is not None and not clip > 0:
        raise InputError(f"clip must be > 0; got {clip}")
    if k is not None and k < 1:
        raise InputError(f"k must be ≥ 1; got {k}")
    theta = examination_function(examination)
    ev = read_events(log)
    needed = {query: "the query of each row", item: "the item shown", position: "its 1-based position",
              click: "1 if clicked", impression: "the id of the page (one logged ranking)"}
    if logging_exposure:
        needed[logging_exposure] = "the known logging exposure of each row"
    ev.require(needed)
    pos = ev.positions(position)
    clk = ev.indicator(click)
    queries = ev.ids(query)
    items = ev.ids(item)
    pages = ev.ids(impression)
    notes: list[str] = []
    if k is None:
        k = int(pos.max()) if pos.size else 1
        if isinstance(examination, PositionBias):
            k = min(k, int(examination.positions.shape[0]))

    # pages: (query, impression) pairs; the reward is per page
    page_key = np.char.add(np.char.add(queries.astype(str), "\x1f"), pages.astype(str))
    page_code = np.unique(page_key, return_inverse=True)[1].astype(np.int64)
    n_pages = int(page_code.max()) + 1 if page_code.size else 0
    if n_pages == 0:
        raise InputError(f"{ev.source}: the log has no rows")
    qvocab, qcode = np.unique(queries, return_inverse=True)
    theta_rows = theta(pos)

    # logging exposure e_0(x, a) of every row
    pair_key = np.char.add(np.char.add(queries.astype(str), "\x1f"), items.astype(str))
    pvocab, pair_code = np.unique(pair_key, return_inverse=True)
    if logging_exposure:
        e0 = ev.numbers(logging_exposure)
        bad = np.flatnonzero(e0 <= 0)
        if bad.size:
            raise FormatError(ev.where(int(bad[0])), f"logging exposure must be > 0, got {e0[int(bad[0])]!r}")
    else:
        pages_of_query = np.bincount(qcode[_first_rows(page_code)], minlength=qvocab.shape[0]).astype(np.float64)
        pair_theta = np.bincount(pair_code, weights=theta_rows)
        pair_query = np.zeros(pvocab.shape[0], dtype=np.int64)
        pair_query[pair_code] = qcode
        e0 = (pair_theta / pages_of_query[pair_query])[pair_code]

    # target exposure e_π(x, a) of every row: θ at the item's rank in the target, 0 if not ranked (or > k)
    e_target, unranked_queries = _target_exposure(target, queries, items, theta, k)
    if unranked_queries:
        notes.append(f"{unranked_queries} logged quer{'y' if unranked_queries == 1 else 'ies'} not ranked by the target: reward 0")
    w = e_target / e0
    clipped_rows = 0
    if clip is not None:
        clipped_rows = int(np.count_nonzero(w > clip))
        w = np.minimum(w, clip)

    est = ips_by_group(page_code, clk, w, theta_rows, self_normalize=self_normalize)  # the one estimator
    norm_num, norm_den = est.num, est.den
    clicks_page = np.bincount(page_code, weights=clk, minlength=n_pages)

    value = float(est.value[0])
    ci_low = ci_high = float("nan")
    if n_boot:
        rng = np.random.default_rng(seed)
        reps = []
        for start in range(0, n_boot, 64):  # chunks of replicates bound the memory
            b = min(64, n_boot - start)
            idx = rng.integers(0, n_pages, size=(b, n_pages))
            flat = (np.arange(b)[:, None] * n_pages + idx).ravel()
            counts = np.bincount(flat, minlength=b * n_pages).reshape(b, n_pages).astype(np.float64)
            reps.append(est.resampled(counts))
        boot = np.concatenate(reps)
        alpha = 1.0 - confidence
        ci_low, ci_high = (float(x) for x in np.nanquantile(boot, [alpha / 2, 1 - alpha / 2]))
    mean_weight = float(norm_num.sum() / norm_den.sum()) if norm_den.sum() > 0 else float("nan")
    ess = float(w.sum() ** 2 / np.sum(w**2)) if np.any(w > 0) else 0.0
    return IPSEstimate(
        value=value,
        ci_low=ci_low,
        ci_high=ci_high,
        confidence=confidence,
        naive=float(clicks_page.mean()),
        impressions=n_pages,
        queries=int(qvocab.shape[0]),
        clip=clip,
        clipped_rows=clipped_rows,
        self_normalized=self_normalize,
        mean_weight=mean_weight,
        max_weight=float(w.max()) if w.size else 0.0,
        ess=ess,
        notes=tuple(notes),
    )


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Index of the first row of every code (codes are 0..n−1)."""
    _, first = np.unique(codes, return_index=True)
    return first


def _target_exposure(
    target: Any, queries: np.ndarray, items: np.ndarray, theta: Callable[[np.ndarray], np.ndarray], k: int | None
) -> tuple[np.ndarray, int]:
    import polars as pl

    run = _as_run(target)
    ranked = _ranked(run)
    if k is not None:
        ranked = ranked.filter(pl.col("rank") <= k)
    exposure = ranked.with_columns(
        pl.Series("e", theta(ranked["rank"].to_numpy()) if ranked.height else np.zeros(0))
    ).select("query", "item", "e")
    rows = pl.DataFrame({"query": queries.astype(str), "item": items.astype(str), "row": np.arange(queries.shape[0])})
    joined = rows.join(exposure, on=["query", "item"], how="left").sort("row")
    e = joined["e"].fill_null(0.0).to_numpy().astype(np.float64)
    target_queries = set(ranked["query"].unique().to_list())
    unranked = len(set(np.unique(queries).tolist()) - target_queries)
    return e, unranked


def _ranked(run: Run) -> Any:
    """The target's ranks per query, in the engine's order (score desc, ties by doc id desc)."""
    import polars as pl

    frame = pl.DataFrame(
        {
            "query": run.query_ids.take(np.asarray(run.query)).to_pylist() if len(run) else [],
            "item": run.docs.to_pylist(),
            "score": run.score,
        },
        schema={"query": pl.Utf8, "item": pl.Utf8, "score": pl.Float64},
    )
    frame = frame.sort(["query", "score", "item"], descending=[False, True, True])
    return frame.with_columns(pl.int_range(1, pl.len() + 1).over("query").alias("rank"))


def _as_run(source: Any) -> Run:
    if isinstance(source, Run):
        return source
    if isinstance(source, dict):
        return Run.from_dict(source, name="target")
    from ranklens.data.io import read_run

    return read_run(source)
