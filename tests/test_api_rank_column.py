"""Issue 27: positions are not scores. A ``rank`` column role (ascending: 1 first) in every reader and in
``--run-columns``; a column named like a position mapped to ``score`` is refused unless said to be a score.

Oracle: pytrec_eval on the same log with scores −rank (and ``+position`` for the wrong reading)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ranklens
from ranklens.errors import FormatError

pytrec_eval = pytest.importorskip("pytrec_eval")

# a click log: what was shown at which position, and what the user found relevant
LOG = [  # (user, item, position)
    ("u1", "a", 1), ("u1", "b", 2), ("u1", "c", 3), ("u1", "d", 4), ("u1", "e", 5),
    ("u2", "f", 1), ("u2", "g", 2), ("u2", "h", 3), ("u2", "i", 4),
]
LABELS = {"u1": {"a": 2, "c": 1, "e": 1, "z": 2}, "u2": {"g": 1, "i": 2}}


def _oracle(sign: float) -> float:
    run = {}
    for user, item, pos in LOG:
        run.setdefault(user, {})[item] = sign * float(pos)
    per_query = pytrec_eval.RelevanceEvaluator(LABELS, {"ndcg_cut_4"}).evaluate(run)
    return sum(v["ndcg_cut_4"] for v in per_query.values()) / len(per_query)


def _frame() -> dict[str, list[object]]:
    return {"user_id": [u for u, _, _ in LOG], "item_id": [i for _, i, _ in LOG], "position": [p for _, _, p in LOG]}


def test_the_oracle_tells_the_two_readings_apart() -> None:
    assert not math.isclose(_oracle(-1.0), _oracle(+1.0))


def test_a_rank_column_ranks_position_one_first() -> None:
    res = ranklens.evaluate(LABELS, _frame(), ["nDCG@4"], run_columns={"position": "rank"})
    assert math.isclose(res["nDCG@4"], _oracle(-1.0), rel_tol=1e-12)


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl", "parquet"])
def test_every_named_column_reader_takes_rank(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"log.{suffix}"
    if suffix in ("csv", "tsv"):
        sep = "," if suffix == "csv" else "\t"
        path.write_text("\n".join([sep.join(["user_id", "item_id", "position"])] + [sep.join(map(str, r)) for r in LOG]) + "\n")
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps({"user_id": u, "item_id": i, "position": p}) + "\n" for u, i, p in LOG))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(_frame()), path)
    run = ranklens.read_run(str(path), columns={"position": "rank"})
    res = ranklens.evaluate(LABELS, run, ["nDCG@4"])
    assert math.isclose(res["nDCG@4"], _oracle(-1.0), rel_tol=1e-12)


def test_a_position_named_column_mapped_to_score_is_refused() -> None:
    for name in ("position", "rank", "pos", "shown_position"):
        frame = {**_frame(), name: _frame()["position"]}
        if name != "position":
            del frame["position"]
        with pytest.raises(FormatError, match=f"column '{name}' looks like a position.*rank="):
            ranklens.evaluate(LABELS, frame, ["nDCG@4"], run_columns={name: "score"})


def test_score_desc_says_it_is_a_score() -> None:
    res = ranklens.evaluate(LABELS, _frame(), ["nDCG@4"], run_columns={"position": "score_desc"})
    assert math.isclose(res["nDCG@4"], _oracle(+1.0), rel_tol=1e-12)


def test_a_missing_score_with_a_position_column_suggests_rank() -> None:
    with pytest.raises(FormatError, match="rank=position"):
        ranklens.evaluate(LABELS, _frame(), ["nDCG@4"])


def test_cli_run_columns_rank(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ranklens.cli.main import cli

    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{u} 0 {d} {g}\n" for u, docs in LABELS.items() for d, g in docs.items()))
    run = tmp_path / "log.csv"
    run.write_text("user_id,item_id,position\n" + "".join(f"{u},{i},{p}\n" for u, i, p in LOG))
    out = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "nDCG@4", "--run-columns", "rank=position", "-f", "json"])
    assert out.exit_code == 0, out.output
    assert math.isclose(json.loads(out.output)["runs"][0]["aggregate"]["nDCG@4"], _oracle(-1.0), rel_tol=1e-9)
    bad = CliRunner().invoke(cli, ["eval", str(qrels), str(run), "-m", "nDCG@4", "--run-columns", "score=position"])
    assert bad.exit_code == 2 and "looks like a position" in bad.output and "Traceback" not in bad.output


def test_evaluate_files_reads_a_parquet_rank_column_whole(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ranklens.engine.policy import EvalPolicy
    from ranklens.evaluation import evaluate_files

    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{u} 0 {d} {g}\n" for u, docs in LABELS.items() for d, g in docs.items()))
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table(_frame()), path)
    out = evaluate_files(str(qrels), [str(path)], ["nDCG@4"], EvalPolicy(run_columns={"position": "rank"}))
    assert math.isclose(out.results[0]["nDCG@4"], _oracle(-1.0), rel_tol=1e-12)
