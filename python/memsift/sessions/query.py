"""``sessions_search`` queries and answers: checking a query, its clauses (each term a phrase of its analyzer
tokens; a Korean word also without its trailing particle) and their FTS5 match expression, the full-text lookup in
SQLite (:mod:`memsift.sessions.pgquery` does it in PostgreSQL), match-centred snippets, and the response, best hits
first within 32 KiB.

>>> from memsift._core import Analyzer
>>> clauses, terms = query_clauses(Analyzer(), '회의를 ERR_CONN_RESET')
>>> clauses, terms
([[['회', '회의', '의', '의를', '를'], ['회', '회의', '의']], [['err_conn_reset']]], ['회의를', 'ERR_CONN_RESET'])
>>> match_expression(clauses)
'("회 회의 의 의를 를" OR "회 회의 의") AND "err_conn_reset"'
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memsift._core import Analyzer
from memsift._text import preview
from memsift.redact import Redactor
from memsift.sessions.database import Database, Sql
from memsift.sessions.events import body_text
from memsift.sessions.limits import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MAX_RESPONSE_BYTES,
    STORE_SNIPPET_CHARS,
    TOOL_SNIPPET_CHARS,
    cap,
)
from memsift.sessions.visibility import Session

if TYPE_CHECKING:
    from memsift.results import SessionHit, SessionSearchResponse

__all__ = [
    'INDEXING_WARNING',
    'check_query',
    'find_messages',
    'match_expression',
    'query_clauses',
    'search_response',
    'search_results',
    'session_filter',
    'snippet',
]

INDEXING_WARNING = 'Transcript indexing is in progress; results may be incomplete. Retry sessions_search shortly.'
_HANGUL = re.compile(r'^[\uac00-\ud7af]+$')
_KOREAN_PARTICLES = (
    '에서',
    '으로',
    '에게',
    '한테',
    '까지',
    '부터',
    '처럼',
    '보다',
    '을',
    '를',
    '이',
    '가',
    '은',
    '는',
    '에',
    '의',
    '로',
    '와',
    '과',
    '도',
    '만',
)


def check_query(query: object, limit: object) -> str | None:
    """What is wrong with a ``sessions_search`` query and limit, or None."""
    if not isinstance(query, str):
        return f'query must be a string, not {type(query).__name__}'
    if not query.strip():
        return 'query must contain a non-space character'
    if len(query) > MAX_QUERY_CHARS:
        return f'query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}'
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        # OpenClaw answers an error for a limit over 25 (``readPositiveIntegerParam`` with ``max``), not a clamp.
        return f'limit must be a positive integer (at most {MAX_LIMIT}), not {preview(limit)}'
    return None


def _compound_only(tokens: list[str]) -> list[str]:
    """``err_conn_reset err conn reset`` -> ``err_conn_reset``: the analyzer always follows a compound token with
    its parts, so the compound alone matches the same messages, and a one-token phrase is cheaper to match."""
    end = 1
    while end < len(tokens) and tokens[end] in tokens[0]:
        end += 1
    return tokens[:1] + tokens[end:]


def _term_alternatives(term: str) -> list[str]:
    """A Korean word also matches without its trailing particle (회의를 → 회의), as OpenClaw's query expansion."""
    if _HANGUL.match(term):
        for particle in _KOREAN_PARTICLES:
            if term.endswith(particle) and len(term) - len(particle) >= 2:
                return [term, term[: -len(particle)]]
    return [term]


def query_clauses(analyzer: Analyzer, query: str) -> tuple[list[list[list[str]]], list[str]]:
    """The query's clauses, all of which a message must match, each a list of alternative phrases (analyzer tokens),
    and its whitespace-separated terms (one clause per distinct term that has tokens)."""
    terms = query.split()
    clauses: list[list[list[str]]] = []
    for term in dict.fromkeys(terms):  # a repeated term adds nothing but work
        phrases = [_compound_only(tokens) for tokens in analyzer.tokenize_batch(_term_alternatives(term)) if tokens]
        if phrases:
            clauses.append(phrases)
    return clauses, terms


def match_expression(clauses: Sequence[Sequence[Sequence[str]]]) -> str:
    """FTS5 MATCH text: each phrase quoted, a clause's alternatives joined with OR, the clauses with AND."""
    texts = []
    for phrases in clauses:
        quoted = ['"' + ' '.join(tokens).replace('"', '""') + '"' for tokens in phrases]
        texts.append(quoted[0] if len(quoted) == 1 else '(' + ' OR '.join(quoted) + ')')
    return ' AND '.join(texts)


def session_filter(searchable: Collection[str], hidden: Collection[str]) -> tuple[Sql, dict[str, list[str]]]:
    """A ``WHERE`` clause (``AND …``, in both dialects) and its parameter keeping rows of the ``searchable``
    sessions, on whichever list is shorter (usually the few hidden sessions, for the main session); ``hidden`` is
    every other session."""
    if not hidden:
        return Sql('', ''), {}
    if len(hidden) <= len(searchable):
        where = Sql('AND session_key NOT IN (SELECT value FROM json_each(:only))', 'AND session_key <> ALL(:only)')
        return where, {'only': sorted(hidden)}
    where = Sql('AND session_key IN (SELECT value FROM json_each(:only))', 'AND session_key = ANY(:only)')
    return where, {'only': sorted(searchable)}


def find_messages(
    db: Database, clauses: list[list[list[str]]], searchable: frozenset[str], hidden: frozenset[str], limit: int
) -> list[tuple[Any, ...]]:
    """``(seq, session_key, timestamp, event_id, rank, role, body)`` of the best ``limit`` messages of the
    ``searchable`` sessions that match every clause, best first (``hidden``: every other session; rank: FTS5's
    bm25, lower is better). Callers ask for one more than they return, to tell that more matched."""
    if not searchable or not clauses:
        return []
    where, keys = session_filter(searchable, hidden)
    return db.execute(
        'SELECT f.seq, f.session_key, f.timestamp, f.event_id, f.rank, e.role, e.body FROM ('
        'SELECT rowid AS seq, session_key, timestamp, event_id, bm25(message_fts) AS rank '
        f'FROM message_fts WHERE message_fts MATCH :match {where.sqlite} '
        'ORDER BY rank, timestamp DESC, event_id LIMIT :limit) f JOIN events e ON e.seq = f.seq '
        'ORDER BY f.rank, f.timestamp DESC, f.event_id',
        {'match': match_expression(clauses), **keys, 'limit': limit},
    ).fetchall()


def snippet(text: str, terms: Sequence[str], redactor: Redactor, analyzer: Analyzer) -> str:
    """A match-centred excerpt of at most 500 characters, redacted, then capped at 300 (``…`` marks cuts).

    The whole message is redacted before it is cut, so a secret split by the excerpt's edge is still masked.
    """
    text = ' '.join(redactor.redact(text).split())
    folded = text.casefold()
    found = [folded.find(t.casefold()) for t in terms]
    found += [folded.find(token) for token in analyzer.tokenize(' '.join(terms)) if len(token) > 1]
    position = min((p for p in found if p >= 0), default=0)
    start = max(0, position - 80)
    if start and (space := text.rfind(' ', max(0, start - 20), start)) > 0:
        start = space + 1
    excerpt = cap(text[start:], STORE_SNIPPET_CHARS)
    if start:
        excerpt = '…' + excerpt
    return cap(redactor.redact(excerpt), TOOL_SNIPPET_CHARS)


def search_results(
    rows: Sequence[tuple[Any, ...]],
    sessions: Mapping[str, Session],
    terms: Sequence[str],
    redactor: Redactor,
    analyzer: Analyzer,
    match: str | None = None,
) -> list[SessionHit]:
    """The hits of :func:`find_messages` rows (whose rank is a negated score) or
    :func:`~memsift.sessions.ranked.ranked_messages` rows (a score; ``match='partial'``), as ``sessions_search``
    returns them, with ``match`` when given."""
    hits: list[SessionHit] = []
    for _, key, timestamp, message_id, rank, role, body in rows:
        hit: SessionHit = {
            'sessionKey': key,
            'timestamp': timestamp,
            'role': role,
            'snippet': snippet(body_text(body), terms, redactor, analyzer),
            'score': rank if match == 'partial' else -rank,
            'sessionId': sessions[key].id,
            'messageId': message_id,
        }
        if match:
            hit['match'] = match
        hits.append(hit)
    return hits


def search_response(
    hits: list[SessionHit], indexing: bool, limit: int, lead: Collection[str] = ()
) -> SessionSearchResponse:
    """The ``sessions_search`` response: the best ``limit`` of ``hits`` (from every searched store) that fit in
    32 KiB of JSON, ``truncated: true`` when more than ``limit`` matched or some did not fit, with the indexing warning
    when some session waits. Hits whose ``messageId`` is in ``lead`` (those of the window the query's time words
    name) come before the rest."""
    # All-terms hits first (OpenClaw's), then ranked partial matches; each best first.
    hits.sort(
        key=lambda h: (
            h['messageId'] not in lead,
            h.get('match') == 'partial',
            -h['score'],
            -h['timestamp'],
            h['sessionKey'],
            h['messageId'],
        )
    )
    response: SessionSearchResponse = {'results': []}
    if sum(h.get('match') != 'partial' for h in hits) > limit:  # OpenClaw: ``visibleHits.length > limit``
        response['truncated'] = True
    if indexing:
        response['indexing'] = True
        response['warning'] = INDEXING_WARNING
    used = 2 + len(json.dumps({k: v for k, v in response.items() if k != 'results'}, ensure_ascii=False))
    for hit in hits[:limit]:
        size = len(json.dumps(hit, ensure_ascii=False, separators=(',', ':')).encode('utf-8')) + 1
        if used + size > MAX_RESPONSE_BYTES:
            response['truncated'] = True
            break
        response['results'].append(hit)
        used += size
    return response
