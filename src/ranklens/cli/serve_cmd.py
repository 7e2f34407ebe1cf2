"""``ranklens serve [--db URL] [--host 127.0.0.1] [--port 8000]``: the monitoring service and dashboard."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import click

from ranklens.errors import InputError, MissingDependencyError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_url", metavar="URL", help="Database: a SQLite file path or sqlite:///FILE (default "
              "ranklens-monitor.db, or $RANKLENS_DB) or postgresql://user@host/db.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; 0.0.0.0 exposes it to the network.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one.")
@click.option("--token", envvar="RANKLENS_TOKEN", help="Token that writes (and, by default, reads) must send "
              "($RANKLENS_TOKEN). If unset, one is generated and printed.")
@click.option("--public-read", is_flag=True, default=None, help="Let anyone read without the token: the dashboard "
              "and the read API ($RANKLENS_PUBLIC_READ=1). Reads stay rate-limited per client.")
@click.option("--protect-reads", is_flag=True, default=None, hidden=True, help="Reads need the token (the default now).")
@click.option("--trusted-proxy", "trusted_proxy", multiple=True, metavar="ADDR",
              help="A reverse proxy (address or network, repeatable; also $RANKLENS_TRUSTED_PROXIES) whose "
              "X-Forwarded-For names the client. Without one, forwarded headers are ignored.")
@click.option("--allow-weak-token", is_flag=True, help="Start although the token is weak (under 16 characters or "
              "about 64 bits) while listening beyond loopback.")
@click.option("--webhook-allow", "webhook_allow", multiple=True, metavar="HOST:PORT",
              help="Allow webhooks to this host and port although it is not a public address (repeatable; HOST:* "
              "for any port; also $RANKLENS_WEBHOOK_ALLOW, comma-separated). For local testing, e.g. 127.0.0.1:9000.")
@click.option("--demo", is_flag=True, help="Seed the demo project first if the database has no project.")
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def command(
    db_url: str | None,
    host: str,
    port: int,
    token: str | None,
    public_read: bool | None,
    protect_reads: bool | None,
    trusted_proxy: tuple[str, ...],
    allow_weak_token: bool,
    webhook_allow: tuple[str, ...],
    demo: bool,
    log_level: str,
) -> None:
    """Run the monitoring service: the /api/v1 ingest API and the dashboard at /.

    \b
    Examples:
      ranklens serve                                  # SQLite file ./ranklens-monitor.db
      ranklens serve --demo                           # with 90 days of demo history
      ranklens serve --webhook-allow 127.0.0.1:9000   # let webhooks reach a local receiver
      ranklens serve --public-read                    # the dashboard without logging in
      RANKLENS_TOKEN=$(cat token) ranklens serve --host 0.0.0.0 --trusted-proxy 10.0.0.2 \
          --db postgresql://ranklens@localhost/ranklens
    """
    try:
        import uvicorn

        from ranklens.monitor.app import Settings, create_app
        from ranklens.monitor.db import normalise_url
        from ranklens.monitor.protocol import (
            DEFAULT_HEADER_TIMEOUT,
            DEFAULT_MAX_HEADER,
            guarded_protocol,
        )
        from ranklens.monitor.security import token_weakness
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "fastapi", "monitor", "ranklens serve") from None

    url = normalise_url(db_url)
    if demo:
        from ranklens.monitor.demo import seed_if_empty

        if seed_if_empty(url):
            click.echo("seeded the demo project 'demo-search' (90 days, 2 systems)", err=True)
    settings = Settings.from_env(db_url=url, token=token or None, public_read=public_read)
    if protect_reads:
        settings.public_read = False
    settings.webhook_allow = [*settings.webhook_allow, *webhook_allow]
    settings.trusted_proxies = [*settings.trusted_proxies, *trusted_proxy]
    try:
        from ranklens.monitor.ssrf import TargetPolicy

        TargetPolicy.from_allow(settings.webhook_allow)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--webhook-allow") from None
    try:
        from ranklens.monitor.clients import parse_proxies

        parse_proxies(settings.trusted_proxies)
    except InputError as exc:
        raise _Refused(str(exc)) from None
    generated = not settings.token
    if generated:
        import secrets

        settings.token = secrets.token_urlsafe(24)
    assert settings.token is not None
    weak = token_weakness(settings.token)
    if weak and not _loopback(host) and not allow_weak_token:
        raise _Refused(
            f"the token is too weak to listen on {host}: {weak}; use a generated one (unset RANKLENS_TOKEN) or "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))', or pass --allow-weak-token"
        )
    try:
        max_header = int(os.environ.get("RANKLENS_MAX_HEADER", str(DEFAULT_MAX_HEADER)))
        header_timeout = float(os.environ.get("RANKLENS_HEADER_TIMEOUT", str(DEFAULT_HEADER_TIMEOUT)))
    except ValueError:
        raise _Refused("RANKLENS_MAX_HEADER is a number of bytes and RANKLENS_HEADER_TIMEOUT a number of seconds") from None
    if max_header < 1024 or not header_timeout > 0:
        raise _Refused(f"RANKLENS_MAX_HEADER must be at least 1024 and RANKLENS_HEADER_TIMEOUT above 0; got {max_header}, {header_timeout}")
    app = create_app(settings)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"ranklens monitor listening on http://{shown}:{bound}/ (database {_safe(url)})", err=True)
    if generated:
        click.echo(f"writes (and reads, unless --public-read) need this token (set RANKLENS_TOKEN to choose one): {settings.token}", err=True)
    if weak:
        click.echo(f"WARNING: the token is weak ({weak}); anyone who can reach this server may guess it", err=True)
    if settings.public_read:
        click.echo("reads are public (--public-read): anyone who can reach this server can read every project", err=True)
    sys.stderr.flush()
    # the header limit and deadline (protocol.py); forwarded headers are the app's to judge (--trusted-proxy),
    # never uvicorn's (which believes them from 127.0.0.1 by default)
    config = uvicorn.Config(
        app, log_level=log_level, access_log=log_level in ("info", "debug"), timeout_graceful_shutdown=5,
        http=guarded_protocol(max_header=max_header, header_timeout=header_timeout), h11_max_incomplete_event_size=max_header,
        proxy_headers=False, server_header=False,
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])


class _Refused(click.ClickException):
    """A one-line refusal to start, exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"ranklens: error: {self.format_message()}", err=True)


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _safe(url: str) -> str:
    """The URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
