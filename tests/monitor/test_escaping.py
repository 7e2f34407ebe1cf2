"""Hostile project, system, segment and tag names are shown as text on every page, never as markup."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

import httpx

from .conftest import TOKEN, ServerProcess, eval_json

HOSTILE_PROJECT = "<img src=x onerror=alert('p')>&\"quoted\""
HOSTILE_SYSTEM = "</script><script>alert('s')</script>"
HOSTILE_SEGMENT = "<svg onload=alert('g')>"
HOSTILE_TAG = "\"><b onmouseover=alert('t')>x</b>"
MARKUP = ["<img src=x", "<script>alert", "<svg onload", "<b onmouseover"]


def seed_hostile(client: Any) -> str:
    pq = {f"q{i}": {"nDCG@10": 0.3 + 0.05 * i} for i in range(8)}
    segs = {f"q{i}": HOSTILE_SEGMENT if i % 2 else "plain" for i in range(8)}
    client.add_rule(HOSTILE_PROJECT, "nDCG@10 >= 0.9", segment=HOSTILE_SEGMENT)
    client.push(eval_json(pq), project=HOSTILE_PROJECT, system=HOSTILE_SYSTEM, id="h1", tags={HOSTILE_TAG: HOSTILE_TAG},
                query_segments=segs, at="2026-08-01T00:00:00Z")
    client.push(eval_json(pq), project=HOSTILE_PROJECT, system="plain", id="h2", query_segments=segs, at="2026-08-01T00:00:00Z")
    return urllib.parse.quote(HOSTILE_PROJECT, safe="")


def hostile_pages(p: str) -> list[str]:
    s = urllib.parse.quote(HOSTILE_SYSTEM, safe="")
    g = urllib.parse.quote(HOSTILE_SEGMENT, safe="")
    return [
        "/",
        f"/projects/{p}",
        f"/projects/{p}/series?segment={g}&system={s}",
        f"/projects/{p}/segments",
        f"/projects/{p}/ab?a={s}&b=plain&segment={g}",
        f"/projects/{p}/snapshots",
        f"/projects/{p}/snapshots/h1?compare=h2",
        f"/projects/{p}/rules",  # rows rebuilt by rules.js from the JSON, with textContent
        f"/projects/{p}/alerts",
        "/webhooks",
    ]


def test_hostile_names_are_escaped_everywhere(server: ServerProcess, client: Any) -> None:
    p = seed_hostile(client)
    for path in hostile_pages(p):
        r = httpx.get(server.url + path, headers={"Authorization": f"Bearer {TOKEN}"})  # /webhooks needs it
        assert r.status_code == 200, (path, r.text[:500])
        text = r.text
        for bad in MARKUP:
            assert bad not in text, (path, bad)
        # JSON blocks inside <script> never contain a raw "<" (so no "</script>" can end them early)
        for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', text, flags=re.DOTALL):
            assert "<" not in block and ">" not in block, path
    overview = httpx.get(server.url + f"/projects/{p}").text
    assert "&lt;img src=x onerror=alert(&#39;p&#39;)&gt;&amp;&#34;quoted&#34;" in overview
    assert "&lt;/script&gt;&lt;script&gt;alert(&#39;s&#39;)&lt;/script&gt;" in overview
