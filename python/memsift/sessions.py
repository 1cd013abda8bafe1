"""Session transcripts: the per-agent store behind ``sessions_search`` and ``sessions_history`` (OpenClaw §11).

Events are OpenClaw transcript lines, ``{"type": "message", "id", "parentId", "timestamp", "message": {"role",
"content"}}``. They form a tree through ``parentId``; the *active branch* is the path from the current leaf back to
the root, and only it is searchable. An append that extends the leaf writes the event and its full-text row in one
SQLite transaction, so the index never lags; one that does not (a branch switch, a rewind) marks the session for a
rebuild, and its text stays hidden until the rebuild recomputes the branch.

The full-text rows hold memsift's own analyzer tokens (the analyzer of memory search: CJK unigrams and bigrams,
stemmed English), so Chinese, Japanese and Korean queries work, which OpenClaw's ``unicode61`` table cannot do
(OpenClaw issue #140736). Each whitespace-separated query term must match, as a phrase of its tokens: a CJK term
matches where its characters appear in that order.

>>> store = SessionStore(':memory:')
>>> store.append('agent:main:main', {'type': 'message', 'id': 'm1', 'timestamp': 1767225600000,
...                                  'message': {'role': 'user', 'content': '部署到东京区域 before Friday'}})
True
>>> [hit['snippet'] for hit in store.search('东京', caller='agent:main:main')['results']]
['部署到东京区域 before Friday']
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memsift._core import Analyzer
from memsift._sqlite import connect, transaction
from memsift._text import preview, scrub
from memsift.config import SessionToolsConfig, Visibility
from memsift.errors import InvalidInputError, SessionAccessError, SessionStoreError
from memsift.redact import Redactor

__all__ = ['Caller', 'SessionStore', 'Visibility', 'default_sessions_path', 'main_session_key']

VISIBILITIES: tuple[Visibility, ...] = ('self', 'tree', 'agent', 'all')
DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MAX_QUERY_CHARS = 4096
STORE_SNIPPET_CHARS = 500
TOOL_SNIPPET_CHARS = 300
MAX_RESPONSE_BYTES = 32 * 1024
SYNC_REBUILD_MAX_EVENTS = 4000
SYNC_REBUILD_MAX_BYTES = 4 * 1024 * 1024
HISTORY_DEFAULT_LIMIT = 50
HISTORY_MAX_LIMIT = 200
HISTORY_MESSAGE_CHARS = 4000
MAX_TIMESTAMP_MS = 8_640_000_000_000_000
"""The range of a JavaScript ``Date``: a timestamp beyond it is unreadable and the event gets the import time."""
MAX_REPORTED_LINE_ERRORS = 10
"""``import_jsonl`` names at most this many skipped lines (the count covers them all)."""
INDEXING_WARNING = 'Transcript indexing is in progress; results may be incomplete. Retry sessions_search shortly.'
_INDEXED_BLOCKS = {'text', 'input_text', 'output_text'}
_SCHEMA_VERSION = 1
# The event goes in only if new; its line, parent (a legacy event without parentId continues from the leaf) and
# whether it extends the active branch come from the session row, all in one statement.
_INSERT_EVENT = """
INSERT OR IGNORE INTO events (session_key, event_id, parent_id, line, type, role, timestamp, searchable, active,
                              body)
SELECT s.key, :id, CASE WHEN :has_parent THEN :parent ELSE s.leaf END, s.event_count + 1, :type, :role, :timestamp,
       :searchable, :index AND NOT s.needs_rebuild AND (NOT :has_parent OR s.leaf IS :parent), :body
FROM sessions s WHERE s.key = :key
RETURNING seq, active
"""
_INSERT_FTS = 'INSERT INTO message_fts (rowid, tokens, session_key, timestamp, event_id) VALUES (?, ?, ?, ?, ?)'
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


def main_session_key(agent_id: str) -> str:
    """The key of an agent's main session, ``agent:{agentId}:main`` (OpenClaw's convention)."""
    return f'agent:{agent_id}:main'


def default_sessions_path(agent_id: str) -> Path:
    """``~/.memsift/agents/{agentId}/sessions.sqlite``."""
    return Path('~/.memsift/agents').expanduser() / agent_id / 'sessions.sqlite'


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: the calling session and the visibility rules that apply to it (OpenClaw §11.4).

    Attributes:
        session_key: The caller's session; ``tree`` visibility starts there.
        agent_id: The caller's agent (default: the store's agent).
        visibility: ``self``, ``tree``, ``agent`` or ``all`` (default: the store's ``visibility``).
        sandboxed: A sandboxed caller with ``sandbox_visibility="spawned"`` sees only itself and the sessions it
            spawned, whatever ``visibility`` says.
        sandbox_visibility: ``spawned`` (default) or ``all``.
        agent_to_agent: With ``all``, whether other agents' sessions are visible (default: the store's setting).
    """

    session_key: str
    agent_id: str | None = None
    visibility: Visibility | None = None
    sandboxed: bool = False
    sandbox_visibility: Literal['spawned', 'all'] = 'spawned'
    agent_to_agent: bool | None = None


@dataclass(frozen=True, slots=True)
class _Session:
    key: str
    id: str
    agent: str
    spawned_by: str | None
    incognito: bool
    stale: bool
    """Marked for rebuild: its text is hidden from searches until its active branch is re-indexed."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _timestamp_ms(value: Any) -> int | None:
    """Milliseconds from a number (seconds below 1e11, else milliseconds) or an ISO-8601 string."""
    if isinstance(value, bool):
        return None
    milliseconds: float | None = None
    if isinstance(value, (int, float)) and abs(value) < MAX_TIMESTAMP_MS:  # also rules out nan and inf
        milliseconds = value * 1000 if abs(value) < 1e11 else value
    elif isinstance(value, str) and value.strip():
        try:
            milliseconds = datetime.fromisoformat(value.strip().replace('Z', '+00:00')).timestamp() * 1000
        except (ValueError, OverflowError):
            return None
    return int(milliseconds) if milliseconds is not None and abs(milliseconds) <= MAX_TIMESTAMP_MS else None


def message_text(event: Mapping[str, Any]) -> str | None:
    """The searchable text of an event: user and assistant messages only, string content or ``text`` /
    ``input_text`` / ``output_text`` blocks joined by newlines (tool results, thinking and images never)."""
    if event.get('type') != 'message' or not isinstance(event.get('message'), Mapping):
        return None
    message = event['message']
    if message.get('role') not in ('user', 'assistant'):
        return None
    text = _visible_text(message.get('content'))
    return text if text.strip() else None


_HANGUL = re.compile(r'^[\uac00-\ud7af]+$')
_KOREAN_PARTICLES = (
    '에서',
    '으로',
    '에게',
    '한테',
    '까지',
    '부터',
    '처럼',
    '보다',
    '을',
    '를',
    '이',
    '가',
    '은',
    '는',
    '에',
    '의',
    '로',
    '와',
    '과',
    '도',
    '만',
)


def _compound_only(tokens: list[str]) -> list[str]:
    """``err_conn_reset err conn reset`` -> ``err_conn_reset``: the analyzer always follows a compound token with
    its parts, so the compound alone matches the same messages, and a one-token phrase is cheaper to match."""
    end = 1
    while end < len(tokens) and tokens[end] in tokens[0]:
        end += 1
    return tokens[:1] + tokens[end:]


def _term_alternatives(term: str) -> list[str]:
    """A Korean word also matches without its trailing particle (회의를 → 회의), as OpenClaw's query expansion."""
    if _HANGUL.match(term):
        for particle in _KOREAN_PARTICLES:
            if term.endswith(particle) and len(term) - len(particle) >= 2:
                return [term, term[: -len(particle)]]
    return [term]


class SessionStore:
    """One agent's session transcripts and their full-text index, in SQLite.

    Thread-safe (calls are serialized on one connection); a background thread reconciles imported sessions.

    Args:
        path: Database file (``~/.memsift/agents/{agentId}/sessions.sqlite`` by default) or ``':memory:'``.
        agent_id: The agent whose sessions this store keeps (new sessions are recorded under it).
        visibility: Default ``tools.sessions.visibility`` for callers that do not say.
        agent_to_agent: Default for cross-agent access under ``all`` (``tools.agentToAgent.enabled``).
        redact_patterns: ``logging.redactPatterns``, applied before the default secret patterns.
        peers: Other agents' stores, searched too when a caller may see other agents (``all`` + agent-to-agent).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        agent_id: str = 'main',
        *,
        visibility: Visibility = 'tree',
        agent_to_agent: bool = False,
        redact_patterns: Sequence[str] = (),
        peers: Sequence[SessionStore] = (),
        sync_rebuild_max_events: int = SYNC_REBUILD_MAX_EVENTS,
        sync_rebuild_max_bytes: int = SYNC_REBUILD_MAX_BYTES,
    ) -> None:
        if visibility not in VISIBILITIES:
            raise InvalidInputError(f'visibility must be one of {", ".join(VISIBILITIES)}, not {preview(visibility)}')
        self.path = os.fspath(path) if path is not None else str(default_sessions_path(agent_id))
        self.agent_id = agent_id
        self.visibility: Visibility = visibility
        self.agent_to_agent = agent_to_agent
        self.peers = list(peers)
        self.redactor = Redactor(redact_patterns)
        self._analyzer = Analyzer()
        self._sync_max_events = sync_rebuild_max_events
        self._sync_max_bytes = sync_rebuild_max_bytes
        self._lock = threading.RLock()
        self._reconciler: threading.Thread | None = None
        self._cache: _Snapshot | None = None
        self._closed = False
        self._db = connect(
            self.path if self.path == ':memory:' else str(Path(self.path).expanduser()),
            _SCHEMA,
            _SCHEMA_VERSION,
            SessionStoreError,
            'the session store',
            'move the file aside and re-import the transcripts',
        )

    @classmethod
    def from_config(
        cls, path: str | os.PathLike[str] | None, agent_id: str, settings: SessionToolsConfig
    ) -> SessionStore:
        """The store of ``agent_id`` (default path when ``path`` is None) with the config's visibility, agent-to-agent
        access and redaction patterns (``MemoryConfig.session_tools``)."""
        return cls(
            path,
            agent_id,
            visibility=settings.visibility,
            agent_to_agent=settings.agent_to_agent,
            redact_patterns=settings.redact_patterns,
        )

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Stop the background reconciler and close the database."""
        with self._lock:
            self._closed = True
        if self._reconciler is not None:
            self._reconciler.join(timeout=30)
        with self._lock:
            self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'SessionStore({self.path!r}, agent_id={self.agent_id!r})'

    # ------------------------------------------------------------------ writing

    def _transaction(self) -> AbstractContextManager[None]:
        return transaction(self._db, SessionStoreError, f'the session store {self.path}')

    def _session_state(self, key: str) -> tuple[str | None, int, int, str | None] | None:
        """``(leaf, needs_rebuild, event_count, spawned_by)`` of a stored session."""
        return self._db.execute(
            'SELECT leaf, needs_rebuild, event_count, spawned_by FROM sessions WHERE key = ?', (key,)
        ).fetchone()

    def append(self, session_key: str, event: Mapping[str, Any], spawned_by: str | None = None) -> bool:
        """Append one transcript event to ``session_key`` (created on first use, ``spawned_by`` its parent session).

        The event and its full-text row are written in one transaction. Returns ``False`` when an event with the
        same ``id`` is already stored (appends are idempotent).

        Raises:
            InvalidInputError: ``event`` is not a transcript event object (the message says which field).
            SessionStoreError: the database could not be written (nothing was stored).
        """
        return self.append_many(session_key, [event], spawned_by) == 1

    def append_many(self, session_key: str, events: Iterable[Mapping[str, Any]], spawned_by: str | None = None) -> int:
        """Append events in order, all in one transaction (all or none are stored); returns how many were new."""
        session_key, spawned_by = _session_key(session_key), _spawned_by(spawned_by)
        checked = [(event, _event_line(event)) for event in events]
        with self._lock, self._transaction():
            self._adopt(session_key, spawned_by)
            return sum(self._append(session_key, event, body, spawned_by, index=True) for event, body in checked)

    def _append(
        self,
        session_key: str,
        event: Mapping[str, Any],
        body: str,
        spawned_by: str | None,
        *,
        index: bool,
        line: int | None = None,
    ) -> bool:
        event_id = event.get('id')
        if event_id is not None:  # a JSON value (bounded: its line was encoded), maybe a string cut mid-emoji
            event_id = scrub(event_id if isinstance(event_id, str) else json.dumps(event_id))
        timestamp = _timestamp_ms(event.get('timestamp'))
        if timestamp is None and isinstance(event.get('message'), Mapping):
            timestamp = _timestamp_ms(event['message'].get('timestamp'))
        timestamp = _now_ms() if timestamp is None else timestamp
        if event['type'] == 'session':  # a transcript header names the session; it is not part of the event tree
            self._create_session(session_key, event_id, spawned_by, timestamp)
            return False
        text = message_text(event)
        role = event['message'].get('role') if isinstance(event.get('message'), Mapping) else None
        parent = event.get('parentId')
        values = {
            'key': session_key,
            'id': event_id or uuid.uuid4().hex,
            'has_parent': 'parentId' in event,
            'parent': scrub(parent) if isinstance(parent, str) else None,
            'type': scrub(event['type']),
            'role': scrub(role) if isinstance(role, str) else None,
            'timestamp': timestamp,
            'searchable': text is not None,
            'index': index,
            'body': body,
        }
        inserted = self._db.execute(_INSERT_EVENT, values).fetchone()
        if inserted is None:
            if self._session_state(session_key) is not None:
                return False  # already stored: appends are idempotent
            self._create_session(session_key, None, spawned_by, timestamp)
            inserted = self._db.execute(_INSERT_EVENT, values).fetchone()
        seq, active = inserted
        if line is not None:  # an imported event keeps its line in the JSONL file
            self._db.execute('UPDATE events SET line = ? WHERE seq = ?', (line, seq))
        if active and text is not None:
            self._db.execute(
                _INSERT_FTS, (seq, ' '.join(self._analyzer.tokenize(text)), session_key, timestamp, values['id'])
            )
        self._db.execute(
            'UPDATE sessions SET leaf = ?, needs_rebuild = ?, event_count = event_count + 1, bytes = bytes + ?, '
            'updated_at = MAX(updated_at, ?) WHERE key = ?',
            (values['id'], int(not active), len(body.encode('utf-8')), timestamp, session_key),
        )
        return True

    def _adopt(self, session_key: str, spawned_by: str | None) -> None:
        """Record the parent of an existing session that has none yet (a new session gets it when created)."""
        if spawned_by is not None:
            self._db.execute(
                'UPDATE sessions SET spawned_by = ? WHERE key = ? AND spawned_by IS NULL', (spawned_by, session_key)
            )

    def _create_session(self, key: str, session_id: str | None, spawned_by: str | None, timestamp: int) -> None:
        if self._session_state(key) is not None:
            return
        if session_id and self._db.execute('SELECT 1 FROM sessions WHERE id = ?', (session_id,)).fetchone():
            session_id = None  # the same transcript imported under a second key: that session gets its own id
        self._db.execute(
            'INSERT INTO sessions (key, id, agent, spawned_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
            (key, session_id or uuid.uuid4().hex, self.agent_id, spawned_by, timestamp, timestamp),
        )

    def import_jsonl(
        self, path: str | os.PathLike[str], session_key: str, *, spawned_by: str | None = None, forward: bool = False
    ) -> dict[str, Any]:
        """Import an OpenClaw JSONL transcript as ``session_key``.

        Lines that are not JSON objects with a ``type`` (cut, not UTF-8, nested too deeply) are skipped and counted,
        and the first few named in ``skippedLines``: one bad line never fails the import. The next search that can
        see the session indexes it: at once if small (≤ 4000 events and 4 MiB), else in a background thread, answering
        ``indexing: true`` until it is done. :meth:`reconcile` indexes every imported session now. Importing the
        same file again reads only what was appended to it since (a file that shrank is read again from the start;
        events already stored are skipped). ``forward=True`` indexes events that extend the transcript at once, as
        :meth:`append` does (for a transcript that keeps growing).

        Returns:
            ``{"sessionKey", "sessionId", "events", "skipped", "skippedLines"?}``.

        Raises:
            SessionStoreError: the file cannot be read or holds no transcript event (the message names it).
        """
        session_key, spawned_by = _session_key(session_key), _spawned_by(spawned_by)
        file = Path(path)
        source = scrub(str(file.expanduser().resolve()))
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise SessionStoreError(f'{file}: cannot read the transcript: {exc.strerror or exc}') from exc
        with self._lock:
            seen = self._db.execute(
                'SELECT session_key, offset, lines FROM imports WHERE path = ?', (source,)
            ).fetchone()
        offset, lines_before = (seen[1], seen[2]) if seen and seen[0] == session_key and seen[1] <= len(raw) else (0, 0)
        end = max(offset, raw.rfind(b'\n') + 1)
        unfinished = _parse_line(raw[end:]) if len(raw) > end else None
        if isinstance(unfinished, dict):  # a complete last line without its newline
            end, unfinished = len(raw), None
        # Split on \n only, not splitlines(): JSON strings may hold U+2028 and other line separators.
        lines = raw[offset:end].split(b'\n')
        if lines[-1] == b'':
            lines.pop()
        if offset == 0 and lines:
            lines[0] = lines[0].removeprefix(b'\xef\xbb\xbf')  # a UTF-8 byte order mark
        added = 0
        problems: list[str] = []  # one bad line (cut, not UTF-8, absurdly nested) costs only itself
        with self._lock, self._transaction():
            self._adopt(session_key, spawned_by)
            for number, line in enumerate(lines, start=lines_before + 1):
                if not line.strip():
                    continue
                event = _parse_line(line)
                if isinstance(event, str):
                    problems.append(f'line {number}: {event}')
                    continue
                added += self._append(session_key, event, line.decode('utf-8'), spawned_by, index=forward, line=number)
            if self._session_state(session_key) is None:
                if unfinished is not None:  # a last line without its newline waits to be completed
                    problems.append(f'line {lines_before + len(lines) + 1} (no newline yet): {unfinished}')
                raise SessionStoreError(
                    f'{file}: no transcript events found ({len(problems)} unreadable lines'
                    f'{"; " + problems[0] if problems else ""})'
                )
            if added and not forward:
                self._db.execute('UPDATE sessions SET needs_rebuild = 1 WHERE key = ?', (session_key,))
            self._db.execute(
                'INSERT OR REPLACE INTO imports (path, session_key, offset, lines) VALUES (?, ?, ?, ?)',
                (source, session_key, end, lines_before + len(lines)),
            )
            session_id = self._db.execute('SELECT id FROM sessions WHERE key = ?', (session_key,)).fetchone()[0]
        out: dict[str, Any] = {
            'sessionKey': session_key,
            'sessionId': session_id,
            'events': added,
            'skipped': len(problems),
        }
        if problems:
            out['skippedLines'] = problems[:MAX_REPORTED_LINE_ERRORS]
        return out

    def set_flags(self, session_key: str, *, archived: bool | None = None, incognito: bool | None = None) -> None:
        """Mark a session archived or incognito (incognito sessions are never returned by searches or history)."""
        with self._lock, self._transaction():
            for column, value in (('archived', archived), ('incognito', incognito)):
                if value is not None:
                    self._db.execute(f'UPDATE sessions SET {column} = ? WHERE key = ?', (int(value), session_key))

    def delete(self, session_key: str) -> bool:
        """Delete a session, its events and its index rows in one transaction; ``False`` if it did not exist."""
        with self._lock, self._transaction():
            self._db.execute('DELETE FROM message_fts WHERE session_key = ?', (session_key,))
            self._db.execute('DELETE FROM events WHERE session_key = ?', (session_key,))
            self._db.execute('DELETE FROM imports WHERE session_key = ?', (session_key,))
            return self._db.execute('DELETE FROM sessions WHERE key = ?', (session_key,)).rowcount > 0

    # ------------------------------------------------------------------ rebuilding the active branch

    def _rebuild(self, session_key: str) -> None:
        """Recompute the active branch from the leaf and re-index it, in one transaction."""
        with self._lock, self._transaction():
            row = self._session_state(session_key)
            if row is None or not row[1]:
                return
            leaf = row[0]
            parents = dict(
                self._db.execute(
                    'SELECT event_id, parent_id FROM events WHERE session_key = ?', (session_key,)
                ).fetchall()
            )
            active: set[str] = set()
            node = leaf
            while node is not None and node in parents and node not in active:  # a parent loop stops the walk
                active.add(node)
                node = parents[node]
            self._db.execute('UPDATE events SET active = 0 WHERE session_key = ?', (session_key,))
            self._db.executemany(
                'UPDATE events SET active = 1 WHERE session_key = ? AND event_id = ?',
                [(session_key, event_id) for event_id in active],
            )
            self._db.execute('DELETE FROM message_fts WHERE session_key = ?', (session_key,))
            rows = self._db.execute(
                'SELECT seq, body, timestamp, event_id FROM events WHERE session_key = ? AND '
                'active = 1 AND searchable = 1',
                (session_key,),
            ).fetchall()
            tokens = self._analyzer.tokenize_batch([_body_text(row[1]) for row in rows])
            self._db.executemany(
                _INSERT_FTS,
                [
                    (seq, ' '.join(t), session_key, timestamp, event_id)
                    for (seq, _, timestamp, event_id), t in zip(rows, tokens, strict=True)
                ],
            )
            self._db.execute('UPDATE sessions SET needs_rebuild = 0 WHERE key = ?', (session_key,))

    def _stale(self, keys: Iterable[str] | None = None) -> list[tuple[str, int, int]]:
        """``(key, events, bytes)`` of the sessions (among ``keys``) waiting for a rebuild."""
        stale = self._snapshot().stale
        if keys is not None:
            stale &= frozenset(keys)
        if not stale:
            return []
        rows = self._db.execute('SELECT key, event_count, bytes FROM sessions WHERE needs_rebuild = 1').fetchall()
        return [row for row in rows if row[0] in stale]

    def reconcile(self) -> int:
        """Rebuild every session marked for rebuild now; returns how many were rebuilt."""
        with self._lock:
            stale = self._stale()
        for key, _, _ in stale:
            self._rebuild(key)
        return len(stale)

    def _start_reconciler(self) -> None:
        with self._lock:
            if self._closed or (self._reconciler is not None and self._reconciler.is_alive()):
                return
            self._reconciler = threading.Thread(
                target=self._reconcile_loop, name='memsift-sessions-reconcile', daemon=True
            )
            self._reconciler.start()

    def _reconcile_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                stale = self._stale()
            if not stale:
                return
            self._rebuild(stale[0][0])  # one session per lock hold: searches and appends interleave

    @property
    def indexing(self) -> bool:
        """Whether some session waits for its index (imported, or branched and not yet rebuilt)."""
        with self._lock:
            return bool(self._stale())

    # ------------------------------------------------------------------ visibility

    def _snapshot(self) -> _Snapshot:
        """Every session (cached until the ``sessions_version`` counter moves, in this process or another)."""
        version = self._db.execute("SELECT value FROM meta WHERE key = 'sessions_version'").fetchone()[0]
        if self._cache is None or self._cache.version != version:
            rows = self._db.execute('SELECT key, id, agent, spawned_by, incognito, needs_rebuild FROM sessions')
            self._cache = _Snapshot(
                version, {row[0]: _Session(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5])) for row in rows}
            )
        return self._cache

    def _caller(self, caller: str | Caller) -> Caller:
        if isinstance(caller, str):
            caller = Caller(caller)
        if not isinstance(caller, Caller) or not isinstance(caller.session_key, str):
            raise InvalidInputError(f'caller must be a session key or a memsift.Caller, not {preview(caller)}')
        visibility = caller.visibility or self.visibility
        if visibility not in VISIBILITIES:
            raise InvalidInputError(f'visibility must be one of {", ".join(VISIBILITIES)}, not {preview(visibility)}')
        return Caller(
            caller.session_key,
            caller.agent_id or self.agent_id,
            visibility,
            caller.sandboxed,
            caller.sandbox_visibility,
            self.agent_to_agent if caller.agent_to_agent is None else caller.agent_to_agent,
        )

    def _visible(self, caller: Caller, snapshot: _Snapshot | None = None) -> frozenset[str]:
        """The keys of the sessions of this store ``caller`` may see (incognito ones never)."""
        snapshot = snapshot or self._snapshot()
        keys = snapshot.visible.get(caller)
        if keys is None:
            keys = snapshot.visible[caller] = frozenset(_visible_keys(snapshot, caller, self.agent_id))
        return keys

    def visible_keys(self, caller: str | Caller) -> set[str]:
        """The keys of this store's sessions that ``caller`` may see."""
        who = self._caller(caller)
        with self._lock:
            return set(self._visible(who))

    def _resolve_key(self, requested: str, caller: Caller) -> str:
        if requested == 'current':
            return caller.session_key
        if requested in ('main', 'global'):
            main = main_session_key(caller.agent_id or self.agent_id)
            with self._lock:
                exists = self._db.execute('SELECT 1 FROM sessions WHERE key = ?', (main,)).fetchone()
            return main if exists else 'main'
        return requested

    # ------------------------------------------------------------------ sessions_search

    def search(
        self, query: str, caller: str | Caller, session_key: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> dict[str, Any]:
        """``sessions_search``: messages of the caller's visible sessions that contain every query term.

        Args:
            query: Whitespace-separated terms; each must match (a CJK term where its characters appear in order).
            caller: The calling session key, or a :class:`Caller` with its visibility rules.
            session_key: Restrict to one visible session (``current`` and ``main`` accepted).
            limit: Results wanted, 1 to 25 (larger values are clamped to 25).

        Returns:
            ``{"results": [{sessionKey, timestamp, role, snippet, score, sessionId, messageId}], "indexing"?,
            "warning"?, "truncated"?}`` best first.

        Raises:
            InvalidInputError: a blank or too long query, a bad limit or caller (the message says which).
            SessionAccessError: ``session_key`` names a session the caller may not see (or none).

        >>> store = SessionStore(':memory:')
        >>> store.search('  ', caller='main')
        Traceback (most recent call last):
        memsift._core.InvalidInputError: query must contain a non-space character
        """
        problem = _check_query(query, limit)
        if problem:
            raise InvalidInputError(problem)
        limit = min(int(limit), MAX_LIMIT)
        who = self._caller(caller)
        hits: list[dict[str, Any]] = []
        indexing = False
        refusals: list[SessionAccessError] = []
        stores = self._stores(who)
        for store in stores:
            try:
                found = store._search_visible(query, who, session_key, limit)
            except SessionAccessError as refused:  # the session may be another store's: refused if by none
                refusals.append(refused)
                continue
            hits.extend(found['results'])
            indexing |= found['indexing']
        if len(refusals) == len(stores):
            raise refusals[0]
        hits.sort(key=lambda h: (-h['score'], -h['timestamp'], h['sessionKey'], h['messageId']))
        response: dict[str, Any] = {'results': []}
        if indexing:
            response.update(indexing=True, warning=INDEXING_WARNING)
        used = 2 + len(json.dumps({k: v for k, v in response.items() if k != 'results'}, ensure_ascii=False))
        for hit in hits[:limit]:
            size = len(json.dumps(hit, ensure_ascii=False, separators=(',', ':')).encode('utf-8')) + 1
            if used + size > MAX_RESPONSE_BYTES:
                response['truncated'] = True
                break
            response['results'].append(hit)
            used += size
        return response

    def _stores(self, caller: Caller) -> list[SessionStore]:
        """This store, plus the peers when the caller may see other agents."""
        return [self, *self.peers] if caller.visibility == 'all' and caller.agent_to_agent else [self]

    def _search_visible(self, query: str, caller: Caller, session_key: str | None, limit: int) -> dict[str, Any]:
        with self._lock:
            visible = self._visible(caller)
        if session_key is not None:
            key = self._resolve_key(session_key, caller)
            if key not in visible:
                raise _not_visible(session_key, caller)
            visible = frozenset((key,))
        indexing = self._catch_up(visible)
        expression, terms = self._match_expression(query)
        if expression is None:
            return {'results': [], 'indexing': indexing}
        with self._lock:
            self._db.execute('BEGIN')  # one read snapshot: the session list and the rows agree
            try:
                snapshot = self._snapshot()
                sessions = snapshot.sessions
                searchable = (visible & snapshot.keys) - snapshot.stale
                hidden = snapshot.keys - searchable
                # Filter on whichever list is shorter (usually the few hidden sessions, for the main session).
                if not searchable:
                    rows = []
                else:
                    where, keys = (
                        ('', [])
                        if not hidden
                        else ('AND session_key NOT IN (SELECT value FROM json_each(?))', [hidden])
                        if len(hidden) <= len(searchable)
                        else ('AND session_key IN (SELECT value FROM json_each(?))', [searchable])
                    )
                    rows = self._db.execute(
                        'SELECT f.seq, f.session_key, f.timestamp, f.event_id, f.rank, e.role, e.body FROM ('
                        'SELECT rowid AS seq, session_key, timestamp, event_id, bm25(message_fts) AS rank '
                        f'FROM message_fts WHERE message_fts MATCH ? {where} '
                        'ORDER BY rank, timestamp DESC, event_id LIMIT ?) f JOIN events e ON e.seq = f.seq '
                        'ORDER BY f.rank, f.timestamp DESC, f.event_id',
                        (expression, *(json.dumps(sorted(k)) for k in keys), limit),
                    ).fetchall()
            finally:
                self._db.execute('COMMIT')
        results = [
            {
                'sessionKey': key,
                'timestamp': timestamp,
                'role': role,
                'snippet': self._snippet(_body_text(body), terms),
                'score': -rank,
                'sessionId': sessions[key].id,
                'messageId': message_id,
            }
            for _, key, timestamp, message_id, rank, role, body in rows
        ]
        return {'results': results, 'indexing': indexing}

    def _catch_up(self, visible: frozenset[str]) -> bool:
        """Rebuild stale visible sessions: small ones now, large ones in the background. True if any remain."""
        with self._lock:
            if not visible & self._snapshot().stale:
                return False
        with self._lock:
            stale = self._stale(visible)
        pending = False
        for key, events, size in stale:
            if events <= self._sync_max_events and size <= self._sync_max_bytes:
                self._rebuild(key)
            else:
                pending = True
        if pending:
            self._start_reconciler()
        return pending

    def _match_expression(self, query: str) -> tuple[str | None, list[str]]:
        """FTS5 MATCH text: each term a quoted phrase of its analyzer tokens, all terms joined with AND."""
        terms = query.split()
        clauses: list[str] = []
        for term in dict.fromkeys(terms):  # a repeated term adds nothing but work
            phrases = [
                '"' + ' '.join(_compound_only(tokens)).replace('"', '""') + '"'
                for tokens in self._analyzer.tokenize_batch(_term_alternatives(term))
                if tokens
            ]
            if phrases:
                clauses.append(phrases[0] if len(phrases) == 1 else '(' + ' OR '.join(phrases) + ')')
        return (' AND '.join(clauses) if clauses else None), terms

    def _snippet(self, text: str, terms: Sequence[str]) -> str:
        """A match-centred excerpt of at most 500 characters, redacted, then capped at 300 (``…`` marks cuts).

        The whole message is redacted before it is cut, so a secret split by the excerpt's edge is still masked.
        """
        text = ' '.join(self.redactor.redact(text).split())
        folded = text.casefold()
        found = [folded.find(t.casefold()) for t in terms]
        found += [folded.find(token) for token in self._analyzer.tokenize(' '.join(terms)) if len(token) > 1]
        position = min((p for p in found if p >= 0), default=0)
        start = max(0, position - 80)
        if start and (space := text.rfind(' ', max(0, start - 20), start)) > 0:
            start = space + 1
        excerpt = _cap(text[start:], STORE_SNIPPET_CHARS)
        if start:
            excerpt = '…' + excerpt
        return _cap(self.redactor.redact(excerpt), TOOL_SNIPPET_CHARS)

    # ------------------------------------------------------------------ sessions_history

    def history(
        self, session_key: str, caller: str | Caller, *, limit: int = HISTORY_DEFAULT_LIMIT, include_tools: bool = False
    ) -> dict[str, Any]:
        """``sessions_history``: the last ``limit`` messages on the active branch of a visible session.

        Text is redacted, each message capped at 4000 characters, tool calls and thinking blocks are stripped
        (tool results too unless ``include_tools``), and the response stays within 32 KiB of JSON (oldest messages
        dropped first, with ``truncated: true``). ``session_key`` may also be a session id.

        Returns:
            ``{"sessionKey", "sessionId", "messages": [{id, role, timestamp, content}], "truncated"?}``.

        Raises:
            InvalidInputError: a bad limit or caller.
            SessionAccessError: the caller may not see that session (or it does not exist).
        """
        who = self._caller(caller)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInputError(f'limit must be a positive integer, not {preview(limit)}')
        refused: SessionAccessError | None = None
        for store in self._stores(who):  # the session may be a peer's
            try:
                return store._history(session_key, who, min(limit, HISTORY_MAX_LIMIT), include_tools)
            except SessionAccessError as exc:
                refused = refused or exc
        assert refused is not None
        raise refused

    def _history(self, session_key: str, who: Caller, limit: int, include_tools: bool) -> dict[str, Any]:
        key = self._resolve_key(session_key, who) if isinstance(session_key, str) else ''
        with self._lock:
            snapshot = self._snapshot()
            if key not in snapshot.sessions:  # a session id names its session too
                key = next((k for k, session in snapshot.sessions.items() if session.id == key), key)
            visible = self._visible(who, snapshot)
        if key not in visible:
            raise _not_visible(session_key, who)
        self._catch_up(frozenset((key,)))
        with self._lock:
            rows = self._db.execute(
                'SELECT event_id, timestamp, body FROM events WHERE session_key = ? AND active = 1 '
                "AND type = 'message' ORDER BY seq",
                (key,),
            ).fetchall()
        kept = []
        for event_id, timestamp, body in rows:
            message = json.loads(body).get('message')
            if not isinstance(message, Mapping):
                continue  # an event whose "message" is not an object has no role or text to show
            role = message.get('role')
            if (role == 'toolResult' and not include_tools) or role not in ('user', 'assistant', 'toolResult'):
                continue
            content = _visible_text(message.get('content'))
            if content:
                kept.append((event_id, role, timestamp, content))
        messages = [
            {
                'id': event_id,
                'role': role,
                'timestamp': timestamp,
                'content': _cap(self.redactor.redact(content), HISTORY_MESSAGE_CHARS),
            }
            for event_id, role, timestamp, content in kept[-limit:]
        ]  # only what is returned is redacted
        session_id = snapshot.sessions[key].id
        response: dict[str, Any] = {'sessionKey': key, 'sessionId': session_id, 'messages': messages}
        while messages and len(json.dumps(response, ensure_ascii=False).encode('utf-8')) > MAX_RESPONSE_BYTES:
            messages.pop(0)
            response['truncated'] = True
        return response

    # ------------------------------------------------------------------ listing

    def sessions(self) -> list[dict[str, Any]]:
        """Every stored session with its counts and flags (for ``status`` and tools)."""
        with self._lock:
            rows = self._db.execute(
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

    def fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever a session is added, removed, flagged, branched or grows: a cheap "anything new?" check."""
        with self._lock:
            return tuple(
                self._db.execute(
                    'SELECT count(*), total(event_count), total(bytes), (SELECT value FROM meta WHERE key = '
                    "'sessions_version') FROM sessions"
                ).fetchone()
            )

    def active_messages(self, session_key: str) -> Iterator[tuple[int, str, str]]:
        """``(line, role, text)`` of the searchable messages on a session's active branch, in order (session memory
        chunks these)."""
        with self._lock:
            rows = self._db.execute(
                'SELECT line, role, body FROM events WHERE session_key = ? AND active = 1 AND '
                'searchable = 1 ORDER BY seq',
                (session_key,),
            ).fetchall()
        for line, role, body in rows:
            yield line, role, _body_text(body)


@dataclass(slots=True)
class _Snapshot:
    version: str
    sessions: dict[str, _Session]
    visible: dict[Caller, frozenset[str]] = field(default_factory=dict)
    """Visible keys per caller, computed once per snapshot."""
    keys: frozenset[str] = frozenset()
    stale: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.keys = frozenset(self.sessions)
        self.stale = frozenset(key for key, session in self.sessions.items() if session.stale)


def _visible_keys(snapshot: _Snapshot, caller: Caller, store_agent: str) -> set[str]:
    """OpenClaw's visibility rules (§11.4) over one store's sessions."""
    sessions = {key: s for key, s in snapshot.sessions.items() if not s.incognito}
    agent = caller.agent_id or store_agent
    key = caller.session_key
    children: dict[str, list[str]] = {}
    for s in sessions.values():
        if s.spawned_by is not None:
            children.setdefault(s.spawned_by, []).append(s.key)

    def spawned_tree(root: str) -> set[str]:
        seen, todo = {root}, [root]
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        return seen

    own = {k for k, s in sessions.items() if s.agent == agent}
    if caller.visibility == 'self':
        keys = {key}
    elif caller.visibility == 'tree':
        keys = own if key in ('main', main_session_key(agent)) else spawned_tree(key)
    elif caller.visibility == 'agent':
        keys = own
    else:
        keys = set(sessions) if caller.agent_to_agent else own
    if caller.sandboxed and caller.sandbox_visibility == 'spawned':
        keys &= spawned_tree(key)
    return keys & set(sessions)


def _not_visible(session_key: object, caller: Caller) -> SessionAccessError:
    return SessionAccessError(
        f'session {preview(session_key)} is not visible to {preview(caller.session_key)} under '
        f'{caller.visibility!r} visibility (or does not exist)'
    )


def _check_query(query: object, limit: object) -> str | None:
    if not isinstance(query, str):
        return f'query must be a string, not {type(query).__name__}'
    if not query.strip():
        return 'query must contain a non-space character'
    if len(query) > MAX_QUERY_CHARS:
        return f'query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}'
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return f'limit must be a positive integer (at most {MAX_LIMIT}), not {preview(limit)}'
    return None


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + '…'


def _visible_text(content: Any) -> str:
    """Message text without tool calls, thinking or images: the string, or the text blocks joined."""
    if isinstance(content, str):
        return scrub(content)
    if isinstance(content, list):
        return scrub(
            '\n'.join(
                block['text']
                for block in content
                if isinstance(block, Mapping)
                and block.get('type') in _INDEXED_BLOCKS
                and isinstance(block.get('text'), str)
            )
        )
    return ''


def _session_key(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f'session_key must be a non-empty string, not {preview(value)}')
    return scrub(value)


def _spawned_by(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f'spawned_by must be a session key or None, not {preview(value)}')
    return None if value is None else scrub(value)


def _parse_line(line: bytes) -> dict[str, Any] | str:
    """A transcript line's event, or why it is skipped."""
    try:
        event = json.loads(line.decode('utf-8'))
    except UnicodeDecodeError as exc:
        return f'not UTF-8 (bad byte at column {exc.start + 1})'
    except ValueError as exc:
        return f'not JSON ({exc})'
    except RecursionError:
        return 'nested too deeply'
    if not isinstance(event, dict) or not isinstance(event.get('type'), str):
        return 'not an event (an object with a string "type")'
    return event


def _event_line(event: object) -> str:
    """An appended event as its stored JSON line; lone surrogates stay escaped (``\\ud83d``), as in a JSONL file.

    Raises:
        InvalidInputError: not an object with a string ``type``, or not representable as JSON.
    """
    if not isinstance(event, Mapping) or not isinstance(event.get('type'), str):
        raise InvalidInputError(f'event must be an object with a string "type" field, not {preview(event)}')
    try:
        line = json.dumps(event, ensure_ascii=False)
    except RecursionError:
        raise InvalidInputError(f'event {preview(event)} is nested too deeply to store') from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f'event {preview(event)} is not JSON: {exc}') from None
    return line if line == scrub(line) else json.dumps(event)


def _body_text(body: str) -> str:
    """The searchable text of a stored event (the events table keeps only the JSON line)."""
    return message_text(json.loads(body)) or ''
