"""Ranked ``sessions_search``: the messages that share *some* of a question's terms, best first, for when
OpenClaw's all-terms lookup finds fewer than the caller asked for ("When did Caroline go to the support group?" has
no message holding every word).

The ranking itself is the core's :class:`memsift._core.MessageIndex` (BM25 over the question's weighted terms,
stopwords and CJK particles dropped, re-ranked by how much of the question each message covers). The database
(SQLite, or PostgreSQL) stays the truth: a :class:`MessageMirror` holds that index in memory and catches it up from
``message_fts`` before each search, appending rows past the last one it saw and redoing the sessions the writer
logged in ``fts_rewrites`` (rebuilt or deleted ones), whichever process wrote them.

>>> from memsift.sessions import SessionStore
>>> with SessionStore(':memory:', visibility='agent') as store:
...     store.append('agent:main:a', {'type': 'message', 'id': 'm1',
...                  'message': {'role': 'user', 'content': 'Caroline went to the support group'}})
...     hit = store.search('When did Caroline go to the support group?', 'agent:main:main')['results'][0]
...     hit['messageId'], hit['match']
True
('m1', 'partial')
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from memsift._core import MessageIndex
from memsift.sessions.database import Database, Sql

__all__ = ['MessageMirror', 'rows_of', 'sessions_of']

_ADD_BATCH = 20_000
_ROWS = Sql(
    'SELECT rowid, session_key, tokens FROM message_fts',
    'SELECT seq, session_key, tokens FROM session_message_fts WHERE agent = :agent',
)


class MessageMirror:
    """An in-memory :class:`~memsift._core.MessageIndex` of one store's ``message_fts`` rows. Not thread-safe: the
    store calls it under its lock, inside one read transaction."""

    def __init__(self) -> None:
        self._index = MessageIndex()
        self._last_row = -1  # -1: never built
        self._version = 0

    def _add(self, rows: list[tuple[int, str, str]]) -> None:
        # In event order: the index gives each message the one before it in its session as reply context.
        rows = sorted(rows)
        for start in range(0, len(rows), _ADD_BATCH):
            batch = rows[start : start + _ADD_BATCH]
            self._index.add([r[0] for r in batch], [r[1] for r in batch], [r[2] for r in batch])
        if rows:
            self._last_row = max(self._last_row, max(r[0] for r in rows))

    def catch_up(self, db: Database) -> None:
        """Bring the index to the state of ``message_fts`` that ``db`` reads now."""
        latest, oldest = db.execute(
            Sql(
                'SELECT max(version), min(version) FROM fts_rewrites',
                'SELECT max(version), min(version) FROM session_fts_rewrites WHERE agent = :agent',
            )
        ).fetchone()
        latest = latest or 0
        rewritten: list[str] = []
        if self._last_row >= 0 and latest > self._version:
            rewritten = [
                k
                for (k,) in db.execute(
                    Sql(
                        'SELECT DISTINCT session_key FROM fts_rewrites WHERE version > :version',
                        'SELECT DISTINCT session_key FROM session_fts_rewrites WHERE agent = :agent '
                        'AND version > :version',
                    ),
                    {'version': self._version},
                )
            ]
            if '*' in rewritten or (oldest or 0) > self._version + 1:  # everything, or records already pruned
                self._last_row = -1
        if self._last_row < 0:
            self._index.clear()
            self._last_row = 0
            self._add(db.execute(_ROWS).fetchall())
        else:
            if rewritten:
                self._index.delete_sessions(rewritten)
                sql = Sql(
                    'SELECT rowid, session_key, tokens FROM message_fts '
                    'WHERE session_key IN (SELECT value FROM json_each(:keys))',
                    'SELECT seq, session_key, tokens FROM session_message_fts '
                    'WHERE agent = :agent AND session_key = ANY(:keys)',
                )
                self._add(db.execute(sql, {'keys': rewritten}).fetchall())
            fresh = db.execute(
                Sql(
                    'SELECT rowid, session_key, tokens FROM message_fts WHERE rowid > :after',
                    'SELECT seq, session_key, tokens FROM session_message_fts WHERE agent = :agent AND seq > :after',
                ),
                {'after': self._last_row},
            ).fetchall()
            self._add([r for r in fresh if r[1] not in rewritten])
            self._last_row = max([self._last_row, *(r[0] for r in fresh)])
        self._version = latest

    def scores(
        self,
        db: Database,
        query: str,
        searchable: Collection[str],
        hidden: Collection[str],
        limit: int,
        exclude: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """``(seq, score)`` of the best ``limit`` messages of the ``searchable`` sessions for ``query``, best first,
        leaving out the event sequence numbers in ``exclude`` (``hidden``: every other session)."""
        if not searchable or limit < 1:
            return []
        self.catch_up(db)
        k = limit + len(exclude)
        if len(hidden) <= len(searchable):
            hits = self._index.search(query, k, exclude=sorted(hidden))
        else:
            hits = self._index.search(query, k, only=sorted(searchable))
        return [(seq, score) for seq, score in hits if seq not in exclude][:limit]


def rows_of(db: Database, scores: Sequence[tuple[int, float]]) -> list[tuple[Any, ...]]:
    """``(seq, session_key, timestamp, event_id, score, role, body)`` of scored messages, in the given order."""
    sql = Sql(
        'SELECT f.rowid, f.session_key, f.timestamp, f.event_id, e.role, e.body FROM message_fts f '
        'JOIN events e ON e.seq = f.rowid WHERE f.rowid IN (SELECT value FROM json_each(:seqs))',
        'SELECT f.seq, f.session_key, f.timestamp, f.event_id, e.role, e.body FROM session_message_fts f '
        'JOIN session_events e ON e.agent = f.agent AND e.seq = f.seq WHERE f.agent = :agent AND f.seq = ANY(:seqs)',
    )
    found = {row[0]: row for row in db.execute(sql, {'seqs': [seq for seq, _ in scores]}).fetchall()}
    return [
        (seq, key, ts, event_id, score, role, body)
        for seq, score in scores
        if seq in found
        for _, key, ts, event_id, role, body in [found[seq]]
    ]


def sessions_of(db: Database, seqs: Collection[int]) -> dict[int, str]:
    """The session key of each indexed message ``seq``."""
    sql = Sql(
        'SELECT rowid, session_key FROM message_fts WHERE rowid IN (SELECT value FROM json_each(:seqs))',
        'SELECT seq, session_key FROM session_message_fts WHERE agent = :agent AND seq = ANY(:seqs)',
    )
    return dict(db.execute(sql, {'seqs': list(seqs)}).fetchall())
