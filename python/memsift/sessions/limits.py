"""The limits the session tools promise (OpenClaw §11), and :func:`cap`, which cuts text to one of them.

>>> cap('部署到东京区域 before Friday', 7)
'部署到东京区域…'
"""

from __future__ import annotations

from memsift._text import MAX_QUERY_CHARS

__all__ = [
    'DEFAULT_LIMIT',
    'HISTORY_DEFAULT_LIMIT',
    'HISTORY_MAX_LIMIT',
    'HISTORY_MESSAGE_CHARS',
    'MAX_LIMIT',
    'MAX_QUERY_CHARS',
    'MAX_RESPONSE_BYTES',
    'STORE_SNIPPET_CHARS',
    'SYNC_REBUILD_MAX_BYTES',
    'SYNC_REBUILD_MAX_EVENTS',
    'TOOL_SNIPPET_CHARS',
    'cap',
]

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
STORE_SNIPPET_CHARS = 500
TOOL_SNIPPET_CHARS = 300
MAX_RESPONSE_BYTES = 32 * 1024
SYNC_REBUILD_MAX_EVENTS = 4000
SYNC_REBUILD_MAX_BYTES = 4 * 1024 * 1024
HISTORY_DEFAULT_LIMIT = 50
HISTORY_MAX_LIMIT = 200
HISTORY_MESSAGE_CHARS = 4000


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ``…`` marking the cut (trailing spaces before it dropped)."""
    return text if len(text) <= limit else text[:limit].rstrip() + '…'
