"""What a ``mypy --strict`` user of the public API writes; checked by tests/test_public_api_types.py with
``--disallow-any-expr``: no value crossing the API boundary is typed ``Any``. Only functions: importing this
module runs nothing."""

from __future__ import annotations

import ranklens
from ranklens.measures import AP, P, nDCG


def evaluate_and_read(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> float:
    res: ranklens.Results = ranklens.evaluate(qrels, run, [nDCG @ 10, AP, "P@5"])
    mean: float = res["nDCG@10"]
    per_query: dict[str | int, float] = res.per_query(P @ 5)
    by_family: float = res[AP]
    ids: tuple[str | int, ...] = res.ids
    names: list[str] = [str(m) for m in res.measures]
    notes: tuple[str, ...] = res.notes
    part: ranklens.Results = res.subset(["q1"])
    segments: dict[str, ranklens.Results] = res.by_segment({"q1": "nav"})
    return mean + by_family + sum(per_query.values()) + len(ids) + len(names) + len(notes) + part["AP"] + len(segments)


def evaluator_and_compare(qrels: dict[str, dict[str, int]], runs: dict[str, dict[str, dict[str, float]]]) -> float:
    ev = ranklens.Evaluator(AP, qrels)
    first: ranklens.Results = ev(runs["a"])
    cmp: ranklens.Comparison = ranklens.compare(qrels, runs, [AP, "nDCG@10"], baseline="a")
    systems: tuple[str, ...] = cmp.systems
    p: float = cmp.rows[0].p_value_adjusted
    page: str = cmp._repr_html_() + first._repr_html_()
    return first["AP"] + cmp.mean("a", "AP") + len(systems) + p + len(page)


def measures() -> str:
    m: ranklens.Measure = ranklens.parse("nDCG(dcg='exp-log2')@10")
    return str(m)
