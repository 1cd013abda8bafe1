"""memsift: fast, CJK-aware long-term memory search for AI agents.

The heavy lifting (analyzer, BM25 on tantivy, SIMD vector scoring, fusion, MMR,
temporal decay, chunking) lives in the Rust extension ``memsift._core``; import
everything from here.

>>> import memsift
>>> [c.text for c in memsift.chunk_markdown("# Title\\nbody")]
['# Title\\nbody']

Importing the package is cheap: each public name loads its module on first use (PEP 562), so the command line
and keyword-only searches never pay for numpy or the HTTP providers they do not touch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memsift._core import (
        Analyzer,
        Bm25Index,
        Chunk,
        VectorStore,
        __version__,
        apply_temporal_decay,
        bm25_score_to_unit,
        chunk_markdown,
        decay_multiplier,
        estimate_chars,
        is_evergreen_path,
        jaccard,
        memory_date_from_path,
        mmr,
        normalize_weights,
        tokenize,
    )
    from memsift.config import MemoryConfig, load_config
    from memsift.embedding import EmbeddingProvider
    from memsift.errors import (
        ConfigError,
        ConfigWarning,
        InternalError,
        InvalidInputError,
        MemsiftError,
        ProviderError,
        RedactPatternError,
        SearchIndexError,
        SessionAccessError,
        SessionStoreError,
        SkippedFile,
        StoreError,
    )
    from memsift.index.memory_index import MemoryIndex
    from memsift.index.sync import SyncReport
    from memsift.search.results import MemoryHit, SearchResult
    from memsift.sessions import Caller, SessionStore
    from memsift.tools import MemoryTools, from_openclaw

__all__ = [
    'Analyzer',
    'Bm25Index',
    'Caller',
    'Chunk',
    'ConfigError',
    'ConfigWarning',
    'EmbeddingProvider',
    'InternalError',
    'InvalidInputError',
    'MemoryConfig',
    'MemoryHit',
    'MemoryIndex',
    'MemoryTools',
    'MemsiftError',
    'ProviderError',
    'RedactPatternError',
    'SearchIndexError',
    'SearchResult',
    'SessionAccessError',
    'SessionStore',
    'SessionStoreError',
    'SkippedFile',
    'StoreError',
    'SyncReport',
    'VectorStore',
    '__version__',
    'apply_temporal_decay',
    'bm25_score_to_unit',
    'chunk_markdown',
    'decay_multiplier',
    'estimate_chars',
    'from_openclaw',
    'is_evergreen_path',
    'jaccard',
    'load_config',
    'memory_date_from_path',
    'mmr',
    'normalize_weights',
    'tokenize',
]

_HOMES = {
    **dict.fromkeys(
        [
            'Analyzer',
            'Bm25Index',
            'Chunk',
            'VectorStore',
            '__version__',
            'apply_temporal_decay',
            'bm25_score_to_unit',
            'chunk_markdown',
            'decay_multiplier',
            'estimate_chars',
            'is_evergreen_path',
            'jaccard',
            'memory_date_from_path',
            'mmr',
            'normalize_weights',
            'tokenize',
        ],
        'memsift._core',
    ),
    'MemoryConfig': 'memsift.config',
    'load_config': 'memsift.config',
    'EmbeddingProvider': 'memsift.embedding',
    **dict.fromkeys(
        [
            'ConfigError',
            'ConfigWarning',
            'InternalError',
            'InvalidInputError',
            'MemsiftError',
            'ProviderError',
            'RedactPatternError',
            'SearchIndexError',
            'SessionAccessError',
            'SessionStoreError',
            'SkippedFile',
            'StoreError',
        ],
        'memsift.errors',
    ),
    'MemoryIndex': 'memsift.index.memory_index',
    'SyncReport': 'memsift.index.sync',
    'MemoryHit': 'memsift.search.results',
    'SearchResult': 'memsift.search.results',
    'Caller': 'memsift.sessions',
    'SessionStore': 'memsift.sessions',
    'MemoryTools': 'memsift.tools',
    'from_openclaw': 'memsift.tools',
}
"""Public name -> the module that defines it, imported on first access."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
