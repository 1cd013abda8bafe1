"""`MemoryIndex`: one agent's memory index, kept in step with its workspace and searched like OpenClaw.

A facade over named parts: the store (source of truth; SQLite or PostgreSQL), the tantivy BM25 index (a folder
beside the database) and the vectors (:mod:`~memsift.index.embeddings`), both derived from it and rebuilt when
missing or behind; :class:`~memsift.index.freshness.Freshness` decides when they are written (syncs, catching up
with other writers, watching); :class:`~memsift.search.pipeline.SearchPipeline` runs searches;
:mod:`~memsift.index.maintenance` reports status and compacts. ``search`` follows OpenClaw's
``memory_search`` pipeline (reference §3-§6, §12): keyword leg, vector leg, weighted merge, relaxed minScore
pass, temporal decay, MMR and filename/path tiers, or the boosted keyword scoring of FTS-only mode when there is
no embedding provider.

>>> import tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> search = {'store': {'path': str(ws / 'index.sqlite')}}
>>> with MemoryIndex(ws, {'agents': {'defaults': {'memorySearch': search}}}) as index:
...     hit = index.search('where is the deploy key').results[0]
>>> hit.path, hit.start_line, hit.snippet
('MEMORY.md', 1, 'The deploy key lives in the team vault.')
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._core import VectorStore
from memsift.config import MemoryConfig, load_config
from memsift.embedding import EmbeddingProvider
from memsift.errors import InvalidInputError, ProviderError
from memsift.index import maintenance
from memsift.index.backend import open_memory_store, sessions_target, writer_lock
from memsift.index.cache import EmbeddingCache
from memsift.index.embeddings import Embeddings
from memsift.index.freshness import Freshness, open_keyword_index, start_from_snapshot
from memsift.index.notes import append_note
from memsift.index.reader import memory_get
from memsift.index.sync import Progress, SyncReport
from memsift.index.workspace import extra_paths, extra_roots
from memsift.providers import ProviderResolution, resolve_provider
from memsift.redact import Redactor
from memsift.search.pipeline import SearchOptions, SearchPipeline
from memsift.search.rerank import Rerank
from memsift.search.results import SearchResult

if TYPE_CHECKING:
    from memsift.index.session_memory import SessionMemory
    from memsift.results import CompactReport, MemoryGetResult, MemoryStatus, MemoryWriteResult
    from memsift.sessions import SessionStore

__all__ = ['MemoryIndex']


class MemoryIndex:
    """The memory index of one agent workspace.

    Args:
        workspace: The agent workspace folder (``MEMORY.md``, ``memory/``, ...). ``None`` takes the workspace the
            OpenClaw config gives for the agent.
        config: A :class:`MemoryConfig`, an OpenClaw config file path, or a config dict (``None``: defaults).
        agent_id: Agent whose settings and store are used.
        provider: An :class:`~memsift.embedding.EmbeddingProvider` for the vector leg. ``None`` resolves the
            config's ``provider`` as OpenClaw does (``none``, ``auto`` without any API key and ``local`` search
            keyword-only; an explicit provider that is unavailable makes searches report it).
        sessions: The session store whose transcripts are indexed with session memory (default: the agent's).

    Safe to share between threads: searches run concurrently, syncs are serialized.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        config: MemoryConfig | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        agent_id: str = 'main',
        *,
        provider: EmbeddingProvider | None = None,
        sessions: SessionStore | None = None,
    ) -> None:
        self._config = config if isinstance(config, MemoryConfig) else load_config(config, agent_id)
        root = workspace if workspace is not None else self.config.workspace
        if root is None:
            raise InvalidInputError('no workspace: pass MemoryIndex(workspace=...) or set the agent workspace')
        self.workspace = Path(root).expanduser().resolve()
        if not self.workspace.is_dir():
            raise InvalidInputError(f'workspace {self.workspace} is not a folder')
        if provider is not None and not isinstance(provider, EmbeddingProvider):
            raise InvalidInputError(
                f'{provider!r} is not an embedding provider (needs id, model, dims, embed_query, embed_documents)'
            )
        resolution = (
            resolve_provider(self.config)
            if provider is None
            else ProviderResolution(provider, getattr(provider, 'id', self.config.provider))
        )
        self.db_path = self.config.store.path
        self.rerank = Rerank(self.config) if self.config.query.rerank.enabled else None
        """``query.rerank``: its reranker is made by the first search that uses it."""
        self._owns_sessions = sessions is None
        if 'sessions' in self.config.sources and sessions is None:
            from memsift.sessions import SessionStore  # only with session memory on

            target, setting = sessions_target(self.config)
            sessions = SessionStore.from_config(target, agent_id, self.config.session_tools, setting=setting)
        self.sessions = sessions if 'sessions' in self.config.sources else None
        """The transcripts indexed as ``source: "sessions"`` (``experimental.sessionMemory`` with ``sessions``)."""
        self.store = open_memory_store(self.config)
        self.session_memory: SessionMemory | None = None
        if self.sessions is not None:
            from memsift.index.session_memory import SessionMemory

            config = self.config
            self.session_memory = SessionMemory(
                self.sessions,
                self.store,
                config.sync.sessions,
                config.agent_id,
                private_only=config.profile.name == 'openclaw-2' and not config.experimental_session_memory,
                by_session_id=config.profile.transcript_paths == 'session-id',
            )
        self.cache = EmbeddingCache(self.store, self.config)
        self.embeddings = Embeddings(self.config, self.store, resolution)
        writer = writer_lock(self.store)
        try:
            snapshot = start_from_snapshot(self.config, self.store, self.db_path, self.embeddings.saved_path(), writer)
            self.index = open_keyword_index(self.db_path, writer)
        except BaseException:
            self.store.close()
            raise
        self.freshness = Freshness(
            self.config,
            self.workspace,
            self.store,
            self.index,
            self.embeddings,
            self.cache,
            self.session_memory,
            writer,
            snapshot,
        )
        redactor = Redactor(self.config.session_tools.redact_patterns)
        snippet_redactor = redactor if self.config.query.redact_snippets else None
        self.pipeline = SearchPipeline(self.config, self.freshness, self.session_memory, self.rerank, snippet_redactor)
        self._get_redact = redactor.redact if self.config.query.redact_get else None
        """``query.redactGet``: how ``get`` masks secrets (None: verbatim, OpenClaw's contract)."""
        with contextlib.suppress(ProviderError):
            self.embeddings.ready()  # otherwise retried, and reported, by sync, search and status

    @property
    def config(self) -> MemoryConfig:
        """The agent's settings. Replacing them (a test, an evaluation) reaches the sync and search parts, as it
        reaches the next sync and search; the store, provider and cache keep the ones they were opened with."""
        return self._config

    @config.setter
    def config(self, config: MemoryConfig) -> None:
        self._config = self.freshness.config = self.pipeline.config = config

    @property
    def resolution(self) -> ProviderResolution:
        """How the embedding provider was chosen (OpenClaw's resolution, and any fallback since)."""
        return self.embeddings.resolution

    @property
    def provider(self) -> EmbeddingProvider | None:
        """The embedding provider (``None``: keyword search only)."""
        return self.embeddings.provider

    @property
    def vectors(self) -> VectorStore | None:
        """The chunk vectors of this provider, as of the last sync or reload."""
        return self.embeddings.vectors

    @property
    def chunks_embedded(self) -> int:
        """Chunks this process's syncs have had embedded (from the cache or the provider), for progress displays."""
        return self.freshness.chunks_embedded

    @property
    def cache_hits(self) -> int:
        """Chunks this process found in the embedding cache."""
        return self.cache.hits

    @property
    def cache_misses(self) -> int:
        """Chunks this process had to embed."""
        return self.cache.misses

    # ------------------------------------------------------------------ sync

    def sync(self, force: bool = False, *, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the workspace and return what changed.

        Incremental by content hash; ``force`` (or a changed identity: provider, model, chunking, extra paths)
        re-chunks and re-embeds every file. Each file is replaced in one transaction, so an interrupted sync
        leaves a searchable index that the next sync completes.
        """
        return self.freshness.sync(force, progress)

    def sync_in_background(self) -> threading.Thread:
        """Start a sync in a background thread (unless one runs) and return it; searches meanwhile answer from the
        index as it is."""
        self.freshness.check_open()
        return self.freshness.background_sync(wait=True)

    def mark_dirty(self) -> None:
        """Note that memory files changed; the next search (or watcher tick) syncs."""
        self.freshness.mark_dirty()

    @property
    def dirty(self) -> bool:
        """True when the workspace may have changed since the last sync."""
        return self.freshness.dirty

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        *,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
        keyword_only: bool = False,
        wait_for_sync: bool = True,
        deadline: float | None = None,
        rerank: bool = True,
        explain: bool = False,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> SearchResult:
        """Search memory as OpenClaw's ``memory_search`` does.

        The stages (:mod:`memsift.search.pipeline`), in order: check the request; catch up with the workspace and
        other writers; pick the mode; run the legs (keyword, vector, path); keep what the caller may see; rank (one
        Rust call: merge, relaxed pass, decay, path tiers, MMR, floor); rerank, when ``query.rerank`` is on (see
        :mod:`memsift.search.rerank`); build the hits. ``debug`` reports each stage's time.

        Args:
            query: What to look for, in any language; a file name or path also works.
            max_results: Results to return (default ``query.maxResults``, 6).
            min_score: Drop results below this score in [0, 1] (default ``query.minScore``, 0.35).
            session_key: The calling session, for the ``auto`` citation rule and, with session memory, for which
                transcripts it may see (``tools.sessions.visibility``; default: the agent's main session).
            sources: Only results from these sources (``memory``, ``sessions``); default all.
            keyword_only: Skip the vector leg and any sync: an immediate answer from the keyword index (used when
                a full search runs past a deadline).
            wait_for_sync: ``False``: never sync on the query path (see
                :meth:`~memsift.index.freshness.Freshness.prepare`).
            deadline: A :func:`time.monotonic` instant to answer by: the reranker gives up in time for it (the
                earlier stages are bounded by the caller, as :class:`~memsift.tools.agent.MemoryTools` does).
            rerank: ``False`` skips ``query.rerank`` for this search (``memsift eval`` compares with and without).
            explain: Add to each hit ``explain``, how it was scored: the raw BM25 score and its normalized value,
                the cosine, the path score and exact path tier, the weights, the merged score, the temporal decay
                multiplier and where its date came from (``path``, ``evergreen``, ``mtime``, ``none``; ``off``),
                its position before MMR and after (1-based), and, when reranked, its position before reranking;
                ``debug['cut']`` lists the best candidates that did not make the results and why (``minScore``:
                under the floor; ``limit``: past ``max_results``; ``partialMatch``: under OpenClaw 2.x's all-terms
                rule, a keyword hit holding only some of the query's words).
            since: Only material of this day or later: an ISO date (``2026-11-01``) or a span back from today
                (``7d``, ``2w``, ``3m``, ``1y``). A chunk's day: a daily note's name, its front-matter ``date:``,
                else its file's modification time; a transcript's newest message.
            until: Only material of this day or earlier (same forms).
            paths: Only files matching one of these workspace-relative globs (``memory/2026-11-*.md``,
                ``projects/**``; a folder takes everything under it).
            tags: Only notes whose front-matter ``tags`` include one of these.
            now: The moment time words ("last week", "上周", "先週") and relative filters are read against
                (default: now; naive means local time), for tests and replays. Time words rank material of the
                window they name first (``debug['time']``); ``query.timeWords: false`` turns that off.

        Raises:
            InvalidInputError: ``query``, ``max_results``, ``min_score`` or a filter is not what it should be (the
                message names it).
        """
        self.freshness.check_open()
        options = SearchOptions(
            session_key, sources, keyword_only, wait_for_sync, deadline, rerank, explain, since, until, paths, tags, now
        )
        return self.pipeline.search(query, max_results, min_score, options)

    # ------------------------------------------------------------------ get, write, status, compact

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> MemoryGetResult:
        """Read part of an indexed memory file, or the root ``DREAMS.md`` dream diary (OpenClaw's ``memory_get``):
        verbatim, or with secrets masked when ``query.redactGet`` is on.

        Args:
            path: Workspace-relative path as search results give it.
            from_line: First line, 1-based (default 1; a lower one is clamped to 1).
            lines: How many lines (default: to the end); the text is capped at 20,000 characters and
                ``nextFrom`` then says where to continue.

        Raises:
            InvalidInputError: the path is not an indexed memory file, or the range is invalid.
        """
        self.freshness.check_open()
        extra = extra_roots(self.workspace, extra_paths(self.config))
        return memory_get(self.workspace, extra, self.store.file, path, from_line, lines, self._get_redact)

    def write(
        self, text: str, path: str | None = None, *, now: datetime | None = None, sync: bool = True
    ) -> MemoryWriteResult:
        """Append a note to today's daily file ``memory/YYYY-MM-DD.md`` (local date), or to the Markdown file under
        ``memory/`` that ``path`` names (created, with its folders, when missing), after a blank line; then sync,
        so the next search finds it, in this process or another. Atomic, and safe beside other writers and processes
        (see :mod:`~memsift.index.notes`).

        Args:
            text: The note (Markdown), at most 20,000 characters.
            path: A workspace-relative ``.md`` path under ``memory/``, e.g. ``memory/projects/deploy.md``.
            now: Whose date names the daily file (default: now; for tests and replays).
            sync: ``False``: leave indexing to the next search or the watcher (the index is marked dirty).

        Returns ``{path, startLine, endLine, chars}``: ``get(path, startLine)`` reads the note back.

        Raises:
            InvalidInputError: an empty or too long ``text``; a ``path`` outside ``memory/``, not ``.md``, through a
                symlink, or to a file that is not UTF-8 text.
            StoreError: the file could not be written (permissions, a full disk).
        """
        self.freshness.check_open()
        written = append_note(self.workspace, text, path, now=now)
        if sync:
            self.sync()
        else:
            self.mark_dirty()
        return written

    def status(self, deep: bool = False) -> MemoryStatus:
        """Index state as OpenClaw's ``memory status --json`` reports it, plus skipped files with reasons.

        ``deep`` also checks that the BM25 index holds every stored chunk and probes the embedding provider.
        """
        self.freshness.check_open()
        return maintenance.status(self.freshness, self.rerank, deep)

    def compact(self, *, cache_days: float = 30.0) -> CompactReport:
        """Give disk space back: prune the embedding cache, merge the keyword index into one segment and vacuum
        the SQLite store. Safe while searches run, in this process or others (they read the last commit and their
        SQLite snapshot); it waits for a running sync in any process, and syncs wait for it.

        The cache keeps every row a stored chunk uses, whatever its provider, and every row written in the last
        ``cache_days`` days; older rows for text no note holds any more go, then ``cache.maxEntries`` applies.

        Returns ``disk`` before and after (as :meth:`status` reports it), ``cacheRowsPruned``, ``segmentsMerged``
        and ``seconds`` (an example: :mod:`memsift.index.maintenance`).
        """
        self.freshness.check_open()
        return maintenance.compact(self.freshness, self.rerank, cache_days)

    def reset(self) -> dict[str, int]:
        """Empty the index: every indexed file and chunk goes (``memsift reset``, OpenClaw's ``memory reset``); the
        next :meth:`sync` (or search) indexes the workspace again from its files, re-embedding nothing the embedding
        cache holds. Memory files and transcripts are not touched. Safe beside other processes, as a sync is.

        Returns ``{filesRemoved, chunksRemoved}``.
        """
        self.freshness.check_open()
        return maintenance.reset(self.freshness)

    # ------------------------------------------------------------------ watching and lifetime

    def start_watching(self) -> None:
        """Re-index memory files as they change (watchdog, when ``sync.watch``; ``sync.watchDebounceMs`` debounce)
        and every ``sync.intervalMinutes`` when set. Stopped by :meth:`stop_watching` or :meth:`close`."""
        self.freshness.check_open()
        self.freshness.start_watching()

    def stop_watching(self) -> None:
        self.freshness.stop_watching()

    def close(self) -> None:
        """Stop watching, wait for a running sync and close the store. Idempotent."""
        if self.freshness.closed:
            return
        with self.freshness.closing():
            self.store.close()
            if self._owns_sessions and self.sessions is not None:
                self.sessions.close()
            if self.rerank is not None:
                self.rerank.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'MemoryIndex(workspace={str(self.workspace)!r}, agent_id={self.config.agent_id!r})'
