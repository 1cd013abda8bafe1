"""One store's list of sessions, cached until it changes, and which of them a caller may see by the name it uses
(a key, ``current``, ``main``, or a session id). The rules themselves are in :mod:`~memsift.sessions.visibility`.

>>> from memsift.sessions import SessionStore
>>> from memsift.sessions.visibility import resolve_caller
>>> event = {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'hello'}}
>>> with SessionStore(':memory:') as store:
...     _ = store.append('agent:main:main', event)
...     store._catalog.visible_key('main', resolve_caller('main', 'main', 'tree', False))
'agent:main:main'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from memsift.sessions.database import Database
from memsift.sessions.tables import read_snapshot, session_exists
from memsift.sessions.visibility import Caller, Session, Snapshot, main_session_key, refusal

__all__ = ['SessionCatalog']


class SessionCatalog:
    """The sessions of one store (``agent_id``'s rows of ``db``), read under the store's ``lock``."""

    def __init__(self, db: Database, lock: threading.RLock, agent_id: str) -> None:
        self._db, self._lock, self._agent_id = db, lock, agent_id
        self._cache: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        """Every session (cached until the ``sessions_version`` counter moves, in this process or another); the
        caller holds the lock."""
        self._cache = read_snapshot(self._db, self._cache)
        return self._cache

    def sessions(self) -> Mapping[str, Session]:
        """Every session by key."""
        with self._lock:
            return self.snapshot().sessions

    def visible(self, caller: Caller, snapshot: Snapshot | None = None) -> frozenset[str]:
        """The keys of the sessions ``caller`` may see (incognito ones never); the caller holds the lock."""
        return (snapshot or self.snapshot()).visible_to(caller, self._agent_id)

    def visible_to(self, caller: Caller, session_key: object = None) -> frozenset[str]:
        """The keys of the sessions ``caller`` may see, or only the one ``session_key`` names.

        Raises:
            SessionAccessError: ``session_key`` names no session of this store that the caller may see.
        """
        if session_key is not None:
            return frozenset((self.visible_key(session_key, caller),))
        with self._lock:
            return self.visible(caller)

    def resolve_key(self, requested: str, caller: Caller) -> str:
        """The key ``requested`` means: ``current`` is the caller's session, ``main``/``global`` its agent's main
        session (where it exists)."""
        if requested == 'current':
            requested = caller.session_key
        if requested in ('main', 'global'):
            main = main_session_key(caller.agent_id or self._agent_id)
            with self._lock:
                exists = session_exists(self._db, main)
            return main if exists else 'main'
        return requested

    def visible_key(self, requested: object, caller: Caller) -> str:
        """The key of the session ``requested`` names, if ``caller`` may see it.

        Raises:
            SessionAccessError: it names no session of this store that the caller may see.
        """
        key = self.resolve_key(requested, caller) if isinstance(requested, str) else ''
        with self._lock:
            snapshot = self.snapshot()
            if key not in snapshot.sessions:  # a session id names its session too
                key = next((k for k, session in snapshot.sessions.items() if session.id == key), key)
            if key not in self.visible(caller, snapshot):
                raise refusal(requested, key, snapshot, caller)
        return key
