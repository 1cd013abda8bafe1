"""The session store's SQLite tables: their schema, and the reads the store makes of them (the full-text lookup is
:mod:`memsift.sessions.query`'s, the import bookkeeping :mod:`memsift.sessions.importer`'s, and the other writes
:class:`memsift.sessions.writer.Writer`'s).

Sessions form the ``sessions`` table; their events, each a stored JSON line, ``events``; the messages of each active
branch have a row of analyzer tokens in the ``message_fts`` full-text table. ``meta.sessions_version`` moves whenever a
session is added, removed or changes what visibility and staleness depend on, so a :class:`Snapshot` stays valid
until then, whichever process writes.

>>> db = open_database(':memory:')
>>> list_sessions(db), read_snapshot(db, None).keys
([], frozenset())
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memsift._sqlite import connect
from memsift.errors import SessionStoreError
from memsift.sessions.visibility import Session, Snapshot

__all__ = [
    'active_message_rows',
    'branch_message_rows',
    'list_sessions',
    'open_database',
    'read_snapshot',
    'reading',
    'session_exists',
    'session_fingerprint',
    'stale_sessions',
]

_SCHEMA_VERSION = 1
# Characters the analyzer keeps inside tokens; FTS5 must not split them again.
_FTS_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '-_./:@+#'"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    spawned_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    incognito INTEGER NOT NULL DEFAULT 0,
    leaf TEXT,
    needs_rebuild INTEGER NOT NULL DEFAULT 0,
    event_count INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_spawned_by ON sessions(spawned_by);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    parent_id TEXT,
    line INTEGER NOT NULL,
    type TEXT NOT NULL,
    role TEXT,
    timestamp INTEGER NOT NULL,
    searchable INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    UNIQUE (session_key, event_id)
);
CREATE TABLE IF NOT EXISTS imports (
    path TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    offset INTEGER NOT NULL,
    lines INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(
    tokens, session_key UNINDEXED, timestamp UNINDEXED, event_id UNINDEXED, tokenize="{_FTS_TOKENIZE}"
);
INSERT OR IGNORE INTO meta VALUES ('sessions_version', '0');
-- Full-text rows changed other than by appending (a session rebuilt or deleted; '*': all re-indexed), so that
-- in-memory mirrors of message_fts (the ranked-search index) redo just those sessions.
CREATE TABLE IF NOT EXISTS fts_rewrites (version INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL);
-- Message embeddings (float32) per provider key, made in the background for ranked search's vector leg.
CREATE TABLE IF NOT EXISTS message_vectors (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (seq, key)
);
-- Cached session listings (visibility, staleness) stay valid until this counter moves, whoever writes.
CREATE TRIGGER IF NOT EXISTS sessions_added AFTER INSERT ON sessions
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'sessions_version'; END;
CREATE TRIGGER IF NOT EXISTS sessions_removed AFTER DELETE ON sessions
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'sessions_version'; END;
CREATE TRIGGER IF NOT EXISTS sessions_changed AFTER UPDATE OF spawned_by, incognito, archived, needs_rebuild ON sessions
WHEN OLD.spawned_by IS NOT NEW.spawned_by OR OLD.incognito != NEW.incognito OR OLD.archived != NEW.archived
    OR OLD.needs_rebuild != NEW.needs_rebuild
BEGIN UPDATE meta SET value = value + 1 WHERE key = 'sessions_version'; END;
"""


def open_database(path: str) -> sqlite3.Connection:
    """The session store at ``path`` (a file, ``~`` expanded, or ``':memory:'``), its tables created if new.

    Raises:
        SessionStoreError: the file cannot be opened or holds another schema version.
    """
    return connect(
        path if path == ':memory:' else str(Path(path).expanduser()),
        _SCHEMA,
        _SCHEMA_VERSION,
        SessionStoreError,
        'the session store',
        'move the file aside and re-import the transcripts',
    )


@contextmanager
def reading(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: every statement inside reads the same state of the database."""
    db.execute('BEGIN')
    try:
        yield
    finally:
        db.execute('COMMIT')


def read_snapshot(db: sqlite3.Connection, cached: Snapshot | None) -> Snapshot:
    """Every session: ``cached`` until the ``sessions_version`` counter moves (in this process or another)."""
    version = db.execute("SELECT value FROM meta WHERE key = 'sessions_version'").fetchone()[0]
    if cached is None or cached.version != version:
        rows = db.execute('SELECT key, id, agent, spawned_by, incognito, needs_rebuild FROM sessions')
        cached = Snapshot(
            version, {row[0]: Session(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5])) for row in rows}
        )
    return cached


def session_exists(db: sqlite3.Connection, key: str) -> bool:
    """Whether session ``key`` is stored."""
    return db.execute('SELECT 1 FROM sessions WHERE key = ?', (key,)).fetchone() is not None


def stale_sessions(db: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """``(key, events, bytes)`` of every session marked for rebuild."""
    return db.execute('SELECT key, event_count, bytes FROM sessions WHERE needs_rebuild = 1').fetchall()


def list_sessions(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every stored session with its counts and flags, the most recently updated first."""
    rows = db.execute(
        'SELECT key, id, agent, spawned_by, created_at, updated_at, archived, incognito, needs_rebuild, '
        'event_count, bytes FROM sessions ORDER BY updated_at DESC'
    ).fetchall()
    return [
        {
            'key': r[0],
            'sessionId': r[1],
            'agentId': r[2],
            'spawnedBy': r[3],
            'createdAt': r[4],
            'updatedAt': r[5],
            'archived': bool(r[6]),
            'incognito': bool(r[7]),
            'indexed': not r[8],
            'events': r[9],
            'bytes': r[10],
        }
        for r in rows
    ]


def session_fingerprint(db: sqlite3.Connection) -> tuple[Any, ...]:
    """Session count, total events, total bytes and the ``sessions_version`` counter."""
    return tuple(
        db.execute(
            'SELECT count(*), total(event_count), total(bytes), (SELECT value FROM meta WHERE key = '
            "'sessions_version') FROM sessions"
        ).fetchone()
    )


def active_message_rows(db: sqlite3.Connection, session_key: str) -> list[tuple[int, str, str]]:
    """``(line, role, body)`` of the searchable messages on a session's active branch, in order."""
    return db.execute(
        'SELECT line, role, body FROM events WHERE session_key = ? AND active = 1 AND searchable = 1 ORDER BY seq',
        (session_key,),
    ).fetchall()


def branch_message_rows(db: sqlite3.Connection, session_key: str) -> list[tuple[str, int, str]]:
    """``(event_id, timestamp, body)`` of the message events on a session's active branch, in order."""
    return db.execute(
        "SELECT event_id, timestamp, body FROM events WHERE session_key = ? AND active = 1 AND type = 'message' "
        'ORDER BY seq',
        (session_key,),
    ).fetchall()
