"""The express path of ``ranklens eval`` (ranklens.express, ranklens/_cexpress.c, ranklens.cli.express)
against the reference: the full command line interface run through click's runner, which never takes the
express path. Whatever the express path prints, the full interface must print byte for byte, with the same
exit status; whatever it declines (None) it must not have printed a byte of. Malformed and unusual
inputs must be declined, so their errors stay the full interface's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens.cli.express import run
from ranklens.cli.main import cli
from ranklens.errors import RanklensError
from ranklens.express import available, evaluate_express, express_measures, express_specs
from ranklens.measures import parse_many

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "trec_eval"

pytestmark = pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("COLUMNS", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS"):
        monkeypatch.delenv(name, raising=False)


def reference(args: list[str]) -> tuple[int, str, str]:
    """The full interface with the express path switched off everywhere (``evaluate_files`` takes it too)."""
    result = CliRunner().invoke(cli, args, env={"RANKLENS_EXPRESS": "0"})
    return result.exit_code, result.stdout, result.stderr


def full_interface(args: list[str]) -> tuple[int, str, str]:
    """The full interface as users run it: click, with the express path inside ``evaluate_files``."""
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


def express(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str, str]:
    capsys.readouterr()
    status = run(args)
    out, err = capsys.readouterr()
    return status, out, err


def check_same(args: list[str], capsys: pytest.CaptureFixture[str], *, taken: bool | None = True) -> None:
    """The express path prints what the full interface prints; ``taken``: whether it must take the
    command line (None: either way)."""
    status, out, err = express(args, capsys)
    if taken is not None:
        assert (status is not None) == taken, (status, out, err)
    if status is None:
        assert out == err == ""
        return
    ref_status, ref_out, ref_err = reference(args)
    assert (status, out, err) == (ref_status, ref_out, ref_err)


# ------------------------------------------------------------------------------------- bundled inputs

TOY = [str(ROOT / "examples/toy.qrels"), str(ROOT / "examples/toy_bm25.run")]
TOY2 = [*TOY, str(ROOT / "examples/toy_dense.run")]


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["-m", "nDCG@10"],
        ["-m", "nDCG@10", "AP", "P@5", "RR", "R@100"],
        ["-m", "ndcg_cut.10", "map", "P.5", "recip_rank", "recall.100"],
        ["-m", "nDCG", "AP@5", "RR@3", "R", "P@5,10,20"],
        ["-m", "nDCG@5,10", "-q"],
        ["-q"],
        ["-f", "trec"],
        ["-f", "trec", "-q"],
        ["-f", "tsv", "-q", "--quiet"],
        ["--format", "tsv"],
        ["-m", "P@1", "-m", "P@1"],
    ],
)
@pytest.mark.parametrize("files", [TOY, TOY2, [str(ROOT / "examples/movies.qrels"), str(ROOT / "examples/movies.run")]])
def test_bundled_examples_print_the_same(files: list[str], extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    check_same(["eval", *files, *extra], capsys)


@pytest.mark.parametrize("case", sorted(p.stem for p in GOLDEN.glob("*.run")))
def test_golden_inputs_print_the_same(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(GOLDEN / f"{case}.qrels"), str(GOLDEN / f"{case}.run")]
    # cases 1 and 3 are plain TREC files: taken; the others hold negative labels or other qrels: declined
    taken = True if case in ("case1", "case3") else None
    for extra in ([], ["-q", "-f", "tsv"], ["-m", "nDCG", "P@1000", "R@1000", "AP@20"]):
        check_same(["eval", *files, *extra], capsys, taken=taken)


def test_express_values_match_trec_eval() -> None:
    """The oracle: the real trec_eval 10.0's ``-q -m all_trec`` output for the golden case 1 (4 decimals),
    every query and the means."""
    measures = {"nDCG@10": "ndcg_cut_10", "nDCG": "ndcg", "AP": "map", "P@10": "P_10", "RR": "recip_rank", "R@100": "recall_100"}
    golden: dict[tuple[str, str], float] = {}
    for line in (GOLDEN / "case1.all_q.out").read_text().splitlines():
        name, query, value = line.split()
        if name in measures.values():
            golden[name, query] = float(value)
    res = evaluate_express(str(GOLDEN / "case1.qrels"), [str(GOLDEN / "case1.run")], parse_many(list(measures)))
    assert res is not None
    (r,) = res
    checked = 0
    for j, name in enumerate(measures.values()):
        for query, row in zip(r.query_ids, r.rows):
            assert round(row[j], 4) == pytest.approx(golden[name, query], abs=1e-9), (name, query)
            checked += 1
        assert round(r.aggregates[j], 4) == pytest.approx(golden[name, "all"], abs=1e-9), name
    assert checked == len(measures) * len(r.query_ids) > 0


# ---------------------------------------------------------------------------- what it must decline

@pytest.mark.parametrize(
    "args",
    [
        ["eval", *TOY, "--help"],
        ["eval", *TOY, "-f", "json"],
        ["eval", *TOY, "-m", "nDCG(gain=exp)@10"],
        ["eval", *TOY, "-m", "ERR@10"],
        ["eval", *TOY, "-m", "ncdg"],
        ["eval", *TOY, "--missing", "zero"],
        ["eval", TOY[0], "bm25=" + TOY[1]],
        ["eval", TOY[0], "-"],
        ["eval", TOY[0]],
        ["eval", TOY[0], "missing.run"],
        ["compare", *TOY2],
    ],
)
def test_other_command_lines_are_left_to_the_full_interface(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert express(args, capsys) == (None, "", "")


QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq1 Q0 d3 3 2.0 sys\nq2 Q0 d9 1 1.5 sys\n"


@pytest.mark.parametrize(
    "qrels, run_text",
    [
        (QRELS.replace("q2 0 d4 1", "q2 0 d4 -1"), RUN),  # a negative label
        (QRELS + "q1 0 d1 1\n", RUN),  # a judgement twice
        (QRELS.replace("d4 1", "d4 1.5"), RUN),  # a real-valued label
        (QRELS.replace("d4 1", "d4 +1"), RUN),
        (QRELS.replace("d4 1", "d4 1234567890"), RUN),
        (QRELS + "# comment\n", RUN),
        (QRELS.replace("q2 0 d4 1", "q2 0 d4 1 extra"), RUN),
        (QRELS.replace("q2 0 d4 1", "q2 d4 1"), RUN),
        (QRELS, RUN + "q1 Q0 d1 4 0.5 sys\n"),  # a document twice
        (QRELS, RUN.replace("3.0", "nan")),
        (QRELS, RUN.replace("3.0", "0x10")),
        (QRELS, RUN.replace("2.0 sys", "2.0 sys more")),  # a seventh field
        (QRELS, RUN.replace("q2 Q0 d9 1 1.5 sys", "q2 Q0 d9 1.5 sys")),  # five fields
        (QRELS, "q7 Q0 d1 1 1.0 sys\n"),  # no query in common
        (QRELS, RUN.replace("d9", "dé")),  # not ASCII
        (QRELS, "\ufeff" + RUN),  # a byte-order mark
        (QRELS, RUN.replace("d9", "d\x1c9")),
        (QRELS, RUN.replace("d9", "d\x009")),
        ("", RUN),
        (QRELS, " \n\t\n"),
    ],
)
def test_unusual_inputs_are_declined(tmp_path: Path, qrels: str, run_text: str, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "r.txt").write_text(run_text)
    args = ["eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt")]
    assert express(args, capsys) == (None, "", "")


def test_compressed_and_other_formats_are_declined(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_bytes(gzip.compress(RUN.encode()))
    (tmp_path / "r.csv").write_text(RUN)
    for run_file in ("r.txt", "r.csv"):
        assert express(["eval", str(tmp_path / "q.txt"), str(tmp_path / run_file)], capsys) == (None, "", "")


def test_switches_turn_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("RANKLENS_EXPRESS", "0"), ("RANKLENS_PURE", "1"), ("RANKLENS_PLUGINS", "my_plugin")):
        monkeypatch.setenv(name, value)
        assert express(["eval", *TOY], capsys) == (None, "", "")
        monkeypatch.delenv(name)
    assert express(["eval", *TOY], capsys)[0] == 0


def test_notes_and_names_are_the_full_interfaces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Run-only and qrels-only queries give the same notes; two runs with one tag take their file names."""
    (tmp_path / "q.txt").write_text(QRELS + "q3 0 d1 1\n")
    (tmp_path / "a.run").write_text(RUN + "q8 Q0 d1 1 1.0 sys\nq8 Q0 d2 2 0.5 sys\n")
    (tmp_path / "b.run").write_text(RUN.replace("3.0", "1.0"))
    args = ["eval", str(tmp_path / "q.txt"), str(tmp_path / "a.run"), str(tmp_path / "b.run")]
    check_same(args, capsys)
    status, out, err = express(args, capsys)
    assert "2 run queries" not in err and "1 run query (2 rows) not in the qrels: ignored" in err
    assert "1 qrels query with no retrieved document" in err and "┃ measure ┃" in out and " a " in out
    check_same([*args, "--quiet"], capsys)
    check_same([*args, "-f", "trec", "-q"], capsys)


def test_a_table_too_wide_for_columns_is_the_full_interfaces(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "30")
    check_same(["eval", *TOY2], capsys)


def test_the_console_script_imports_nothing_heavy() -> None:
    """``ranklens eval`` of the toy collection (the console script's own entry point) evaluates without
    importing click, numpy, pyarrow or rich, nor the standard modules that cost more than the evaluation
    (typing, dataclasses, json …), and prints what the full interface prints."""
    probe = (
        "import atexit, sys\n"
        "heavy = ('click', 'numpy', 'pyarrow', 'rich', 'polars', 'pandas', 'typing', 'dataclasses', 'inspect', 'json',"
        " 'csv', 'pathlib', 'difflib', 'shutil', 'ranklens.measures')\n"
        "atexit.register(lambda: sys.stderr.write('loaded:' + ','.join(m for m in heavy if m in sys.modules)))\n"
        f"sys.argv = ['ranklens', 'eval', {TOY[0]!r}, {TOY[1]!r}]\n"
        "from ranklens.cli.entry import main\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS", "COLUMNS")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("loaded:"), done.stderr
    assert done.stdout == reference(["eval", *TOY])[1]


# ------------------------------------------------------------------------------ generated collections

_QUERIES = st.sampled_from(["q1", "q2", "q10", "q2a", "Q1", "a", "b_1"])
_DOCS = st.sampled_from([f"d{i}" for i in range(12)] + ["D1", "d1a", "x"])
_SCORES = st.sampled_from(["1", "2", "2.0", "0.5", "-1", "3e2", "0", "-0.0", "inf", "-inf", "7.25", "1e-3"])
_MEASURES = st.lists(
    st.sampled_from(["nDCG@10", "nDCG@3", "nDCG", "AP", "AP@5", "P@1", "P@5", "P@20", "RR", "RR@2", "R@3", "R", "ndcg_cut.5", "map"]),
    min_size=1,
    max_size=5,
)


@st.composite
def collections(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    judged = draw(st.dictionaries(st.tuples(_QUERIES, _DOCS), st.integers(0, 4), min_size=1, max_size=25))
    qrels = "".join(f"{q} {draw(st.sampled_from(['0', 'Q0', 'x']))} {d} {rel}\n" for (q, d), rel in judged.items())
    runs = []
    for _ in range(draw(st.integers(1, 2))):
        rows = draw(st.dictionaries(st.tuples(_QUERIES, _DOCS), _SCORES, min_size=1, max_size=30))
        sep = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
        tag = draw(st.sampled_from(["sys", "bm25", "t"]))
        lines = [sep.join([q, "Q0", d, str(i + 1), s, tag]) for i, ((q, d), s) in enumerate(rows.items())]
        if draw(st.booleans()):
            lines = sorted(lines)  # grouped by query, as run files usually are
        runs.append("\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\n\n"])))
    extra = draw(_MEASURES)
    flags = draw(st.sampled_from([[], ["-q"], ["-f", "trec"], ["-f", "tsv", "-q"], ["-f", "tsv"], ["--quiet", "-q"]]))
    return qrels, runs, ["-m", *extra, *flags]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections())
def test_generated_collections_print_the_same(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], case: tuple[str, list[str], list[str]]
) -> None:
    qrels, runs, extra = case
    d = tmp_path_factory.mktemp("c")
    (d / "q.txt").write_text(qrels)
    paths = []
    for i, text in enumerate(runs):
        (d / f"r{i}.run").write_bytes(text.encode())
        paths.append(str(d / f"r{i}.run"))
    judged = {line.split()[0] for line in qrels.splitlines()}
    shares = all(judged & {line.split()[0] for line in text.splitlines() if line.strip()} for text in runs)
    check_same(["eval", str(d / "q.txt"), *paths, *extra], capsys, taken=shares)


_BYTES = st.sampled_from([b" ", b"\t", b"\n", b"\r", b"#", b"0", b"1", b"-", b".", b"e", b"q1", b"Q0", b"d1", b"x", b"\x00", b"\xff"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_BYTES, max_size=40), st.integers(0, len(RUN)))
def test_damaged_runs_are_read_as_the_full_interface_reads_them(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], noise: list[bytes], at: int
) -> None:
    """Bytes spliced into a run: the express path declines, or prints what the full interface prints (an
    error of the full interface is never an express result)."""
    d = tmp_path_factory.mktemp("f")
    (d / "q.txt").write_text(QRELS)
    data = RUN.encode()
    (d / "r.txt").write_bytes(data[:at] + b"".join(noise) + data[at:])
    check_same(["eval", str(d / "q.txt"), str(d / "r.txt"), "-q", "-f", "tsv"], capsys, taken=None)


def test_specs_map_only_default_parameters() -> None:
    assert express_specs(parse_many(["nDCG@10", "AP", "P@10", "RR", "R@100"])) == ((1, 10), (2, 0), (3, 10), (4, 0), (5, 100))
    assert express_specs(parse_many(["nDCG@10", "ERR@10"])) is None
    assert express_specs(parse_many(["RR(rel=2)"])) is None
    assert express_specs(parse_many(["P(ties=average)@5"])) is None


_WORDS = st.sampled_from(
    ["nDCG", "DCG", "AP", "P", "RR", "R", "ndcg", "map", "recip_rank", "ndcg_cut", "map_cut", "recall", "ERR", "ncdg", "Ndcg", "p"]
)
_TAILS = st.sampled_from(["", "@10", "@5,10", "@1", "@0", "@05", "@", "@10,", ".10", ".5,20", ".0", ".", "@10.5", "(gain=exp)@3"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_WORDS, _TAILS).map("".join), min_size=1, max_size=5))
def test_plain_measure_words_are_named_as_the_measure_language_names_them(words: list[str]) -> None:
    """The express path's own reading of plain measure words (no measure language imported) gives the
    measures parse_many gives, in its order and without repeats; words it does not read are None, and
    it never reads a word parse_many refuses."""
    mine = express_measures(words)
    try:
        theirs = [str(m) for m in parse_many(words)]
    except RanklensError:
        assert mine is None
        return
    if mine is not None:
        assert [str(m) for m in mine] == theirs
        assert express_specs(mine) == express_specs(parse_many(words))


def test_the_plain_words_cover_the_defaults_and_trec_names() -> None:
    for words in (["nDCG@10", "AP", "P@10", "RR", "R@100"], ["ndcg_cut.10", "map", "P.10", "recip_rank", "recall.100"]):
        mine = express_measures(words)
        assert mine is not None and [str(m) for m in mine] == [str(m) for m in parse_many(words)]


def _as_tuple(res: list | None) -> object:
    return None if res is None else [(r.run, r.query_ids, r.rows, r.aggregates, r.notes) for r in res]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from([1, 16, 37, 64, 200]))
def test_blocks_of_any_size_give_the_same_values(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, list[str], list[str]], block: int
) -> None:
    """A run read in blocks of a few bytes (queries carried from block to block, blocks grown for a long
    query) gives what it gives read in one block; a run whose queries are not together is declined, or
    the same when each block holds its queries together."""
    qrels, runs, _ = case
    d = tmp_path_factory.mktemp("b")
    (d / "q.txt").write_text(qrels)
    (d / "r.run").write_bytes(runs[0].encode())
    measures = parse_many(["nDCG@3", "AP", "P@2", "RR", "R@5"])
    whole = evaluate_express(str(d / "q.txt"), [str(d / "r.run")], measures)
    blocks = evaluate_express(str(d / "q.txt"), [str(d / "r.run")], measures, block=block)
    queries = [line.split()[0] for line in runs[0].splitlines() if line.strip()]
    grouped = all(a == b or b not in queries[:i] for i, (a, b) in enumerate(zip(queries, queries[1:])))
    judged = {line.split()[0] for line in qrels.splitlines()}
    assert (whole is not None) == bool(judged & set(queries))  # (read whole, a run is declined only for that)
    if grouped:
        assert _as_tuple(blocks) == _as_tuple(whole)
    else:
        assert blocks is None or _as_tuple(blocks) == _as_tuple(whole)


def test_a_query_longer_than_the_block_is_read_on(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN * 1 + "".join(f"q3 Q0 x{i} {i} {i} sys\n" for i in range(50)))
    measures = parse_many(["nDCG@10", "AP"])
    whole = evaluate_express(str(tmp_path / "q.txt"), [str(tmp_path / "r.txt")], measures)
    assert whole is not None and whole[0].query_ids == ("q1", "q2")
    assert _as_tuple(evaluate_express(str(tmp_path / "q.txt"), [str(tmp_path / "r.txt")], measures, block=8)) == _as_tuple(whole)
    assert "1 run query (50 rows) not in the qrels: ignored" in whole[0].notes


# ------------------------------------------------------- the express path inside evaluate_files (compare, gate)

@pytest.mark.parametrize(
    "args",
    [
        ["eval", *TOY2, "-f", "json", "-q"],
        ["eval", *TOY2, "-f", "csv", "-q", "-m", "nDCG@5", "DCG@5", "AP"],
        ["eval", *TOY, "--ci"],
        ["compare", *TOY2],
        ["compare", *TOY2, "-m", "nDCG@10", "AP", "--format", "json"],
        ["compare", *TOY2, "-m", "P@5", "RR", "--test", "permutation"],
        ["gate", TOY2[0], TOY2[2], "--min", "nDCG@10=0.3"],
        ["gate", TOY2[0], TOY2[2], "--baseline", TOY2[1], "--max-drop", "nDCG@10=0.01"],
    ],
)
def test_commands_print_the_same_with_the_express_path_inside(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import ranklens.evaluation as evaluation

    taken: list[bool] = []
    real = evaluation.compiled_results

    def spy(*args: object) -> object:
        got = real(*args)  # type: ignore[arg-type]
        taken.append(got is not None)
        return got

    monkeypatch.setattr(evaluation, "compiled_results", spy)
    status, out, err = full_interface(args)
    # (the gate evaluates each run on its own, scoring the qrels queries a run lacks 0 in the compiled pass too)
    assert taken == ([True] * (1 + ("--baseline" in args)) if args[0] == "gate" else [True]), taken
    assert status in ((0, 1) if args[0] == "gate" else (0,)), (out, err)
    assert (status, out, err) == reference(args)


def test_evaluate_files_gives_the_same_results_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklens.engine.policy import EvalPolicy
    from ranklens.evaluation import evaluate_files

    (tmp_path / "q.txt").write_text(QRELS + "q3 0 d1 1\n")
    (tmp_path / "a.run").write_text(RUN + "q8 Q0 d1 1 1.0 sys\n")
    (tmp_path / "b.run").write_text(RUN.replace("3.0", "1.0"))
    runs = [(None, str(tmp_path / "a.run")), ("named", str(tmp_path / "b.run"))]
    measures = ["nDCG@10", "DCG@3", "AP", "P@2", "RR", "R@5"]

    def outcome() -> object:
        seen: list[str] = []
        out = evaluate_files(str(tmp_path / "q.txt"), runs, measures, EvalPolicy(), on_note=seen.append)
        return [(r.run, r.query_ids, r.values.tolist(), r.aggregates, r.notes, r.options) for r in out.results], out.notes, seen

    quick = outcome()
    monkeypatch.setenv("RANKLENS_EXPRESS", "0")
    assert quick == outcome()


def test_a_failing_read_hands_the_inputs_to_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import ranklens.express as express

    class Failing(io.BytesIO):
        def read(self, *args: object) -> bytes:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(express, "_source", lambda path, kind: Failing())
    assert evaluate_express(TOY[0], [TOY[1]], parse_many(["AP"])) is None
    assert full_interface(["eval", *TOY, "-m", "AP"]) == reference(["eval", *TOY, "-m", "AP"])


def test_stream_true_still_refuses_a_run_not_grouped(tmp_path: Path) -> None:
    """``stream=True`` streams or fails: the express path (which reads a small ungrouped run in one block)
    does not take it, so the general path says the run is not grouped; by default both read it whole."""
    from ranklens.errors import NotGroupedError
    from ranklens.evaluation import evaluate_files

    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN + "q1 Q0 d7 4 0.1 sys\n")
    with pytest.raises(NotGroupedError):
        evaluate_files(str(tmp_path / "q.txt"), [str(tmp_path / "r.txt")], ["AP"], stream=True)
    assert evaluate_files(str(tmp_path / "q.txt"), [str(tmp_path / "r.txt")], ["AP"]).read_whole == [str(tmp_path / "r.txt")]


# ------------------------------------------------------------------------------------- Parquet inputs

def _rows_of(text: str, width: int) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip() and len(line.split()) >= width]


def _write_parquet(path: Path, columns: dict[str, object], *, row_group_size: int | None = None) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), str(path), row_group_size=row_group_size)  # type: ignore[arg-type]
    return str(path)


def _parquet_qrels(path: Path, text: str, **kw: object) -> str:
    import pyarrow as pa

    rows = _rows_of(text, 4)
    labels = pa.array([int(r[3]) for r in rows], pa.int32())
    return _write_parquet(path, {"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "relevance": labels}, **kw)  # type: ignore[arg-type]


def _parquet_run(path: Path, text: str, **kw: object) -> str:
    rows = _rows_of(text, 6)
    return _write_parquet(path, {"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "score": [float(r[4]) for r in rows]}, **kw)  # type: ignore[arg-type]


def _general_values(qrels: str, runs: list[str], measures: list[str], monkeypatch: pytest.MonkeyPatch) -> object:
    """The general path's per-query values, means and notes (``evaluate_files`` with the express path off)."""
    from ranklens.evaluation import evaluate_files

    with monkeypatch.context() as m:
        m.setenv("RANKLENS_EXPRESS", "0")
        out = evaluate_files(qrels, runs, measures)
    return [(r.run, r.query_ids, [tuple(v) for v in r.values.tolist()], r.aggregates, r.notes) for r in out.results]


def _express_values(results: object) -> object:
    assert results is not None
    return [(r.run, r.query_ids, list(r.rows), r.aggregates, r.notes) for r in results]  # type: ignore[attr-defined]


@pytest.mark.parametrize("qrels_format", ["parquet", "trec"])
@pytest.mark.parametrize(
    "extra", [[], ["-m", "nDCG@10", "AP", "P@5", "RR", "R@100"], ["-q", "-f", "trec"], ["-f", "tsv", "-q", "-m", "nDCG", "DCG@3"]]
)
def test_parquet_runs_print_the_same(tmp_path: Path, qrels_format: str, extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The bundled toy collection as Parquet (runs, and qrels or not): taken, and printed as the full
    interface prints it; two runs are named by their files, as the general path names them."""
    qrels_text = Path(TOY2[0]).read_text()
    qrels = _parquet_qrels(tmp_path / "toy.parquet", qrels_text) if qrels_format == "parquet" else TOY2[0]
    runs = [_parquet_run(tmp_path / f"{Path(p).stem}.parquet", Path(p).read_text(), row_group_size=7) for p in TOY2[1:]]
    check_same(["eval", qrels, *runs, *extra], capsys)
    check_same(["eval", qrels, runs[0], *extra], capsys)


def test_parquet_qrels_with_a_text_run_print_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _parquet_qrels(tmp_path / "q.parquet", Path(TOY[0]).read_text(), row_group_size=5)
    check_same(["eval", qrels, TOY[1], "-q", "-f", "tsv"], capsys)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(collections(), st.sampled_from([1, 2, 3, 5, 64]), st.sampled_from([1, 4, 1000]), st.booleans())
def test_parquet_batches_of_any_size_give_the_general_paths_values(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, list[str], list[str]], batch: int, row_group: int,
    parquet_qrels: bool,
) -> None:
    """Generated collections as Parquet, read a few rows at a time (queries carried from batch to batch
    and across row groups): the general path's values and notes, or declined (None) where the general
    path must decide (no query in common, an infinite score, a query that comes back after others)."""
    qrels_text, runs, _ = case
    d = tmp_path_factory.mktemp("p")
    qrels = _parquet_qrels(d / "q.parquet", qrels_text, row_group_size=row_group) if parquet_qrels else str(d / "q.txt")
    (d / "q.txt").write_text(qrels_text)
    run = _parquet_run(d / "r.parquet", runs[0], row_group_size=row_group)
    measures = ["nDCG@3", "AP", "P@2", "RR", "R@5", "nDCG"]
    got = evaluate_express(qrels, [run], parse_many(measures), batch_rows=batch)
    rows = _rows_of(runs[0], 6)
    queries = [r[0] for r in rows]
    judged = {r[0] for r in _rows_of(qrels_text, 4)}
    finite = all(abs(float(r[4])) != float("inf") for r in rows)
    grouped = all(a == b or b not in queries[:i] for i, (a, b) in enumerate(zip(queries, queries[1:])))
    # (a dictionary of query ids may change from row group to row group: batches then end with each group)
    if judged & set(queries) and finite and (grouped or min(batch, row_group) >= len(rows)):
        assert got is not None  # (what it must take)
    if got is not None:
        mp = pytest.MonkeyPatch()
        try:
            assert _express_values(got) == _general_values(qrels, [run], measures, mp)
        finally:
            mp.undo()


def test_parquet_values_are_the_text_values(tmp_path: Path) -> None:
    """The golden case 1 (checked against trec_eval 10.0 above) as Parquet gives the values it gives as
    text, bit for bit, in batches of any size (its lines grouped by query, in file order within each)."""
    qrels_text, run_text = (GOLDEN / "case1.qrels").read_text(), (GOLDEN / "case1.run").read_text()
    qrels = _parquet_qrels(tmp_path / "q.parquet", qrels_text)
    lines = [line for line in run_text.splitlines() if line.strip()]
    grouped = "".join(f"{line}\n" for line in sorted(lines, key=lambda line: line.split()[0]))
    run = _parquet_run(tmp_path / "case1.parquet", grouped, row_group_size=100)
    measures = parse_many(["nDCG@10", "nDCG", "AP", "P@10", "RR", "R@100", "DCG@5"])
    text = evaluate_express(str(GOLDEN / "case1.qrels"), [str(GOLDEN / "case1.run")], measures)
    assert text is not None
    for batch in (None, 1, 17, 1000):
        got = evaluate_express(qrels, [run], measures, batch_rows=batch)
        assert got is not None
        assert (got[0].query_ids, got[0].rows, got[0].aggregates) == (text[0].query_ids, text[0].rows, text[0].aggregates)


def _declined_cases() -> list[tuple[str, dict[str, object], dict[str, object]]]:
    import pyarrow as pa

    q = {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3", "d4"], "relevance": pa.array([2, 0, 1, 1], pa.int8())}
    r = {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3", "d9"], "score": [3.0, 2.0, 2.0, 1.5]}

    def with_(base: dict[str, object], **changes: object) -> dict[str, object]:
        return {**base, **changes}

    return [
        ("a null query id", q, with_(r, query_id=["q1", None, "q1", "q2"])),
        ("a null score", q, with_(r, score=[3.0, None, 2.0, 1.5])),
        ("a null label", with_(q, relevance=pa.array([2, None, 1, 1], pa.int8())), r),
        ("an empty document id", q, with_(r, doc_id=["d1", "", "d3", "d9"])),
        ("an empty query id", with_(q, query_id=["q1", "q1", "q1", ""]), r),
        ("a space in an id", q, with_(r, doc_id=["d1", "d 2", "d3", "d9"])),
        ("a tab in an id", with_(q, doc_id=["d1", "d2", "d\t3", "d4"]), r),
        ("not ASCII", q, with_(r, doc_id=["d1", "dé", "d3", "d9"])),
        ("real-valued ids", q, with_(r, doc_id=[1.0, 2.0, 3.0, 9.0])),
        ("a null integer id", q, with_(r, doc_id=pa.array([1, None, 3, 9], pa.int64()))),
        ("real-valued labels", with_(q, relevance=[2.0, 0.0, 1.0, 1.0]), r),
        ("a negative label", with_(q, relevance=pa.array([2, 0, -1, 1], pa.int8())), r),
        ("a label of ten digits", with_(q, relevance=pa.array([2, 0, 1234567890, 1], pa.int64())), r),
        ("a judgement twice", with_(q, doc_id=["d1", "d2", "d1", "d4"]), r),
        ("a document twice", q, with_(r, doc_id=["d1", "d2", "d1", "d9"])),
        ("a NaN score", q, with_(r, score=[3.0, float("nan"), 2.0, 1.5])),
        ("an infinite score", q, with_(r, score=[3.0, float("inf"), 2.0, 1.5])),
        ("text scores", q, with_(r, score=["3", "2", "2", "1.5"])),
        ("boolean scores", q, with_(r, score=[True, False, False, True])),
        ("no query in common", q, with_(r, query_id=["q7", "q7", "q7", "q8"])),
        ("other column names", q, {"a": r["query_id"], "b": r["doc_id"], "c": r["score"]}),
    ]


@pytest.mark.parametrize("name, qrels, run_columns", _declined_cases(), ids=[c[0] for c in _declined_cases()])
def test_unusual_parquet_inputs_are_declined(
    tmp_path: Path, name: str, qrels: dict[str, object], run_columns: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    """What the general path must decide, or say is wrong, is declined: the full interface's own output
    and exit status stay what they are with the express path off."""
    args = ["eval", _write_parquet(tmp_path / "q.parquet", qrels), _write_parquet(tmp_path / "r.parquet", run_columns)]
    assert evaluate_express(args[1], args[2:], parse_many(["nDCG@10"])) is None
    assert express(args, capsys) == (None, "", "")
    assert full_interface(args) == reference(args)


@pytest.mark.parametrize(
    "types",
    [
        {"doc_id": "large_string"},
        {"query_id": "large_string", "doc_id": "large_string"},
        {"score": "float32"},
        {"score": "int64"},
        {"score": "int32"},
        {"relevance": "uint8"},
        {"relevance": "int64"},
        {"relevance": "uint32"},
        {"relevance": "int16"},
        {"query_id": "dictionary"},
        {"query_id": "dictionary", "doc_id": "dictionary"},
    ],
)
def test_parquet_column_types_it_reads(tmp_path: Path, types: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Ids as large strings or dictionaries (as pandas' categoricals are written), scores as any float or
    integer, labels as any integer: taken, and printed as the full interface prints them."""
    import pyarrow as pa

    q = {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3", "d4"], "relevance": [2, 0, 1, 1]}
    r = {"query_id": ["q1", "q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2", "d3", "d4", "d9"], "score": [3, 2, 2, 1, 7]}
    tables = []
    for cols in (q, r):
        tables.append({
            k: (pa.array(v).dictionary_encode() if types[k] == "dictionary" else pa.array(v, getattr(pa, types[k])()))
            if k in types else pa.array(v)
            for k, v in cols.items()
        })
    args = ["eval", _write_parquet(tmp_path / "q.parquet", tables[0]), _write_parquet(tmp_path / "r.parquet", tables[1]), "-q"]
    check_same(args, capsys)


def test_a_parquet_run_not_grouped_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query that comes back after others: in one batch it is evaluated (and said read whole, as the
    general path says); across batches the run is declined, and the general path reads it whole."""
    from ranklens.evaluation import evaluate_files

    qrels = _parquet_qrels(tmp_path / "q.parquet", QRELS)
    run = _parquet_run(tmp_path / "r.parquet", RUN + "q1 Q0 d7 4 0.1 sys\n")
    assert evaluate_express(qrels, [run], parse_many(["AP"]), batch_rows=2) is None
    got = evaluate_express(qrels, [run], parse_many(["AP"]))
    assert got is not None and not got[0].grouped
    quick = evaluate_files(qrels, [run], ["AP"])
    monkeypatch.setenv("RANKLENS_EXPRESS", "0")
    general = evaluate_files(qrels, [run], ["AP"])
    assert quick.read_whole == general.read_whole == [run]
    assert [r.values.tolist() for r in quick.results] == [r.values.tolist() for r in general.results]


def test_a_damaged_parquet_file_is_the_general_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _parquet_qrels(tmp_path / "q.parquet", QRELS)
    run = _parquet_run(tmp_path / "r.parquet", RUN)
    data = Path(run).read_bytes()
    for damaged in (data[: len(data) // 2], data[:4] + b"\x00" * (len(data) - 8) + data[-4:], RUN.encode()):
        Path(run).write_bytes(damaged)
        args = ["eval", qrels, run]
        assert express(args, capsys) == (None, "", "")
        status, out, err = reference(args)
        assert status == 2 and "r.parquet" in err
        assert full_interface(args) == (status, out, err)


def test_the_prefetching_thread_stops_when_the_run_is_declined(tmp_path: Path) -> None:
    """A run declined in its first batch leaves no reading thread behind (the reader is stopped and
    joined), and an error of the reader reaches the caller."""
    import threading

    from ranklens.express import _Prefetch

    qrels = _parquet_qrels(tmp_path / "q.parquet", QRELS)
    rows = "".join(f"q1 Q0 x{i} {i + 1} {-i} sys\n" for i in range(200)) + "q1 Q0 x0 201 -500 sys\n"
    run = _parquet_run(tmp_path / "r.parquet", rows, row_group_size=10)
    assert evaluate_express(qrels, [run], parse_many(["AP"]), batch_rows=10) is None  # (a document twice)
    assert not [t for t in threading.enumerate() if t.name == "ranklens-prefetch"]

    def failing() -> object:
        yield 1
        raise OSError(5, "Input/output error")

    reader = _Prefetch(failing())  # type: ignore[arg-type]
    with pytest.raises(OSError, match="Input/output"):
        list(reader)
    reader.close()


def test_query_ids_are_read_as_a_dictionary_only_where_the_file_keeps_a_small_one(tmp_path: Path) -> None:
    """pyarrow rebuilds a dictionary by hashing every value of a column stored plain, which costs more
    than the decoding it saves: the query ids come as a dictionary only when every row group stores
    them with a small dictionary page."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ranklens.data.columns import RUN
    from ranklens.data.parquet_batches import SMALL_DICTIONARY, parquet_batches, small_dictionaries

    rows = {"query_id": [f"q{i // 50}" for i in range(5000)], "doc_id": [f"d{i}" for i in range(5000)], "score": [1.0] * 5000}
    cases = {"kept": ({}, True), "plain": ({"use_dictionary": False}, False)}
    many = {"query_id": [f"query-{i:07d}-{'x' * 40}" for i in range(20000)], "doc_id": ["d"] * 20000, "score": [1.0] * 20000}
    for name, (options, _small) in cases.items():
        pq.write_table(pa.table(rows), str(tmp_path / f"{name}.parquet"), row_group_size=1000, **options)  # type: ignore[arg-type]
    pq.write_table(pa.table(many), str(tmp_path / "many.parquet"))
    cases["many"] = ({}, False)
    for name, (_, small) in cases.items():
        path = str(tmp_path / f"{name}.parquet")
        assert small_dictionaries(pq.ParquetFile(path).metadata, "query_id") is small, name
        types = {str(b.column(0).type) for b, _ in parquet_batches(path, RUN, query_dictionary=True)}
        assert types == ({"dictionary<values=string, indices=int32, ordered=0>"} if small else {"string"}), name
    chunk = pq.ParquetFile(str(tmp_path / "many.parquet")).metadata.row_group(0).column(0)
    assert chunk.data_page_offset - chunk.dictionary_page_offset > SMALL_DICTIONARY  # (the reason it is refused)


@pytest.mark.parametrize("id_type", ["int64", "int32", "uint16"])
def test_integer_ids_are_compared_as_their_decimal_strings(tmp_path: Path, id_type: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Integer query and document ids (pandas writes MS MARCO's so) are taken, compared as strings as the
    general path compares them: documents 9 and 10 tie on score, and "9" > "10" bytewise ranks 9 first."""
    import pyarrow as pa

    ids = getattr(pa, id_type)()
    qrels = {"qid": pa.array([1, 1, 1, 2], ids), "docno": pa.array([9, 10, 3, 4], ids), "rel": pa.array([1, 0, 2, 1], pa.int8())}
    run_columns = {
        "qid": pa.array([1, 1, 1, 2, 2], ids), "docno": pa.array([10, 9, 3, 4, 5], ids), "score": [2.0, 2.0, 1.0, 3.0, 1.0],
    }
    args = ["eval", _write_parquet(tmp_path / "q.parquet", qrels), _write_parquet(tmp_path / "r.parquet", run_columns)]
    for extra in ([], ["-q", "-f", "tsv", "-m", "P@1", "nDCG@2", "AP"]):
        check_same([*args, *extra], capsys)
    got = evaluate_express(args[1], args[2:], parse_many(["P@1"]))
    assert got is not None and got[0].query_ids == ("1", "2") and got[0].rows[0] == (1.0,)  # ("9" first: relevant)
