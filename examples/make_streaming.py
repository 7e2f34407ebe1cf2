"""Generate the streaming-service A/B example (deterministic): two recommendation algorithms, users split
between them, each user's labels from that user's own engagement in that arm.

    python examples/make_streaming.py   # rewrites examples/streaming/

The model: 600 users and 150 titles with latent tastes; a user's affinity for a title is the dot product
of their tastes plus the title's popularity. ``control`` ranks mostly by popularity, ``treatment`` by a
better estimate of the affinity. Each user sees the top 6 titles of their arm; they look at position k
with probability 1/log2(k + 1) and watch a title with a probability growing with their affinity and their
own activity; the share of the title watched gives the grade (1: sampled, 2: half, 3: finished). Users who
watched nothing have no label (the --missing rule decides what they score). The pre-period is the month
before, every user on the control algorithm; about 10% of users are new and have none. The interleaving
log shows each user one team-draft merge of both algorithms instead (same users, same model).

Files: control.qrels/.run, treatment.qrels/.run (TREC), assignment.tsv (user arm), segments.tsv (user
device), control_pre.json / treatment_pre.json (per-user nDCG@4 of the pre-period, as `ranklens eval -q
-f json` writes them), interleaving.csv (impression,position,item,team,click,segment).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import ranklens
from ranklens.online.interleaving import team_draft

rng = np.random.default_rng(20250)
out = Path(__file__).parent / "streaming"
out.mkdir(exist_ok=True)

N_USERS, N_ITEMS, K, DIM = 600, 150, 6, 4
users = [f"u{i:04d}" for i in range(N_USERS)]
items = [f"title{j:03d}" for j in range(N_ITEMS)]
taste = rng.normal(0, 1, size=(N_USERS, DIM))
profile = rng.normal(0, 1, size=(N_ITEMS, DIM)) / np.sqrt(DIM)
popularity = rng.normal(0, 1, size=N_ITEMS)
activity = rng.beta(2.0, 2.0, size=N_USERS) + 0.2
affinity = taste @ profile.T + 0.5 * popularity[None, :]
device = np.where(rng.random(N_USERS) < 0.6, "tv", "mobile")
arm = np.where(rng.random(N_USERS) < 0.5, "control", "treatment")


def ranking(u: int, algorithm: str, noise: np.random.Generator) -> list[int]:
    if algorithm == "control":
        score = popularity + 0.3 * (taste[u] @ profile.T) + noise.normal(0, 1.0, N_ITEMS)
    else:
        score = 0.5 * popularity + 1.0 * (taste[u] @ profile.T) + noise.normal(0, 0.5, N_ITEMS)
    return [int(j) for j in np.argsort(-score)[:K]]


def engagement(u: int, shown: list[int], noise: np.random.Generator) -> dict[int, int]:
    """title → grade of the titles user ``u`` watched out of ``shown`` (in display order)."""
    grades = {}
    for k, j in enumerate(shown, 1):
        looked = noise.random() < 1.0 / np.log2(k + 1)
        p_watch = activity[u] / (1.0 + np.exp(-(1.5 * affinity[u, j] - 1.0)))
        if looked and noise.random() < min(p_watch, 1.0):
            share = 1.0 / (1.0 + np.exp(-(affinity[u, j] + noise.normal(0, 0.7))))
            grades[j] = 1 if share < 0.35 else 2 if share < 0.7 else 3
    return grades


def write_arm(name: str, members: list[int], algorithm: str, noise: np.random.Generator) -> tuple[list[str], list[str]]:
    qrels, run = [], []
    for u in members:
        shown = ranking(u, algorithm, noise)
        for rank, j in enumerate(shown, 1):
            run.append(f"{users[u]} Q0 {items[j]} {rank} {K + 1 - rank} {name}")
        for j, g in sorted(engagement(u, shown, noise).items()):
            qrels.append(f"{users[u]} 0 {items[j]} {g}")
    return qrels, run


noise = np.random.default_rng(7)
for name in ("control", "treatment"):
    members = [u for u in range(N_USERS) if arm[u] == name]
    qrels, run = write_arm(name, members, name, noise)
    (out / f"{name}.qrels").write_text("\n".join(qrels) + "\n")
    (out / f"{name}.run").write_text("\n".join(run) + "\n")
(out / "assignment.tsv").write_text("".join(f"{users[u]}\t{arm[u]}\n" for u in range(N_USERS)))
(out / "segments.tsv").write_text("".join(f"{users[u]}\t{device[u]}\n" for u in range(N_USERS)))

# the pre-period: last month, everyone on the control algorithm; new users (10%) have no history
returning = [u for u in range(N_USERS) if rng.random() >= 0.1]
pre_noise = np.random.default_rng(11)
for name in ("control", "treatment"):
    members = [u for u in returning if arm[u] == name]
    qrels, run = write_arm("pre", members, "control", pre_noise)
    q_dict: dict[str, dict[str, int]] = {}
    for line in qrels:
        uid, _, item, grade = line.split()
        q_dict.setdefault(uid, {})[item] = int(grade)
    r_dict: dict[str, dict[str, float]] = {}
    for line in run:
        uid, _, item, _, score, _ = line.split()
        r_dict.setdefault(uid, {})[item] = float(score)
        q_dict.setdefault(uid, {item: 0})  # watched nothing: judged, nothing relevant, nDCG@4 = 0
    result = ranklens.evaluate(q_dict, r_dict, ["nDCG@4"], missing="zero")
    (out / f"{name}_pre.json").write_text(result.to_json() + "\n")

# the interleaving experiment: each user sees one team-draft merge of the two algorithms
draft = np.random.default_rng(13)
rows = ["impression,position,item,team,click,segment"]
for u in range(N_USERS):
    a = ranking(u, "control", noise)
    b = ranking(u, "treatment", noise)
    merged = team_draft([items[j] for j in a], [items[j] for j in b], k=K, seed=draft)
    shown = [items.index(item) for item, _ in merged]
    watched = engagement(u, shown, noise)
    for pos, ((item, team), j) in enumerate(zip(merged, shown), 1):
        rows.append(f"i{u:04d},{pos},{item},{'A' if team == 'A' else 'B'},{int(j in watched)},{device[u]}")
(out / "interleaving.csv").write_text("\n".join(rows) + "\n")
print(f"wrote {out}: {int((arm == 'control').sum())} control and {int((arm == 'treatment').sum())} treatment users")
