"""The monitoring web application (FastAPI): the ``/api/v1`` JSON API and the server-rendered dashboard.

Every dashboard page at ``/...`` has a JSON twin at ``/api/v1/...``; both routes come from one row of
:data:`ranklens.monitor.routes.PAGES` and serve the same dict (``/`` ↔ ``/api/v1/projects``). Writes need ``Authorization: Bearer <RANKLENS_TOKEN>``, checked before the body is read
(:mod:`ranklens.monitor.security`); reads need the token too unless ``public_read`` is set (as the header,
or the signed session cookie that the throttled ``/login`` form sets for browsers and ``/logout`` ends,
:mod:`ranklens.monitor.sessions`). Wrong bearer tokens are throttled per client like failed logins, and
the client is the connection's peer unless that is a configured proxy (:mod:`ranklens.monitor.clients`). The webhook list and delivery log (``/webhooks``) always need
the token or a session, and show webhook URLs with credentials and query strings redacted. Webhook targets
are checked by :mod:`ranklens.monitor.ssrf`. Every API error is ``{"error": {"status", "code", "message",
"details"?}}``.
"""

from __future__ import annotations

import logging
import os
import secrets
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import text
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ranklens import __version__
from ranklens.errors import InputError, RanklensError
from ranklens.monitor import routes
from ranklens.monitor.clients import BearerThrottle, TrustedProxies, parse_proxies
from ranklens.monitor.db import Database
from ranklens.monitor.errors import MonitorError, TooManyRequests, Unauthorized
from ranklens.monitor.ratelimit import DEFAULT_RATE, LIMITED, ReadLimit, parse_rate
from ranklens.monitor.refresher import Refresher
from ranklens.monitor.rules import edit_rule
from ranklens.monitor.schemas import (
    INT32_MAX,
    DatasetCreated,
    DatasetIn,
    Error,
    Health,
    ProjectCreated,
    ProjectIn,
    RuleIn,
    RulePatch,
    RuleResponse,
    RunIn,
    SnapshotCreated,
    SnapshotIn,
    WebhookCreated,
    WebhookIn,
    check_project_name,
)
from ranklens.monitor.security import (
    NulGate,
    RequestGate,
    bearer_token,
    token_matches,
    token_weakness,
)
from ranklens.monitor.service import Monitor
from ranklens.monitor.sessions import LoginThrottle, SessionSigner
from ranklens.monitor.ssrf import TargetPolicy, redact_url
from ranklens.monitor.webhooks import DeliveryWorker, WebhookPolicy

__all__ = ["Settings", "create_app"]

log = logging.getLogger("ranklens.monitor")
STATIC = Path(__file__).with_name("static")
COOKIE = "ranklens_session"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _interval(text: str | None) -> float | None:
    """``RANKLENS_REFRESH_INTERVAL``: a duration (``5m``, ``1h``) or seconds; empty, ``0`` or ``off``: None.

    >>> _interval("5m"), _interval("off"), _interval(None)
    (300.0, None, None)
    """
    from ranklens.production.logs import parse_duration

    if not text or text.strip().lower() in {"0", "off", "none"}:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = parse_duration(text)
    if not seconds > 0:
        raise InputError(f"RANKLENS_REFRESH_INTERVAL must be a positive duration such as 5m; got {text!r}")
    return seconds


@dataclass
class Settings:
    """Server configuration; :meth:`from_env` reads ``RANKLENS_DB``, ``RANKLENS_TOKEN``,
    ``RANKLENS_PUBLIC_READ`` (reads without the token; ``RANKLENS_PROTECT_READS=1`` keeps them protected
    whatever else says), ``RANKLENS_TRUSTED_PROXIES`` (comma-separated addresses or networks whose
    ``X-Forwarded-For`` is believed), ``RANKLENS_MAX_BODY``, ``RANKLENS_WEBHOOK_*`` (``RANKLENS_WEBHOOK_ALLOW``:
    comma-separated ``HOST:PORT`` webhook targets exempt from the public-address check) and
    ``RANKLENS_SESSION_SECRET`` (the login-session key; random per process if unset) and
    ``RANKLENS_LOGIN_MAX_FAILURES`` (failed credentials per client in 5 minutes before a lockout, default 5),
    ``RANKLENS_READ_RATE`` (the per-client limit of expensive reads, ``BURST/SECONDS`` or ``off``; default
    ``600/60``, :mod:`ranklens.monitor.ratelimit`) and ``RANKLENS_REFRESH_INTERVAL`` (the background refresh of
    the production series, ``5m``, ``1h`` or seconds; off when unset, :mod:`ranklens.monitor.refresher`)."""

    db_url: str | None = None
    token: str | None = None
    public_read: bool = False  # reads without the token (the default: reads need it, like writes)
    trusted_proxies: list[str] = field(default_factory=list)
    max_body: int = 64 * 1024 * 1024
    webhook: WebhookPolicy = field(default_factory=WebhookPolicy)
    run_worker: bool = True
    webhook_allow: list[str] = field(default_factory=list)
    session_secret: str | None = None
    login_max_failures: int = 5
    login_window: float = 300.0
    read_rate: str = DEFAULT_RATE  # the per-client limit of expensive reads, BURST/SECONDS or "off"
    refresh_interval: float | None = None  # seconds between background refreshes of the production series; None: off

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        env = os.environ
        policy = WebhookPolicy(
            max_attempts=int(env.get("RANKLENS_WEBHOOK_MAX_ATTEMPTS", "8")),
            backoff_base=float(env.get("RANKLENS_WEBHOOK_BACKOFF", "2.0")),
            timeout=float(env.get("RANKLENS_WEBHOOK_TIMEOUT", "10")),
            poll_interval=float(env.get("RANKLENS_WEBHOOK_POLL", "1.0")),
        )
        s = cls(
            db_url=env.get("RANKLENS_DB"),
            token=env.get("RANKLENS_TOKEN") or None,
            public_read=_truthy(env.get("RANKLENS_PUBLIC_READ")) and not _truthy(env.get("RANKLENS_PROTECT_READS")),
            trusted_proxies=[h.strip() for h in env.get("RANKLENS_TRUSTED_PROXIES", "").split(",") if h.strip()],
            max_body=int(env.get("RANKLENS_MAX_BODY", str(64 * 1024 * 1024))),
            webhook=policy,
            webhook_allow=[h.strip() for h in env.get("RANKLENS_WEBHOOK_ALLOW", "").split(",") if h.strip()],
            session_secret=env.get("RANKLENS_SESSION_SECRET") or None,
            read_rate=env.get("RANKLENS_READ_RATE") or DEFAULT_RATE,
            login_max_failures=int(env.get("RANKLENS_LOGIN_MAX_FAILURES", "5")),
            refresh_interval=_interval(env.get("RANKLENS_REFRESH_INTERVAL")),
        )
        for k, v in overrides.items():
            if v is not None:
                setattr(s, k, v)
        return s


# ---------------------------------------------------------------------------------------------------------
# errors: one JSON shape


def error_body(status: int, code: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"status": status, "code": code, "message": message}
    if details:
        err["details"] = details
    return {"error": err}


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "too_many_requests",
    500: "internal_error",
}


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error_response(request: Request, status: int, code: str, message: str, details: list[Any] | None = None) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if _is_api(request) or "text/html" not in request.headers.get("accept", ""):
        return JSONResponse(error_body(status, code, message, details), status_code=status, headers=headers)
    env: Environment = request.app.state.templates
    page = env.get_template("error.html").render(
        status=status, code=code, message=message, details=details, figures={}, json_url=None, **_base(request)
    )
    return HTMLResponse(page, status_code=status, headers=headers)


def _clean_details(errors: list[Any]) -> list[dict[str, Any]]:
    out = []
    for e in errors[:50]:
        loc = [str(x) for x in e.get("loc", ())]
        out.append({"loc": loc, "message": str(e.get("msg", ""))[:500], "type": e.get("type")})
    return out


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        details = _clean_details(list(exc.errors()))
        first = details[0] if details else {"loc": [], "message": "invalid request"}
        where = ".".join(x for x in first["loc"] if x not in ("body",)) or "body"
        return _error_response(request, 422, "invalid", f"{where}: {first['message']}", details)

    @app.exception_handler(PydanticValidationError)
    async def _model(request: Request, exc: PydanticValidationError) -> Response:
        # a model checked inside a route (an edited rule merged with its stored fields): still a 422
        details = _clean_details(list(exc.errors()))
        first = details[0] if details else {"loc": [], "message": "invalid request"}
        return _error_response(request, 422, "invalid", f"{'.'.join(first['loc']) or 'body'}: {first['message']}", details)

    @app.exception_handler(MonitorError)
    async def _monitor(request: Request, exc: MonitorError) -> Response:
        return _error_response(request, exc.status, exc.code, str(exc))

    @app.exception_handler(RanklensError)
    async def _ranklens(request: Request, exc: RanklensError) -> Response:
        status = 400 if isinstance(exc, InputError) else 500
        return _error_response(request, status, _HTTP_CODES[status], str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        code = _HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such page: {request.url.path}"
        resp = _error_response(request, exc.status_code, code, message)
        for k, v in (exc.headers or {}).items():  # e.g. Allow on a 405
            resp.headers.setdefault(k, v)
        return resp

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> Response:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return _error_response(request, 500, "internal_error", "internal server error")


# ---------------------------------------------------------------------------------------------------------
# middleware: security headers (the token and body-size gate is ranklens.monitor.security.RequestGate)


class SecurityHeaders:
    """nosniff, no referrer, no framing on every response; a Content-Security-Policy on HTML pages."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                for k, v in _SECURITY_HEADERS:
                    if k not in names:
                        headers.append((k, v))
                ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if ctype.startswith(b"text/html"):
                    headers.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


# ---------------------------------------------------------------------------------------------------------
# the app


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI application. The database is migrated and the webhook worker started on startup."""
    settings = settings or Settings.from_env()
    if not settings.token:
        settings.token = secrets.token_urlsafe(24)
        log.warning("RANKLENS_TOKEN is not set; writes need this generated token: %s", settings.token)
    weak = token_weakness(settings.token)
    if weak:
        log.warning("the token is weak (%s): anyone who can reach the server can guess it", weak)
    proxies = parse_proxies(settings.trusted_proxies)
    targets = TargetPolicy.from_allow(settings.webhook_allow)
    db = Database(settings.db_url)
    worker = DeliveryWorker(db, settings.webhook, targets=targets)
    # sessions are bound to the token in force: a new token ends every session of the old one
    signer = SessionSigner(settings.session_secret.encode() if settings.session_secret else None, bind=settings.token)
    throttle = LoginThrottle(max_failures=settings.login_max_failures, window=settings.login_window)
    monitor = Monitor(db, on_delivery=worker.wake)
    refresher = Refresher(db, settings.refresh_interval, on_delivery=worker.wake) if settings.refresh_interval else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db.migrate()
        if settings.run_worker:
            worker.start()
        if refresher is not None:
            refresher.start()
        try:
            yield
        finally:
            if refresher is not None:
                refresher.stop()
            worker.stop()
            db.dispose()

    app = FastAPI(
        title="ranklens monitor",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # the Swagger UI page would load its scripts from a CDN; the OpenAPI JSON is served
        redoc_url=None,
        openapi_url="/api/v1/openapi.json",
    )
    app.state.settings = settings
    app.state.db = db
    app.state.monitor = monitor
    app.state.worker = worker
    app.state.refresher = refresher
    env = Environment(loader=PackageLoader("ranklens.monitor", "templates"), autoescape=select_autoescape(default=True))
    env.filters["u"] = lambda v: urllib.parse.quote(str(v), safe="")
    env.filters["num"] = _fmt_num
    env.filters["when"] = _fmt_time
    env.filters["pval"] = _fmt_p
    app.state.templates = env
    _install_error_handlers(app)

    app.state.targets = targets
    rate = parse_rate(settings.read_rate)
    if rate is not None:
        app.add_middleware(ReadLimit, token=settings.token, burst=rate[0], period=rate[1])  # type: ignore[arg-type]
    app.add_middleware(RequestGate, token=settings.token, limit=settings.max_body)  # type: ignore[arg-type]
    app.add_middleware(NulGate)  # type: ignore[arg-type]
    app.add_middleware(BearerThrottle, token=settings.token, throttle=throttle)  # type: ignore[arg-type]
    app.add_middleware(SecurityHeaders)  # type: ignore[arg-type]
    app.add_middleware(TrustedProxies, proxies=proxies)  # type: ignore[arg-type]  # outermost: the client address

    def check_token(given: str | None) -> bool:
        assert settings.token is not None
        return token_matches(given, settings.token)

    def bearer(request: Request) -> str | None:
        return bearer_token(request.headers.get("authorization"))

    def require_write(request: Request) -> None:
        if not check_token(bearer(request)):
            raise Unauthorized("writes need the server's token: Authorization: Bearer <RANKLENS_TOKEN>")

    def has_token_or_session(request: Request) -> bool:
        return check_token(bearer(request)) or signer.valid(request.cookies.get(COOKIE))

    def require_read(request: Request) -> None:
        if settings.public_read or has_token_or_session(request):
            return
        raise Unauthorized("reading needs the token: send Authorization: Bearer <token> or log in at /login")

    def require_private(request: Request) -> None:
        if not has_token_or_session(request):
            raise Unauthorized("the webhook list and delivery log need the token: Authorization: Bearer <token>, or log in at /login")

    Write = Depends(require_write)
    Read = Depends(require_read)
    Private = Depends(require_private)

    # -- static ---------------------------------------------------------------------------------------
    plotly_js = _plotly_path()

    @app.get("/static/plotly.min.js", include_in_schema=False)
    def plotly() -> Response:
        if plotly_js is None:
            return Response("/* plotly is not installed: pip install 'ranklens[monitor]' */", media_type="text/javascript")
        return FileResponse(plotly_js, media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # -- API: health, projects ------------------------------------------------------------------------
    @app.get("/api/v1/health", response_model=Health)
    def health() -> dict[str, Any]:
        with db.read() as s:
            s.execute(text("SELECT 1"))
        return {"status": "ok", "version": __version__, "database": db.dialect}

    @app.post("/api/v1/projects", dependencies=[Write], status_code=201, response_model=ProjectCreated)
    def api_create_project(body: ProjectIn, response: Response) -> dict[str, Any]:
        out, created = monitor.create_project(body)
        if not created:
            response.status_code = 200
        return {"project": out, "created": created}

    @app.patch("/api/v1/projects/{project}", dependencies=[Write], responses={404: {"model": Error, "description": "no such project"}})
    def api_patch_project(project: str, body: routes.ProjectPatch) -> dict[str, Any]:
        # project settings: {"headline_measure": "nDCG@10"} (null: the default, nDCG@10 when present)
        return {"project": monitor.db.write(lambda s: routes.set_project_settings(s, project, body))}

    @app.post("/api/v1/projects/{project}/snapshots", dependencies=[Write], status_code=201, response_model=SnapshotCreated)
    def api_ingest(project: str, body: SnapshotIn, response: Response) -> dict[str, Any]:
        out, created = monitor.ingest(_project_path(project), body)
        if not created:
            response.status_code = 200
        out.pop("deliveries_queued", None)
        return {"snapshot": out, "created": created}

    @app.post("/api/v1/projects/{project}/runs", dependencies=[Write], status_code=201, response_model=SnapshotCreated)
    def api_run(project: str, body: RunIn, response: Response) -> dict[str, Any]:
        out, created = monitor.evaluate_run(_project_path(project), body)
        if not created:
            response.status_code = 200
        out.pop("deliveries_queued", None)
        return {"snapshot": out, "created": created}

    @app.post("/api/v1/projects/{project}/ingest", dependencies=[Write], openapi_extra={"requestBody": _INGEST_BODY})
    async def api_ingest_logs(project: str, request: Request) -> dict[str, Any]:
        # production logs: {"impressions": [...], "events": [...]}, each event validated on its own
        # (ranklens.monitor.ingest); the token, the body limit and the wrong-token throttle are the write
        # routes' (RequestGate, BearerThrottle)
        from starlette.concurrency import run_in_threadpool

        from ranklens.monitor.ingest import store_batch, validate_batch

        name = _project_path(project)
        raw = await request.body()

        def work() -> dict[str, Any]:
            try:
                body = _loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise MonitorError(f"the body is not JSON: {exc}") from None
            batch = validate_batch(body)  # before the write transaction: the database is held only to store
            return db.write(lambda s: store_batch(s, name, batch))

        return await run_in_threadpool(work)

    @app.post("/api/v1/projects/{project}/windows/refresh", dependencies=[Write], openapi_extra={"requestBody": _REFRESH_BODY})
    async def api_refresh_windows(project: str, request: Request) -> dict[str, Any]:
        # recompute the per-window series from the stored logs (ranklens.monitor.production); the body may
        # set the production settings: {"labels": {...}, "window": "1d", "label_delay": "24h", "measures": [...]}
        from starlette.concurrency import run_in_threadpool

        from ranklens.monitor.production import refresh

        raw = await request.body()
        try:
            body = _loads(raw) if raw.strip() else {}
        except (ValueError, UnicodeDecodeError) as exc:
            raise MonitorError(f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise MonitorError("the body must be a JSON object of production settings (or empty)")
        name = _project_path(project)
        return await run_in_threadpool(lambda: refresh(db, name, body))

    @app.post("/api/v1/projects/{project}/datasets", dependencies=[Write], status_code=201, response_model=DatasetCreated)
    def api_add_dataset(project: str, body: DatasetIn, response: Response) -> dict[str, Any]:
        out, created = monitor.add_dataset(_project_path(project), body)
        if not created:
            response.status_code = 200
        return {"dataset": out, "created": created}

    @app.post("/api/v1/projects/{project}/rules", dependencies=[Write], status_code=201, response_model=RuleResponse)
    def api_add_rule(project: str, body: RuleIn) -> dict[str, Any]:
        return {"rule": monitor.add_rule(_project_path(project), body)}

    @app.patch(
        "/api/v1/projects/{project}/rules/{rule_id}", dependencies=[Write], response_model=RuleResponse,
        responses={409: {"model": Error, "description": "the edit would make the rule a copy of another rule of the project"}},
    )
    def api_patch_rule(project: str, rule_id: RuleId, body: RulePatch) -> dict[str, Any]:
        # edit in place: any rule field; {"enabled": false} disables (ranklens.monitor.rules.edit_rule)
        patch = body.model_dump(exclude_unset=True)
        return {"rule": monitor.db.write(lambda s: edit_rule(s, project, rule_id, patch))}

    @app.delete("/api/v1/projects/{project}/rules/{rule_id}", dependencies=[Write], response_model=RuleResponse)
    def api_delete_rule(project: str, rule_id: RuleId) -> dict[str, Any]:
        return {"rule": monitor.set_rule_enabled(project, rule_id, False)}

    @app.post("/api/v1/webhooks", dependencies=[Write], status_code=201, response_model=WebhookCreated)
    def api_add_webhook(body: WebhookIn) -> dict[str, Any]:
        targets.check_registration(body.url)
        hook = monitor.add_webhook(body)
        return {"webhook": {**hook, "url": redact_url(hook["url"])}}

    # -- read routes: every dashboard page and its /api/v1 JSON twin, from one table -------------------
    def page(request: Request, template: str, data: dict[str, Any], figures: dict[str, Any]) -> HTMLResponse:
        twin = "/api/v1/projects" if request.url.path == "/" else "/api/v1" + request.url.path
        if request.url.query:
            twin += "?" + request.url.query
        html = env.get_template(template).render(page=data, figures=figures, json_url=twin, **_base(request))
        return HTMLResponse(html)

    routes.add_pages(app, db, Read, page, private=Private)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]

    # -- login ----------------------------------------------------------------------------------------
    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request) -> HTMLResponse:
        return HTMLResponse(env.get_template("login.html").render(failed=False, figures={}, json_url=None, **_base(request)))

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        client = request.client.host if request.client else "?"
        wait = throttle.retry_after(client)
        if wait is not None:  # locked out: the token is not even compared
            exc = TooManyRequests(f"too many failed logins from {client}; try again in {wait} s")
            resp = _error_response(request, exc.status, exc.code, str(exc))
            resp.headers["Retry-After"] = str(wait)
            return resp
        raw = await request.body()
        form = urllib.parse.parse_qs(raw[:4096].decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0]
        if not check_token(token):
            throttle.failed(client)
            return HTMLResponse(
                env.get_template("login.html").render(failed=True, figures={}, json_url=None, **_base(request)), status_code=401
            )
        throttle.succeeded(client)
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(
            COOKIE, signer.issue(), max_age=int(signer.max_age), httponly=True, samesite="strict",
            secure=request.url.scheme == "https",
        )
        return resp

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request) -> Response:
        # ends the session on the server too: the cookie's value is refused from now on, wherever it is kept
        signer.revoke(request.cookies.get(COOKIE))
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(COOKIE, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return resp

    return app


RuleId = Annotated[int, PathParam(ge=1, le=INT32_MAX)]

# the bodies of the production-log routes, read by the routes themselves (each event is checked on its own,
# ranklens.monitor.ingest): described here for the OpenAPI document
_INGEST_BODY = {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "additionalProperties": False,
    "properties": {
        "impressions": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "request": {"type": "string"}, "query": {"type": "string"}, "item": {"type": "string"},
            "position": {"type": "integer", "minimum": 1}, "score": {"type": "number"},
            "timestamp": {"type": ["string", "number"]}, "segment": {"type": "string"}, "system": {"type": "string"}}}},
        "events": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "request": {"type": "string"}, "item": {"type": "string"}, "event": {"type": "string"},
            "timestamp": {"type": ["string", "number"]}, "value": {"type": "number"}}}},
    }}}}}
_REFRESH_BODY = {"required": False, "content": {"application/json": {"schema": {
    "type": "object", "additionalProperties": False,
    "properties": {"labels": {"type": "object"}, "window": {"type": "string"}, "label_delay": {"type": "string"},
                   "measures": {"type": "array", "items": {"type": "string"}}, "reference_window": {"type": ["string", "null"]},
                   "position_bias": {"enum": ["em", "intervention", None]}},
    }}}}  # the id column is 32-bit: beyond it is a 422, not a database error


# ---------------------------------------------------------------------------------------------------------
# the OpenAPI document: the bearer scheme, the error shape and every status code of every route

_CREATED_OR_SAME = {"/api/v1/projects", "/api/v1/projects/{project}/snapshots", "/api/v1/projects/{project}/runs", "/api/v1/projects/{project}/datasets"}


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(title=app.title, version=app.version, routes=app.routes)
    components = doc.setdefault("components", {})
    components.setdefault("securitySchemes", {})["bearer"] = {"type": "http", "scheme": "bearer"}
    schemas = components.setdefault("schemas", {})
    err = Error.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(err.pop("$defs", {}))
    schemas["Error"] = err
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    private = {p.api_path for p in routes.PAGES if p.private}
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            responses = op.setdefault("responses", {})
            for code, why in _status_codes(method.upper(), path, op, private).items():
                responses[str(code)] = {
                    "description": why,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                }
            if method == "post" and path in _CREATED_OR_SAME and "201" in responses:
                responses["200"] = {**responses["201"], "description": "already stored with the same content (created: false)"}
            if method != "get" or path in private:
                op["security"] = [{"bearer": []}]
            elif path != "/api/v1/health":
                op["security"] = [{}, {"bearer": []}]  # reads need the token unless the server runs with --public-read
    app.openapi_schema = doc
    return doc


def _status_codes(method: str, path: str, op: dict[str, Any], private: set[str]) -> dict[int, str]:
    """The error statuses one operation can answer."""
    if path == "/api/v1/health":
        return {}
    codes: dict[int, str] = {}
    if op.get("parameters") or "requestBody" in op:
        codes[400] = "a value the server cannot use (unknown measure, bad rule, target not allowed, bad Content-Length)"
        codes[422] = "the request does not match the schema"
    if method == "GET" and path not in private:
        codes[401] = "no or wrong token (reads need it unless the server runs with --public-read)"
    else:
        codes[401] = "no or wrong token"
    if method != "GET":
        codes[413] = "the body is larger than the server's limit (--max-body)"
    if "{project}" in path and (method == "GET" or "{rule_id}" in path or path.endswith(("/runs", "/windows/refresh"))):
        codes[404] = "no such project (or rule, snapshot, dataset, system)"
    if method == "POST" and path in _CREATED_OR_SAME and path != "/api/v1/projects":
        codes[409] = "the same id with different content is already stored"
    if method == "GET" and LIMITED.match(path):
        codes[429] = "too many reads, or too many wrong tokens, from this client: wait Retry-After seconds"
    else:
        codes[429] = "too many wrong tokens from this client: wait Retry-After seconds"
    return codes


def _base(request: Request) -> dict[str, Any]:
    return {"version": __version__, "path": request.url.path, "logged_in": COOKIE in request.cookies}


def _project_path(project: str) -> str:
    try:
        return check_project_name(project)
    except InputError as exc:
        raise MonitorError(str(exc)) from None


def _plotly_path() -> Path | None:
    try:
        import plotly
    except ImportError:  # pragma: no cover - plotly is part of the monitor extra
        return None
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return path if path.exists() else None


def _loads(raw: bytes) -> Any:
    """JSON from bytes: orjson when installed (several times faster on a batch of events), else json."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is optional
        import json

        return json.loads(raw)
    return orjson.loads(raw)


def _fmt_num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "—"
    try:
        return f"{float(v):.{digits}f}"
    except (TypeError, ValueError):
        return str(v)


def _fmt_p(v: Any) -> str:
    """A p-value: 4 decimals, or 2 significant digits below 0.001 (``3.2e-07``)."""
    if v is None:
        return "—"
    v = float(v)
    return f"{v:.2g}" if 0 < v < 0.001 else ("< 1e-300" if v == 0 else f"{v:.4f}")


def _fmt_time(v: str | None) -> str:
    if not v:
        return "—"
    return v.replace("T", " ")[:16] + " UTC"
