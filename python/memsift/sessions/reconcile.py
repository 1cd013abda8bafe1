"""Catching the full-text index up with sessions marked for rebuild (imported, or branched away from their leaf): a
search rebuilds the stale sessions it may see at once when they are small, and leaves the rest to one background
thread, answering ``indexing: true`` meanwhile.

>>> import threading
>>> from memsift._core import Analyzer
>>> from memsift.sessions.tables import open_database, read_snapshot
>>> db, lock = open_database(':memory:'), threading.RLock()
>>> writer = Writer(db, Analyzer(), str)
>>> with writer.transaction():  # an event off the active branch (its parent is not the leaf): the session goes stale
...     writer.append('s', {'type': 'message', 'id': 'm1', 'parentId': 'x'}, '{}', None, index=True)
True
>>> reconciler = Reconciler(writer, lock, lambda: read_snapshot(db, None), max_events=10, max_bytes=1000)
>>> reconciler.stale(), reconciler.rebuild_all(), reconciler.stale()
([('s', 1, 2)], 1, [])
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from memsift.sessions.tables import stale_sessions
from memsift.sessions.visibility import Snapshot
from memsift.sessions.writer import Writer

__all__ = ['Reconciler']


class Reconciler:
    """Rebuilds a store's stale sessions: on demand, for a search, and in a background thread.

    Args:
        writer: Writes the store's tables.
        lock: The store's lock, held for each database access (a rebuild holds it for one session).
        snapshot: The store's current :class:`~memsift.sessions.visibility.Snapshot` (called with ``lock`` held).
        max_events: A search rebuilds a session of at most this many events itself, ...
        max_bytes: ... and this many bytes; a larger one is left to the background thread.
    """

    def __init__(
        self,
        writer: Writer,
        lock: AbstractContextManager[Any],
        snapshot: Callable[[], Snapshot],
        *,
        max_events: int,
        max_bytes: int,
    ) -> None:
        self._writer = writer
        self._lock = lock
        self._snapshot = snapshot
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._thread: threading.Thread | None = None
        self._closed = False

    def close(self) -> None:
        """Stop the background thread (after the rebuild it is in, waiting at most 30 s); nothing starts again."""
        with self._lock:
            self._closed = True
        if self._thread is not None:
            self._thread.join(timeout=30)

    def stale(self, keys: Iterable[str] | None = None) -> list[tuple[str, int, int]]:
        """``(key, events, bytes)`` of the sessions (among ``keys``) waiting for a rebuild; the lock must be held."""
        stale = self._snapshot().stale
        if keys is not None:
            stale &= frozenset(keys)
        if not stale:
            return []
        return [row for row in stale_sessions(self._writer.db) if row[0] in stale]

    def rebuild(self, session_key: str) -> None:
        """Recompute the active branch from the leaf and re-index it, in one transaction."""
        with self._lock, self._writer.transaction():
            self._writer.rebuild(session_key)

    def rebuild_all(self) -> int:
        """Rebuild every session marked for rebuild now; returns how many were rebuilt."""
        with self._lock:
            stale = self.stale()
        for key, _, _ in stale:
            self.rebuild(key)
        return len(stale)

    def catch_up(self, visible: frozenset[str]) -> bool:
        """Rebuild stale visible sessions: small ones now, large ones in the background. True if any remain."""
        with self._lock:
            if not visible & self._snapshot().stale:
                return False
        with self._lock:
            stale = self.stale(visible)
        pending = False
        for key, events, size in stale:
            if events <= self._max_events and size <= self._max_bytes:
                self.rebuild(key)
            else:
                pending = True
        if pending:
            self._start()
        return pending

    def _start(self) -> None:
        with self._lock:
            if self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(target=self._loop, name='memsift-sessions-reconcile', daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                stale = self.stale()
            if not stale:
                return
            self.rebuild(stale[0][0])  # one session per lock hold: searches and appends interleave
