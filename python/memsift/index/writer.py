"""One writer per index, across processes: the lock file ``<store>.lock`` beside the SQLite store.

Every process that writes an index (store and BM25 folder) holds it while it writes: the others wait (an explicit
sync) or leave the work to the holder (a sync started by a search). The kernel frees it when a holder dies.

On PostgreSQL the store is shared by hosts, so a sync also holds the agent's advisory lock in the database (freed
by the server when the holder's connection ends); the lock file then guards only this host's derived folder, which
catching up with other hosts' writes also writes.

>>> import tempfile, pathlib
>>> lock = WriterLock(pathlib.Path(tempfile.mkdtemp()) / 'index.sqlite')
>>> with lock.holding(wait=False) as held:
...     held
True
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memsift.errors import StoreError

if TYPE_CHECKING:
    from filelock import FileLock

    from memsift._postgres import AdvisoryLock

__all__ = ['WRITER_WAIT_S', 'WriterLock']

WRITER_WAIT_S = 600.0
"""How long a sync waits for another process's sync of the same index (a watcher, ``memsift index``) to finish."""


class WriterLock:
    """The writer lock of the index stored at ``db_path`` (no lock for ``':memory:'``: one process only)."""

    def __init__(self, db_path: str | os.PathLike[str], database: AdvisoryLock | None = None) -> None:
        self.db_path = str(db_path)
        self.database = database
        """The store's writer lock in its database, where other hosts write it (PostgreSQL:
        :meth:`memsift.index.protocol.Store.database_lock`), taken by :meth:`holding` with ``store=True``."""
        self._file_lock: FileLock | None = None
        self._made = threading.Lock()

    def _lock(self) -> FileLock:
        """The file lock, made on first use: a process that only searches never loads filelock."""
        with self._made:
            if self._file_lock is None:
                from filelock import FileLock

                self._file_lock = FileLock(
                    Path(self.db_path).with_suffix('.lock'),
                    thread_local=True,
                    preserve_lock_file=True,
                    fallback_to_soft=False,
                )
            return self._file_lock

    @contextlib.contextmanager
    def holding(self, wait: bool, *, store: bool = True) -> Iterator[bool]:
        """Hold the lock for the block; yields False, without it, when another process (or thread) is writing and
        ``wait`` is False. ``store=False`` takes only this host's lock (catching up a derived index writes no store).

        Raises:
            StoreError: ``wait`` and the other writer has not finished within :data:`WRITER_WAIT_S`.
        """
        with self._holding_file(wait) as held:
            if not held or not store or self.database is None:
                yield held
                return
            if not self.database.acquire(WRITER_WAIT_S if wait else 0):
                if wait:
                    raise StoreError(
                        f'another process has been syncing {self.database.what} at {self.database.shown} for '
                        f'{WRITER_WAIT_S:.0f} s; try again when its sync ends (memsift status shows the index)'
                    )
                yield False
                return
            try:
                yield True
            finally:
                self.database.release()

    @contextlib.contextmanager
    def _holding_file(self, wait: bool) -> Iterator[bool]:
        if self.db_path == ':memory:':
            yield True
            return
        from filelock import Timeout

        lock = self._lock()
        try:
            lock.acquire(timeout=WRITER_WAIT_S if wait else 0, poll_interval=0.02)
        except Timeout:
            if wait:
                raise StoreError(
                    f'another process has been writing the index {self.db_path} for {WRITER_WAIT_S:.0f} '
                    's; try again when its sync ends (memsift status shows the index)'
                ) from None
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
