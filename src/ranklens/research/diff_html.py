"""The HTML view of ``ranklens diff`` (``--html FILE``) and of ``compare --explain-diff FILE``: one
self-contained page (inline style, no script, no external resource), one section per pair of runs, each
listing its worst queries (largest drop first) linked to their decomposition.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ranklens.research.diff import RunDiff

__all__ = ["render_html"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td.l,th.l{text-align:left}.pos{color:#080}.neg{color:#b00}
section{border-top:2px solid #444;margin-top:2em}h3{margin-bottom:.2em}"""


def _num(x: float) -> str:
    return f'<span class="{"pos" if x > 0 else "neg" if x < 0 else ""}">{x:+.4f}</span>'


def _anchor(pair: int, qid: str) -> str:
    return f"p{pair}-q-" + "".join(c if c.isalnum() or c in "-_" else f"_{ord(c):x}" for c in qid)


def render_html(pairs: Sequence[tuple[str, str, RunDiff]], title: str = "ranklens diff", worst: int = 10) -> str:
    """The page for ``pairs`` (``(name A, name B, diff)``), each with its ``worst`` queries linked.

    >>> from ranklens.research.diff import diff_runs
    >>> d = diff_runs({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}, "P@1")
    >>> page = render_html([("A", "B", d)])
    >>> 'href="#p0-q-q"' in page and 'id="p0-q-q"' in page
    True
    """
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
           f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>"]
    if len(pairs) > 1:
        out.append("<ul>" + "".join(f'<li><a href="#p{i}">{escape(b)} vs {escape(a)}</a></li>'
                                    for i, (a, b, _) in enumerate(pairs)) + "</ul>")
    for i, (a, b, d) in enumerate(pairs):
        out.append(f'<section id="p{i}"><h2>{escape(b)} vs {escape(a)}</h2>')
        out.append(f"<p>{len(d.compared)} queries compared (k = {d.k}, RBO p = {d.p:g})"
                   + "".join(f"<br>note: {escape(n)}" for n in d.notes) + "</p>")
        for md in d.measures:
            kinds = ", ".join(f"{_num(v)} {k}" for k, v in md.by_kind.items())
            out.append(f"<h3>{escape(md.measure)}: {md.value_a:.4f} → {md.value_b:.4f}, Δ {_num(md.delta)} = {kinds}</h3>")
            ranked = sorted(md.per_query.items(), key=lambda kv: (kv[1][0], kv[0]))
            out.append("<p>Worst queries: " + ", ".join(
                f'<a href="#{_anchor(i, q)}">{escape(q)}</a> ({delta:+.4f})' for q, (delta, _) in ranked[:worst]) + "</p>")
        out.append('<table><tr><th class="l">query</th>' + "".join(f"<th>Δ {escape(md.measure)}</th>" for md in d.measures)
                   + "<th>RBO</th><th>Kendall τ</th></tr>")
        first = d.measures[0]
        for q in sorted(d.compared, key=lambda q: (first.per_query[q][0], q)):
            o = d.overlap[q]
            tau = "n/a" if o["kendall_tau"] is None else f"{o['kendall_tau']:+.3f}"
            out.append(f'<tr><td class="l"><a href="#{_anchor(i, q)}">{escape(q)}</a></td>'
                       + "".join(f"<td>{_num(md.per_query[q][0])}</td>" for md in d.measures)
                       + f"<td>{o['rbo']:.3f}</td><td>{tau}</td></tr>")
        out.append("</table>")
        for q in sorted(d.compared, key=lambda q: (first.per_query[q][0], q)):
            o = d.overlap[q]
            out.append(f'<div id="{_anchor(i, q)}"><h3>{escape(q)}</h3><p>entered the top {d.k}: '
                       f"{escape(', '.join(o['entered']) or 'none')}; left: {escape(', '.join(o['left']) or 'none')}</p>")
            for md in d.measures:
                delta, contributions = md.per_query[q]
                out.append(f"<p>{escape(md.measure)} Δ {_num(delta)}</p>")
                if contributions:
                    out.append('<table><tr><th class="l">document</th><th class="l">kind</th><th>rank A</th>'
                               "<th>rank B</th><th>contribution</th></tr>")
                    for c in sorted(contributions, key=lambda c: -abs(c.value)):
                        out.append(f'<tr><td class="l">{escape(c.doc)}</td><td class="l">{c.kind}</td>'
                                   f"<td>{c.rank_a or '-'}</td><td>{c.rank_b or '-'}</td><td>{_num(c.value)}</td></tr>")
                    out.append("</table>")
            out.append("</div>")
        out.append("</section>")
    out.append("</body></html>\n")
    return "\n".join(out)
