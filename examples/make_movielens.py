"""Generate the small MovieLens-shaped example of the README tour (seeded: the same files every run).

    python examples/make_movielens.py            # writes examples/movielens/{train,test,recs,items}.csv

200 users and 400 movies in 12 genres; ratings follow a long-tailed popularity and each user's taste for
two genres. Each user's ratings are split by time: the earlier ones are ``train.csv`` (user, item, rating,
timestamp), the last five ``test.csv`` (user, item, rating: the qrels; rating ≥ 4 is relevant at rel=4,
every test item at the default rel=1). ``recs.csv`` (user, item, score) is a popularity-and-genre
recommender's top 20 per user over the whole catalog, so it recommends items the user has already seen:
``--exclude-seen`` drops them. ``items.csv`` (item, genre) is the catalog.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

USERS, ITEMS, GENRES, TOP = 200, 400, 12, 20
GENRE_NAMES = ("Action", "Adventure", "Animation", "Comedy", "Crime", "Documentary", "Drama", "Fantasy",
               "Horror", "Romance", "SciFi", "Thriller")


def generate(out: Path, seed: int = 16) -> None:
    rng = np.random.default_rng(seed)
    genre = rng.integers(0, GENRES, ITEMS)
    popularity = 1.0 / np.arange(1, ITEMS + 1) ** 0.9
    popularity = popularity[rng.permutation(ITEMS)]
    out.mkdir(parents=True, exist_ok=True)
    train, test, recs = [], [], []
    for u in range(USERS):
        liked = rng.choice(GENRES, 2, replace=False)
        weight = popularity * np.where(np.isin(genre, liked), 4.0, 1.0)
        n = int(rng.integers(12, 30))
        items = rng.choice(ITEMS, n, replace=False, p=weight / weight.sum())
        ratings = np.clip(np.round(rng.normal(3.4, 1.0, n) + np.isin(genre[items], liked)), 1, 5).astype(int)
        times = np.sort(rng.integers(978_300_000, 1_046_000_000, n))
        user = f"u{u + 1}"
        for i, (item, rating, t) in enumerate(zip(items, ratings, times)):
            row = (user, f"m{item + 1}", int(rating))
            (test if i >= n - 5 else train).append(row + (() if i >= n - 5 else (int(t),)))
        score = np.log(weight) + rng.normal(0.0, 0.6, ITEMS)
        for item in np.argsort(-score, kind="stable")[:TOP]:
            recs.append((user, f"m{item + 1}", round(float(score[item]), 4)))
    _write(out / "train.csv", ("user", "item", "rating", "timestamp"), train)
    _write(out / "test.csv", ("user", "item", "rating"), test)
    _write(out / "recs.csv", ("user", "item", "score"), recs)
    _write(out / "items.csv", ("item", "genre"), [(f"m{i + 1}", GENRE_NAMES[g]) for i, g in enumerate(genre)])


def _write(path: Path, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


if __name__ == "__main__":
    generate(Path(__file__).resolve().parent / "movielens")
