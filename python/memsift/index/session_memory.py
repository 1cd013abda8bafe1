"""Session transcripts as memory (``experimental.sessionMemory`` with ``sessions`` in ``sources``): one document
per transcript, ``sessions/<key>.jsonl``, whose lines are ``User: …`` / ``Assistant: …`` in the searchable form
(secrets masked, each mask one constant ``***``: :meth:`~memsift.redact.Redactor.redact_for_search`, so neither the
keyword nor the vector leg can tell a right guess of a secret from a wrong one), with chunk lines mapped back to the
transcript's lines; searches see only the transcripts the caller may see.

>>> session_path('agent:main:telegram/dm:42')
'sessions/agent:main:telegram_dm:42.jsonl'
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift.config import SessionSyncConfig
from memsift.index.records import FileRecord
from memsift.index.workspace import MemoryFile
from memsift.sessions import Caller, SessionStore, archived_at_ms, is_incognito_session_key, main_session_key
from memsift.sessions.visibility import is_private_conversation

if TYPE_CHECKING:
    from memsift.index.protocol import Store

__all__ = ['SessionMemory', 'session_path']


def session_path(session_key: str) -> str:
    """The logical path of a session transcript in memory search results."""
    return f'sessions/{session_key.replace("/", "_")}.jsonl'


class SessionMemory:
    """The transcripts of ``sessions`` as documents of the memory index kept in ``store``."""

    def __init__(
        self,
        sessions: SessionStore,
        store: Store,
        deltas: SessionSyncConfig,
        agent_id: str,
        private_only: bool = False,
        by_session_id: bool = False,
    ) -> None:
        self.sessions = sessions
        self.store = store
        self.deltas = deltas
        self.agent_id = agent_id
        self.private_only = private_only
        self.by_session_id = by_session_id
        """Paths as OpenClaw 2.x shows them: ``sessions/<agentId>/<sessionId>.jsonl`` (:meth:`path_of`)."""
        """Transcripts come in through OpenClaw 2.x's ``rememberAcrossConversations``: a caller finds only its agent's
        other private conversations (:func:`~memsift.sessions.visibility.is_private_conversation`)."""
        self._checked: tuple[Any, ...] | None = None
        """The session store's fingerprint when its transcripts were last found indexed as far as the deltas ask."""
        self._last_messages: tuple[tuple[Any, ...], dict[str, float]] | None = None

    def documents(self, force: bool | None) -> list[MemoryFile]:
        """One document per non-incognito session. A session that grew by less than ``sync.sessions.deltaBytes``
        and ``deltaMessages`` since it was indexed keeps its chunks until it grows more. ``force=None`` only lists
        them (no rebuild of branched sessions), for the dirty check.

        A document's ``mtime`` is the session's message count (the stamp the deltas compare), its ``size`` its
        bytes; its age for temporal decay is :meth:`last_messages`.
        """
        if force is not None:
            self.sessions.reconcile()  # the active branch of every session is current before it is chunked
        known = self.store.files()
        documents = []
        for session in self.sessions.sessions():
            if session['incognito'] or is_incognito_session_key(session['key']):
                continue
            key: str = session['key']
            path = self.path_of(session)
            count, size = session['events'], session['bytes']
            previous = known.get(path)
            if previous is not None and not force and self._grew_little(previous, count, size):
                count, size = int(previous.mtime), previous.size  # looks unchanged to the sync
            documents.append(
                MemoryFile(path, Path(path), float(count), size, 'sessions', read=functools.partial(self.render, key))
            )
        return documents

    def _grew_little(self, previous: FileRecord, count: int, size: int) -> bool:
        """Below both ``sync.sessions`` deltas (a threshold of 0 or less means any change counts)."""
        delta = self.deltas
        return (
            delta.delta_bytes > 0
            and delta.delta_messages > 0
            and 0 <= size - previous.size < delta.delta_bytes
            and 0 <= count - previous.mtime < delta.delta_messages
        )

    def due(self) -> bool:
        """Whether a transcript grew past the delta thresholds, appeared or went away since it was indexed."""
        fingerprint = self.sessions.fingerprint()
        if fingerprint == self._checked:
            return False  # nothing changed since transcripts were last found up to date: no per-file comparison
        known = {path: record for path, record in self.store.files().items() if record.source == 'sessions'}
        documents = self.documents(None)
        due = {d.path for d in documents} != set(known) or any(
            (d.mtime, d.size) != (known[d.path].mtime, known[d.path].size) for d in documents
        )
        if not due:
            self._checked = fingerprint
        return due

    def render(self, key: str) -> tuple[str, tuple[int, ...]]:
        """A transcript's document text (searchable form) and, per line, the transcript line it came from."""
        lines, line_map = [], []
        for line, role, text in self.sessions.active_messages(key):
            text = ' '.join(self.sessions.redactor.redact_for_search(text).split())
            lines.append(f'{"User" if role == "user" else "Assistant"}: {text}')
            line_map.append(line)
        return '\n'.join(lines), tuple(line_map)

    def last_messages(self) -> dict[str, float]:
        """Each transcript document's newest message time, epoch seconds: its age for temporal decay (OpenClaw
        decays a transcript from its file's mtime, which is when its last line was written). A ``.reset.<ISO>`` /
        ``.deleted.<ISO>`` archive (imported under a key ending in its file name) ages from the date in its name."""
        fingerprint = self.sessions.fingerprint()
        if self._last_messages is None or self._last_messages[0] != fingerprint:
            times = {}
            for s in self.sessions.sessions():
                archived = archived_at_ms(s['key'])
                times[self.path_of(s)] = (s['updatedAt'] if archived is None else archived) / 1000
            self._last_messages = (fingerprint, times)
        return self._last_messages[1]

    def visible_paths(self, session_key: str | None) -> set[str]:
        """Transcript paths the calling session (default: the agent's main session) may see, by the rules of
        ``sessions_search``; within :attr:`private_only`'s boundary when it is set."""
        caller = Caller(session_key or main_session_key(self.agent_id))
        keys = self.sessions.visible_keys(caller)
        if self.private_only:  # OpenClaw 2.x's rememberAcrossConversations: other private conversations only
            keys = {k for k in keys if k != caller.session_key and is_private_conversation(k, self.agent_id)}
        if not self.by_session_id:
            return {session_path(key) for key in keys}
        return {self.path_of(s) for s in self.sessions.sessions() if s['key'] in keys}

    def path_of(self, session: dict[str, Any]) -> str:
        """A session's document path: :func:`session_path` of its key, or with :attr:`by_session_id` OpenClaw 2.x's
        ``sessions/<agentId>/<sessionId>.jsonl`` (an archive: ``sessions/<agentId>/<its file name>``)."""
        key: str = session['key']
        if not self.by_session_id:
            return session_path(key)
        prefix = f'agent:{self.agent_id}:'
        if archived_at_ms(key) is not None and key.startswith(prefix):
            return f'sessions/{self.agent_id}/{key[len(prefix) :]}'
        return f'sessions/{self.agent_id}/{session.get("sessionId") or key.replace("/", "_")}.jsonl'
