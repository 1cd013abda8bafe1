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
import functools
import hashlib
import json
import math
import os
import shutil
import threading
import time
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
from filelock import FileLock, Timeout

from memsift._core import Bm25Index, VectorStore, bm25_score_to_unit, rank_candidates
from memsift._text import preview, scrub
from memsift.config import ExtraPath, MemoryConfig, load_config
from memsift.embedding import EmbeddingProvider, embed_documents, embed_query
from memsift.errors import InvalidInputError, MemsiftError, ProviderError, SearchIndexError, SkippedFile, StoreError
from memsift.index.store import ChunkRow, FileRecord, MemoryStore
from memsift.index.sync import Progress, SyncReport, load_vectors, sync_workspace, workspace_changed
from memsift.index.workspace import MemoryFile, extra_roots, is_inside, read_memory_file
from memsift.media import EXTENSIONS as MEDIA_EXTENSIONS
from memsift.media import MediaInput
from memsift.providers import SILENT, ProviderResolution, create_provider, resolve_provider
from memsift.sessions import Caller, SessionStore, main_session_key

if TYPE_CHECKING:
    from memsift.index.watch import Watcher

__all__ = ['MemoryHit', 'MemoryIndex', 'SearchResult']

SearchMode = Literal['hybrid', 'vector-only', 'fts-only']
"""Both legs, the vector leg alone, or keywords alone (no provider, or a query the model cannot read)."""

TOKENIZER = 'memsift-analyzer-v1+stem'
"""Recorded in the index identity: a different analyzer would make the BM25 index meaningless."""
SNIPPET_MAX_CHARS = 700
"""OpenClaw's snippet bound, in UTF-16 units."""
MAX_QUERY_CHARS = 4096
"""Longer queries are cut (and the cut reported in ``debug``): a hostile query cannot stall the engine."""
LEG_CANDIDATES = 200
"""Candidates fetched per leg whatever ``maxResults`` is, so the top results do not move with it (OpenClaw #134604)."""
MAX_GET_CHARS = 20_000
"""``get`` returns at most this many characters; ``nextFrom`` says where to continue."""
SEARCH_SYNC_BUDGET_S = 0.2
"""How long a search waits for a background sync it started before answering from the current index."""
COMMIT_WAIT_S = 1.0
"""How long a search that caught a writer between its store write and its BM25 commit waits for that commit."""
WRITER_WAIT_S = 600.0
"""How long a sync waits for another process's sync of the same index (a watcher, ``memsift index``) to finish."""

_EXACT_PATH_CANDIDATE_LIMIT = 200


def _utf16_prefix(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` UTF-16 units (never splits a surrogate pair)."""
    if len(text) <= limit // 2:
        return text
    encoded = text.encode('utf-16-le', 'surrogatepass')
    if len(encoded) <= 2 * limit:
        return text
    # A cut between the halves of a pair leaves a lone high surrogate at the end: 'ignore' drops it.
    return encoded[: 2 * limit].decode('utf-16-le', 'ignore')


def _normalize_path(path: str) -> str:
    """OpenClaw's path-query normalization: trim, ``\\`` -> ``/``, no leading ``./``, NFC, lower case."""
    path = path.strip().replace('\\', '/')
    while path.startswith('./'):
        path = path[2:]
    return unicodedata.normalize('NFC', path).lower()


def _path_keys(path: str) -> tuple[str, str, str]:
    """Normalized full path, basename and stem (basename without its last extension)."""
    full = _normalize_path(path)
    base = full.rsplit('/', 1)[-1]
    return full, base, base.rsplit('.', 1)[0] if '.' in base else base


class _Catalogue:
    """The indexed files of one store generation, with lookup tables for exact path queries."""

    def __init__(self, generation: int, files: dict[str, FileRecord]) -> None:
        self.generation = generation
        self.files = files
        self._by_key: dict[tuple[int, str], list[str]] = {}
        for path in files:
            for tier, key in zip((3, 2, 1), _path_keys(path)):
                self._by_key.setdefault((tier, key), []).append(path)

    def exact(self, query: str) -> dict[str, int]:
        """Files the query names exactly: 3 = the full path, 2 = the basename (query without ``/``), 1 = the stem.

        >>> catalogue = _Catalogue(0, {'memory/2026-11-28.md': None})  # type: ignore[dict-item]
        >>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
        [{'memory/2026-11-28.md': 3}, {'memory/2026-11-28.md': 2}, {'memory/2026-11-28.md': 1}, {}]
        """
        query = _normalize_path(query)
        found: dict[str, int] = {}
        if not query:
            return found
        for tier in (3, 2, 1):
            if tier == 2 and '/' in query:
                continue
            for path in self._by_key.get((tier, query), ()):
                found.setdefault(path, tier)
        return found


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One search result: a chunk of a memory file."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str = 'memory'
    citation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            'path': self.path,
            'startLine': self.start_line,
            'endLine': self.end_line,
            'score': round(self.score, 6),
            'snippet': self.snippet,
            'source': self.source,
            'corpus': 'sessions' if self.source == 'sessions' else 'memory',
        }
        if self.citation is not None:
            out['citation'] = self.citation
        return out


@dataclass
class SearchResult:
    """What ``MemoryIndex.search`` returns; ``to_dict()`` is OpenClaw's ``memory_search`` tool result."""

    results: list[MemoryHit]
    provider: str
    model: str
    citations: str = 'auto'
    mode: str = 'fts-only'
    fallback: dict[str, str] | None = None
    debug: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    warning: str | None = None
    action: str | None = None

    @property
    def unavailable(self) -> bool:
        """True when search could not run (``error`` says why, ``action`` how to fix it)."""
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        if self.unavailable:
            return {
                'results': [],
                'disabled': True,
                'unavailable': True,
                'error': self.error,
                'warning': self.warning,
                'action': self.action,
                'debug': self.debug,
            }
        out: dict[str, Any] = {
            'results': [hit.to_dict() for hit in self.results],
            'provider': self.provider,
            'model': self.model,
            'citations': self.citations,
            'mode': self.mode,
            'debug': self.debug,
        }
        if self.fallback is not None:
            out['fallback'] = self.fallback
        return out


@dataclass(slots=True)
class _Candidate:
    """A chunk found by some leg, with each leg's score (0 when that leg did not find it)."""

    id: int
    vector_score: float = 0.0
    keyword_score: float = 0.0
    """Raw BM25 (the ranking scales it: hybrid by the query's best match, FTS-only r / (1 + r))."""
    path_score: float = 0.0
    """Partial path match (BM25 over paths, r / (1 + r)); exact path hits have a ``tier`` instead."""
    tier: int = 0
    """Exact path tier: 3 full path, 2 basename, 1 stem (0: none)."""
    score: float = 0.0
    row: ChunkRow | None = None


def _citation(hit: ChunkRow) -> str:
    lines = f'L{hit.start_line}' if hit.start_line == hit.end_line else f'L{hit.start_line}-L{hit.end_line}'
    return f'{hit.path}#{lines}'


def session_path(session_key: str) -> str:
    """The logical path of a session transcript in memory search results."""
    return f'sessions/{session_key.replace("/", "_")}.jsonl'


def _wants_citations(mode: str, session_key: str | None) -> bool:
    """OpenClaw: ``on`` always, ``off`` never, ``auto`` only in direct chats (no group/channel session key)."""
    if mode != 'auto':
        return mode == 'on'
    parts = set((session_key or '').lower().replace('-', ':').split(':'))
    return not parts & {'group', 'channel'}


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
        if provider is None:
            self.resolution = resolve_provider(self.config)
        else:
            self.resolution = ProviderResolution(provider, getattr(provider, 'id', self.config.provider))
        self.provider = self.resolution.provider
        self.db_path = self.config.store.path
        self.sessions = self._session_store(sessions, agent_id)
        self.store = MemoryStore(self.db_path)
        # Every process that writes this index (store and BM25 folder) holds this lock while it writes: the rest
        # wait (an explicit sync) or leave the work to it (a sync started by a search).
        self._writer = (
            None
            if self.db_path == ':memory:'
            else FileLock(
                Path(self.db_path).with_suffix('.lock'),
                thread_local=True,
                preserve_lock_file=True,
                fallback_to_soft=False,
            )
        )
        try:
            self.index = self._open_bm25()
        except BaseException:
            self.store.close()
            raise
        self.vectors: VectorStore | None = None
        self._vectors_generation = -1
        """The store generation ``vectors`` reflect (another process's writes move the store past it)."""
        self._serving: tuple[EmbeddingProvider, VectorStore] | None = None
        """The previous provider and its vectors while a provider or model switch is being re-embedded."""
        self._identity: dict[str, Any] | None = None
        self._identity_ok = False
        self._sync_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._sync_thread: threading.Thread | None = None
        self._sync_error: str | None = None
        self._dirty = True
        self._closed = False
        self._catalogue = _Catalogue(-1, {})
        self._watcher: Watcher | None = None
        self.cache_hits = 0
        self.cache_misses = 0
        with contextlib.suppress(ProviderError):
            self._ready()  # otherwise retried, and reported, by sync, search and status

    # ------------------------------------------------------------------ set-up

    def _session_store(self, sessions: SessionStore | None, agent_id: str) -> SessionStore | None:
        """The transcripts indexed as ``source: "sessions"`` (``experimental.sessionMemory`` with ``sessions`` in
        ``sources``): the given store, else the agent's default one."""
        self._owns_sessions = False
        self._sessions_checked: tuple[Any, ...] | None = None
        """The session store's fingerprint when its transcripts were last found indexed as far as the deltas ask."""
        if 'sessions' not in self.config.sources:
            return None
        if sessions is not None:
            return sessions
        self._owns_sessions = True
        return SessionStore.from_config(None, agent_id, self.config.session_tools)

    def _open_bm25(self) -> Bm25Index:
        if self.db_path == ':memory:':
            return Bm25Index()
        folder = Path(self.db_path).with_suffix('.bm25')
        if (folder / 'meta.json').is_file():
            with contextlib.suppress(SearchIndexError):
                return Bm25Index(folder)
        with self._writing(wait=True):  # creating or replacing the folder is a write: one process at a time
            try:
                return Bm25Index(folder)
            except SearchIndexError:
                # Derived data: an index from another memsift version or a damaged one is rebuilt from the store.
                if not (folder / 'meta.json').is_file():
                    raise
                shutil.rmtree(folder)
                return Bm25Index(folder)

    @contextlib.contextmanager
    def _writing(self, wait: bool) -> Iterator[bool]:
        """Hold the index's writer lock (``<store>.lock``) for the block; yields False, without it, when another
        process (or thread) is writing and ``wait`` is False. The kernel frees it when a holder dies.

        Raises:
            StoreError: ``wait`` and the other writer has not finished within :data:`WRITER_WAIT_S`.
        """
        if self._writer is None:
            yield True
            return
        try:
            self._writer.acquire(timeout=WRITER_WAIT_S if wait else 0, poll_interval=0.02)
        except Timeout:
            if wait:
                raise StoreError(
                    f'another process has been writing the index {self.db_path} for {WRITER_WAIT_S:.0f} '
                    's; try again when its sync ends (memsift status shows the index)'
                ) from None
            yield False
            return
        try:
            yield True
        finally:
            self._writer.release()

    def _extra_paths(self) -> list[str]:
        return [p.path if isinstance(p, ExtraPath) else p for p in self.config.extra_paths]

    def _ready(self) -> dict[str, Any]:
        """Set up what depends on the provider (its dims may need a probe request): the vector store, loaded from
        the store when the index identity matches, and the identity itself. Raises ProviderError."""
        with self._state_lock:
            if self._identity is not None:
                return self._identity
            if self.resolution.error is not None:
                raise ProviderError(self.resolution.error)
            dims = None
            if self.provider is not None:
                try:
                    dims = int(self.provider.dims)
                except ProviderError:
                    raise
                except Exception as exc:
                    raise ProviderError(
                        f'embedding provider {self.provider.id!r}: cannot tell its dimension: '
                        f'{type(exc).__name__}: {exc}'
                    ) from exc
                self.vectors = VectorStore(dims)
            identity = self._wanted_identity(dims)
            self._identity_ok = self.store.identity == identity
            if self.vectors is not None and self._identity_ok:
                self._reload_vectors()
            self._serving = None if self._identity_ok else self._previous_vectors(identity)
            self._identity = identity
            return identity

    _PROVIDER_KEYS = ('provider', 'model', 'dims')

    def _previous_vectors(self, identity: dict[str, Any]) -> tuple[EmbeddingProvider, VectorStore] | None:
        """When only the embedding provider or model changed, the vectors already stored keep serving (with the
        previous provider embedding the queries) until a sync has re-embedded everything: OpenClaw pauses
        semantic search instead. ``None`` if the previous provider cannot be rebuilt from this config."""
        stored = self.store.identity
        if not stored or stored.get('provider') in (None, 'none') or not stored.get('dims'):
            return None
        if any(stored.get(k) != v for k, v in identity.items() if k not in self._PROVIDER_KEYS):
            return None  # chunking, sources or extra paths changed too: the stored vectors describe other chunks
        try:
            previous = create_provider(
                stored['provider'],
                dataclasses.replace(self.config, model=stored['model'], output_dimensionality=stored['dims']),
            )
            if int(previous.dims) != stored['dims']:
                return None
        except Exception:  # no key for it any more, an unknown id...: semantic search pauses as in OpenClaw
            return None
        vectors = VectorStore(stored['dims'])
        load_vectors(self.store, vectors)
        return previous, vectors

    def _media_suffixes(self) -> tuple[str, ...]:
        """File suffixes indexed as images/audio: only with multimodal on (and a provider: never in FTS-only)."""
        multimodal = self.config.multimodal
        if not multimodal.enabled or self.provider is None:
            return ()
        return tuple(suffix for kind in multimodal.modalities for suffix in MEDIA_EXTENSIONS.get(kind, ()))

    def _wanted_identity(self, dims: int | None) -> dict[str, Any]:
        provider = self.provider
        return {
            'provider': provider.id if provider is not None else 'none',
            'model': provider.model if provider is not None else 'fts-only',
            'dims': dims,
            'chunkTokens': self.config.chunking.tokens,
            'chunkOverlap': self.config.chunking.overlap,
            'tokenizer': TOKENIZER,
            'sources': sorted(self.config.sources),
            'extraPaths': sorted({os.path.normpath(p) for p in self._extra_paths()}),
            'media': [*self._media_suffixes(), self.config.multimodal.max_file_bytes]
            if self._media_suffixes()
            else None,
        }

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
        identity = self._ready()
        with self._writing(wait) as writing:
            if not writing:
                return None
            return self._sync_locked(identity, force, progress)

    def _sync_locked(self, identity: dict[str, Any], force: bool, progress: Progress | None) -> SyncReport:
        with self._sync_lock:
            # Start from what the previous writer (maybe another process) left, not from a stale view of it: a
            # BM25 reader behind the store would be rebuilt in full, stale vectors would miss its changes.
            if self.index.generation != self.store.generation:
                self.index.reload()
            if self._vectors_stale(self.store.generation):
                self._reload_vectors()
            if self._serving is not None:
                self._warm_cache()
            self._dirty = False
            full = force or not self._identity_ok
            embedder = self._embed_chunks if self.provider is not None else None
            try:
                report = sync_workspace(
                    self.store,
                    self.index,
                    self.workspace,
                    self._extra_paths(),
                    tokens=self.config.chunking.tokens,
                    overlap=self.config.chunking.overlap,
                    force=full,
                    embedder=embedder,
                    vectors=self.vectors,
                    progress=progress,
                    media_suffixes=self._media_suffixes(),
                    media_max_bytes=self.config.multimodal.max_file_bytes,
                    documents=self._session_documents(full),
                )
                if not self._identity_ok:
                    self.store.set_identity(identity)
                    self.index.commit(generation=self.store.generation)
                    self._identity_ok = True
                    self._serving = None  # the switch: the new vectors serve from now on
                self._vectors_generation = self.store.generation
            except BaseException:
                self._dirty = True
                raise
            finally:
                self.index.release_writer()  # other processes (a watcher, the CLI) may sync this index too
            if self.config.cache.enabled and self.config.cache.max_entries is not None:
                self.store.evict_cache(self.config.cache.max_entries)
            self._sync_error = None
            return report

    def _session_documents(self, force: bool | None) -> list[MemoryFile]:
        """One document per session transcript (``sessions/<key>.jsonl``): ``User: …`` / ``Assistant: …`` lines,
        redacted, with chunk lines mapped to the transcript's lines. A session that grew by less than
        ``sync.sessions.deltaBytes`` and ``deltaMessages`` since it was indexed keeps its chunks until it grows more.
        ``force=None`` only lists them (no rebuild of branched sessions), for the dirty check.
        """
        sessions = self.sessions
        if sessions is None:
            return []
        if force is not None:
            sessions.reconcile()  # the active branch of every session is current before it is chunked
        known = self.store.files()
        documents = []
        for session in sessions.sessions():
            if session['incognito']:
                continue
            key: str = session['key']
            path = session_path(key)
            count, size = session['events'], session['bytes']
            previous = known.get(path)
            if previous is not None and not force and self._grew_little(previous, count, size):
                count, size = int(previous.mtime), previous.size  # looks unchanged to the sync
            documents.append(
                MemoryFile(
                    path, Path(path), float(count), size, 'sessions', read=functools.partial(self._render_session, key)
                )
            )
        return documents

    def _grew_little(self, previous: FileRecord, count: int, size: int) -> bool:
        """Below both ``sync.sessions`` deltas (a threshold of 0 or less means any change counts)."""
        delta = self.config.sync.sessions
        return (
            delta.delta_bytes > 0
            and delta.delta_messages > 0
            and 0 <= size - previous.size < delta.delta_bytes
            and 0 <= count - previous.mtime < delta.delta_messages
        )

    def _sessions_due(self) -> bool:
        """Whether a transcript grew past the delta thresholds, appeared or went away since it was indexed."""
        if self.sessions is None:
            return False
        fingerprint = self.sessions.fingerprint()
        if fingerprint == self._sessions_checked:
            return False  # nothing changed since transcripts were last found up to date: no per-file comparison
        known = {path: record for path, record in self.store.files().items() if record.source == 'sessions'}
        documents = self._session_documents(None)
        due = {d.path for d in documents} != set(known) or any(
            (d.mtime, d.size) != (known[d.path].mtime, known[d.path].size) for d in documents
        )
        if not due:
            self._sessions_checked = fingerprint
        return due

    def _render_session(self, key: str) -> tuple[str, tuple[int, ...]]:
        assert self.sessions is not None
        lines, line_map = [], []
        for line, role, text in self.sessions.active_messages(key):
            text = ' '.join(self.sessions.redactor.redact(text).split())
            lines.append(f'{"User" if role == "user" else "Assistant"}: {text}')
            line_map.append(line)
        return '\n'.join(lines), tuple(line_map)

    def _warm_cache(self) -> None:
        """Embed every stored chunk with the new provider into the embedding cache, while the previous vectors
        keep serving; the re-index that follows then swaps the vectors in without waiting on the provider."""
        batch: list[str] = []
        for row in self.store.iter_chunks():
            batch.append(row.text)
            if len(batch) >= 256:
                self._embed_chunks(batch)
                batch = []
        if batch:
            self._embed_chunks(batch)

    def _switch_to_fallback(self, error: ProviderError) -> bool:
        """OpenClaw's runtime fallback: an explicit provider failing at request time hands over to ``fallback``,
        once; the index identity changes with it, so the next sync re-embeds with the fallback."""
        fallback, resolution = self.config.fallback, self.resolution
        if resolution.fallback_from is not None or fallback in ('', 'none', resolution.requested):
            return False
        try:
            provider = create_provider(fallback, dataclasses.replace(self.config, model=None))
        except ProviderError:
            return False
        with self._state_lock:
            self.resolution = ProviderResolution(
                provider, resolution.requested, fallback_from=resolution.requested, fallback_reason=str(error)
            )
            self.provider = provider
            self.vectors = None
            self._serving = None
            self._identity = None
            self._identity_ok = False
        self._dirty = True
        return True

    def _provider_key(self) -> str:
        """What makes cached embeddings reusable: provider, model, dims, endpoint and non-auth headers (hashed)."""
        provider = self.provider
        assert provider is not None and self.vectors is not None
        headers = sorted(
            (k.lower(), v)
            for k, v in self.config.remote.headers.items()
            if k.lower() not in ('authorization', 'x-goog-api-key', 'api-key')
        )
        identity = {
            'provider': provider.id,
            'model': provider.model,
            'dims': self.vectors.dims,
            'endpoint': getattr(getattr(provider, 'http', None), 'base_url', None),
            'headers': headers,
        }
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def _embed_chunks(self, texts: Sequence[str | MediaInput]) -> npt.NDArray[np.float32]:
        """Embed chunk texts (or media) through the embedding cache: unchanged input is never sent again."""
        assert self.provider is not None and self.vectors is not None
        if not self.config.cache.enabled:
            return embed_documents(self.provider, texts)
        key = self._provider_key()
        hashes = [
            t.sha256 if isinstance(t, MediaInput) else hashlib.sha256(t.encode('utf-8')).hexdigest() for t in texts
        ]
        cached = self.store.cached_vectors(key, hashes, self.vectors.dims)
        missing = sorted({h: i for i, h in reversed(list(enumerate(hashes))) if h not in cached}.values())
        self.cache_hits += len(texts) - len(missing)
        self.cache_misses += len(missing)
        if missing:
            fresh = embed_documents(self.provider, [texts[i] for i in missing])
            self.store.cache_vectors(key, [(hashes[i], fresh[n]) for n, i in enumerate(missing)])
            cached.update((hashes[i], fresh[n]) for n, i in enumerate(missing))
        return np.stack([cached[h] for h in hashes]).astype(np.float32, copy=False)

    def _background_sync(self, wait: bool = False) -> threading.Thread:
        """Start a sync in a daemon thread unless one is running; returns the thread doing it. Unless ``wait``, the
        sync gives way to another process that is writing the index (the workspace stays marked dirty)."""
        with self._state_lock:
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

    def _vectors_stale(self, generation: int) -> bool:
        """The vectors serve searches but reflect an older store generation (another process wrote since)."""
        return self.vectors is not None and self._identity_ok and self._vectors_generation != generation

    def _reload_vectors(self) -> None:
        """Replace the vectors with the store's, built aside and swapped in: searches meanwhile use the old ones."""
        assert self.vectors is not None
        generation = self.store.generation  # read first: a write after it makes the vectors look stale, not current
        fresh = VectorStore(self.vectors.dims)
        load_vectors(self.store, fresh)
        self.vectors, self._vectors_generation = fresh, generation

    def _current_catalogue(self) -> _Catalogue:
        generation = self.store.generation
        catalogue = self._catalogue
        if catalogue.generation != generation:
            catalogue = self._catalogue = _Catalogue(generation, self.store.files())
        return catalogue

    def _prepare(self, debug: dict[str, Any], wait_for_sync: bool = True) -> None:
        """Before a search: bootstrap an empty index, pick up other writers, start a sync when dirty.

        ``wait_for_sync=False`` never syncs on the query path: the bootstrap and rebuild syncs run in the background
        thread too (the bootstrap is still awaited), and otherwise the search answers from the index as it is after
        the usual short wait.
        """
        has_files = bool(self._current_catalogue().files)
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
        if wait_for_sync and self.index.generation is None and has_files and not self._sync_lock.locked():
            self.sync()  # the BM25 folder was missing or damaged: rebuild it before answering from it
            debug['indexRebuilt'] = True
            return
        generation = self.store.generation
        if self.index.generation != generation:
            self.index.reload()  # another process (a watcher, the CLI) committed, or this one's sync is underway
            if not self._sync_lock.locked() and self.index.generation != generation:
                self._dirty = True  # the store is ahead of its index (no sync here is writing it): a sync rebuilds it
        if self._vectors_stale(generation) and not self._sync_lock.locked():
            self._reload_vectors()  # another process wrote
        if not self._dirty and self._sessions_due():
            self._dirty = True
        if self._dirty and self.config.sync.on_search:
            started = time.perf_counter()
            self._background_sync().join(SEARCH_SYNC_BUDGET_S)
            debug['syncWaitMs'] = round((time.perf_counter() - started) * 1000, 3)

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
    ) -> SearchResult:
        """Search memory as OpenClaw's ``memory_search`` does.

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
        """
        self._check_open()
        started = time.perf_counter()
        if not isinstance(query, str):
            raise InvalidInputError(f'query must be a string, got {type(query).__name__}')
        limit = self.config.query.max_results if max_results is None else max_results
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(f'max_results must be a positive integer, got {preview(max_results)}')
        floor = self.config.query.min_score if min_score is None else min_score
        if (
            isinstance(floor, bool)
            or not isinstance(floor, (int, float))
            or (isinstance(floor, float) and not math.isfinite(floor))
        ):
            raise InvalidInputError(f'min_score must be a number between 0 and 1, got {preview(min_score)}')
        floor = 1.0 if floor > 1 else 0.0 if floor < 0 else float(floor)  # compared first: 10**400 has no float
        debug: dict[str, Any] = {'backend': 'memsift'}
        # Lone surrogates (from a broken client) cannot be encoded for the engine: replace them.
        text = scrub(query).strip()
        if len(text) > MAX_QUERY_CHARS:
            text = text[:MAX_QUERY_CHARS]
            debug['queryTruncated'] = True
        try:
            if not keyword_only:
                self._ready()
                self._prepare(debug, wait_for_sync)
        except ProviderError as exc:
            return self._unavailable(str(exc), debug, started)
        provider = self.provider  # read after _prepare: a sync there may have switched to the fallback
        serving = self._serving
        vector_ready = provider is not None and (self._identity_ok or serving is not None)
        mode: SearchMode = (
            'hybrid'
            if vector_ready and self.config.query.hybrid.enabled
            else ('vector-only' if vector_ready else 'fts-only')
        )
        debug['effectiveMode'] = mode
        if provider is not None and not vector_ready:
            debug['vectorPaused'] = 'the index is being rebuilt for a new embedding provider/model/settings'
        if serving is not None and not self._identity_ok and provider is not None:
            debug['servingModel'] = (
                f'{serving[0].id}/{serving[0].model} until {provider.id}/{provider.model} is indexed'
            )
        if self.resolution.reason is not None:
            debug['embeddingBootstrap'] = self.resolution.reason
        result = SearchResult(
            [],
            provider.id if provider is not None else 'none',
            provider.model if provider is not None else 'fts-only',
            citations=self.config.citations,
            mode=mode,
            debug=debug,
            fallback=self._fallback(),
        )
        handles = getattr(self.provider, 'handles', None)
        if keyword_only and mode != 'fts-only':
            debug['vectorSkipped'] = 'keyword-only answer'
            mode = result.mode = debug['effectiveMode'] = 'fts-only'
        if mode != 'fts-only' and handles is not None and not handles(text):
            # The model cannot read this query (an English-only local model and a CJK query): keyword search only.
            debug['vectorSkipped'] = f'{provider.id if provider else ""} model does not cover the query language'
            mode = result.mode = debug['effectiveMode'] = 'fts-only'
        if not self.config.enabled:
            result.error = f'memory search is disabled for agent {self.config.agent_id!r}'
            result.warning = 'memorySearch.enabled is false in the config'
            result.action = 'set agents.defaults.memorySearch.enabled (or memory.search.enabled) to true'
        elif text:
            try:
                hits = self._ranked(text, limit, floor, mode, debug, session_key, sources)
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
                        )
                    return self._unavailable(str(exc), debug, started)
                # auto/local: keyword-only, silently, with the reason recorded (OpenClaw's contract)
                debug['embeddingError'] = str(exc)
                result.mode = debug['effectiveMode'] = 'fts-only'
                hits = self._ranked(text, limit, floor, 'fts-only', debug, session_key, sources)
            cite = _wants_citations(self.config.citations, session_key)
            result.results = [
                MemoryHit(
                    c.row.path,
                    c.row.start_line,
                    c.row.end_line,
                    min(1.0, c.score),
                    _utf16_prefix(c.row.text, SNIPPET_MAX_CHARS),
                    c.row.source,
                    _citation(c.row) if cite else None,
                )
                for c in hits
                if c.row is not None
            ]
        debug['hits'] = len(result.results)
        debug['searchMs'] = round((time.perf_counter() - started) * 1000, 3)
        return result

    def _visible_session_paths(self, session_key: str | None) -> set[str]:
        """Transcript paths the calling session may see, by the rules of ``sessions_search``."""
        if self.sessions is None:
            return set()
        caller = Caller(session_key or main_session_key(self.config.agent_id))
        return {session_path(key) for key in self.sessions.visible_keys(caller)}

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

    def _timed(self, debug: dict[str, Any], name: str, since: float) -> float:
        now = time.perf_counter()
        debug[name] = round((now - since) * 1000, 3)
        return now

    def _ranked(
        self,
        text: str,
        limit: int,
        floor: float,
        mode: SearchMode,
        debug: dict[str, Any],
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
    ) -> list[_Candidate]:
        hybrid = self.config.query.hybrid
        vector_weight, text_weight = hybrid.vector_weight, hybrid.text_weight
        t = time.perf_counter()
        candidates: dict[int, _Candidate] = {}
        rows: dict[int, ChunkRow] = {}

        def candidate(chunk_id: int) -> _Candidate:
            entry = candidates.get(chunk_id)
            if entry is None:
                entry = candidates[chunk_id] = _Candidate(chunk_id)
            return entry

        keyword_best = 0.0
        if mode != 'vector-only':
            keyword, rows = self._keyword_hits(text, debug)
            keyword_best = max((score for _, score in keyword), default=0.0)
            for chunk_id, score in keyword:
                candidate(chunk_id).keyword_score = score
            t = self._timed(debug, 'keywordMs', t)
        if mode != 'fts-only':
            serving = self._serving
            query_provider, vectors = (
                serving if serving is not None and not self._identity_ok else (self.provider, self.vectors)
            )
            assert query_provider is not None and vectors is not None
            query_vector = embed_query(query_provider, text)
            t = self._timed(debug, 'embedMs', t)
            if np.any(query_vector) and len(vectors):
                ids, scores = vectors.search(query_vector, LEG_CANDIDATES)
                for chunk_id, score in zip(ids.tolist(), scores.tolist()):
                    candidate(chunk_id).vector_score = max(0.0, score)
            t = self._timed(debug, 'vectorMs', t)
        self._path_candidates(text, candidate)
        t = self._timed(debug, 'pathMs', t)

        rows.update((row.id, row) for row in self.store.chunks([i for i in candidates if i not in rows]))
        pool = [c for c in candidates.values() if c.id in rows and (sources is None or rows[c.id].source in sources)]
        if any(rows[c.id].source == 'sessions' for c in pool):
            visible = self._visible_session_paths(session_key)
            pool = [c for c in pool if rows[c.id].source != 'sessions' or rows[c.id].path in visible]
        decay = hybrid.temporal_decay
        files = self._current_catalogue().files
        chunks = [rows[entry.id] for entry in pool]
        order, final_scores, relaxed = rank_candidates(
            [entry.id for entry in pool],
            [entry.vector_score for entry in pool],
            [entry.keyword_score for entry in pool],
            [entry.path_score for entry in pool],
            [entry.tier for entry in pool],
            [row.path for row in chunks],
            [row.source for row in chunks],
            [files[row.path].mtime if row.path in files else None for row in chunks],
            [row.text for row in chunks],
            mode=mode,
            query=text,
            keyword_best=keyword_best,
            vector_weight=vector_weight,
            text_weight=text_weight,
            decay=(time.time(), decay.half_life_days) if decay.enabled else None,
            mmr=(hybrid.mmr.lambda_, min(LEG_CANDIDATES, limit * hybrid.candidate_multiplier))
            if hybrid.mmr.enabled
            else None,
            min_score=floor,
            limit=min(limit, len(pool)),  # (a huge max_results is just "all of them")
        )
        t = self._timed(debug, 'mergeMs', t)  # merge, decay, path tiers, MMR and floor: one call
        if mode != 'vector-only' and (relaxed or not order):
            debug['relaxed'] = relaxed  # nothing reached minScore: the relaxed pass ran
        kept = []
        for index, score in zip(order, final_scores, strict=True):
            entry = pool[index]
            entry.row, entry.score = chunks[index], score
            kept.append(entry)
        debug['candidates'] = len(pool)
        return kept

    def _keyword_hits(self, text: str, debug: dict[str, Any]) -> tuple[list[tuple[int, float]], dict[int, ChunkRow]]:
        """The BM25 leg and the chunks it found, read together.

        A writer (here or in another process) replaces a file's chunks in the store first and commits the BM25
        index right after; a search in between would find the old chunk ids gone from the store and lose the file.
        When it sees that, it waits (at most :data:`COMMIT_WAIT_S`) for the commit.
        """
        started = time.monotonic()
        while True:
            hits = self.index.search(text, LEG_CANDIDATES)
            rows = {row.id: row for row in self.store.chunks([chunk_id for chunk_id, _ in hits])}
            # Retried until the two agree, not until the generations do: another thread may reload the index
            # between this search and a generation check, so equal generations say nothing about these hits.
            if len(rows) == len(hits) or time.monotonic() - started > COMMIT_WAIT_S:
                break
            time.sleep(0.005)
            self.index.reload()
            debug['awaitedCommitMs'] = round((time.monotonic() - started) * 1000, 3)
        return hits, rows

    def _path_candidates(self, text: str, candidate: Any) -> None:
        """Filename/path search (§6): exact tiers on whole files, BM25 over paths for partial matches."""
        exact = dict(list(self._current_catalogue().exact(text).items())[:_EXACT_PATH_CANDIDATE_LIMIT])
        first = self.store.first_chunks(list(exact))
        for path, chunk_id in first.items():
            candidate(chunk_id).tier = exact[path]
        partial: dict[str, float] = {}
        hits = self.index.search_paths(text, LEG_CANDIDATES)
        if hits:
            by_id = {row.id: row.path for row in self.store.chunks([chunk_id for chunk_id, _ in hits])}
            for chunk_id, score in hits:
                hit_path = by_id.get(chunk_id)
                if hit_path is not None and hit_path not in exact:
                    partial[hit_path] = max(partial.get(hit_path, 0.0), bm25_score_to_unit(score))
        for path, chunk_id in self.store.first_chunks(list(partial)).items():
            candidate(chunk_id).path_score = partial[path]

    # ------------------------------------------------------------------ get

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """Read part of an indexed memory file (OpenClaw's ``memory_get``).

        Args:
            path: Workspace-relative path as search results give it.
            from_line: First line, 1-based (default 1).
            lines: How many lines (default: to the end); the text is capped at 20,000 characters and
                ``nextFrom`` then says where to continue.

        Raises:
            InvalidInputError: the path is not an indexed memory file, or the range is invalid.
        """
        self._check_open()
        wanted = path.strip().replace('\\', '/').removeprefix('./') if isinstance(path, str) else None
        files = self._current_catalogue().files
        if wanted is None or wanted not in files:
            raise InvalidInputError(
                f'{preview(path)} is not an indexed memory file; memory_get reads only paths that memory_search returns'
            )
        start = 1 if from_line is None else from_line
        for name, value in (('from_line', start), ('lines', lines)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidInputError(f'{name} must be a positive integer, got {preview(value)}')
        if self._current_catalogue().files[wanted].source == 'sessions':
            raise InvalidInputError(
                f'{wanted} is a session transcript; read it with sessions_history (memsift sessions history KEY)'
            )
        target = self.workspace / wanted
        if not is_inside(target, [self.workspace, *extra_roots(self.workspace, self._extra_paths())]):
            raise InvalidInputError(
                f'{wanted} is no longer a regular file inside the workspace (it or a folder on its '
                'path is now a symlink; memory is never read through links); run sync'
            )
        if not target.is_file():
            raise InvalidInputError(f'{wanted} is no longer a regular file; run sync')
        try:
            content = read_memory_file(target)
        except SkippedFile as exc:
            raise InvalidInputError(f'cannot read {wanted}: {exc.reason}') from exc
        all_lines = content.split('\n')
        stop = len(all_lines) if lines is None else min(len(all_lines), start - 1 + lines)
        selected = all_lines[start - 1 : stop]
        text = '\n'.join(selected)
        out: dict[str, Any] = {'path': wanted, 'from': start, 'lines': len(selected), 'totalLines': len(all_lines)}
        if len(text) > MAX_GET_CHARS:
            text = text[:MAX_GET_CHARS]
            shown = text.count('\n') + 1
            out.update(lines=shown, truncated=True, nextFrom=start + shown - 1)
        out['text'] = text
        return out

    # ------------------------------------------------------------------ status

    def status(self, deep: bool = False) -> dict[str, Any]:
        """Index state as OpenClaw's ``memory status --json`` reports it, plus skipped files with reasons.

        ``deep`` also checks that the BM25 index holds every stored chunk and probes the embedding provider.
        """
        self._check_open()
        provider = self.provider
        provider_error = None
        try:
            self._ready()
        except ProviderError as exc:
            provider_error = str(exc)
        chunks = self.store.chunk_count()
        files = self._current_catalogue().files
        skipped = self.store.skipped()
        out: dict[str, Any] = {
            'backend': 'memsift',
            'provider': provider.id if provider is not None else 'none',
            'model': provider.model if provider is not None else 'fts-only',
            'requestedProvider': self.config.provider,
            'agentId': self.config.agent_id,
            'files': len(files),
            'chunks': chunks,
            'dirty': self._dirty
            and workspace_changed(self.store, self.workspace, self._extra_paths(), self._media_suffixes()),
            'workspaceDir': str(self.workspace),
            'dbPath': self.db_path,
            'indexPath': self.index.path,
            'extraPaths': self._extra_paths(),
            'sources': list(self.config.sources),
            'sourceCounts': [{'source': s, 'files': f, 'chunks': c} for s, f, c in self.store.source_counts()],
            'cache': {
                'enabled': self.config.cache.enabled,
                'entries': self.store.cache_size(),
                'maxEntries': self.config.cache.max_entries,
                'hits': self.cache_hits,
                'misses': self.cache_misses,
            },
            'fts': {
                'enabled': True,
                'available': True,
                'error': None,
                'tokenizer': TOKENIZER,
                'docs': self.index.num_docs,
                'generation': self.index.generation,
            },
            'vector': {
                'enabled': provider is not None,
                'available': bool(self.vectors is not None and self._identity_ok),
                'dims': self.vectors.dims if self.vectors is not None else None,
                'vectors': len(self.vectors) if self.vectors is not None else 0,
                'ann': bool(self.vectors is not None and self.vectors.ann_active),
            },
            'batch': {
                'enabled': self.config.remote.batch.enabled,
                'failures': getattr(provider, 'batch_failures', 0),
                'lastError': getattr(provider, 'batch_error', None),
                'wait': self.config.remote.batch.wait,
                'concurrency': self.config.remote.batch.concurrency,
                'pollIntervalMs': self.config.remote.batch.poll_interval_ms,
                'timeoutMs': self.config.remote.batch.timeout_minutes * 60_000,
            },
            'generation': self.store.generation,
            'identity': {
                'status': 'current'
                if self._identity_ok
                else ('switching' if self._serving is not None else 'rebuild-pending'),
                **(self._identity or {}),
            },
            'providerError': provider_error,
            'providerReason': self.resolution.reason,
            'fallback': self._fallback(),
            'skipped': [{'path': p, 'reason': r} for p, r in skipped.items()],
            'syncError': self._sync_error,
            'watching': self._watcher is not None,
        }
        if deep:
            issues = []
            if self.index.num_docs != chunks:
                issues.append(f'BM25 index holds {self.index.num_docs} chunks, the store {chunks}: run sync')
            if provider is not None:
                try:
                    embed_query(provider, 'memsift status probe')
                    out['vector']['probe'] = 'ok'
                except Exception as exc:
                    out['vector']['probe'] = f'failed: {exc}'
                    issues.append('the embedding provider did not answer the probe')
                stored = self.store.vector_count()
                if self._identity_ok and stored != chunks:
                    issues.append(f'{chunks - stored} chunks have no vector: run sync --force')
            out['issues'] = issues
        return out

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
                [self.workspace / 'memory', *extra_roots(self.workspace, self._extra_paths())],
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
            self.store.close()
            if self._owns_sessions and self.sessions is not None:
                self.sessions.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'MemoryIndex(workspace={str(self.workspace)!r}, agent_id={self.config.agent_id!r})'
