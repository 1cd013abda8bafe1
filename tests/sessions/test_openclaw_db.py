"""OpenClaw 2.x transcripts read from the agent's SQLite store (memsift.sessions.openclaw_db), on the real database
OpenClaw 2026.9.6 wrote (tests/sessions/openclaw2/: its schema and rows, rebuilt here without OpenClaw) and on copies
changed the way OpenClaw's writer changes it. No mocks: real SQLite files, a real writer process."""

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memsift import InvalidInputError, SessionStore, SessionStoreError
from memsift.sessions import archived_at_ms
from memsift.sessions.openclaw_db import archive_key, window_key

FIXTURE = Path(__file__).parent / 'openclaw2'
_spec = importlib.util.spec_from_file_location('openclaw_fixture', FIXTURE / 'openclaw_fixture.py')
oc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oc)


def sid(n):
    return f'00000000-0000-4000-8000-{n:012d}'


MAIN = 'agent:main:main'
DM = 'agent:main:telegram:direct:5550001'
NEW_DM = 'agent:main:telegram:direct:5550002'
GROUP = 'agent:main:telegram:group:-100123'
SUBAGENT = 'agent:main:subagent:11111111-2222-4333-8444-555555555555'
CRON = 'agent:main:cron:daily-report'
ALICE = 'agent:main:webchat:direct:alice'
ALICE_OLD = window_key(ALICE, sid(7))


def fixture_rows(table):
    dump = json.loads((FIXTURE / 'agent-main-rows.json').read_text(encoding='utf-8'))['tables'][table]
    return [dict(zip(dump['columns'], row)) for row in dump['rows']]


(DELETED,) = fixture_rows('session_transcript_archives')  # the Discord channel session OpenClaw deleted
ARCHIVE = archive_key('main', DELETED['archive_name'])  # <sessionId>.jsonl.deleted.<time>.<generation>.zst
IMPORTED = {  # events per key: every row but the header
    MAIN: 20,
    DM: 5,
    NEW_DM: 2,
    GROUP: 2,
    SUBAGENT: 4,
    CRON: 2,
    ALICE: 1,
    ALICE_OLD: 5,
    ARCHIVE: 2,
}


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp('openclaw') / 'openclaw-agent.sqlite'
    oc.build(path)
    return path


@pytest.fixture
def db(built, tmp_path):
    """A copy of the real database where OpenClaw keeps it: ``<state>/agents/main/agent/openclaw-agent.sqlite``."""
    path = tmp_path / 'state' / 'agents' / 'main' / 'agent' / 'openclaw-agent.sqlite'
    path.parent.mkdir(parents=True)
    shutil.copy(built, path)
    return path


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / 'memsift-sessions.sqlite') as store:
        yield store


def all_terms(store, query, caller=MAIN):
    """The hits holding every term (what OpenClaw's sessions_search would find)."""
    return [(h['sessionKey'], h['snippet']) for h in store.search(query, caller)['results'] if h.get('match') == 'all']


def texts(store, key):
    """The text of each message on a session's active branch (history shows only what follows the last reset)."""
    store.reconcile()  # the branch as history would rebuild it
    return [text for _, _, text in store.active_messages(key)]


def events(store):
    return {s['key']: s['events'] for s in store.sessions()}


# ---------------------------------------------------------------- the real database


@pytest.mark.parametrize('backend', ['sqlite', 'postgres'])
def test_the_real_database_imports_every_session(db, tmp_path, backend, request):
    target = tmp_path / 'memsift.sqlite' if backend == 'sqlite' else request.getfixturevalue('pg_dsn')
    with SessionStore(target) as store:
        assert store.import_openclaw_database(db) == IMPORTED
        assert store.import_openclaw_database(db) == {}  # nothing moved: nothing read
        sessions = {s['key']: s for s in store.sessions()}
        assert {key: s['events'] for key, s in sessions.items()} == IMPORTED
        # OpenClaw's session ids (memory hit paths are sessions/<agentId>/<sessionId>.jsonl), and parents
        assert sessions[MAIN]['sessionId'] == sid(1)
        assert (sessions[ALICE]['sessionId'], sessions[ALICE_OLD]['sessionId']) == (sid(17), sid(7))
        assert sessions[ALICE_OLD]['spawnedBy'] == ALICE
        assert sessions[SUBAGENT]['spawnedBy'] == MAIN
        assert sessions[ARCHIVE]['sessionId'] == sid(4)
        assert archived_at_ms(ARCHIVE) == DELETED['created_at']  # session memory ages it from its deletion
        for query, key in [
            ('zebra-marker-one', MAIN),
            ('kumquat-marker', MAIN),
            ('regen-marker', MAIN),
            ('dentist-marker', DM),
            ('rewind-marker', DM),
            ('pineapple-marker', GROUP),
            ('newcontact-marker', NEW_DM),
            ('cron-marker', CRON),
            ('dirty-marker', SUBAGENT),  # OpenClaw's own projection of it is stale; memsift's is not
            ('rollover-marker', ALICE),
            ('walrus-marker', ALICE_OLD),
            ('release-marker', ARCHIVE),
        ]:
            assert [k for k, _ in all_terms(store, query)] == [key], query
        # an older window belongs to its key's conversation: the key itself sees it under "tree"
        assert [k for k, _ in all_terms(store, 'walrus-marker', caller=ALICE)] == [ALICE_OLD]
        assert all_terms(store, 'walrus-marker', caller=DM) == []


def test_history_and_search_keep_to_the_active_branch(db, store):
    store.import_openclaw_database(db)
    main = texts(store, MAIN)
    assert 'Tell me about mangoes (edited-branch-marker)' in main  # the edit ...
    assert 'Tell me about mangos (typo-branch-marker)' not in main  # ... hides the message it replaced
    assert 'Mangos are tropical fruit (old branch answer).' not in main
    assert 'Papayas are also tropical.' not in main  # regenerated away
    assert main[-2:] == ['First message after /new in main: kumquat-marker', 'Kumquats are small citrus fruit.']
    # history starts after main's /new (a reset event), as 2.x's does
    shown = [m['content'] for m in store.history(MAIN, MAIN)['messages']]
    assert shown == ['First message after /new in main: kumquat-marker', 'Kumquats are small citrus fruit.']
    assert texts(store, DM) == [  # a leaf control rewound past the insurance message
        'private dm about the dentist appointment dentist-marker',
        'Rewound answer: the dentist is Wednesday. rewind-marker',
    ]
    assert texts(store, SUBAGENT) == [
        'subagent task: count to three subagent-marker',
        'Recount after rewind: uno dos tres. dirty-marker',
    ]
    for off_branch in ('typo-branch-marker', 'insurance-marker', 'old branch answer'):
        assert all_terms(store, off_branch) == [], off_branch


def column(rows):
    return [row[0] for row in rows]


def openclaw_active(conn, session_id):
    """The event ids of OpenClaw's materialised active branch of a window."""
    return column(
        conn.execute(
            'SELECT i.event_id FROM session_transcript_active_events a JOIN transcript_event_identities i '
            'ON i.session_id = a.session_id AND i.seq = a.event_seq WHERE a.session_id = ? ORDER BY a.active_position',
            (session_id,),
        )
    )


def memsift_active(store, key):
    """The event ids on memsift's active branch of a session, and those of its full-text rows."""
    active = store._db.execute(
        'SELECT event_id FROM events WHERE session_key = :key AND active = 1 ORDER BY seq', {'key': key}
    )
    searchable = store._db.execute('SELECT event_id FROM message_fts WHERE session_key = :key', {'key': key})
    return column(active), set(column(searchable))


def test_the_active_branch_is_openclaws(db, store):
    """memsift's active branch of every window equals OpenClaw's materialised one where that is current, and its
    searchable messages are exactly OpenClaw's full-text rows there."""
    store.import_openclaw_database(db)
    store.reconcile()
    conn = sqlite3.connect(db)
    keys = {s['sessionId']: s['key'] for s in store.sessions()}
    current = column(
        conn.execute(
            'SELECT session_id FROM session_transcript_index_state s WHERE needs_rebuild = 0 '
            'AND indexed_seq = (SELECT max(seq) FROM transcript_events e WHERE e.session_id = s.session_id)'
        )
    )
    assert sorted(current) == sorted(set(keys) - {sid(4), sid(5)})  # all but the archive and the stale one
    for session_id in current:
        active, searchable = memsift_active(store, keys[session_id])
        assert active == openclaw_active(conn, session_id), keys[session_id]
        fts = conn.execute('SELECT message_id FROM session_transcript_fts WHERE session_id = ?', (session_id,))
        assert searchable == set(column(fts)), keys[session_id]
    # OpenClaw's projection of the subagent session waits for a rebuild; its reconcile gives seq 1 and 4
    on_branch = conn.execute(
        'SELECT event_id FROM transcript_event_identities WHERE session_id = ? AND seq IN (1, 4) ORDER BY seq',
        (sid(5),),
    )
    assert memsift_active(store, SUBAGENT)[0] == column(on_branch)


def test_side_appends_do_not_move_the_branch(db, store):
    """OpenClaw appends a captured channel reply as a side entry (no parentId; it never becomes the leaf): the next
    message continues from the leaf before it."""
    store.import_openclaw_database(db)
    writer = oc.connect(db)
    leaf = oc.leaf_id(writer, sid(18))
    side = {
        'type': 'custom',
        'id': 'conversation-turn-reply-t1',
        'customType': 'openclaw.conversation-turn-reply',
        'appendMode': 'side',
        'timestamp': 1796655080000,
        'data': {'turnId': 't1'},
    }
    oc.append(writer, sid(18), [side, oc.message('after the side entry sideafter-marker', leaf)])
    assert store.import_openclaw_database(db) == {NEW_DM: 2}
    assert texts(store, NEW_DM) == [
        'hello from a new telegram contact newcontact-marker',
        'Welcome, new contact!',
        'after the side entry sideafter-marker',
    ]
    assert [k for k, _ in all_terms(store, 'sideafter-marker')] == [NEW_DM]
    assert [k for k, _ in all_terms(store, 'newcontact-marker')] == [NEW_DM]


def test_compressed_rows_are_read(db, store):
    store.import_openclaw_database(db)
    conn = sqlite3.connect(db)
    packed = conn.execute(
        'SELECT seq FROM transcript_events WHERE session_id = ? AND event_json IS NULL ORDER BY seq', (sid(1),)
    ).fetchall()
    assert packed == [(10,), (16,)]  # OpenClaw stored these two as zstd frames
    assert [k for k, _ in all_terms(store, 'guava-big-marker')] == [MAIN]
    assert [k for k, _ in all_terms(store, 'Mango facts repeat')] == [MAIN]
    big = next(text for text in texts(store, MAIN) if text.startswith('Guava notes:'))
    assert big.endswith('guava-big-marker')


# ---------------------------------------------------------------- catching up, rewrites, moves


def test_catching_up_reads_only_the_new_rows(db, store):
    assert store.import_openclaw_database(db)[NEW_DM] == 2
    before = events(store)
    writer = oc.connect(db)
    parent = oc.leaf_id(writer, sid(18))
    first = oc.message('catch-up one marker-c1', parent)
    second = oc.message('catch-up two marker-c2', first['id'], role='assistant')
    oc.append(writer, sid(18), [first, second])
    assert store.import_openclaw_database(db) == {NEW_DM: 2}
    after = events(store)
    assert after[NEW_DM] == before[NEW_DM] + 2
    assert {k: v for k, v in after.items() if k != NEW_DM} == {k: v for k, v in before.items() if k != NEW_DM}
    assert texts(store, NEW_DM)[-2:] == ['catch-up one marker-c1', 'catch-up two marker-c2']
    assert store.import_openclaw_database(db) == {}


def test_a_rewrite_leaves_no_stale_message(db, store):
    store.import_openclaw_database(db)
    writer = oc.connect(db)
    first = writer.execute(
        'SELECT event_id FROM transcript_event_identities WHERE session_id = ? AND seq = 1', (sid(18),)
    ).fetchone()[0]
    oc.replace_suffix(writer, sid(18), 2, [oc.message('a rewritten answer replacement-marker', first, 'assistant')])
    assert store.import_openclaw_database(db) == {NEW_DM: 2}  # read again from its header
    assert texts(store, NEW_DM) == [
        'hello from a new telegram contact newcontact-marker',
        'a rewritten answer replacement-marker',
    ]
    assert all_terms(store, 'Welcome new contact') == []
    assert [k for k, _ in all_terms(store, 'newcontact-marker')] == [NEW_DM]
    # rows cut off without a new generation: the window now ends before what was read
    writer.execute('DELETE FROM transcript_events WHERE session_id = ? AND seq = 2', (sid(18),))
    assert store.import_openclaw_database(db) == {NEW_DM: 1}
    assert texts(store, NEW_DM) == ['hello from a new telegram contact newcontact-marker']
    assert events(store)[NEW_DM] == 1


def test_a_window_moved_to_cold_storage_leaves_search(db, store):
    """Cold storage moves a window's rows out of the database; OpenClaw's search then leaves it out, and so does
    memsift (its copy is dropped, not kept stale)."""
    store.import_openclaw_database(db)
    writer = oc.connect(db)
    now = int(time.time() * 1000)
    writer.execute('BEGIN IMMEDIATE')
    (count, last) = writer.execute(
        'SELECT count(*), max(seq) FROM transcript_events WHERE session_id = ?', (sid(18),)
    ).fetchone()
    writer.execute('DELETE FROM transcript_events WHERE session_id = ?', (sid(18),))
    writer.execute(
        'INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, archive_sha256, '
        "event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage) VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, 'file')",
        (sid(18), uuid.uuid4().hex, f'{uuid.uuid4().hex}.jsonl.zst', '0' * 64, count, last, now),
    )
    writer.execute('UPDATE session_windows SET transcript_updated_at = ? WHERE session_id = ?', (now, sid(18)))
    writer.execute('COMMIT')
    assert store.import_openclaw_database(db) == {}
    assert NEW_DM not in events(store)
    assert all_terms(store, 'newcontact-marker') == []


def roll_over(writer, key, new_id, text):
    """What OpenClaw does on a daily or idle reset: a new window for the key, which becomes its current one."""
    now = int(time.time() * 1000)
    old = writer.execute('SELECT current_session_id FROM session_nodes WHERE session_key = ?', (key,)).fetchone()[0]
    writer.execute(
        'INSERT INTO session_windows (session_id, session_key, previous_session_id, created_at, updated_at) '
        'VALUES (?, ?, ?, ?, ?)',
        (new_id, key, old, now, now),
    )
    writer.execute('INSERT INTO transcript_rewrite_watermarks VALUES (?, ?, ?)', (new_id, uuid.uuid4().hex, now))
    writer.execute('UPDATE session_nodes SET current_session_id = ? WHERE session_key = ?', (new_id, key))
    header = {'type': 'session', 'version': 4, 'id': new_id, 'timestamp': '2026-12-08T09:00:00.000Z', 'cwd': '/tmp'}
    oc.append(writer, new_id, [header, oc.message(text, None)])
    return old


def test_a_rollover_moves_the_old_window_under_its_window_key(db, store):
    store.import_openclaw_database(db)
    writer = oc.connect(db)
    old = roll_over(writer, NEW_DM, sid(19), 'the next day with the new contact nextday-marker')
    added = store.import_openclaw_database(db)
    assert added == {NEW_DM: 1, window_key(NEW_DM, old): 2}
    sessions = {s['key']: s for s in store.sessions()}
    assert sessions[NEW_DM]['sessionId'] == sid(19)
    assert sessions[window_key(NEW_DM, old)]['sessionId'] == old
    assert texts(store, NEW_DM) == ['the next day with the new contact nextday-marker']
    assert [k for k, _ in all_terms(store, 'newcontact-marker', caller=NEW_DM)] == [window_key(NEW_DM, old)]
    assert [k for k, _ in all_terms(store, 'nextday-marker', caller=NEW_DM)] == [NEW_DM]


def test_a_legacy_key_is_imported_as_it_is_then_follows_doctor(db, store):
    writer = oc.connect(db)
    writer.execute('PRAGMA foreign_keys = OFF')
    for table in ('session_nodes', 'session_windows'):
        writer.execute(f"UPDATE {table} SET session_key = 'cron:daily-report' WHERE session_key = ?", (CRON,))
    store.import_openclaw_database(db)
    assert [k for k, _ in all_terms(store, 'cron-marker')] == ['cron:daily-report']
    for table in ('session_nodes', 'session_windows'):  # openclaw doctor --fix canonicalises it
        writer.execute(f"UPDATE {table} SET session_key = ? WHERE session_key = 'cron:daily-report'", (CRON,))
    assert store.import_openclaw_database(db) == {CRON: 2}
    assert [k for k, _ in all_terms(store, 'cron-marker')] == [CRON]
    assert 'cron:daily-report' not in events(store)


def test_a_deleted_session_lives_on_as_its_archive_only(db, store):
    store.import_openclaw_database(db)
    writer = oc.connect(db)
    lines = [
        r[0]
        for r in writer.execute('SELECT event_json FROM transcript_events WHERE session_id = ? ORDER BY seq', (sid(3),))
    ]
    blob = ''.join(line + '\n' for line in lines).encode()
    name = f'{sid(3)}.jsonl.deleted.2026-12-08T10-00-00.000Z.{uuid.uuid4().hex}'
    writer.execute('BEGIN IMMEDIATE')  # OpenClaw's delete: the rows go, an archive row comes, in one transaction
    writer.execute('DELETE FROM session_nodes WHERE session_key = ?', (GROUP,))  # windows and rows cascade
    writer.execute(
        'INSERT INTO session_transcript_archives (session_id, generation, session_key, reason, encoding, '
        "archive_blob, archive_sha256, archive_name, created_at) VALUES (?, ?, ?, 'deleted', 'identity', ?, ?, ?, ?)",
        (sid(3), uuid.uuid4().hex, GROUP, blob, hashlib.sha256(blob).hexdigest(), name, int(time.time() * 1000)),
    )
    writer.execute('COMMIT')
    assert store.import_openclaw_database(db) == {archive_key('main', name): 2}
    assert GROUP not in events(store)
    assert [k for k, _ in all_terms(store, 'pineapple-marker')] == [archive_key('main', name)]


def test_incognito_sessions_are_never_imported(db, store):
    key, session_id = 'agent:main:dashboard:incognito-7f3a', sid(30)
    writer = oc.connect(db)
    writer.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, '{}', 0)",
        (key, session_id),
    )
    writer.execute(
        'INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, 0, 0)',
        (session_id, key),
    )
    oc.append(writer, session_id, [oc.message('a private thought incognito-marker', None)])
    assert key not in store.import_openclaw_database(db)
    assert key not in events(store)
    assert all_terms(store, 'incognito-marker') == []


# ---------------------------------------------------------------- bad rows, bad files


def test_a_broken_row_costs_only_itself(db, store, caplog):
    writer = oc.connect(db)
    writer.execute(
        'UPDATE transcript_events SET event_json = ? WHERE session_id = ? AND seq = 3', ('{"type": "mess', sid(1))
    )
    writer.execute(
        'UPDATE transcript_events SET event_zstd = ? WHERE session_id = ? AND seq = 16', (b'not zstd at all', sid(1))
    )
    with caplog.at_level(logging.WARNING, logger='memsift.sessions.openclaw_db'):
        assert store.import_openclaw_database(db)[MAIN] == 20  # the two stand-ins keep the event tree whole
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2
    assert all(str(db) in w and sid(1) in w for w in warned)
    assert 'seq 3 skipped: not JSON' in warned[0] and 'seq 16 skipped: not a zstd frame' in warned[1]
    main = texts(store, MAIN)
    assert 'Run ls for me please' not in main  # seq 3 itself
    assert main[0] == 'What is the capital of France? zebra-marker-one'  # before it, still on the branch
    assert 'Tell me about guava please guava-marker' in main
    assert not any(text.startswith('Guava notes:') for text in main)
    assert main[-1] == 'Kumquats are small citrus fruit.'


def schema_error(db, **kwargs):
    with pytest.raises(SessionStoreError) as raised, SessionStore(':memory:') as store:
        store.import_openclaw_database(db, **kwargs)
    message = str(raised.value)
    assert str(db) in message
    return message


def test_schema_versions_other_than_23_are_refused_with_the_fix(db):
    writer = oc.connect(db)
    writer.execute('PRAGMA user_version = 24')
    assert 'schema 24, newer than the 23' in schema_error(db) and 'upgrade memsift' in schema_error(db)
    writer.execute('PRAGMA user_version = 22')
    assert 'schema 22, older than the 23' in schema_error(db) and 'openclaw doctor --fix' in schema_error(db)
    writer.execute('PRAGMA user_version = 23')
    writer.execute("UPDATE schema_meta SET schema_version = 22 WHERE meta_key = 'primary'")
    assert 'half-migrated' in schema_error(db) and 'openclaw doctor --fix' in schema_error(db)
    writer.execute('DROP TABLE schema_meta')
    assert 'no schema_meta table' in schema_error(db) and 'openclaw doctor --fix' in schema_error(db)


def test_what_is_not_a_path_is_refused(store):
    for bad in ('a\x00b', '\ud800', 123, None, b'/tmp'):
        with pytest.raises(InvalidInputError, match='db_path must be the path of an OpenClaw database'):
            store.import_openclaw_database(bad)


def test_other_files_are_refused_by_name(db, tmp_path):
    assert 'no OpenClaw agent database here' in schema_error(tmp_path / 'missing.sqlite')
    text = tmp_path / 'notes.sqlite'
    text.write_text('plain text, not SQLite\n' * 100)
    assert 'is not a SQLite database' in schema_error(text)
    empty = tmp_path / 'empty.sqlite'
    sqlite3.connect(empty).execute('CREATE TABLE t (x)')
    assert 'no OpenClaw agent schema' in schema_error(empty)
    other = oc.connect(db)
    other.execute("UPDATE schema_meta SET agent_id = 'work' WHERE meta_key = 'primary'")
    assert 'the database of agent "work"' in schema_error(db)


def test_a_damaged_file_is_refused_by_name(db):
    data = bytearray(db.read_bytes())
    for offset in range(4096, len(data), 4096):  # every page but the first (the header) overwritten
        data[offset : offset + 4096] = bytes((offset // 4096 * 37 + i) % 251 for i in range(4096))
    db.write_bytes(bytes(data))
    assert 'is damaged (database disk image is malformed)' in schema_error(db)


def test_a_database_locked_beyond_the_timeout_is_refused_by_name(db):
    holder = oc.connect(db)
    holder.execute('PRAGMA journal_mode = DELETE')  # a rollback journal: an exclusive lock keeps readers out
    holder.execute('BEGIN EXCLUSIVE')
    try:
        assert 'stayed locked for more than 0.2 s' in schema_error(db, timeout=0.2)
    finally:
        holder.execute('ROLLBACK')


@pytest.mark.skipif(os.geteuid() == 0, reason='root may create files in any folder')
def test_a_folder_that_forbids_the_shm_file_is_named(db):
    db.parent.chmod(0o555)
    try:
        message = schema_error(db)
    finally:
        db.parent.chmod(0o755)
    assert '-shm file' in message and str(db.parent) in message


# ---------------------------------------------------------------- OpenClaw's files are only read


def fingerprints(db):
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in [db, Path(f'{db}-wal')] if p.exists()}
    return files, db.stat().st_mtime_ns


def test_the_import_never_writes_openclaws_files(db, store):
    writer = oc.connect(db)  # keeps the -wal in place, as a running gateway does
    oc.append(writer, sid(18), [oc.message('in the wal only walonly-marker', oc.leaf_id(writer, sid(18)))])
    before = fingerprints(db)
    assert f'{db.name}-wal' in before[0]
    store.import_openclaw_database(db)
    store.import_openclaw_database(db)
    assert fingerprints(db) == before
    assert not Path(f'{db}-journal').exists()
    assert [k for k, _ in all_terms(store, 'walonly-marker')] == [NEW_DM]


def test_a_live_writer_loses_nothing_and_never_waits(db, store):
    """A writer process appends 1,000 messages while the store imports and searches: each message is stored once,
    and the writer never found the database locked."""
    store.import_openclaw_database(db)
    count = 1000
    writer = subprocess.Popen(
        [sys.executable, str(FIXTURE / 'openclaw_fixture.py'), str(db), sid(18), str(count), 'live', '0.0005'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []  # the session's event count after each catch-up made while the writer ran
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed bound
    while writer.poll() is None and time.monotonic() < deadline:
        store.import_openclaw_database(db)
        store.search('live message', NEW_DM)
        seen.append(events(store)[NEW_DM])
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    report = json.loads(out)
    assert report['busy'] == 0
    assert report['longest_s'] < 1.0
    store.import_openclaw_database(db)
    assert any(2 < n < 2 + count for n in seen)  # caught up midway, more than once
    assert events(store)[NEW_DM] == 2 + count
    lines = [json.loads(line)['message']['content'][0]['text'] for line, _ in store.event_lines(NEW_DM)]
    assert sorted(lines[2:]) == [f'live {i:04d} live message w{i:04d}' for i in range(count)]
    for i in range(0, count, 37):
        assert [k for k, _ in all_terms(store, f'w{i:04d}', caller=NEW_DM)] == [NEW_DM], i


# ---------------------------------------------------------------- after OpenClaw's migration from 1.x


def test_a_store_that_imported_1x_jsonl_is_caught_up_without_duplicates(db, store):
    """Before OpenClaw migrated, memsift imported the 1.x JSONL; the migration moved it to
    session-sqlite-import-archive/ (not read again), and its events are in the database under the same ids."""
    legacy = db.parent.parent / 'session-sqlite-import-archive'
    shutil.copytree(FIXTURE / 'session-sqlite-import-archive', legacy)
    (jsonl,) = legacy.iterdir()
    assert store.import_jsonl(jsonl, MAIN, forward=True)['events'] == 13
    added = store.import_openclaw_database(db)
    assert added[MAIN] == 7  # only what 2.x appended after the migration
    assert set(added) == set(IMPORTED)
    assert events(store)[MAIN] == 20
    assert [k for k, _ in all_terms(store, 'zebra-marker-one')] == [MAIN]
    assert set(events(store)) == set(IMPORTED)


def test_history_starts_after_the_last_reset(store):
    """2.x's ``/new`` and ``/reset`` append a reset event and keep the session: history shows what follows it."""
    events = [
        {'type': 'message', 'id': 'a', 'parentId': None, 'message': {'role': 'user', 'content': 'before the reset'}},
        {'type': 'reset', 'id': 'r', 'parentId': 'a'},
        {'type': 'message', 'id': 'b', 'parentId': 'r', 'message': {'role': 'user', 'content': 'after the reset'}},
    ]
    store.append_many(MAIN, events)
    assert [m['content'] for m in store.history(MAIN, MAIN)['messages']] == ['after the reset']


def test_a_forgotten_session_is_never_imported_again(db, store, tmp_path):
    """``memsift forget --session``: the session (and its older windows) leaves memsift's store, and later imports,
    from OpenClaw's database or from JSONL, do not bring it back; OpenClaw's own rows are untouched."""
    store.import_openclaw_database(db)
    assert store.forget(ALICE, dry_run=True) == {'sessionKeys': [ALICE, ALICE_OLD], 'events': 6, 'dryRun': True}
    assert {ALICE, ALICE_OLD} <= set(events(store))
    assert store.forget(sid(17)) == {'sessionKeys': [ALICE, ALICE_OLD], 'events': 6, 'dryRun': False}  # by id
    assert not {ALICE, ALICE_OLD} & set(events(store))
    conn = oc.connect(db)
    oc.append(conn, sid(17), [oc.message('alice-after-forget', oc.leaf_id(conn, sid(17)))])
    conn.close()
    store.import_openclaw_database(db)
    assert not {ALICE, ALICE_OLD} & set(events(store)) and all_terms(store, 'alice-after-forget') == []
    line = json.dumps({'type': 'message', 'id': 'x', 'message': {'role': 'user', 'content': 'jsonl-after-forget'}})
    (tmp_path / 'alice.jsonl').write_text(line + '\n')
    assert store.import_jsonl(tmp_path / 'alice.jsonl', ALICE)['events'] == 0
    assert ALICE not in events(store)


def test_forget_on_postgresql(db, pg_dsn):
    with SessionStore(pg_dsn) as store:
        store.import_openclaw_database(db)
        assert store.forget(DM)['events'] == 5
        store.import_openclaw_database(db)
        assert DM not in events(store)
