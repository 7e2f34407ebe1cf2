"""The plain box table (ranklens.results.box) against rich, which draws the same table in the full path."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens.results.box import box_table, box_width
from ranklens.results.fit import console, natural_width

_TEXT = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=14)
_CELL = st.one_of(_TEXT, st.floats(0, 1e6, allow_nan=False).map(lambda v: f"{v:.4f}"), st.integers(0, 10**7).map(str))


def _rich(header: list[str], rows: list[list[str]]) -> tuple[str, int]:
    from rich.table import Table

    buf = io.StringIO()
    con = console(buf, None)
    t = Table()
    t.add_column(header[0], no_wrap=True)
    for h in header[1:]:
        t.add_column(h, justify="right", no_wrap=True, overflow="fold", min_width=6)
    for row in rows:
        t.add_row(*row)
    con.print(t)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines()), natural_width(con, t)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.lists(_TEXT, min_size=n + 1, max_size=n + 1),
                                                     st.lists(st.lists(_CELL, min_size=n + 1, max_size=n + 1), max_size=6))))
def test_the_box_table_is_richs(case: tuple[list[str], list[list[str]]]) -> None:
    header, rows = case
    drawn = box_table(header, rows)
    text, width = _rich(header, rows)
    assert drawn == text
    assert box_width(header, rows) == width


def test_text_it_cannot_measure_is_left_to_rich() -> None:
    assert box_table(["measure", "run"], [["AP", "—"]]) is None
    assert box_table(["measure", "ünïcode"], [["AP", "1.0000"]]) is None
    assert box_table(["measure", "a\\tb"], [["AP", "1.0000"]]) is not None
    assert box_table(["measure", "a\tb"], [["AP", "1.0000"]]) is None


def test_run_and_query_names_are_printed_as_named_not_as_rich_markup() -> None:
    import dataclasses

    import ranklens
    from ranklens.results.rendering import render_table

    res = dataclasses.replace(ranklens.evaluate({"[q]": {"a": 1}}, {"[q]": {"a": 1.0}}, ["P@1"]), run="[bold]x")
    assert "[bold]x" in render_table([res], per_query=False, width=200)  # (the box table)
    per_query = render_table([res], per_query=True, width=200)  # (rich)
    assert "[bold]x" in per_query and "│ [q]" in per_query
