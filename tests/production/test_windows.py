"""``ranklens windows``: per-window nDCG/DCG/IPS-DCG and drift from a generated production log.

The log (seeded): two segments × two systems × six days; 8 queries per segment with 20 candidate items of
known click probability ρ; clicks follow the position-based model P(click) = θ_k·ρ with θ_k = k^−0.8 and
arrive an exponential delay (mean 4 h) after the impression. System A ranks by ρ, B by a noisy ρ; from day 3
A shows random candidates in a random order in segment ``app`` (the drop; the others favour the
first candidates, so the shown-item popularity shifts too). On day 4 every score is shifted by +1.5 (the drift).
Plus 5 orphan events (and one more after --as-of) and 3 events before their impression (clock skew).
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli.main import cli
from ranklens.production import compute_windows, psi

DAY = 86400.0
T0 = datetime(2026, 1, 5, tzinfo=timezone.utc).timestamp()
DAYS, SEGMENTS, SYSTEMS, PER_WINDOW, K = 6, ("app", "web"), ("A", "B"), 40, 10
DROP_DAY, SHIFT_DAY = 2, 3  # 0-based: the drop starts on 2026-01-07, the score shift is 2026-01-08
DELAY = 24 * 3600.0
POPULAR = 1.0 / np.arange(1, 21) / np.sum(1.0 / np.arange(1, 21))  # which candidates a ranker shows
AS_OF = T0 + DAYS * DAY + 12 * 3600  # the last day's label windows are still open
RULES = """default_grade = 0

[signals]
click = "event"

[[grade]]
grade = 2
when = { click = ">= 0.5" }

[[grade]]
grade = 1
when = { click = ">= 0.2" }
"""


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def theta(k: np.ndarray) -> np.ndarray:
    return np.asarray(k, dtype=float) ** -0.8


def generate(seed: int = 11) -> tuple[dict[str, list], dict[str, list], dict]:
    rng = np.random.default_rng(seed)
    rho = {(seg, q, j): float(rng.choice([0.02, 0.1, 0.4, 0.8], p=[0.4, 0.3, 0.2, 0.1]))
           for seg in SEGMENTS for q in range(8) for j in range(20)}
    imp: dict[str, list] = defaultdict(list)
    ev: dict[str, list] = defaultdict(list)
    truth: dict = defaultdict(list)  # (day, segment, system) → expected clicks per request
    n = 0
    for day in range(DAYS):
        for seg in SEGMENTS:
            for system in SYSTEMS:
                for _ in range(PER_WINDOW):
                    n += 1
                    q = int(rng.integers(8))
                    dropped = system == "A" and seg == "app" and day >= DROP_DAY
                    items = rng.choice(20, size=K, replace=False, p=None if dropped else POPULAR)
                    r = np.array([rho[(seg, q, j)] for j in items])
                    if dropped:
                        key = rng.random(K)
                    elif system == "A":
                        key = r + rng.normal(0, 0.01, K)
                    else:
                        key = r + rng.normal(0, 0.3, K)
                    order = np.argsort(-key)
                    scores = np.sort(rng.normal(1.5 if day == SHIFT_DAY else 0.0, 1.0, K))[::-1]
                    shown = T0 + day * DAY + rng.uniform(0, DAY - 1)
                    truth[(day, seg, system)].append(float(np.sum(theta(np.arange(1, K + 1)) * r[order])))
                    for pos, idx in enumerate(order, start=1):
                        item = f"{seg}-{q}-{items[idx]}"
                        imp["request"].append(f"r{n}")
                        imp["user_query"].append(f"{seg}-q{q}")
                        imp["item"].append(item)
                        imp["position"].append(pos)
                        imp["score"].append(float(scores[pos - 1]))
                        imp["timestamp"].append(_iso(shown))
                        imp["segment"].append(seg)
                        imp["system"].append(system)
                        if rng.random() < theta(np.array([pos]))[0] * r[idx]:
                            ev["request"].append(f"r{n}")
                            ev["item"].append(item)
                            ev["event"].append("click")
                            ev["timestamp"].append(float(np.floor(shown)) + float(np.ceil(rng.exponential(4 * 3600))))
    for i in range(5):  # orphans: requests never shown
        ev["request"].append(f"ghost{i}"), ev["item"].append("x"), ev["event"].append("click"), ev["timestamp"].append(T0 + 3600)
    # an orphan that has not arrived by --as-of: counted as after as-of, not as an orphan
    ev["request"].append("ghost-late"), ev["item"].append("x"), ev["event"].append("click"), ev["timestamp"].append(AS_OF + 60)
    for i in (0, 100, 200):  # clock skew: a click a minute before its impression
        shown = datetime.strptime(imp["timestamp"][i], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        ev["request"].append(imp["request"][i]), ev["item"].append(imp["item"][i]), ev["event"].append("click")
        ev["timestamp"].append(shown - 60)
    return dict(imp), dict(ev), dict(truth)


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> tuple[Path, Path, Path, dict, dict, dict]:
    imp, ev, truth = generate()
    d = tmp_path_factory.mktemp("prodlog")
    pl.DataFrame(imp).write_csv(d / "impressions.csv")
    pl.DataFrame(ev).write_ndjson(d / "events.jsonl")
    (d / "rules.toml").write_text(RULES + '\n[columns]\nquery = "user_query"\n')
    return d / "impressions.csv", d / "events.jsonl", d / "rules.toml", imp, ev, truth


@pytest.fixture(scope="module")
def report(log) -> dict:
    imp_path, ev_path, rules_path, *_ = log
    out = CliRunner().invoke(cli, ["windows", str(imp_path), str(ev_path), "--labels", str(rules_path), "--window", "1d",
                                   "-m", "nDCG@10", "DCG@10", "IPS-DCG@10", "--segment-col", "segment", "--system-col",
                                   "system", "--label-delay", "24h", "--as-of", _iso(AS_OF), "--boot", "200", "-f", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _by_hand(imp: dict, ev: dict) -> dict:
    """Independent construction: per (day, segment, system) the qrels (rates of used clicks per
    (query, item) → the rules' grades, by hand), the run (request → item → score) and the used clicks."""
    shown_at = {}
    for i in range(len(imp["request"])):
        t = datetime.strptime(imp["timestamp"][i], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        shown_at[(imp["request"][i], imp["item"][i])] = t
    clicked = set()
    for r, item, t in zip(ev["request"], ev["item"], ev["timestamp"]):
        s = shown_at.get((r, item))
        if s is not None and s <= t <= s + DELAY and t <= AS_OF:
            clicked.add((r, item))
    groups: dict = defaultdict(lambda: {"rows": []})
    for i in range(len(imp["request"])):
        key = (int((shown_at[(imp["request"][i], imp["item"][i])] - T0) // DAY), imp["segment"][i], imp["system"][i])
        groups[key]["rows"].append(i)
    out = {}
    for key, g in groups.items():
        shows: dict = defaultdict(int)
        clicks: dict = defaultdict(int)
        for i in g["rows"]:
            pair = (imp["user_query"][i], imp["item"][i])
            shows[pair] += 1
            clicks[pair] += (imp["request"][i], imp["item"][i]) in clicked
        grade = {p: 2 if clicks[p] / shows[p] >= 0.5 else 1 if clicks[p] / shows[p] >= 0.2 else 0 for p in shows}
        qrels: dict = defaultdict(dict)
        run: dict = defaultdict(dict)
        used_clicks: dict = defaultdict(int)
        for i in g["rows"]:
            r = imp["request"][i]
            run[r][imp["item"][i]] = imp["score"][i]
            used_clicks[r] += (r, imp["item"][i]) in clicked
            for (q, item), gr in grade.items():
                if q == imp["user_query"][i]:
                    qrels[r][item] = gr
        out[key] = (dict(qrels), dict(run), used_clicks)
    return out


def _rows(report: dict, measure: str) -> dict:
    return {(int((datetime.strptime(w["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp() - T0) // DAY),
             w["segment"], w["system"]): w for w in report["windows"] if w["measure"] == measure}


def test_ndcg_and_dcg_equal_the_engine_on_hand_built_window_qrels(log, report) -> None:
    *_, imp, ev, _ = log
    hand = _by_hand(imp, ev)
    assert len(hand) == DAYS * len(SEGMENTS) * len(SYSTEMS)
    for measure in ("nDCG@10", "DCG@10"):
        rows = _rows(report, measure)
        assert set(rows) == set(hand)
        for key, (qrels, run, _) in hand.items():
            res = ranklens.evaluate(qrels, run, [measure])
            values = np.array(list(res.per_query(measure).values()))
            assert rows[key]["n"] == len(run) == values.size == PER_WINDOW
            assert rows[key]["value"] == pytest.approx(values.mean(), abs=1e-12)
            half = 1.959964 * values.std(ddof=1) / np.sqrt(values.size)  # normal interval over requests
            assert rows[key]["ci"] == pytest.approx([values.mean() - half, values.mean() + half], abs=1e-6)


@pytest.fixture(scope="module")
def report_analytic(log) -> dict:
    imp_path, ev_path, rules_path, *_ = log
    out = CliRunner().invoke(cli, ["windows", str(imp_path), str(ev_path), "--labels", str(rules_path), "--window", "1d",
                                   "-m", "IPS-DCG@10", "--segment-col", "segment", "--system-col",
                                   "system", "--label-delay", "24h", "--as-of", _iso(AS_OF), "-f", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.mark.parametrize("interval", ["bootstrap", "analytic"])
def test_ips_dcg_is_the_click_average_on_policy_and_covers_the_truth(log, report, report_analytic, interval) -> None:
    *_, imp, ev, truth = log
    hand = _by_hand(imp, ev)
    rows = _rows(report if interval == "bootstrap" else report_analytic, "IPS-DCG@10")
    covered = 0
    closed = [key for key, w in rows.items() if not w["provisional"]]
    for key, (_, _, used) in hand.items():
        # the system's score order is the shown order, so every weight is 1: IPS = used clicks per request
        assert rows[key]["value"] == pytest.approx(sum(used.values()) / PER_WINDOW, abs=1e-12)
    for key in closed:
        lo, hi = rows[key]["ci"]
        covered += lo <= np.mean(truth[key]) <= hi
    assert len(closed) == 20 and covered >= 17  # nominal 95%: 19 of 20 expected


def test_the_drop_shows_in_its_segment_only(report) -> None:
    rows = _rows(report, "nDCG@10")
    app_a = [rows[(d, "app", "A")]["value"] for d in range(DAYS)]
    web_a = [rows[(d, "web", "A")]["value"] for d in range(DAYS)]
    assert max(app_a[DROP_DAY:]) < min(app_a[:DROP_DAY])
    assert min(web_a[DROP_DAY:]) > max(app_a[DROP_DAY:])
    assert abs(np.mean(web_a[DROP_DAY:]) - np.mean(web_a[:DROP_DAY])) < 0.05


def test_drift_flags_exactly_the_shifted_day(report) -> None:
    score = [d for d in report["drift"] if d["what"] == "score"]
    assert len(score) == (DAYS - 1) * len(SEGMENTS) * len(SYSTEMS) and report["reference_window"] == _iso(T0)
    flagged = {(d["start"], d["segment"], d["system"]) for d in score if d["flag"]}
    assert flagged == {(_iso(T0 + SHIFT_DAY * DAY), seg, s) for seg in SEGMENTS for s in SYSTEMS}
    pop = {(d["start"], d["segment"], d["system"]) for d in report["drift"] if d["what"] == "popularity" and d["flag"]}
    # the dropped ranker changes which items are shown: flagged on every day from the drop on, nothing else
    assert pop == {(_iso(T0 + d * DAY), "app", "A") for d in range(DROP_DAY, DAYS)}


def test_provisional_windows_and_the_counts(log, report) -> None:
    *_, imp, ev, _ = log
    for w in report["windows"]:
        end = datetime.strptime(w["end"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        assert w["provisional"] == (end == T0 + DAYS * DAY)  # only the last day's label window is still open
    c = report["counts"]
    assert c["orphan_events"] == 5 and c["clock_skew_events"] == 3
    late = sum(1 for r, t in zip(ev["request"][:-9], ev["timestamp"][:-9])
               if t <= AS_OF and t - T0 > 0 and t > _shown(imp, r) + DELAY)
    after = sum(1 for t in ev["timestamp"] if t > AS_OF)
    assert late > 0 and c["late_events"] == late and c["events_after_as_of"] == after


def _shown(imp: dict, request: str) -> float:
    i = imp["request"].index(request)
    return datetime.strptime(imp["timestamp"][i], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def test_as_of_defaults_to_the_latest_event(log) -> None:
    imp_path, ev_path, rules_path, _, ev, _ = log
    rep = compute_windows(str(imp_path), str(ev_path), str(rules_path), measures=["DCG@10"], segment_col="segment",
                          system_col="system")
    latest = max(ev["timestamp"])
    assert rep.as_of == _iso(latest)
    for w in rep.windows:
        end = datetime.strptime(w.end, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        assert w.provisional == (end + DELAY > latest)


def test_psi_by_hand() -> None:
    ref = np.array([0.0, 1.0, 2.0, 3.0])
    # bins split at the median 1.5; shares (0.5, 0.5) vs (0 → 1e-4, 1)
    expected = (1e-4 - 0.5) * np.log(1e-4 / 0.5) + 0.5 * np.log(2.0)
    assert psi(ref, np.array([2.0, 3.0, 3.0, 3.0]), bins=2) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("which", "content", "message"),
    [
        ("impressions", "request,query,item,position,score,timestamp\nr1,q,a,1,0.5,2026-01-05T00:00:00Z\nr1,q,b,2,0.4,yesterday\n",
         "impressions.csv:3: column 'timestamp' must be an ISO 8601 time or epoch seconds, got 'yesterday'"),
        ("impressions", "request,query,item,position,score,timestamp\nr1,q,a,0,0.5,2026-01-05T00:00:00Z\n",
         "impressions.csv:2: position must be an integer ≥ 1 (1 = top), got 0 in column 'position'"),
        ("events", '{"request": "r1", "item": "a", "event": "click", "timestamp": "soon"}\n',
         "events.jsonl:1: column 'timestamp' must be an ISO 8601 time or epoch seconds, got 'soon'"),
        ("events", '{"request": "r1", "item": "a", "timestamp": 1}\n',
         "events.jsonl: missing column 'event' (the event type (click, purchase …))"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, which, content, message) -> None:
    imp = tmp_path / "impressions.csv"
    ev = tmp_path / "events.jsonl"
    rules = tmp_path / "rules.toml"
    imp.write_text("request,query,item,position,score,timestamp\nr1,q,a,1,0.5,2026-01-05T00:00:00Z\n")
    ev.write_text('{"request": "r1", "item": "a", "event": "click", "timestamp": "2026-01-05T00:01:00Z"}\n')
    rules.write_text(RULES)
    (imp if which == "impressions" else ev).write_text(content)
    out = CliRunner().invoke(cli, ["windows", str(imp), str(ev), "--labels", str(rules), "-m", "nDCG@10", "-f", "json"])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.output


def test_reference_window_option(log) -> None:
    imp_path, ev_path, rules_path, *_ = log
    shifted = _iso(T0 + SHIFT_DAY * DAY)[:10]
    rep = compute_windows(str(imp_path), str(ev_path), str(rules_path), measures=["DCG@10"], segment_col="segment",
                          system_col="system", reference_window=shifted)
    assert rep.reference_window == _iso(T0 + SHIFT_DAY * DAY)
    score = [d for d in rep.drift if d.what == "score"]
    # against the shifted day every other day is a shift
    assert len(score) == (DAYS - 1) * 4 and all(d.flag for d in score)
    out = CliRunner().invoke(cli, ["windows", str(imp_path), str(ev_path), "--labels", str(rules_path), "-m", "DCG@10",
                                   "--reference-window", "2026-01-05T06:00:00Z"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert "--reference-window '2026-01-05T06:00:00Z' is not the start of a window" in out.output


def test_unknown_measure_is_one_line(log) -> None:
    imp_path, ev_path, rules_path, *_ = log
    out = CliRunner().invoke(cli, ["windows", str(imp_path), str(ev_path), "--labels", str(rules_path),
                                   "-m", "nDCG@10", "IPX-DCG@10"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1 and "IPX-DCG@10" in out.output, out.output


def test_position_bias_refit_per_window_is_in_the_series(log) -> None:
    """The log's clicks follow θ_k = k^−0.8; the EM fit on each day's impressions recovers θ_2/θ_1 = 2^−0.8,
    the fit is a row per window and position, and IPS with the refit is ips_dcg with that θ on the window."""
    from ranklens.unbiased import PositionBias, ips_dcg

    imp_path, ev_path, rules_path, *_ = log
    kw: dict = dict(measures=["IPS-DCG@10"], segment_col="segment", system_col="system", label_delay="24h", as_of=_iso(AS_OF))
    rep = compute_windows(str(imp_path), str(ev_path), str(rules_path), position_bias="em", **kw)
    theta2 = [w for w in rep.windows if w.measure == "theta@2"]
    assert len(theta2) == DAYS and all((w.segment, w.system) == ("all", "all") for w in theta2)
    closed = [w.value for w in theta2 if not w.provisional]
    assert np.mean(closed) == pytest.approx(2**-0.8, abs=0.08)
    # IPS of one window with the refit = ips_dcg given that θ (an independent estimator, string keys)
    fit = {w.measure: w.value for w in rep.windows if w.start == theta2[0].start and w.measure.startswith("theta@")}
    theta = [1.0] + [fit[f"theta@{p}"] for p in range(2, len(fit) + 2)]
    row = next(w for w in rep.windows if w.measure == "IPS-DCG@10" and w.start == theta2[0].start)
    *_, imp, ev, _ = log
    shown = {(r, i): datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
             for r, i, t in zip(imp["request"], imp["item"], imp["timestamp"])}
    clicked = {(r, i) for r, i, t in zip(ev["request"], ev["item"], ev["timestamp"])
               if (r, i) in shown and shown[(r, i)] <= t <= shown[(r, i)] + DELAY and t <= AS_OF}
    day = (row.segment, row.system, row.start[:10])
    rows = [j for j in range(len(imp["request"])) if (imp["segment"][j], imp["system"][j], imp["timestamp"][j][:10]) == day]
    sub = pl.DataFrame({"request": [imp["request"][j] for j in rows], "item": [imp["item"][j] for j in rows],
                        "position": [imp["position"][j] for j in rows], "score": [imp["score"][j] for j in rows],
                        "click": [float((imp["request"][j], imp["item"][j]) in clicked) for j in rows]})
    target: dict = defaultdict(dict)
    for r, i, sc in sub.select("request", "item", "score").iter_rows():
        target[r][i] = sc
    est = ips_dcg(sub.select("request", "item", "position", "click"), dict(target), examination=PositionBias.from_values(theta),
                  k=10, n_boot=0, query="request", impression="request")
    assert row.value == pytest.approx(est.value, rel=1e-9)
    plain = compute_windows(str(imp_path), str(ev_path), str(rules_path), **kw)
    assert not any(w.measure.startswith("theta@") for w in plain.windows)
