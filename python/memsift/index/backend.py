"""Where an agent's stores live (``store.backend``): SQLite files on this host (the default), or a PostgreSQL
database that many processes and hosts share. This module is the one place that tells them apart.

>>> from memsift.config import load_config
>>> config = load_config({'memory': {'search': {'store': {'path': ':memory:'}}}}, 'main')
>>> store = open_memory_store(config)
>>> type(store).__name__, sessions_target(config)
('MemoryStore', (None, 'store.path'))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from memsift.config import MemoryConfig
from memsift.errors import StoreError
from memsift.index.store import MemoryStore
from memsift.index.writer import WriterLock

if TYPE_CHECKING:
    from memsift.index.pgstore import PgMemoryStore

__all__ = ['Store', 'open_memory_store', 'sessions_target', 'writer_lock']

Store: TypeAlias = 'MemoryStore | PgMemoryStore'
"""Either backend's memory store: the two have the same methods."""


def open_memory_store(config: MemoryConfig) -> Store:
    """The agent's memory store: the SQLite file at ``store.path``, or its rows in the ``store.dsn`` database
    (derived indexes then still live beside ``store.path``, on this host).

    Raises:
        ConfigError: ``postgres`` without a DSN.
        StoreError: the store cannot be opened (the message names the file or the setting).
    """
    if config.store.backend != 'postgres':
        return MemoryStore(config.store.path)
    from memsift._postgres import resolve_dsn
    from memsift.index.pgstore import PgMemoryStore

    dsn, setting = resolve_dsn(config.store.dsn)
    return PgMemoryStore(dsn, config.agent_id, config.store.path, setting=setting)


def writer_lock(store: Store) -> WriterLock:
    """The lock a sync of ``store`` holds: this host's lock file, and on PostgreSQL the agent's advisory lock."""
    if not store.shared:
        return WriterLock(store.path)
    from memsift._postgres import AdvisoryLock

    assert not isinstance(store, MemoryStore)
    shared = AdvisoryLock(
        store.dsn, f'memory:{store.agent}', StoreError, f'the memory of agent {store.agent}', store.setting
    )
    return WriterLock(store.path, shared)


def sessions_target(config: MemoryConfig) -> tuple[str | None, str]:
    """What a :class:`~memsift.sessions.SessionStore` of this config opens, and the setting that names it: the DSN
    on PostgreSQL (from ``store.dsn`` or ``$MEMSIFT_PG_DSN``), else ``None`` (the agent's default session file).

    Raises:
        ConfigError: ``postgres`` without a DSN.
    """
    if config.store.backend != 'postgres':
        return None, 'store.path'
    from memsift._postgres import resolve_dsn

    return resolve_dsn(config.store.dsn)
