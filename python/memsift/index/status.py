"""The parts of ``MemoryIndex.status()`` (OpenClaw's ``memory status --json`` plus memsift's own fields), each from
the objects that own the facts.

>>> from memsift._core import Bm25Index
>>> fts_status(Bm25Index())['docs']
0
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._core import Bm25Index, VectorStore
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider, embed_query
from memsift.index.cache import EmbeddingCache
from memsift.index.identity import TOKENIZER

if TYPE_CHECKING:
    from memsift.index.protocol import Store

__all__ = ['batch_status', 'cache_status', 'deep_issues', 'disk_status', 'fts_status', 'vector_status']


def fts_status(bm25: Bm25Index) -> dict[str, Any]:
    """The keyword index: always on; its document count and the store generation it reflects."""
    return {
        'enabled': True,
        'available': True,
        'error': None,
        'tokenizer': TOKENIZER,
        'docs': bm25.num_docs,
        'generation': bm25.generation,
    }


def vector_status(provider: EmbeddingProvider | None, vectors: VectorStore | None, available: bool) -> dict[str, Any]:
    """The vector leg: whether a provider is set, whether its vectors serve, their count, whether ANN is on and
    whether the scan ranks with 4-bit codes first (and 1-bit codes before them)."""
    return {
        'enabled': provider is not None,
        'available': available,
        'dims': vectors.dims if vectors is not None else None,
        'vectors': len(vectors) if vectors is not None else 0,
        'ann': bool(vectors is not None and vectors.ann_active),
        'fourBit': bool(vectors is not None and vectors.u4_active),
        'oneBit': bool(vectors is not None and vectors.one_bit_active),
    }


def cache_status(config: MemoryConfig, cache: EmbeddingCache) -> dict[str, Any]:
    """The embedding cache: size, bound, and this process's hits and misses."""
    return {
        'enabled': config.cache.enabled,
        'entries': cache.store.cache_size(),
        'maxEntries': config.cache.max_entries,
        'hits': cache.hits,
        'misses': cache.misses,
    }


def _bytes(path: Path) -> int:
    """A file's size, or a folder's files added up; 0 for what does not exist (or vanished while counted)."""
    try:
        if path.is_file():
            return path.stat().st_size
        total = 0
        for root, _, names in os.walk(path):
            for name in names:
                with contextlib.suppress(OSError):  # removed while counted (a merge, a sync)
                    total += (Path(root) / name).stat().st_size
        return total
    except OSError:
        return 0


def disk_status(store: Store, keyword_index: str | None, vector_file: Path | None) -> dict[str, Any]:
    """Bytes on disk: the SQLite store (with its write-ahead log), the keyword index folder, the saved vector file,
    and within the store the embedding cache (``None`` where SQLite cannot tell, or for an in-memory store)."""
    if store.path == ':memory:':
        return {'store': 0, 'keywordIndex': 0, 'vectors': 0, 'embeddingCache': None, 'total': 0}
    db = Path(store.path).expanduser()
    sizes = {
        'store': sum(_bytes(db.with_name(db.name + suffix)) for suffix in ('', '-wal', '-shm')),
        'keywordIndex': _bytes(Path(keyword_index)) if keyword_index else 0,
        'vectors': _bytes(vector_file) if vector_file is not None else 0,
    }
    tables = store.table_bytes()
    return {**sizes, 'embeddingCache': None if tables is None else tables.get('embedding_cache', 0),
            'total': sum(sizes.values())}  # fmt: skip


def batch_status(config: MemoryConfig, provider: EmbeddingProvider | None) -> dict[str, Any]:
    """Batch embedding (OpenAI/Gemini batch APIs): settings, failures so far and the last error."""
    batch = config.remote.batch
    return {
        'enabled': batch.enabled,
        'failures': getattr(provider, 'batch_failures', 0),
        'lastError': getattr(provider, 'batch_error', None),
        'wait': batch.wait,
        'concurrency': batch.concurrency,
        'pollIntervalMs': batch.poll_interval_ms,
        'timeoutMs': batch.timeout_minutes * 60_000,
    }


def deep_issues(
    store: Store,
    bm25: Bm25Index,
    provider: EmbeddingProvider | None,
    vectors_current: bool,
    vector: dict[str, Any],
) -> list[str]:
    """``status --deep``: the BM25 index holds every stored chunk, the provider answers a probe (its outcome goes
    into ``vector['probe']``), and every chunk has a vector. Returns what is wrong, with the fix."""
    issues = []
    chunks = store.chunk_count()
    if bm25.num_docs != chunks:
        issues.append(f'BM25 index holds {bm25.num_docs} chunks, the store {chunks}: run sync')
    if provider is not None:
        try:
            embed_query(provider, 'memsift status probe')
            vector['probe'] = 'ok'
        except Exception as exc:
            vector['probe'] = f'failed: {exc}'
            issues.append('the embedding provider did not answer the probe')
        stored = store.vector_count()
        if vectors_current and stored != chunks:
            issues.append(f'{chunks - stored} chunks have no vector: run sync --force')
    return issues
