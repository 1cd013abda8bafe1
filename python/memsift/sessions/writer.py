"""Writing the session store's tables: the :class:`Writer` keeps them consistent as events arrive (an event, its
full-text row and its session's counters in one transaction), as a session's active branch is recomputed, and as
sessions are flagged or deleted.

The full-text rows hold memsift's analyzer tokens of the message text in its *searchable* form (redacted, each mask
one constant: :meth:`~memsift.redact.Redactor.redact_for_search`), joined by spaces (FTS5 splits them again;
PostgreSQL keeps them split as FTS5 splits them, :mod:`~memsift.sessions.fts5`): no fragment of a secret is there,
so a search cannot confirm a guessed one.

>>> from memsift._core import Analyzer
>>> from memsift.redact import Redactor
>>> from memsift.sessions.tables import open_database
>>> writer = Writer(open_database(':memory:'), Analyzer(), Redactor().redact_for_search)
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
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from memsift._core import Analyzer
from memsift._text import scrub
from memsift.sessions.database import Database, Sql
from memsift.sessions.events import body_text, is_dreaming_event, message_text, now_ms, timestamp_ms

__all__ = ['REINDEX_BATCH', 'REWRITES_KEPT', 'Writer']

REINDEX_BATCH = 2000
REWRITES_KEPT = 1000
"""Rewrite records kept in ``fts_rewrites``; a mirror further behind than this rebuilds whole."""
"""Full-text rows re-indexed per transaction when the redaction changes."""

# The event goes in only if new; its line, parent (a legacy event without parentId continues from the leaf) and
# whether it extends the active branch come from the session row, all in one statement.
_INSERT_EVENT = Sql(
    """
INSERT OR IGNORE INTO events (session_key, event_id, parent_id, line, type, role, timestamp, searchable, active,
                              body)
SELECT s.key, :id, CASE WHEN :has_parent THEN :parent ELSE s.leaf END, s.event_count + 1, :type, :role, :timestamp,
       :searchable, :index AND NOT s.needs_rebuild AND (NOT :has_parent OR s.leaf IS :parent), :body
FROM sessions s WHERE s.key = :key
RETURNING seq, active
""",
    """
INSERT INTO session_events (agent, session_key, event_id, parent_id, line, type, role, timestamp, searchable, active,
                            body)
SELECT s.agent, s.key, :id, CASE WHEN :has_parent THEN :parent ELSE s.leaf END, s.event_count + 1, :type, :role,
       :timestamp, :searchable,
       :index AND NOT s.needs_rebuild AND (NOT :has_parent OR s.leaf IS NOT DISTINCT FROM :parent), :body
FROM session_sessions s WHERE s.agent = :agent AND s.key = :key
ON CONFLICT (agent, session_key, event_id) DO NOTHING
RETURNING seq, active
""",
)
_INSERT_FTS = Sql(
    'INSERT INTO message_fts (rowid, tokens, session_key, timestamp, event_id) '
    'VALUES (:seq, :tokens, :key, :timestamp, :id)',
    'INSERT INTO session_message_fts (agent, seq, tokens, terms, length, session_key, timestamp, event_id) '
    'VALUES (:agent, :seq, :tokens, :terms, :length, :key, :timestamp, :id)',
)
_SESSION_STATE = Sql(
    'SELECT leaf, needs_rebuild, event_count, spawned_by FROM sessions WHERE key = :key',
    'SELECT leaf, needs_rebuild, event_count, spawned_by FROM session_sessions WHERE agent = :agent AND key = :key',
)
_FORGOTTEN = Sql(
    'SELECT 1 FROM forgotten WHERE session_key = :key',
    'SELECT 1 FROM session_forgotten WHERE agent = :agent AND session_key = :key',
)
_FORGET = Sql(
    'INSERT OR IGNORE INTO forgotten (session_key, forgotten_at) VALUES (:key, :now)',
    'INSERT INTO session_forgotten (agent, session_key, forgotten_at) VALUES (:agent, :key, :now) '
    'ON CONFLICT (agent, session_key) DO NOTHING',
)
_DELETE_FTS = Sql(
    'DELETE FROM message_fts WHERE session_key = :key',
    'DELETE FROM session_message_fts WHERE agent = :agent AND session_key = :key',
)
_META = Sql(
    "SELECT key, value FROM meta WHERE key LIKE 'fts_redaction%'",
    "SELECT key, value FROM session_meta WHERE agent = :agent AND key LIKE 'fts_redaction%'",
)


class Writer:
    """Writes events, their full-text rows and their sessions into one store's tables.

    Not locked: the caller holds the store's lock, and runs the writes inside :meth:`transaction`.

    Attributes:
        db: The store's connection.
        analyzer: Turns message text into the tokens of the full-text rows.
        redact: The searchable form of message text (secrets masked, each mask one constant), which is tokenized.
        agent_id: The agent that new sessions are recorded under (the store's).
    """

    def __init__(self, db: Database, analyzer: Analyzer, redact: Callable[[str], str]) -> None:
        self.db = db
        self.analyzer = analyzer
        self.redact = redact
        self.agent_id = db.agent

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction, rolled back on any error (database errors become ``SessionStoreError``)."""
        return self.db.transaction()

    def session_state(self, key: str) -> tuple[str | None, int, int, str | None] | None:
        """``(leaf, needs_rebuild, event_count, spawned_by)`` of a stored session."""
        return self.db.execute(_SESSION_STATE, {'key': key}).fetchone()

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
            if not self.create_session(session_key, None, spawned_by, timestamp):
                return False  # forgotten: its events are never stored again
            inserted = self.db.execute(_INSERT_EVENT, values).fetchone()
        seq, active = inserted
        if line is not None:  # an imported event keeps its line in the JSONL file
            self.db.execute(
                Sql(
                    'UPDATE events SET line = :line WHERE seq = :seq',
                    'UPDATE session_events SET line = :line WHERE agent = :agent AND seq = :seq',
                ),
                {'line': line, 'seq': seq},
            )
        if active and text is not None:
            self.db.execute(_INSERT_FTS, {**values, 'seq': seq, **self.db.fts_row(self._tokens([text])[0])})
        leaf, stale = values['id'], not active
        target = event.get('targetId', ...)
        if event['type'] == 'leaf' and (target is None or isinstance(target, str)):
            # A leaf control (a rewind) moves the active leaf to its target: the branch it leaves is hidden from
            # search until the session is rebuilt from the new leaf (OpenClaw's leaf-control rewind).
            leaf, stale = (scrub(target) if target is not None else None), True
        self.db.execute(
            Sql(
                'UPDATE sessions SET leaf = :leaf, needs_rebuild = :stale, event_count = event_count + 1, '
                'bytes = bytes + :bytes, updated_at = MAX(updated_at, :timestamp) WHERE key = :key',
                'UPDATE session_sessions SET leaf = :leaf, needs_rebuild = :stale, event_count = event_count + 1, '
                'bytes = bytes + :bytes, updated_at = GREATEST(updated_at, :timestamp) '
                'WHERE agent = :agent AND key = :key',
            ),
            {'leaf': leaf, 'stale': stale, 'bytes': len(body.encode('utf-8')), 'timestamp': timestamp,
             'key': session_key},
        )  # fmt: skip
        if is_dreaming_event(event):  # OpenClaw never indexes a dreaming transcript: hidden like an incognito one
            self.set_flags(session_key, archived=None, incognito=True)
        return True

    def adopt(self, session_key: str, spawned_by: str | None) -> None:
        """Record the parent of an existing session that has none yet (a new session gets it when created)."""
        if spawned_by is not None:
            self.db.execute(
                Sql(
                    'UPDATE sessions SET spawned_by = :parent WHERE key = :key AND spawned_by IS NULL',
                    'UPDATE session_sessions SET spawned_by = :parent '
                    'WHERE agent = :agent AND key = :key AND spawned_by IS NULL',
                ),
                {'parent': spawned_by, 'key': session_key},
            )

    def create_session(self, key: str, session_id: str | None, spawned_by: str | None, timestamp: int) -> bool:
        """Record session ``key`` unless it exists (a new id when ``session_id`` is None or another session's);
        ``False`` when it was forgotten (:meth:`forget`): it is not recorded."""
        if self.session_state(key) is not None:
            return True
        if self.forgotten(key):
            return False
        taken = Sql(
            'SELECT 1 FROM sessions WHERE id = :id', 'SELECT 1 FROM session_sessions WHERE agent = :agent AND id = :id'
        )
        if session_id and self.db.execute(taken, {'id': session_id}).fetchone():
            session_id = None  # the same transcript imported under a second key: that session gets its own id
        self.db.execute(
            Sql(
                'INSERT INTO sessions (key, id, agent, spawned_by, created_at, updated_at) '
                'VALUES (:key, :id, :owner, :parent, :timestamp, :timestamp)',
                'INSERT INTO session_sessions (key, id, agent, spawned_by, created_at, updated_at) '
                'VALUES (:key, :id, :agent, :parent, :timestamp, :timestamp)',
            ),
            {'key': key, 'id': session_id or uuid.uuid4().hex, 'owner': self.agent_id, 'parent': spawned_by,
             'timestamp': timestamp},
        )  # fmt: skip
        return True

    def forgotten(self, key: str) -> bool:
        """Whether session ``key`` was forgotten (:meth:`forget`)."""
        return self.db.execute(_FORGOTTEN, {'key': key}).fetchone() is not None

    def forget(self, key: str) -> int:
        """Delete session ``key`` as :meth:`delete` does and remember it, so that no import stores it again;
        returns how many events it held."""
        state = self.session_state(key)
        self.db.execute(_FORGET, {'key': key, 'now': now_ms()})
        if state is None:
            return 0
        self.delete(key)
        return int(state[2])

    def rebuild(self, session_key: str) -> None:
        """Recompute a session's active branch from its leaf and re-index it, if it is marked for rebuild."""
        row = self.session_state(session_key)
        if row is None or not row[1]:
            return
        leaf = row[0]
        key = {'key': session_key}
        parents = dict(
            self.db.execute(
                Sql(
                    'SELECT event_id, parent_id FROM events WHERE session_key = :key',
                    'SELECT event_id, parent_id FROM session_events WHERE agent = :agent AND session_key = :key',
                ),
                key,
            ).fetchall()
        )
        active: set[str] = set()
        node = leaf
        while node is not None and node in parents and node not in active:  # a parent loop stops the walk
            active.add(node)
            node = parents[node]
        self.db.execute(
            Sql(
                'UPDATE events SET active = event_id IN (SELECT value FROM json_each(:active)) '
                'WHERE session_key = :key',
                'UPDATE session_events SET active = event_id = ANY(:active) '
                'WHERE agent = :agent AND session_key = :key',
            ),
            {**key, 'active': sorted(active)},
        )
        self.db.execute(_DELETE_FTS, key)
        self._rewritten(session_key)
        rows = self.db.execute(
            Sql(
                'SELECT seq, body, timestamp, event_id FROM events WHERE session_key = :key AND active = 1 '
                'AND searchable = 1',
                'SELECT seq, body, timestamp, event_id FROM session_events WHERE agent = :agent AND session_key = :key '
                'AND active AND searchable',
            ),
            key,
        ).fetchall()
        tokens = self._tokens([body_text(row[1]) for row in rows])
        self.db.executemany(
            _INSERT_FTS,
            [
                {'seq': seq, 'key': session_key, 'timestamp': timestamp, 'id': event_id, **self.db.fts_row(t)}
                for (seq, _, timestamp, event_id), t in zip(rows, tokens, strict=True)
            ],
        )
        self.db.execute(
            Sql(
                'UPDATE sessions SET needs_rebuild = 0 WHERE key = :key',
                'UPDATE session_sessions SET needs_rebuild = false WHERE agent = :agent AND key = :key',
            ),
            key,
        )

    def _rewritten(self, session_key: str) -> None:
        """Record that a session's full-text rows changed other than by appending (``*``: every session's), for
        :class:`~memsift.sessions.ranked.MessageMirror`; only the last :data:`REWRITES_KEPT` records are kept."""
        version = self.db.execute(
            Sql(
                'INSERT INTO fts_rewrites (session_key) VALUES (:key) RETURNING version',
                # Numbered per agent with no gap (writers of an agent take turns), as SQLite numbers them per file.
                'INSERT INTO session_fts_rewrites (agent, version, session_key) '
                'SELECT :agent, coalesce(max(version), 0) + 1, :key FROM session_fts_rewrites WHERE agent = :agent '
                'RETURNING version',
            ),
            {'key': session_key},
        ).fetchone()[0]
        self.db.execute(
            Sql(
                'DELETE FROM fts_rewrites WHERE version <= :upto',
                'DELETE FROM session_fts_rewrites WHERE agent = :agent AND version <= :upto',
            ),
            {'upto': version - REWRITES_KEPT},
        )

    def _tokens(self, texts: list[str]) -> list[str]:
        """The full-text row of each message text: the analyzer tokens of its searchable form."""
        return [' '.join(t) for t in self.analyzer.tokenize_batch([self.redact(text) for text in texts])]

    def reindex_redacted(self, redaction: str, batch: int = REINDEX_BATCH) -> int:
        """Bring every full-text row to the redaction ``redaction`` (a fingerprint of the patterns), if another one
        built them: older stores indexed raw text, and changed patterns change what is masked. The messages' vectors
        in that range go too (the embedding thread embeds them again from the new text). Returns the rows
        re-indexed.

        Resumable: each batch commits with its progress, so a process killed midway continues where it stopped.
        """
        done = 0
        if dict(self.db.execute(_META).fetchall()).get('fts_redaction') == redaction:
            return done  # the usual case: nothing to do, and no write lock taken
        while True:
            with self.transaction():
                state = dict(self.db.execute(_META).fetchall())
                if state.get('fts_redaction') == redaction:
                    return done
                after = int(state['fts_redaction_upto']) if state.get('fts_redaction_target') == redaction else 0
                rows = self.db.execute(
                    Sql(
                        'SELECT f.rowid, e.body FROM message_fts f JOIN events e ON e.seq = f.rowid '
                        'WHERE f.rowid > :after ORDER BY f.rowid LIMIT :batch',
                        'SELECT f.seq, e.body FROM session_message_fts f '
                        'JOIN session_events e ON e.agent = f.agent AND e.seq = f.seq '
                        'WHERE f.agent = :agent AND f.seq > :after ORDER BY f.seq LIMIT :batch',
                    ),
                    {'after': after, 'batch': batch},
                ).fetchall()
                tokens = self._tokens([body_text(body) for _, body in rows])
                self.db.executemany(
                    Sql(
                        'UPDATE message_fts SET tokens = :tokens WHERE rowid = :seq',
                        'UPDATE session_message_fts SET tokens = :tokens, terms = :terms, length = :length '
                        'WHERE agent = :agent AND seq = :seq',
                    ),
                    [{'seq': seq, **self.db.fts_row(t)} for (seq, _), t in zip(rows, tokens, strict=True)],
                )
                upto = rows[-1][0] if len(rows) == batch else 2**62  # the last batch: every vector past `after`
                self.db.execute(
                    Sql(
                        'DELETE FROM message_vectors WHERE seq > :after AND seq <= :upto',
                        'DELETE FROM session_message_vectors WHERE agent = :agent AND seq > :after AND seq <= :upto',
                    ),
                    {'after': after, 'upto': upto},
                )
                self._rewritten('*')
                progress = {'fts_redaction_target': redaction, 'fts_redaction_upto': str(rows[-1][0] if rows else 0)}
                if len(rows) < batch:
                    progress = {'fts_redaction': redaction, 'fts_redaction_target': '', 'fts_redaction_upto': '0'}
                self.db.executemany(
                    Sql(
                        'INSERT OR REPLACE INTO meta (key, value) VALUES (:key, :value)',
                        'INSERT INTO session_meta (agent, key, value) VALUES (:agent, :key, :value) '
                        'ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value',
                    ),
                    [{'key': k, 'value': v} for k, v in progress.items()],
                )
                done += len(rows)

    def set_flags(self, session_key: str, *, archived: bool | None, incognito: bool | None) -> None:
        """Set a session's ``archived`` and ``incognito`` flags (a None leaves one as it is)."""
        for column, value in (('archived', archived), ('incognito', incognito)):
            if value is not None:
                self.db.execute(
                    Sql(
                        f'UPDATE sessions SET {column} = :value WHERE key = :key',
                        f'UPDATE session_sessions SET {column} = :value WHERE agent = :agent AND key = :key',
                    ),
                    {'value': value, 'key': session_key},
                )

    def delete(self, session_key: str) -> bool:
        """Delete a session, its events, index rows and import record; ``False`` if it did not exist."""
        key = {'key': session_key}
        self.db.execute(_DELETE_FTS, key)
        self._rewritten(session_key)
        self.db.execute(
            Sql(
                'DELETE FROM message_vectors WHERE seq IN (SELECT seq FROM events WHERE session_key = :key)',
                'DELETE FROM session_message_vectors WHERE agent = :agent '
                'AND seq IN (SELECT seq FROM session_events WHERE agent = :agent AND session_key = :key)',
            ),
            key,
        )
        for table in ('events', 'imports'):
            self.db.execute(
                Sql(
                    f'DELETE FROM {table} WHERE session_key = :key',
                    f'DELETE FROM session_{table} WHERE agent = :agent AND session_key = :key',
                ),
                key,
            )
        deleted = self.db.execute(
            Sql(
                'DELETE FROM sessions WHERE key = :key',
                'DELETE FROM session_sessions WHERE agent = :agent AND key = :key',
            ),
            key,
        )
        return deleted.rowcount > 0
