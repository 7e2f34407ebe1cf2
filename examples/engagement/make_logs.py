"""Generate the synthetic engagement logs used in docs/engagement_labels.md and docs/unbiased_dcg.md.

Deterministic (numpy seed 2024): run ``python examples/engagement/make_logs.py`` to rebuild

* ``ecommerce_events.csv`` — an e-commerce search log ("bluetooth earphones" style queries): one row per
  shown product with impression (page id), query, item, position, click, add_to_cart, purchase,
  dwell_seconds, intervention (1 on the pages, one in four, shown in a uniformly shuffled order);
* ``ecommerce_target.run`` — a new ranking of the same products (TREC run) to evaluate offline with IPS;
* ``video_events.jsonl`` — a video feed log: one row per shown video with impression, query (the feed),
  item, position, click (played), watch_completion (fraction watched, 0 if not played), like.

Clicks follow the position-based model: P(click) = θ_k · ρ(query, item) with θ_k = k^−0.8 (not the DCG
discount, so the estimated bias is worth looking at). The logging policy ranks by a noisy score, so items
move between positions across pages.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
SEED = 2024
SLOTS = 10

SHOP_QUERIES = {
    "bluetooth earphones": 14,
    "wireless earbuds": 14,
    "noise cancelling headphones": 12,
    "running earphones": 12,
    "earbuds for iphone": 12,
    "kids headphones": 12,
}
FEEDS = {"home": 16, "sports": 14, "cooking": 14, "music": 14}


def theta(k: np.ndarray) -> np.ndarray:
    return np.power(k.astype(float), -0.8)


def shop(rng: np.random.Generator, pages_per_query: int = 50) -> tuple[pl.DataFrame, str]:
    rows = []
    target_lines = []
    page = 0
    for qi, (query, n_items) in enumerate(SHOP_QUERIES.items()):
        items = [f"{query.split()[0][:4]}-{qi}{j:02d}" for j in range(n_items)]
        rho = np.clip(rng.beta(1.2, 2.5, n_items), 0.02, 0.95)  # attractiveness (click propensity when seen)
        buy = np.clip(rho * rng.uniform(0.1, 0.6, n_items), 0, 1)  # P(purchase | cart)
        base = np.log(rho) + rng.normal(0, 0.8, n_items)  # the logging ranker's (imperfect) score
        for p in range(pages_per_query):
            page += 1
            shuffled = p % 4 == 0  # every fourth page: a randomised intervention (uniform shuffle)
            if shuffled:
                order = rng.permutation(n_items)[:SLOTS]
            else:
                order = np.argsort(-(base + rng.gumbel(0, 0.7, n_items)))[:SLOTS]
            k = np.arange(1, SLOTS + 1)
            click = rng.random(SLOTS) < theta(k) * rho[order]
            cart = click & (rng.random(SLOTS) < 0.5 * rho[order] + 0.05)
            purchase = cart & (rng.random(SLOTS) < buy[order] + 0.1)
            dwell = np.where(click, np.round(rng.gamma(2.0, 10 + 60 * rho[order]), 1), 0.0)
            for slot in range(SLOTS):
                rows.append((f"p{page:05d}", query, items[order[slot]], slot + 1, int(click[slot]), int(cart[slot]),
                             int(purchase[slot]), float(dwell[slot]), int(shuffled)))
        # the target: a new ranker that scores closer to the true attractiveness
        new_score = np.log(rho) + rng.normal(0, 0.3, n_items)
        for rank, j in enumerate(np.argsort(-new_score)[:SLOTS], start=1):
            target_lines.append(f"{query.replace(' ', '_')} Q0 {items[j]} {rank} {new_score[j]:.4f} new_ranker")
    frame = pl.DataFrame(
        rows,
        schema=["impression", "query", "item", "position", "click", "add_to_cart", "purchase", "dwell_seconds", "intervention"],
        orient="row",
    )
    frame = frame.with_columns(pl.col("query").str.replace_all(" ", "_"))
    return frame, "\n".join(target_lines) + "\n"


def video(rng: np.random.Generator, pages_per_feed: int = 40) -> pl.DataFrame:
    rows = []
    page = 0
    for fi, (feed, n_items) in enumerate(FEEDS.items()):
        items = [f"v{fi}{j:03d}" for j in range(n_items)]
        rho = np.clip(rng.beta(1.5, 2.0, n_items), 0.05, 0.95)
        quality = np.clip(rng.beta(2.0, 2.0, n_items) * 0.6 + 0.4 * rho, 0, 1)  # how much of it people watch
        base = np.log(rho) + rng.normal(0, 1.0, n_items)
        for _ in range(pages_per_feed):
            page += 1
            order = np.argsort(-(base + rng.gumbel(0, 0.8, n_items)))[:8]
            k = np.arange(1, 9)
            play = rng.random(8) < theta(k) * rho[order]
            watched = np.where(play, np.clip(rng.normal(quality[order], 0.15), 0.0, 1.0), 0.0)
            like = play & (rng.random(8) < 0.3 * watched)
            for slot in range(8):
                rows.append({"impression": f"f{page:05d}", "query": feed, "item": items[order[slot]], "position": slot + 1,
                             "click": int(play[slot]), "watch_completion": round(float(watched[slot]), 3), "like": int(like[slot])})
    return pl.DataFrame(rows)


def main() -> None:
    rng = np.random.default_rng(SEED)
    events, target = shop(rng)
    events.write_csv(HERE / "ecommerce_events.csv")
    (HERE / "ecommerce_target.run").write_text(target)
    video(rng).write_ndjson(HERE / "video_events.jsonl")


if __name__ == "__main__":
    main()
