"""Where an agent's stores live (``store.backend``): SQLite files on this host (the default), or a PostgreSQL
database that many processes and hosts share. :func:`choose_backend` is the one place that reads the choice; code
above it asks a store's capabilities (:class:`~memsift.index.protocol.Store`), never its class.

>>> from memsift.config import load_config
>>> config = load_config({'agents': {'defaults': {'memorySearch': {'store': {'path': ':memory:'}}}}}, 'main')
>>> store = open_memory_store(config)
>>> choose_backend(config), type(store).__name__, sessions_target(config)
(Backend(name='sqlite', dsn=None, setting='store.path'), 'MemoryStore', (None, 'store.path'))
"""

from __future__ import annotations

import warnings
from typing import Literal, NamedTuple

from memsift._postgres import Dsn, resolve_dsn, resolve_read_dsns
from memsift.config import MemoryConfig
from memsift.errors import ConfigWarning
from memsift.index.protocol import Store
from memsift.index.writer import WriterLock

__all__ = ['Backend', 'Store', 'choose_backend', 'open_memory_store', 'sessions_target', 'writer_lock']


class Backend(NamedTuple):
    """The backend a config chose, and where it is."""

    name: Literal['sqlite', 'postgres']
    dsn: Dsn | None
    """The database, on PostgreSQL (from ``store.dsn`` or ``$MEMSIFT_PG_DSN``)."""
    setting: str
    """The setting that names where the stores are, for messages (``store.path``, ``store.dsn``, ``MEMSIFT_PG_DSN``)."""


def choose_backend(config: MemoryConfig) -> Backend:
    """The backend ``config`` chooses (``store.backend``), with its database on PostgreSQL: a :class:`Dsn`, which
    the session store opens as a database whatever its form (it guesses only for a target not chosen by config).

    Raises:
        ConfigError: ``postgres`` without a DSN.
    """
    if config.store.backend != 'postgres':
        return Backend('sqlite', None, 'store.path')
    dsn, setting = resolve_dsn(config.store.dsn)
    return Backend('postgres', dsn, setting)


def open_memory_store(config: MemoryConfig) -> Store:
    """The agent's memory store: the SQLite file at ``store.path``, or its rows in the ``store.dsn`` database
    (derived indexes then still live beside ``store.path``, on this host), read from ``store.readDsn``'s replicas
    where they have replayed enough.

    Raises:
        ConfigError: ``postgres`` without a DSN.
        StoreError: the store cannot be opened (the message names the file or the setting).
    """
    backend = choose_backend(config)
    if backend.dsn is None:
        from memsift.index.store import MemoryStore

        if config.store.read_dsn:
            message = 'store.readDsn is set but store.backend is "sqlite": read replicas are for "postgres"; ignored'
            warnings.warn(message, ConfigWarning, stacklevel=2)

        return MemoryStore(config.store.path)
    from memsift.index.pgstore import PgMemoryStore

    return PgMemoryStore(
        backend.dsn,
        config.agent_id,
        config.store.path,
        setting=backend.setting,
        replicas=resolve_read_dsns(config.store.read_dsn),
        max_lag_ms=config.store.replica_max_lag_ms,
    )


def writer_lock(store: Store) -> WriterLock:
    """The lock a sync of ``store`` holds: this host's lock file, and where other hosts write the store its lock in
    the database (:meth:`~memsift.index.protocol.Store.database_lock`)."""
    return WriterLock(store.path, store.database_lock())


def sessions_target(config: MemoryConfig) -> tuple[str | None, str]:
    """What a :class:`~memsift.sessions.SessionStore` of this config opens, and the setting that names it: the DSN
    on PostgreSQL (from ``store.dsn`` or ``$MEMSIFT_PG_DSN``), else ``None`` (the agent's default session file).

    Raises:
        ConfigError: ``postgres`` without a DSN.
    """
    backend = choose_backend(config)
    return backend.dsn, backend.setting
