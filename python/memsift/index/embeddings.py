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

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memsift._core import VectorStore
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider
from memsift.errors import MemsiftError, ProviderError
from memsift.index.identity import previous_vectors, wanted_identity
from memsift.index.sync import load_vectors
from memsift.providers import ProviderResolution, fall_back

if TYPE_CHECKING:
    from memsift.index.protocol import Store
    from memsift.index.records import Changes

__all__ = ['Embeddings', 'catch_up']

I8_FROM = 20_000
"""From this many vectors they are kept as i8 (a quarter of f32's memory; 1M x 384 dims: 0.4 GB instead of 1.5 GB)
and every search is an exact i8 scan: ~1 ms at 100k and ~11 ms at 1M on 2 cores, recall 1.0, whatever the data.
Measured on ``benches/million.py``'s vectors, the HNSW graph (800 candidates, rescored) took 3.4 ms at 100k for
recall@10 0.92 and fell to 0.63 at 1M. Scores carry i8's rounding (about 0.5 %); below it they are exact f32."""
U4_FROM = 100_000
"""From this many vectors the i8 store also keeps 4-bit codes of them (+0.2 GB at 1M x 384) and its scan ranks every
row by them first, reading half the bytes, then scores the best 1,000 (and any row the codes clamp) exactly: the
vector leg at 1M takes 4.5 ms instead of 8-12, at 100k 0.8 instead of 1.0. The scan waits on memory there, so
reading less is the way to a faster one. Recall@10 and @200 against the exact scan were 1.0 on
``benches/million.py``'s vectors (1M) and on 62k all-MiniLM-L6-v2 vectors of SciFact and Cranfield sentences (1,334
queries); those gave 0.9994 with 20 rows rescored instead of 1,000."""
ANN_THRESHOLD = I8_FROM
"""From this many vectors (and below ``I8_FROM``) searches go through the HNSW graph: equal to ``I8_FROM``, the
memory index builds none. A lower value turns the graph on between the two."""
SAVE_FROM = 20_000
"""From this many vectors they are saved beside the store (``<store>.vectors``): loading 1M takes 0.5 s, reading
them from the store ~25 s. Fewer read fast enough."""
SAVE_AFTER_CHANGED = 0.02
"""The vector file is rewritten once this share of the vectors changed since it was saved (and at close): a
process opening the index loads it and applies the few changes since from the store."""


def new_vectors(dims: int) -> VectorStore:
    """An empty vector store with the memory index's settings."""
    return VectorStore(dims, ann_threshold=ANN_THRESHOLD, i8_from=I8_FROM, u4_from=U4_FROM)


def catch_up(store: Store, vectors: VectorStore) -> int:
    """Bring ``vectors`` (loaded from an older vector file) to what ``store`` holds: remove the chunks it no longer
    has, add the ones it gained. Chunk ids are never reused, so ids alone tell what changed. Returns how many."""
    import numpy as np

    stored, have = store.vector_ids(vectors.dims), vectors.ids()
    gone = np.setdiff1d(have, stored, assume_unique=True)
    new = np.setdiff1d(stored, have, assume_unique=True)
    vectors.remove(gone)
    for ids, matrix in store.vectors_of(new.tolist(), vectors.dims):
        vectors.add(ids, matrix)
    return len(gone) + len(new)


def apply_changes(vectors: VectorStore, changes: Changes) -> int:
    """Apply a store's :class:`~memsift.index.records.Changes` to ``vectors``; returns how many vectors changed."""
    import numpy as np

    vectors.remove(np.asarray(changes.removed, dtype=np.uint64))
    if changes.vectors:
        ids = np.fromiter(changes.vectors, dtype=np.uint64, count=len(changes.vectors))
        matrix = np.frombuffer(b''.join(changes.vectors.values()), dtype=np.float32).reshape(len(ids), vectors.dims)
        vectors.add(ids, matrix)
    return len(changes.removed) + len(changes.vectors)


class Embeddings:
    """Thread-safe: :meth:`ready` and :meth:`fall_back` are serialized; readers see whole swaps of ``vectors``."""

    def __init__(self, config: MemoryConfig, store: Store, resolution: ProviderResolution) -> None:
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
        self.unsaved = 0
        """Vectors added or removed since the saved vector file was written."""
        self._lock = threading.Lock()
        self._catching_up = threading.Lock()

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
                self.vectors = new_vectors(dims)
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

    def adopt(self) -> None:
        """Serve the store's vectors once another process has re-embedded the index with this provider (the store's
        identity became this one's), instead of re-embedding it again here."""
        with self._lock:
            if self.current or self.identity is None or self.vectors is None or self.store.identity != self.identity:
                return
            self.current, self.serving, self.generation = True, None, -1
        self.reload()

    def stale(self, generation: int) -> bool:
        """The vectors serve searches but reflect an older store generation (another process wrote since)."""
        return self.vectors is not None and self.current and self.generation != generation

    def reload(self) -> None:
        """Replace the vectors with the store's, built aside and swapped in: searches meanwhile use the old ones.

        Vectors that reflect a generation the store's change log still covers take just the changes other
        processes made since (ids removed, chunks added: O(changes), the HNSW graph updated in place). Otherwise
        starts from the saved vector file (``<store>.vectors``, with its HNSW graph) when there is one, and applies
        what the store changed since; else reads every vector from the store (and builds the graph).
        """
        assert self.vectors is not None
        if self.generation >= 0:
            if not self._catching_up.acquire(blocking=False):
                return  # another thread is applying the same changes
            try:
                if self._apply_changes():
                    return
            finally:
                self._catching_up.release()
        generation = self.store.generation  # read first: a write after it makes the vectors look stale, not current
        dims = self.vectors.dims
        fresh, saved = self._load_saved(dims)
        if fresh is None:
            fresh = new_vectors(dims)
            load_vectors(self.store, fresh)
            self.unsaved = len(fresh)
        elif saved != generation:
            # The file is older than the store (a snapshot, or a process killed before saving): the change log
            # says what to apply; else every id is compared with the store's.
            changes = self.store.changes_since(saved, text=False, dims=dims) if saved >= 0 else None
            if changes is not None:
                self.unsaved, generation = apply_changes(fresh, changes), changes.generation
            else:
                self.unsaved = catch_up(self.store, fresh)
        else:
            self.unsaved = 0
        self.vectors, self.generation = fresh, generation
        self.save_if_due()

    def _apply_changes(self) -> bool:
        """Apply to the vectors in memory what the store changed since their generation; False when the store no
        longer knows (the caller reloads them all)."""

        vectors = self.vectors
        assert vectors is not None
        changes = self.store.changes_since(self.generation, text=False, dims=vectors.dims)
        if changes is None:
            return False
        self.unsaved += apply_changes(vectors, changes)
        self.generation = changes.generation
        return True

    def saved_path(self) -> Path | None:
        """Where the vectors are saved beside the store (``<store>.vectors``); ``None`` for an in-memory store."""
        return None if self.store.path == ':memory:' else Path(self.store.path).with_suffix('.vectors')

    def _load_saved(self, dims: int) -> tuple[VectorStore | None, int]:
        """The saved vectors and the generation they reflect, or ``(None, -1)`` when there are none for ``dims``
        (a missing, torn or foreign file is ignored: it is rebuilt from the store)."""
        path = self.saved_path()
        if path is None or not path.is_file():
            return None, -1
        try:
            vectors, tag = VectorStore.load(path, ann_threshold=ANN_THRESHOLD, i8_from=I8_FROM, u4_from=U4_FROM)
        except MemsiftError:
            return None, -1
        if vectors.dims != dims or vectors.metric != 'cosine':
            return None, -1
        return vectors, tag

    def save_if_due(self, *, closing: bool = False) -> None:
        """Save the vectors, with their HNSW graph when it is active, once enough changed since the last save, or at
        all when ``closing``, so the next process loads them instead of reading every vector from the store and
        building the graph (see ``SAVE_FROM``). Best effort: the file is derived data."""
        vectors, path = self.vectors, self.saved_path()
        if vectors is None or path is None or len(vectors) < SAVE_FROM or not self.current or self.unsaved == 0:
            return
        if closing or self.unsaved >= max(1, SAVE_AFTER_CHANGED * len(vectors)):
            with contextlib.suppress(MemsiftError):
                vectors.save(path, tag=self.generation)
                self.unsaved = 0

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
