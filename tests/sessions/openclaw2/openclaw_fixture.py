"""OpenClaw 2.x databases for the tests, without OpenClaw: the real database of this folder rebuilt from its schema
(``agent-schema-v23.sql``) and rows (``agent-main-rows.json``), and appends and rewrites made as OpenClaw's writer
makes them (the same rows and columns, each change in its own ``BEGIN IMMEDIATE`` transaction, WAL, a busy timeout).

Run as a script it is the writer process of the concurrency test: it appends ``count`` user messages to a window,
``pause`` seconds apart, and prints how often it found the database locked and its longest transaction, as JSON.

    python openclaw_fixture.py <database> <session id> <count> <text prefix> [<pause>]
"""

import base64
import json
import re
import sqlite3
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

FOLDER = Path(__file__).parent
SCHEMA = FOLDER / 'agent-schema-v23.sql'
ROWS = FOLDER / 'agent-main-rows.json'
# FTS5 makes these itself when its virtual table is created; sqlite_master lists them too.
_SHADOW = re.compile(r"CREATE TABLE '(\w+)_(?:config|content|data|docsize|idx)'")


def _octet_length(value):
    if value is None:
        return None
    return len(value.encode('utf-8') if isinstance(value, str) else bytes(value))


def connect(path, timeout=5.0):
    """A connection as OpenClaw's writer opens one. The schema's CHECKs call ``octet_length`` (SQLite 3.43+), which
    older SQLite builds lack: it is defined here, as it is built into OpenClaw's."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    conn.create_function('octet_length', 1, _octet_length, deterministic=True)
    conn.execute('PRAGMA foreign_keys = ON')
    conn.execute('PRAGMA synchronous = NORMAL')
    return conn


def build(path):
    """The fixture's database at ``path``: tables and indexes, the rows, then the triggers (so that loading the rows
    does not fire them), in WAL mode as OpenClaw keeps it."""
    dump = json.loads(ROWS.read_text(encoding='utf-8'))
    conn = connect(path)
    conn.execute(f'PRAGMA page_size = {dump["pragmas"]["page_size"]}')
    conn.execute(f'PRAGMA auto_vacuum = {dump["pragmas"]["auto_vacuum"]}')
    statements, pending = [], ''
    for line in SCHEMA.read_text(encoding='utf-8').splitlines(keepends=True):
        if not pending and line.startswith('--'):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ''
    virtual = {m.group(1) for m in re.finditer(r'CREATE VIRTUAL TABLE (\w+)', '\n'.join(statements))}
    triggers = [s for s in statements if s.startswith('CREATE TRIGGER')]
    conn.execute('PRAGMA foreign_keys = OFF')  # rows load table by table
    conn.execute('BEGIN')
    for statement in statements:
        shadow = _SHADOW.match(statement)
        internal = statement.startswith('CREATE TABLE sqlite_')  # made by SQLite itself (sqlite_sequence)
        if statement not in triggers and not internal and not (shadow and shadow.group(1) in virtual):
            conn.execute(statement)
    for table, content in dump['tables'].items():
        columns = ', '.join(content['columns'])
        marks = ', '.join('?' * len(content['columns']))
        conn.executemany(
            f'INSERT INTO {table} ({columns}) VALUES ({marks})',
            [[_value(v) for v in row] for row in content['rows']],
        )
    for trigger in triggers:
        conn.execute(trigger)
    conn.execute(f'PRAGMA user_version = {dump["pragmas"]["user_version"]}')
    conn.execute('COMMIT')
    conn.execute('PRAGMA foreign_keys = ON')
    conn.execute('PRAGMA journal_mode = WAL')
    conn.close()


def _value(value):
    return base64.b64decode(value['base64']) if isinstance(value, dict) else value


def message(text, parent_id, role='user', event_id=None, now_ms=None):
    """A message event as OpenClaw's writer appends one (a new UUID, the parent the current leaf, ISO time)."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    iso = datetime.fromtimestamp(now_ms / 1000, timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
    body = {'role': role, 'content': [{'type': 'text', 'text': text}], 'timestamp': now_ms}
    return {
        'type': 'message',
        'id': event_id or str(uuid.uuid4()),
        'parentId': parent_id,
        'timestamp': iso,
        'message': body,
    }


def _insert(conn, session_id, seq, event, now_ms):
    text = json.dumps(event, separators=(',', ':'), ensure_ascii=False)
    conn.execute(
        'INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) '
        'VALUES (?, ?, ?, ?, ?)',
        (session_id, seq, text, now_ms, len(text.encode('utf-8'))),
    )
    conn.execute(
        'INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at) '
        'VALUES (?, ?, ?, ?, ?, ?)',
        (session_id, event['id'], seq, event['type'], event.get('parentId'), now_ms),
    )


def _touch(conn, session_id, now_ms):
    """Every transcript mutation strictly increases the window's transcript_updated_at."""
    conn.execute(
        'UPDATE session_windows SET updated_at = ?, '
        'transcript_updated_at = max(coalesce(transcript_updated_at, 0) + 1, ?) WHERE session_id = ?',
        (now_ms, now_ms, session_id),
    )


def append(conn, session_id, events):
    """Append ``events`` to a window, in one transaction; returns their seqs."""
    now_ms = int(time.time() * 1000)
    conn.execute('BEGIN IMMEDIATE')
    try:
        (last,) = conn.execute('SELECT max(seq) FROM transcript_events WHERE session_id = ?', (session_id,)).fetchone()
        last = -1 if last is None else last
        seqs = []
        for event in events:
            last += 1
            _insert(conn, session_id, last, event, now_ms)
            seqs.append(last)
        _touch(conn, session_id, now_ms)
        conn.execute('COMMIT')
    except BaseException:
        conn.execute('ROLLBACK')
        raise
    return seqs


def replace_suffix(conn, session_id, start_seq, events):
    """OpenClaw's suffix replacement: rows from ``start_seq`` on deleted, ``events`` written in their place, the
    rewrite generation rotated."""
    now_ms = int(time.time() * 1000)
    conn.execute('BEGIN IMMEDIATE')
    conn.execute('DELETE FROM transcript_events WHERE session_id = ? AND seq >= ?', (session_id, start_seq))
    for offset, event in enumerate(events):
        _insert(conn, session_id, start_seq + offset, event, now_ms)
    conn.execute(
        'UPDATE transcript_rewrite_watermarks SET generation = ?, updated_at = ? WHERE session_id = ?',
        (uuid.uuid4().hex, now_ms, session_id),
    )
    _touch(conn, session_id, now_ms)
    conn.execute('COMMIT')


def leaf_id(conn, session_id):
    """The id of a window's last event (what the writer chains the next one onto)."""
    row = conn.execute(
        'SELECT event_id FROM transcript_event_identities WHERE session_id = ? ORDER BY seq DESC LIMIT 1',
        (session_id,),
    ).fetchone()
    return row[0]


def write(path, session_id, count, prefix, pause=0.0):
    """The writer process: ``count`` appends, one transaction each. Each first tries to take the write lock without
    waiting; finding it taken counts as waiting on someone (it then waits as OpenClaw does, up to 5 s)."""
    conn = connect(path, timeout=0)
    parent = leaf_id(conn, session_id)
    busy, longest = 0, 0.0
    for i in range(count):
        event = message(f'{prefix} {i:04d} live message w{i:04d}', parent)
        start = time.perf_counter()
        try:
            append(conn, session_id, [event])
        except sqlite3.OperationalError as exc:
            if 'locked' not in str(exc) and 'busy' not in str(exc):
                raise
            busy += 1
            conn.execute('PRAGMA busy_timeout = 5000')
            append(conn, session_id, [event])
            conn.execute('PRAGMA busy_timeout = 0')
        longest = max(longest, time.perf_counter() - start)
        parent = event['id']
        time.sleep(pause)
    conn.close()
    print(json.dumps({'appended': count, 'busy': busy, 'longest_s': longest}))


if __name__ == '__main__':
    write(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], *(float(a) for a in sys.argv[5:6]))
