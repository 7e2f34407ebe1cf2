"""A persistent verdict cache in SQLite, keyed by (endpoint, model, prompt version, query, sha256 of the text).

Safe for concurrent runs on one file: WAL journal, a busy timeout, ``INSERT OR IGNORE`` (the first verdict stored
for a key stays). Only graded verdicts are stored: an unjudged pair is asked again on the next run.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ranklens.errors import FormatError
from ranklens.judges.types import Judgment

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    endpoint TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    query TEXT NOT NULL, doc_sha256 TEXT NOT NULL,
    grade INTEGER NOT NULL, reason TEXT NOT NULL, raw TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (endpoint, model, prompt_version, query, doc_sha256)
)
"""

Key = tuple[str, str, str, str, str]


def doc_hash(text: str) -> str:
    """The sha256 of a document's text (UTF-8), as hex.

    >>> doc_hash("abc")[:12]
    'ba7816bf8f01'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """Verdicts by key; one connection per object, guarded for threads.

    >>> import tempfile, os
    >>> c = JudgeCache(os.path.join(tempfile.mkdtemp(), "j.sqlite"))
    >>> key = ("http://x/v1/chat/completions", "m", "v1", "q", doc_hash("d"))
    >>> c.put_many([(key, Judgment(2, "ok", "{}"))])
    1
    >>> c.get_many([key])[key].grade, len(c)
    (2, 1)
    >>> c.close()
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0) -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, check_same_thread=False, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._setup(busy_timeout)
        except sqlite3.DatabaseError as exc:
            raise FormatError(self.path, f"not a usable judge cache (SQLite): {exc}") from None
        self._lock = threading.Lock()

    def _setup(self, busy_timeout: float) -> None:
        """WAL mode and the table. Switching a new file to WAL takes an exclusive lock for which SQLite does not
        always wait (two runs opening one new cache at once): retry "locked" for up to ``busy_timeout``."""
        deadline = time.monotonic() + busy_timeout
        delay = 0.01
        while True:
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def get_many(self, keys: Iterable[Key]) -> dict[Key, Judgment]:
        """The cached verdicts among ``keys``."""
        out: dict[Key, Judgment] = {}
        with self._lock:
            for key in keys:
                row = self._db.execute(
                    "SELECT grade, reason, raw FROM judgments WHERE endpoint=? AND model=? AND prompt_version=?"
                    " AND query=? AND doc_sha256=?", key).fetchone()
                if row is not None:
                    out[key] = Judgment(int(row[0]), row[1], row[2])
        return out

    def put_many(self, items: Iterable[tuple[Key, Judgment]]) -> int:
        """Store graded verdicts (unjudged ones are skipped); returns how many rows were new."""
        rows = [(*key, j.grade, j.reason, j.raw) for key, j in items if j.grade is not None]
        if not rows:
            return 0
        with self._lock:
            before = self._db.total_changes
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR IGNORE INTO judgments (endpoint, model, prompt_version, query, doc_sha256, grade,"
                    " reason, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return self._db.total_changes - before

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
