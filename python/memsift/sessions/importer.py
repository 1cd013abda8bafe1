"""Importing OpenClaw JSONL transcripts (``SessionStore.import_jsonl``): only what was appended since the last import
is read, and a bad line costs only itself.

>>> parse_event_line(b'{"type": "message", "id": "m1"}')
{'type': 'message', 'id': 'm1'}
>>> parse_event_line(b'[1]'), parse_event_line(b'\\xff{}')
('not an event (an object with a string "type")', 'not UTF-8 (bad byte at column 1)')
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memsift._text import scrub
from memsift.errors import SessionStoreError
from memsift.sessions.database import Sql
from memsift.sessions.events import check_session_key, check_spawned_by
from memsift.sessions.writer import Writer

__all__ = ['MAX_REPORTED_LINE_ERRORS', 'import_transcript', 'parse_event_line']

MAX_REPORTED_LINE_ERRORS = 10
"""``import_jsonl`` names at most this many skipped lines (the count covers them all)."""

_SEEN = Sql(
    'SELECT session_key, offset, lines FROM imports WHERE path = :path',
    'SELECT session_key, byte_offset, lines FROM session_imports WHERE agent = :agent AND path = :path',
)
_RECORD = Sql(
    'INSERT OR REPLACE INTO imports (path, session_key, offset, lines) VALUES (:path, :key, :offset, :lines)',
    'INSERT INTO session_imports (agent, path, session_key, byte_offset, lines) '
    'VALUES (:agent, :path, :key, :offset, :lines) ON CONFLICT (agent, path) DO UPDATE '
    'SET session_key = excluded.session_key, byte_offset = excluded.byte_offset, lines = excluded.lines',
)


def import_transcript(
    writer: Writer,
    lock: AbstractContextManager[Any],
    path: str | os.PathLike[str],
    session_key: str,
    *,
    spawned_by: str | None,
    forward: bool,
) -> dict[str, Any]:
    """Import the JSONL transcript at ``path`` as ``session_key`` through ``writer``, holding the store's ``lock``
    for each database access (``SessionStore.import_jsonl`` documents the behaviour).

    Returns:
        ``{"sessionKey", "sessionId", "events", "skipped", "skippedLines"?}``.

    Raises:
        SessionStoreError: the file cannot be read or holds no transcript event (the message names it).
    """
    session_key, spawned_by = check_session_key(session_key), check_spawned_by(spawned_by)
    db = writer.db
    file = Path(path)
    source = scrub(str(file.expanduser().resolve()))
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise SessionStoreError(f'{file}: cannot read the transcript: {exc.strerror or exc}') from exc
    with lock:
        if writer.forgotten(session_key):  # an operator forgot it (memsift forget): never stored again
            return {'sessionKey': session_key, 'sessionId': None, 'events': 0, 'skipped': 0}
        seen = db.execute(_SEEN, {'path': source}).fetchone()
    offset, lines_before = (seen[1], seen[2]) if seen and seen[0] == session_key and seen[1] <= len(raw) else (0, 0)
    end = max(offset, raw.rfind(b'\n') + 1)
    unfinished = parse_event_line(raw[end:]) if len(raw) > end else None
    if isinstance(unfinished, dict):  # a complete last line without its newline
        end, unfinished = len(raw), None
    # Split on \n only, not splitlines(): JSON strings may hold U+2028 and other line separators.
    lines = raw[offset:end].split(b'\n')
    if lines[-1] == b'':
        lines.pop()
    if offset == 0 and lines:
        lines[0] = lines[0].removeprefix(b'\xef\xbb\xbf')  # a UTF-8 byte order mark
    added = 0
    problems: list[str] = []  # one bad line (cut, not UTF-8, absurdly nested) costs only itself
    with lock, writer.transaction():
        writer.adopt(session_key, spawned_by)
        for number, line in enumerate(lines, start=lines_before + 1):
            if not line.strip():
                continue
            event = parse_event_line(line)
            if isinstance(event, str):
                problems.append(f'line {number}: {event}')
                continue
            added += writer.append(session_key, event, line.decode('utf-8'), spawned_by, index=forward, line=number)
        if writer.session_state(session_key) is None:
            if unfinished is not None:  # a last line without its newline waits to be completed
                problems.append(f'line {lines_before + len(lines) + 1} (no newline yet): {unfinished}')
            raise SessionStoreError(
                f'{file}: no transcript events found ({len(problems)} unreadable lines'
                f'{"; " + problems[0] if problems else ""})'
            )
        key = {'key': session_key}
        if added and not forward:
            db.execute(
                Sql(
                    'UPDATE sessions SET needs_rebuild = 1 WHERE key = :key',
                    'UPDATE session_sessions SET needs_rebuild = true WHERE agent = :agent AND key = :key',
                ),
                key,
            )
        db.execute(_RECORD, {**key, 'path': source, 'offset': end, 'lines': lines_before + len(lines)})
        session_id = db.execute(
            Sql(
                'SELECT id FROM sessions WHERE key = :key',
                'SELECT id FROM session_sessions WHERE agent = :agent AND key = :key',
            ),
            key,
        ).fetchone()[0]
    out: dict[str, Any] = {
        'sessionKey': session_key,
        'sessionId': session_id,
        'events': added,
        'skipped': len(problems),
    }
    if problems:
        out['skippedLines'] = problems[:MAX_REPORTED_LINE_ERRORS]
    return out


def parse_event_line(line: bytes) -> dict[str, Any] | str:
    """A transcript line's event, or why it is skipped."""
    try:
        event = json.loads(line.decode('utf-8'))
    except UnicodeDecodeError as exc:
        return f'not UTF-8 (bad byte at column {exc.start + 1})'
    except ValueError as exc:
        return f'not JSON ({exc})'
    except RecursionError:
        return 'nested too deeply'
    if not isinstance(event, dict) or not isinstance(event.get('type'), str):
        return 'not an event (an object with a string "type")'
    return event
