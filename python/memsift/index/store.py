"""The SQLite store: the source of truth for indexed memory files and their chunks.

Every write is one transaction that also bumps ``generation``; derived indexes (tantivy BM25, vectors) record
the generation they reflect, so a derived index that is missing or behind the store is rebuilt from it. A crash
in the middle of a write rolls back to the previous state: no lost or duplicated chunks.

>>> store = MemoryStore(':memory:')
>>> ids = store.replace_file('MEMORY.md', 'memory', 'h1', 0.0, 5, [(1, 1, 'hello', 'c1')])
>>> store.generation, [c.text for c in store.chunks(ids)]
(1, ['hello'])
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memsift._sqlite import connect, transaction
from memsift.errors import StoreError
from memsift.index.records import Changes, ChunkHead, ChunkRow, FileRecord, FileWrite

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['ChunkHead', 'ChunkRow', 'FileRecord', 'FileWrite', 'MemoryStore']

T = TypeVar('T')

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    source TEXT NOT NULL DEFAULT 'memory',
    hash TEXT NOT NULL,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    source TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS embeddings (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS embedding_cache (
    provider_key TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (provider_key, hash)
);
CREATE INDEX IF NOT EXISTS embedding_cache_age ON embedding_cache(updated_at);
"""


class MemoryStore:
    """One agent's store. Thread-safe: calls are serialized on one connection.

    Args:
        path: Database file (parent folders are created) or ``':memory:'``.
    """

    shared = False
    """Only this host writes it, and derived indexes live beside it (see :class:`memsift.index.pgstore.PgMemoryStore`
    for a shared store)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.location = self.path
        """Where the store is, as status shows it."""
        self._lock = threading.RLock()
        self._db = connect(
            self.path if self.path == ':memory:' else str(Path(self.path).expanduser()),
            _SCHEMA,
            SCHEMA_VERSION,
            StoreError,
            'the memory store',
            'delete the file to rebuild it from the workspace',
        )

    # ------------------------------------------------------------------ meta

    def _meta(self, key: str) -> str | None:
        row = self._db.execute('SELECT value FROM meta WHERE key = ?', (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            'INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = ?', (key, value, value)
        )

    @property
    def generation(self) -> int:
        """Count of committed writes; derived indexes record the generation they reflect."""
        with self._lock:
            return int(self._meta('generation') or 0)

    @property
    def identity(self) -> dict | None:
        """What the index was built with (provider, model, dims, chunking, tokenizer, sources, extra paths)."""
        with self._lock:
            raw = self._meta('identity')
        return None if raw is None else json.loads(raw)

    # ------------------------------------------------------------------ writes

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(db)`` in one transaction that also bumps the generation."""
        with self._lock, transaction(self._db, StoreError, f'the memory store {self.path}'):
            result = work(self._db)
            self._set_meta('generation', str(int(self._meta('generation') or 0) + 1))
            return result

    def set_identity(self, identity: dict) -> None:
        self._write(lambda db: self._set_meta('identity', json.dumps(identity, sort_keys=True)))

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

        def next_id(db: sqlite3.Connection) -> int:
            # AUTOINCREMENT's record of the largest id ever used (no row until the first chunk).
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunks'").fetchone()
            return (row[0] if row else 0) + 1

        def work(db: sqlite3.Connection) -> list[list[int]]:
            now = time.time()
            paths = [(w.path,) for w in writes]
            db.executemany('DELETE FROM chunks WHERE path = ?', paths)
            db.executemany('DELETE FROM skipped WHERE path = ?', paths)
            db.executemany(
                'INSERT INTO files(path, source, hash, mtime, size, indexed_at) VALUES (?, ?, ?, ?, ?, ?) '
                'ON CONFLICT(path) DO UPDATE SET source = excluded.source, hash = excluded.hash, '
                'mtime = excluded.mtime, size = excluded.size, indexed_at = excluded.indexed_at',
                [(w.path, w.source, w.file_hash, w.mtime, w.size, now) for w in writes],
            )
            # New ids come after every id ever used (AUTOINCREMENT's rule; this transaction is the only writer), so
            # all chunks go in with one executemany.
            first = next_id(db)
            all_ids, rows, vectors = [], [], []
            for w in writes:
                chunks = list(w.chunks)
                if w.vectors is not None and len(w.vectors) != len(chunks):
                    raise ValueError(f'{len(w.vectors)} vectors for {len(chunks)} chunks of {w.path}')
                ids = list(range(first, first + len(chunks)))
                first += len(chunks)
                rows += [(i, w.path, w.source, *chunk[:2], chunk[3], chunk[2]) for i, chunk in zip(ids, chunks)]
                if w.vectors is not None:
                    import numpy as np

                    matrix = np.ascontiguousarray(w.vectors, dtype=np.float32)
                    vectors += [(i, matrix[n].tobytes()) for n, i in enumerate(ids)]
                all_ids.append(ids)
            db.executemany(
                'INSERT INTO chunks(id, path, source, start_line, end_line, hash, text) VALUES (?, ?, ?, ?, ?, ?, ?)',
                rows,
            )
            db.executemany('INSERT INTO embeddings(chunk_id, vector) VALUES (?, ?)', vectors)
            return all_ids

        return self._write(work)

    def delete_file(self, path: str) -> list[int]:
        """Forget ``path``; returns the ids of the chunks removed with it."""

        def work(db: sqlite3.Connection) -> list[int]:
            ids = [row[0] for row in db.execute('SELECT id FROM chunks WHERE path = ? ORDER BY id', (path,))]
            db.execute('DELETE FROM files WHERE path = ?', (path,))
            db.execute('DELETE FROM skipped WHERE path = ?', (path,))
            return ids

        return self._write(work)

    def touch_file(self, path: str, mtime: float, size: int) -> None:
        """Record a new stat for ``path`` whose content is unchanged (not a generation change: nothing searchable
        moved)."""
        with self._lock:
            try:
                self._db.execute(
                    'UPDATE files SET mtime = ?, size = ?, indexed_at = ? WHERE path = ?',
                    (mtime, size, time.time(), path),
                )
            except sqlite3.Error as exc:
                raise StoreError(f'cannot write the memory store {self.path}: {exc}') from exc

    def record_skipped(self, path: str, reason: str) -> None:
        """Remember why ``path`` is not indexed (shown by ``status``); any indexed version is removed."""

        def work(db: sqlite3.Connection) -> None:
            db.execute('DELETE FROM files WHERE path = ?', (path,))
            db.execute(
                'INSERT INTO skipped(path, reason) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET reason = ?',
                (path, reason, reason),
            )

        self._write(work)

    def clear(self) -> None:
        """Remove every file and chunk (a full reindex); the identity and generation stay."""

        def work(db: sqlite3.Connection) -> None:
            db.execute('DELETE FROM chunks')
            db.execute('DELETE FROM files')
            db.execute('DELETE FROM skipped')

        self._write(work)

    def changes_since(self, generation: int, *, text: bool = True, dims: int | None = None) -> Changes | None:
        """``None``: a SQLite store keeps no log of its changes, since the processes writing it share its derived
        indexes; one behind it is rebuilt (see :meth:`memsift.index.pgstore.PgMemoryStore.changes_since`)."""
        return None

    # ------------------------------------------------------------------ reads

    def files(self) -> dict[str, FileRecord]:
        with self._lock:
            rows = self._db.execute(
                'SELECT path, source, hash, mtime, size, indexed_at FROM files ORDER BY path'
            ).fetchall()
        return {row[0]: FileRecord(*row) for row in rows}

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        with self._lock:
            return [row[0] for row in self._db.execute('SELECT path FROM files ORDER BY path')]

    def file(self, path: str) -> FileRecord | None:
        """The record of one indexed file, or ``None`` (also for a path that is not valid UTF-8, such as one with a
        lone surrogate: no indexed path is)."""
        try:
            with self._lock:
                row = self._db.execute(
                    'SELECT path, source, hash, mtime, size, indexed_at FROM files WHERE path = ?', (path,)
                ).fetchone()
        except UnicodeEncodeError:
            return None
        return None if row is None else FileRecord(*row)

    def file_mtimes(self, paths: Collection[str]) -> dict[str, float]:
        """``path -> mtime`` of those of ``paths`` that are indexed."""
        if not paths:
            return {}
        with self._lock:
            rows = self._db.execute(
                f'SELECT path, mtime FROM files WHERE path IN ({",".join("?" * len(paths))})', list(paths)
            ).fetchall()
        return dict(rows)

    def file_stamps(self) -> dict[str, tuple[float, int, float]]:
        """``path -> (mtime, size, indexed_at)`` of every indexed file: what a sync compares before reading."""
        with self._lock:
            rows = self._db.execute('SELECT path, mtime, size, indexed_at FROM files').fetchall()
        return {path: (mtime, size, indexed_at) for path, mtime, size, indexed_at in rows}

    def skipped(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute('SELECT path, reason FROM skipped ORDER BY path').fetchall())

    def chunk_count(self) -> int:
        with self._lock:
            return int(self._db.execute('SELECT COUNT(*) FROM chunks').fetchone()[0])

    def source_counts(self) -> list[tuple[str, int, int]]:
        """``(source, files, chunks)`` per source."""
        with self._lock:
            return self._db.execute(
                'SELECT f.source, COUNT(DISTINCT f.path), COUNT(c.id) FROM files f '
                'LEFT JOIN chunks c ON c.path = f.path GROUP BY f.source ORDER BY f.source'
            ).fetchall()

    def vector_count(self) -> int:
        with self._lock:
            return int(self._db.execute('SELECT COUNT(*) FROM embeddings').fetchone()[0])

    def chunk_ids(self, path: str) -> list[int]:
        with self._lock:
            return [row[0] for row in self._db.execute('SELECT id FROM chunks WHERE path = ? ORDER BY id', (path,))]

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        """The id of the first chunk of each path (files without chunks are left out)."""
        if not paths:
            return {}
        with self._lock:
            rows = self._db.execute(
                f'SELECT path, MIN(id) FROM chunks WHERE path IN ({",".join("?" * len(paths))}) GROUP BY path',
                list(paths),
            ).fetchall()
        return dict(rows)

    def iter_vectors(
        self, dims: int, batch: int = 4096
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]:
        """Stored embeddings in id order as ``(ids, (n, dims) float32)`` batches; rows of another size are skipped."""
        import numpy as np

        last = 0
        width = dims * 4
        while True:
            with self._lock:
                rows = self._db.execute(
                    'SELECT chunk_id, vector FROM embeddings WHERE chunk_id > ? ORDER BY chunk_id LIMIT ?',
                    (last, batch),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            rows = [row for row in rows if len(row[1]) == width]
            if rows:
                ids = np.fromiter((row[0] for row in rows), dtype=np.uint64, count=len(rows))
                matrix = np.frombuffer(b''.join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), dims)
                yield ids, matrix

    def vector_ids(self, dims: int) -> npt.NDArray[np.uint64]:
        """Ids of the chunks with a stored embedding of ``dims`` dimensions, ascending."""
        import numpy as np

        with self._lock:
            rows = self._db.execute(
                'SELECT chunk_id FROM embeddings WHERE length(vector) = ? ORDER BY chunk_id', (dims * 4,)
            ).fetchall()
        return np.fromiter((row[0] for row in rows), dtype=np.uint64, count=len(rows))

    def vectors_of(
        self, ids: Sequence[int], dims: int, batch: int = 500
    ) -> Iterator[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]:
        """The stored embeddings of ``ids`` (those of another size or missing are left out) in batches, as
        :meth:`iter_vectors`."""
        import numpy as np

        width = dims * 4
        for start in range(0, len(ids), batch):
            part = [int(i) for i in ids[start : start + batch]]
            with self._lock:
                rows = self._db.execute(
                    f'SELECT chunk_id, vector FROM embeddings WHERE chunk_id IN ({",".join("?" * len(part))})', part
                ).fetchall()
            rows = [row for row in rows if len(row[1]) == width]
            if rows:
                found = np.fromiter((row[0] for row in rows), dtype=np.uint64, count=len(rows))
                yield found, np.frombuffer(b''.join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), dims)

    def chunks(self, ids: Sequence[int]) -> list[ChunkRow]:
        """Chunks by id, in the order of ``ids`` (unknown ids are left out)."""
        if not ids:
            return []
        with self._lock:
            rows = self._db.execute(
                'SELECT id, path, source, start_line, end_line, hash, text FROM chunks '
                f'WHERE id IN ({",".join("?" * len(ids))})',
                list(ids),
            ).fetchall()
        by_id = {row[0]: ChunkRow(*row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def chunk_heads(self, ids: Collection[int]) -> dict[int, ChunkHead]:
        """:class:`ChunkHead` by id (unknown ids are left out): the rows a search ranks, without their text."""
        if not ids:
            return {}
        with self._lock:
            rows = self._db.execute(
                'SELECT id, path, source, start_line, end_line, length(text) FROM chunks '
                f'WHERE id IN ({",".join("?" * len(ids))})',
                list(ids),
            ).fetchall()
        return {row[0]: ChunkHead._make(row) for row in rows}

    def chunk_texts(self, ids: Collection[int]) -> dict[int, str]:
        """Chunk texts by id (unknown ids are left out)."""
        if not ids:
            return {}
        with self._lock:
            rows = self._db.execute(
                f'SELECT id, text FROM chunks WHERE id IN ({",".join("?" * len(ids))})', list(ids)
            ).fetchall()
        return dict(rows)

    def iter_chunks(self, batch: int = 1000) -> Iterator[ChunkRow]:
        """Every chunk in id order, read in batches (for rebuilding derived indexes)."""
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    'SELECT id, path, source, start_line, end_line, hash, text FROM chunks WHERE id > ? '
                    'ORDER BY id LIMIT ?',
                    (last, batch),
                ).fetchall()
            if not rows:
                return
            yield from (ChunkRow(*row) for row in rows)
            last = rows[-1][0]

    # ------------------------------------------------------------------ embedding cache

    def cached_vectors(self, provider_key: str, hashes: Sequence[str], dims: int) -> dict[str, npt.NDArray[np.float32]]:
        """Cached embeddings of chunk texts by sha256 (looked up 400 at a time; wrong-sized rows are misses)."""
        import numpy as np

        found: dict[str, npt.NDArray[np.float32]] = {}
        unique = sorted(set(hashes))
        for start in range(0, len(unique), 400):
            part = unique[start : start + 400]
            with self._lock:
                rows = self._db.execute(
                    f'SELECT hash, vector FROM embedding_cache WHERE provider_key = ? AND hash IN '
                    f'({",".join("?" * len(part))})',
                    [provider_key, *part],
                ).fetchall()
            found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows if len(v) == dims * 4)
        return found

    def cache_vectors(self, provider_key: str, items: Sequence[tuple[str, npt.NDArray[np.float32]]]) -> None:
        """Remember embeddings by chunk-text sha256 (not a store generation change: the index does not depend on it)."""
        import numpy as np

        now = time.time()
        with self._lock:
            try:
                with self._db:
                    self._db.execute('BEGIN')
                    self._db.executemany(
                        'INSERT INTO embedding_cache(provider_key, hash, vector, updated_at) VALUES (?, ?, ?, ?) '
                        'ON CONFLICT(provider_key, hash) DO UPDATE SET vector = excluded.vector, '
                        'updated_at = excluded.updated_at',
                        [(provider_key, h, np.ascontiguousarray(v, dtype=np.float32).tobytes(), now) for h, v in items],
                    )
            except sqlite3.Error as exc:
                raise StoreError(f'cannot write the embedding cache in {self.path}: {exc}') from exc

    def cache_rows(self) -> list[tuple[str, str, bytes]]:
        """Every embedding-cache row as ``(provider key, text sha256, float32 bytes)`` (for ``memsift migrate``)."""
        with self._lock:
            return self._db.execute('SELECT provider_key, hash, vector FROM embedding_cache').fetchall()

    def cache_size(self) -> int:
        with self._lock:
            return int(self._db.execute('SELECT COUNT(*) FROM embedding_cache').fetchone()[0])

    def evict_cache(self, max_entries: int) -> int:
        """Delete the oldest cache rows until at most ``max_entries`` remain; returns how many went."""
        with self._lock:
            cur = self._db.execute(
                'DELETE FROM embedding_cache WHERE rowid IN (SELECT rowid FROM embedding_cache '
                'ORDER BY updated_at DESC, rowid DESC LIMIT -1 OFFSET ?)',
                (max_entries,),
            )
            return cur.rowcount

    def prune_cache(self, written_before: float) -> int:
        """Delete cache rows written before ``written_before`` (a Unix time) whose text no stored chunk has any more,
        whatever their provider; returns how many went. Rows of current chunks stay (switching provider back
        re-embeds nothing), and so do recent rows (a conversation's messages, a note mid-edit)."""
        with self._lock:
            try:
                with self._db:
                    cur = self._db.execute(
                        'DELETE FROM embedding_cache WHERE updated_at < ? AND hash NOT IN (SELECT hash FROM chunks)',
                        (written_before,),
                    )
            except sqlite3.Error as exc:
                raise StoreError(f'cannot prune the embedding cache in {self.path}: {exc}') from exc
            return cur.rowcount

    def vacuum(self) -> None:
        """Rewrite the database without free pages, then fold the write-ahead log back into it. Readers in other
        processes keep their snapshot while it runs; writers wait for it (callers hold the writer lock)."""
        with self._lock:
            try:
                self._db.execute('VACUUM')
                self._db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
            except sqlite3.Error as exc:
                raise StoreError(f'cannot vacuum the memory store {self.path}: {exc}') from exc

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes of database pages per table, its indexes included (SQLite's ``dbstat``); ``None`` where this
        SQLite is built without it."""
        tables = {'chunks_path': 'chunks', 'embedding_cache_age': 'embedding_cache'}
        with self._lock:
            try:
                rows = self._db.execute('SELECT name, SUM(pgsize) FROM dbstat GROUP BY name').fetchall()
            except sqlite3.Error:
                return None
        out: dict[str, int] = {}
        for name, size in rows:
            table = tables.get(name) or re.sub(r'^sqlite_autoindex_(.+)_\d+$', r'\1', name)
            out[table] = out.get(table, 0) + int(size)
        return out

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
