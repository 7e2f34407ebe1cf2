"""A persistent verdict cache in SQLite, keyed by (endpoint, model, prompt version, query, sha256 of the text).

Safe for concurrent runs on one file: WAL journal, a busy timeout, ``INSERT OR IGNORE`` (the first verdict stored
for a key stays). Only graded verdicts are stored: an unjudged pair is asked again on the next run.

Runs sharing a file do not pay twice for a pair: a run **claims** the pairs it is about to ask
(:meth:`JudgeCache.claim`, one transaction), and another run waits for their verdicts instead of asking too. A
claim has a lease the run renews while it works; a claim whose lease ran out, or whose run is a process of this
host that no longer exists (kill -9), is taken over. :meth:`JudgeCache.store` returns what the file holds after
the write, so a run reports the stored verdict, never one that lost the race.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import threading
import time
import uuid
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

_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    endpoint TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    query TEXT NOT NULL, doc_sha256 TEXT NOT NULL,
    owner TEXT NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (endpoint, model, prompt_version, query, doc_sha256)
)
"""

_WHERE = "endpoint=? AND model=? AND prompt_version=? AND query=? AND doc_sha256=?"

Key = tuple[str, str, str, str, str]


def new_owner() -> str:
    """A run's name in the claims table: ``host:pid:random``.

    >>> new_owner().count(":") >= 2
    True
    """
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _gone(owner: str) -> bool:
    """Whether ``owner`` is a process of this host that has ended (its claims are stale at once).

    >>> _gone(new_owner()), _gone("another-host:1:abc")
    (False, False)
    """
    parts = owner.split(":")
    if len(parts) < 3 or not parts[-2].isdigit() or ":".join(parts[:-2]) != socket.gethostname():
        return False
    pid = int(parts[-2])
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # another user's process, or a pid out of range
        return False
    return False


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
                self._db.execute(_CLAIMS)
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

    def _select(self, key: Key) -> Judgment | None:
        row = self._db.execute(f"SELECT grade, reason, raw FROM judgments WHERE {_WHERE}", key).fetchone()
        return None if row is None else Judgment(int(row[0]), row[1], row[2])

    def _transaction(self) -> _Tx:
        return _Tx(self._db)

    def claim(self, keys: Iterable[Key], owner: str, *, lease: float = 60.0,
              now: float | None = None) -> tuple[dict[Key, Judgment], set[Key]]:
        """In one transaction: the verdicts already stored among ``keys``, and the keys ``owner`` now holds (new
        claims, its own, and stale ones taken over: lease run out, or a process of this host that has ended).
        The other keys are held by another live run: wait for them (:meth:`get_many`) and claim again.

        >>> import tempfile, os
        >>> c = JudgeCache(os.path.join(tempfile.mkdtemp(), "j.sqlite"))
        >>> key = ("http://x/v1/chat/completions", "m", "v1", "q", doc_hash("d"))
        >>> c.claim([key], "a:1:x")[1] == {key}, c.claim([key], "b:1:y")[1]
        (True, set())
        """
        now = time.time() if now is None else now
        stored: dict[Key, Judgment] = {}
        mine: set[Key] = set()
        with self._lock, self._transaction():
            for key in keys:
                verdict = self._select(key)
                if verdict is not None:
                    stored[key] = verdict
                    continue
                row = self._db.execute(f"SELECT owner, expires FROM claims WHERE {_WHERE}", key).fetchone()
                if row is not None and row[0] != owner and row[1] > now and not _gone(row[0]):
                    continue
                self._db.execute("INSERT OR REPLACE INTO claims (endpoint, model, prompt_version, query, doc_sha256,"
                                 " owner, expires) VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, owner, now + lease))
                mine.add(key)
        return stored, mine

    def renew(self, owner: str, *, lease: float = 60.0) -> None:
        """Extend every claim of ``owner`` by ``lease`` seconds from now."""
        with self._lock, self._transaction():
            self._db.execute("UPDATE claims SET expires=? WHERE owner=?", (time.time() + lease, owner))

    def release(self, keys: Iterable[Key], owner: str) -> None:
        """Drop ``owner``'s claims on ``keys`` (an unjudged pair: another run may ask it)."""
        with self._lock, self._transaction():
            self._db.executemany(f"DELETE FROM claims WHERE {_WHERE} AND owner=?", [(*k, owner) for k in keys])

    def abandon(self, owner: str) -> None:
        """Drop every claim of ``owner`` (the run ends, cleanly or not)."""
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM claims WHERE owner=?", (owner,))

    def store(self, items: Iterable[tuple[Key, Judgment]], owner: str) -> dict[Key, Judgment]:
        """Store the graded verdicts, drop ``owner``'s claims on every key of ``items``, and return the verdict the
        file holds for each graded key (the first one stored: another run's, if it stored one first).

        >>> import tempfile, os
        >>> c = JudgeCache(os.path.join(tempfile.mkdtemp(), "j.sqlite"))
        >>> key = ("http://x/v1/chat/completions", "m", "v1", "q", doc_hash("d"))
        >>> c.store([(key, Judgment(1, "first", "{}"))], "a:1:x")[key].grade
        1
        >>> c.store([(key, Judgment(3, "second", "{}"))], "b:1:y")[key].reason
        'first'
        """
        items = list(items)
        rows = [(*key, j.grade, j.reason, j.raw) for key, j in items if j.grade is not None]
        out: dict[Key, Judgment] = {}
        with self._lock, self._transaction():
            self._db.executemany(
                "INSERT OR IGNORE INTO judgments (endpoint, model, prompt_version, query, doc_sha256, grade,"
                " reason, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany(f"DELETE FROM claims WHERE {_WHERE} AND owner=?", [(*k, owner) for k, _ in items])
            for key, j in items:
                if j.grade is not None:
                    found = self._select(key)
                    out[key] = found if found is not None else j
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

    def claims(self) -> int:
        """How many claims the file holds (0 after every run ended cleanly)."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])

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


class _Tx:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on an error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
