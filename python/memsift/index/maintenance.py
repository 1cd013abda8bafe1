"""What ``memsift status`` reports about a memory index, and ``memsift compact``, which gives disk space back
(``MemoryIndex.status`` and ``MemoryIndex.compact`` call these).

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryIndex(ws, config) as index:
...     _ = index.sync()
...     report = status(index.freshness, index.rerank)
...     compacted = compact(index.freshness, index.rerank, cache_days=30)
>>> report['files'], report['chunks'], report['dirty']
(1, 1, False)
>>> compacted['after']['total'] <= compacted['before']['total']
True
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memsift._text import preview
from memsift.config import MemoryConfig
from memsift.errors import InvalidInputError, ProviderError
from memsift.index.identity import media_suffixes
from memsift.index.status import batch_status, cache_status, deep_issues, disk_status, fts_status, vector_status
from memsift.index.sync import ensure_index_current, workspace_changed
from memsift.index.workspace import extra_paths, memory_scope

if TYPE_CHECKING:
    from memsift.index.freshness import Freshness
    from memsift.results import CompactReport, MemoryStatus, SyncState
    from memsift.search.rerank import Rerank

__all__ = ['compact', 'status']


def status(freshness: Freshness, rerank: Rerank | None, deep: bool = False) -> MemoryStatus:
    """``MemoryIndex.status``: the state of the index ``freshness`` keeps as OpenClaw's ``memory status --json``
    reports it, plus skipped files with reasons; ``deep`` also checks that the BM25 index holds every stored chunk
    and probes the provider."""
    config, embeddings, store, keyword = freshness.config, freshness.embeddings, freshness.store, freshness.index
    provider = embeddings.provider
    provider_error = None
    try:
        embeddings.ready()
    except ProviderError as exc:
        provider_error = str(exc)
    paths = extra_paths(config)
    vectors_current = embeddings.vectors is not None and embeddings.current
    watcher = freshness.watcher
    out: MemoryStatus = {
        'backend': 'memsift',
        'provider': provider.id if provider is not None else 'none',
        'model': provider.model if provider is not None else 'fts-only',
        'requestedProvider': config.provider,
        'agentId': config.agent_id,
        'files': store.file_count(),
        'chunks': store.chunk_count(),
        'dirty': freshness.dirty and _workspace_changed(freshness),
        'workspaceDir': str(freshness.workspace),
        'dbPath': config.store.path,
        'store': {'backend': config.store.backend, 'location': store.location},
        'indexPath': keyword.path,
        'extraPaths': paths,
        'sources': list(config.sources),
        'sourceCounts': [{'source': s, 'files': f, 'chunks': c} for s, f, c in store.source_counts()],
        'cache': cache_status(config, freshness.cache),
        'disk': disk_status(store, keyword.path, embeddings.saved_path()),
        'fts': fts_status(keyword),
        'vector': vector_status(provider, embeddings.vectors, vectors_current),
        'batch': batch_status(config, provider),
        'generation': store.generation,
        'identity': {'status': embeddings.state, **(embeddings.identity or {})},
        'providerError': provider_error,
        'providerReason': embeddings.resolution.reason,
        'fallback': embeddings.resolution.fallback_report(),
        'skipped': [{'path': p, 'reason': r} for p, r in store.skipped().items()],
        'syncError': freshness.sync_error,
        'sync': _sync_state(freshness),
        'watching': watcher is not None,
        'rerank': _rerank_status(config, rerank),
        'watch': {
            'mode': watcher.mode if watcher is not None else 'off',
            'fallbackReason': watcher.fallback_reason if watcher is not None else None,
        },
        'snapshot': freshness.snapshot.copy(),
        'replica': store.read_replicas(),
    }
    if deep:
        out['issues'] = deep_issues(store, keyword, provider, embeddings.current, out['vector'])
    return out


def _workspace_changed(freshness: Freshness) -> bool:
    """Whether a sync would find work (a skipped file tried again is none): the core's check, unless patterns need
    Python's compare."""
    config, store = freshness.config, freshness.store
    suffixes, scope = media_suffixes(config, freshness.embeddings.provider), memory_scope(config)
    diff = freshness.stamp_check.diff(store, freshness.workspace, scope, suffixes)
    if diff is None:
        return workspace_changed(store, freshness.workspace, scope, suffixes)
    skipped = store.skipped()
    return bool(diff.gone) or any(path not in skipped for path, *_ in diff.changed)


def _sync_state(freshness: Freshness) -> SyncState:
    """``status()['sync']``: a background sync running now, and what the last check of every file cost."""
    thread = freshness.sync_thread
    check = None if freshness.check_s is None else round(freshness.check_s * 1000, 1)
    return {'running': thread is not None and thread.is_alive(), 'checkMs': check}


def _rerank_status(config: MemoryConfig, rerank: Rerank | None) -> dict[str, Any]:
    """``query.rerank`` as this index runs it: on or off, which reranker, and why it cannot run if it cannot (its
    first search makes it; keys never appear)."""
    settings = config.query.rerank
    out: dict[str, Any] = {'enabled': settings.enabled}
    if settings.enabled:
        out |= {'provider': settings.provider, 'model': settings.model, 'topN': settings.top_n}
        out['error'] = rerank.error if rerank is not None else None
    return out


def reset(freshness: Freshness) -> dict[str, int]:
    """``MemoryIndex.reset``: remove every indexed file and chunk, under the writer lock and this process's sync lock,
    and bring this process's keyword and vector indexes along (other processes rebuild theirs when they next look).
    The embedding cache stays, so indexing again re-embeds nothing; memory files and transcripts are not touched.
    Returns ``{filesRemoved, chunksRemoved}``."""
    store = freshness.store
    with freshness.writer.holding(True), freshness.sync_lock:
        removed = {'filesRemoved': len(store.files()), 'chunksRemoved': store.chunk_count()}
        store.clear()
        try:
            ensure_index_current(store, freshness.index)
        finally:
            freshness.index.release_writer()
        vectors = freshness.embeddings.vectors
        if vectors is not None:
            vectors.clear()
    return removed


def compact(freshness: Freshness, rerank: Rerank | None, cache_days: float) -> CompactReport:
    """``MemoryIndex.compact``: prune the embedding cache, merge the keyword index into one segment and vacuum the
    store, under the writer lock and this process's sync lock; ``disk`` before and after.

    Raises:
        InvalidInputError: ``cache_days`` is not a number >= 0.
    """
    if isinstance(cache_days, bool) or not isinstance(cache_days, int | float) or not cache_days >= 0:
        raise InvalidInputError(f'cache_days must be a number of days >= 0, got {preview(cache_days)}')
    started = time.perf_counter()
    store, config = freshness.store, freshness.config
    before = status(freshness, rerank)['disk']
    with freshness.writer.holding(True), freshness.sync_lock:
        pruned = store.prune_cache(time.time() - min(cache_days, 1e6) * 86_400)  # (10**400 days: all)
        if config.cache.max_entries is not None:
            pruned += store.evict_cache(config.cache.max_entries)
        segments = freshness.index.merge_segments()
        store.vacuum()
    return {
        'before': before,
        'after': status(freshness, rerank)['disk'],
        'cacheRowsPruned': pruned,
        'segmentsMerged': segments,
        'seconds': round(time.perf_counter() - started, 3),
    }
