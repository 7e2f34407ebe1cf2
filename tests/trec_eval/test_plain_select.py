"""The plain selection of ``ranklens trec-eval`` (:mod:`ranklens.trec_eval.plain`: trec_eval's names at their
default parameters, named without the measure language) gives the columns the measure language gives: the
same printed names in the same order, and for each a measure the compiled pass computes the same way (family,
cutoff, passed parameter), with every other parameter at the registry's default."""

from __future__ import annotations

import pytest

from ranklens.express import _spec, measures_declined
from ranklens.measures.base import MIN_GEO_MEAN
from ranklens.trec_eval import table
from ranklens.trec_eval.plain import PLAIN, select_plain
from ranklens.trec_eval.select import select

ARGS = [[name] for name in PLAIN] + [[], ["official"], ["all_trec"], ["set"], ["map", "relstring", "P", "runid"]] + [
    ["ndcg_cut.10", "map", "P.5"], ["P.20,5,010"], ["P.7", "P.3"], ["official", "P.3"], ["recall.1000000", "unj.3"],
    ["success.2,4"], ["relative_P.1", "map_cut.100,1"],
]


@pytest.mark.parametrize("args", ARGS, ids=[" ".join(a) or "(none)" for a in ARGS])
def test_plain_columns_are_the_measure_languages(args: list[str]) -> None:
    plain, full = select_plain(args), select(args)
    assert plain is not None
    assert [s.entry for s in plain] == [s.entry for s in full]
    for p, f in zip(plain, full):
        assert [name for name, _ in p.columns] == [name for name, _ in f.columns]
        assert p.relstring_len == f.relstring_len
        for (name, mine), (_, theirs) in zip(p.columns, f.columns):
            if theirs is None:
                assert mine is None, name
                continue
            assert (mine.name, mine.cutoff, _spec(mine)) == (theirs.name, theirs.cutoff, _spec(theirs)), name
            assert measures_declined([theirs]) is None, name  # (the registry's measure: declared, defaults)


@pytest.mark.parametrize("args", [["P.5,5"], ["P.0"], ["P.5x"], ["P."], ["map.5"], ["iprec_at_recall.0.5"], ["official.5"],
                                  ["dcg"], ["yaap"], ["nope"], ["map", "ndcg.1=2"], ["prefs_simp"]])
def test_anything_else_goes_to_the_measure_language(args: list[str]) -> None:
    assert select_plain(args) is None


def test_the_geometric_floor_is_the_aggregates() -> None:
    assert table.MIN_GEO_MEAN == MIN_GEO_MEAN
