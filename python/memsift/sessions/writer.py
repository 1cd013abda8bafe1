"""Writing the session store's tables: the :class:`Writer` keeps them consistent as events arrive (an event, its
full-text row and its session's counters in one transaction), as a session's active branch is recomputed, and as
sessions are flagged or deleted.

The full-text rows hold memsift's analyzer tokens of the *redacted* message text, joined by spaces (FTS5 only
splits them again on spaces): a search for a raw secret finds nothing, so it cannot confirm a guessed one.

>>> from memsift._core import Analyzer
>>> from memsift.redact import Redactor
>>> from memsift.sessions.tables import open_database
>>> writer = Writer(open_database(':memory:'), Analyzer(), Redactor().redact, 'main', ':memory:')
>>> with writer.transaction():
...     writer.append('agent:main:main', {'type': 'message', 'id': 'm1', 'timestamp': 1767225600000,
...                   'message': {'role': 'user', 'content': 'ERR_CONN_RESET, DB_PASSWORD=hunter2'}}, '{}', None,
...                   index=True)
True
>>> writer.db.execute('SELECT tokens FROM message_fts').fetchone()
('err_conn_reset err conn reset db_password db password',)
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from memsift._core import Analyzer
from memsift._sqlite import transaction
from memsift._text import scrub
from memsift.errors import SessionStoreError
from memsift.sessions.events import body_text, is_dreaming_event, message_text, now_ms, timestamp_ms

__all__ = ['REINDEX_BATCH', 'REWRITES_KEPT', 'Writer']

REINDEX_BATCH = 2000
REWRITES_KEPT = 1000
"""Rewrite records kept in ``fts_rewrites``; a mirror further behind than this rebuilds whole."""
"""Full-text rows re-indexed per transaction when the redaction changes."""

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


class Writer:
    """Writes events, their full-text rows and their sessions into one store's tables.

    Not locked: the caller holds the store's lock, and runs the writes inside :meth:`transaction`.

    Attributes:
        db: The store's connection.
        analyzer: Turns message text into the tokens of the full-text rows.
        redact: Masks secrets in message text before it is tokenized.
        agent_id: The agent that new sessions are recorded under.
    """

    def __init__(
        self, db: sqlite3.Connection, analyzer: Analyzer, redact: Callable[[str], str], agent_id: str, path: str
    ) -> None:
        self.db = db
        self.analyzer = analyzer
        self.redact = redact
        self.agent_id = agent_id
        self._what = f'the session store {path}'

    def transaction(self) -> AbstractContextManager[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error (SQLite errors become ``SessionStoreError``)."""
        return transaction(self.db, SessionStoreError, self._what)

    def session_state(self, key: str) -> tuple[str | None, int, int, str | None] | None:
        """``(leaf, needs_rebuild, event_count, spawned_by)`` of a stored session."""
        return self.db.execute(
            'SELECT leaf, needs_rebuild, event_count, spawned_by FROM sessions WHERE key = ?', (key,)
        ).fetchone()

    def append(
        self,
        session_key: str,
        event: Mapping[str, Any],
        body: str,
        spawned_by: str | None,
        *,
        index: bool,
        line: int | None = None,
    ) -> bool:
        """Store ``event`` (its JSON line ``body``) in ``session_key``, created if new; ``False`` if already stored.

        With ``index``, an event that extends the active branch gets its full-text row now; any other event marks
        the session for a rebuild. ``line`` is an imported event's line in its JSONL file.
        """
        event_id = event.get('id')
        if event_id is not None:  # a JSON value (bounded: its line was encoded), maybe a string cut mid-emoji
            event_id = scrub(event_id if isinstance(event_id, str) else json.dumps(event_id))
        timestamp = timestamp_ms(event.get('timestamp'))
        if timestamp is None and isinstance(event.get('message'), Mapping):
            timestamp = timestamp_ms(event['message'].get('timestamp'))
        timestamp = now_ms() if timestamp is None else timestamp
        if event['type'] == 'session':  # a transcript header names the session; it is not part of the event tree
            self.create_session(session_key, event_id, spawned_by, timestamp)
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
        inserted = self.db.execute(_INSERT_EVENT, values).fetchone()
        if inserted is None:
            if self.session_state(session_key) is not None:
                return False  # already stored: appends are idempotent
            self.create_session(session_key, None, spawned_by, timestamp)
            inserted = self.db.execute(_INSERT_EVENT, values).fetchone()
        seq, active = inserted
        if line is not None:  # an imported event keeps its line in the JSONL file
            self.db.execute('UPDATE events SET line = ? WHERE seq = ?', (line, seq))
        if active and text is not None:
            self.db.execute(_INSERT_FTS, (seq, self._tokens([text])[0], session_key, timestamp, values['id']))
        leaf, stale = values['id'], not active
        target = event.get('targetId', ...)
        if event['type'] == 'leaf' and (target is None or isinstance(target, str)):
            # A leaf control (a rewind) moves the active leaf to its target: the branch it leaves is hidden from
            # search until the session is rebuilt from the new leaf (OpenClaw's leaf-control rewind).
            leaf, stale = (scrub(target) if target is not None else None), True
        self.db.execute(
            'UPDATE sessions SET leaf = ?, needs_rebuild = ?, event_count = event_count + 1, bytes = bytes + ?, '
            'updated_at = MAX(updated_at, ?) WHERE key = ?',
            (leaf, int(stale), len(body.encode('utf-8')), timestamp, session_key),
        )
        if is_dreaming_event(event):  # OpenClaw never indexes a dreaming transcript: hidden like an incognito one
            self.db.execute('UPDATE sessions SET incognito = 1 WHERE key = ?', (session_key,))
        return True

    def adopt(self, session_key: str, spawned_by: str | None) -> None:
        """Record the parent of an existing session that has none yet (a new session gets it when created)."""
        if spawned_by is not None:
            self.db.execute(
                'UPDATE sessions SET spawned_by = ? WHERE key = ? AND spawned_by IS NULL', (spawned_by, session_key)
            )

    def create_session(self, key: str, session_id: str | None, spawned_by: str | None, timestamp: int) -> None:
        """Record session ``key`` unless it exists (a new id when ``session_id`` is None or another session's)."""
        if self.session_state(key) is not None:
            return
        if session_id and self.db.execute('SELECT 1 FROM sessions WHERE id = ?', (session_id,)).fetchone():
            session_id = None  # the same transcript imported under a second key: that session gets its own id
        self.db.execute(
            'INSERT INTO sessions (key, id, agent, spawned_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
            (key, session_id or uuid.uuid4().hex, self.agent_id, spawned_by, timestamp, timestamp),
        )

    def rebuild(self, session_key: str) -> None:
        """Recompute a session's active branch from its leaf and re-index it, if it is marked for rebuild."""
        row = self.session_state(session_key)
        if row is None or not row[1]:
            return
        leaf = row[0]
        parents = dict(
            self.db.execute('SELECT event_id, parent_id FROM events WHERE session_key = ?', (session_key,)).fetchall()
        )
        active: set[str] = set()
        node = leaf
        while node is not None and node in parents and node not in active:  # a parent loop stops the walk
            active.add(node)
            node = parents[node]
        self.db.execute('UPDATE events SET active = 0 WHERE session_key = ?', (session_key,))
        self.db.executemany(
            'UPDATE events SET active = 1 WHERE session_key = ? AND event_id = ?',
            [(session_key, event_id) for event_id in active],
        )
        self.db.execute('DELETE FROM message_fts WHERE session_key = ?', (session_key,))
        self._rewritten(session_key)
        rows = self.db.execute(
            'SELECT seq, body, timestamp, event_id FROM events WHERE session_key = ? AND active = 1 AND searchable = 1',
            (session_key,),
        ).fetchall()
        tokens = self._tokens([body_text(row[1]) for row in rows])
        self.db.executemany(
            _INSERT_FTS,
            [
                (seq, t, session_key, timestamp, event_id)
                for (seq, _, timestamp, event_id), t in zip(rows, tokens, strict=True)
            ],
        )
        self.db.execute('UPDATE sessions SET needs_rebuild = 0 WHERE key = ?', (session_key,))

    def _rewritten(self, session_key: str) -> None:
        """Record that a session's full-text rows changed other than by appending (``*``: every session's), for
        :class:`~memsift.sessions.ranked.MessageMirror`; only the last :data:`REWRITES_KEPT` records are kept."""
        version = self.db.execute('INSERT INTO fts_rewrites (session_key) VALUES (?)', (session_key,)).lastrowid
        self.db.execute('DELETE FROM fts_rewrites WHERE version <= ?', ((version or 0) - REWRITES_KEPT,))

    def _tokens(self, texts: list[str]) -> list[str]:
        """The full-text row of each message text: the analyzer tokens of its redacted text."""
        return [' '.join(t) for t in self.analyzer.tokenize_batch([self.redact(text) for text in texts])]

    def reindex_redacted(self, redaction: str, batch: int = REINDEX_BATCH) -> int:
        """Bring every full-text row to the redaction ``redaction`` (a fingerprint of the patterns), if another one
        built them: older stores indexed raw text, and changed patterns change what is masked. Returns the rows
        re-indexed.

        Resumable: each batch commits with its progress, so a process killed midway continues where it stopped.
        """
        done = 0
        if self.db.execute("SELECT value FROM meta WHERE key = 'fts_redaction'").fetchone() == (redaction,):
            return done  # the usual case: nothing to do, and no write lock taken
        while True:
            with self.transaction():
                state = dict(self.db.execute("SELECT key, value FROM meta WHERE key LIKE 'fts_redaction%'").fetchall())
                if state.get('fts_redaction') == redaction:
                    return done
                after = int(state['fts_redaction_upto']) if state.get('fts_redaction_target') == redaction else 0
                rows = self.db.execute(
                    'SELECT f.rowid, e.body FROM message_fts f JOIN events e ON e.seq = f.rowid WHERE f.rowid > ? '
                    'ORDER BY f.rowid LIMIT ?',
                    (after, batch),
                ).fetchall()
                tokens = self._tokens([body_text(body) for _, body in rows])
                self.db.executemany(
                    'UPDATE message_fts SET tokens = ? WHERE rowid = ?',
                    [(t, seq) for (seq, _), t in zip(rows, tokens, strict=True)],
                )
                self._rewritten('*')
                progress = {'fts_redaction_target': redaction, 'fts_redaction_upto': str(rows[-1][0] if rows else 0)}
                if len(rows) < batch:
                    progress = {'fts_redaction': redaction, 'fts_redaction_target': '', 'fts_redaction_upto': '0'}
                self.db.executemany('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', list(progress.items()))
                done += len(rows)

    def set_flags(self, session_key: str, *, archived: bool | None, incognito: bool | None) -> None:
        """Set a session's ``archived`` and ``incognito`` flags (a None leaves one as it is)."""
        for column, value in (('archived', archived), ('incognito', incognito)):
            if value is not None:
                self.db.execute(f'UPDATE sessions SET {column} = ? WHERE key = ?', (int(value), session_key))

    def delete(self, session_key: str) -> bool:
        """Delete a session, its events, index rows and import record; ``False`` if it did not exist."""
        self.db.execute('DELETE FROM message_fts WHERE session_key = ?', (session_key,))
        self._rewritten(session_key)
        self.db.execute(
            'DELETE FROM message_vectors WHERE seq IN (SELECT seq FROM events WHERE session_key = ?)', (session_key,)
        )
        self.db.execute('DELETE FROM events WHERE session_key = ?', (session_key,))
        self.db.execute('DELETE FROM imports WHERE session_key = ?', (session_key,))
        return self.db.execute('DELETE FROM sessions WHERE key = ?', (session_key,)).rowcount > 0
