"""Fixtures for the monitor tests: a real server process on loopback for every backend.

Backends: ``sqlite`` always; ``postgresql`` when ``RANKLENS_TEST_PG_URL`` names a server (for example
``postgresql://postgres@127.0.0.1:5432/postgres``): each test session creates its own database there and
drops it at the end.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("httpx")

PG_ENV = "RANKLENS_TEST_PG_URL"
TOKEN = "test-token-" + secrets.token_hex(8)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "load: concurrent load test against a real server (runs in CI, bounded)")
    config.addinivalue_line("markers", "browser: headless Chromium tests (skipped without playwright or chromium)")


def backends() -> list[Any]:
    return ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not os.environ.get(PG_ENV), reason=f"{PG_ENV} not set"))]


class PgDatabase:
    """A throwaway database on the PostgreSQL server of ``RANKLENS_TEST_PG_URL``."""

    def __init__(self) -> None:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        from ranklens.monitor.db import normalise_url

        base = make_url(normalise_url(os.environ[PG_ENV]))
        self.name = f"ranklens_test_{uuid.uuid4().hex[:12]}"
        self._admin = create_engine(base, isolation_level="AUTOCOMMIT")
        with self._admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{self.name}"'))
        self.url = base.set(database=self.name).render_as_string(hide_password=False)

    def drop(self) -> None:
        from sqlalchemy import text

        with self._admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
        self._admin.dispose()


def make_db_url(backend: str, tmp: Path) -> tuple[str, Any]:
    if backend == "sqlite":
        return f"sqlite:///{tmp / 'monitor.db'}", None
    pg = PgDatabase()
    return pg.url, pg


class ServerProcess:
    """``python -m ranklens.monitor`` on 127.0.0.1 with a free port; stderr is kept for failures."""

    def __init__(
        self, db_url: str, *, token: str = TOKEN, env: dict[str, str] | None = None, args: list[str] | None = None,
        public_read: bool = True,
    ) -> None:
        self.db_url = db_url
        self.token = token
        self.public_read = public_read  # reads need the token by default; most tests read without it
        self.extra_env = env or {}
        self.args = args or []
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.log: list[str] = []

    def start(self, timeout: float = 30.0) -> ServerProcess:
        env = dict(os.environ)
        env.update(
            {
                "RANKLENS_TOKEN": self.token,
                "RANKLENS_WEBHOOK_BACKOFF": "0.2",
                "RANKLENS_WEBHOOK_POLL": "0.2",
                "RANKLENS_WEBHOOK_TIMEOUT": "5",
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.pop("RANKLENS_PROTECT_READS", None)
        env.pop("RANKLENS_PUBLIC_READ", None)
        env.pop("RANKLENS_TRUSTED_PROXIES", None)
        if self.public_read:
            env["RANKLENS_PUBLIC_READ"] = "1"
        env.update(self.extra_env)
        cmd = [sys.executable, "-m", "ranklens.monitor", "--db", self.db_url, "--port", "0", "--host", "127.0.0.1", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        found = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line.rstrip())
                m = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", line)
                if m:
                    self.url = m.group(1)
                    found.set()
            self.proc.stderr.close()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        if not found.wait(timeout):
            self.stop()
            raise RuntimeError("server did not start:\n" + "\n".join(self.log))
        import httpx

        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/api/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server not healthy:\n" + "\n".join(self.log))

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, like a crash or a power-off of the process."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def client(self, **kw: Any) -> Any:
        from ranklens.monitor.client import MonitorClient

        kw.setdefault("token", self.token)
        return MonitorClient(self.url, **kw)


@pytest.fixture(scope="session", params=backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def server(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    url, pg = make_db_url(backend, tmp_path_factory.mktemp(f"server-{backend}"))
    # the shared server of many modules: their deliberate bad credentials (one client, 127.0.0.1) must not lock
    # out the others; the throttle itself is tested on servers of its own (test_security, test_team_network)
    srv = ServerProcess(url, env={"RANKLENS_LOGIN_MAX_FAILURES": "1000000"}).start()
    try:
        yield srv
    finally:
        srv.stop()
        if pg is not None:
            pg.drop()


@pytest.fixture(scope="module")
def protected_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A SQLite server whose reads need a credential too (``RANKLENS_PROTECT_READS=1``), for the session
    and login tests."""
    db = tmp_path_factory.mktemp("protected") / "p.db"
    srv = ServerProcess(f"sqlite:///{db}", env={"RANKLENS_PROTECT_READS": "1"}).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[Any]:
    with server.client(retries=0) as c:
        yield c


@pytest.fixture
def project() -> str:
    return f"proj-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$RANKLENS_TEST_ARTIFACTS`` if set, else a temporary folder."""
    where = os.environ.get("RANKLENS_TEST_ARTIFACTS")
    path = Path(where) if where else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def eval_json(per_query: dict[str, dict[str, float]], run: str = "run") -> dict[str, Any]:
    """A document shaped like ``ranklens eval --per-query --format json`` for made-up values."""
    measures = sorted({m for row in per_query.values() for m in row})
    agg = {m: sum(r[m] for r in per_query.values()) / len(per_query) for m in measures}
    return {
        "ranklens_version": "0.1.0",
        "qrels": "q.txt",
        "run_files": ["r.txt"],
        "runs": [
            {
                "run": run,
                "measures": measures,
                "aggregate": agg,
                "num_queries": len(per_query),
                "per_query": per_query,
                "notes": [],
                "options": {},
            }
        ],
    }


@contextlib.contextmanager
def in_process_monitor(backend: str, tmp: Path) -> Iterator[Any]:
    """The service in-process: a :class:`~ranklens.monitor.service.Monitor` on a migrated database of
    ``backend`` (``sqlite`` in ``tmp``, or a throwaway PostgreSQL database), dropped afterwards."""
    from ranklens.monitor.db import Database
    from ranklens.monitor.service import Monitor

    url, pg = make_db_url(backend, tmp)
    db = Database(url)
    db.migrate()
    try:
        yield Monitor(db)
    finally:
        db.dispose()
        if pg is not None:
            pg.drop()


@contextlib.contextmanager
def in_process_app(backend: str, tmp: Path, **settings: Any) -> Iterator[Any]:
    """The app in-process (FastAPI's TestClient, no worker) on a database of ``backend``: SQLite in ``tmp`` or
    a throwaway PostgreSQL database (dropped afterwards)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient

    from ranklens.monitor.app import Settings, create_app

    url, pg = make_db_url(backend, tmp)
    try:
        with TestClient(create_app(Settings(db_url=url, token=TOKEN, run_worker=False, read_rate="off", **settings))) as c:
            yield c
    finally:
        if pg is not None:
            pg.drop()
