"""The session store's connection, to a SQLite file or to a PostgreSQL database many agents and hosts share: one
interface, so the modules above write each statement once per dialect (a :class:`Sql` pair) and keep one logic.

Statements take named parameters (``:name``) in both dialects. A list parameter is a JSON array in SQLite (read
with ``json_each``) and an array in PostgreSQL. On PostgreSQL every statement also gets ``:agent``, the store's agent:
every row carries it and every statement filters by it, so one agent's store never reads another's rows.

>>> db = SqliteDatabase(':memory:', 'main', 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);')
>>> db.execute(Sql('SELECT value FROM json_each(:keys)', 'SELECT unnest(:keys)'), {'keys': ['a', 'b']}).fetchall()
[('a',), ('b',)]
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._postgres import Postgres, writer_lock_key, xact_lock
from memsift._sql import Sql, pyformat
from memsift._sqlite import BUSY_TIMEOUT_S, connect, transaction
from memsift._text import without_nul
from memsift.errors import SessionStoreError
from memsift.sessions.fts5 import fts5_terms

if TYPE_CHECKING:
    import psycopg

__all__ = ['Database', 'PostgresDatabase', 'Sql', 'SqliteDatabase']

_TEXTS_KEPT = 256


class Database:
    """A store's connection (not thread-safe: the store calls it under its lock).

    Attributes:
        dialect: ``sqlite`` or ``postgres``.
        shown: Where the store lives, as messages and ``status()`` show it (a DSN without its password).
        agent: The store's agent.
    """

    dialect: str
    shown: str
    agent: str

    def execute(self, sql: Sql | str, params: Mapping[str, Any] | None = None) -> Any:
        """Run one statement (a plain string is the same text in both dialects); returns its cursor."""
        raise NotImplementedError

    def executemany(self, sql: Sql | str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Run one statement per parameter set (inside :meth:`transaction`); returns the rows changed."""
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction, rolled back on any error; database errors become ``SessionStoreError``."""
        raise NotImplementedError

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """A read transaction: every statement inside reads the same state of the database."""
        raise NotImplementedError

    def fts_row(self, tokens: str) -> dict[str, Any]:
        """The full-text columns of a message whose analyzer tokens (joined by spaces) are ``tokens``."""
        return {'tokens': tokens}

    def close(self) -> None:
        raise NotImplementedError


class SqliteDatabase(Database):
    """A SQLite file (or ``':memory:'``), as memsift opens every file (:func:`memsift._sqlite.connect`)."""

    dialect = 'sqlite'

    def __init__(self, path: str, agent: str, schema: str = '', version: int = 1) -> None:
        self.shown, self.agent = path, agent
        self.conn = connect(
            path if path == ':memory:' else str(Path(path).expanduser()),
            schema,
            version,
            SessionStoreError,
            'the session store',
            'move the file aside and re-import the transcripts',
        )

    def execute(self, sql: Sql | str, params: Mapping[str, Any] | None = None) -> sqlite3.Cursor:
        return self.conn.execute(sql.sqlite if isinstance(sql, Sql) else sql, _json_lists(params))

    def executemany(self, sql: Sql | str, rows: Iterable[Mapping[str, Any]]) -> int:
        return self.conn.executemany(sql.sqlite if isinstance(sql, Sql) else sql, map(_json_lists, rows)).rowcount

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return transaction(self.conn, SessionStoreError, f'the session store {self.shown}')

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        self.conn.execute('BEGIN')
        try:
            yield
        finally:
            self.conn.execute('COMMIT')

    def close(self) -> None:
        self.conn.close()


def _json_lists(params: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: json.dumps(list(v)) if isinstance(v, (list, tuple)) else v for k, v in (params or {}).items()}


class PostgresDatabase(Database):
    """One agent's rows of a PostgreSQL database (:class:`memsift._postgres.Postgres`: one connection, reconnected
    after the server went away, errors that name the setting and never the password).

    Writes of one agent are serialized across processes and hosts, as ``BEGIN IMMEDIATE`` serializes them in SQLite:
    each write transaction first takes the agent's advisory lock (:func:`memsift._postgres.xact_lock`). So sequence
    numbers (``seq``, ``n``) become visible in the order they were drawn, and a reader that catches up with "rows past
    the last one I saw" (the ranked index, the vector leg) misses none. A statement or transaction that finds the
    connection dead (the server restarted since the last call) is retried once on a new connection; a write is never
    retried once begun.

    PostgreSQL text cannot hold NUL: it is stored as U+FFFD (keys and ids only; event lines are JSON, which escapes it).
    """

    dialect = 'postgres'

    def __init__(
        self,
        dsn: str,
        agent: str,
        schema: str,
        version: int,
        setting: str,
        upgrades: Mapping[int, Sequence[str]] | None = None,
    ) -> None:
        self.agent = agent
        self._lock_key = writer_lock_key('sessions', agent)
        self._pg = Postgres(
            dsn, schema, 'sessions_schema_version', version, SessionStoreError, 'the session store', setting, upgrades
        )
        self.shown = self._pg.shown
        self._open: psycopg.Connection[Any] | None = None  # the connection of the transaction in progress
        self._doing = 'read'  # what that transaction does, for messages
        self._texts: dict[str, str] = {}

    def _text(self, sql: Sql | str) -> str:
        """The statement in psycopg's form: ``:name`` -> ``%(name)s``, a literal ``%`` doubled (so a PostgreSQL
        text holds no ``:word`` inside a string literal; ``::type`` casts are left alone)."""
        source = sql.postgres if isinstance(sql, Sql) else sql
        text = self._texts.get(source)
        if text is None:
            if len(self._texts) >= _TEXTS_KEPT:  # lookups build one text per query shape: keep the cache small
                self._texts.clear()
            text = self._texts[source] = pyformat(source)
        return text

    def _params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return {'agent': self.agent, **{k: _no_nul(v) for k, v in (params or {}).items()}}

    def _run(self, doing: str, work: Any) -> Any:
        """``work(connection)``: in the transaction in progress, or on its own, retried once on a new connection
        when the old one turns out dead (only reads and ``BEGIN`` run on their own: nothing half-done is redone)."""
        import psycopg

        if self._open is not None:
            try:
                return work(self._open)
            except psycopg.Error as exc:
                raise self._pg.fail(doing, exc) from None
        return self._pg.run(doing, work)

    def execute(self, sql: Sql | str, params: Mapping[str, Any] | None = None) -> psycopg.Cursor[Any]:
        text, values = self._text(sql), self._params(params)
        return self._run(self._doing, lambda conn: conn.execute(text, values))

    def executemany(self, sql: Sql | str, rows: Iterable[Mapping[str, Any]]) -> int:
        assert self._open is not None, 'executemany runs inside a transaction'
        text, values = self._text(sql), [self._params(row) for row in rows]

        def work(conn: psycopg.Connection[Any]) -> int:
            with conn.cursor() as cursor:
                cursor.executemany(text, values)
                return cursor.rowcount

        return int(self._run('write', work)) if values else 0

    @contextlib.contextmanager
    def _transaction(self, begin: str, doing: str, *, write: bool) -> Iterator[None]:
        import psycopg

        assert self._open is None, 'transactions do not nest'
        conn = self._run(doing, lambda conn: (conn.execute(begin), conn)[1])
        self._open, self._doing = conn, doing
        try:
            if write:  # one writer per agent at a time, whichever process or host (see the class docstring)
                self._run(doing, lambda conn: xact_lock(conn, self._lock_key))
            yield
            self._run(doing, lambda conn: conn.execute('COMMIT'))
        except BaseException:
            if not conn.broken:
                with contextlib.suppress(psycopg.Error):
                    conn.execute('ROLLBACK')
            raise
        finally:
            self._open, self._doing = None, 'read'

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        # A writer waits for another one at most as long as SQLite's busy timeout, then fails as SQLite does.
        begin = f"BEGIN; SET LOCAL lock_timeout = '{round(BUSY_TIMEOUT_S * 1000)}ms'"
        return self._transaction(begin, 'write', write=True)

    def reading(self) -> contextlib.AbstractContextManager[None]:
        # A search's counts read one agent's rows through indexes: parallel workers took longer to start than they
        # saved (a term in 15k of 50k messages: 120 ms with them, 45 ms without).
        begin = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL max_parallel_workers_per_gather = 0'
        return self._transaction(begin, 'read', write=False)

    def fts_row(self, tokens: str) -> dict[str, Any]:
        terms = fts5_terms(tokens)
        return {'tokens': tokens, 'terms': terms, 'length': len(terms)}

    def close(self) -> None:
        self._pg.close()


def _no_nul(value: Any) -> Any:
    if isinstance(value, str):
        return without_nul(value)
    if isinstance(value, list):
        return [_no_nul(v) for v in value]
    return value
