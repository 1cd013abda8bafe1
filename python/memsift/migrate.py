"""``memsift migrate``: copy an agent's stores from SQLite into PostgreSQL, or back, resumably, and verify the copy.

The memory store is copied file by file through the target's own writes (``replace_files``, one transaction per
block of files), so the target is consistent at every moment and an interrupted migration leaves files that are
either complete or absent: running it again skips files already there with the same hash and chunks, copies the
rest, and removes from the target what the source no longer has. The index identity is written last, so a target
cut short is never taken for a finished index with current vectors. The embedding cache is copied too.

The session store is copied session by session (:func:`migrate_sessions`): the session's id, its events in their
stored order and its flags; a session already complete in the target is skipped. The copy numbers events 1, 2, …
as appends do (an imported transcript's events kept their JSONL line numbers), and the import bookkeeping of
transcript files is not copied: importing the same file into the copy reads it again and stores nothing twice.

Verification reads both sides in full and compares counts and a sha256 over every file record, chunk (lines, hash,
text) and vector, and over every session's events; ``verified`` is False, with the first difference, when they
disagree.

Derived indexes beside ``store.path`` (the BM25 folder, the saved vectors) are removed afterwards: they reflect the
old store's generations, and rebuild from the new one on the next open.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memsift._record import replace
from memsift._text import without_nul
from memsift.config import MemoryConfig
from memsift.errors import InvalidInputError
from memsift.index.backend import writer_lock
from memsift.index.records import ChunkRow, FileWrite

if TYPE_CHECKING:
    from memsift.index.protocol import Store
    from memsift.sessions import SessionStore

__all__ = ['memory_digest', 'migrate', 'migrate_memory', 'migrate_sessions', 'session_digest']

Progress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: ``what`` is ``memory`` or ``sessions``."""

BLOCK_CHUNKS = 512
"""Chunks copied per target transaction."""


def _dims(store: Store) -> int | None:
    identity = store.identity or {}
    dims = identity.get('dims')
    return int(dims) if isinstance(dims, int) and dims > 0 else None


def _file_chunks(store: Store, dims: int | None) -> Iterator[tuple[str, list[ChunkRow], dict[int, bytes]]]:
    """``(path, chunks in order, {chunk id: vector bytes})`` per indexed path, sorted by path."""
    by_path: dict[str, list[ChunkRow]] = {}
    for row in store.iter_chunks(batch=2000):
        by_path.setdefault(row.path, []).append(row)
    vectors: dict[int, bytes] = {}
    if dims is not None:
        for ids, matrix in store.iter_vectors(dims):
            vectors.update((int(i), matrix[n].tobytes()) for n, i in enumerate(ids))
    for path in sorted(store.paths()):
        rows = by_path.get(path, [])
        yield path, rows, {row.id: vectors[row.id] for row in rows if row.id in vectors}


def memory_digest(store: Store) -> dict[str, Any]:
    """Counts and a sha256 of what a memory store holds, independent of its chunk ids and backend."""
    digest = hashlib.sha256()
    files = store.files()
    chunks = vectors = 0
    for path, rows, vecs in _file_chunks(store, _dims(store)):
        record = files[path]
        digest.update(repr((path, record.source, record.hash, record.mtime, record.size)).encode('utf-8', 'replace'))
        for row in rows:
            text = without_nul(row.text).encode('utf-8', 'replace')
            digest.update(repr((row.start_line, row.end_line, row.hash, hashlib.sha256(text).hexdigest())).encode())
            digest.update(vecs.get(row.id, b'-'))
        chunks += len(rows)
        vectors += len(vecs)
    digest.update(repr(sorted(store.skipped().items())).encode('utf-8', 'replace'))
    digest.update(repr(store.identity).encode())
    return {
        'files': len(files),
        'chunks': chunks,
        'vectors': vectors,
        'skipped': len(store.skipped()),
        'cacheEntries': store.cache_size(),
        'sha256': digest.hexdigest(),
    }


def migrate_memory(source: Store, target: Store, progress: Progress | None = None) -> dict[str, Any]:
    """Make ``target`` hold what ``source`` holds (see the module docs); returns counts and the verification."""
    started = time.perf_counter()
    dims = _dims(source)
    have = target.files()
    wanted = source.paths()
    copied = kept = 0
    block: list[FileWrite] = []
    block_chunks = 0

    def flush() -> None:
        nonlocal block, block_chunks
        if block:
            target.replace_files(block)
        block, block_chunks = [], 0

    import numpy as np

    records = source.files()
    for done, (path, rows, vecs) in enumerate(_file_chunks(source, dims), 1):
        record = records[path]
        existing = have.get(path)
        same_file = existing is not None and (existing.hash, existing.mtime) == (record.hash, record.mtime)
        if same_file and [c.hash for c in target.chunks(target.chunk_ids(path))] == [r.hash for r in rows]:
            kept += 1  # copied by an earlier run
            continue
        matrix = None
        if dims is not None and rows and len(vecs) == len(rows):
            matrix = np.frombuffer(b''.join(vecs[r.id] for r in rows), dtype=np.float32).reshape(len(rows), dims)
        chunks = [(r.start_line, r.end_line, r.text, r.hash) for r in rows]
        block.append(FileWrite(path, record.source, record.hash, record.mtime, record.size, chunks, matrix))
        block_chunks += len(rows)
        copied += 1
        if block_chunks >= BLOCK_CHUNKS:
            flush()
        if progress is not None:
            progress('memory', done, len(wanted))
    flush()
    for path, reason in source.skipped().items():
        if target.skipped().get(path) != reason:
            target.record_skipped(path, reason)
    for path in sorted(set(target.paths()) - set(wanted)):
        target.delete_file(path)
    for path in sorted(set(target.skipped()) - set(source.skipped())):
        target.delete_file(path)
    _copy_cache(source, target)
    if source.identity is not None and target.identity != source.identity:
        target.set_identity(source.identity)
    return {'filesCopied': copied, 'filesAlreadyThere': kept, 'seconds': round(time.perf_counter() - started, 2)}


def _copy_cache(source: Store, target: Store) -> None:
    """The embedding cache rows, provider by provider (rows are idempotent upserts)."""
    import numpy as np

    by_key: dict[str, list[tuple[str, np.ndarray]]] = {}
    for provider_key, text_hash, vector in source.cache_rows():
        by_key.setdefault(provider_key, []).append((text_hash, np.frombuffer(vector, dtype=np.float32)))
    for provider_key, items in by_key.items():
        for start in range(0, len(items), 1000):
            target.cache_vectors(provider_key, items[start : start + 1000])


def _with_timestamp(line: str, timestamp: int) -> dict[str, Any]:
    """The stored event, carrying the timestamp the source stored for it (an event without a readable one got its
    append time there: the copy keeps that time instead of taking its own)."""
    from memsift.sessions.events import timestamp_ms

    event = json.loads(line)
    if timestamp_ms(event.get('timestamp')) != timestamp:
        event['timestamp'] = timestamp
    return event


def _effective(line: str, timestamp: int) -> str:
    """An event as the digest sees it: its JSON, canonical, with the timestamp it was stored with."""
    return json.dumps({**json.loads(line), 'timestamp': timestamp}, sort_keys=True, ensure_ascii=False)


def session_digest(store: SessionStore) -> dict[str, Any]:
    """Counts and a sha256 of every session (key, id, parent, flags) and its events in stored order."""
    digest = hashlib.sha256()
    sessions = sorted(store.sessions(), key=lambda s: s['key'])
    events = 0
    for session in sessions:
        flags = (session['key'], session['sessionId'], session['spawnedBy'], session['archived'], session['incognito'])
        digest.update(repr(flags).encode('utf-8', 'replace'))
        for line, timestamp in store.event_lines(session['key']):
            digest.update(_effective(line, timestamp).encode('utf-8', 'replace'))
            events += 1
    return {'sessions': len(sessions), 'events': events, 'sha256': digest.hexdigest()}


def migrate_sessions(source: SessionStore, target: SessionStore, progress: Progress | None = None) -> dict[str, Any]:
    """Copy every session of ``source`` into ``target`` (events in stored order, then flags); sessions already
    complete in the target are skipped, and appends are idempotent, so a cut run resumes."""
    started = time.perf_counter()
    there = {s['key']: s for s in target.sessions()}
    sessions = source.sessions()
    copied = kept = 0
    for done, session in enumerate(sessions, 1):
        key = session['key']
        existing = there.get(key)
        if existing is None or existing['events'] != session['events']:
            # The header first: it gives the copy the session's id (appends without one make a new id).
            events = [{'type': 'session', 'id': session['sessionId']}]
            events += [_with_timestamp(line, timestamp) for line, timestamp in source.event_lines(key)]
            for start in range(0, len(events), 1000):
                target.append_many(key, events[start : start + 1000], session['spawnedBy'])
            copied += 1
        else:
            kept += 1
        target.set_flags(key, archived=session['archived'], incognito=session['incognito'])
        if progress is not None:
            progress('sessions', done, len(sessions))
    target.reconcile()
    return {'sessionsCopied': copied, 'sessionsAlreadyThere': kept, 'seconds': round(time.perf_counter() - started, 2)}


def _remove_derived(config: MemoryConfig) -> None:
    """The BM25 folder and saved vectors beside ``store.path``: they reflect the old store's generations."""
    base = Path(config.store.path)
    shutil.rmtree(base.with_suffix('.bm25'), ignore_errors=True)
    base.with_suffix('.vectors').unlink(missing_ok=True)


def migrate(
    config: MemoryConfig,
    to: Literal['postgres', 'sqlite'],
    *,
    dsn: str | None = None,
    sessions_path: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Copy the agent's memory store (and its session store, where one exists) between the SQLite files of
    ``config`` (``store.path``; the default session file, or ``sessions_path``) and the PostgreSQL database
    (``dsn``, else ``store.dsn``, else ``$MEMSIFT_PG_DSN``), in the direction ``to``; then verify.

    Returns:
        ``{"to", "memory": {..., "source", "target", "verified"}, "sessions"?: {...}, "verified", "seconds"}``.

    Raises:
        InvalidInputError: ``to`` is not ``postgres`` or ``sqlite``, or the SQLite source does not exist.
        ConfigError: no DSN anywhere.
        StoreError, SessionStoreError: a store cannot be opened or written (the message names it).
    """

    from memsift._postgres import resolve_dsn
    from memsift.index.backend import open_memory_store
    from memsift.sessions import SessionStore, default_sessions_path

    if to not in ('postgres', 'sqlite'):
        raise InvalidInputError(f'migrate goes "to" postgres or sqlite, not {to!r}')
    dsn, _ = resolve_dsn(dsn or config.store.dsn)
    started = time.perf_counter()
    lite = replace(config, store=replace(config.store, backend='sqlite'))
    pg = replace(config, store=replace(config.store, backend='postgres', dsn=dsn))
    source_config, target_config = (lite, pg) if to == 'postgres' else (pg, lite)
    if to == 'postgres' and not Path(config.store.path).is_file():
        raise InvalidInputError(f'no SQLite memory store at {config.store.path} (store.path) to migrate')
    session_file = sessions_path or str(default_sessions_path(config.agent_id))
    out: dict[str, Any] = {'to': to}
    with ExitStack() as stack:
        source = open_memory_store(source_config)
        stack.callback(source.close)
        target = open_memory_store(target_config)
        stack.callback(target.close)
        # Nothing else writes either store meanwhile: syncs in other processes wait, as for a sync. The PostgreSQL
        # side's lock is both: this host's lock file beside store.path (the SQLite file's lock) and the agent's
        # advisory lock in the database.
        stack.enter_context(writer_lock(source if source.catches_up else target).holding(wait=True))
        memory = migrate_memory(source, target, progress)
        memory['source'], memory['target'] = memory_digest(source), memory_digest(target)
        memory['verified'] = _same(memory['source'], memory['target'])
        out['memory'] = memory
        lite_sessions = Path(session_file).expanduser().is_file()
        if to == 'sqlite' or lite_sessions:
            targets = (session_file, dsn) if to == 'postgres' else (dsn, session_file)
            source_sessions = stack.enter_context(SessionStore(targets[0], config.agent_id))
            target_sessions = stack.enter_context(SessionStore(targets[1], config.agent_id))
            sessions = migrate_sessions(source_sessions, target_sessions, progress)
            sessions['source'], sessions['target'] = session_digest(source_sessions), session_digest(target_sessions)
            sessions['verified'] = sessions['source'] == sessions['target']
            out['sessions'] = sessions
    _remove_derived(config)
    out['verified'] = out['memory']['verified'] and out.get('sessions', {}).get('verified', True)
    out['seconds'] = round(time.perf_counter() - started, 2)
    return out


def _same(source: dict[str, Any], target: dict[str, Any]) -> bool:
    """Digests agree (the cache may hold more in the target: rows are only ever added there)."""
    keys = ('files', 'chunks', 'vectors', 'skipped', 'sha256')
    return all(source[k] == target[k] for k in keys) and target['cacheEntries'] >= source['cacheEntries']
