"""``ranklens serve [--db URL] [--host 127.0.0.1] [--port 8000]``: the monitoring service and dashboard."""

from __future__ import annotations

import socket
import sys

import click

from ranklens.errors import MissingDependencyError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_url", metavar="URL", help="Database: a SQLite file path or sqlite:///FILE (default "
              "ranklens-monitor.db, or $RANKLENS_DB) or postgresql://user@host/db.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; 0.0.0.0 exposes it to the network.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one.")
@click.option("--token", envvar="RANKLENS_TOKEN", help="Token that writes must send ($RANKLENS_TOKEN). "
              "If unset, one is generated and printed.")
@click.option("--protect-reads", is_flag=True, default=None, help="Reading needs the token too ($RANKLENS_PROTECT_READS=1).")
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
    protect_reads: bool | None,
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
      RANKLENS_TOKEN=s3cret ranklens serve --db postgresql://ranklens@localhost/ranklens
    """
    try:
        import uvicorn

        from ranklens.monitor.app import Settings, create_app
        from ranklens.monitor.db import normalise_url
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "fastapi", "monitor", "ranklens serve") from None

    url = normalise_url(db_url)
    if demo:
        from ranklens.monitor.demo import seed_if_empty

        if seed_if_empty(url):
            click.echo("seeded the demo project 'demo-search' (90 days, 2 systems)", err=True)
    settings = Settings.from_env(db_url=url, token=token or None, protect_reads=protect_reads)
    settings.webhook_allow = [*settings.webhook_allow, *webhook_allow]
    try:
        from ranklens.monitor.ssrf import TargetPolicy

        TargetPolicy.from_allow(settings.webhook_allow)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--webhook-allow") from None
    generated = not settings.token
    if generated:
        import secrets

        settings.token = secrets.token_urlsafe(24)
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
        click.echo(f"writes need this token (set RANKLENS_TOKEN to choose one): {settings.token}", err=True)
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level=log_level, access_log=log_level in ("info", "debug"), timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])


def _safe(url: str) -> str:
    """The URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
