"""The SQLite store: the source of truth for indexed memory files and their chunks.

Every write is one transaction that also bumps ``generation``, stamps the chunks it adds with it and logs the ones it
removes (as the PostgreSQL store does); derived indexes (tantivy BM25, vectors) record the generation they reflect,
so one that is behind the store takes the changes since (:meth:`MemoryStore.changes_since`) or, when the log cannot
tell, is rebuilt from it. A crash in the middle of a write rolls back to the previous state: no lost or duplicated
chunks.

>>> store = MemoryStore(':memory:')
>>> ids = store.replace_file('MEMORY.md', 'memory', 'h1', 0.0, 5, [(1, 1, 'hello', 'c1')])
>>> store.generation, [c.text for c in store.chunks(ids)]
(1, ['hello'])
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from memsift._sql import Sql
from memsift._sqlite import connect, transaction
from memsift.errors import StoreError
from memsift.index.records import ChunkHead, ChunkRow, FileRecord, FileWrite
from memsift.index.storebase import ChunkInsert, StoreBase

__all__ = ['ChunkHead', 'ChunkRow', 'FileRecord', 'FileWrite', 'MemoryStore']

T = TypeVar('T')

SCHEMA_VERSION = 4

_UPGRADES = {
    # 4: chunks carry their entry's importance (OpenClaw 2.x's <!-- importance: N --> annotations).
    3: ['ALTER TABLE chunks ADD COLUMN importance INTEGER'],
    # 3: chunks carry the generation that added them and removals are logged, so other processes apply just the
    # changes (:meth:`MemoryStore.changes_since`); what came before is not logged, so catching up from before the
    # upgrade rebuilds.
    2: [
        'ALTER TABLE chunks ADD COLUMN generation INTEGER NOT NULL DEFAULT 0',
        "INSERT INTO meta (key, value) SELECT 'horizon', COALESCE((SELECT value FROM meta WHERE key = 'generation'), "
        "'0') WHERE true ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ],
}

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
    text TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    importance INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_generation ON chunks(generation);
CREATE TABLE IF NOT EXISTS removed (
    generation INTEGER NOT NULL,
    chunk_id INTEGER NOT NULL,
    removed_at REAL NOT NULL,
    path TEXT
);
CREATE INDEX IF NOT EXISTS removed_generation ON removed(generation);
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


class MemoryStore(StoreBase):
    """One agent's store in a SQLite file on this host. Thread-safe: calls are serialized on one connection.

    Its logic is :class:`~memsift.index.storebase.StoreBase`'s; this class holds the connection, the transactions
    (``BEGIN IMMEDIATE``, the generation kept in ``meta``) and the chunk ids (SQLite's ``AUTOINCREMENT``).

    Args:
        path: Database file (parent folders are created) or ``':memory:'``.
    """

    schema = f'sqlite {SCHEMA_VERSION}'
    """The store's kind and schema version, as snapshots record them."""
    _generation_seen = -1
    """The generation this connection last read or committed (see :attr:`generation`)."""
    catches_up = False
    """Only processes of this host write it, and they share the keyword index beside it (see
    :attr:`memsift.index.protocol.Store.catches_up`); each process's vectors in memory take the changes other
    processes made from :meth:`changes_since`, as on PostgreSQL."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.location = self.path
        """Where the store is, as status shows it."""
        self._lock = threading.RLock()
        self._heads = {}
        self._mapped = self.path != ':memory:'
        """Whether this connection still reads the file through a memory map (see :attr:`generation`)."""
        self._db = connect(
            self.path if self.path == ':memory:' else str(Path(self.path).expanduser()),
            _SCHEMA,
            SCHEMA_VERSION,
            StoreError,
            'the memory store',
            'delete the file to rebuild it from the workspace',
            _UPGRADES,
        )

    # ------------------------------------------------------------------ statements

    def _rows(self, sql: Sql, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql.sqlite, _json_lists(params)).fetchall()

    def _run(self, sql: Sql, params: Mapping[str, Any], doing: str = 'write the memory store') -> int:
        with self._lock:
            if self._db.in_transaction:  # the write in progress turns errors into StoreError and rolls back
                return self._db.execute(sql.sqlite, _json_lists(params)).rowcount
            try:
                with self._db:
                    return self._db.execute(sql.sqlite, _json_lists(params)).rowcount
            except sqlite3.Error as exc:
                raise StoreError(f'cannot {doing} {self.path}: {exc}') from exc

    def _many(self, sql: Sql, rows: list[dict[str, Any]]) -> None:
        self._db.executemany(sql.sqlite, rows)

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
        """Count of committed writes; derived indexes record the generation they reflect.

        The first time it finds another connection's commit (another process wrote), this connection stops reading
        the file through a memory map: SQLite drops the whole map after each commit another connection makes and
        maps the file again, which costs kernel time that grows with the file (a reader catching up with one write
        spent ~3 ms of it at 200k chunks, against ~0.2 ms reading without the map; issue 41). A process no other
        writes reach (a command line run) keeps the map."""
        with self._lock:
            generation = int(self._meta('generation') or 0)
            if self._mapped and generation != self._generation_seen and not self._db.in_transaction:
                if self._generation_seen >= 0:
                    self._db.execute('PRAGMA mmap_size = 0')
                    self._mapped = False
                self._generation_seen = generation
            return generation

    # ------------------------------------------------------------------ writes

    def _write(self, work: Callable[[int], T]) -> T:
        """Run ``work(generation)`` in one transaction that also moves the store to ``generation``."""
        with self._lock, transaction(self._db, StoreError, f'the memory store {self.path}'):
            generation = int(self._meta('generation') or 0) + 1
            result = work(generation)
            self._set_meta('generation', str(generation))
        self._generation_seen = generation  # committed: this connection's own write, not another's
        return result

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """A read transaction: every read inside sees one snapshot (WAL), whatever other processes commit."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute('BEGIN')
            try:
                yield
            finally:
                self._db.execute('COMMIT')

    @contextlib.contextmanager
    def _cache_transaction(self, doing: str) -> Iterator[None]:
        try:
            with self._db:
                self._db.execute('BEGIN')
                yield
        except sqlite3.Error as exc:
            raise StoreError(f'cannot {doing} {self.path}: {exc}') from exc

    def _new_ids(self, count: int) -> list[int]:
        # AUTOINCREMENT's record of the largest id ever used (no row until the first chunk). New ids come after it
        # (AUTOINCREMENT's rule; the write in progress is the only writer), so all chunks go in with one executemany.
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunks'").fetchone()
        first = (row[0] if row else 0) + 1
        return list(range(first, first + count))

    def _insert_chunks(self, generation: int, rows: list[ChunkInsert]) -> None:
        self._db.executemany(
            'INSERT INTO chunks(id, path, source, start_line, end_line, hash, text, generation, importance) '
            'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [(*row[:7], generation, row[8]) for row in rows],
        )
        self._db.executemany(
            'INSERT INTO embeddings(chunk_id, vector) VALUES (?, ?)',
            [(row[0], row[7]) for row in rows if row[7] is not None],
        )

    # ------------------------------------------------------------------ upkeep

    def vacuum(self) -> None:
        """Prune the removal log, rewrite the database without free pages, then fold the write-ahead log back into
        it. Readers in other processes keep their snapshot while it runs; writers wait for it (callers hold the writer
        lock)."""
        self.prune_removed()
        with self._lock:
            try:
                self._db.execute('VACUUM')
                self._db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
            except sqlite3.Error as exc:
                raise StoreError(f'cannot vacuum the memory store {self.path}: {exc}') from exc

    def table_bytes(self) -> dict[str, int] | None:
        """Bytes of database pages per table, its indexes included (SQLite's ``dbstat``); ``None`` where this
        SQLite is built without it."""
        tables = {
            'chunks_path': 'chunks',
            'chunks_generation': 'chunks',
            'removed_generation': 'removed',
            'embedding_cache_age': 'embedding_cache',
        }
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


def _json_lists(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Parameters with each list as a JSON array (read with ``json_each``)."""
    return {k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v for k, v in (params or {}).items()}
