"""What the rest of memsift may ask of a memory store, whichever backend holds it: :class:`Store`.

Two classes implement it, over one shared logic (:class:`memsift.index.storebase.StoreBase`):
:class:`memsift.index.store.MemoryStore` (a SQLite file on this host) and
:class:`memsift.index.pgstore.PgMemoryStore` (one agent's rows of a PostgreSQL database many hosts share). Code that
must behave differently on the two asks a capability (:attr:`Store.catches_up`, :meth:`Store.database_lock`), never
the class.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from memsift.index.records import Changes, ChunkHead, ChunkRow, FileRecord, FileWrite

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift._postgres import AdvisoryLock
    from memsift.results import ReplicaState

__all__ = ['Store']


@runtime_checkable
class Store(Protocol):
    """One agent's memory store: indexed files, their chunks and embeddings, the embedding cache, the generation.

    Every write that changes what a search can find is one transaction that also moves :attr:`generation`; derived
    indexes (the BM25 folder, the vectors in memory) record the generation they reflect.
    """

    path: str
    """Where this host keeps the derived indexes: the BM25 folder and the vector file are named after it (on SQLite
    it is also the database file, or ``':memory:'``)."""
    location: str
    """Where the store is, as status shows it (a DSN without its password on PostgreSQL)."""
    schema: str
    """The store's kind and schema version (``"sqlite 3"``), as snapshots of its derived indexes record them."""
    catches_up: bool
    """Capability: other hosts write this store. A process brings its keyword index to a newer generation by
    applying :meth:`changes_since` (a rebuild only when that answers ``None``), and a search that finds a chunk gone
    applies those changes rather than reloading the index. False: only processes of this host write the store and
    they share its keyword index folder (one behind is reloaded, or rebuilt by a sync). Either way each process's
    vectors in memory take the changes from :meth:`changes_since`."""

    @property
    def generation(self) -> int:
        """Count of committed writes; derived indexes record the generation they reflect."""
        ...

    @property
    def identity(self) -> dict | None:
        """What the index was built with (provider, model, dims, chunking, tokenizer, sources, extra paths)."""
        ...

    def database_lock(self) -> AdvisoryLock | None:
        """Capability: the writer lock a sync of this store also takes in its database, so that syncs on other hosts
        wait; ``None`` where this host's lock file beside :attr:`path` is enough."""
        ...

    def read_replicas(self) -> ReplicaState | None:
        """Capability: where this store's reads go when read replicas serve them (``status()['replica']``: each
        replica, its lag, and a warning when reads left a replica or the primary); ``None`` without replicas."""
        ...

    # ------------------------------------------------------------------ writes (each one generation)

    def set_identity(self, identity: dict) -> None: ...

    def replace_files(self, writes: Sequence[FileWrite]) -> list[list[int]]:
        """Record each file with its chunks (and one embedding row per chunk, or none), replacing any earlier
        version, in one transaction; returns each file's new chunk ids, in order. (The backends' ``replace_file``
        is this for one file.)"""
        ...

    def delete_file(self, path: str) -> list[int]:
        """Forget ``path``; returns the ids of the chunks removed with it."""
        ...

    def record_skipped(self, path: str, reason: str) -> None:
        """Remember why ``path`` is not indexed; any indexed version is removed."""
        ...

    def clear(self) -> None:
        """Remove every file and chunk; the identity and generation stay."""
        ...

    def touch_files(self, stamps: Sequence[tuple[str, float, int]], read_at: float) -> None:
        """New ``(path, mtime, size)`` stats, read at ``read_at``, for files whose content is unchanged (one
        transaction, not a generation change)."""
        ...

    # ------------------------------------------------------------------ catching up

    def changes_since(self, generation: int, *, text: bool = True, dims: int | None = None) -> Changes | None:
        """What changed after ``generation``, in one snapshot: chunks added (each write stamps its chunks with its
        generation) and ids removed (each write logs them); ``None`` when the log cannot tell (before a clear, an
        upgrade or the log's horizon), so the caller rebuilds from :meth:`iter_chunks`."""
        ...

    def paths_since(self, generation: int) -> tuple[int, list[str], list[str]] | None:
        """The files writes after ``generation`` touched, in one snapshot: ``(generation now, paths indexed now,
        paths gone)``; ``None`` when the log does not reach back that far."""
        ...

    def prune_removed(self, keep_s: float = ...) -> int:
        """Drop change-log entries older than ``keep_s`` seconds (readers further behind rebuild); returns how many
        (0 on a store that keeps no log)."""
        ...

    # ------------------------------------------------------------------ reads

    def files(self) -> dict[str, FileRecord]: ...

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        ...

    def files_of(self, paths: Collection[str]) -> dict[str, FileRecord]:
        """The records of those of ``paths`` that are indexed."""
        ...

    def file(self, path: str) -> FileRecord | None:
        """One indexed file's record, or ``None`` (also for a path that is not valid UTF-8)."""
        ...

    def file_mtimes(self, paths: Collection[str]) -> dict[str, float]: ...

    def file_stamps(self) -> dict[str, tuple[float, int, float]]:
        """``path -> (mtime, size, indexed_at)`` of every indexed file."""
        ...

    def file_stamp_rows(self, paths: Collection[str] | None = None) -> list[tuple[str, float, int, float]]:
        """:meth:`file_stamps` as ``(path, mtime, size, indexed_at)`` rows (of ``paths``, those indexed)."""
        ...

    def skipped(self) -> dict[str, str]: ...

    def file_count(self) -> int:
        """How many files are indexed."""
        ...

    def chunk_count(self) -> int: ...

    def source_counts(self) -> list[tuple[str, int, int]]:
        """``(source, files, chunks)`` per source."""
        ...

    def vector_count(self) -> int: ...

    def chunk_ids(self, path: str) -> list[int]: ...

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]: ...

    def chunks(self, ids: Sequence[int]) -> list[ChunkRow]:
        """Chunks by id, in the order of ``ids`` (unknown ids are left out)."""
        ...

    def chunk_heads(self, ids: Collection[int]) -> dict[int, ChunkHead]: ...

    def chunk_texts(self, ids: Collection[int]) -> dict[int, str]: ...

    def iter_chunks(self, batch: int = 1000) -> Iterator[ChunkRow]: ...

    def iter_vectors(
        self, dims: int, batch: int = 4096
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]: ...

    def vector_ids(self, dims: int) -> npt.NDArray[np.uint64]: ...

    def vectors_of(
        self, ids: Sequence[int], dims: int, batch: int | None = None
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]: ...

    # ------------------------------------------------------------------ embedding cache (no generation change)

    def cached_vectors(
        self, provider_key: str, hashes: Sequence[str], dims: int
    ) -> dict[str, npt.NDArray[np.float32]]: ...

    def cache_vectors(self, provider_key: str, items: Sequence[tuple[str, npt.NDArray[np.float32]]]) -> None: ...

    def cache_rows(self) -> list[tuple[str, str, bytes]]: ...

    def cache_size(self) -> int: ...

    def evict_cache(self, max_entries: int) -> int: ...

    def prune_cache(self, written_before: float) -> int: ...

    # ------------------------------------------------------------------ upkeep

    def vacuum(self) -> None: ...

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes per table of this store, or ``None`` where the backend cannot tell."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...
