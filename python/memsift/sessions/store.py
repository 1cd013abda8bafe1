"""The :class:`SessionStore`: one agent's transcripts behind one lock, and the API that tools, the command line and
memory search use.

The store holds the connection, the lock and the cached session snapshot, and issues no SQL itself: writes go
through :mod:`~memsift.sessions.writer`, reads through :mod:`~memsift.sessions.tables`, rebuilds through
:mod:`~memsift.sessions.reconcile`, and ``sessions_search`` / ``sessions_history`` follow the rules of
:mod:`~memsift.sessions.visibility`, :mod:`~memsift.sessions.query` and :mod:`~memsift.sessions.history`.

>>> event = {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'a'}}
>>> with SessionStore(':memory:') as store:
...     store.append_many('agent:main:A', [event, event], spawned_by='agent:main:main')
...     [(s['key'], s['spawnedBy'], s['events']) for s in store.sessions()]
1
[('agent:main:A', 'agent:main:main', 1)]
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._core import Analyzer
from memsift._text import preview
from memsift.config import SessionSearchMode, SessionToolsConfig, Visibility
from memsift.errors import InvalidInputError, SessionAccessError
from memsift.redact import REVISION, Redactor
from memsift.sessions.catalog import SessionCatalog
from memsift.sessions.events import body_text, check_session_key, check_spawned_by, event_line
from memsift.sessions.history import history_response
from memsift.sessions.importer import import_transcript
from memsift.sessions.limits import (
    DEFAULT_LIMIT,
    HISTORY_DEFAULT_LIMIT,
    HISTORY_MAX_LIMIT,
    SYNC_REBUILD_MAX_BYTES,
    SYNC_REBUILD_MAX_EVENTS,
)
from memsift.sessions.query import check_query, search_response
from memsift.sessions.reconcile import Reconciler
from memsift.sessions.search import SessionSearch, SessionTime, gather
from memsift.sessions.tables import (
    active_message_rows,
    branch_message_rows,
    event_lines,
    list_sessions,
    open_database,
    session_fingerprint,
    stored_counts,
)
from memsift.sessions.vectors import TRANSCRIPT_WEIGHTS, MessageVectors
from memsift.sessions.visibility import (
    Caller,
    check_known,
    check_visibility,
    resolve_caller,
    window_owner,
)
from memsift.sessions.writer import Writer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift.embedding import EmbeddingProvider
    from memsift.results import SessionHistory, SessionSearchResponse

__all__ = ['SessionStore', 'default_sessions_path']


def default_sessions_path(agent_id: str) -> Path:
    """``~/.memsift/agents/{agentId}/sessions.sqlite``."""
    return Path('~/.memsift/agents').expanduser() / agent_id / 'sessions.sqlite'


class SessionStore:
    """One agent's session transcripts and their full-text index, in SQLite or in a PostgreSQL database that many
    agents, processes and hosts share.

    Thread-safe (calls are serialized on one connection); a background thread reconciles imported sessions.

    Args:
        path: Database file (``~/.memsift/agents/{agentId}/sessions.sqlite`` by default) or ``':memory:'``, or a
            PostgreSQL DSN (``postgresql://user:password@host:5432/db``): the store then keeps ``agent_id``'s rows of
            that database, and sees other agents' sessions only through ``peers``, as with SQLite files.
        agent_id: The agent whose sessions this store keeps (new sessions are recorded under it).
        visibility: Default ``tools.sessions.visibility`` for callers that do not say.
        agent_to_agent: Default for cross-agent access under ``all`` (``tools.agentToAgent.enabled``).
        redact_patterns: ``logging.redactPatterns``, applied before the default secret patterns.
        peers: Other agents' stores, searched too when a caller may see other agents (``all`` + agent-to-agent).
        search_mode: ``tools.sessions.search.mode``: ``ranked`` (default) tops OpenClaw's all-terms hits up with
            ranked partial matches; ``all-terms`` is OpenClaw's search exactly.
        time_words: ``tools.sessions.search.timeWords``: read time words in queries (``False``: as OpenClaw).
        setting: Where a DSN ``path`` came from (``store.dsn``, ``MEMSIFT_PG_DSN``), named in errors.

    Raises:
        SessionStoreError: the database cannot be opened, or holds a schema of another memsift (the message names the
            file, or the setting and the DSN without its password).
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
        search_mode: SessionSearchMode = 'ranked',
        time_words: bool = True,
        sync_rebuild_max_events: int = SYNC_REBUILD_MAX_EVENTS,
        sync_rebuild_max_bytes: int = SYNC_REBUILD_MAX_BYTES,
        setting: str = 'store.dsn',
    ) -> None:
        visibility = check_visibility(visibility)  # case-insensitive; an unknown value is ``tree``, as in OpenClaw
        target = os.fspath(path) if path is not None else str(default_sessions_path(agent_id))
        self.agent_id = agent_id
        self.visibility: Visibility = visibility
        self.agent_to_agent = agent_to_agent
        self.peers = list(peers)
        if search_mode not in ('ranked', 'all-terms'):
            raise InvalidInputError(f'search_mode must be "ranked" or "all-terms", not {preview(search_mode)}')
        self.search_mode: SessionSearchMode = search_mode
        self.time_words = time_words
        self.redactor = Redactor(redact_patterns)
        self._analyzer = Analyzer()
        self._lock = threading.RLock()
        self._vectors: MessageVectors | None = None
        self._db = open_database(target, agent_id, setting)
        self.path = self._db.shown
        """The database file, or the DSN without its password."""
        self._catalog = SessionCatalog(self._db, self._lock, agent_id)
        self._writer = Writer(self._db, self._analyzer, self.redactor.redact_for_search)
        self._reconciler = Reconciler(
            self._writer,
            self._lock,
            self._catalog.snapshot,
            max_events=sync_rebuild_max_events,
            max_bytes=sync_rebuild_max_bytes,
        )
        self._search = SessionSearch(
            self._db, self._lock, self._catalog.snapshot, self._reconciler, self._analyzer, self.redactor, search_mode
        )
        redaction = json.dumps([REVISION, [p for p in redact_patterns if isinstance(p, str) and p.strip()]])
        try:
            with self._lock:
                self._writer.reindex_redacted(hashlib.sha256(redaction.encode()).hexdigest()[:16])
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] | None,
        agent_id: str,
        settings: SessionToolsConfig,
        *,
        setting: str = 'store.dsn',
    ) -> SessionStore:
        """The store of ``agent_id`` (default path when ``path`` is None; a DSN from ``setting``) with the config's
        visibility, agent-to-agent access and redaction patterns (``MemoryConfig.session_tools``)."""
        return cls(
            path,
            agent_id,
            visibility=settings.visibility,
            agent_to_agent=settings.agent_to_agent,
            redact_patterns=settings.redact_patterns,
            search_mode=settings.search_mode,
            time_words=settings.time_words,
            setting=setting,
        )

    # ------------------------------------------------------------------ lifecycle

    def use_embeddings(
        self,
        provider: EmbeddingProvider,
        *,
        embed: Callable[[list[str]], npt.NDArray[np.float32]] | None = None,
        weights: tuple[float, float] = TRANSCRIPT_WEIGHTS,
        background: bool = True,
    ) -> None:
        """Give ranked ``sessions_search`` a semantic leg: messages are embedded with ``provider`` in a background
        thread (``embed``: how texts are embedded, e.g. through the memory index's embedding cache) and merged with
        the keyword leg by ``weights`` (``vector_weight, text_weight``); ``background=False`` leaves embedding to
        ``store.vectors.embed_pending()``. See :mod:`memsift.sessions.vectors`."""
        if self._vectors is not None:
            self._vectors.close()
        self._vectors = MessageVectors(
            self._db,
            self._lock,
            self._writer.transaction,
            self.redactor.redact_for_search,
            provider,
            embed,
            weights,
            background=background,
        )
        self._search.vectors = self._vectors

    def embeddings_unavailable(self, reason: str) -> None:
        """Say why ranked ``sessions_search`` has no semantic leg although one was configured (a model that is
        missing or damaged): its answers, keyword-only, carry ``reason`` in ``debug.vectorSkipped``."""
        self._search.vectors_missing = reason

    @property
    def vectors(self) -> MessageVectors | None:
        """The semantic leg, when :meth:`use_embeddings` gave one."""
        return self._vectors

    def close(self) -> None:
        """Stop the background threads and close the database."""
        if self._vectors is not None:
            self._vectors.close()
        self._reconciler.close()
        with self._lock:
            self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'SessionStore({self.path!r}, agent_id={self.agent_id!r})'

    # ------------------------------------------------------------------ writing

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
        session_key, spawned_by = check_session_key(session_key), check_spawned_by(spawned_by)
        checked = [(event, event_line(event)) for event in events]
        with self._lock, self._writer.transaction():
            self._writer.adopt(session_key, spawned_by)
            added = sum(
                self._writer.append(session_key, event, body, spawned_by, index=True) for event, body in checked
            )
        if self._vectors is not None and added:
            self._vectors.wake()
        return added

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
        imported = import_transcript(
            self._writer, self._lock, path, session_key, spawned_by=spawned_by, forward=forward
        )
        if self._vectors is not None:
            self._vectors.wake(everywhere=True)
        return imported

    def import_openclaw_database(self, db_path: str | os.PathLike[str], *, timeout: float = 5.0) -> dict[str, int]:
        """Import (or catch up on) the transcripts of an OpenClaw 2.x agent database
        (``<state>/agents/<agentId>/agent/openclaw-agent.sqlite``), reading only what changed since the last call;
        returns the events added per session key. OpenClaw's file is only ever read
        (:mod:`~memsift.sessions.openclaw_db` says how sessions are named and how a rewrite is caught up).
        ``timeout``: seconds a read waits for a lock.

        Raises:
            InvalidInputError: ``db_path`` is not a path, or ``timeout`` not a number of seconds.
            SessionStoreError: the file is missing, not a SQLite database, damaged, locked beyond ``timeout``, of
                another agent, or of a schema other than 23 (the message names the file and the fix).
        """
        from memsift.sessions.openclaw_db import import_database  # only for OpenClaw 2.x setups

        added = import_database(self._writer, self._lock, self.agent_id, db_path, timeout=timeout)
        if self._vectors is not None and added:
            self._vectors.wake(everywhere=True)
        return added

    def set_flags(self, session_key: str, *, archived: bool | None = None, incognito: bool | None = None) -> None:
        """Mark a session archived or incognito (incognito sessions are never returned by searches or history)."""
        with self._lock, self._writer.transaction():
            self._writer.set_flags(session_key, archived=archived, incognito=incognito)

    def forget(self, session: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Forget a session (``memsift forget``, OpenClaw's ``memory forget --session``): its events, full-text rows
        and vectors go from memsift's store, with its older windows (an OpenClaw 2.x rollover's), and no later import
        stores them again; OpenClaw's own transcript is not touched. ``session``: a session key or id.

        Returns ``{sessionKeys, events, dryRun}``: what was (with ``dry_run``: would be) forgotten.

        Raises:
            InvalidInputError: ``session`` is not a non-empty string.
        """
        wanted = check_session_key(session)
        with self._lock:
            stored = {s['key']: s for s in list_sessions(self._db)}
        key = wanted if wanted in stored else next((k for k, s in stored.items() if s['sessionId'] == wanted), wanted)
        keys = [key, *sorted(k for k in stored if window_owner(k) == key)]
        events = sum(stored[k]['events'] for k in keys if k in stored)
        if not dry_run:
            with self._lock, self._writer.transaction():
                for forgotten in keys:
                    self._writer.forget(forgotten)
            if self._vectors is not None:
                self._vectors.wake(everywhere=True)
        return {'sessionKeys': keys, 'events': events, 'dryRun': dry_run}

    def delete(self, session_key: str) -> bool:
        """Delete a session, its events and its index rows in one transaction; ``False`` if it did not exist."""
        with self._lock, self._writer.transaction():
            return self._writer.delete(session_key)

    # ------------------------------------------------------------------ rebuilding the active branch

    def reconcile(self) -> int:
        """Rebuild every session marked for rebuild now; returns how many were rebuilt."""
        rebuilt = self._reconciler.rebuild_all()
        if self._vectors is not None and rebuilt:
            self._vectors.wake(everywhere=True)
        return rebuilt

    @property
    def indexing(self) -> bool:
        """Whether some session waits for its index (imported, or branched and not yet rebuilt)."""
        with self._lock:
            return bool(self._reconciler.stale())

    # ------------------------------------------------------------------ visibility

    def _caller(self, caller: str | Caller) -> Caller:
        return resolve_caller(caller, self.agent_id, self.visibility, self.agent_to_agent)

    def visible_keys(self, caller: str | Caller) -> set[str]:
        """The keys of this store's sessions that ``caller`` may see."""
        who = self._caller(caller)
        with self._lock:
            return set(self._catalog.visible(who))

    def _stores(self, caller: Caller) -> list[SessionStore]:
        """This store, plus the peers when the caller may see other agents' sessions (``all`` with agent-to-agent
        access) or its native children there (``tree`` and ``all``: an ACP or subagent session it spawned)."""
        return [self, *self.peers] if caller.visibility in ('tree', 'all') else [self]

    def _check_known(self, requested: object, caller: Caller) -> None:
        """:func:`~memsift.sessions.visibility.check_known` over this store and its peers."""
        check_known(requested, caller, (store._catalog.sessions() for store in (self, *self.peers)))

    # ------------------------------------------------------------------ sessions_search

    def search(
        self,
        query: str,
        caller: str | Caller,
        session_key: str | None = None,
        limit: int = DEFAULT_LIMIT,
        *,
        since: str | date | None = None,
        until: str | date | None = None,
        now: datetime | None = None,
    ) -> SessionSearchResponse:
        """``sessions_search``: messages of the caller's visible sessions that contain every query term, then (in
        ``ranked`` mode, when those are fewer than ``limit``) the best messages that contain some of them.

        Hits holding every term come first, exactly as OpenClaw finds and orders them, marked ``"match": "all"``.
        In ``ranked`` mode the rest of the list holds ranked partial matches, marked ``"match": "partial"``: BM25
        over the question's telling words (stopwords and CJK particles dropped) with a bonus for covering more of
        them (:mod:`memsift.sessions.ranked`). ``truncated`` still speaks of the all-terms hits (and of the 32 KiB
        cap); partial matches are a best-effort extra. ``all-terms`` mode leaves out partial hits and the
        ``match`` field.

        Args:
            query: Whitespace-separated terms (a CJK term matches where its characters appear in order), or a
                question in plain words.
            caller: The calling session key, or a :class:`Caller` with its visibility rules.
            session_key: Restrict to one visible session (``current`` and ``main`` accepted).
            limit: Results wanted, 1 to 25 (a larger one is an error, as in OpenClaw).
            since: Only messages of this day or later: an ISO date or a span back (``7d``, ``2w``, ``3m``, ``1y``).
            until: Only messages of this day or earlier (same forms).
            now: What time words ("last week", "上周", "先週": they rank messages of that window first) and
                relative filters are read against (default: now; naive: local time).

        Returns:
            ``{"results": [{sessionKey, timestamp, role, snippet, score, sessionId, messageId, match?}],
            "indexing"?, "warning"?, "truncated"?}`` best first.

        Raises:
            InvalidInputError: a blank or too long query, a bad limit or caller (the message says which), or a
                ``session_key`` shaped like a session id that names no session (``Session not found: …``).
            SessionAccessError: ``session_key`` names a session the caller may not see (or a key that names none).

        >>> store = SessionStore(':memory:')
        >>> store.search('  ', caller='main')
        Traceback (most recent call last):
        memsift._core.InvalidInputError: query must contain a non-space character
        """
        problem = check_query(query, limit)
        if problem:
            raise InvalidInputError(problem)
        who = self._caller(caller)
        if session_key is not None:
            self._check_known(session_key, who)
        # Time words are read in the searchable form (secrets masked), as the rest of the search reads the query: a
        # guessed secret holding a time word ("today", a month) must read as any other guess of its shape.
        when = SessionTime.read(self.redactor.redact_for_search(query), since, until, now, self.time_words)
        parts = [(store._search, store._catalog) for store in self._stores(who)]
        found = gather(parts, when.query, who, session_key, when.depth(limit))
        hits, lead = when.apply(found.results, found.debug)
        response = search_response(hits, found.indexing, limit, lead)
        if found.debug:
            response['debug'] = found.debug
        return response

    # ------------------------------------------------------------------ sessions_history

    def history(
        self, session_key: str, caller: str | Caller, *, limit: int = HISTORY_DEFAULT_LIMIT, include_tools: bool = False
    ) -> SessionHistory:
        """``sessions_history``: the last ``limit`` messages on the active branch of a visible session.

        Text is redacted, each message capped at 4000 characters, tool calls and thinking blocks are stripped
        (tool results too unless ``include_tools``), and the response stays within 32 KiB of JSON (oldest messages
        dropped first, with ``truncated: true``). ``session_key`` may also be a session id.

        Returns:
            ``{"sessionKey", "sessionId", "messages": [{id, role, timestamp, content}], "truncated"?}``.

        Raises:
            InvalidInputError: a bad limit or caller, or a ``session_key`` shaped like a session id that names no
                session (``Session not found: …``).
            SessionAccessError: the caller may not see that session (or a key that names none).
        """
        who = self._caller(caller)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInputError(f'limit must be a positive integer, not {preview(limit)}')
        self._check_known(session_key, who)
        refused: SessionAccessError | None = None
        for store in self._stores(who):  # the session may be a peer's
            try:
                return store._history(session_key, who, min(limit, HISTORY_MAX_LIMIT), include_tools)
            except SessionAccessError as exc:
                refused = refused or exc
        assert refused is not None
        raise refused

    def _history(self, session_key: str, who: Caller, limit: int, include_tools: bool) -> SessionHistory:
        key = self._catalog.visible_key(session_key, who)
        self._reconciler.catch_up(frozenset((key,)))
        with self._lock:
            rows = branch_message_rows(self._db, key)
            session_id = self._catalog.snapshot().sessions[key].id
        return history_response(key, session_id, rows, limit=limit, include_tools=include_tools, redactor=self.redactor)

    # ------------------------------------------------------------------ listing

    def sessions(self) -> list[dict[str, Any]]:
        """Every stored session with its counts and flags (for ``status`` and tools)."""
        with self._lock:
            return list_sessions(self._db)

    def status(self) -> dict[str, Any]:
        """``{path, sessions, messages, searchMode, indexing, vectors: [{key, messages}], embedding?}``: what the
        store holds for ``sessions_search`` (``path``: the file, or the DSN without its password; ``embedding``: this
        handle's background embedding, when it has one: provider, messages still waiting, last error)."""
        with self._lock:
            sessions = len(self._catalog.snapshot().sessions)
            messages, vectors = stored_counts(self._db)
        out: dict[str, Any] = {
            'path': self.path,
            'sessions': sessions,
            'messages': messages,
            'searchMode': self.search_mode,
            'indexing': self.indexing,
            'vectors': [{'key': key, 'messages': count} for key, count in vectors],
        }
        if self._vectors is not None:
            out['embedding'] = {
                'provider': f'{self._vectors.provider.id}/{self._vectors.provider.model}',
                'pending': self._vectors.pending(),
                'error': self._vectors.error,
            }
        return out

    def fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever a session is added, removed, flagged, branched or grows: a cheap "anything new?" check."""
        with self._lock:
            return session_fingerprint(self._db)

    def active_messages(self, session_key: str) -> Iterator[tuple[int, str, str]]:
        """``(line, role, text)`` of the searchable messages on a session's active branch, in order (session memory
        chunks these)."""
        with self._lock:
            rows = active_message_rows(self._db, session_key)
        for line, role, body in rows:
            yield line, role, body_text(body)

    def event_lines(self, session_key: str) -> Iterator[tuple[str, int]]:
        """``(stored JSON line, timestamp in ms)`` of each of a session's events, in the order they were stored:
        what a copy of the store appends again (the timestamp is the one stored: an event without one, or with an
        unreadable one, got its append time). The session header is not an event: the id is in :meth:`sessions`."""
        with self._lock:
            lines = event_lines(self._db, session_key)
        yield from lines
