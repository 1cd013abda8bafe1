"""The agent-facing tools: ``memory_search``, ``memory_get``, ``sessions_search`` and ``sessions_history``.

Each returns exactly the JSON-ready dict OpenClaw's tool of the same name returns (reference §11.1, §12), so an agent
framework can hand it to the model as is. :class:`MemoryTools` binds the four to one agent (its memory index and
session store); the module-level functions use a default instance (:func:`configure`, or the user's OpenClaw setup,
else the current folder). A call never hangs: past its deadline (15 s by default) ``memory_search`` answers with
the keyword results it can give at once, marked ``partial``, and never re-indexes on the query path.
:meth:`MemoryTools.memory_write` (memsift's own; OpenClaw's agents write files themselves) appends a note, for
clients that have no file tools (the MCP server offers it with ``--allow-write``).

>>> import tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite') as tools:
...     [hit['path'] for hit in tools.memory_search('deploy key', minScore=0)['results']]
['MEMORY.md']
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import memsift.tools.contract as contract
from memsift._text import preview, scrub
from memsift.config import MemoryConfig, load_config
from memsift.errors import InvalidInputError, MemsiftError, SessionAccessError
from memsift.index.backend import sessions_target
from memsift.index.memory_index import MemoryIndex
from memsift.sessions import Caller, SessionStore, main_session_key
from memsift.tools.openclaw import TranscriptWatcher, openclaw_agent, openclaw_config_path

__all__ = [
    'DEFAULT_DEADLINE_S',
    'MemoryTools',
    'configure',
    'default_tools',
    'from_openclaw',
    'memory_get',
    'memory_search',
    'sessions_history',
    'sessions_search',
]

DEFAULT_DEADLINE_S = 15.0
CORPORA = ('memory', 'sessions', 'all')
T = TypeVar('T')


class MemoryTools:
    """The four memory tools over one agent's :class:`~memsift.MemoryIndex` and :class:`~memsift.SessionStore`.

    Args:
        index: The agent's memory index.
        sessions: The agent's session store (default: the index's, when session memory is on; else none, and
            the session tools answer with an error saying how to enable them).
        session_key: The calling session: session visibility starts there (default: the agent's main session).
        deadline_s: Seconds a call may take before it answers with what it has.
        refresh: Called before each session tool call (the OpenClaw drop-in imports new transcript lines there).

    Thread-safe: calls may come from many threads (an MCP server serves them concurrently).
    """

    def __init__(
        self,
        index: MemoryIndex,
        sessions: SessionStore | None = None,
        *,
        session_key: str | None = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
        refresh: Callable[[], None] | None = None,
    ) -> None:
        if not deadline_s > 0:
            raise InvalidInputError(f'deadline_s must be a positive number of seconds, got {preview(deadline_s)}')
        self.index = index
        self.sessions = sessions if sessions is not None else index.sessions
        self.agent_id = index.config.agent_id
        self.session_key = session_key or main_session_key(self.agent_id)
        self.deadline_s = float(deadline_s)
        self._refresh = refresh
        self._owned: list[Any] = []
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix='memsift-tool')

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str] | None = None,
        config: MemoryConfig | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        agent_id: str = 'main',
        *,
        sessions_path: str | os.PathLike[str] | None = None,
        session_key: str | None = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
        sync: bool = True,
        watch: bool = False,
    ) -> MemoryTools:
        """Open an agent's memory index and session store and bind the tools to them.

        Args:
            workspace: The agent workspace (default: from the config).
            config: An OpenClaw config (file, dict or :class:`~memsift.MemoryConfig`).
            sessions_path: The session database (default ``~/.memsift/agents/{agentId}/sessions.sqlite``, or on
                ``store.backend: "postgres"`` the shared database).
            sync: Start indexing the workspace in the background now, so the first search finds it ready.
            watch: Re-index memory files as they change.
        """
        resolved = config if isinstance(config, MemoryConfig) else load_config(config, agent_id)
        target, setting = (sessions_path, 'sessions_path') if sessions_path is not None else sessions_target(resolved)
        sessions = SessionStore.from_config(target, agent_id, resolved.session_tools, setting=setting)
        try:
            index = MemoryIndex(workspace, resolved, agent_id, sessions=sessions)
        except BaseException:
            sessions.close()
            raise
        if index.provider is not None:  # ranked sessions_search gets a semantic leg, embedded through the index's cache
            from memsift.providers.local import transcript_embeddings

            provider = transcript_embeddings(index.provider, resolved)
            cache = index.cache  # dims read per call: a remote provider may learn them only from its first answer
            sessions.use_embeddings(provider, embed=lambda texts: cache.embed(provider, int(provider.dims), texts))
        elif index.resolution.requested != 'none' and index.resolution.reason:
            sessions.embeddings_unavailable(index.resolution.reason)
        tools = cls(index, sessions, session_key=session_key, deadline_s=deadline_s)
        tools._owned = [index, sessions]
        if sync:
            index.sync_in_background()
        if watch:
            index.start_watching()
        return tools

    # ------------------------------------------------------------------ the tools

    def memory_search(
        self,
        query: str,
        maxResults: int | None = None,
        minScore: float | None = None,  # noqa: N803
        corpus: str = 'memory',
        *,
        sessionKey: str | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        """Search the agent's memory notes (and, with session memory, its past conversations) by meaning and words.

        Args:
            query: What to look for, in any language; a file name works too.
            maxResults: Results wanted (default ``query.maxResults``, 6).
            minScore: Drop results scoring below this, 0 to 1 (default 0.35).
            corpus: ``memory`` (the memory index), ``sessions`` (only conversation transcripts) or ``all``.
            sessionKey: The calling session, for citations and transcript visibility (default: the tools').
            since: Only material of this day or later: an ISO date (``2026-11-01``) or a span back from today
                (``7d``, ``2w``, ``3m``, ``1y``); see :meth:`~memsift.MemoryIndex.search`.
            until: Only material of this day or earlier (same forms).
            paths: Only files matching one of these workspace-relative globs (``memory/2026-11-*.md``, ``projects``).
            tags: Only notes whose front-matter ``tags`` include one of these.

        Without the four filters the result is exactly OpenClaw's.

        Returns:
            OpenClaw's ``memory_search`` result: ``{results: [{path, startLine, endLine, score, snippet, source,
            corpus, citation?}], provider, model, citations, mode, fallback?, debug}``; past the deadline, the
            keyword results with ``partial: true`` and a ``warning``; the unavailable shape when an explicitly
            configured embedding provider fails; ``{status: "error", error}`` for a bad argument.
        """
        if self._contract == 2:  # OpenClaw 2.x's answers for the corpora memsift does not hold
            if corpus not in contract.CORPORA:
                return _error(contract.unknown_corpus())
            if corpus == 'wiki':
                return contract.wiki_answer(self.index.config.citations)
            if corpus == 'sessions' and self.index.sessions is None:
                return contract.sessions_disabled()
        elif corpus not in CORPORA:
            return _error(f'unknown corpus {preview(corpus)}: use "memory", "sessions" or "all"')
        sources = ['sessions'] if corpus == 'sessions' else None
        caller = sessionKey or self.session_key

        def search(keyword_only: bool) -> dict[str, Any]:
            result = self.index.search(
                query,
                maxResults,
                minScore,
                session_key=caller,
                sources=sources,
                keyword_only=keyword_only,
                wait_for_sync=False,
                deadline=started + self.deadline_s,  # a reranker (query.rerank) gives up in time for it
                since=since,
                until=until,
                paths=paths,
                tags=tags,
            )
            return result.to_dict()

        started = time.monotonic()
        try:
            data = self._call(lambda: search(False))
        except FutureTimeout:
            try:
                data = search(True)
            except MemsiftError as exc:
                return _error(str(exc))
            data['partial'] = True
            data['warning'] = (
                f'memory search did not finish within {self.deadline_s:g} s; these are keyword '
                'results only. Retry shortly for the full search.'
            )
            data.setdefault('debug', {})['deadlineMs'] = round((time.monotonic() - started) * 1000, 3)
        except MemsiftError as exc:
            return _error(str(exc))
        if corpus == 'sessions' and self.index.sessions is None:
            data['warning'] = (
                'conversation transcripts are not in the memory index: set experimental.sessionMemory '
                'to true and add "sessions" to sources, or use sessions_search'
            )
        return contract.with_corpora(data) if corpus == 'all' and self._contract == 2 else data

    def memory_get(
        self, path: str, from_: int | None = None, lines: int | None = None, corpus: str = 'memory'
    ) -> dict[str, Any]:
        """Read lines of a memory file that ``memory_search`` returned (at most 20,000 characters), verbatim
        (OpenClaw's contract) unless ``query.redactGet`` is on, which masks secrets in the text.

        Returns:
            ``{path, from, lines, totalLines, text, truncated?, nextFrom?}``, or ``{path, text: "", error}``. For an
            OpenClaw 2.x config, 2.x's answers (:mod:`memsift.tools.contract`): ``{status: "ok", text, path, from,
            lines, truncated?, nextFrom?}`` (120 lines and 12,000 characters by default), ``not_found``, or
            ``MEMORY_PATH_NOT_ALLOWED``; ``corpus`` ``wiki`` / ``all`` as 2.x answers them.
        """
        windowed = self._contract == 2  # 2.x: 120 lines and 12,000 characters by default, whole lines, a status
        if corpus not in (contract.GET_CORPORA if windowed else ('memory',)):
            return _error(contract.unknown_corpus(contract.GET_CORPORA if windowed else ('memory',)))
        if corpus == 'wiki':
            return contract.wiki_get(path)
        try:
            got = self._call(lambda: self.index.get(path, from_, None if windowed else lines))
        except FutureTimeout:
            return {
                'path': _shown(path),
                'text': '',
                'error': f'memory_get did not finish within {self.deadline_s:g} s',
            }
        except MemsiftError as exc:
            if windowed:
                answer = contract.get_error(path, self._missing(path), str(exc))
                return contract.with_corpora(answer) if corpus == 'all' and answer['status'] == 'not_found' else answer
            return {'path': _shown(path), 'text': '', 'error': str(exc)}
        if not windowed:
            return dict(got)
        window = contract.get_window(got['text'], got['path'], got['from'], lines, beyond=bool(got.get('truncated')))
        return contract.with_corpora(window) if corpus == 'all' else window

    def memory_write(self, text: str, path: str | None = None) -> dict[str, Any]:
        """Append a note to the agent's memory: today's ``memory/YYYY-MM-DD.md``, or the Markdown file under
        ``memory/`` that ``path`` names (see :meth:`~memsift.MemoryIndex.write`), then index it, so the next
        ``memory_search`` finds it. The MCP server offers it only when started with ``--allow-write``.

        Returns:
            ``{path, startLine, endLine, chars}``; with ``warning`` when the note was written but indexing did not
            finish within the deadline (a search finds it once the sync in progress ends) or failed; ``{status:
            "error", error}`` for a bad argument or a file that could not be written (nothing was written then).
        """
        started = time.monotonic()
        try:
            written: dict[str, Any] = dict(self._call(lambda: self.index.write(text, path, sync=False)))
        except FutureTimeout:
            return _error(
                f'memory_write did not finish within {self.deadline_s:g} s; search for the note before writing it again'
            )
        except MemsiftError as exc:
            return _error(str(exc))
        try:
            self._call(self.index.sync, timeout=max(self.deadline_s - (time.monotonic() - started), 0.1))
        except FutureTimeout:
            written['warning'] = (
                f'the note was written, but indexing it did not finish within {self.deadline_s:g} s: memory_search '
                'finds it once the sync in progress ends; do not write it again'
            )
        except MemsiftError as exc:
            written['warning'] = f'the note was written, but indexing it failed ({exc}); do not write it again'
        return written

    def sessions_search(
        self,
        query: str,
        sessionKey: str | None = None,  # noqa: N803
        limit: int | None = None,
        *,
        since: str | date | None = None,
        until: str | date | None = None,
    ) -> dict[str, Any]:
        """Find messages of earlier conversations that contain every query term (any language), then, in the default
        ``ranked`` mode, the messages that best match the rest of a question.

        ``since`` / ``until`` keep only messages of days from / to a bound: an ISO date (``2026-11-01``) or a span
        back from today (``7d``, ``2w``, ``3m``, ``1y``); without them the result is exactly OpenClaw's.

        Returns:
            OpenClaw's ``sessions_search`` result: ``{results: [{sessionKey, timestamp, role, snippet, score,
            sessionId, messageId, match?}], indexing?, warning?, truncated?}`` (``match``: ``all`` or ``partial``), or
            ``{status: "error" | "forbidden", error}``.
        """
        store = self.sessions
        if store is None:
            return _error('no session store is configured for this agent')
        return self._session_call(
            lambda: store.search(
                query, Caller(self.session_key), sessionKey, 10 if limit is None else limit, since=since, until=until
            )
        )

    def sessions_history(
        self,
        sessionKey: str,
        limit: int | None = None,  # noqa: N803
        includeTools: bool = False,
    ) -> dict[str, Any]:  # noqa: N803
        """The recent messages of one visible session (a key from ``sessions_search``, or a session id).

        Returns:
            ``{sessionKey, sessionId, messages: [{id, role, timestamp, content}], truncated?}``, or
            ``{status: "error" | "forbidden", error}``.
        """
        store = self.sessions
        if store is None:
            return _error('no session store is configured for this agent')
        return self._session_call(
            lambda: store.history(
                sessionKey, Caller(self.session_key), limit=50 if limit is None else limit, include_tools=includeTools
            )
        )

    # ------------------------------------------------------------------ plumbing

    @property
    def _contract(self) -> int:
        """The shape of the answers: OpenClaw 2.x's for a 2.x config (:mod:`memsift.tools.contract`)."""
        return self.index.config.profile.tool_contract

    def _missing(self, path: object) -> bool:
        """A memory path (a root memory file, or Markdown under ``memory/``) with no file behind it."""
        if not isinstance(path, str):
            return False
        wanted = path.strip().replace('\\', '/').removeprefix('./')
        root_file = wanted in self.index.config.profile.root_files or wanted in ('DREAMS.md', 'dreams.md')
        memory_note = wanted.startswith('memory/') and wanted.endswith('.md') and '..' not in wanted.split('/')
        if not (root_file or memory_note):
            return False
        try:
            return not (self.index.workspace / wanted).exists()
        except (OSError, ValueError):  # a name no file can have (NUL, a lone surrogate): none is there
            return True

    def _call(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """``fn()`` in the pool, waiting at most ``timeout`` (default: the deadline; ``FutureTimeout`` past it, and
        the work finishes later)."""
        future: Future[T] = self._pool.submit(fn)
        return future.result(timeout=self.deadline_s if timeout is None else timeout)

    def _session_call(self, fn: Callable[[], Mapping[str, Any]]) -> dict[str, Any]:
        try:
            if self._refresh is not None:
                self._refresh()
            return dict(self._call(fn))
        except FutureTimeout:
            return _error(f'the session store did not answer within {self.deadline_s:g} s; retry shortly')
        except SessionAccessError as exc:
            return {'status': 'forbidden', 'error': str(exc)}
        except MemsiftError as exc:
            return _error(str(exc))

    def close(self) -> None:
        """Wait for running calls, then close what :meth:`open` opened."""
        self._pool.shutdown(wait=True)
        for resource in self._owned:
            resource.close()
        self._owned = []

    def __enter__(self) -> MemoryTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'MemoryTools(agent_id={self.agent_id!r}, workspace={str(self.index.workspace)!r})'


def _error(message: str) -> dict[str, Any]:
    return {'status': 'error', 'error': message}


# ---------------------------------------------------------------- module-level tools on a default instance

_default: MemoryTools | None = None
_default_lock = threading.Lock()


def from_openclaw(
    agent_id: str | None = None,
    *,
    config_path: str | os.PathLike[str] | None = None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    sync: bool = True,
    watch: bool = False,
) -> MemoryTools:
    """Memory tools for one agent of the user's OpenClaw setup, with no other configuration.

    Args:
        agent_id: The agent (default: OpenClaw's default agent, usually ``main``).
        config_path: The OpenClaw config (default: :func:`~memsift.tools.openclaw.openclaw_config_path`).
        sync: Index the workspace in the background now.
        watch: Re-index memory files as they change.

    The settings and stores are :func:`~memsift.tools.openclaw.openclaw_agent`'s; the agent's transcripts are imported
    into the session store and caught up as OpenClaw appends to them.

    Raises:
        ConfigError: no OpenClaw config, an unusable one, or an agent it does not declare (the message says which).
    """
    agent, config = openclaw_agent(agent_id, config_path)
    agent.workspace.mkdir(parents=True, exist_ok=True)
    tools = MemoryTools.open(agent.workspace, config, agent.id, deadline_s=deadline_s, sync=False, watch=watch)
    assert tools.sessions is not None
    refresh = TranscriptWatcher(tools.sessions, agent)
    refresh()
    tools._refresh = refresh
    if sync:
        tools.index.sync_in_background()
    return tools


def configure(tools: MemoryTools | None) -> None:
    """Make ``tools`` the instance the module-level functions use (``None``: forget it)."""
    global _default
    with _default_lock:
        _default = tools


def default_tools() -> MemoryTools:
    """The configured instance; else the user's OpenClaw setup (main agent) when there is one, else the current
    folder as the workspace with default settings."""
    global _default
    with _default_lock:
        if _default is None:
            _default = from_openclaw() if openclaw_config_path().is_file() else MemoryTools.open(Path.cwd())
        return _default


def memory_search(
    query: str,
    maxResults: int | None = None,
    minScore: float | None = None,  # noqa: N803
    corpus: str = 'memory',
    *,
    since: str | date | None = None,
    until: str | date | None = None,
    paths: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
) -> dict[str, Any]:
    """:meth:`MemoryTools.memory_search` on :func:`default_tools`."""
    return default_tools().memory_search(
        query, maxResults, minScore, corpus, since=since, until=until, paths=paths, tags=tags
    )


def memory_get(path: str, from_: int | None = None, lines: int | None = None) -> dict[str, Any]:
    """:meth:`MemoryTools.memory_get` on :func:`default_tools`."""
    return default_tools().memory_get(path, from_, lines)


def sessions_search(
    query: str,
    sessionKey: str | None = None,  # noqa: N803
    limit: int | None = None,
    *,
    since: str | date | None = None,
    until: str | date | None = None,
) -> dict[str, Any]:
    """:meth:`MemoryTools.sessions_search` on :func:`default_tools`."""
    return default_tools().sessions_search(query, sessionKey, limit, since=since, until=until)


def sessions_history(sessionKey: str, limit: int | None = None, includeTools: bool = False) -> dict[str, Any]:  # noqa: N803
    """:meth:`MemoryTools.sessions_history` on :func:`default_tools`."""
    return default_tools().sessions_history(sessionKey, limit, includeTools)


def _shown(path: object) -> str:
    """A requested path as an error result echoes it: printable (lone surrogates replaced)."""
    return scrub(path) if isinstance(path, str) else preview(path)
