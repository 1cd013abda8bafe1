"""`MemoryIndex`: one agent's memory index, kept in step with its workspace and searched like OpenClaw.

The SQLite store is the source of truth; the tantivy BM25 index (a folder beside the database) and the vector
store (in memory) are derived from it and rebuilt when missing or behind. ``search`` follows OpenClaw's
``memory_search`` pipeline (reference §3-§6, §12): keyword leg, vector leg, weighted merge, relaxed minScore
pass, temporal decay, MMR and filename/path tiers, or the boosted keyword scoring of FTS-only mode when there is
no embedding provider.

>>> import tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> with MemoryIndex(ws, {'memory': {'search': {'store': {'path': str(ws / 'index.sqlite')}}}}) as index:
...     hit = index.search('where is the deploy key').results[0]
>>> hit.path, hit.start_line, hit.snippet
('MEMORY.md', 1, 'The deploy key lives in the team vault.')
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._core import Bm25Index, VectorStore
from memsift._text import preview
from memsift.config import MemoryConfig, load_config
from memsift.embedding import EmbeddingProvider
from memsift.errors import InvalidInputError, MemsiftError, ProviderError, SearchIndexError
from memsift.index.backend import open_memory_store, sessions_target, writer_lock
from memsift.index.cache import EmbeddingCache
from memsift.index.embeddings import Embeddings
from memsift.index.identity import extra_paths, media_suffixes
from memsift.index.reader import DREAM_FILES, check_range, read_lines
from memsift.index.status import batch_status, cache_status, deep_issues, disk_status, fts_status, vector_status
from memsift.index.store import ChunkHead, ChunkRow
from memsift.index.sync import (
    Progress,
    SyncReport,
    ensure_index_current,
    sync_workspace,
    unchanged_report,
    workspace_changed,
)
from memsift.index.workspace import MemoryFile, extra_roots, scan_workspace
from memsift.media import MediaInput
from memsift.providers import SILENT, ProviderResolution, resolve_provider
from memsift.providers.rerank import Rerank
from memsift.redact import Redactor
from memsift.search.legs import LegScores, keyword_leg, path_leg, start_vector_leg
from memsift.search.merge import rank
from memsift.search.paths import Catalogue
from memsift.search.request import SearchMode, SearchRequest
from memsift.search.results import MemoryHit, SearchResult, wants_citations

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift.index.session_memory import SessionMemory
    from memsift.index.watch import Watcher
    from memsift.sessions import SessionStore

__all__ = ['MemoryIndex']

SEARCH_SYNC_BUDGET_S = 0.2
"""How long a search waits for a background sync it started before answering from the current index."""
_RERANKS = 3
"""Rankings tried when a writer replaces a result's file between the ranking and the read of its text."""


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
        self.config = config if isinstance(config, MemoryConfig) else load_config(config, agent_id)
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
        self._snippet_redactor: Redactor | None = (
            Redactor(self.config.session_tools.redact_patterns) if self.config.query.redact_snippets else None
        )
        self._rerank = Rerank(self.config) if self.config.query.rerank.enabled else None
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

            self.session_memory = SessionMemory(
                self.sessions, self.store, self.config.sync.sessions, self.config.agent_id
            )
        self.cache = EmbeddingCache(self.store, self.config)
        self.chunks_embedded = 0
        """Chunks this process's syncs have had embedded (from the cache or the provider), for progress displays."""
        self.embeddings = Embeddings(self.config, self.store, resolution)
        self._writer = writer_lock(self.store)
        try:
            self.index = self._open_bm25()
        except BaseException:
            self.store.close()
            raise
        self._sync_lock = threading.Lock()
        self._thread_lock = threading.Lock()
        self._sync_thread: threading.Thread | None = None
        self._sync_error: str | None = None
        self._dirty = True
        self._closed = False
        self._catalogue = Catalogue(-1, [])
        self._identity_seen = self.store.generation
        """The store generation at which the embeddings last compared their identity with the store's."""
        self._watcher: Watcher | None = None
        with contextlib.suppress(ProviderError):
            self.embeddings.ready()  # otherwise retried, and reported, by sync, search and status

    # ------------------------------------------------------------------ set-up

    def _open_bm25(self) -> Bm25Index:
        if self.db_path == ':memory:':
            return Bm25Index()
        folder = Path(self.db_path).with_suffix('.bm25')
        if (folder / 'meta.json').is_file():
            with contextlib.suppress(SearchIndexError):
                return Bm25Index(folder)
        with self._writer.holding(wait=True):  # creating or replacing the folder is a write: one process at a time
            try:
                return Bm25Index(folder)
            except SearchIndexError:
                # Derived data: an index from another memsift version or a damaged one is rebuilt from the store.
                if not (folder / 'meta.json').is_file():
                    raise
                import shutil  # rarely needed: it imports the compression modules

                shutil.rmtree(folder)
                return Bm25Index(folder)

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

    def _switch_to_fallback(self, error: ProviderError) -> bool:
        if not self.embeddings.fall_back(error):
            return False
        self._dirty = True
        return True

    def _check_open(self) -> None:
        if self._closed:
            raise MemsiftError('this MemoryIndex is closed; open a new one')

    # ------------------------------------------------------------------ sync

    def sync(self, force: bool = False, *, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the workspace and return what changed.

        Incremental by content hash; ``force`` (or a changed identity: provider, model, chunking, extra paths)
        re-chunks and re-embeds every file. Each file is replaced in one transaction, so an interrupted sync
        leaves a searchable index that the next sync completes.
        """
        self._check_open()
        report = self._sync_with_fallback(force, progress, wait=True)
        assert report is not None  # waiting for the writer lock either gets it or raises
        return report

    def _sync_with_fallback(self, force: bool, progress: Progress | None, *, wait: bool) -> SyncReport | None:
        try:
            return self._sync(force, progress, wait)
        except ProviderError as exc:
            if not self._switch_to_fallback(exc):
                raise
            return self._sync(force, progress, wait)  # a full reindex with the fallback provider

    def _sync(self, force: bool, progress: Progress | None, wait: bool) -> SyncReport | None:
        """One sync under the writer lock; ``None`` when another writer holds it and ``wait`` is False (that
        writer's commits reach this process's searches when they reload)."""
        identity = self.embeddings.ready()
        if not force and (report := self._nothing_to_sync()) is not None:
            return report
        with self._writer.holding(wait) as writing:
            if not writing:
                return None
            return self._sync_locked(identity, force, progress)

    def _nothing_to_sync(self) -> SyncReport | None:
        """The report of a sync with nothing to do, told from a stat scan and one table read, without the writer
        lock (it writes nothing, so it need not wait for another process's sync); ``None`` when there may be work."""
        started = time.perf_counter()
        embeddings, generation = self.embeddings, self.store.generation
        if (
            self.session_memory is not None  # transcripts are read to know whether they changed
            or not embeddings.current
            or embeddings.stale(generation)
            or self.index.generation != generation
        ):
            return None
        suffixes = media_suffixes(self.config, embeddings.provider)
        report = unchanged_report(
            self.store, scan_workspace(self.workspace, extra_paths(self.config), suffixes), started
        )
        if report is not None:
            self._dirty = False
        return report

    def _sync_locked(self, identity: dict[str, Any], force: bool, progress: Progress | None) -> SyncReport:
        with self._sync_lock:
            # Start from what the previous writer (maybe another process) left, not from a stale view of it: a
            # BM25 reader behind the store would be rebuilt in full, stale vectors would miss its changes.
            if self.index.generation != self.store.generation:
                self.index.reload()
            embeddings = self.embeddings
            if embeddings.stale(self.store.generation):
                embeddings.reload()
            provider, vectors = embeddings.provider, embeddings.vectors
            if embeddings.serving is not None and provider is not None and vectors is not None:
                self.cache.warm(provider, vectors.dims)
            self._dirty = False
            full = force or not embeddings.current
            try:
                report = sync_workspace(
                    self.store,
                    self.index,
                    self.workspace,
                    extra_paths(self.config),
                    tokens=self.config.chunking.tokens,
                    overlap=self.config.chunking.overlap,
                    force=full,
                    embedder=self._embed_chunks if provider is not None else None,
                    vectors=vectors,
                    progress=progress,
                    media_suffixes=media_suffixes(self.config, provider),
                    media_max_bytes=self.config.multimodal.max_file_bytes,
                    documents=self._session_documents(full),
                )
                if not embeddings.current:
                    self.store.set_identity(identity)
                    self.index.commit(generation=self.store.generation)
                    embeddings.switched()
                    report.generation = self.store.generation  # recording the identity was this sync's last write
                embeddings.generation = self.store.generation
                embeddings.unsaved += report.chunks_written + len(report.removed)
                embeddings.save_if_due()
            except BaseException:
                self._dirty = True
                raise
            finally:
                self.index.release_writer()  # other processes (a watcher, the CLI) may sync this index too
            self.cache.evict()
            self._sync_error = None
            return report

    def _session_documents(self, force: bool | None) -> list[MemoryFile]:
        return [] if self.session_memory is None else self.session_memory.documents(force)

    def _embed_chunks(self, texts: Sequence[str | MediaInput]) -> npt.NDArray[np.float32]:
        assert self.provider is not None and self.vectors is not None
        vectors = self.cache.embed(self.provider, self.vectors.dims, texts)
        self.chunks_embedded += len(texts)
        return vectors

    @property
    def cache_hits(self) -> int:
        """Chunks this process found in the embedding cache."""
        return self.cache.hits

    @property
    def cache_misses(self) -> int:
        """Chunks this process had to embed."""
        return self.cache.misses

    def _background_sync(self, wait: bool = False) -> threading.Thread:
        """Start a sync in a daemon thread unless one is running; returns the thread doing it. Unless ``wait``, the
        sync gives way to another process that is writing the index (the workspace stays marked dirty)."""
        with self._thread_lock:
            if self._sync_thread is not None and self._sync_thread.is_alive():
                return self._sync_thread

            def run() -> None:
                try:
                    self._check_open()
                    self._sync_with_fallback(False, None, wait=wait)
                except Exception as exc:  # recorded for status(); the next trigger retries
                    self._sync_error = f'{type(exc).__name__}: {exc}'

            self._sync_thread = threading.Thread(target=run, name='memsift-sync', daemon=True)
            self._sync_thread.start()
            return self._sync_thread

    def sync_in_background(self) -> threading.Thread:
        """Start a sync in a background thread (unless one runs) and return it; searches meanwhile answer from the
        index as it is."""
        self._check_open()
        return self._background_sync(wait=True)

    def mark_dirty(self) -> None:
        """Note that memory files changed; the next search (or watcher tick) syncs."""
        self._dirty = True

    @property
    def dirty(self) -> bool:
        """True when the workspace may have changed since the last sync."""
        return self._dirty

    def _current_catalogue(self) -> Catalogue:
        generation = self.store.generation
        catalogue = self._catalogue
        if catalogue.generation != generation:
            catalogue = self._catalogue = Catalogue(generation, self.store.paths())
        return catalogue

    def _prepare(self, debug: dict[str, Any], wait_for_sync: bool = True) -> None:
        """Before a search: bootstrap an empty index, pick up other writers, start a sync when dirty.

        ``wait_for_sync=False`` never syncs on the query path: the bootstrap and rebuild syncs run in the background
        thread too (the bootstrap is still awaited), and otherwise the search answers from the index as it is after
        the usual short wait.
        """
        has_files = len(self._current_catalogue()) > 0
        thread = self._sync_thread
        syncing = thread is not None and thread.is_alive()
        # Empty as far as searches can tell: no files yet, or a first sync that has written files to the store
        # but not yet committed them to the keyword index.
        if (not has_files and self._dirty) or (syncing and (not has_files or self.index.num_docs == 0)):
            # First search on an empty index: one sync before answering (OpenClaw's bootstrap); without
            # wait_for_sync it runs in the background thread, and the caller bounds the wait (a tool deadline).
            if wait_for_sync and not syncing:
                self.sync()
            else:
                self._background_sync(wait=True).join()
            debug['bootstrapSync'] = True
            return
        rebuild_here = not self.store.shared  # a shared store's index is rebuilt by catching up, below
        if (
            rebuild_here
            and wait_for_sync
            and self.index.generation is None
            and has_files
            and not self._sync_lock.locked()
        ):
            self.sync()  # the BM25 folder was missing or damaged: rebuild it before answering from it
            debug['indexRebuilt'] = True
            return
        generation = self.store.generation
        if self.index.generation != generation:
            self.index.reload()  # another process (a watcher, the CLI) committed, or this one's sync is underway
            if self.index.generation != generation and self.store.shared:
                self._catch_up()  # another host wrote the shared store: apply its changes to this host's index
            elif not self._sync_lock.locked() and self.index.generation != generation:
                self._dirty = True  # the store is ahead of its index (no sync here is writing it): a sync rebuilds it
        if generation != self._identity_seen and not self._sync_lock.locked():
            self._identity_seen = generation
            self.embeddings.adopt()  # another process may have finished embedding the index with this provider
        if self.embeddings.stale(generation) and not self._sync_lock.locked():
            self.embeddings.reload()  # another process wrote
        if not self._dirty and self.session_memory is not None and self.session_memory.due():
            self._dirty = True
        if self._dirty and self.config.sync.on_search:
            started = time.perf_counter()
            self._background_sync().join(SEARCH_SYNC_BUDGET_S)
            debug['syncWaitMs'] = round((time.perf_counter() - started) * 1000, 3)

    def _catch_up(self) -> None:
        """Bring this host's keyword index to a shared store's generation (the changes other hosts made, or a
        rebuild), unless a sync or another catch-up here is already writing it: searches then answer from the index
        as it is and the next one catches up."""
        if not self._sync_lock.acquire(blocking=False):
            return
        try:
            with self._writer.holding(wait=False, store=False) as writing:
                if writing:
                    try:
                        ensure_index_current(self.store, self.index)
                    finally:
                        self.index.release_writer()
        finally:
            self._sync_lock.release()

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
    ) -> SearchResult:
        """Search memory as OpenClaw's ``memory_search`` does.

        The stages, in order: check the request; catch up with the workspace and other writers; pick the mode;
        run the legs (keyword, vector, path); keep what the caller may see; rank (one Rust call: merge, relaxed
        pass, decay, path tiers, MMR, floor); rerank, when ``query.rerank`` is on (see
        :mod:`memsift.providers.rerank`); build the hits. ``debug`` reports each stage's time.

        Args:
            query: What to look for, in any language; a file name or path also works.
            max_results: Results to return (default ``query.maxResults``, 6).
            min_score: Drop results below this score in [0, 1] (default ``query.minScore``, 0.35).
            session_key: The calling session, for the ``auto`` citation rule and, with session memory, for which
                transcripts it may see (``tools.sessions.visibility``; default: the agent's main session).
            sources: Only results from these sources (``memory``, ``sessions``); default all.
            keyword_only: Skip the vector leg and any sync: an immediate answer from the keyword index (used when
                a full search runs past a deadline).
            wait_for_sync: ``False``: never sync on the query path (see :meth:`_prepare`).
            deadline: A :func:`time.monotonic` instant to answer by: the reranker gives up in time for it (the
                earlier stages are bounded by the caller, as :class:`~memsift.tools.agent.MemoryTools` does).
            rerank: ``False`` skips ``query.rerank`` for this search (``memsift eval`` compares with and without).
            explain: Add to each hit ``explain``, how it was scored: the raw BM25 score and its normalized value,
                the cosine, the path score and exact path tier, the weights, the merged score, the temporal decay
                multiplier and where its date came from (``path``, ``evergreen``, ``mtime``, ``none``; ``off``),
                its position before MMR and after (1-based), and, when reranked, its position before reranking;
                ``debug['cut']`` lists the best candidates that did not make the results and why (``minScore``:
                under the floor; ``limit``: past ``max_results``).

        Raises:
            InvalidInputError: ``query``, ``max_results`` or ``min_score`` is not what it should be.
        """
        self._check_open()
        started = time.perf_counter()
        request = SearchRequest.parse(query, max_results, min_score, self.config.query, session_key, sources)
        debug = request.debug
        try:
            if not keyword_only:
                self.embeddings.ready()
                self._prepare(debug, wait_for_sync)
        except ProviderError as exc:
            return self._unavailable(str(exc), debug, started)
        result = self._empty_result(debug)
        mode = self._choose_mode(request.text, keyword_only, debug)
        result.mode = mode
        if not self.config.enabled:
            result.error = f'memory search is disabled for agent {self.config.agent_id!r}'
            result.warning = 'memorySearch.enabled is false in the config'
            result.action = 'set agents.defaults.memorySearch.enabled (or memory.search.enabled) to true'
        elif request.text:
            # The keyword-only answer past a deadline must be immediate: no reranker there.
            reranker = self._rerank if rerank and not keyword_only else None
            keep = request.limit if reranker is None else max(request.limit, reranker.top_n)
            explained: dict[int, dict[str, Any]] | None = {} if explain else None
            try:
                ranked, pinned = self._ranked(request, mode, keep, explained)
            except ProviderError as exc:
                if self.resolution.requested not in SILENT:
                    if self._switch_to_fallback(exc):
                        return self.search(
                            query,
                            max_results,
                            min_score,
                            session_key=session_key,
                            sources=sources,
                            wait_for_sync=wait_for_sync,
                            deadline=deadline,
                            rerank=rerank,
                            explain=explain,
                        )
                    return self._unavailable(str(exc), debug, started)
                # auto/local: keyword-only, silently, with the reason recorded (OpenClaw's contract)
                debug['embeddingError'] = str(exc)
                result.mode = debug['effectiveMode'] = 'fts-only'
                ranked, pinned = self._ranked(request, 'fts-only', keep, explained)
            redact = self._snippet_redactor.redact if self._snippet_redactor is not None else None
            merged_order = {row.id: at for at, (row, _) in enumerate(ranked, 1)}
            if reranker is not None:
                # The reranker reads what the agent would: chunk text with secrets masked, as in snippets.
                ranked = reranker.apply(
                    request.text,
                    ranked,
                    (lambda row: redact(row.text)) if redact is not None else (lambda row: row.text),
                    debug,
                    deadline=deadline,
                    pinned=pinned,
                )[: request.limit]
            cite = wants_citations(self.config.citations, session_key)
            result.results = [MemoryHit.of(row, score, cite, redact) for row, score in ranked]
            if explained is not None:
                result.results = _explained(result.results, ranked, explained, merged_order, debug)
        debug['hits'] = len(result.results)
        debug['searchMs'] = round((time.perf_counter() - started) * 1000, 3)
        return result

    def _empty_result(self, debug: dict[str, Any]) -> SearchResult:
        provider = self.provider  # read after _prepare: a sync there may have switched to the fallback
        return SearchResult(
            [],
            provider.id if provider is not None else 'none',
            provider.model if provider is not None else 'fts-only',
            citations=self.config.citations,
            debug=debug,
            fallback=self._fallback(),
        )

    def _choose_mode(self, text: str, keyword_only: bool, debug: dict[str, Any]) -> SearchMode:
        """Hybrid when vectors serve and hybrid is on, vector-only when it is off, else keywords only (no provider,
        a provider switch not yet indexed, ``keyword_only``, or a query the model cannot read)."""
        provider, serving, embeddings = self.provider, self.embeddings.serving, self.embeddings
        vector_ready = embeddings.searchable
        mode: SearchMode = (
            'hybrid'
            if vector_ready and self.config.query.hybrid.enabled
            else ('vector-only' if vector_ready else 'fts-only')
        )
        debug['effectiveMode'] = mode
        if provider is not None and not vector_ready:
            debug['vectorPaused'] = 'the index is being rebuilt for a new embedding provider/model/settings'
        if serving is not None and not embeddings.current and provider is not None:
            debug['servingModel'] = (
                f'{serving[0].id}/{serving[0].model} until {provider.id}/{provider.model} is indexed'
            )
        if self.resolution.reason is not None:
            debug['embeddingBootstrap'] = self.resolution.reason
        handles = getattr(provider, 'handles', None)
        if keyword_only and mode != 'fts-only':
            debug['vectorSkipped'] = 'keyword-only answer'
            mode = debug['effectiveMode'] = 'fts-only'
        if mode != 'fts-only' and handles is not None and not handles(text):
            # The model cannot read this query (an English-only local model and a CJK query): keyword search only.
            debug['vectorSkipped'] = f'{provider.id if provider else ""} model does not cover the query language'
            mode = debug['effectiveMode'] = 'fts-only'
        return mode

    def _fallback(self) -> dict[str, str] | None:
        resolution = self.resolution
        if resolution.fallback_from is None:
            return None
        return {'from': resolution.fallback_from, 'reason': resolution.fallback_reason or ''}

    def _unavailable(self, error: str, debug: dict[str, Any], started: float) -> SearchResult:
        """OpenClaw's unavailable result: an explicitly configured provider failed, so no silent keyword-only."""
        debug['searchMs'] = round((time.perf_counter() - started) * 1000, 3)
        provider = self.provider
        return SearchResult(
            [],
            provider.id if provider is not None else self.resolution.requested,
            provider.model if provider is not None else '',
            citations=self.config.citations,
            debug=debug,
            error=error,
            warning='memory search is unavailable because the embedding provider failed',
            action='check the provider settings and API key (memsift status --deep), or set provider to "none" '
            'for keyword-only search',
        )

    def _ranked(
        self, request: SearchRequest, mode: SearchMode, keep: int, explained: dict[int, dict[str, Any]] | None = None
    ) -> tuple[list[tuple[ChunkRow, float]], int]:
        """The ranked results with their chunks, read after ranking (only the kept ones need their text), and how
        many lead as exact path hits. A file replaced in between by a writer is ranked again, as the keyword leg
        does when it catches one."""
        for _ in range(_RERANKS):
            ranked, exact = self._rank(request, mode, keep, explained)
            rows = {row.id: row for row in self.store.chunks([head.id for head, _ in ranked])}
            if len(rows) == len(ranked):
                break
            if self.store.shared:
                self._catch_up()  # another host removed some of them: take its changes
            else:
                self.index.reload()
        kept = [(rows[head.id], score) for head, score in ranked if head.id in rows]
        return kept, next((i for i, (row, _) in enumerate(kept) if row.id not in exact), len(kept))

    def _rank(
        self, request: SearchRequest, mode: SearchMode, keep: int, explained: dict[int, dict[str, Any]] | None = None
    ) -> tuple[list[tuple[ChunkHead, float]], set[int]]:
        """The legs, the visibility filter and the ranking call, each timed into ``debug``; ``keep`` results (at
        least ``request.limit``: more for a reranker), and the ids of the exact path hits (which lead)."""
        text, debug = request.text, request.debug
        clock = _StageClock(debug)
        legs = LegScores()
        heads: dict[int, ChunkHead] = {}
        # The vector leg (embedding included) runs beside the keyword and path legs, on a worker thread.
        pending = start_vector_leg(*self.embeddings.for_queries(), text) if mode != 'fts-only' else None
        if mode != 'vector-only':
            legs.keyword, heads = keyword_leg(self.index, self.store, text, debug)
            clock.lap('keywordMs')
        legs.tier, legs.path = path_leg(self._current_catalogue(), self.index, self.store, text)
        clock.lap('pathMs')
        if pending is not None:
            legs.vector, debug['embedMs'], debug['vectorMs'] = pending.result()
            clock.lap('vectorWaitMs')  # what the vector leg added after the others finished
        heads.update(self.store.chunk_heads([i for i in legs.ids() if i not in heads]))
        pool = self._visible([heads[i] for i in legs.ids() if i in heads], request)
        ranked, relaxed = rank(
            legs,
            pool,
            written=self._written(pool) if self.config.query.hybrid.temporal_decay.enabled else None,
            texts=self.store.chunk_texts,
            mode=mode,
            text=text,
            hybrid=self.config.query.hybrid,
            limit=request.limit,
            floor=request.floor,
            keep=keep,
            explain=explained,
        )
        if explained is not None:
            by_id = {head.id: head for head in pool}
            for chunk_id in explained.keys() - by_id.keys():  # from a ranking a writer made stale (re-ranked)
                del explained[chunk_id]
            for chunk_id, row in explained.items():
                head = by_id[chunk_id]
                row |= {'path': head.path, 'startLine': head.start_line, 'endLine': head.end_line}
        clock.lap('mergeMs')  # merge, decay, path tiers, MMR and floor: one call
        if mode != 'vector-only' and (relaxed or not ranked):
            debug['relaxed'] = relaxed  # nothing reached minScore: the relaxed pass ran
        debug['candidates'] = len(pool)
        return ranked, set(legs.tier)

    def _written(self, pool: Sequence[ChunkHead]) -> list[float | None]:
        """When each chunk was last written, for temporal decay: its file's mtime; a transcript's newest message."""
        mtimes = self.store.file_mtimes({head.path for head in pool if head.source != 'sessions'})
        memory = self.session_memory
        transcripts = memory.last_messages() if memory is not None else {}
        return [(transcripts if head.source == 'sessions' else mtimes).get(head.path) for head in pool]

    def _visible(self, pool: list[ChunkHead], request: SearchRequest) -> list[ChunkHead]:
        """The candidates from the sources asked for, transcripts only where the calling session may see them."""
        if request.sources is not None:
            pool = [head for head in pool if head.source in request.sources]
        if any(head.source == 'sessions' for head in pool):
            memory = self.session_memory
            visible = set() if memory is None else memory.visible_paths(request.session_key)
            pool = [head for head in pool if head.source != 'sessions' or head.path in visible]
        return pool

    # ------------------------------------------------------------------ get

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """Read part of an indexed memory file, or the root ``DREAMS.md`` dream diary (OpenClaw's ``memory_get``).

        Args:
            path: Workspace-relative path as search results give it.
            from_line: First line, 1-based (default 1; a lower one is clamped to 1).
            lines: How many lines (default: to the end); the text is capped at 20,000 characters and
                ``nextFrom`` then says where to continue.

        Raises:
            InvalidInputError: the path is not an indexed memory file, or the range is invalid.
        """
        self._check_open()
        wanted = path.strip().replace('\\', '/').removeprefix('./') if isinstance(path, str) else None
        record = self.store.file(wanted) if wanted is not None else None
        if wanted in DREAM_FILES and record is None:  # the dream diary: readable, though never indexed
            start, count = check_range(from_line, lines)
            return read_lines(self.workspace, [self.workspace], wanted, start, count)
        if wanted is None or record is None:
            raise InvalidInputError(
                f'{preview(path)} is not an indexed memory file; memory_get reads only paths that memory_search returns'
            )
        start, count = check_range(from_line, lines)
        if record.source == 'sessions':
            raise InvalidInputError(
                f'{wanted} is a session transcript; read it with sessions_history (memsift sessions history KEY)'
            )
        roots = [self.workspace, *extra_roots(self.workspace, extra_paths(self.config))]
        return read_lines(self.workspace, roots, wanted, start, count)

    # ------------------------------------------------------------------ status

    def status(self, deep: bool = False) -> dict[str, Any]:
        """Index state as OpenClaw's ``memory status --json`` reports it, plus skipped files with reasons.

        ``deep`` also checks that the BM25 index holds every stored chunk and probes the embedding provider.
        """
        self._check_open()
        provider = self.provider
        provider_error = None
        try:
            self.embeddings.ready()
        except ProviderError as exc:
            provider_error = str(exc)
        paths = extra_paths(self.config)
        embeddings = self.embeddings
        vectors_current = embeddings.vectors is not None and embeddings.current
        out: dict[str, Any] = {
            'backend': 'memsift',
            'provider': provider.id if provider is not None else 'none',
            'model': provider.model if provider is not None else 'fts-only',
            'requestedProvider': self.config.provider,
            'agentId': self.config.agent_id,
            'files': len(self._current_catalogue()),
            'chunks': self.store.chunk_count(),
            'dirty': self._dirty
            and workspace_changed(self.store, self.workspace, paths, media_suffixes(self.config, provider)),
            'workspaceDir': str(self.workspace),
            'dbPath': self.db_path,
            'store': {'backend': self.config.store.backend, 'location': self.store.location},
            'indexPath': self.index.path,
            'extraPaths': paths,
            'sources': list(self.config.sources),
            'sourceCounts': [{'source': s, 'files': f, 'chunks': c} for s, f, c in self.store.source_counts()],
            'cache': cache_status(self.config, self.cache),
            'disk': disk_status(self.store, self.index.path, embeddings.saved_path()),
            'fts': fts_status(self.index),
            'vector': vector_status(provider, embeddings.vectors, vectors_current),
            'batch': batch_status(self.config, provider),
            'generation': self.store.generation,
            'identity': {'status': embeddings.state, **(embeddings.identity or {})},
            'providerError': provider_error,
            'providerReason': self.resolution.reason,
            'fallback': self._fallback(),
            'skipped': [{'path': p, 'reason': r} for p, r in self.store.skipped().items()],
            'syncError': self._sync_error,
            'watching': self._watcher is not None,
            'rerank': self._rerank_status(),
            'watch': {
                'mode': self._watcher.mode if self._watcher is not None else 'off',
                'fallbackReason': self._watcher.fallback_reason if self._watcher is not None else None,
            },
        }
        if deep:
            out['issues'] = deep_issues(self.store, self.index, provider, embeddings.current, out['vector'])
        return out

    def _rerank_status(self) -> dict[str, Any]:
        """``query.rerank`` as this index runs it: on or off, which reranker, and why it cannot run if it cannot
        (its first search makes it; keys never appear)."""
        settings = self.config.query.rerank
        out: dict[str, Any] = {'enabled': settings.enabled}
        if settings.enabled:
            out |= {'provider': settings.provider, 'model': settings.model, 'topN': settings.top_n}
            out['error'] = self._rerank.error if self._rerank is not None else None
        return out

    def compact(self, *, cache_days: float = 30.0) -> dict[str, Any]:
        """Give disk space back: prune the embedding cache, merge the keyword index into one segment and vacuum
        the SQLite store. Safe while searches run, in this process or others (they read the last commit and their
        SQLite snapshot); it waits for a running sync in any process, and syncs wait for it.

        The cache keeps every row a stored chunk uses, whatever its provider, and every row written in the last
        ``cache_days`` days; older rows for text no note holds any more go, then ``cache.maxEntries`` applies.

        Returns ``disk`` before and after (as :meth:`status` reports it), ``cacheRowsPruned``, ``segmentsMerged``
        and ``seconds``.

        >>> import tempfile, pathlib
        >>> ws = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
        >>> config = {'memory': {'search': {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}}}
        >>> with MemoryIndex(ws, config) as index:
        ...     _ = index.sync()
        ...     report = index.compact()
        >>> report['after']['total'] <= report['before']['total']
        True
        """
        self._check_open()
        if isinstance(cache_days, bool) or not isinstance(cache_days, int | float) or not cache_days >= 0:
            raise InvalidInputError(f'cache_days must be a number of days >= 0, got {preview(cache_days)}')
        started = time.perf_counter()
        before = self.status()['disk']
        with self._writer.holding(True), self._sync_lock:
            pruned = self.store.prune_cache(time.time() - min(cache_days, 1e6) * 86_400)  # (10**400 days: all)
            if self.config.cache.max_entries is not None:
                pruned += self.store.evict_cache(self.config.cache.max_entries)
            segments = self.index.merge_segments()
            self.store.vacuum()
        return {
            'before': before,
            'after': self.status()['disk'],
            'cacheRowsPruned': pruned,
            'segmentsMerged': segments,
            'seconds': round(time.perf_counter() - started, 3),
        }

    # ------------------------------------------------------------------ watching

    def start_watching(self) -> None:
        """Re-index memory files as they change (watchdog, when ``sync.watch``; ``sync.watchDebounceMs`` debounce)
        and every ``sync.intervalMinutes`` when set. Stopped by :meth:`stop_watching` or :meth:`close`."""
        self._check_open()
        if self._watcher is None:
            from memsift.index.watch import Watcher  # here: watchdog is only needed by watching processes

            sync = self.config.sync
            self._watcher = Watcher(
                self.workspace,
                [self.workspace / 'memory', *extra_roots(self.workspace, extra_paths(self.config))],
                changed=self.mark_dirty,
                sync=self._watched_sync,
                debounce_s=sync.watch_debounce_ms / 1000,
                interval_s=sync.interval_minutes * 60,
                watch=sync.watch,
            )
            self._watcher.start()

    def _watched_sync(self) -> None:
        """A sync the watcher asked for; a failure is reported by ``status()`` and the next change retries."""
        try:
            self.sync()
        except Exception as exc:
            self._sync_error = f'{type(exc).__name__}: {exc}'

    def stop_watching(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Stop watching, wait for a running sync and close the store. Idempotent."""
        if self._closed:
            return
        self.stop_watching()
        thread = self._sync_thread
        if thread is not None:
            thread.join()
        with self._sync_lock:
            self._closed = True
            if not self.embeddings.stale(self.store.generation):
                self.embeddings.save_if_due(closing=True)  # the next process loads the graph instead of building it
            self.store.close()
            if self._owns_sessions and self.sessions is not None:
                self.sessions.close()
            if self._rerank is not None:
                self._rerank.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'MemoryIndex(workspace={str(self.workspace)!r}, agent_id={self.config.agent_id!r})'


def _explained(
    hits: list[MemoryHit],
    ranked: Sequence[tuple[ChunkRow, float]],
    explained: dict[int, dict[str, Any]],
    merged_order: dict[int, int],
    debug: dict[str, Any],
) -> list[MemoryHit]:
    """The hits with their ``explain``, and ``debug['cut']``: the 10 best-scored candidates left out, and why."""
    out = []
    for at, (hit, (row, _)) in enumerate(zip(hits, ranked, strict=True), 1):
        why = {k: v for k, v in explained[row.id].items() if k not in ('path', 'startLine', 'endLine', 'cut')}
        if 'reranked' in debug and merged_order[row.id] != at:
            why['positionBeforeRerank'] = merged_order[row.id]
        why['position'] = at
        out.append(dataclasses.replace(hit, explain=why))
    shown = {row.id for row, _ in ranked}
    cut = [row for chunk_id, row in explained.items() if chunk_id not in shown]
    cut.sort(key=lambda row: -row['score'])
    debug['cut'] = [
        {key: row[key] for key in ('path', 'startLine', 'endLine', 'score', 'merged', 'cut')}
        | ({'cut': 'limit'} if row['cut'] is None else {})  # kept for the reranker, then past max_results
        for row in cut[:10]
    ]
    return out


class _StageClock:
    """Records each search stage's wall time in ``debug`` (``<stage>Ms``), from the end of the previous one."""

    def __init__(self, debug: dict[str, Any]) -> None:
        self.debug = debug
        self.since = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.debug[name] = round((now - self.since) * 1000, 3)
        self.since = now
