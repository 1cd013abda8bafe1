"""Transcript events: the checks an appended event and its session key pass, the JSON line an event is stored as,
its timestamp, and its text (what is searchable, what history shows).

>>> blocks = [{'type': 'text', 'text': 'go'}, {'type': 'thinking', 'thinking': '?'}, {'type': 'text', 'text': 'Fri'}]
>>> message_text({'type': 'message', 'message': {'role': 'user', 'content': blocks}})
'go\\nFri'
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memsift._text import preview, scrub
from memsift.errors import InvalidInputError

__all__ = [
    'MAX_TIMESTAMP_MS',
    'archived_at_ms',
    'body_text',
    'check_session_key',
    'check_spawned_by',
    'event_line',
    'is_dreaming_event',
    'message_text',
    'now_ms',
    'timestamp_ms',
    'visible_text',
]

MAX_TIMESTAMP_MS = 8_640_000_000_000_000
"""The range of a JavaScript ``Date``: a timestamp beyond it is unreadable and the event gets the import time."""
_INDEXED_BLOCKS = {'text', 'input_text', 'output_text'}
# OpenClaw 2.x archive names may add the rewrite generation and .zst (its parseSessionArchiveTimestamp reads them).
_ARCHIVE = re.compile(
    r'\.jsonl\.(?:reset|deleted)\.(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(\.\d+)?Z(?:\.[0-9a-f]{32})?(?:\.zst)?$'
)
_DREAM_PROMPT = 'Write a dream diary entry from these memory fragments'
_DREAM_RUN_PREFIX = 'dreaming-narrative-'


def check_session_key(value: object) -> str:
    """A session key as stored (lone surrogates replaced).

    Raises:
        InvalidInputError: not a non-empty string.
    """
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f'session_key must be a non-empty string, not {preview(value)}')
    return scrub(value)


def check_spawned_by(value: object) -> str | None:
    """A parent session key as stored, or None.

    Raises:
        InvalidInputError: neither a string nor None.
    """
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f'spawned_by must be a session key or None, not {preview(value)}')
    return None if value is None else scrub(value)


def event_line(event: object) -> str:
    """An appended event as its stored JSON line; lone surrogates stay escaped (``\\ud83d``), as in a JSONL file.

    Raises:
        InvalidInputError: not an object with a string ``type``, or not representable as JSON.
    """
    if not isinstance(event, Mapping) or not isinstance(event.get('type'), str):
        raise InvalidInputError(f'event must be an object with a string "type" field, not {preview(event)}')
    try:
        line = json.dumps(event, ensure_ascii=False)
    except RecursionError:
        raise InvalidInputError(f'event {preview(event)} is nested too deeply to store') from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f'event {preview(event)} is not JSON: {exc}') from None
    return line if line == scrub(line) else json.dumps(event)


def now_ms() -> int:
    """The current time in milliseconds since the epoch (the timestamp of an event that has none)."""
    return int(time.time() * 1000)


def timestamp_ms(value: Any) -> int | None:
    """Milliseconds from a number (seconds below 1e11, else milliseconds) or an ISO-8601 string."""
    if isinstance(value, bool):
        return None
    milliseconds: float | None = None
    if isinstance(value, (int, float)) and abs(value) < MAX_TIMESTAMP_MS:  # also rules out nan and inf
        milliseconds = value * 1000 if abs(value) < 1e11 else value
    elif isinstance(value, str) and value.strip():
        try:
            milliseconds = datetime.fromisoformat(value.strip().replace('Z', '+00:00')).timestamp() * 1000
        except (ValueError, OverflowError):
            return None
    return int(milliseconds) if milliseconds is not None and abs(milliseconds) <= MAX_TIMESTAMP_MS else None


def message_text(event: Mapping[str, Any]) -> str | None:
    """The searchable text of an event: user and assistant messages only, string content or ``text`` /
    ``input_text`` / ``output_text`` blocks joined by newlines (tool results, thinking and images never)."""
    if event.get('type') != 'message' or not isinstance(event.get('message'), Mapping):
        return None
    message = event['message']
    if message.get('role') not in ('user', 'assistant'):
        return None
    text = visible_text(message.get('content'))
    return text if text.strip() else None


def visible_text(content: Any) -> str:
    """Message text without tool calls, thinking or images: the string, or the text blocks joined."""
    if isinstance(content, str):
        return scrub(content)
    if isinstance(content, list):
        return scrub(
            '\n'.join(
                block['text']
                for block in content
                if isinstance(block, Mapping)
                and block.get('type') in _INDEXED_BLOCKS
                and isinstance(block.get('text'), str)
            )
        )
    return ''


def body_text(body: str) -> str:
    """The searchable text of a stored event (the events table keeps only the JSON line)."""
    return message_text(json.loads(body)) or ''


def is_dreaming_event(event: Mapping[str, Any]) -> bool:
    """Whether an event shows its transcript was written by memory dreaming (OpenClaw's ``buildSessionEntry``
    ``generatedByDreamingNarrative``): an ``openclaw:bootstrap-context`` custom event whose ``runId`` starts with
    ``dreaming-narrative-``, or a user message that is the dream-diary prompt. OpenClaw never indexes such a
    transcript."""
    if event.get('type') == 'custom':
        data = event.get('data')
        custom = event.get('customType')
        run_id = data.get('runId') if isinstance(data, Mapping) else None
        return (
            isinstance(custom, str)
            and custom.startswith('openclaw:bootstrap-context')
            and isinstance(run_id, str)
            and run_id.startswith(_DREAM_RUN_PREFIX)
        )
    message = event.get('message')
    if event.get('type') != 'message' or not isinstance(message, Mapping) or message.get('role') != 'user':
        return False
    return visible_text(message.get('content')).lstrip().startswith(_DREAM_PROMPT)


def archived_at_ms(name: str) -> int | None:
    """When a ``<id>.jsonl.reset.<ISO>`` / ``<id>.jsonl.deleted.<ISO>`` transcript archive was made, from its name
    (the ISO time has ``-`` for ``:``; OpenClaw 2.x may add ``.<generation>`` and ``.zst``), in milliseconds; None for
    any other name. OpenClaw ages such an archive from this date, not from its messages.

    >>> archived_at_ms('active.jsonl.reset.2026-02-16T22-26-33.000Z')
    1771280793000
    >>> archived_at_ms('active.jsonl.deleted.2026-02-16T22-26-33.000Z.4497ebf931e04605bbef4c88e0ca3014.zst')
    1771280793000
    """
    found = _ARCHIVE.search(name)
    if found is None:
        return None
    day, hours, minutes, seconds, fraction = found.groups()
    return timestamp_ms(f'{day}T{hours}:{minutes}:{seconds}{fraction or ""}Z')
