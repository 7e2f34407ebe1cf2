"""The rules page manages rules (issue 13: "rules are managed from the CLI and the page").

The page's static script (``static/rules.js``) writes through the JSON API with the bearer token the user
typed (kept in ``sessionStorage``, never in a cookie): in Chromium, against a real server on SQLite, it
adds a rule, adds it again (still one rule), edits it, disables it and shows the API's error for a bad
expression; a screenshot goes to the artifacts folder. At the API level, a cross-origin form POST that
carries only the login session cookie is refused (401) and stores nothing: a session never authorises writes.
"""

from __future__ import annotations

import re
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import ServerProcess
from .test_browser import Watched, browser_context, demo_server  # noqa: F401  (fixtures)

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _rules(srv: ServerProcess, project: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{srv.url}/api/v1/projects/{urllib.parse.quote(project, safe='')}/rules", headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code == 200, r.text
    return r.json()["rules"]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------------------
# the page in Chromium


@pytest.mark.browser
def test_browser_manages_rules(demo_server: ServerProcess, browser_context: Any, artifacts_dir: Path) -> None:  # noqa: F811
    srv = demo_server
    project = f"rules-{uuid.uuid4().hex[:8]}"
    auth = {"Authorization": f"Bearer {srv.token}"}
    assert httpx.post(f"{srv.url}/api/v1/projects", json={"name": project}, headers=auth).status_code == 201
    w = Watched(browser_context)
    writes: list[Any] = []
    w.page.on("request", lambda req: writes.append(req) if req.method != "GET" else None)
    page = w.page
    try:
        page.goto(f"{srv.url}/projects/{project}/rules", wait_until="load")
        # without a token: the page says writes need it, and the write controls are off
        assert page.locator("#token-needed").is_visible()
        assert "Writes (adding, editing, enabling and disabling rules) need the server's write token" in page.locator("#token-needed").inner_text()
        assert page.locator("#rule-expr").is_disabled() and page.locator("#rule-form button[type=submit]").is_disabled()
        assert page.locator("#rules-empty").is_visible()

        # a wrong token: the API's 401 is shown next to the form, nothing is stored
        page.fill("#token-input", "not-the-token")
        page.click("#token-form button[type=submit]")
        page.wait_for_function("() => !document.getElementById('rule-fieldset').disabled")
        page.fill("#rule-expr", "nDCG@10 >= 0.85")
        page.click("#rule-form button[type=submit]")
        page.locator("#rule-error").wait_for(state="visible")
        assert page.locator("#rule-error").inner_text().startswith("401 unauthorized: "), page.locator("#rule-error").inner_text()
        assert _rules(srv, project) == []

        page.fill("#token-input", srv.token)
        page.click("#token-form button[type=submit]")
        page.wait_for_function("() => !document.getElementById('rule-fieldset').disabled")
        assert not page.locator("#rule-error").is_visible()
        assert not page.locator("#token-needed").is_visible()
        assert page.locator("#token-input").input_value() == ""  # not left in the field
        assert page.evaluate("() => sessionStorage.getItem('ranklens.write-token')") == srv.token
        assert srv.token not in page.evaluate("() => document.cookie")
        assert all(srv.token not in c["value"] for c in browser_context.cookies())

        rows = page.locator("#rules-body tr")

        def add(expr: str, **fields: str) -> None:
            page.fill("#rule-expr", expr)
            for k in ("segment", "system", "name"):
                page.fill(f"#rule-{k}", fields.get(k, ""))
            page.click("#rule-form button[type=submit]")

        # add a rule: it is listed
        add("nDCG@10 >= 0.85", segment="fashion", name="fashion floor")
        page.wait_for_function("() => document.querySelectorAll('#rules-body tr').length === 1")
        assert "nDCG@10 >= 0.85 [segment fashion]" in rows.first.inner_text()
        assert "fashion floor" in rows.first.inner_text()
        assert "added" in page.locator("#rules-status").inner_text()
        (stored,) = _rules(srv, project)
        rule_id = stored["id"]

        # the same rule again: idempotent, still one rule
        add("nDCG@10 >= 0.85", segment="fashion")
        page.wait_for_function("() => document.getElementById('rules-status').textContent.includes('exists already')")
        assert rows.count() == 1
        assert [r["id"] for r in _rules(srv, project)] == [rule_id]

        # edit it in place: same id, new comparison, the segment stays
        page.click(f"#rules-body tr[data-rule-id='{rule_id}'] button.edit")
        edit = page.locator("form.edit-rule input[name=expr]")
        assert edit.input_value() == "nDCG@10 >= 0.85"
        edit.fill("nDCG@10 >= 0.9")
        page.click("form.edit-rule button[type=submit]")
        page.wait_for_function("() => document.getElementById('rules-status').textContent.includes('edited')")
        page.wait_for_function("() => document.querySelector('#rules-body tr').textContent.includes('nDCG@10 >= 0.9 [segment fashion]')")
        (edited,) = _rules(srv, project)
        assert edited["id"] == rule_id and edited["value"] == 0.9 and edited["segment"] == "fashion"

        # disable it
        page.click(f"#rules-body tr[data-rule-id='{rule_id}'] button.toggle")
        page.wait_for_selector(f"#rules-body tr.disabled[data-rule-id='{rule_id}']")
        assert page.locator(f"#rules-body tr[data-rule-id='{rule_id}'] button.toggle").inner_text() == "Enable"
        assert _rules(srv, project)[0]["enabled"] is False

        # an edit that would copy another rule: the 409 is shown next to the edit form
        add("MRR >= 0.5")
        page.wait_for_function("() => document.querySelectorAll('#rules-body tr').length === 2")
        other = next(r["id"] for r in _rules(srv, project) if r["id"] != rule_id)
        page.click(f"#rules-body tr[data-rule-id='{other}'] button.edit")
        page.fill(f"#rules-body tr[data-rule-id='{other}'] form.edit-rule input", "nDCG@10 >= 0.9 segment=fashion")
        page.click(f"#rules-body tr[data-rule-id='{other}'] form.edit-rule button[type=submit]")
        conflict = page.locator(f"#rules-body tr[data-rule-id='{other}'] form.edit-rule .error")
        conflict.wait_for(state="visible")
        assert conflict.inner_text().startswith("409 conflict: "), conflict.inner_text()
        assert [(r["measure"], r["value"]) for r in _rules(srv, project) if r["id"] == other] == [("RR", 0.5)]  # MRR is RR
        page.click(f"#rules-body tr[data-rule-id='{other}'] form.edit-rule button.cancel")
        assert page.locator("form.edit-rule").count() == 0

        # a bad expression: the API's error is shown next to the form, nothing is stored
        add("nDCG@10 >= .")
        error = page.locator("#rule-error")
        error.wait_for(state="visible")
        text = error.inner_text()
        assert re.match(r"^4\d\d \w+: ", text), text
        assert "nDCG@10 >= ." in text or "rule" in text.lower()
        assert len(_rules(srv, project)) == 2
        page.screenshot(path=str(artifacts_dir / "rules-page.png"), full_page=True)

        # every write went to this server's API, with the bearer token and without a cookie
        assert writes and all(req.url.startswith(srv.url + "/api/v1/projects/") for req in writes)
        tokens = [req.all_headers().get("authorization") for req in writes]
        assert tokens == ["Bearer not-the-token"] + [f"Bearer {srv.token}"] * (len(writes) - 1)
        assert all("cookie" not in req.all_headers() for req in writes)
        # only the refused write's network error is logged; no script error
        assert not w.page_errors and not w.dialogs, w.report()
        assert all("Failed to load resource" in m for m in w.console_errors), w.report()

        # forgetting the token turns the write controls off again
        page.click("#token-forget")
        assert page.locator("#token-needed").is_visible()
        assert page.locator("#rule-expr").is_disabled() and page.locator("#rule-form button[type=submit]").is_disabled()
        assert page.evaluate("() => sessionStorage.getItem('ranklens.write-token')") is None
    finally:
        page.close()


# ---------------------------------------------------------------------------------------------------------
# the API: a session cookie is never a write credential


def test_cross_origin_form_post_with_session_cookie_is_refused(protected_server: ServerProcess) -> None:
    srv = protected_server
    project = "csrf-target"
    assert httpx.post(f"{srv.url}/api/v1/projects", json={"name": project}, headers={"Authorization": f"Bearer {srv.token}"}).status_code == 201
    with httpx.Client(base_url=srv.url) as browser:
        assert browser.post("/login", content=f"token={srv.token}".encode(), headers=FORM).status_code == 303
        (cookie,) = list(browser.cookies.jar)
        session = {cookie.name: str(cookie.value)}
    # the session reads the rules page (protected reads) ...
    page = httpx.get(f"{srv.url}/projects/{project}/rules", cookies=session, headers={"Accept": "text/html"})
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert '<script src="/static/rules.js" defer></script>' in page.text
    assert not re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", page.text)  # no inline script
    assert srv.token not in page.text and "set-cookie" not in page.headers
    # ... but a cross-site form POST riding on it (what a CSRF page can send) is refused, before the body is read
    evil = {"Origin": "https://evil.example", "Referer": "https://evil.example/x", **FORM}
    base = f"{srv.url}/api/v1/projects/{project}/rules"
    for method, url, body in [
        ("POST", base, "expr=nDCG%4010+%3E%3D+0.1"),
        ("POST", base, '{"expr": "nDCG@10 >= 0.1"}'),
        ("PATCH", base + "/1", "enabled=false"),
        ("DELETE", base + "/1", ""),
    ]:
        r = httpx.request(method, url, content=body.encode(), headers=evil, cookies=session)
        assert r.status_code == 401, (method, r.text)
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
    # the JSON type does not help either, nor a token in the form body
    r = httpx.post(base, json={"expr": "nDCG@10 >= 0.1"}, cookies=session, headers={"Origin": "https://evil.example"})
    assert r.status_code == 401
    r = httpx.post(base, content=f"token={srv.token}&expr=x".encode(), headers=evil, cookies=session)
    assert r.status_code == 401
    assert _rules(srv, project) == []
    # with the bearer token (what the page's script sends) the same write works
    r = httpx.post(base, json={"expr": "nDCG@10 >= 0.1"}, headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code == 201, r.text
    assert len(_rules(srv, project)) == 1
