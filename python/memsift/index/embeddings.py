"""The embedding side of a memory index: the provider (after OpenClaw's resolution and fallback), the vectors it
made, the identity they were built with, and the previous provider's vectors while a switch is being re-embedded.

>>> from memsift.config import load_config
>>> from memsift.index.store import MemoryStore
>>> from memsift.providers import ProviderResolution
>>> embeddings = Embeddings(load_config(None), MemoryStore(':memory:'), ProviderResolution(None, 'none'))
>>> embeddings.ready()['model'], embeddings.searchable, embeddings.state
('fts-only', False, 'rebuild-pending')
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from memsift._core import VectorStore
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider
from memsift.errors import ProviderError
from memsift.index.identity import previous_vectors, wanted_identity
from memsift.index.store import MemoryStore
from memsift.index.sync import load_vectors
from memsift.providers import ProviderResolution, fall_back

__all__ = ['Embeddings']


class Embeddings:
    """Thread-safe: :meth:`ready` and :meth:`fall_back` are serialized; readers see whole swaps of ``vectors``."""

    def __init__(self, config: MemoryConfig, store: MemoryStore, resolution: ProviderResolution) -> None:
        self.config = config
        self.store = store
        self.resolution = resolution
        self.vectors: VectorStore | None = None
        self.generation = -1
        """The store generation ``vectors`` reflect (another process's writes move the store past it)."""
        self.serving: tuple[EmbeddingProvider, VectorStore] | None = None
        """The previous provider and its vectors while a provider or model switch is being re-embedded."""
        self.identity: dict[str, Any] | None = None
        """The identity an index built now would have (``None`` until :meth:`ready` succeeds)."""
        self.current = False
        """The store was built with :attr:`identity`: its vectors are this provider's."""
        self._lock = threading.Lock()

    @property
    def provider(self) -> EmbeddingProvider | None:
        """The provider embedding chunks and queries (``None``: keyword search only)."""
        return self.resolution.provider

    def ready(self) -> dict[str, Any]:
        """Set up what depends on the provider (its dims may need a probe request): the vector store, loaded from
        the store when the index identity matches, and the identity itself; returns the identity.

        Raises:
            ProviderError: the provider could not be resolved, or cannot tell its dimension.
        """
        with self._lock:
            if self.identity is not None:
                return self.identity
            if self.resolution.error is not None:
                raise ProviderError(self.resolution.error)
            provider, dims = self.provider, None
            if provider is not None:
                try:
                    dims = int(provider.dims)
                except ProviderError:
                    raise
                except Exception as exc:
                    raise ProviderError(
                        f'embedding provider {provider.id!r}: cannot tell its dimension: {type(exc).__name__}: {exc}'
                    ) from exc
                self.vectors = VectorStore(dims)
            identity = wanted_identity(self.config, provider, dims)
            self.current = self.store.identity == identity
            if self.vectors is not None and self.current:
                self.reload()
            self.serving = None if self.current else previous_vectors(self.store, self.config, identity)
            self.identity = identity
            return identity

    def fall_back(self, error: ProviderError) -> bool:
        """OpenClaw's runtime fallback: an explicit provider failing at request time hands over to ``fallback``,
        once; the identity changes with it, so the next sync re-embeds with the fallback. False: no fallback."""
        if self.resolution.fallback_from is not None:
            return False
        try:
            fallen_back = fall_back(self.config, self.resolution.requested, error)
        except ProviderError:
            return False
        if fallen_back is None:
            return False
        with self._lock:
            self.resolution = fallen_back
            self.vectors = None
            self.serving = None
            self.identity = None
            self.current = False
        return True

    def stale(self, generation: int) -> bool:
        """The vectors serve searches but reflect an older store generation (another process wrote since)."""
        return self.vectors is not None and self.current and self.generation != generation

    def reload(self) -> None:
        """Replace the vectors with the store's, built aside and swapped in: searches meanwhile use the old ones."""
        assert self.vectors is not None
        generation = self.store.generation  # read first: a write after it makes the vectors look stale, not current
        fresh = VectorStore(self.vectors.dims)
        load_vectors(self.store, fresh)
        self.vectors, self.generation = fresh, generation

    def switched(self) -> None:
        """A sync has re-embedded everything with this provider (and the store records its identity): its vectors
        serve from now on."""
        self.current = True
        self.serving = None

    @property
    def searchable(self) -> bool:
        """Whether the vector leg can run: this provider's vectors, or the previous ones during a switch."""
        return self.provider is not None and (self.current or self.serving is not None)

    def for_queries(self) -> tuple[EmbeddingProvider, VectorStore]:
        """The provider to embed the query with and the vectors to search: during a switch, the previous ones."""
        serving = self.serving
        provider, vectors = serving if serving is not None and not self.current else (self.provider, self.vectors)
        assert provider is not None and vectors is not None
        return provider, vectors

    @property
    def state(self) -> Literal['current', 'switching', 'rebuild-pending']:
        """``current``: built with this provider; ``switching``: the previous vectors serve until the re-index;
        ``rebuild-pending``: semantic search waits for a sync."""
        return 'current' if self.current else ('switching' if self.serving is not None else 'rebuild-pending')
