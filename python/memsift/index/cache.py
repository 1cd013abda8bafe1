"""The embedding cache: chunk text (or media) already embedded by the same provider, model, dims, endpoint and
headers is never sent again, across syncs, re-indexes and processes (it lives in the store).

>>> import numpy as np, tempfile, pathlib
>>> from memsift.config import load_config
>>> from memsift.index.store import MemoryStore
>>> class Letters:  # a toy provider: one dimension per letter a-d
...     id, model, dims = 'toy', 'letters', 4
...     def embed_documents(self, texts):
...         return [[t.count(c) + 1.0 for c in 'abcd'] for t in texts]
>>> cache = EmbeddingCache(MemoryStore(':memory:'), load_config(None))
>>> _ = cache.embed(Letters(), 4, ['abc', 'bad']); _ = cache.embed(Letters(), 4, ['abc'])
>>> cache.hits, cache.misses
(1, 2)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memsift._text import sha256_hex
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider, embed_documents
from memsift.media import MediaInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift.index.protocol import Store

__all__ = ['EmbeddingCache']

_AUTH_HEADERS = ('authorization', 'x-goog-api-key', 'api-key')
_WARM_BATCH = 256


class EmbeddingCache:
    """Embeds through the store's cache table; counts hits and misses (reported by ``status``)."""

    def __init__(self, store: Store, config: MemoryConfig) -> None:
        self.store = store
        self.config = config
        self.hits = 0
        self.misses = 0

    def key(self, provider: EmbeddingProvider, dims: int) -> str:
        """What makes cached embeddings reusable: provider, model, dims, endpoint and non-auth headers (hashed)."""
        headers = sorted(
            (k.lower(), v) for k, v in self.config.remote.headers.items() if k.lower() not in _AUTH_HEADERS
        )
        identity = {
            'provider': provider.id,
            'model': provider.model,
            'dims': dims,
            'endpoint': getattr(getattr(provider, 'http', None), 'base_url', None),
            'headers': headers,
        }
        return sha256_hex(json.dumps(identity, sort_keys=True))

    def embed(
        self, provider: EmbeddingProvider, dims: int, texts: Sequence[str | MediaInput]
    ) -> npt.NDArray[np.float32]:
        """Embed chunk texts (or media), from the cache where it has them (``cache.enabled``)."""
        import numpy as np

        if not self.config.cache.enabled:
            return embed_documents(provider, texts)
        key = self.key(provider, dims)
        hashes = [t.sha256 if isinstance(t, MediaInput) else sha256_hex(t) for t in texts]
        cached = self.store.cached_vectors(key, hashes, dims)
        missing = sorted({h: i for i, h in reversed(list(enumerate(hashes))) if h not in cached}.values())
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = embed_documents(provider, [texts[i] for i in missing])
            self.store.cache_vectors(key, [(hashes[i], fresh[n]) for n, i in enumerate(missing)])
            cached.update((hashes[i], fresh[n]) for n, i in enumerate(missing))
        return np.stack([cached[h] for h in hashes]).astype(np.float32, copy=False)

    def warm(self, provider: EmbeddingProvider, dims: int) -> None:
        """Embed every stored chunk with ``provider`` into the cache (while the previous vectors keep serving); the
        re-index that follows then swaps the vectors in without waiting on the provider."""
        batch: list[str] = []
        for row in self.store.iter_chunks():
            batch.append(row.text)
            if len(batch) >= _WARM_BATCH:
                self.embed(provider, dims, batch)
                batch = []
        if batch:
            self.embed(provider, dims, batch)

    def evict(self) -> None:
        """Trim the cache to ``cache.maxEntries`` (least recently used first)."""
        if self.config.cache.enabled and self.config.cache.max_entries is not None:
            self.store.evict_cache(self.config.cache.max_entries)
