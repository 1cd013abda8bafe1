"""What both memory stores do alike, written once: each statement as a :class:`~memsift._sql.Sql` pair (the SQLite
file's tables, and the ``memory_`` tables of a PostgreSQL database, scoped to the store's agent by ``:agent``) next
to the one logic that runs it. A backend (:mod:`memsift.index.store`, :mod:`memsift.index.pgstore`) supplies its
connection, its transactions and what only it does (new chunk ids, how chunks go in, the change log).

List parameters are JSON arrays in SQLite (read with ``json_each``) and arrays in PostgreSQL, as in the session
store (:mod:`memsift.sessions.database`).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memsift._sql import Sql
from memsift.index.records import Changes, ChunkHead, ChunkRow, FileRecord, FileWrite

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from typing_extensions import Self

    from memsift._postgres import AdvisoryLock
    from memsift.results import ReplicaState

__all__ = ['UNVERSIONED_READS', 'ChunkInsert', 'StoreBase']

T = TypeVar('T')

ChunkInsert = tuple[int, str, str, int, int, str, str, 'bytes | None', 'int | None']
"""``(id, path, source, start_line, end_line, hash, text, vector, importance)`` of a chunk to write."""
"""A chunk as a backend stores it: ``(id, path, source, start_line, end_line, hash, text, float32 bytes or None)``."""

_FILE_COLUMNS = 'path, source, hash, mtime, size, indexed_at'
_CHUNK_COLUMNS = 'id, path, source, start_line, end_line, hash, text'


def _encodable(path: str) -> bool:
    """Whether ``path`` is valid UTF-8 text (one with a lone surrogate, from a file name that is not, is not)."""
    try:
        path.encode()
    except UnicodeEncodeError:
        return False
    return True


def _in(column: str, name: str) -> Sql:
    """``column`` is one of the list parameter ``name``."""
    return Sql(f'{column} IN (SELECT value FROM json_each(:{name}))', f'{column} = ANY(:{name})')


def _scoped(sqlite: str, postgres: str, where: Sql | None = None) -> Sql:
    """A statement on this store's rows: ``{where}`` in each text becomes its filter, ``where`` in SQLite (nothing
    when ``None``), and in PostgreSQL the store's agent and ``where``."""
    return Sql(
        sqlite.replace('{where}', '' if where is None else f'WHERE {where.sqlite}'),
        postgres.replace('{where}', 'WHERE agent = :agent' + ('' if where is None else f' AND {where.postgres}')),
    )


_PATH = Sql('path = :path', 'path = :path')
_PATHS_IN = _in('path', 'paths')
_IDS_IN = _in('id', 'ids')

# ---------------------------------------------------------------------- meta
_IDENTITY = Sql(
    "SELECT value FROM meta WHERE key = 'identity'", 'SELECT identity FROM memory_agents WHERE agent = :agent'
)
_SET_IDENTITY = Sql(
    "INSERT INTO meta(key, value) VALUES ('identity', :identity) ON CONFLICT(key) DO UPDATE SET value = :identity",
    'UPDATE memory_agents SET identity = :identity WHERE agent = :agent',
)
# ---------------------------------------------------------------------- writes
_DELETE_CHUNKS = _scoped('DELETE FROM chunks {where}', 'DELETE FROM memory_chunks {where}', _PATHS_IN)
_DELETE_SKIPPED = _scoped('DELETE FROM skipped {where}', 'DELETE FROM memory_skipped {where}', _PATHS_IN)
_DELETE_FILES = _scoped('DELETE FROM files {where}', 'DELETE FROM memory_files {where}', _PATHS_IN)
_DELETE_ALL = [_scoped(f'DELETE FROM {t}', f'DELETE FROM memory_{t} {{where}}') for t in ('chunks', 'files', 'skipped')]
_UPSERT_FILE = Sql(
    f'INSERT INTO files({_FILE_COLUMNS}) VALUES (:path, :source, :hash, :mtime, :size, :now) '
    'ON CONFLICT(path) DO UPDATE SET source = excluded.source, hash = excluded.hash, mtime = excluded.mtime, '
    'size = excluded.size, indexed_at = excluded.indexed_at',
    f'INSERT INTO memory_files (agent, {_FILE_COLUMNS}) VALUES (:agent, :path, :source, :hash, :mtime, :size, :now) '
    'ON CONFLICT (agent, path) DO UPDATE SET source = excluded.source, hash = excluded.hash, mtime = excluded.mtime, '
    'size = excluded.size, indexed_at = excluded.indexed_at',
)
_UPSERT_SKIPPED = Sql(
    'INSERT INTO skipped(path, reason) VALUES (:path, :reason) ON CONFLICT(path) DO UPDATE SET reason = :reason',
    'INSERT INTO memory_skipped (agent, path, reason) VALUES (:agent, :path, :reason) '
    'ON CONFLICT (agent, path) DO UPDATE SET reason = excluded.reason',
)
_TOUCH = _scoped(
    'UPDATE files SET mtime = :mtime, size = :size, indexed_at = :now {where}',
    'UPDATE memory_files SET mtime = :mtime, size = :size, indexed_at = :now {where}',
    _PATH,
)
# ---------------------------------------------------------------------- reads
_FILES = _scoped(
    f'SELECT {_FILE_COLUMNS} FROM files ORDER BY path',
    f'SELECT {_FILE_COLUMNS} FROM memory_files {{where}} ORDER BY path',
)
_FILE = _scoped(
    f'SELECT {_FILE_COLUMNS} FROM files {{where}}', f'SELECT {_FILE_COLUMNS} FROM memory_files {{where}}', _PATH
)
_FILES_OF = _scoped(
    f'SELECT {_FILE_COLUMNS} FROM files {{where}}', f'SELECT {_FILE_COLUMNS} FROM memory_files {{where}}', _PATHS_IN
)
_PATHS = _scoped('SELECT path FROM files ORDER BY path', 'SELECT path FROM memory_files {where} ORDER BY path')
_PATHS_OF = _scoped('SELECT path FROM files {where}', 'SELECT path FROM memory_files {where}', _PATHS_IN)
_MTIMES = _scoped('SELECT path, mtime FROM files {where}', 'SELECT path, mtime FROM memory_files {where}', _PATHS_IN)
_STAMPS = _scoped(
    'SELECT path, mtime, size, indexed_at FROM files', 'SELECT path, mtime, size, indexed_at FROM memory_files {where}'
)
_FILE_COUNT = _scoped('SELECT count(*) FROM files', 'SELECT count(*) FROM memory_files {where}')
_STAMPS_OF = _scoped(
    'SELECT path, mtime, size, indexed_at FROM files {where}',
    'SELECT path, mtime, size, indexed_at FROM memory_files {where}',
    _PATHS_IN,
)
_SKIPPED = _scoped(
    'SELECT path, reason FROM skipped ORDER BY path', 'SELECT path, reason FROM memory_skipped {where} ORDER BY path'
)
_CHUNK_COUNT = _scoped('SELECT COUNT(*) FROM chunks', 'SELECT COUNT(*) FROM memory_chunks {where}')
_SOURCE_COUNTS = Sql(
    'SELECT f.source, COUNT(DISTINCT f.path), COUNT(c.id) FROM files f '
    'LEFT JOIN chunks c ON c.path = f.path GROUP BY f.source ORDER BY f.source',
    'SELECT f.source, COUNT(DISTINCT f.path), COUNT(c.id) FROM memory_files f LEFT JOIN memory_chunks c '
    'ON c.agent = f.agent AND c.path = f.path WHERE f.agent = :agent GROUP BY f.source ORDER BY f.source',
)
_CHUNK_IDS = _scoped(
    'SELECT id FROM chunks {where} ORDER BY id', 'SELECT id FROM memory_chunks {where} ORDER BY id', _PATH
)
_FIRST_CHUNKS = _scoped(
    'SELECT path, MIN(id) FROM chunks {where} GROUP BY path',
    'SELECT path, MIN(id) FROM memory_chunks {where} GROUP BY path',
    _PATHS_IN,
)
_CHUNKS = _scoped(
    f'SELECT {_CHUNK_COLUMNS} FROM chunks {{where}}', f'SELECT {_CHUNK_COLUMNS} FROM memory_chunks {{where}}', _IDS_IN
)
_HEADS = _scoped(
    'SELECT id, path, source, start_line, end_line, length(text), importance FROM chunks {where}',
    'SELECT id, path, source, start_line, end_line, char_length(text), importance FROM memory_chunks {where}',
    _IDS_IN,
)
_TEXTS = _scoped('SELECT id, text FROM chunks {where}', 'SELECT id, text FROM memory_chunks {where}', _IDS_IN)
_CHUNKS_AFTER = _scoped(
    f'SELECT {_CHUNK_COLUMNS} FROM chunks {{where}} ORDER BY id LIMIT :batch',
    f'SELECT {_CHUNK_COLUMNS} FROM memory_chunks {{where}} ORDER BY id LIMIT :batch',
    Sql('id > :last', 'id > :last'),
)
# ---------------------------------------------------------------------- vectors (``width``: dims * 4 bytes)
# SQLite keeps them in their own table, PostgreSQL in a column of the chunk (NULL: none).
_VECTOR_COUNT = _scoped('SELECT COUNT(*) FROM embeddings', 'SELECT COUNT(vector) FROM memory_chunks {where}')
_WIDTH = Sql('length(vector) = :width', 'octet_length(vector) = :width')
_VECTORS_AFTER = _scoped(
    'SELECT chunk_id, vector FROM embeddings {where} ORDER BY chunk_id LIMIT :batch',
    'SELECT id, vector FROM memory_chunks {where} ORDER BY id LIMIT :batch',
    Sql('chunk_id > :last AND length(vector) = :width', 'id > :last AND octet_length(vector) = :width'),
)
_VECTOR_IDS = _scoped(
    'SELECT chunk_id FROM embeddings {where} ORDER BY chunk_id',
    'SELECT id FROM memory_chunks {where} ORDER BY id',
    _WIDTH,
)
_VECTORS_OF = _scoped(
    'SELECT chunk_id, vector FROM embeddings {where}',
    'SELECT id, vector FROM memory_chunks {where}',
    Sql(
        'chunk_id IN (SELECT value FROM json_each(:ids)) AND length(vector) = :width',
        'id = ANY(:ids) AND octet_length(vector) = :width',
    ),
)
# ---------------------------------------------------------------------- change log
# A write stamps the chunks it adds with its generation and logs the ids it removes; ``horizon``: changes up to it
# are no longer logged (a clear, a pruned log, an upgraded SQLite file), so catching up from before it rebuilds.
_LOG_BOUNDS = Sql(
    "SELECT (SELECT value FROM meta WHERE key = 'generation'), (SELECT value FROM meta WHERE key = 'horizon')",
    'SELECT generation, horizon FROM memory_agents WHERE agent = :agent',
)
_SINCE = Sql('generation > :generation', 'generation > :generation')
_REMOVED_SINCE = _scoped('SELECT chunk_id FROM removed {where}', 'SELECT chunk_id FROM memory_removed {where}', _SINCE)
_LOG_REMOVED = _scoped(
    'INSERT INTO removed (generation, chunk_id, path, removed_at) SELECT :generation, id, path, :now FROM chunks '
    '{where} RETURNING chunk_id',
    'INSERT INTO memory_removed (agent, generation, chunk_id, path, removed_at) '
    'SELECT agent, :generation, id, path, :now FROM memory_chunks {where} RETURNING chunk_id',
    _PATHS_IN,
)
# The paths whose chunks a write since ``:generation`` added or removed (NULL: removed before paths were logged).
_TOUCHED_SINCE = Sql(
    'SELECT path FROM removed WHERE generation > :generation '
    'UNION SELECT path FROM chunks WHERE generation > :generation',
    'SELECT path FROM memory_removed WHERE agent = :agent AND generation > :generation '
    'UNION SELECT path FROM memory_chunks WHERE agent = :agent AND generation > :generation',
)
_CLEAR_LOG = _scoped('DELETE FROM removed', 'DELETE FROM memory_removed {where}')
_PRUNE_LOG = _scoped(
    'DELETE FROM removed {where} RETURNING generation',
    'DELETE FROM memory_removed {where} RETURNING generation',
    Sql('removed_at < :before', 'removed_at < :before'),
)
_RAISE_HORIZON = Sql(
    "INSERT INTO meta (key, value) VALUES ('horizon', :horizon) "
    'ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))',
    'UPDATE memory_agents SET horizon = GREATEST(horizon, :horizon) WHERE agent = :agent',
)


def _added_since(text: bool) -> Sql:
    """The chunks added after ``:generation``, with their text (or ``''``) and their vector where it is ``:width``
    bytes wide. Unordered: ``ORDER BY id`` would lead SQLite's planner to scan every chunk in id order instead of
    the few the generation index finds."""
    columns = 'c.id, c.path, c.source, c.start_line, c.end_line, c.hash, ' + ('c.text' if text else "''")
    return Sql(
        f'SELECT {columns}, CASE WHEN length(e.vector) = :width THEN e.vector END FROM chunks c '
        'LEFT JOIN embeddings e ON e.chunk_id = c.id WHERE c.generation > :generation',
        f'SELECT {columns}, CASE WHEN octet_length(c.vector) = :width THEN c.vector END FROM memory_chunks c '
        'WHERE c.agent = :agent AND c.generation > :generation',
    )


_ADDED_SINCE = {True: _added_since(True), False: _added_since(False)}

REMOVED_KEEP_S = 7 * 86400.0
"""How long the log of removed chunks is kept: a process that was away longer rebuilds its indexes in full."""

# ---------------------------------------------------------------------- embedding cache
_CACHED = _scoped(
    'SELECT hash, vector FROM embedding_cache {where}',
    'SELECT hash, vector FROM memory_embedding_cache {where}',
    Sql(
        'provider_key = :key AND hash IN (SELECT value FROM json_each(:hashes))',
        'provider_key = :key AND hash = ANY(:hashes)',
    ),
)
_CACHE = Sql(
    'INSERT INTO embedding_cache(provider_key, hash, vector, updated_at) VALUES (:key, :hash, :vector, :now) '
    'ON CONFLICT(provider_key, hash) DO UPDATE SET vector = excluded.vector, updated_at = excluded.updated_at',
    'INSERT INTO memory_embedding_cache (agent, provider_key, hash, vector, updated_at) '
    'VALUES (:agent, :key, :hash, :vector, :now) ON CONFLICT (agent, provider_key, hash) DO UPDATE SET '
    'vector = excluded.vector, updated_at = excluded.updated_at',
)
_CACHE_ROWS = _scoped(
    'SELECT provider_key, hash, vector FROM embedding_cache',
    'SELECT provider_key, hash, vector FROM memory_embedding_cache {where}',
)
_CACHE_SIZE = _scoped('SELECT COUNT(*) FROM embedding_cache', 'SELECT COUNT(*) FROM memory_embedding_cache {where}')
_EVICT = Sql(
    'DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache '
    'ORDER BY updated_at DESC, rowid DESC LIMIT -1 OFFSET :keep)',
    'DELETE FROM memory_embedding_cache WHERE (agent, provider_key, hash) IN (SELECT agent, provider_key, '
    'hash FROM memory_embedding_cache WHERE agent = :agent ORDER BY updated_at DESC, hash DESC OFFSET :keep)',
)
_PRUNE_CACHE = Sql(
    'DELETE FROM embedding_cache WHERE updated_at < :before AND hash NOT IN (SELECT hash FROM chunks)',
    'DELETE FROM memory_embedding_cache e WHERE e.agent = :agent AND e.updated_at < :before AND NOT EXISTS '
    '(SELECT 1 FROM memory_chunks c WHERE c.agent = e.agent AND c.hash = e.hash)',
)

UNVERSIONED_READS = frozenset({_FILES, _FILE, _MTIMES, _STAMPS, _CACHED, _CACHE_ROWS, _CACHE_SIZE})
"""Reads of rows that writes change without moving the generation (a file's new stat, the embedding cache): a copy
of the store that has replayed the generation may still hold older ones, so a read replica never serves them."""


class StoreBase:
    """The memory store's logic, on either backend (see the module docs). Thread-safe: every call holds the store's
    lock, so calls are serialized on its one connection.

    A backend implements :meth:`_rows` and :meth:`_run` (one statement, inside the write in progress if any),
    :meth:`_many`, :meth:`_write` (a transaction that moves the generation), :meth:`_snapshot`,
    :meth:`_cache_transaction`, :meth:`_new_ids` and :meth:`_insert_chunks` (which stamps the chunks with their
    generation); the change log (:meth:`changes_since`) is kept here, for both.
    """

    catches_up = False
    """See :attr:`memsift.index.protocol.Store.catches_up`."""
    LOOKUP_BATCH = 500
    """Ids or hashes one lookup statement asks for."""

    HEADS_CACHED = 500_000
    """Chunk heads kept in memory (about 100 bytes each): a chunk row is never updated, only added and removed, so its
    head read once stays true until the chunk is removed; ranking then reads none it has seen."""

    path: str
    location: str
    _lock: threading.RLock
    _heads: dict[int, ChunkHead]
    """Set to ``{}`` by the backend's ``__init__``."""
    _heads_generation = -1
    """Where processes share the keyword index: the generation whose removals ``_heads`` have dropped (see
    :meth:`_forget_removed`)."""

    # ------------------------------------------------------------------ the backend's part

    def _rows(self, sql: Sql, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of one read (list parameters as lists)."""
        raise NotImplementedError

    def _run(self, sql: Sql, params: Mapping[str, Any], doing: str = 'write the memory store') -> int:
        """One statement (in the write in progress, or on its own); returns the rows it changed."""
        raise NotImplementedError

    def _many(self, sql: Sql, rows: list[dict[str, Any]]) -> None:
        """One statement per parameter set, inside :meth:`_write` or :meth:`_cache_transaction`."""
        raise NotImplementedError

    def _write(self, work: Callable[[int], T]) -> T:
        """``work(generation)`` in one transaction that moves the store to ``generation``."""
        raise NotImplementedError

    def _cache_transaction(self, doing: str) -> contextlib.AbstractContextManager[Any]:
        """A transaction that does not move the generation (the embedding cache)."""
        raise NotImplementedError

    def _snapshot(self) -> contextlib.AbstractContextManager[Any]:
        """A read transaction: every read inside sees one snapshot of the store."""
        raise NotImplementedError

    def _removing(self, generation: int, paths: list[str]) -> list[int]:
        """The ids of the chunks of ``paths``, ascending, which the write at ``generation`` removes: logged, so
        that other processes' derived indexes drop them too (:meth:`changes_since`)."""
        ids = sorted(row[0] for row in self._rows(_LOG_REMOVED, {'generation': generation, 'paths': paths,
                                                                  'now': time.time()}))  # fmt: skip
        self._forget(ids)
        return ids

    def _forget(self, ids: Collection[int] | None) -> None:
        """Drop what this process caches of removed chunks (``None``: of every chunk)."""
        if ids is None:
            self._heads.clear()
        for chunk_id in ids or ():
            self._heads.pop(chunk_id, None)

    def _new_ids(self, count: int) -> list[int]:
        """``count`` chunk ids never used before, ascending."""
        raise NotImplementedError

    def _insert_chunks(self, generation: int, rows: list[ChunkInsert]) -> None:
        raise NotImplementedError

    def _cleared(self, generation: int) -> None:
        """After :meth:`clear` removed every file and chunk, in its transaction: processes behind this generation
        rebuild their indexes rather than replay the removals."""
        self._forget(None)
        self._run(_CLEAR_LOG, {})
        self._run(_RAISE_HORIZON, {'horizon': generation})

    @property
    def generation(self) -> int:
        raise NotImplementedError

    def database_lock(self) -> AdvisoryLock | None:
        """See :meth:`memsift.index.protocol.Store.database_lock`: none (this host's lock file is enough)."""
        return None

    def read_replicas(self) -> ReplicaState | None:
        """See :meth:`memsift.index.protocol.Store.read_replicas`: none."""
        return None

    # ------------------------------------------------------------------ meta

    @property
    def identity(self) -> dict | None:
        """What the index was built with (provider, model, dims, chunking, tokenizer, sources, extra paths)."""
        rows = self._rows(_IDENTITY)
        return None if not rows or rows[0][0] is None else json.loads(rows[0][0])

    def set_identity(self, identity: dict) -> None:
        text = json.dumps(identity, sort_keys=True)
        self._write(lambda _: self._run(_SET_IDENTITY, {'identity': text}))

    # ------------------------------------------------------------------ writes

    def replace_file(
        self,
        path: str,
        source: str,
        file_hash: str,
        mtime: float,
        size: int,
        chunks: Sequence[tuple[int, int, str, str]],
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> list[int]:
        """Record ``path`` with its ``(start_line, end_line, text, hash)`` chunks, replacing any earlier version.

        ``vectors`` holds one embedding row per chunk (float32), stored with the chunks in the same transaction.
        Returns the new chunk ids, in order.
        """
        return self.replace_files([FileWrite(path, source, file_hash, mtime, size, chunks, vectors)])[0]

    def replace_files(self, writes: Sequence[FileWrite]) -> list[list[int]]:
        """:meth:`replace_file` for several files in one transaction (one commit, one generation): a sync of many
        new notes writes them in blocks. Returns each file's new chunk ids."""
        writes = [w._replace(chunks=list(w.chunks)) for w in writes]
        for w in writes:
            if w.vectors is not None and len(w.vectors) != len(w.chunks):
                raise ValueError(f'{len(w.vectors)} vectors for {len(w.chunks)} chunks of {w.path}')

        def work(generation: int) -> list[list[int]]:
            import numpy as np

            now, paths = time.time(), [w.path for w in writes]
            self._removing(generation, paths)
            self._run(_DELETE_CHUNKS, {'paths': paths})
            self._run(_DELETE_SKIPPED, {'paths': paths})
            self._many(_UPSERT_FILE, [
                {'path': w.path, 'source': w.source, 'hash': w.file_hash, 'mtime': w.mtime, 'size': w.size, 'now': now}
                for w in writes
            ])  # fmt: skip
            new = iter(self._new_ids(sum(len(w.chunks) for w in writes)))
            all_ids, rows = [], []
            for w in writes:
                ids = [next(new) for _ in w.chunks]
                matrix = None if w.vectors is None else np.ascontiguousarray(w.vectors, dtype=np.float32)
                rows += [
                    (
                        i,
                        w.path,
                        w.source,
                        c[0],
                        c[1],
                        c[3],
                        c[2],
                        None if matrix is None else matrix[n].tobytes(),
                        c[4] if len(c) > 4 else None,
                    )
                    for n, (i, c) in enumerate(zip(ids, w.chunks))
                ]
                all_ids.append(ids)
            self._insert_chunks(generation, rows)
            return all_ids

        return self._write(work)

    def delete_file(self, path: str) -> list[int]:
        """Forget ``path``; returns the ids of the chunks removed with it."""

        def work(generation: int) -> list[int]:
            ids = self._removing(generation, [path])
            self._run(_DELETE_FILES, {'paths': [path]})
            self._run(_DELETE_SKIPPED, {'paths': [path]})
            return ids

        return self._write(work)

    def record_skipped(self, path: str, reason: str) -> None:
        """Remember why ``path`` is not indexed (shown by ``status``); any indexed version is removed."""

        def work(generation: int) -> None:
            self._removing(generation, [path])
            self._run(_DELETE_FILES, {'paths': [path]})
            self._run(_UPSERT_SKIPPED, {'path': path, 'reason': reason})

        self._write(work)

    def clear(self) -> None:
        """Remove every file and chunk (a full reindex); the identity and generation stay."""

        def work(generation: int) -> None:
            for sql in _DELETE_ALL:
                self._run(sql, {})
            self._cleared(generation)

        self._write(work)

    def touch_files(self, stamps: Sequence[tuple[str, float, int]], read_at: float) -> None:
        """Record a new ``(path, mtime, size)`` for files whose content is unchanged, read at ``read_at`` (not a
        generation change: nothing searchable moved), in one transaction."""
        rows = [{'path': path, 'mtime': mtime, 'size': size, 'now': read_at} for path, mtime, size in stamps]
        with self._lock, self._cache_transaction('record file stats in'):
            self._many(_TOUCH, rows)

    # ------------------------------------------------------------------ catching up

    def _log_bounds(self) -> tuple[int, int]:
        """The store's generation and the log's horizon (both 0 before the first write)."""
        rows = self._rows(_LOG_BOUNDS)
        return (int(rows[0][0] or 0), int(rows[0][1] or 0)) if rows else (0, 0)

    def changes_since(self, generation: int, *, text: bool = True, dims: int | None = None) -> Changes | None:
        """What changed after ``generation``, in one snapshot; ``None`` when that is not known any more (before a
        :meth:`clear`, an upgrade of the file, or older than the removal log keeps), so the caller rebuilds from
        :meth:`iter_chunks`.

        ``text``: read the added chunks' text (the keyword index needs it, vectors do not); ``dims``: also read
        their stored embeddings of that dimension."""
        with self._snapshot():
            current, horizon = self._log_bounds()
            if generation == current:
                return Changes(current, [], [], {})
            if generation > current or generation < horizon:
                self._forget(None)  # what was removed since is not known any more
                return None
            removed = [row[0] for row in self._rows(_REMOVED_SINCE, {'generation': generation})]
            self._forget(removed)
            width = -1 if dims is None else dims * 4
            rows = sorted(self._rows(_ADDED_SINCE[text], {'generation': generation, 'width': width}))
        return Changes(
            current,
            removed,
            [ChunkRow(*row[:7]) for row in rows],
            {row[0]: bytes(row[7]) for row in rows if row[7] is not None},
        )

    def paths_since(self, generation: int) -> tuple[int, list[str], list[str]] | None:
        """The files a write after ``generation`` added, changed or removed, in one snapshot: ``(the store's
        generation, paths indexed now, paths gone)``; ``None`` when the log does not reach back that far (the caller
        reads :meth:`paths`)."""
        with self._snapshot():
            current, horizon = self._log_bounds()
            if generation > current or generation < horizon:
                return None
            touched = [row[0] for row in self._rows(_TOUCHED_SINCE, {'generation': generation})]
            if None in touched:
                return None
            present = {row[0] for row in self._rows(_PATHS_OF, {'paths': touched})} if touched else set()
        return current, sorted(present), sorted(set(touched) - present)

    def prune_removed(self, keep_s: float = REMOVED_KEEP_S) -> int:
        """Drop removal-log rows older than ``keep_s`` seconds; processes further behind rebuild. Returns how many.
        Not a generation change: nothing searchable moves."""
        with self._cache_transaction('prune the removal log of'):
            rows = self._rows(_PRUNE_LOG, {'before': time.time() - keep_s})
            if rows:
                self._run(_RAISE_HORIZON, {'horizon': max(row[0] for row in rows)})
        return len(rows)

    # ------------------------------------------------------------------ reads

    def files(self) -> dict[str, FileRecord]:
        return {row[0]: FileRecord(*row) for row in self._rows(_FILES)}

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        return [row[0] for row in self._rows(_PATHS)]

    def files_of(self, paths: Collection[str]) -> dict[str, FileRecord]:
        """The records of those of ``paths`` that are indexed (a path that is not valid UTF-8 never is)."""
        wanted = [path for path in paths if _encodable(path)]
        return {row[0]: FileRecord(*row) for row in self._rows(_FILES_OF, {'paths': wanted})} if wanted else {}

    def file(self, path: str) -> FileRecord | None:
        """The record of one indexed file, or ``None`` (also for a path that is not valid UTF-8, such as one with a
        lone surrogate: no indexed path is)."""
        if not _encodable(path):
            return None
        rows = self._rows(_FILE, {'path': path})
        return FileRecord(*rows[0]) if rows else None

    def file_mtimes(self, paths: Collection[str]) -> dict[str, float]:
        """``path -> mtime`` of those of ``paths`` that are indexed."""
        return dict(self._rows(_MTIMES, {'paths': list(paths)})) if paths else {}

    def file_stamps(self) -> dict[str, tuple[float, int, float]]:
        """``path -> (mtime, size, indexed_at)`` of every indexed file: what a sync compares before reading."""
        return {path: (mtime, size, indexed_at) for path, mtime, size, indexed_at in self._rows(_STAMPS)}

    def file_stamp_rows(self, paths: Collection[str] | None = None) -> list[tuple[str, float, int, float]]:
        """:meth:`file_stamps` as ``(path, mtime, size, indexed_at)`` rows, of every file or of those of ``paths``
        that are indexed."""
        if paths is None:
            return self._rows(_STAMPS)  # type: ignore[return-value]
        wanted = [path for path in paths if _encodable(path)]
        return self._rows(_STAMPS_OF, {'paths': wanted}) if wanted else []  # type: ignore[return-value]

    def skipped(self) -> dict[str, str]:
        return dict(self._rows(_SKIPPED))

    def file_count(self) -> int:
        """How many files are indexed."""
        return int(self._rows(_FILE_COUNT)[0][0])

    def chunk_count(self) -> int:
        return int(self._rows(_CHUNK_COUNT)[0][0])

    def source_counts(self) -> list[tuple[str, int, int]]:
        """``(source, files, chunks)`` per source."""
        return [(source, int(files), int(chunks)) for source, files, chunks in self._rows(_SOURCE_COUNTS)]

    def vector_count(self) -> int:
        return int(self._rows(_VECTOR_COUNT)[0][0])

    def chunk_ids(self, path: str) -> list[int]:
        return [row[0] for row in self._rows(_CHUNK_IDS, {'path': path})]

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        """The id of the first chunk of each path (files without chunks are left out)."""
        return dict(self._rows(_FIRST_CHUNKS, {'paths': list(paths)})) if paths else {}

    def chunks(self, ids: Sequence[int]) -> list[ChunkRow]:
        """Chunks by id, in the order of ``ids`` (unknown ids, and other agents' chunks, are left out)."""
        if not ids:
            return []
        by_id = {row[0]: ChunkRow(*row) for row in self._rows(_CHUNKS, {'ids': [int(i) for i in ids]})}
        return [by_id[i] for i in ids if i in by_id]

    def chunk_heads(self, ids: Collection[int]) -> dict[int, ChunkHead]:
        """:class:`ChunkHead` by id (unknown ids are left out): the rows a search ranks, without their text. Heads
        read before are answered from memory (see :data:`HEADS_CACHED`). Where this process catches up with the
        store, a chunk another process removed keeps its head until then, as its vectors keep the chunk's id; on a
        store whose keyword index processes share, heads of the chunks other processes removed are dropped once the
        generation moves (:meth:`_forget_removed`)."""
        with self._lock:
            heads = self._heads
            if not self.catches_up and self.generation != self._heads_generation:
                self._forget_removed()
            found = {i: head for i in ids if (head := heads.get(i)) is not None}
            missing = [int(i) for i in ids if i not in found]
            if not missing:
                return found
            read = {row[0]: ChunkHead._make(row) for row in self._rows(_HEADS, {'ids': missing})}
            if len(heads) + len(read) > self.HEADS_CACHED:
                heads.clear()
            heads.update(read)
            found.update(read)
            return found

    def _forget_removed(self) -> None:
        """Where processes share the keyword index (read without catching up, so removals reach no :meth:`_forget`
        here): drop the heads of the chunks removed since :attr:`_heads_generation`, read from the change log, as a
        head missing is how a keyword search notices that index is behind; every head when the log does not reach
        back that far. The heads of chunks still stored stay (a chunk row never changes): a write by another process
        costs the reads of what it changed, not of every head a search ranks."""
        with self._snapshot():
            current, horizon = self._log_bounds()
            since = self._heads_generation
            if since < 0 or since > current or since < horizon:
                self._forget(None)
            elif since < current:
                self._forget([row[0] for row in self._rows(_REMOVED_SINCE, {'generation': since})])
            self._heads_generation = current

    def chunk_texts(self, ids: Collection[int]) -> dict[int, str]:
        """Chunk texts by id (unknown ids are left out)."""
        return dict(self._rows(_TEXTS, {'ids': [int(i) for i in ids]})) if ids else {}

    def iter_chunks(self, batch: int = 1000) -> Iterator[ChunkRow]:
        """Every chunk in id order, read in batches (for rebuilding derived indexes)."""
        last = 0
        while rows := self._rows(_CHUNKS_AFTER, {'last': last, 'batch': batch}):
            yield from (ChunkRow(*row) for row in rows)
            last = rows[-1][0]

    # ------------------------------------------------------------------ vectors

    @staticmethod
    def _matrix(rows: list[tuple[Any, ...]], dims: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """``(ids, (n, dims) float32)`` of ``(id, vector bytes)`` rows."""
        import numpy as np

        ids = np.fromiter((row[0] for row in rows), dtype=np.uint64, count=len(rows))
        return ids, np.frombuffer(b''.join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), dims)

    def iter_vectors(
        self, dims: int, batch: int = 4096
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]:
        """Stored embeddings of ``dims`` dimensions in id order, as ``(ids, (n, dims) float32)`` batches (rows of
        another size are skipped)."""
        last = 0
        while rows := self._rows(_VECTORS_AFTER, {'last': last, 'width': dims * 4, 'batch': batch}):
            last = rows[-1][0]
            yield self._matrix(rows, dims)

    def vector_ids(self, dims: int) -> npt.NDArray[np.uint64]:
        """Ids of the chunks with a stored embedding of ``dims`` dimensions, ascending."""
        import numpy as np

        rows = self._rows(_VECTOR_IDS, {'width': dims * 4})
        return np.fromiter((row[0] for row in rows), dtype=np.uint64, count=len(rows))

    def vectors_of(
        self, ids: Sequence[int], dims: int, batch: int | None = None
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]:
        """The stored embeddings of ``ids`` (those of another size or missing are left out) in batches, as
        :meth:`iter_vectors`."""
        batch = batch or self.LOOKUP_BATCH
        for start in range(0, len(ids), batch):
            part = [int(i) for i in ids[start : start + batch]]
            if rows := self._rows(_VECTORS_OF, {'ids': part, 'width': dims * 4}):
                yield self._matrix(rows, dims)

    # ------------------------------------------------------------------ embedding cache

    def cached_vectors(self, provider_key: str, hashes: Sequence[str], dims: int) -> dict[str, npt.NDArray[np.float32]]:
        """Cached embeddings of chunk texts by sha256 (wrong-sized rows are misses)."""
        import numpy as np

        found: dict[str, npt.NDArray[np.float32]] = {}
        unique = sorted(set(hashes))
        for start in range(0, len(unique), self.LOOKUP_BATCH):
            rows = self._rows(_CACHED, {'key': provider_key, 'hashes': unique[start : start + self.LOOKUP_BATCH]})
            found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows if len(v) == dims * 4)
        return found

    def cache_vectors(self, provider_key: str, items: Sequence[tuple[str, npt.NDArray[np.float32]]]) -> None:
        """Remember embeddings by chunk-text sha256 (not a store generation change: the index does not depend on it)."""
        import numpy as np

        now = time.time()
        rows = [
            {'key': provider_key, 'hash': h, 'vector': np.ascontiguousarray(v, dtype=np.float32).tobytes(), 'now': now}
            for h, v in items
        ]
        with self._lock, self._cache_transaction('write the embedding cache of'):
            self._many(_CACHE, rows)

    def cache_rows(self) -> list[tuple[str, str, bytes]]:
        """Every embedding-cache row as ``(provider key, text sha256, float32 bytes)`` (for ``memsift migrate``)."""
        return [(key, text_hash, bytes(vector)) for key, text_hash, vector in self._rows(_CACHE_ROWS)]

    def cache_size(self) -> int:
        return int(self._rows(_CACHE_SIZE)[0][0])

    def evict_cache(self, max_entries: int) -> int:
        """Delete the oldest cache rows until at most ``max_entries`` remain; returns how many went."""
        return self._run(_EVICT, {'keep': max_entries}, 'evict from the embedding cache of')

    def prune_cache(self, written_before: float) -> int:
        """Delete cache rows written before ``written_before`` (a Unix time) whose text no stored chunk has any more,
        whatever their provider; returns how many went. Rows of current chunks stay (switching provider back
        re-embeds nothing), and so do recent rows (a conversation's messages, a note mid-edit)."""
        return self._run(_PRUNE_CACHE, {'before': written_before}, 'prune the embedding cache of')

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
