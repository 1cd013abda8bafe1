"""The all-terms lookup of ``sessions_search`` on PostgreSQL: the hits SQLite's FTS5 table finds for the same rows,
in FTS5's bm25 order, with FTS5's scores.

In SQLite, :func:`memsift.sessions.query.find_messages` matches the query's clauses (one per term: a phrase of its
analyzer tokens, or alternatives ORed) in the FTS5 table ``message_fts`` and orders hits by ``bm25(message_fts)``,
then newest first, then event id. Here each full-text row keeps ``terms``, its tokens as FTS5 splits them
(:func:`~memsift.sessions.fts5.fts5_terms`, applied to the query's phrases too), and a search reads, in one snapshot:

1. the agent's row count and total length (kept between searches, :class:`Lookup`), and how many rows hold each
   phrase: bm25's statistics;
2. the candidate rows, through a GIN index of (agent, term) keys: rows holding every term of some phrase of each
   clause;
3. each phrase's occurrences in each candidate (where its first term stands, followed by the others): a row is a hit
   when each clause has a phrase that occurs, which is FTS5's phrase match (overlapping occurrences count, as in
   FTS5);
4. bm25 as ``fts5Bm25Function`` computes it (k1 = 1.2, b = 0.75; a phrase's IDF floored at 1e-6), with the same
   floating-point operations in the same order, and the order by it, then ``timestamp DESC``, then event id in byte
   order (``COLLATE "C"``, SQLite's BINARY).

So the hits are the same set, in the same order, with the same scores, as SQLite's (a test compares them on one
corpus). Where they can still differ:

- FTS5's statistics cover every row of the SQLite file, these the agent's rows: the same unless several agents
  write one SQLite file.
- ``log`` comes from the host's C library: another host's may round a score's last bit otherwise, which only
  reorders hits whose scores tie to within that bit.
- Which characters FTS5 cuts at is a table read from SQLite 3.40 (:mod:`~memsift.sessions.fts5`); a SQLite built
  with other Unicode tables would cut a few rare characters otherwise.

Not a ``tsvector``: its positions stop at 16383 and it keeps 256 per lexeme, so phrases late in a long message (or
after a word said 300 times) would match otherwise, and its ranking functions are not bm25. Counting in ``terms``
costs more than FTS5's posting lists, though: a term most messages hold is counted in most of the agent's rows (in
50k messages, a term in 15k of them: about 45 ms, where FTS5 takes 25 ms; a rare term: about 4 ms).
"""

from __future__ import annotations

import math
from typing import Any

from memsift.sessions.database import Database
from memsift.sessions.fts5 import fts5_terms
from memsift.sessions.query import session_filter

__all__ = ['Lookup']

K1, B = 1.2, 0.75
"""FTS5's bm25 constants."""
_KEYS = 'session_fts_keys(f.agent, f.terms)'  # the GIN index's expression


def _occurrences(i: int, phrase: list[str]) -> str:
    """SQL counting the occurrences of phrase ``i`` in row ``f`` (its first term ``head_i``, the number of terms
    after it ``span_i``, and all of them ``phrase_i``)."""
    if len(phrase) == 1:
        return f'cardinality(array_positions(f.terms, :head_{i}))'
    return (
        f'(SELECT count(*) FROM unnest(array_positions(f.terms, :head_{i})) AS p '
        f'WHERE f.terms[p:p + :span_{i}] = :phrase_{i})'
    )


class Lookup:
    """The all-terms lookup of one store on PostgreSQL, called as :func:`memsift.sessions.query.find_messages` is
    (inside ``db.reading()``: the statistics and the hits are read in one snapshot).

    It keeps the agent's row count and total row length between searches (bm25's ``N`` and average length): rows
    appended since are added to them, and a rewrite logged in ``fts_rewrites`` (a rebuild, a delete, a re-index)
    has them counted again. Writers of an agent take turns, so the rows appended since the last search are exactly
    those past the last ``seq`` it saw, as for :class:`~memsift.sessions.ranked.MessageMirror`.
    """

    def __init__(self) -> None:
        self._totals = (-1, 0, 0, 0)  # (last seq, rewrite version, rows, total length); -1: never counted

    def totals(self, db: Database) -> tuple[int, int]:
        """The agent's full-text rows and their total length in terms."""
        last, version = db.execute(
            'SELECT (SELECT max(seq) FROM session_message_fts WHERE agent = :agent), '
            '(SELECT max(version) FROM session_fts_rewrites WHERE agent = :agent)'
        ).fetchone()
        last, version = last or 0, version or 0
        seen, seen_version, rows, length = self._totals
        if seen < 0 or version != seen_version or last < seen:
            seen, rows, length = 0, 0, 0  # count again
        if last != seen:
            more, added = db.execute(
                'SELECT count(*), coalesce(sum(length), 0) FROM session_message_fts WHERE agent = :agent '
                'AND seq > :after',
                {'after': seen},
            ).fetchone()
            rows, length = rows + more, length + added
        self._totals = (last, version, rows, length)
        return rows, length

    def __call__(
        self,
        db: Database,
        clauses: list[list[list[str]]],
        searchable: frozenset[str],
        hidden: frozenset[str],
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """``(seq, session_key, timestamp, event_id, rank, role, body)`` of the best ``limit`` messages of the
        ``searchable`` sessions that match every clause, best first (``hidden``: every other session; rank: FTS5's
        bm25, lower is better)."""
        if not searchable or not clauses:
            return []
        phrases: list[list[str]] = []  # every phrase FTS5 would score, in the order of the expression
        members: list[list[int]] = []  # the phrases of each clause
        for alternatives in clauses:
            found = []
            for tokens in alternatives:
                terms = fts5_terms(' '.join(tokens))
                if terms:  # FTS5 matches no row with a phrase it cut to nothing (and scores it 0)
                    found.append(len(phrases))
                    phrases.append(terms)
            if not found:
                return []
            members.append(found)
        rows, length = self.totals(db)
        if not length:
            return []  # no row has a term: none can match
        params: dict[str, Any] = {}
        for i, phrase in enumerate(phrases):
            params.update({f'keys_{i}': sorted({f'{db.agent}\x1f{t}' for t in phrase}), f'head_{i}': phrase[0]})
            params.update({f'span_{i}': len(phrase) - 1, f'phrase_{i}': phrase} if len(phrase) > 1 else {})
        holding = ', '.join(
            f'(SELECT count(*) FROM session_message_fts f WHERE f.agent = :agent AND {_KEYS} @> :keys_{i}'
            + (f' AND {_occurrences(i, phrase)} > 0)' if len(phrase) > 1 else ')')
            for i, phrase in enumerate(phrases)
        )
        # fts5Bm25GetData: the average row length, and each phrase's IDF, floored where it is in half the rows.
        params.update(avgdl=float(length) / float(rows), k1=K1, k1p1=K1 + 1.0, omb=1 - B, b=B, limit=limit)
        for i, held in enumerate(db.execute(f'SELECT {holding}', params).fetchone()):
            idf = math.log((rows - held + 0.5) / (held + 0.5))
            params[f'idf_{i}'] = idf if idf > 0.0 else 1e-6
        candidates = ' AND '.join('(' + ' OR '.join(f'{_KEYS} @> :keys_{i}' for i in found) + ')' for found in members)
        counts = ', '.join(f'{_occurrences(i, phrase)} AS f{i}' for i, phrase in enumerate(phrases))
        matched = ' AND '.join('(' + ' OR '.join(f'c.f{i} > 0' for i in found) + ')' for found in members)
        # fts5Bm25Function, phrase by phrase: score += idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))
        score = ' + '.join(
            f':idf_{i} * ((c.f{i} * :k1p1) / (c.f{i} + :k1 * (:omb + :b * c.d / :avgdl)))' for i in range(len(phrases))
        )
        where, only = session_filter(searchable, hidden)
        return db.execute(
            'SELECT h.seq, h.session_key, h.timestamp, h.event_id, h.rank, e.role, e.body FROM ('
            f'SELECT c.seq, c.session_key, c.timestamp, c.event_id, -({score}) AS rank FROM ('
            f'SELECT f.seq, f.session_key, f.timestamp, f.event_id, f.length::float8 AS d, {counts} '
            f'FROM session_message_fts f WHERE f.agent = :agent AND {candidates} {where.postgres}'
            f') c WHERE {matched} ORDER BY rank, c.timestamp DESC, c.event_id COLLATE "C" LIMIT :limit'
            ') h JOIN session_events e ON e.agent = :agent AND e.seq = h.seq '
            'ORDER BY h.rank, h.timestamp DESC, h.event_id COLLATE "C"',
            {**params, **only},
        ).fetchall()
