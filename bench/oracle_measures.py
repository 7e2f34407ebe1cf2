"""The measures of issue 28 item 5 against their oracles, in one run: the same seeded collection, the same
measure, ranklens' Evaluator vs ir_measures' provider (cwl_eval, compat) or pyndeval; times and ratios.

    python -m bench.oracle_measures --queries 1000 --docs 100 --repeat 3

Data (seeded, in memory): ``queries`` queries with ``docs`` retrieved documents each (distinct scores),
half of them judged on 0–3, and up to 4 intents per query for the intent-aware measures. Timed: building the
evaluator and evaluating the run from Python dicts (both sides: "from dicts"), and ranklens' evaluation alone with
the evaluator and the Run built once ("eval only"), best of ``--repeat``; a check that the values agree to 1e-9.
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import time
from collections.abc import Callable
from functools import partial

CASES = [  # (ranklens, ir_measures or pyndeval name, oracle)
    ("INST(max_rel=3)", "INST(max_rel=3)", "cwl_eval"),
    ("NERR9(max_rel=3)@10", "NERR9(max_rel=3)@10", "cwl_eval"),
    ("BPM(max_rel=3)@10", "BPM(max_rel=3)@10", "cwl_eval"),
    ("Compat", "Compat", "compat"),
    ("ERR-IA@20", "ERR-IA@20", "pyndeval"),
    ("alpha-nDCG@20", "alpha-nDCG@20", "pyndeval"),
    ("nNRBP", "nNRBP", "pyndeval"),
]


def make(queries: int, docs: int, seed: int = 28) -> tuple[dict, dict, list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    intents: list[tuple[str, str, str, int]] = []
    for q in range(queries):
        qid = f"q{q}"
        pool = [f"d{i:05d}" for i in range(docs * 2)]
        judged = rng.sample(pool, docs)
        qrels[qid] = {d: rng.choice((0, 0, 1, 2, 3)) for d in judged}
        for i in range(rng.randint(1, 4)):
            intents += [(qid, str(i), d, rng.choice((0, 1))) for d in rng.sample(judged, min(10, docs))]
        retrieved = rng.sample(pool, docs)
        run[qid] = {d: float(s) for d, s in zip(retrieved, rng.sample(range(1, 10 * docs * 2), docs))}
    return qrels, run, intents


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import ranklens

    logging.getLogger("ir_measures.cwl_eval").disabled = True
    qrels, run, intents = make(args.queries, args.docs)
    iq: dict[str, dict[str, dict[str, int]]] = {}
    for q, i, d, r in intents:
        iq.setdefault(q, {}).setdefault(i, {})[d] = r
    flat = [(q, d, s) for q in run for d, s in run[q].items()]
    print(f"{args.queries} queries × {args.docs} docs, best of {args.repeat}")
    from ranklens.data.run import Run

    run_once = Run.from_dict(run)
    print(f"{'measure':<22}{'from dicts s':>13}{'eval only s':>12}{'oracle s':>10}{'ratio':>8}  oracle     agree")
    for ours, theirs, oracle in CASES:
        t_ours, res = best(partial(_ranklens, ours, qrels, run, iq), args.repeat)
        ev = ranklens.Evaluator([ours], qrels, intents=iq)
        t_eval, _ = best(partial(ev, run_once, warn=False), args.repeat)
        if oracle == "pyndeval":
            t_theirs, values = best(partial(_pyndeval, theirs, intents, flat), args.repeat)
        else:
            t_theirs, values = best(partial(_ir_measures, theirs, qrels, run), args.repeat)
        got = res.per_query(ours)  # type: ignore[attr-defined]
        agree = all(
            math.isclose(got[q], v, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(v) and got[q] == 0.0)
            for q, v in values.items()  # type: ignore[attr-defined]
        )
        print(f"{ours:<22}{t_ours:>13.3f}{t_eval:>12.3f}{t_theirs:>10.3f}{t_theirs / t_ours:>7.1f}×  {oracle:<10} {agree}")


def _ranklens(measure: str, qrels: dict, run: dict, iq: dict) -> object:  # type: ignore[type-arg]
    import ranklens

    return ranklens.Evaluator([measure], qrels, intents=iq)(run, warn=False)


def _pyndeval(measure: str, intents: list, flat: list) -> dict[str, float]:  # type: ignore[type-arg]
    import pyndeval

    ev = pyndeval.RelevanceEvaluator([pyndeval.SubtopicQrel(*t) for t in intents], [measure])
    return {q: v[measure] for q, v in ev.evaluate(flat).items()}


def _ir_measures(measure: str, qrels: dict, run: dict) -> dict[str, float]:  # type: ignore[type-arg]
    import ir_measures

    m = ir_measures.parse_measure(measure)
    return {x.query_id: x.value for x in ir_measures.iter_calc([m], qrels, run)}


if __name__ == "__main__":
    main()
