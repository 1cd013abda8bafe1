"""The session store's tables, in SQLite and in PostgreSQL: their schema, and the reads the store makes of them (the
full-text lookup is :mod:`memsift.sessions.query`'s and :mod:`memsift.sessions.pgquery`'s, the import bookkeeping
:mod:`memsift.sessions.importer`'s, and the other writes :class:`memsift.sessions.writer.Writer`'s).

Sessions form the ``sessions`` table; their events, each a stored JSON line, ``events``; the messages of each active
branch have a row of analyzer tokens in the ``message_fts`` full-text table. ``meta.sessions_version`` moves whenever a
session is added, removed or changes what visibility and staleness depend on, so a :class:`Snapshot` stays valid
until then, whichever process writes.

On PostgreSQL the same tables are named ``session_`` + the SQLite name, hold the rows of every agent of the database
(each row carries its ``agent``, which leads every key, so any table can be partitioned by agent) and keep the same
columns, with these differences: flags are booleans; ``message_fts`` is a plain table whose ``terms`` are the row's
tokens as FTS5 splits them (the lookup and its ranking are :mod:`memsift.sessions.pgquery`'s); ``fts_rewrites``
numbers its records per agent, as SQLite numbers them per file; ``meta`` has one ``sessions_version`` per agent,
moved by triggers as in SQLite.

>>> db = open_database(':memory:')
>>> list_sessions(db), read_snapshot(db, None).keys
([], frozenset())
"""

from __future__ import annotations

import os
from typing import Any

from memsift._postgres import is_dsn
from memsift.sessions.database import Database, PostgresDatabase, Sql, SqliteDatabase
from memsift.sessions.visibility import Session, Snapshot

__all__ = [
    'active_message_rows',
    'branch_message_rows',
    'event_lines',
    'list_sessions',
    'open_database',
    'read_snapshot',
    'session_exists',
    'session_fingerprint',
    'stale_sessions',
    'stored_counts',
]

_SCHEMA_VERSION = 1
"""SQLite's schema runs on every open (idempotent statements), so a table added to it needs no new version."""
_PG_SCHEMA_VERSION = 2
_PG_UPGRADES = {
    # 2: sessions an operator forgot (memsift forget).
    1: [
        'CREATE TABLE IF NOT EXISTS session_forgotten (agent TEXT NOT NULL, session_key TEXT NOT NULL, '
        'forgotten_at BIGINT NOT NULL, PRIMARY KEY (agent, session_key))'
    ],
}
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
-- Sessions an operator forgot (memsift forget): their events are gone and an import never brings them back.
CREATE TABLE IF NOT EXISTS forgotten (session_key TEXT PRIMARY KEY, forgotten_at INTEGER NOT NULL);
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


_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_meta (
    agent TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (agent, key)
);
CREATE TABLE IF NOT EXISTS session_sessions (
    agent TEXT NOT NULL,
    key TEXT NOT NULL,
    id TEXT NOT NULL,
    spawned_by TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    archived BOOLEAN NOT NULL DEFAULT false,
    incognito BOOLEAN NOT NULL DEFAULT false,
    leaf TEXT,
    needs_rebuild BOOLEAN NOT NULL DEFAULT false,
    event_count BIGINT NOT NULL DEFAULT 0,
    bytes BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent, key),
    UNIQUE (agent, id)
);
CREATE TABLE IF NOT EXISTS session_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    agent TEXT NOT NULL,
    session_key TEXT NOT NULL,
    event_id TEXT NOT NULL,
    parent_id TEXT,
    line BIGINT NOT NULL,
    type TEXT NOT NULL,
    role TEXT,
    timestamp BIGINT NOT NULL,
    searchable BOOLEAN NOT NULL DEFAULT false,
    active BOOLEAN NOT NULL DEFAULT false,
    body TEXT NOT NULL,
    PRIMARY KEY (agent, seq),
    UNIQUE (agent, session_key, event_id),
    FOREIGN KEY (agent, session_key) REFERENCES session_sessions (agent, key) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS session_forgotten (
    agent TEXT NOT NULL,
    session_key TEXT NOT NULL,
    forgotten_at BIGINT NOT NULL,
    PRIMARY KEY (agent, session_key)
);
CREATE TABLE IF NOT EXISTS session_imports (
    agent TEXT NOT NULL,
    path TEXT NOT NULL,
    session_key TEXT NOT NULL,
    byte_offset BIGINT NOT NULL,
    lines BIGINT NOT NULL,
    PRIMARY KEY (agent, path)
);
-- A message's full-text row: its seq is its event's. `tokens` as in SQLite (the ranked index reads them); `terms`
-- the tokens as FTS5 splits them, and `length` their count (what bm25 calls the row's size).
CREATE TABLE IF NOT EXISTS session_message_fts (
    agent TEXT NOT NULL,
    seq BIGINT NOT NULL,
    session_key TEXT NOT NULL,
    timestamp BIGINT NOT NULL,
    event_id TEXT NOT NULL,
    tokens TEXT NOT NULL,
    terms TEXT[] NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (agent, seq) INCLUDE (length)
);
CREATE TABLE IF NOT EXISTS session_fts_rewrites (
    agent TEXT NOT NULL,
    version BIGINT NOT NULL,
    session_key TEXT NOT NULL,
    PRIMARY KEY (agent, version)
);
CREATE TABLE IF NOT EXISTS session_message_vectors (
    n BIGINT GENERATED ALWAYS AS IDENTITY,
    agent TEXT NOT NULL,
    seq BIGINT NOT NULL,
    key TEXT NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (agent, n),
    UNIQUE (agent, seq, key)
);
-- Created once: each new connection applies this schema, and CREATE INDEX IF NOT EXISTS (or replacing a trigger)
-- would lock the table, waiting for every write in progress, each time.
DO $$
BEGIN
    IF to_regprocedure('session_fts_keys(text, text[])') IS NULL THEN
        -- The GIN index holds (agent, term) keys, so a lookup reads only its agent's postings.
        CREATE FUNCTION session_fts_keys(agent TEXT, terms TEXT[]) RETURNS TEXT[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $f$ SELECT ARRAY(SELECT agent || E'\\x1f' || term FROM unnest(terms) AS term) $f$;
    END IF;
    IF to_regprocedure('session_version_moved()') IS NULL THEN
        CREATE FUNCTION session_version_moved() RETURNS trigger LANGUAGE plpgsql AS $f$
        DECLARE
            owner TEXT;
        BEGIN
            IF TG_OP = 'DELETE' THEN owner := OLD.agent; ELSE owner := NEW.agent; END IF;
            INSERT INTO session_meta AS m (agent, key, value) VALUES (owner, 'sessions_version', '1')
            ON CONFLICT (agent, key) DO UPDATE SET value = (m.value::BIGINT + 1)::TEXT;
            RETURN NULL;
        END $f$;
    END IF;
    IF to_regclass('session_message_fts_terms') IS NULL THEN
        CREATE INDEX session_message_fts_terms ON session_message_fts USING gin (session_fts_keys(agent, terms));
    END IF;
    IF to_regclass('session_message_fts_session') IS NULL THEN
        CREATE INDEX session_message_fts_session ON session_message_fts (agent, session_key);
    END IF;
    IF to_regclass('session_message_vectors_key') IS NULL THEN
        CREATE INDEX session_message_vectors_key ON session_message_vectors (agent, key, n);
    END IF;
    -- Cached session listings (visibility, staleness) stay valid until this counter moves, whoever writes.
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'session_sessions'::regclass
                   AND tgname = 'session_sessions_added_or_removed') THEN
        CREATE TRIGGER session_sessions_added_or_removed AFTER INSERT OR DELETE ON session_sessions
        FOR EACH ROW EXECUTE FUNCTION session_version_moved();
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'session_sessions'::regclass
                   AND tgname = 'session_sessions_changed') THEN
        CREATE TRIGGER session_sessions_changed
        AFTER UPDATE OF spawned_by, incognito, archived, needs_rebuild ON session_sessions FOR EACH ROW
        WHEN (OLD.spawned_by IS DISTINCT FROM NEW.spawned_by OR OLD.incognito <> NEW.incognito
              OR OLD.archived <> NEW.archived OR OLD.needs_rebuild <> NEW.needs_rebuild)
        EXECUTE FUNCTION session_version_moved();
    END IF;
END $$;
"""


def open_database(path: str | os.PathLike[str], agent_id: str = 'main', setting: str = 'store.dsn') -> Database:
    """The session store at ``path``: a SQLite file (``~`` expanded) or ``':memory:'``, or, for a PostgreSQL DSN,
    ``agent_id``'s rows of that database; the tables are created if new.

    Raises:
        SessionStoreError: the file cannot be opened, the server does not answer (the message names ``setting``,
            never the password), or either holds another schema version.
    """
    target = os.fspath(path)
    if is_dsn(target):
        return PostgresDatabase(target, agent_id, _PG_SCHEMA, _PG_SCHEMA_VERSION, setting, _PG_UPGRADES)
    return SqliteDatabase(target, agent_id, _SCHEMA, _SCHEMA_VERSION)


_VERSION = Sql(
    "SELECT value FROM meta WHERE key = 'sessions_version'",
    "SELECT coalesce((SELECT value FROM session_meta WHERE agent = :agent AND key = 'sessions_version'), '0')",
)
_SESSIONS = Sql(
    'SELECT key, id, agent, spawned_by, incognito, needs_rebuild FROM sessions',
    'SELECT key, id, agent, spawned_by, incognito, needs_rebuild FROM session_sessions WHERE agent = :agent',
)


def read_snapshot(db: Database, cached: Snapshot | None) -> Snapshot:
    """Every session: ``cached`` until the ``sessions_version`` counter moves (in this process or another)."""
    version = db.execute(_VERSION).fetchone()[0]
    if cached is None or cached.version != version:
        rows = db.execute(_SESSIONS)
        cached = Snapshot(
            version, {row[0]: Session(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5])) for row in rows}
        )
    return cached


def session_exists(db: Database, key: str) -> bool:
    """Whether session ``key`` is stored."""
    sql = Sql(
        'SELECT 1 FROM sessions WHERE key = :key',
        'SELECT 1 FROM session_sessions WHERE agent = :agent AND key = :key',
    )
    return db.execute(sql, {'key': key}).fetchone() is not None


def stale_sessions(db: Database) -> list[tuple[str, int, int]]:
    """``(key, events, bytes)`` of every session marked for rebuild."""
    sql = Sql(
        'SELECT key, event_count, bytes FROM sessions WHERE needs_rebuild = 1',
        'SELECT key, event_count, bytes FROM session_sessions WHERE agent = :agent AND needs_rebuild',
    )
    return db.execute(sql).fetchall()


def list_sessions(db: Database) -> list[dict[str, Any]]:
    """Every stored session with its counts and flags, the most recently updated first."""
    columns = (
        'key, id, agent, spawned_by, created_at, updated_at, archived, incognito, needs_rebuild, event_count, bytes'
    )
    sql = Sql(
        f'SELECT {columns} FROM sessions ORDER BY updated_at DESC',
        f'SELECT {columns} FROM session_sessions WHERE agent = :agent ORDER BY updated_at DESC, key',
    )
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
        for r in db.execute(sql).fetchall()
    ]


def session_fingerprint(db: Database) -> tuple[Any, ...]:
    """Session count, total events, total bytes and the ``sessions_version`` counter."""
    sql = Sql(
        'SELECT count(*), total(event_count), total(bytes), ({version}) FROM sessions',
        'SELECT count(*), coalesce(sum(event_count), 0)::float8, coalesce(sum(bytes), 0)::float8, ({version}) '
        'FROM session_sessions WHERE agent = :agent',
    )
    return tuple(db.execute(sql.format(version=_VERSION)).fetchone())


def stored_counts(db: Database) -> tuple[int, list[tuple[str, int]]]:
    """The full-text rows, and ``(provider key, vectors)`` per embedding provider."""
    messages = Sql('SELECT count(*) FROM message_fts', 'SELECT count(*) FROM session_message_fts WHERE agent = :agent')
    vectors = Sql(
        'SELECT key, count(*) FROM message_vectors GROUP BY key ORDER BY key',
        'SELECT key, count(*) FROM session_message_vectors WHERE agent = :agent GROUP BY key ORDER BY key COLLATE "C"',
    )
    return db.execute(messages).fetchone()[0], db.execute(vectors).fetchall()


def active_message_rows(db: Database, session_key: str) -> list[tuple[int, str, str]]:
    """``(line, role, body)`` of the searchable messages on a session's active branch, in order."""
    sql = Sql(
        'SELECT line, role, body FROM events WHERE session_key = :key AND active = 1 AND searchable = 1 ORDER BY seq',
        'SELECT line, role, body FROM session_events WHERE agent = :agent AND session_key = :key AND active '
        'AND searchable ORDER BY seq',
    )
    return db.execute(sql, {'key': session_key}).fetchall()


def branch_message_rows(db: Database, session_key: str) -> list[tuple[str, int, str]]:
    """``(event_id, timestamp, body)`` of the message and reset events (OpenClaw 2.x's ``/new``, ``/reset``) on a
    session's active branch, in order."""
    sql = Sql(
        'SELECT event_id, timestamp, body FROM events WHERE session_key = :key AND active = 1 '
        "AND type IN ('message', 'reset') ORDER BY seq",
        'SELECT event_id, timestamp, body FROM session_events WHERE agent = :agent AND session_key = :key AND active '
        "AND type IN ('message', 'reset') ORDER BY seq",
    )
    return db.execute(sql, {'key': session_key}).fetchall()


def event_lines(db: Database, session_key: str) -> list[tuple[str, int]]:
    """``(JSON line, timestamp in ms)`` of each of a session's events, in the order they were stored."""
    sql = Sql(
        'SELECT body, timestamp FROM events WHERE session_key = :key ORDER BY seq',
        'SELECT body, timestamp FROM session_events WHERE agent = :agent AND session_key = :key ORDER BY seq',
    )
    return [(body, int(timestamp)) for body, timestamp in db.execute(sql, {'key': session_key}).fetchall()]
