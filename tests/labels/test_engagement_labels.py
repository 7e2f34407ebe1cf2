"""Engagement events → graded qrels: rules, support, precedence, bad logs and rules, the bundled examples."""

from __future__ import annotations

import json
import runpy
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import COMMANDS, cli
from ranklens.data.io import read_qrels
from ranklens.errors import FormatError
from ranklens.labels import labels_from_events, load_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engagement"

EVENTS = {
    "query": ["q"] * 6 + ["r"] * 3,
    "item": ["a", "a", "a", "b", "b", "c", "a", "a", "a"],
    "position": [1, 2, 1, 3, 2, 1, 1, 1, 2],
    "click": [1, 1, 0, 1, 0, 1, 0, 0, 1],
    "purchase": [1, 0, 0, 0, 0, 1, 0, 0, 0],
    "watch": [1.0, 0.5, 0.0, 0.9, 0.0, 1.0, 0.0, 0.0, 0.2],
}
RULES = {
    "signals": {"click": "event", "purchase": "event", "watch": {"kind": "fraction"}},
    "support": {"min_impressions": 2},
    "grade": [
        {"grade": 3, "when": {"purchase": ">= 0.3"}},
        {"grade": 2, "when": {"click": ">= 0.6", "watch": "> 0.4"}},
        {"grade": 1, "when": {"click": 0.3}},
    ],
}


def test_rules_precedence_support_and_summary() -> None:
    res = labels_from_events(EVENTS, RULES)
    # q/a: 3 impressions, click 2/3, purchase 1/3 → 3 (first rule wins); q/b: click 1/2, watch .45 → 1
    # q/c: 1 impression → low support; r/a: click 1/3 → 1
    assert res.qrels.to_dict() == {"q": {"a": 3, "b": 1}, "r": {"a": 1}}
    assert res.low_support == 1 and res.no_rule == 0
    assert res.summary()["grades"] == {"1": 2, "3": 1}
    assert "unlabelled, too little support: 1" in res.summary_text()


def test_default_grade_score_bins_and_min_events() -> None:
    rules = {**RULES, "grade": [{"grade": 3, "when": {"purchase": ">= 0.5"}}]}
    assert labels_from_events(EVENTS, rules).no_rule == 3  # no default: left unlabelled
    assert labels_from_events(EVENTS, {**rules, "default_grade": 0}).qrels.to_dict() == {"q": {"a": 0, "b": 0}, "r": {"a": 0}}
    scored = {**rules, "score": {"weights": {"click": 1.0, "watch": 1.0}, "bins": [0.5, 1.0], "grades": [0, 1, 2]}}
    # q/a: 2/3 + 0.5 = 1.17 → 2; q/b: 0.5 + 0.45 = 0.95 → 1; r/a: 1/3 + 0.067 = 0.4 → 0
    assert labels_from_events(EVENTS, scored).qrels.to_dict() == {"q": {"a": 2, "b": 1}, "r": {"a": 0}}
    strict = {**RULES, "support": {"min_impressions": 2, "min_events": {"click": 2}}}
    assert labels_from_events(EVENTS, strict).qrels.to_dict() == {"q": {"a": 3}}


def test_mean_over_an_event() -> None:
    events = {"query": ["q"] * 4, "item": ["a"] * 4, "position": [1] * 4, "click": [1, 1, 0, 0], "dwell": [30, 50, 0, 0]}
    rules = {"signals": {"click": "event", "dwell": {"kind": "mean", "over": "click"}}, "grade": [{"grade": 2, "when": {"dwell": ">= 40"}}]}
    res = labels_from_events(events, rules)
    assert res.pairs["dwell"][0] == 40.0 and res.qrels.to_dict() == {"q": {"a": 2}}


# --- bad logs ----------------------------------------------------------------------------------------

BAD_LOGS = [
    ("item,position,click\na,1,1\n", r"events\.csv: missing column 'query' \(the query of each impression"),
    ("query,item,position,click\nq,a,1,1\nq,a,0,1\n", r"events\.csv:3: position must be an integer ≥ 1 \(1 = top\), got 0"),
    ("query,item,position,click\nq,a,-2,1\n", r"events\.csv:2: position must be an integer ≥ 1"),
    ("query,item,position,click\nq,a,1,1\nq,a,2,3\n", r"events\.csv:3: column 'click' is an event indicator and must be 0 or 1, got 3"),
    ("query,item,position,click,watch\nq,a,1,1,1.5\n", r"events\.csv:2: column 'watch' is a rate and must be in \[0, 1\], got 1.5"),
    ("query,item,position,click\nq,a,x,1\n", r"events\.csv:2: column 'position' must be numeric, got 'x'"),
    ("query,item,position,click\n,a,1,1\n", r"events\.csv:2: empty value in id column 'query'"),
]


@pytest.mark.parametrize(("text", "pattern"), BAD_LOGS)
def test_bad_logs(tmp_path, text: str, pattern: str) -> None:
    path = tmp_path / "events.csv"
    path.write_text(text)
    rules = {"signals": {"click": "event", **({"watch": "fraction"} if "watch" in text else {})}, "default_grade": 1}
    with pytest.raises(FormatError, match=pattern):
        labels_from_events(path, rules)


def test_jsonl_rows_are_lines_and_parquet_rows_are_rows(tmp_path) -> None:
    import polars as pl

    frame = pl.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "position": [1, 0], "click": [1, 0]})
    frame.write_ndjson(tmp_path / "e.jsonl")
    frame.write_parquet(tmp_path / "e.parquet")
    rules = {"signals": {"click": "event"}}
    with pytest.raises(FormatError, match=r"e\.jsonl:2: position"):
        labels_from_events(tmp_path / "e.jsonl", rules)
    with pytest.raises(FormatError, match=r"e\.parquet: row 2: position"):
        labels_from_events(tmp_path / "e.parquet", rules)


# --- bad rules ---------------------------------------------------------------------------------------

BAD_RULES = [
    ({"signals": {"click": "event"}, "grade": [{"grade": 2, "when": {"clik": 0.5}}]},
     r"\[\[grade\]\] #1 uses unknown signal 'clik'; did you mean 'click'\? The signals are: click, impressions"),
    ({"signals": {"click": "event"}, "score": {"weights": {"purchase": 1.0}, "bins": [0.5]}}, r"\[score\] weights uses unknown signal 'purchase'"),
    ({"signals": {"click": "event"}, "support": {"min_events": {"buy": 2}}}, r"\[support\] min_events uses unknown signal 'buy'"),
    ({"signals": {"click": "evnt"}}, r"kind must be one of event, fraction, mean; got 'evnt'; did you mean 'event'\?"),
    ({"signals": {"click": "event"}, "grade": [{"grade": 2, "when": {"click": ">= 1.5"}}]}, r"'click' is a rate in \[0, 1\]; the threshold 1.5 is outside it"),
    ({"signals": {"click": "event"}, "grade": [{"grade": 2, "when": {"click": "about half"}}]}, r"condition on 'click' must look like"),
    ({"signals": {"click": "event"}, "grades": []}, r"unknown key 'grades'; did you mean 'grade'\?"),
    ({"grade": []}, r"no \[signals\] table"),
    ({"signals": {"click": "event"}, "score": {"weights": {"click": 1.0}, "bins": [0.5, 0.2]}}, r"bins must be a non-empty, increasing"),
    ({"signals": {"d": {"kind": "mean", "over": "x"}}}, r"over = 'x' is not a signal"),
]


@pytest.mark.parametrize(("rules", "pattern"), BAD_RULES)
def test_bad_rules(rules: dict, pattern: str) -> None:
    with pytest.raises(FormatError, match=pattern):
        load_rules(rules)


def test_toml_errors_name_the_file(tmp_path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('[signals]\nclick = "event"\n[[grade]]\ngrade = 2\nwhen = { clicks = 0.5 }\n')
    with pytest.raises(FormatError, match=r"rules\.toml: \[\[grade\]\] #1 uses unknown signal 'clicks'; did you mean 'click'"):
        load_rules(path)
    path.write_text("[signals\n")
    with pytest.raises(FormatError, match=r"rules\.toml: not valid TOML"):
        load_rules(path)


# --- the bundled examples ----------------------------------------------------------------------------


def test_generator_is_deterministic(tmp_path) -> None:
    for name in ("make_logs.py",):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    runpy.run_path(str(tmp_path / "make_logs.py"), run_name="__main__")
    for name in ("ecommerce_events.csv", "ecommerce_target.run", "video_events.jsonl"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name


@pytest.mark.parametrize(
    ("events", "rules", "grades", "low_support"),
    [
        ("ecommerce_events.csv", "ecommerce_rules.toml", {"0": 2, "1": 26, "2": 3, "3": 16, "4": 3}, 26),
        ("video_events.jsonl", "video_rules.toml", None, None),
    ],
)
def test_bundled_examples(events: str, rules: str, grades: dict | None, low_support: int | None) -> None:
    res = labels_from_events(EXAMPLES / events, EXAMPLES / rules)
    assert len(res.qrels) > 20 and res.low_support > 0
    assert len(res.summary()["grades"]) >= 4
    if grades is not None:
        assert res.summary()["grades"] == grades and res.low_support == low_support


def test_cli(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(COMMANDS, "labels", ("ranklens.cli.labels_cmd", "command", "Labels."))
    out_path = tmp_path / "qrels.trec"
    out = CliRunner().invoke(
        cli,
        ["labels", "from-events", str(EXAMPLES / "ecommerce_events.csv"), "--rules", str(EXAMPLES / "ecommerce_rules.toml"),
         "-o", str(out_path), "--pairs", str(tmp_path / "pairs.csv")],
    )
    assert out.exit_code == 0, out.output
    assert "grade 4: 3" in out.output and "unlabelled, too little support: 26" in out.output
    assert len(read_qrels(out_path)) == 50 and (tmp_path / "pairs.csv").exists()
    out = CliRunner().invoke(cli, ["labels", "from-events", str(EXAMPLES / "video_events.jsonl"), "--rules",
                                   str(EXAMPLES / "video_rules.toml"), "--json", "-o", str(tmp_path / "v.qrels")])
    assert out.exit_code == 0 and json.loads(out.output)["labelled"] > 20
    bad = tmp_path / "bad.csv"
    bad.write_text("query,item,position,click,add_to_cart,purchase,dwell_seconds\nq,a,0,1,0,0,1\n")
    out = CliRunner().invoke(cli, ["labels", "from-events", str(bad), "--rules", str(EXAMPLES / "ecommerce_rules.toml")])
    assert out.exit_code == 2 and out.output.strip().endswith("bad.csv:2: position must be an integer ≥ 1 (1 = top), got 0 in column 'position'")
