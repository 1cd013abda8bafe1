"""The one way memsift opens and writes its SQLite files (the memory store and the session store).

Every file is opened the same way: parent folders created, WAL (readers never block the writer, or each other),
``synchronous=NORMAL`` (a commit survives an application crash without an fsync each; a power cut may roll back
the last few transactions, which derived indexes detect by generation), foreign keys on, one busy timeout, the
schema applied and its version checked against the ``meta`` table. Writes run in ``BEGIN IMMEDIATE`` transactions
that roll back on any error, so a failed write leaves nothing behind.

>>> import memsift.errors
>>> db = connect(':memory:', 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);', 1,
...              memsift.errors.StoreError, 'the memory store', 'delete it')
>>> with transaction(db, memsift.errors.StoreError, 'the memory store :memory:'):
...     _ = db.execute("INSERT INTO meta VALUES ('k', 'v')")
>>> db.execute("SELECT value FROM meta WHERE key = 'k'").fetchone()
('v',)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from memsift._text import preview, scrub
from memsift.errors import MemsiftError

__all__ = ['BUSY_TIMEOUT_S', 'connect', 'transaction']

BUSY_TIMEOUT_S = 10.0
"""How long a write waits for another connection's write (another process's append or sync) before failing."""


CACHE_KIB = 64 * 1024
"""The most page cache one connection keeps, KiB."""

MMAP_BYTES = 1 << 30
"""How much of a database file SQLite reads through a memory map."""


def connect(
    path: str,
    schema: str,
    version: int,
    error: type[MemsiftError],
    what: str,
    fix: str,
    upgrades: Mapping[int, Sequence[str]] | None = None,
) -> sqlite3.Connection:
    """Open ``path`` (or ``':memory:'``) with memsift's settings and ``schema`` (statements that must be idempotent;
    a ``meta(key, value)`` table among them). A file of an older schema for which ``upgrades`` holds the statements
    (``upgrades[v]`` takes schema ``v`` to ``v + 1``) is upgraded in place, in one transaction, before ``schema`` runs.

    Raises:
        error: the file cannot be opened, or holds another schema ``version`` that no upgrade reaches (the message
            says ``fix``); ``what`` names the file's role in messages (``"the memory store"``).
    """
    try:
        if path != ':memory:':
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        db.execute('PRAGMA foreign_keys = ON')
        db.execute('PRAGMA journal_mode = WAL')
        db.execute('PRAGMA synchronous = NORMAL')
        # Searches read a few hundred scattered chunk rows per query: with SQLite's default 2 MiB page cache most
        # of them come from the OS again on every query. Pages are allocated only as they are read.
        db.execute(f'PRAGMA cache_size = -{CACHE_KIB}')
        # Reads through a memory map instead of a read call per page: a new process (the command line) ranking a
        # few hundred chunk rows went from ~13 ms to ~1 ms. Address space only; the OS pages it in and out.
        db.execute(f'PRAGMA mmap_size = {MMAP_BYTES}')
        _upgrade(db, version, upgrades or {}, error, f'{what} {path}')
        db.executescript(schema)
        with transaction(db, error, f'{what} {path}'):
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(version),))
    except (sqlite3.Error, OSError, ValueError, UnicodeError) as exc:  # also a path no file can have (NUL, U+D800)
        raise error(f'cannot open {what} {preview(path, 200)}: {scrub(str(exc))}') from exc
    if row is not None and row[0] != str(version):
        db.close()
        raise error(f'{path} has {what} schema {row[0]}, this memsift expects {version}; {fix}')
    return db


def _upgrade(
    db: sqlite3.Connection, version: int, upgrades: Mapping[int, Sequence[str]], error: type[MemsiftError], what: str
) -> None:
    """Take a file of an older schema to ``version`` with ``upgrades``, when they reach it (else leave it for the
    version check to refuse)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return  # a new file: no meta table yet
    if row is None or not str(row[0]).isdigit():
        return
    found = int(row[0])
    if found >= version or any(v not in upgrades for v in range(found, version)):
        return
    with transaction(db, error, what):
        for v in range(found, version):
            for statement in upgrades[v]:
                db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


@contextmanager
def transaction(db: sqlite3.Connection, error: type[MemsiftError], what: str) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error; SQLite errors become ``error`` naming ``what``."""
    try:
        db.execute('BEGIN IMMEDIATE')
    except sqlite3.Error as exc:
        raise error(f'cannot write {what}: {exc}') from exc
    try:
        yield
        db.execute('COMMIT')
    except BaseException as exc:
        if db.in_transaction:
            db.execute('ROLLBACK')
        if isinstance(exc, sqlite3.Error):
            raise error(f'cannot write {what}: {exc}') from exc
        raise
