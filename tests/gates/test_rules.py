"""The one rule model of issue 11: the text syntax, the TOML rules file, and one file giving the same
verdicts in ``ranklens gate --rules`` and in the monitor's rule engine."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranklens.cli.main import cli
from ranklens.errors import FormatError, InputError, MeasureError
from ranklens.gates import GateSettings, Rule, bound_holds, parse_rule, read_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "toy.qrels")
BM25 = str(EXAMPLES / "toy_bm25.run")
DENSE = str(EXAMPLES / "toy_dense.run")

# ------------------------------------------------------------------------------------------------- the syntax


@pytest.mark.parametrize(
    ("text", "kind", "rule"),
    [
        ("nDCG@10 >= 0.85", None, Rule("min", "nDCG@10", 0.85)),
        ("nDCG@10>=0.85", None, Rule("min", "nDCG@10", 0.85)),
        ("  nDCG@10 ≥ 0.85 ", None, Rule("min", "nDCG@10", 0.85)),
        ("P@5 > 0.4", None, Rule("min", "P@5", 0.4, strict=True)),
        ("ERR@10 <= 0.9", None, Rule("max", "ERR@10", 0.9)),
        ("ERR@10 < 1e-1", None, Rule("max", "ERR@10", 0.1, strict=True)),
        ("nDCG@10 drop <= 0.01", None, Rule("max_drop", "nDCG@10", 0.01)),
        (
            "AP drop <= .02 alpha=0.05 window=7 segment=books",
            None,
            Rule("max_drop", "AP", 0.02, segment="books", alpha=0.05, window=7.0),
        ),
        ("AP drop <= 0 vs=bm25", None, Rule("max_drop", "AP", 0.0, reference="bm25")),
        ("P(rel=2)@5 >= 0.3", None, Rule("min", "P(rel=2)@5", 0.3)),
        # the command-line spellings: the flag gives the kind
        ("nDCG@10=0.85", "min", Rule("min", "nDCG@10", 0.85)),
        ("ERR@10=0.5", "max", Rule("max", "ERR@10", 0.5)),
        ("nDCG@10=0.01", "max_drop", Rule("max_drop", "nDCG@10", 0.01)),
        ("P(rel=2)@5=+3", "min", Rule("min", "P(rel=2)@5", 3.0)),
        ("nDCG@10 >= 0.85", "min", Rule("min", "nDCG@10", 0.85)),
    ],
)
def test_parse_good_rules(text: str, kind: str | None, rule: Rule) -> None:
    assert parse_rule(text, kind=kind) == rule
    assert parse_rule(str(rule)) == rule  # the text form round-trips


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("nDCG@10 >= .", None, "expected a number, got '.'"),
        ("nDCG@10 >= 1e", None, "expected a number, got '1e'"),
        ("nDCG@10 >= --1", None, "expected a number, got '--1'"),
        ("nDCG@10 >= nan", None, "expected a number, got 'nan'"),
        ("nDCG@10 >= 1e999", None, "expected a finite number, got '1e999'"),
        ("nDCG@10 >=", None, "expected a number, got ''"),
        ("nDCG@10 = 0.8", None, "must look like 'nDCG@10 >= 0.85'"),
        ("nDCG@10", None, "must look like"),
        (">= 0.5", None, "must look like"),
        ("nDCG@10 drop >= 0.01", None, "a drop rule reads 'MEASURE drop <= VALUE'"),
        ("nDCG@10 drop <= -0.01", None, "the allowed drop must be ≥ 0"),
        ("nDCG@10 >= 0.5 alpha=0.05", None, "alpha= applies to drop rules only"),
        ("nDCG@10 drop <= 0.01 alpha=1.5", None, "alpha must be between 0 and 1"),
        ("nDCG@10 drop <= 0.01 alpha=.", None, "alpha: expected a number, got '.'"),
        ("nDCG@10 drop <= 0.01 window=0", None, "window must be between 0 and 366"),
        ("nDCG@10 >= 0.5 colour=red", None, "unknown option 'colour=red'"),
        ("nDCG@10 >= 0.5 extra", None, "unknown option 'extra'"),
        ("nDCG@10=.", "min", "--min 'nDCG@10=.': expected a number, got '.'"),
        ("nDCG@10=1e", "max_drop", "--max-drop 'nDCG@10=1e': expected a number, got '1e'"),
        ("nDCG@10", "min", "expected MEASURE=VALUE"),
        ("nDCG@10 drop <= 0.1", "min", "--min takes MEASURE=VALUE, not a max_drop rule"),
        ("P.5,10 >= 0.1", None, "a rule names one measure"),
    ],
)
def test_parse_bad_rules(text: str, kind: str | None, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_rule(text, kind=kind)
    assert message in str(e.value)


def test_unknown_measure_suggests() -> None:
    with pytest.raises(MeasureError, match="did you mean 'nDCG@10'"):
        parse_rule("ndgc@10 >= 0.5")


def test_bounds_agree_up_to_rounding() -> None:
    assert bound_holds(">=", 0.1 + 0.2, 0.3) and not bound_holds(">", 0.1 + 0.2, 0.3)
    assert bound_holds("<=", 0.3, 0.1 + 0.2) and not bound_holds("<", 0.3, 0.1 + 0.2)


# -------------------------------------------------------------------------------------------------- the file


def test_read_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(
        'alpha = 0.05\ntest = "t"\nwindow = 14\nseed = 3\nrules = ["P@5 >= 0.4", "AP drop <= 0.02 alpha=0.01"]\n'
        '[min]\n"nDCG@10" = 0.85\n[max]\n"ERR@10" = 0.9\n[max_drop]\n"nDCG@10" = 0.01\n'
        '[segment.nav]\nmin = { "nDCG@10" = 0.9 }\nrules = ["P@5 >= 0.5"]\n'
        '[segment.info.max_drop]\n"AP" = 0.03\n'
    )
    rules, settings = read_rules(str(path))
    assert settings == GateSettings(alpha=0.05, test="t", seed=3, window=14.0)
    assert [str(r) for r in rules] == [
        "nDCG@10 >= 0.85",
        "ERR@10 <= 0.9",
        "nDCG@10 drop <= 0.01",
        "P@5 >= 0.4",
        "AP drop <= 0.02 alpha=0.01",
        "nDCG@10 >= 0.9 segment=nav",
        "P@5 >= 0.5 segment=nav",
        "AP drop <= 0.03 segment=info",
    ]


@pytest.mark.parametrize(
    ("toml", "error", "message"),
    [
        ("aplha = 0.05\n", FormatError, "did you mean 'alpha'"),
        ("alpha = 2\n", FormatError, "alpha must be between 0 and 1"),
        ("window = 'x'\n", FormatError, "window: expected a number, got 'x'"),
        ("rules = 'P@5 >= 0.4'\n", FormatError, "rules must be a list of rule texts"),
        ("rules = ['P@5 >= .']\n", InputError, "expected a number, got '.'"),
        ("[min]\n'nDCG@10' = 'x'\n", FormatError, "expected a number"),
        ("[max]\n'nDCG@10' = true\n", FormatError, "expected a number"),
        ("[segment.nav]\nmnx = {}\n", FormatError, "[segment.nav]: unknown key 'mnx'"),
        ("[segment.nav]\nrules = ['P@5 >= 0.4 segment=info']\n", FormatError, "names segment 'info'"),
        ("[min\n", FormatError, "not valid TOML"),
    ],
)
def test_read_bad_rules_files(tmp_path: Path, toml: str, error: type[Exception], message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(toml)
    with pytest.raises(error) as e:
        read_rules(str(path))
    assert message in str(e.value)


def test_missing_rules_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no such file"):
        read_rules(str(tmp_path / "absent.toml"))


# ----------------------------------------------------------------------------------------------- the monitor


def test_monitor_rules_from_the_syntax() -> None:
    pytest.importorskip("pydantic")
    from ranklens.monitor.schemas import RuleIn

    window = RuleIn(expr="nDCG@10 drop <= 0.02 window=14", system="bm25").resolved()
    assert (window.kind, window.max_drop, window.window_days, window.system) == ("window", 0.02, 14.0, "bm25")
    sig = RuleIn.from_rule(parse_rule("AP drop <= 0 vs=bm25 alpha=0.01"))
    assert (sig.kind, sig.reference, sig.alpha) == ("significance", "bm25", 0.01)
    strict = RuleIn(expr="ndcg_cut.10 > 0.5", segment="books").resolved()
    assert (strict.measure, strict.op, strict.value, strict.segment) == ("nDCG@10", ">", 0.5, "books")
    for expr in ("nDCG@10 >= .", "nDCG@10 >= 1e", "nDCG@10 >= --1"):  # were HTTP 500s
        with pytest.raises(InputError, match="expected a number"):
            RuleIn(expr=expr).resolved()
    with pytest.raises(InputError, match="no significance test"):
        RuleIn(expr="AP drop <= 0.01 alpha=0.05").resolved()
    with pytest.raises(InputError, match="allowed drop of 0"):
        RuleIn(expr="AP drop <= 0.01 vs=bm25").resolved()


def _values(run: str, measures: list[str]) -> dict[str, float]:
    """The run's means as the gate computes them (every qrels query counts: --missing zero)."""
    from ranklens.data.io import read_qrels, read_run
    from ranklens.engine.evaluator import Evaluator
    from ranklens.errors import RanklensWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)  # dense misses q12: scored 0, as in the gate
        res = Evaluator(measures, read_qrels(QRELS), missing="zero")(read_run(run))
    return {str(m): float(res.column(m).mean()) for m in res.measures}


def test_one_rules_file_gives_the_same_verdicts_in_ci_and_in_the_monitor(tmp_path: Path) -> None:
    pytest.importorskip("pydantic")
    pytest.importorskip("sqlalchemy")
    from ranklens.monitor.db import Database
    from ranklens.monitor.schemas import SnapshotIn
    from ranklens.monitor.service import Monitor

    measures = ["nDCG@10", "P@5", "AP", "RR"]
    base, new = _values(BM25, measures), _values(DENSE, measures)
    drop = {m: base[m] - new[m] for m in measures}
    rules = [
        f"nDCG@10 >= {new['nDCG@10']!r}",  # exactly the value: passes in both
        f"nDCG@10 > {new['nDCG@10']!r}",  # strictly above: fails in both
        f"P@5 >= {new['P@5'] + 0.01!r}",
        f"AP <= {new['AP'] + 0.01!r}",
        f"RR < {new['RR'] - 0.01!r}",
    ]
    tables = {
        "min": {"AP": new["AP"] - 0.01},
        "max_drop": {"nDCG@10": abs(drop["nDCG@10"]) + 0.001, "P@5": max(0.0, abs(drop["P@5"]) - 0.001)},
    }
    lines = ["window = 7", f"rules = {json.dumps(rules)}"]
    for table, body in tables.items():
        lines += [f"[{table}]", *(f'"{m}" = {v!r}' for m, v in body.items())]
    path = tmp_path / "rules.toml"
    path.write_text("\n".join(lines) + "\n")

    # CI: the new run against the production run
    result = CliRunner().invoke(cli, ["gate", QRELS, DENSE, "--baseline", BM25, "--rules", str(path), "-f", "json"])
    assert result.exit_code == 1, result.output
    gate = [c["status"] for c in json.loads(result.stdout)["checks"]]

    # monitoring: three days of the production run, then the new run
    db = Database(f"sqlite:///{tmp_path / 'monitor.db'}")
    db.migrate()
    monitor = Monitor(db)
    added = monitor.add_rules_file("search", str(path))
    for day, values in ((1, base), (2, base), (3, base), (4, new)):
        body = {"id": f"day-{day}", "system": "search", "values": values, "at": f"2026-03-0{day}T00:00:00Z"}
        out, created = monitor.ingest("search", SnapshotIn.model_validate(body))
        assert created
    status = {o["rule_id"]: o["status"] for o in out["rules"]}
    alert = [status[r["id"]] for r in added]
    db.engine.dispose()

    assert len(gate) == len(alert) == 8
    assert [{"pass": "ok", "fail": "breach"}[s] for s in gate] == alert
    assert set(gate) == {"pass", "fail"}
