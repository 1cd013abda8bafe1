"""The read path of ``sessions_search`` in one store: the all-terms lookup, then the ranked top-up (keyword leg,
merged with the vector leg when the store has one), over the sessions the caller may see.

:class:`~memsift.sessions.store.SessionStore` decides which sessions are visible (and refuses the others), then hands
them here; the rules of a hit (snippets, order, ``truncated``) are in :mod:`~memsift.sessions.query`.

>>> from memsift.sessions import SessionStore
>>> event = {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'deploy to Tokyo on Friday'}}
>>> with SessionStore(':memory:') as store:
...     _ = store.append('agent:main:main', event)
...     [hit['match'] for hit in store.search('when do we deploy to Tokyo', caller='main')['results']]
['partial']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from memsift._core import Analyzer
from memsift._record import record
from memsift.config import SessionSearchMode
from memsift.errors import SessionAccessError
from memsift.redact import Redactor
from memsift.search.when import TimeWords, in_range, read_query_time, time_factors
from memsift.sessions.database import Database
from memsift.sessions.pgquery import Lookup
from memsift.sessions.query import find_messages, query_clauses, search_results
from memsift.sessions.ranked import MessageMirror, rows_of, sessions_of
from memsift.sessions.reconcile import Reconciler
from memsift.sessions.vectors import MessageVectors
from memsift.sessions.visibility import Caller, Snapshot

if TYPE_CHECKING:
    from memsift.results import SessionHit
    from memsift.sessions.catalog import SessionCatalog

__all__ = ['TIMED_DEPTH', 'VECTOR_MERGE_DEPTH', 'SessionSearch', 'SessionTime', 'StoreHits', 'gather']

VECTOR_MERGE_DEPTH = 50
"""Keyword hits merged with the vector leg's (more than the few a top-up needs, so both legs can vote)."""
TIMED_DEPTH = 200
"""Hits read per store when time words or filters will reorder or drop some (the answer still holds ``limit``)."""


class StoreHits(NamedTuple):
    """One store's answer: its hits best first, whether some session waits for its index, and the vector leg's
    report (if any)."""

    results: list[SessionHit]
    indexing: bool
    debug: dict[str, Any]


class SessionSearch:
    """``sessions_search`` over one store's visible sessions.

    Args:
        db: The store's database.
        lock: The store's lock (one connection: every read holds it).
        snapshot: Reads the store's session list (cached), under the lock.
        reconciler: Indexes sessions that wait for it before they are searched.
        analyzer: The tokenizer the full-text rows were written with.
        redactor: The store's redaction: a question is read in the rows' searchable form (each mask one constant).
        search_mode: ``ranked`` tops the all-terms hits up with ranked partial matches; ``all-terms`` does not.
    """

    def __init__(
        self,
        db: Database,
        lock: threading.RLock,
        snapshot: Callable[[], Snapshot],
        reconciler: Reconciler,
        analyzer: Analyzer,
        redactor: Redactor,
        search_mode: SessionSearchMode,
    ) -> None:
        self._db, self._lock, self._snapshot, self._reconciler = db, lock, snapshot, reconciler
        self._analyzer, self._redactor, self.search_mode = analyzer, redactor, search_mode
        self._find = Lookup() if db.dialect == 'postgres' else find_messages  # the all-terms lookup
        self._mirror = MessageMirror()
        self.vectors: MessageVectors | None = None
        """The semantic leg of the top-up, when the store was given embeddings."""
        self.vectors_missing: str | None = None
        """Why there is no semantic leg although one was asked for (reported as ``debug.vectorSkipped``)."""

    def run(self, query: str, visible: frozenset[str], limit: int) -> StoreHits:
        """The hits among the ``visible`` sessions (the store merges the answers of its peers and caps them)."""
        indexing = self._reconciler.catch_up(visible)
        # Read as the rows were written: secrets masked, each mask one constant. A guessed secret then reads as any
        # other of its shape, in the lookup, the top-up and the snippets' centring alike.
        query = self._redactor.redact_for_search(query)
        clauses, terms = query_clauses(self._analyzer, query)
        if not clauses:
            return StoreHits([], indexing, {})
        ranked = self.search_mode == 'ranked'
        with self._lock, self._db.reading():  # one read snapshot: the session list and the rows agree
            snapshot = self._snapshot()
            searchable = (visible & snapshot.keys) - snapshot.stale
            hidden = snapshot.keys - searchable
            rows = self._find(self._db, clauses, searchable, hidden, limit + 1)
        debug: dict[str, Any] = {}
        partial = (
            self._top_up(query, searchable, hidden, limit - len(rows), {row[0] for row in rows}, debug)
            if ranked and len(rows) < limit
            else []
        )
        match = 'all' if ranked else None
        results = search_results(rows, snapshot.sessions, terms, self._redactor, self._analyzer, match)
        results += search_results(partial, snapshot.sessions, terms, self._redactor, self._analyzer, 'partial')
        return StoreHits(results, indexing, debug)

    def _top_up(
        self,
        query: str,
        searchable: frozenset[str],
        hidden: frozenset[str],
        wanted: int,
        exclude: set[int],
        debug: dict[str, Any],
    ) -> list[tuple[Any, ...]]:
        """The ranked partial matches (rows as :func:`rows_of` gives them) that fill a ``sessions_search`` list:
        the keyword leg, merged with the vector leg when the store has one."""
        question = query  # already in the rows' searchable form (run)
        vectors = self.vectors
        # Embedded outside the lock (the provider may be slow), and only when a top-up is needed at all.
        query_vector = vectors.query_vector(question, debug) if vectors is not None else None
        if vectors is None and self.vectors_missing:
            debug['vectorSkipped'] = self.vectors_missing
        depth = wanted if query_vector is None else max(wanted, VECTOR_MERGE_DEPTH)
        with self._lock, self._db.reading():
            scored = self._mirror.scores(self._db, question, searchable, hidden, depth, exclude)
            if vectors is not None and query_vector is not None:
                near = vectors.nearest(query_vector, searchable, hidden)
                near = {s: v for s, v in near.items() if s not in exclude}
                keyword = dict(scored)
                scored = vectors.merge(keyword, near, sessions_of(self._db, keyword.keys() | near.keys()))
            # Only the sessions the first read saw (one created since has no place in this answer); the slack
            # covers rows of such sessions.
            rows = rows_of(self._db, scored[: 2 * wanted])
            return [row for row in rows if row[1] in searchable][:wanted]


def gather(
    parts: Sequence[tuple[SessionSearch, SessionCatalog]],
    query: str,
    caller: Caller,
    session_key: str | None,
    depth: int,
) -> StoreHits:
    """The hits of every store (``(search, catalog)`` of this store and its peers) that the caller may see.

    Raises:
        SessionAccessError: ``session_key`` is visible in none of them (the first store's refusal).
    """
    hits: list[SessionHit] = []
    indexing = False
    debug: dict[str, Any] = {}
    refusals: list[SessionAccessError] = []
    for search, catalog in parts:
        try:
            found = search.run(query, catalog.visible_to(caller, session_key), depth)
        except SessionAccessError as refused:  # the session may be another store's: refused if by none
            refusals.append(refused)
            continue
        hits.extend(found.results)
        indexing |= found.indexing
        debug.update(found.debug)
    if len(refusals) == len(parts):
        raise refusals[0]
    return StoreHits(hits, indexing, debug)


@record(slots=False)
class SessionTime:
    """The time stage of one ``sessions_search``: the query without its time words, the window they name, and the
    ``since`` / ``until`` filters (see :mod:`memsift.search.when`)."""

    query: str
    words: TimeWords | None
    since: date | None
    until: date | None
    today: date

    @classmethod
    def read(cls, query: str, since: object, until: object, now: datetime | None, time_words: bool) -> SessionTime:
        """Read ``query`` for time words (when ``time_words``) and check the filters, against ``now``.

        Raises:
            InvalidInputError: a filter that is no date or span, or ``since`` after ``until``.
        """
        return cls(*read_query_time(query, since, until, now, time_words))

    @property
    def active(self) -> bool:
        return self.words is not None or self.since is not None or self.until is not None

    def depth(self, limit: int) -> int:
        return max(limit, TIMED_DEPTH) if self.active else limit

    def apply(self, hits: list[SessionHit], debug: dict[str, Any]) -> tuple[list[SessionHit], set[str]]:
        """The hits the filters keep, each score times its time factor (1 without time words), and the message ids
        inside the window the time words name (they lead the answer, all-terms or not)."""
        if not self.active:
            return hits, set()
        days = [datetime.fromtimestamp(hit['timestamp'] / 1000).date() for hit in hits]
        kept = [i for i, day in enumerate(days) if in_range(day, self.since, self.until)]
        hits, days = [hits[i] for i in kept], [days[i] for i in kept]
        words = self.words
        factors = time_factors(days, words, self.today) if words is not None else None
        if factors is None or words is None:
            return hits, set()
        window = words.window
        inside = set() if window is None else {h['messageId'] for h, d in zip(hits, days) if window.distance(d) == 0}
        debug['time'] = words.report() | {'inWindow': len(inside)}
        for hit, factor in zip(hits, factors, strict=True):
            hit['score'] *= factor
        return hits, inside
