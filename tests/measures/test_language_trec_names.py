"""The measure language knows trec_eval's names without building their table (issue 26: a plain ``compare -m AP``
starts without ``ranklens.measures.trec_names``): its list is the table's, and what a bare name reads as is the
same whether the table was built first or not."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ranklens.measures.language import TREC_NAMES
from ranklens.measures.trec_names import TREC_MEASURES


def test_the_language_list_is_the_table_of_trec_eval_names() -> None:
    assert set(TREC_NAMES) == set(TREC_MEASURES)


_READ = """
import json, sys
from ranklens.measures import parse_many
got = [str(m) for m in parse_many(sys.argv[1])]
print(json.dumps([got, "ranklens.measures.trec_names" in sys.modules]))
"""


def _fresh(name: str) -> tuple[list[str], bool]:
    done = subprocess.run([sys.executable, "-c", _READ, name], capture_output=True, text=True, check=True, timeout=120)
    got, loaded = json.loads(done.stdout)
    return got, loaded


@pytest.mark.parametrize("name", ["AP", "nDCG", "RR", "recall", "P", "map", "ndcg_cut", "Success", "num_q"])
def test_a_bare_name_reads_the_same_with_or_without_the_table(name: str) -> None:
    """In a fresh interpreter (no table) and here (the table built by the import above): the same measures, and
    the table is built only for trec_eval's own names."""
    from ranklens.measures import parse_many

    got, loaded = _fresh(name)
    assert got == [str(m) for m in parse_many(name)]
    assert loaded == (name.lower() in TREC_MEASURES)
