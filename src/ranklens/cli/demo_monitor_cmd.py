"""``ranklens demo-monitor [--db URL]``: seed 90 days of demo history for the dashboard."""

from __future__ import annotations

import click

from ranklens.errors import MissingDependencyError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_url", metavar="URL", help="Database (as for `ranklens serve`; default ranklens-monitor.db or $RANKLENS_DB).")
@click.option("--days", default=90, show_default=True, type=click.IntRange(8, 3660), help="Days of history.")
@click.option("--project", default="demo-search", show_default=True, help="Project name.")
@click.option("--reset", is_flag=True, help="Replace the project if it exists.")
def command(db_url: str | None, days: int, project: str, reset: bool) -> None:
    """Seed a monitor database with synthetic history: two systems, four categories, one threshold breach.

    \b
    Then: ranklens serve   (or: make dashboard)
    """
    try:
        from ranklens.monitor.db import normalise_url
        from ranklens.monitor.demo import seed
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(exc.name or "sqlalchemy", "monitor", "ranklens demo-monitor") from None
    from ranklens.monitor.schemas import check_project_name

    url = normalise_url(db_url)
    n = seed(url, days=days, reset=reset, project=check_project_name(project))
    if n == 0:
        click.echo(f"project {project!r} already exists; use --reset to replace it")
    else:
        click.echo(f"seeded project {project!r}: {n} snapshots over {days} days; start the dashboard with: ranklens serve"
                   + (f" --db {db_url}" if db_url else ""))
