"""Session transcripts: the per-agent store behind ``sessions_search`` and ``sessions_history`` (OpenClaw §11).

Events are OpenClaw transcript lines, ``{"type": "message", "id", "parentId", "timestamp", "message": {"role",
"content"}}``. They form a tree through ``parentId``; the *active branch* is the path from the current leaf back to
the root, and only it is searchable. An append that extends the leaf writes the event and its full-text row in one
transaction (in SQLite, or in PostgreSQL for a store many hosts share), so the index never lags; one that does not (a
branch switch, a rewind) marks the session for a rebuild, and its text stays hidden until the rebuild recomputes the
branch.

The full-text rows hold memsift's own analyzer tokens (the analyzer of memory search: CJK unigrams and bigrams,
stemmed English), so Chinese, Japanese and Korean queries work, which OpenClaw's ``unicode61`` table cannot do
(OpenClaw issue #140736). Each whitespace-separated query term must match, as a phrase of its tokens: a CJK term
matches where its characters appear in that order.

>>> store = SessionStore(':memory:')
>>> store.append('agent:main:main', {'type': 'message', 'id': 'm1', 'timestamp': 1767225600000,
...                                  'message': {'role': 'user', 'content': '部署到东京区域 before Friday'}})
True
>>> [hit['snippet'] for hit in store.search('东京', caller='agent:main:main')['results']]
['部署到东京区域 before Friday']

The package's modules, one concern each; each imports only modules listed above it:

- :mod:`~memsift.sessions.limits`: the limits the tools promise, and how text is cut to them.
- :mod:`~memsift.sessions.events`: transcript events: their checks, stored JSON line, timestamp and text.
- :mod:`~memsift.sessions.visibility`: :class:`Caller`, and which sessions a caller may see.
- :mod:`~memsift.sessions.fts5`: the terms SQLite's FTS5 indexes for a full-text row (PostgreSQL keeps them too).
- :mod:`~memsift.sessions.database`: the connection, SQLite or PostgreSQL, and each statement in both dialects.
- :mod:`~memsift.sessions.tables`: the schema in both databases, and the store's reads.
- :mod:`~memsift.sessions.writer`: writing an event with its full-text row, rebuilding a branch, flags, deletes.
- :mod:`~memsift.sessions.importer`: importing JSONL transcript files (and recording how far each was read).
- :mod:`~memsift.sessions.reconcile`: rebuilding stale sessions, at once or in a background thread.
- :mod:`~memsift.sessions.query`: ``sessions_search``: the query, the full-text lookup, snippets, the response.
- :mod:`~memsift.sessions.pgquery`: the full-text lookup on PostgreSQL, as FTS5 finds and ranks.
- :mod:`~memsift.sessions.history`: ``sessions_history`` responses.
- :mod:`~memsift.sessions.store`: :class:`SessionStore`, which ties them together behind one lock.
"""

from __future__ import annotations

from memsift.config import Visibility
from memsift.sessions.events import MAX_TIMESTAMP_MS as MAX_TIMESTAMP_MS
from memsift.sessions.events import archived_at_ms as archived_at_ms
from memsift.sessions.events import message_text as message_text
from memsift.sessions.importer import MAX_REPORTED_LINE_ERRORS as MAX_REPORTED_LINE_ERRORS
from memsift.sessions.limits import DEFAULT_LIMIT as DEFAULT_LIMIT
from memsift.sessions.limits import HISTORY_DEFAULT_LIMIT as HISTORY_DEFAULT_LIMIT
from memsift.sessions.limits import HISTORY_MAX_LIMIT as HISTORY_MAX_LIMIT
from memsift.sessions.limits import HISTORY_MESSAGE_CHARS as HISTORY_MESSAGE_CHARS
from memsift.sessions.limits import MAX_LIMIT as MAX_LIMIT
from memsift.sessions.limits import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from memsift.sessions.limits import MAX_RESPONSE_BYTES as MAX_RESPONSE_BYTES
from memsift.sessions.limits import STORE_SNIPPET_CHARS as STORE_SNIPPET_CHARS
from memsift.sessions.limits import SYNC_REBUILD_MAX_BYTES as SYNC_REBUILD_MAX_BYTES
from memsift.sessions.limits import SYNC_REBUILD_MAX_EVENTS as SYNC_REBUILD_MAX_EVENTS
from memsift.sessions.limits import TOOL_SNIPPET_CHARS as TOOL_SNIPPET_CHARS
from memsift.sessions.query import INDEXING_WARNING as INDEXING_WARNING
from memsift.sessions.store import SessionStore, default_sessions_path
from memsift.sessions.visibility import VISIBILITIES as VISIBILITIES
from memsift.sessions.visibility import Caller, main_session_key
from memsift.sessions.visibility import is_incognito_session_key as is_incognito_session_key

# ``__all__`` is the API as it was; the names imported ``X as X`` (an explicit re-export) stay importable from here
# as they were from the single module memsift.sessions: the limits, INDEXING_WARNING, VISIBILITIES, message_text.
__all__ = ['Caller', 'SessionStore', 'Visibility', 'default_sessions_path', 'main_session_key']
