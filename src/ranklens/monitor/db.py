"""Engines, migrations and transactions for the monitoring store (SQLite file by default, PostgreSQL by URL).

SQLite runs in WAL mode with a busy timeout, foreign keys on and ``BEGIN IMMEDIATE`` for write transactions,
so concurrent writers queue instead of failing. ``synchronous=NORMAL`` in WAL mode keeps every committed
transaction across a crash of the process (a power cut may lose the last few; set
``RANKLENS_SQLITE_SYNCHRONOUS=FULL`` to rule that out too).

Migrations are the Alembic scripts in ``monitor/migrations/versions``; :func:`migrate` runs them without
an ``alembic.ini`` or ``env.py``, so the server upgrades its database on start.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.orm import Session

from ranklens.errors import InputError

__all__ = ["DEFAULT_URL", "Database", "migrate", "normalise_url"]

DEFAULT_URL = "sqlite:///ranklens-monitor.db"
MIGRATIONS = Path(__file__).with_name("migrations")
T = TypeVar("T")


def normalise_url(url: str | None) -> str:
    """A SQLAlchemy URL from ``url``: a plain path means a SQLite file; ``postgresql://`` uses psycopg 3.

    >>> normalise_url("data/monitor.db")
    'sqlite:///data/monitor.db'
    >>> normalise_url("postgresql://u@localhost/db")
    'postgresql+psycopg://u@localhost/db'
    """
    url = (url or os.environ.get("RANKLENS_DB") or DEFAULT_URL).strip()
    if "://" not in url:
        return f"sqlite:///{url}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


class Database:
    """One engine and the way to run transactions on it.

    ``write(fn)`` runs ``fn(session)`` in one transaction and commits; on a conflict that a retry can
    resolve (a unique key raced by another writer, a serialisation failure, a busy SQLite file) it rolls
    back and runs ``fn`` again, up to ``retries`` times.
    """

    def __init__(self, url: str | None = None, *, echo: bool = False) -> None:
        self.url = normalise_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        if self.dialect == "sqlite":
            database = parsed.database or ""
            if database and database != ":memory:":
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
        elif self.dialect == "postgresql":
            kwargs.update(pool_size=20, max_overflow=20, pool_pre_ping=False, pool_recycle=1800)
        else:
            raise InputError(f"unsupported database URL {self.url!r}; expected sqlite:///FILE or postgresql://...")
        self.engine: Engine = create_engine(self.url, **kwargs)
        # SQLite has one writer at a time: a process-wide lock keeps our own writers in line (the busy
        # timeout handles other processes).
        self._write_lock = threading.Lock() if self.dialect == "sqlite" else None
        if self.dialect == "sqlite":
            _sqlite_setup(self.engine)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def migrate(self) -> None:
        """Bring the schema to the newest migration."""
        migrate(self.engine)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading (no commit)."""
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    def write(self, fn: Callable[[Session], T], *, retries: int = 8) -> T:
        """Run ``fn(session)`` in one write transaction; retry on transient conflicts."""
        delay = 0.01
        for attempt in range(retries + 1):
            try:
                if self._write_lock is not None:
                    with self._write_lock:
                        return self._write_once(fn)
                return self._write_once(fn)
            except (IntegrityError, OperationalError, DBAPIError) as exc:
                if attempt == retries or not _transient(exc):
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")  # pragma: no cover

    def _write_once(self, fn: Callable[[Session], T]) -> T:
        with (
            self.engine.connect().execution_options(ranklens_write=True) as conn,
            Session(bind=conn, expire_on_commit=False) as session,
            session.begin(),
        ):
            return fn(session)

    def dispose(self) -> None:
        self.engine.dispose()


def _transient(exc: Exception) -> bool:
    if isinstance(exc, IntegrityError):
        return True  # a raced unique key: the retry sees the other writer's row
    text = str(getattr(exc, "orig", exc)).lower()
    return any(
        s in text
        for s in ("database is locked", "deadlock", "could not serialize", "serialization failure", "busy")
    )


def _sqlite_setup(engine: Engine) -> None:
    sync = os.environ.get("RANKLENS_SQLITE_SYNCHRONOUS", "NORMAL").upper()
    if sync not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
        sync = "NORMAL"

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA synchronous={sync}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        if conn.get_execution_options().get("ranklens_write"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


def migrate(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database behind ``engine`` to ``revision`` with the packaged Alembic scripts.

    Safe to call on every start: an up-to-date database is left as it is. On PostgreSQL an advisory lock
    keeps two servers starting at once from migrating together.
    """
    from alembic.config import Config
    from alembic.runtime.environment import EnvironmentContext
    from alembic.script import ScriptDirectory

    from ranklens.monitor.models import Base

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    script = ScriptDirectory.from_config(config)

    def upgrade(rev: Any, context: Any) -> Any:
        return script._upgrade_revs(revision, rev)

    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("SELECT pg_advisory_lock(74125201)")
            conn.commit()
        try:
            with EnvironmentContext(config, script, fn=upgrade, destination_rev=revision) as env:
                env.configure(connection=conn, target_metadata=Base.metadata, render_as_batch=True)
                with conn.begin():
                    env.run_migrations()
        finally:
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql("SELECT pg_advisory_unlock(74125201)")
                conn.commit()


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at, or ``None`` for an empty database."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
