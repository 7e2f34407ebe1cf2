"""The unpaired A/B page in headless Chromium (skipped without /usr/bin/chromium or playwright): a real server
with reads behind the token, the page shows the numbers of ``ranklens ab -f json`` on the same data (Welch,
CUPED, the always-valid interval, the sample ratio) and renders without console errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ServerProcess, eval_json
from .test_ab_unpaired import TIMES, M, P, _cli, _data
from .test_browser import Watched, browser_context  # noqa: F401  (the fixture, shared)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def ab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, Any]]]:
    import httpx

    srv = ServerProcess(f"sqlite:///{tmp_path_factory.mktemp('abbrowser') / 'ab.db'}", public_read=False).start()
    data = _data()
    auth = {"Authorization": f"Bearer {srv.token}"}
    pushes = [(f"{s}-{k}", s, TIMES[k], snap) for s in ("prod", "new") for k, snap in enumerate(data["arms"][s]["snaps"])]
    pushes.append(("pre-all", "preperiod", "2026-07-25T06:00:00Z", data["pre"]))
    try:
        for sid, system, at, vals in pushes:
            body = {"id": sid, "system": system, "at": at, "results": eval_json({u: {M: v} for u, v in vals.items()})}
            r = httpx.post(f"{srv.url}/api/v1/projects/{P}/snapshots", json=body, headers=auth, timeout=30)
            assert r.status_code == 201, r.text
        yield srv, data
    finally:
        srv.stop()


def test_unpaired_page_shows_ranklens_ab_numbers(
    ab_server: tuple[ServerProcess, dict[str, Any]], browser_context: Any, artifacts_dir: Path, tmp_path: Path  # noqa: F811
) -> None:
    import httpx

    from ranklens.report._format import num, pval

    srv, data = ab_server
    path = f"/projects/{P}/ab?baseline=prod&candidate=new&measure=nDCG%404&pre=pre-all"
    assert httpx.get(srv.url + "/api/v1" + path, timeout=30).status_code == 401  # reads stay behind the token
    assert httpx.get(srv.url + path, timeout=30).status_code == 401
    cli = _cli(tmp_path, data, ["pre-all"], 0.5)["measures"][M]
    w = Watched(browser_context)
    try:
        w.page.set_extra_http_headers({"Authorization": f"Bearer {srv.token}"})
        w.page.goto(srv.url + path, wait_until="load")
        w.page.wait_for_function("document.querySelectorAll('div.chart[data-rendered=\"true\"]').length >= 1", timeout=20_000)
        w.page.screenshot(path=str(artifacts_dir / "ab-unpaired.png"), full_page=True)
        text = w.page.locator("table.summary").inner_text()
        for expected in (
            num(cli["difference"]), num(cli["ci"][0]), num(cli["ci"][1]), pval(cli["p"]["welch"]),
            num(cli["cuped"]["difference"]), num(cli["cuped"]["ci"][0]), num(cli["cuped"]["ci"][1]),
            num(cli["sequential"]["ci"][0]), num(cli["sequential"]["ci"][1]), "4 look(s), one per UTC day",
            "Unpaired design",
        ):
            assert expected in text, (expected, text)
        assert w.clean(), w.report()
    finally:
        w.page.close()
