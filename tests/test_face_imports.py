"""What each face imports to answer on the bundled toy collection (issue 26's start-up target): a counter, not a
timer. Each command runs in a fresh interpreter, as the console script runs it; at exit the interpreter lists the
heavy modules it loaded, and the debug note (``RANKLENS_DEBUG=1``) says which backend ran. A face that starts
importing the reference engine, pyarrow or scipy where the compiled backend answers fails here.

Measured start-up times are in ``docs/benchmarks.md`` (``python -m bench.run --faces``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ranklens.express import available

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
QRELS, BM25, DENSE = str(EX / "toy.qrels"), str(EX / "toy_bm25.run"), str(EX / "toy_dense.run")

#: modules whose import costs more than a toy evaluation (tens of milliseconds each)
HEAVY = (
    "numpy", "pyarrow", "pyarrow.compute", "scipy", "scipy.special", "scipy.stats", "rich", "pandas", "polars", "click",
    "ranklens.engine.evaluator", "ranklens.engine.kernels", "ranklens.data.io", "ranklens.plugins",
    "ranklens.spark",
)

_DRIVER = """
import atexit, os, sys
def _said():
    loaded = set(sys.modules)  # (before this hook imports json: the counter also pins json)
    import json
    os.write(2, ("\\nIMPORTED " + json.dumps(sorted(m for m in json.loads(os.environ["HEAVY"]) if m in loaded))
                 + "\\n").encode())
atexit.register(_said)
sys.argv = ["ranklens", *sys.argv[1:]]
from ranklens.cli.entry import main
main()
"""


def run_face(args: list[str], watch: tuple[str, ...] = HEAVY) -> tuple[int, set[str], str]:
    """(exit status, modules of ``watch`` imported, the debug note) of ``ranklens ARGS`` in a fresh interpreter."""
    env = {**os.environ, "HEAVY": json.dumps(watch), "RANKLENS_DEBUG": "1", "PYTHONIOENCODING": "utf-8"}
    for name in ("RANKLENS_BACKEND", "RANKLENS_EXPRESS", "RANKLENS_PURE", "RANKLENS_PLUGINS"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("IMPORTED "))
    debug = [x for x in done.stderr.splitlines() if x.startswith("ranklens: debug: ")]
    return done.returncode, set(json.loads(line.removeprefix("IMPORTED "))), " | ".join(debug)


ENGINE = {"ranklens.engine.evaluator", "ranklens.engine.kernels", "ranklens.data.io", "pyarrow", "pyarrow.compute"}
NOT_NEEDED = ENGINE | {"scipy", "scipy.special", "scipy.stats", "pandas", "polars", "ranklens.plugins", "ranklens.spark"}

FACES = [
    # (command line, heavy modules it may import, the backend the debug note names): no face that the compiled
    # backend answers imports numpy (its Results hold their values in pure Python; the t-test, its interval,
    # Holm and Cohen's d compute numpy's floats without it: ranklens.stats.lists / .sums)
    (["eval", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP"], set(), "backend compiled"),
    (["trec-eval", "-m", "ndcg_cut.10", "-m", "map", "-m", "P.5", QRELS, BM25], set(), "backend compiled"),
    (["trec-eval", "-q", "-c", "-m", "ndcg_cut.10", "-m", "recip_rank", QRELS, DENSE], set(), "backend compiled"),
    (["trec-eval", QRELS, BM25], set(), "backend compiled"),  # (trec_eval's default set, all compiled)
    (["trec-eval", "-q", "-c", "-m", "all_trec", QRELS, BM25], set(), "backend compiled"),
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP"], set(), "backend compiled"),  # (a pipe: no rich, no click)
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "-f", "json"], set(), "backend compiled"),
    (["gate", QRELS, BM25, "--min", "nDCG@10=0.1"], set(), "backend compiled"),
    (["gate", QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.5"], set(), "backend compiled"),
    (["gate", QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.5", "--alpha", "0.05"], set(),
     "backend compiled"),
    (["gate", QRELS, BM25, "-f", "json", "--min", "AP=0.1", "--max", "P@5=0.9"], set(), "backend compiled"),
]

#: small modules the plain compare and gate faces do without (each a millisecond or two of a ~0.1 s start): json
#: (only for ``-f json`` and results files), the Pareto analysis (only with costs), zlib (only Monte Carlo seeds),
#: string, difflib (only a did-you-mean: the RAG families once built one per start), trec_eval's names table (only
#: for what the measure language did not read, or a bare name of trec_eval's such as ``map``), the t-test
#: (only when a test runs: a gate without a baseline only names one), typing (annotations are the type checker's;
#: ranklens._record makes the named tuples)
SMALL = ("json", "ranklens.comparison.pareto", "zlib", "string", "difflib", "ranklens.measures.trec_names",
         "ranklens.stats.ttest", "typing")
T_TEST = "ranklens.stats.ttest"

SMALL_FACES = [
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "AP"], {T_TEST}),
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "map"], {"ranklens.measures.trec_names", T_TEST}),
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "P@5"], {T_TEST}),
    (["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "-f", "json"], {"json", T_TEST}),
    (["gate", QRELS, BM25, "--min", "nDCG@10=0.1"], set()),
    (["gate", QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.5", "--alpha", "0.05"], {T_TEST}),
    (["gate", QRELS, BM25, "-f", "json", "--min", "AP=0.1", "--max", "P@5=0.9"], {"json"}),
]


@pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")
@pytest.mark.parametrize(("args", "allowed"), SMALL_FACES, ids=[" ".join(x for x in a if "/" not in x) for a, _ in SMALL_FACES])
def test_compare_and_gate_leave_the_small_modules_they_do_not_use(args: list[str], allowed: set[str]) -> None:
    """The counter on the small modules: each face loads of :data:`SMALL` only what it uses (and the faces that
    use one, ``-f json`` or the bare name ``AP``, show the counter sees them)."""
    status, imported, debug = run_face(args, SMALL)
    assert status in (0, 1), debug
    assert debug.startswith("ranklens: debug: backend compiled:"), debug
    assert imported == allowed, f"imported {sorted(imported)}"


#: the same faces asking for what needs numpy: a Monte Carlo test or interval draws from numpy's generator
NUMPY_WHEN_ASKED = [
    ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "--test", "randomisation"],
    ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "--ci", "bootstrap"],
    ["gate", QRELS, BM25, "--baseline", DENSE, "--max-drop", "nDCG@10=0.5", "--test", "bootstrap"],
]


@pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")
@pytest.mark.parametrize(("args", "allowed", "backend"), FACES, ids=[" ".join(x for x in a if "/" not in x) for a, _, _ in FACES])
def test_a_face_imports_only_what_it_uses(args: list[str], allowed: set[str], backend: str) -> None:
    status, imported, debug = run_face(args)
    assert status in (0, 1), debug
    assert debug.startswith(f"ranklens: debug: {backend}:"), debug
    assert imported <= allowed, f"imported {sorted(imported - allowed)} too"


@pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")
@pytest.mark.parametrize("args", NUMPY_WHEN_ASKED, ids=[" ".join(x for x in a if "/" not in x) for a in NUMPY_WHEN_ASKED])
def test_numpy_only_when_a_face_asks_for_it(args: list[str]) -> None:
    """The counter sees numpy when it is used: the light faces above are light because they need none."""
    status, imported, debug = run_face(args)
    assert status in (0, 1), debug
    assert debug.startswith("ranklens: debug: backend compiled:"), debug
    assert "numpy" in imported and not imported & ENGINE


def test_trec_eval_with_measures_the_compiled_backend_lacks_runs_both() -> None:
    """A gain map (``ndcg.1=1,2=3``) is a parameter the compiled pass lacks: that measure runs on the reference,
    which reads the files through the data layer (pyarrow), the declared ones compiled — each said."""
    status, imported, debug = run_face(["trec-eval", "-m", "map", "-m", "ndcg.1=1,2=3", QRELS, BM25])
    assert status == 0
    if available():
        assert debug.startswith("ranklens: debug: backend compiled:"), debug
    assert "backend reference" in debug and {"numpy", "pyarrow"} <= imported
    assert not imported & {"scipy", "scipy.stats", "pandas", "polars", "ranklens.plugins"}


@pytest.mark.skipif(not available(), reason="ranklens._cexpress is not built")
@pytest.mark.parametrize("express", [True, False], ids=["express form", "full interface"])
def test_explain_runs_the_compiled_pass_and_nothing_more(express: bool) -> None:
    """``explain`` of a measure the compiled pass records prints its intermediates: no engine, no rich (the
    full interface, reached with an option the express form does not read, imports click but no more)."""
    extra = [] if express else ["--missing", "skip"]
    status, imported, debug = run_face(["explain", QRELS, DENSE, "--query", "q3", "-m", "nDCG@5", *extra])
    assert status == 0
    assert debug.startswith("ranklens: debug: backend compiled:"), debug
    assert imported == (set() if express else {"click"}), f"imported {sorted(imported)}"


def test_explain_of_a_measure_the_compiled_pass_declines_runs_the_reference() -> None:
    status, imported, debug = run_face(["explain", QRELS, DENSE, "--query", "q3", "-m", "nDCG(gain=exp)@5"])
    assert status == 0
    assert debug.startswith("ranklens: debug: backend reference:") and "gain=exp" in debug, debug
    assert {"ranklens.engine.kernels", "numpy"} <= imported
    assert not imported & {"scipy", "scipy.special", "scipy.stats", "pandas", "polars", "ranklens.plugins"}


def test_forcing_the_reference_imports_the_engine() -> None:
    """The counter sees an import: the same gate forced onto the reference loads the engine (the guard's mutation)."""
    env_backup = os.environ.get("RANKLENS_BACKEND")
    os.environ["RANKLENS_BACKEND"] = "reference"
    try:
        env = {**os.environ, "HEAVY": json.dumps(HEAVY), "RANKLENS_DEBUG": "1"}
        done = subprocess.run([sys.executable, "-c", _DRIVER, "gate", QRELS, BM25, "--min", "nDCG@10=0.1"],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    finally:
        if env_backup is None:
            os.environ.pop("RANKLENS_BACKEND")
        else:
            os.environ["RANKLENS_BACKEND"] = env_backup
    line = next(x for x in done.stderr.splitlines() if x.startswith("IMPORTED "))
    assert {"ranklens.engine.evaluator", "pyarrow"} <= set(json.loads(line.removeprefix("IMPORTED ")))
