"""``sessions_history`` answers: the shown text of each message (tool calls and thinking stripped, tool results only
when asked), each message redacted and capped, and the oldest dropped until the response fits in 32 KiB.

>>> from memsift.redact import Redactor
>>> rows = [('m1', 1, '{"type": "message", "message": {"role": "user", "content": "hi"}}'),
...         ('m2', 2, '{"type": "message", "message": {"role": "toolResult", "content": "42"}}')]
>>> history_response('agent:main:main', 's1', rows, limit=50, include_tools=False, redactor=Redactor())['messages']
[{'id': 'm1', 'role': 'user', 'timestamp': 1, 'content': 'hi'}]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from memsift.redact import Redactor
from memsift.sessions.events import visible_text
from memsift.sessions.limits import HISTORY_MESSAGE_CHARS, MAX_RESPONSE_BYTES, cap

if TYPE_CHECKING:
    from memsift.results import HistoryMessage, SessionHistory

__all__ = ['history_response']


def history_response(
    session_key: str,
    session_id: str,
    rows: Iterable[tuple[str, int, str]],
    *,
    limit: int,
    include_tools: bool,
    redactor: Redactor,
) -> SessionHistory:
    """The ``sessions_history`` response for the ``(event_id, timestamp, body)`` rows of a session's active branch
    (message and reset events, in order): its last ``limit`` messages with text since its last reset (OpenClaw 2.x's
    ``/new`` and ``/reset`` keep the session and start the conversation over)."""
    kept: list[tuple[str, str, int, str]] = []
    for event_id, timestamp, body in rows:
        event = json.loads(body)
        if event.get('type') == 'reset':
            kept = []
            continue
        message = event.get('message')
        if not isinstance(message, Mapping):
            continue  # an event whose "message" is not an object has no role or text to show
        role = message.get('role')
        if (role == 'toolResult' and not include_tools) or role not in ('user', 'assistant', 'toolResult'):
            continue
        content = visible_text(message.get('content'))
        if content:
            kept.append((event_id, role, timestamp, content))
    messages: list[HistoryMessage] = [
        {
            'id': event_id,
            'role': role,
            'timestamp': timestamp,
            'content': cap(redactor.redact(content), HISTORY_MESSAGE_CHARS),
        }
        for event_id, role, timestamp, content in kept[-limit:]
    ]  # only what is returned is redacted
    response: SessionHistory = {'sessionKey': session_key, 'sessionId': session_id, 'messages': messages}
    while messages and len(json.dumps(response, ensure_ascii=False).encode('utf-8')) > MAX_RESPONSE_BYTES:
        messages.pop(0)
        response['truncated'] = True
    return response
