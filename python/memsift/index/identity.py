"""What an index was built with (its identity), and what a change of it means.

The identity records the provider, model, dims, chunking, analyzer, sources, extra paths, media settings and, with
session memory, the redaction revision transcripts were indexed with. A sync that finds it changed re-chunks and
re-embeds everything. When only the provider or model changed, the vectors already stored keep serving (embedding
queries with the previous provider) until the re-embedding is done.

>>> from memsift.config import load_config
>>> wanted_identity(load_config(None), None, None)['model']
'fts-only'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memsift._core import VectorStore
from memsift._record import replace
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider
from memsift.index.sync import load_vectors
from memsift.index.workspace import extra_paths
from memsift.media import EXTENSIONS as MEDIA_EXTENSIONS
from memsift.providers import create_provider
from memsift.redact import REVISION as REDACTION_REVISION

if TYPE_CHECKING:
    from memsift.index.protocol import Store

__all__ = ['TOKENIZER', 'media_suffixes', 'previous_vectors', 'wanted_identity']

TOKENIZER = 'memsift-analyzer-v1+stem'
"""Recorded in the index identity: a different analyzer would make the BM25 index meaningless."""

_PROVIDER_KEYS = ('provider', 'model', 'dims')


def media_suffixes(config: MemoryConfig, provider: EmbeddingProvider | None) -> tuple[str, ...]:
    """File suffixes indexed as images/audio: only with multimodal on (and a provider: never in FTS-only)."""
    multimodal = config.multimodal
    if not multimodal.enabled or provider is None:
        return ()
    return tuple(suffix for kind in multimodal.modalities for suffix in MEDIA_EXTENSIONS.get(kind, ()))


def wanted_identity(config: MemoryConfig, provider: EmbeddingProvider | None, dims: int | None) -> dict[str, Any]:
    """The identity an index built now with ``provider`` (of ``dims`` dimensions) would have."""
    media = media_suffixes(config, provider)
    identity = {
        'provider': provider.id if provider is not None else 'none',
        'model': provider.model if provider is not None else 'fts-only',
        'dims': dims,
        'chunkTokens': config.chunking.tokens,
        'chunkOverlap': config.chunking.overlap,
        'tokenizer': TOKENIZER,
        'sources': sorted(config.sources),
        'extraPaths': sorted({os.path.normpath(p) for p in extra_paths(config)}),
        'media': [*media, config.multimodal.max_file_bytes] if media else None,
    }
    if config.profile.per_entry_files:  # OpenClaw 2.x's chunks: one per entry, annotations left out
        identity['chunker'] = config.profile.name
    if 'sessions' in config.sources:
        # Transcripts are indexed in the redaction's searchable form: a new revision indexes them again (only with
        # session memory on, so other indexes keep the identity they were built with).
        identity['sessionRedaction'] = REDACTION_REVISION
    return identity


def previous_vectors(
    store: Store, config: MemoryConfig, identity: dict[str, Any]
) -> tuple[EmbeddingProvider, VectorStore] | None:
    """The previous provider and its stored vectors, to keep serving while a provider or model switch is being
    re-embedded (OpenClaw pauses semantic search instead). ``None`` when more than the provider changed, or the
    previous provider cannot be rebuilt from this config."""
    stored = store.identity
    if not stored or stored.get('provider') in (None, 'none') or not stored.get('dims'):
        return None
    if any(stored.get(k) != v for k, v in identity.items() if k not in _PROVIDER_KEYS):
        return None  # chunking, sources or extra paths changed too: the stored vectors describe other chunks
    try:
        previous = create_provider(
            stored['provider'],
            replace(config, model=stored['model'], output_dimensionality=stored['dims']),
        )
        if int(previous.dims) != stored['dims']:
            return None
    except Exception:  # no key for it any more, an unknown id...: semantic search pauses as in OpenClaw
        return None
    vectors = VectorStore(stored['dims'])
    load_vectors(store, vectors)
    return previous, vectors
