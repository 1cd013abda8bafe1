"""OpenClaw 2.x transcripts, read from the agent's SQLite session store (``SessionStore.import_openclaw_database``,
through :func:`import_database`): the 2.x
counterpart of importing 1.x JSONL folders (``memsift.tools.openclaw.import_openclaw_sessions``).

OpenClaw 2.x (2026.9.6, agent schema 23) keeps an agent's transcripts in
``<state>/agents/<agentId>/agent/openclaw-agent.sqlite``: ``session_nodes`` has a row per session key, whose
``current_session_id`` is its live transcript; ``session_windows`` a row per transcript (``session_id``), a key keeping
its older ones after a daily or idle rollover; ``transcript_events`` a row per event (``seq`` 0, 1, …; 0 is the
``{"type": "session"}`` header), the event's JSON in ``event_json`` or, from 1 KiB, a zstd frame in ``event_zstd``;
``session_transcript_archives`` the JSONL of each deleted or reset transcript (a zstd or plain blob). The events are
the 1.x JSONL lines, so memsift's writer takes them as they are and keeps the active branch from their
``id``/``parentId`` tree and leaf controls, as for 1.x.

How sessions are named in memsift's store:

- The current window of a key is imported as that key, as OpenClaw stores it (a legacy key such as
  ``cron:daily-report`` stays as it is until ``openclaw doctor --fix`` renames it; the transcript then moves to the new
  key), its parent from ``spawned_by`` (else ``parent_session_key``).
- An older window of a key (what a rollover leaves) is ``<key>:window:<sessionId>``, spawned by the key. OpenClaw's
  ``sessions_search`` matches older windows of every key the caller may see, and so does memsift's: an older window
  is visible wherever its key is (:func:`~memsift.sessions.visibility.window_owner`). A window that stops being
  current (a rollover) moves: memsift's copy under the key is dropped and the window imported again under its
  ``:window:`` key.
- A ``session_transcript_archives`` row (``reason`` deleted or reset) is ``agent:<agentId>:<archive_name>``, as a
  1.x archive is ``agent:<agentId>:<file name>`` (``archived_at_ms`` reads its date from the name, so session memory
  ages it from then). OpenClaw's ``memory_search`` shows these archives; its ``sessions_search`` does not (their rows
  are gone), while memsift's shows them where the caller may see such a key, as with 1.x archives.
- Incognito keys are never imported; nor are windows with no rows (cold-stored ones: OpenClaw's search leaves them
  out too). The 1.x JSONL that OpenClaw's migration moved to ``session-sqlite-import-archive/`` is not read: its
  events are in the database (an earlier 1.x import of them is caught up, not duplicated: same keys, same ids).

Each memsift session keeps OpenClaw's session id, and each event its ``seq + 1`` as its line (OpenClaw's numbering:
the header is line 1). So a ``memory_search`` session hit on a 2.x store shows, as OpenClaw does,
``sessions/<agentId>/<sessionId>.jsonl`` for a window (current or older) with ``startLine``/``endLine`` from those
lines, and ``sessions/<agentId>/<archive_name>`` for an archive (its lines are the archive's JSONL lines).

Reading never gets in OpenClaw's way: the file is opened read-only (``mode=ro``, ``query_only``, no
``trusted_schema``; never ``immutable``, which would miss the gateway's writes), each read is one deferred transaction
(one WAL snapshot, which blocks no writer) ended before memsift writes anything, and the connection is closed when the
call returns. How far each window was read lives in memsift's store (the ``imports`` table, on SQLite and on
PostgreSQL): ``<database>#window:<sessionId>`` with the next ``seq`` and a fingerprint of the window's rewrite
generation, ``<database>#archive:<name>`` per archive, and ``<database>#stamp``, a fingerprint of what the database
holds: when it has not moved, a call costs one query on each side. A window is read from where the last call stopped;
one that was rewritten (its generation changed, or it now ends before that point) is dropped and imported again, so
no stale or doubled event stays. A row that cannot be decoded costs only itself: a warning names the file, window and
seq, and a text-less stand-in with the id and parent OpenClaw indexed for it keeps the events around it on the
active branch.

>>> window_key('agent:main:webchat:direct:alice', '00000000-0000-4000-8000-000000000007')
'agent:main:webchat:direct:alice:window:00000000-0000-4000-8000-000000000007'
>>> import tempfile
>>> from pathlib import Path
>>> from memsift.sessions.store import SessionStore
>>> with tempfile.TemporaryDirectory() as folder, SessionStore(':memory:') as store:
...     fake = Path(folder, 'openclaw-agent.sqlite')
...     _ = fake.write_bytes(b'not a database')
...     store.import_openclaw_database(fake)
Traceback (most recent call last):
memsift.errors.SessionStoreError: .../openclaw-agent.sqlite is not a SQLite database (file is not a database)...
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._record import record
from memsift._text import preview, scrub
from memsift.errors import InvalidInputError, SessionStoreError
from memsift.sessions.database import Sql
from memsift.sessions.events import timestamp_ms
from memsift.sessions.importer import parse_event_line
from memsift.sessions.visibility import WINDOW_MARK, is_incognito_session_key

if TYPE_CHECKING:
    from memsift.sessions.writer import Writer

__all__ = [
    'BUSY_TIMEOUT_S',
    'SCHEMA_VERSION',
    'archive_key',
    'import_database',
    'window_key',
]

_log = logging.getLogger('memsift.sessions.openclaw_db')

SCHEMA_VERSION = 23
"""The agent schema this module reads (OpenClaw 2026.9.6)."""
BUSY_TIMEOUT_S = 5.0
"""How long a read waits for a lock OpenClaw holds (OpenClaw's own readers wait as long)."""
MAX_EVENT_BYTES = 4 * 1024 * 1024
"""OpenClaw stores no event above 4 MiB; a zstd row never decodes to more."""

_DOCTOR = 'run `openclaw doctor --fix`'
_BITS = 62  # fingerprints fit a signed 64-bit column on both databases

# ------------------------------------------------------------------ reads of OpenClaw's database

_META = "SELECT role, schema_version, agent_id FROM schema_meta WHERE meta_key = 'primary'"
# What the import depends on: each window's key and last mutation (every append or rewrite moves OpenClaw's
# transcript_updated_at), each key's current window, each archive, the cold-stored windows, and the newest event row
# (so that a writer that did not move transcript_updated_at is still seen). ~20 ms for 20,000 windows.
_STAMP = """
SELECT
  (SELECT group_concat(session_id || char(31) || session_key || char(31) || coalesce(transcript_updated_at, ''),
                       char(30)) FROM session_windows),
  (SELECT group_concat(x, char(30)) FROM (
     SELECT session_key || char(31) || current_session_id AS x FROM session_nodes ORDER BY session_key)),
  (SELECT group_concat(archive_name || char(31) || session_key, char(30)) FROM (
     SELECT archive_name, session_key FROM session_transcript_archives ORDER BY archive_name)),
  (SELECT count(*) FROM session_transcript_cold_archives),
  (SELECT max(rowid) FROM transcript_events)
"""
_WINDOWS = """
SELECT w.session_id, w.session_key, w.created_at,
       (SELECT max(e.seq) FROM transcript_events e WHERE e.session_id = w.session_id) AS last_seq,
       g.generation,
       coalesce(n.current_session_id = w.session_id, 0) AS is_current,
       coalesce(n.spawned_by, n.parent_session_key) AS parent
FROM session_windows w
LEFT JOIN transcript_rewrite_watermarks g ON g.session_id = w.session_id
LEFT JOIN session_nodes n ON n.session_key = w.session_key
"""
_ROWS = """
SELECT e.seq, CAST(e.event_json AS BLOB), e.event_zstd, e.event_utf8_bytes, i.event_id, i.parent_id
FROM transcript_events e
LEFT JOIN transcript_event_identities i ON i.session_id = e.session_id AND i.seq = e.seq
WHERE e.session_id = ? AND e.seq >= ?
ORDER BY e.seq
"""
_ARCHIVES = 'SELECT archive_name, session_key FROM session_transcript_archives'
_ARCHIVE = 'SELECT encoding, archive_blob FROM session_transcript_archives WHERE archive_name = ?'

# ------------------------------------------------------------------ memsift's import records (SQLite, PostgreSQL)

_CURSORS_AT = Sql(
    'SELECT path, session_key, offset, lines FROM imports WHERE path IN (SELECT value FROM json_each(:paths))',
    'SELECT path, session_key, byte_offset, lines FROM session_imports WHERE agent = :agent AND path = ANY(:paths)',
)
_CURSORS = Sql(
    'SELECT path, session_key, offset, lines FROM imports WHERE substr(path, 1, :length) = :prefix',
    'SELECT path, session_key, byte_offset, lines FROM session_imports '
    'WHERE agent = :agent AND substr(path, 1, :length) = :prefix',
)
_RECORD = Sql(
    'INSERT OR REPLACE INTO imports (path, session_key, offset, lines) VALUES (:path, :key, :offset, :lines)',
    'INSERT INTO session_imports (agent, path, session_key, byte_offset, lines) '
    'VALUES (:agent, :path, :key, :offset, :lines) ON CONFLICT (agent, path) DO UPDATE '
    'SET session_key = excluded.session_key, byte_offset = excluded.byte_offset, lines = excluded.lines',
)
_FORGET = Sql(
    'DELETE FROM imports WHERE path = :path',
    'DELETE FROM session_imports WHERE agent = :agent AND path = :path',
)


def window_key(session_key: str, session_id: str) -> str:
    """The memsift key of an older (rolled-over) window of ``session_key``."""
    return f'{session_key}{WINDOW_MARK}{session_id}'


def archive_key(agent_id: str, archive_name: str) -> str:
    """The memsift key of a deleted or reset transcript archive, named as 1.x archive files are."""
    return f'agent:{agent_id}:{archive_name}'


@record
class _Window:
    """One ``session_windows`` row as the import sees it."""

    session_id: str
    session_key: str
    created_at: int
    last_seq: int | None
    """None: the window has no rows (cold-stored, or not written yet)."""
    generation: str | None
    current: bool
    parent: str | None

    def wanted_key(self) -> str | None:
        """The memsift key this window belongs under now; None when it is not imported."""
        if self.last_seq is None or not self.session_key.strip() or is_incognito_session_key(self.session_key):
            return None
        return self.session_key if self.current else window_key(self.session_key, self.session_id)

    def spawned_by(self) -> str | None:
        return self.parent if self.current else self.session_key


@record
class _Cursor:
    """How far memsift read a window or archive: the key it went under, the next ``seq`` and the generation."""

    key: str
    next_seq: int
    generation: int


@record
class _Step:
    """What a window needs: a memsift key to drop first, and the first ``seq`` to read (None: nothing)."""

    drop: str | None
    start: int | None


def _step(window: _Window, cursor: _Cursor | None) -> _Step | None:
    """What ``window`` needs, given how far memsift read it; None when it is up to date."""
    wanted = window.wanted_key()
    if cursor is None:
        return _Step(None, 0) if wanted is not None else None
    last = -1 if window.last_seq is None else window.last_seq
    if cursor.key == wanted and cursor.generation == _fingerprint(window.generation) and cursor.next_seq <= last + 1:
        return _Step(None, cursor.next_seq) if last >= cursor.next_seq else None
    # Moved to another key, rewritten (new generation, or shorter than what was read) or gone cold: drop memsift's
    # copy and read the window again from its header.
    return _Step(cursor.key, 0 if wanted is not None else None)


def _fingerprint(*parts: object) -> int:
    """A 62-bit digest of ``parts`` (0 for a lone None: a window never rewritten has no generation)."""
    if parts == (None,):
        return 0
    digest = hashlib.blake2b(digest_size=8)
    for part in parts:
        digest.update(str(part).encode('utf-8', 'surrogatepass') + b'\0')
    return int.from_bytes(digest.digest(), 'big') >> (64 - _BITS)


def _lenient_text(data: bytes) -> str:
    # A bad byte in a key or id costs that character (U+FFFD), not the whole read; event JSON is read as bytes and
    # checked row by row.
    return data.decode('utf-8', 'replace')


class _OpenClawDatabase:
    """A read-only connection to an OpenClaw agent database; every error it meets is a ``SessionStoreError`` naming
    the file and what to do."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path, self.timeout = path, timeout
        if not path.is_file():
            raise SessionStoreError(f'{path}: no OpenClaw agent database here')
        uri = f'file:{urllib.parse.quote(str(path))}?mode=ro'
        try:
            self.conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self.failure(exc) from exc
        self.conn.text_factory = _lenient_text
        try:
            self.conn.execute('PRAGMA query_only = ON')
            self.conn.execute('PRAGMA trusted_schema = OFF')
        except sqlite3.Error as exc:
            self.conn.close()
            raise self.failure(exc) from exc

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One deferred read transaction: every read inside sees the same committed state, and no writer waits."""
        try:
            self.conn.execute('BEGIN')
            yield
        except sqlite3.Error as exc:
            raise self.failure(exc) from exc
        finally:
            if self.conn.in_transaction:
                self.conn.execute('ROLLBACK')  # nothing to keep: only ends the snapshot

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def check_schema(self) -> str | None:
        """The agent the database belongs to, once its schema is one this module reads (inside a snapshot)."""
        version = self.rows('PRAGMA user_version')[0][0]
        if version > SCHEMA_VERSION:
            raise SessionStoreError(
                f'{self.path} has OpenClaw agent schema {version}, newer than the {SCHEMA_VERSION} this memsift '
                'reads: upgrade memsift (pip install -U memsift)'
            )
        if version == 0:
            raise SessionStoreError(
                f'{self.path} holds no OpenClaw agent schema (user_version 0): not an OpenClaw agent database, or one '
                f'OpenClaw has not set up yet ({_DOCTOR})'
            )
        if version < SCHEMA_VERSION:
            raise SessionStoreError(
                f'{self.path} has OpenClaw agent schema {version}, older than the {SCHEMA_VERSION} this memsift '
                f'reads: {_DOCTOR} to migrate it'
            )
        try:
            meta = self.rows(_META)
        except sqlite3.OperationalError as exc:
            if 'no such table' not in str(exc):
                raise
            raise SessionStoreError(
                f'{self.path} has no schema_meta table ({exc}): not a complete OpenClaw agent database; {_DOCTOR}'
            ) from exc
        if not meta:
            raise SessionStoreError(f"{self.path} has no 'primary' schema_meta row: {_DOCTOR}")
        role, meta_version, agent_id = meta[0]
        if role != 'agent':
            raise SessionStoreError(f'{self.path} is an OpenClaw {role} database, not an agent database')
        if meta_version != version:
            raise SessionStoreError(
                f'{self.path} is half-migrated (user_version {version}, schema_meta {meta_version}): {_DOCTOR}'
            )
        return agent_id if isinstance(agent_id, str) else None

    def failure(self, exc: sqlite3.Error) -> SessionStoreError:
        """The ``SessionStoreError`` for a SQLite error met reading the database."""
        text = scrub(str(exc))
        name = getattr(exc, 'sqlite_errorname', '') or ''
        folder = self.path.parent
        shm = Path(f'{self.path}-shm')
        if name.startswith('SQLITE_NOTADB') or 'not a database' in text:
            problem = f'is not a SQLite database ({text})'
        elif name.startswith('SQLITE_CORRUPT') or 'malformed' in text:
            problem = f'is damaged ({text}): {_DOCTOR}, or restore it from a backup'
        elif name.startswith('SQLITE_BUSY') or 'locked' in text:
            problem = (
                f'stayed locked for more than {self.timeout:g} s ({text}): OpenClaw may be migrating or repairing '
                'it (openclaw doctor); try again when it is done'
            )
        elif not shm.exists() and not os.access(folder, os.W_OK):
            problem = (
                f'cannot be read ({text}): reading a WAL database needs its -shm file, which does not exist and cannot '
                f"be created in {folder}; let this user write to that folder (or run memsift as OpenClaw's user)"
            )
        elif 'no such table' in text or 'no such column' in text:
            problem = f'lacks part of OpenClaw agent schema {SCHEMA_VERSION} ({text}): {_DOCTOR}'
        else:
            problem = f'cannot be read ({text})'
        return SessionStoreError(f'{self.path} {problem}')


# ------------------------------------------------------------------ the import


def import_database(
    writer: Writer,
    lock: AbstractContextManager[Any],
    agent_id: str,
    db_path: str | os.PathLike[str],
    *,
    timeout: float = BUSY_TIMEOUT_S,
) -> dict[str, int]:
    """Import (or catch up on) the transcripts of an OpenClaw 2.x agent database
    (``<state>/agents/<agentId>/agent/openclaw-agent.sqlite``) into ``store``; returns the events added per session
    key (a key whose new rows were all stored already counts 0). Sessions are named as the module docstring says.

    OpenClaw's file is only read; nothing is written next to it but the ``-shm``/``-wal`` files SQLite keeps for
    readers of a WAL database. ``timeout``: how long a read waits for a lock OpenClaw holds, in seconds.

    Raises:
        InvalidInputError: ``db_path`` is not a path, or ``timeout`` not a number of seconds.
        SessionStoreError: the file is missing, not a SQLite database, damaged, locked beyond ``timeout``, of another
            agent than ``store``, or of a schema other than 23 (newer: upgrade memsift; older, or half-migrated: run
            ``openclaw doctor --fix``); or memsift's store cannot be written. The message names the file.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout < 1e6:
        raise InvalidInputError(f'timeout must be a number of seconds, not {preview(timeout)}')
    try:
        path = Path(db_path).expanduser().resolve()
    except (TypeError, ValueError, OSError):  # not a path, or one no file can have (NUL, a lone surrogate)
        raise InvalidInputError(f'db_path must be the path of an OpenClaw database, not {preview(db_path)}') from None
    prefix = scrub(str(path)) + '#'
    database = _OpenClawDatabase(path, timeout)
    try:
        return _Import(writer, lock, agent_id, database, prefix).run()
    finally:
        database.close()


class _Import:
    """One catch-up of ``store`` with ``database``."""

    def __init__(
        self,
        writer: Writer,
        lock: AbstractContextManager[Any],
        agent_id: str,
        database: _OpenClawDatabase,
        prefix: str,
    ) -> None:
        self.writer, self.lock, self.agent_id = writer, lock, agent_id
        self.database, self.prefix = database, prefix
        self.added: dict[str, int] = {}
        self.complete = True  # False once a part was left for the next call (stamp not recorded)

    def run(self) -> dict[str, int]:
        stamp_path = self.prefix + 'stamp'
        with self.database.snapshot():
            agent = self.database.check_schema()
            if agent is not None and agent.lower() != self.agent_id.lower():
                raise SessionStoreError(
                    f'{self.database.path} is the database of agent "{agent}", and this store keeps the sessions of '
                    f'agent "{self.agent_id}": import it into the store of agent "{agent}"'
                )
            stamp = _fingerprint(*self.database.rows(_STAMP)[0])
            recorded = self.cursors([stamp_path]).get(stamp_path)
            if recorded is not None and recorded.next_seq == stamp:
                return {}  # nothing moved since the last call
            cursors = self.cursors()
            windows = [_window(row) for row in self.database.rows(_WINDOWS)]
            archives = dict(self.database.rows(_ARCHIVES))
        self.forget_vanished(cursors, {w.session_id for w in windows}, set(archives))
        owners = sorted({w.session_key for w in windows if _step(w, cursors.get(self.window_path(w))) is not None})
        for owner in owners:
            self.import_owner(owner)
        for name, session_key in sorted(archives.items()):
            if self.prefix + f'archive:{name}' not in cursors and not is_incognito_session_key(session_key):
                self.import_archive(name)
        if self.complete:
            with self.lock, self.writer.transaction():
                self.record(stamp_path, '', stamp, 0)
        return self.added

    # -------------------------------------------------------------- memsift's side

    def window_path(self, window: _Window) -> str:
        return self.prefix + f'window:{window.session_id}'

    def cursors(self, paths: Iterable[str] | None = None) -> dict[str, _Cursor]:
        """memsift's records of this database (each window's and archive's, and the stamp), or of just ``paths``."""
        with self.lock:
            if paths is None:
                found = self.writer.db.execute(_CURSORS, {'prefix': self.prefix, 'length': len(self.prefix)})
            else:
                found = self.writer.db.execute(_CURSORS_AT, {'paths': list(paths)})
            rows = found.fetchall()
        return {path: _Cursor(key, int(offset), int(lines)) for path, key, offset, lines in rows}

    def record(self, path: str, key: str, offset: int, lines: int) -> None:
        self.writer.db.execute(_RECORD, {'path': path, 'key': key, 'offset': offset, 'lines': lines})

    def forget_vanished(self, cursors: dict[str, _Cursor], window_ids: set[str], archive_names: set[str]) -> None:
        """Drop what memsift imported from windows and archives the database no longer has (a deleted session: its
        archive is imported under its own key; a pruned archive)."""
        alive = {self.prefix + f'window:{sid}' for sid in window_ids} | {
            self.prefix + f'archive:{name}' for name in archive_names
        }
        vanished = {path: c for path, c in cursors.items() if path not in alive and path != self.prefix + 'stamp'}
        if not vanished:
            return
        with self.lock, self.writer.transaction():
            now = self.cursors(vanished)
            if any(now.get(path) != cursor for path, cursor in vanished.items()):
                self.complete = False  # another process is importing this database: leave it to the next call
                return
            for path, cursor in vanished.items():
                self.writer.delete(cursor.key)  # also its import records
                self.writer.db.execute(_FORGET, {'path': path})

    def import_owner(self, owner: str) -> None:
        """Catch up with every window of one OpenClaw key, read in one snapshot and written in one transaction (a
        rollover moves a window between memsift keys: no search sees it in neither or both)."""
        with self.database.snapshot():
            windows = [_window(row) for row in self.database.rows(_WINDOWS + ' WHERE w.session_key = ?', (owner,))]
            paths = {w.session_id: self.window_path(w) for w in windows}
            cursors = self.cursors(paths.values())
            steps = {w.session_id: _step(w, cursors.get(paths[w.session_id])) for w in windows}
            if not any(steps.values()):
                return  # done meanwhile by another process importing this database
            rows = {
                sid: self.database.rows(_ROWS, (sid, step.start))
                for sid, step in steps.items()
                if step is not None and step.start is not None
            }
        with self.lock, self.writer.transaction():
            if self.cursors(paths.values()) != cursors:
                self.complete = False  # another process imported these windows meanwhile
                return
            for window in windows:
                step = steps[window.session_id]
                if step is not None and step.drop is not None:
                    self.writer.delete(step.drop)
                    self.writer.db.execute(_FORGET, {'path': paths[window.session_id]})
            for window in windows:
                if window.session_id in rows:
                    self.write_window(window, paths[window.session_id], rows[window.session_id])

    def write_window(self, window: _Window, path: str, rows: list[tuple[Any, ...]]) -> None:
        key = window.wanted_key()
        assert key is not None and window.last_seq is not None
        spawned_by = window.spawned_by()
        if self.writer.session_state(key) is None:  # created here so that it keeps OpenClaw's session id
            self.writer.create_session(key, window.session_id, spawned_by, _started(rows, window.created_at))
        self.writer.adopt(key, spawned_by)
        added = 0
        for seq, raw, packed, size, event_id, parent_id in rows:
            decoded = _decode_row(raw, packed, size)
            if isinstance(decoded, str):
                _log.warning('%s: session %s seq %s skipped: %s', self.database.path, window.session_id, seq, decoded)
                event, body = _placeholder(seq, event_id, parent_id)
                if event is None:
                    continue
            else:
                event, body = decoded
            added += self.writer.append(key, event, body, spawned_by, index=True, line=seq + 1)
        self.record(path, key, window.last_seq + 1, _fingerprint(window.generation))
        self.added[key] = self.added.get(key, 0) + added

    def import_archive(self, name: str) -> None:
        """A deleted or reset transcript, imported once (an archive never changes; a pruned one is dropped)."""
        path = self.prefix + f'archive:{name}'
        with self.database.snapshot():
            found = self.database.rows(_ARCHIVE, (name,))
        if not found:
            self.complete = False  # pruned since it was listed
            return
        encoding, blob = found[0]
        key = archive_key(self.agent_id, name)
        lines, problem = _archive_lines(encoding, blob)
        if problem is not None:
            _log.warning('%s: archive %s: %s', self.database.path, name, problem)
        added = 0
        with self.lock, self.writer.transaction():
            if self.cursors([path]):
                return  # another process imported it meanwhile
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                decoded = _parse(line)
                if isinstance(decoded, str):
                    _log.warning('%s: archive %s line %d skipped: %s', self.database.path, name, number, decoded)
                    continue
                event, body = decoded
                added += self.writer.append(key, event, body, None, index=True, line=number)
            self.record(path, key, len(lines), 0)
        self.added[key] = self.added.get(key, 0) + added


# ------------------------------------------------------------------ decoding rows


def _decode_row(raw: bytes | None, packed: bytes | None, size: int | None) -> tuple[dict[str, Any], str] | str:
    """An event row's event and its JSON text, or why it is skipped."""
    if raw is None:
        if not isinstance(packed, bytes):
            return 'neither event_json nor event_zstd holds the event'
        try:
            raw = _unzstd(packed, size)
        except ValueError as exc:
            return str(exc)
    return _parse(raw)


def _unzstd(packed: bytes, size: int | None) -> bytes:
    """A zstd-compressed row (``size``: its length decoded, as stored); ValueError when it does not decode to that."""
    zstandard = _zstandard()
    limit = size if isinstance(size, int) and 0 < size <= MAX_EVENT_BYTES else MAX_EVENT_BYTES
    try:
        with zstandard.ZstdDecompressor().stream_reader(packed) as reader:
            data = reader.read(limit + 1)  # a frame that claims more is refused, not decoded whole
    except zstandard.ZstdError as exc:
        raise ValueError(f'not a zstd frame ({exc})') from None
    if len(data) > limit:
        raise ValueError(f'the zstd frame decodes to more than {limit} bytes')
    if size is not None and len(data) != size:
        raise ValueError(f'the zstd frame decodes to {len(data)} bytes, not {size}')
    return bytes(data)


def _zstandard() -> Any:
    """The ``zstandard`` module, imported only when a compressed row or archive is met.

    Raises:
        SessionStoreError: it is missing (every compressed row would be lost, not one).
    """
    try:
        import zstandard
    except ImportError as exc:
        raise SessionStoreError(
            'reading compressed OpenClaw transcripts needs the zstandard package: pip install "zstandard>=0.22"'
        ) from exc
    return zstandard


def _parse(raw: bytes) -> tuple[dict[str, Any], str] | str:
    """An event and its JSON text, or why it is skipped (the reasons a JSONL line is skipped)."""
    event = parse_event_line(raw)
    return event if isinstance(event, str) else (event, raw.decode('utf-8').rstrip('\r\n'))


def _placeholder(seq: int, event_id: object, parent_id: object) -> tuple[Mapping[str, Any] | None, str]:
    """What stands for an unreadable row whose id OpenClaw indexed: it keeps the event tree whole, so the events
    around it stay on the active branch (it has no text: no search or history shows it)."""
    if not isinstance(event_id, str) or not event_id:
        return None, ''
    event = {'type': 'unreadable', 'id': event_id, 'parentId': parent_id if isinstance(parent_id, str) else None}
    return event, json.dumps({**event, 'seq': seq})


def _window(row: tuple[Any, ...]) -> _Window:
    session_id, key, created_at, last_seq, generation, current, parent = row
    return _Window(session_id, key, created_at, last_seq, generation, bool(current), parent)


def _started(rows: list[tuple[Any, ...]], created_at: int) -> int:
    """When a window began: its header's time, as for a JSONL transcript (else the window's ``created_at``)."""
    if rows and rows[0][0] == 0 and rows[0][1] is not None:
        decoded = _parse(rows[0][1])
        if not isinstance(decoded, str):
            started = timestamp_ms(decoded[0].get('timestamp'))
            if started is not None:
                return started
    return created_at


def _archive_lines(encoding: str, blob: bytes) -> tuple[list[bytes], str | None]:
    """An archive's JSONL lines, or none and why (a blob that does not decode)."""
    if not isinstance(blob, bytes):
        return [], 'no archive blob'
    if encoding == 'zstd':
        zstandard = _zstandard()
        try:
            with zstandard.ZstdDecompressor().stream_reader(blob) as reader:
                blob = reader.read()
        except zstandard.ZstdError as exc:
            return [], f'not a zstd frame ({exc})'
    elif encoding != 'identity':
        return [], f'unknown encoding {encoding!r}'
    lines = bytes(blob).split(b'\n')  # on \n only: JSON strings may hold other line separators
    if lines and lines[-1] == b'':
        lines.pop()
    return lines, None
