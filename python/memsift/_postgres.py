"""The one way memsift talks to PostgreSQL (``store.backend: "postgres"``): connecting, the schema and its version,
transactions, the cross-process writer lock, and error messages that name the setting and never the password.

memsift shares one database between many processes and hosts. Each store keeps one connection (autocommit; writes
run in explicit transactions), reconnects on the next call after the server went away, and turns every driver error
into the store's own typed error. Schemas are created under an advisory lock, so processes starting together do not
race on ``CREATE TABLE``; a database written by a newer memsift is refused, not altered.

>>> mask_dsn('postgresql://ana:s3cret@db.internal:5432/memory')
'postgresql://ana:***@db.internal:5432/memory'
>>> mask_dsn('host=db user=ana password=s3cret dbname=memory')
'host=db user=ana password=*** dbname=memory'
>>> is_dsn('postgres://db/memory'), is_dsn('~/.memsift/memory/main.sqlite'), is_dsn(Dsn('host=db dbname=memory'))
(True, False, True)
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memsift._text import scrub
from memsift.errors import ConfigError, MemsiftError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    'DSN_ENV',
    'READ_DSN_ENV',
    'AdvisoryLock',
    'Dsn',
    'Postgres',
    'is_dsn',
    'mask_dsn',
    'resolve_dsn',
    'resolve_read_dsns',
    'writer_lock_key',
    'xact_lock',
]

DSN_ENV = 'MEMSIFT_PG_DSN'
"""The environment variable that gives the DSN when ``store.dsn`` is not set (the password stays out of config)."""

READ_DSN_ENV = 'MEMSIFT_PG_READ_DSN'
"""The environment variable that names one read replica when ``store.readDsn`` is not set."""

CONNECT_TIMEOUT_S = 5
"""How long connecting waits for a server that does not answer."""

LOCK_POLL_S = 0.05
"""How often a waiting writer asks for the advisory lock again."""

_URL = re.compile(r'^(postgres(?:ql)?://)([^@/?#]*@)?', re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
T = TypeVar('T')
_SCHEMA_LOCK = 0x6D656D73  # 'mems': one advisory lock id for schema set-up, whatever the database


class Dsn(str):
    """A DSN that config named (``store.dsn`` or ``$MEMSIFT_PG_DSN`` under ``store.backend: "postgres"``): a store
    target that is a PostgreSQL database whatever its form, a libpq keyword string (``host=db dbname=memory``) as
    well as a URL. The backend config chose travels with the target, so a store opened from it never guesses."""

    __slots__ = ()


def is_dsn(target: object) -> bool:
    """Whether a store target is a PostgreSQL DSN rather than a path: one config named (:class:`Dsn`), or a string
    written as a ``postgres://`` or ``postgresql://`` URL."""
    return isinstance(target, Dsn) or (isinstance(target, str) and _URL.match(target.strip()) is not None)


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***``: the form every message and status shows (printable, and cut at
    200 characters)."""

    def url(match: re.Match[str]) -> str:
        user = match.group(2) or ''
        if ':' in user:
            user = user.split(':', 1)[0] + ':***@'
        return match.group(1) + user

    masked = _URL.sub(url, dsn, count=1)
    masked = re.sub(r'([?&]password=)[^&#]*', r'\1***', masked, flags=re.IGNORECASE)
    masked = scrub(_KEYWORD_PASSWORD.sub(r'\1***', masked))
    return masked if len(masked) <= 200 else masked[:200] + '…'


def resolve_dsn(configured: str | None) -> tuple[Dsn, str]:
    """``(dsn, setting)``: ``store.dsn`` when set, else ``$MEMSIFT_PG_DSN``; ``setting`` names where it came from.

    Raises:
        ConfigError: neither is set.
    """
    if configured and configured.strip():
        return Dsn(configured.strip()), 'store.dsn'
    env = os.environ.get(DSN_ENV, '').strip()
    if env:
        return Dsn(env), DSN_ENV
    raise ConfigError(
        'store.backend is "postgres" but no database is named: set store.dsn '
        f'(postgresql://user@host:5432/db) or the {DSN_ENV} environment variable'
    )


def resolve_read_dsns(configured: Sequence[str]) -> list[tuple[Dsn, str]]:
    """``[(dsn, setting)]`` of the read replicas: ``store.readDsn`` (one DSN or a list) when set, else the one DSN in
    ``$MEMSIFT_PG_READ_DSN``; empty when neither is set (every read goes to the primary).

    >>> [(str(d), s) for d, s in resolve_read_dsns(['postgresql://r1/m', ' ', 'postgresql://r2/m'])]
    [('postgresql://r1/m', 'store.readDsn[0]'), ('postgresql://r2/m', 'store.readDsn[2]')]
    """
    named = [(Dsn(d.strip()), f'store.readDsn[{i}]') for i, d in enumerate(configured) if d.strip()]
    if len(configured) == 1 and named:
        named = [(named[0][0], 'store.readDsn')]
    env = os.environ.get(READ_DSN_ENV, '').strip()
    return named or ([(Dsn(env), READ_DSN_ENV)] if env else [])


def _secret(dsn: str) -> str | None:
    """The password written in ``dsn``, to scrub from driver messages that might echo it."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        value = conninfo_to_dict(dsn).get('password')
    except Exception:  # an unparsable DSN: the driver's own error says so, and mask_dsn covers the text
        return None
    return str(value) if value else None


class Postgres:
    """One connection to the database at ``dsn``, for one store; reconnects on the next call after a failure.

    Not thread-safe by itself: each store serializes its calls on its own lock, as with SQLite.

    Args:
        dsn: The DSN (libpq keyword string or ``postgresql://`` URL).
        schema: Idempotent DDL (``CREATE … IF NOT EXISTS``) for this store's tables.
        version_key: The ``memsift_meta`` key that records this schema's version.
        version: The schema version this memsift writes.
        error: The store's error type (:class:`~memsift.errors.StoreError`, ``SessionStoreError``).
        what: The store's role in messages (``"the memory store"``).
        setting: Where the DSN came from (``store.dsn``), named in messages.
        upgrades: ``upgrades[v]``: the statements that take schema ``v`` to ``v + 1``, run once, under the schema
            lock, by the first process of the newer memsift; a database no upgrade reaches is refused.
        replica: A read replica (a hot standby of the database): the schema version is checked, never created or
            upgraded (a standby refuses writes; the primary's set-up reaches it by replication).
        connect: Connect now (an error then raises here); False: on the first call.
    """

    def __init__(
        self,
        dsn: str,
        schema: str,
        version_key: str,
        version: int,
        error: type[MemsiftError],
        what: str,
        setting: str = 'store.dsn',
        upgrades: Mapping[int, Sequence[str]] | None = None,
        *,
        replica: bool = False,
        connect: bool = True,
    ) -> None:
        self.dsn = dsn
        self.shown = mask_dsn(dsn)
        self._secret = _secret(dsn)
        self._schema, self._version_key, self._version = schema, version_key, version
        self._upgrades = dict(upgrades or {})
        self.error, self.what, self.setting = error, what, setting
        self.replica = replica
        self._conn: psycopg.Connection[Any] | None = None
        if connect:
            self.connection()

    # ------------------------------------------------------------------ connecting

    def _describe(self, exc: BaseException) -> str:
        """The driver's message on one line, without the password."""
        text = ' '.join(str(exc).split()) or type(exc).__name__
        if self._secret:
            text = text.replace(self._secret, '***')
        return mask_dsn(text)

    def fail(self, doing: str, exc: BaseException) -> MemsiftError:
        """The store's error for a driver failure while ``doing``, naming the database and the setting."""
        return self.error(f'cannot {doing} {self.what} at {self.shown} ({self.setting}): {self._describe(exc)}')

    def connection(self) -> psycopg.Connection[Any]:
        """The open connection, (re)connecting and checking the schema when there is none.

        Raises:
            error: the server does not answer, refuses the credentials, or holds a newer schema.
        """
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        if conn is not None:
            conn.close()  # broken (the server went away): start again
        self._conn = None
        import psycopg

        try:
            # A replica is one choice among others: a short wait, then the reads go elsewhere (2 s: libpq's least).
            timeout = 2 if self.replica else CONNECT_TIMEOUT_S
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=timeout)
        except (psycopg.Error, UnicodeError, ValueError) as exc:  # unusable text in the DSN: the driver's own types
            raise self.error(
                f'cannot connect to {self.what} at {self.shown} ({self.setting}): {self._describe(exc)}; check that '
                f'the server runs and that {self.setting} names it with the right user and password'
            ) from None
        try:
            found = self._schema_version(conn) if self.replica else self._apply_schema(conn)
        except psycopg.Error as exc:
            conn.close()
            raise self.fail('set up', exc) from None
        if found is None and self.replica:
            conn.close()
            raise self.error(
                f'{self.what} at {self.shown} ({self.setting}) has no memsift tables: check that {self.setting} names '
                'a replica of store.dsn, and that it has replayed the set-up a first process made there'
            )
        if found is not None and found != str(self._version):
            conn.close()
            newer = found.isdigit() and int(found) > self._version
            fix = 'upgrade memsift on this host' if newer else 'run `memsift migrate` or recreate the tables'
            raise self.error(
                f'{self.what} at {self.shown} ({self.setting}) has schema {found}, this memsift expects '
                f'{self._version}; {fix}'
            )
        self._conn = conn
        return conn

    def _schema_version(self, conn: psycopg.Connection[Any]) -> str | None:
        """The recorded schema version, or None where there is none (a replica only reads it)."""
        if conn.execute("SELECT to_regclass('memsift_meta')").fetchall() == [(None,)]:
            return None
        row = conn.execute('SELECT value FROM memsift_meta WHERE key = %s', (self._version_key,)).fetchone()
        return None if row is None else str(row[0])

    def _apply_schema(self, conn: psycopg.Connection[Any]) -> str | None:
        """Create the tables if missing (under an advisory lock) and return the version found, or None if new.

        A database whose version is recorded already has the schema (both are written in one transaction): its DDL is
        not run again, since ``CREATE INDEX IF NOT EXISTS`` locks the table and would wait for writers in flight."""
        found = self._schema_version(conn)
        if found is not None and not self._upgradable(found):
            return found
        with conn.transaction():
            xact_lock(conn, _SCHEMA_LOCK)
            conn.execute('CREATE TABLE IF NOT EXISTS memsift_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
            row = conn.execute('SELECT value FROM memsift_meta WHERE key = %s', (self._version_key,)).fetchone()
            if row is not None and self._upgradable(str(row[0])):
                for v in range(int(row[0]), self._version):
                    for statement in self._upgrades[v]:
                        conn.execute(statement)
                conn.execute(
                    'UPDATE memsift_meta SET value = %s WHERE key = %s', (str(self._version), self._version_key)
                )
                row = (str(self._version),)
            if row is not None and row[0] != str(self._version):
                return str(row[0])  # another schema: touch nothing
            conn.execute(self._schema)
            if row is None:
                conn.execute(
                    'INSERT INTO memsift_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING',
                    (self._version_key, str(self._version)),
                )
        return None if row is None else str(row[0])

    def _upgradable(self, found: str) -> bool:
        """An older schema version that the upgrades take to this one."""
        return (
            found.isdigit()
            and int(found) < self._version
            and all(v in self._upgrades for v in range(int(found), self._version))
        )

    @property
    def connected(self) -> bool:
        """A connection is open and was not found broken (the server may still have gone away since)."""
        return self._conn is not None and not self._conn.closed and not self._conn.broken

    # ------------------------------------------------------------------ statements

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> psycopg.Cursor[Any]:
        """One statement in its own transaction (autocommit).

        Raises:
            error: the statement failed (the message names the database and the setting).
        """
        doing = 'read' if sql.lstrip()[:6].upper() == 'SELECT' else 'write'
        # A write is not sent twice: it may have committed before the connection died.
        return self.run(doing, lambda conn: conn.execute(sql, params), resend=doing == 'read')

    def run(self, doing: str, work: Callable[[psycopg.Connection[Any]], T], *, resend: bool = True) -> T:
        """``work(connection)``; with ``resend``, once more on a new connection when the server had dropped the idle
        one (it restarted since the last call), for work that cannot have taken effect on a dead connection (a read,
        a ``BEGIN``). Driver errors become the store's error, naming the database and the setting."""
        import psycopg

        conn = self.connection()
        try:
            return work(conn)
        except psycopg.Error as exc:
            if not (resend and conn.broken and isinstance(exc, psycopg.OperationalError)):
                raise self.fail(doing, exc) from None
        try:
            return work(self.connection())
        except psycopg.Error as exc:
            raise self.fail(doing, exc) from None

    @contextlib.contextmanager
    def transaction(self, doing: str = 'write', *, repeatable: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A transaction on the connection, rolled back on any error; driver errors become the store's error.

        ``repeatable``: every read inside sees one snapshot (``REPEATABLE READ``), as SQLite's read transaction.
        """
        import psycopg

        try:
            with contextlib.ExitStack() as stack:
                conn = self.run(doing, lambda conn: (stack.enter_context(conn.transaction()), conn)[1])
                if repeatable:
                    conn.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
                yield conn
        except psycopg.Error as exc:
            raise self.fail(doing, exc) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# ---------------------------------------------------------------------- advisory locks
#
# Writers of one agent's store are serialized across processes and hosts by an advisory lock whose id is
# :func:`writer_lock_key`: held for one write transaction (:func:`xact_lock`: the session store's writes, the schema
# set-up), or for a whole sync on a connection of its own (:class:`AdvisoryLock`: the memory store's sync).


def writer_lock_key(store: str, agent: str) -> int:
    """The advisory-lock id of ``agent``'s writer lock of ``store`` (``memory``, ``sessions``): a signed 32-bit
    crc32 of ``store:agent``, so every process and host computes the same id.

    >>> writer_lock_key('memory', 'main') == writer_lock_key('memory', 'main') != writer_lock_key('sessions', 'main')
    True
    """
    return zlib.crc32(f'{store}:{agent}'.encode('utf-8', 'surrogatepass')) - (1 << 31)


def xact_lock(conn: psycopg.Connection[Any], key: int) -> None:
    """Wait for the advisory lock ``key`` inside the transaction open on ``conn``; the server frees it at its end
    (commit, rollback, or the connection's loss)."""
    conn.execute('SELECT pg_advisory_xact_lock(%s)', (key,))


class AdvisoryLock:
    """A cross-host writer lock held for longer than a transaction (a sync): the advisory lock
    :func:`writer_lock_key` names, held at session level on its own connection (the server frees it when the
    holder's connection ends, a killed process included).

    Args:
        dsn: The database.
        store: Which store's writer lock (``memory``).
        agent: Whose.
        error: The error raised when the database cannot be reached.
        what: Names the lock's owner in messages.
    """

    def __init__(
        self, dsn: str, store: str, agent: str, error: type[MemsiftError], what: str, setting: str = 'store.dsn'
    ) -> None:
        self.dsn, self.shown, self.setting = dsn, mask_dsn(dsn), setting
        self.key = writer_lock_key(store, agent)
        self.error, self.what = error, what
        self._local = threading.Lock()  # threads of one process wait here, not on the server
        self._conn: psycopg.Connection[Any] | None = None

    def acquire(self, timeout: float) -> bool:
        """Take the lock, waiting up to ``timeout`` seconds (0: only if free); False when another holder kept it."""
        import psycopg

        deadline = time.monotonic() + timeout
        if not (self._local.acquire(timeout=timeout) if timeout > 0 else self._local.acquire(blocking=False)):
            return False
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except (psycopg.Error, UnicodeError, ValueError) as exc:
            self._local.release()
            text = mask_dsn(' '.join(str(exc).split())).replace(_secret(self.dsn) or '\0', '***')
            raise self.error(
                f'cannot take the writer lock of {self.what} at {self.shown} ({self.setting}): {text}'
            ) from None
        try:
            while True:
                if conn.execute('SELECT pg_try_advisory_lock(%s)', (self.key,)).fetchall() == [(True,)]:
                    self._conn = conn
                    return True
                if time.monotonic() >= deadline:
                    break
                time.sleep(LOCK_POLL_S)
        except BaseException:
            conn.close()
            self._local.release()
            raise
        conn.close()
        self._local.release()
        return False

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a dead connection has already freed the lock
                conn.execute('SELECT pg_advisory_unlock(%s)', (self.key,))
            conn.close()
        self._local.release()
