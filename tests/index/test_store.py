"""The memory store, on both backends (SQLite files and a shared PostgreSQL database): atomic writes, generations,
persistence, crash safety, and on PostgreSQL catching up by generation and keeping agents apart."""

import sqlite3
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import memsift
from memsift.errors import StoreError
from memsift.index.pgstore import PgMemoryStore
from memsift.index.records import FileWrite
from memsift.index.store import FileRecord, MemoryStore


@pytest.fixture(params=['sqlite', 'postgres'])
def backend(request):
    return request.param


@pytest.fixture
def open_store(backend, tmp_path, request):
    """``open_store(agent='agent')``: a store of that agent on this test's backend; reopening finds the same data."""
    dsn = request.getfixturevalue('pg_dsn') if backend == 'postgres' else None
    opened = []

    def opener(agent='agent', path=None):
        local = tmp_path / 'state' / f'{agent}.sqlite'
        opened.append(MemoryStore(path or local) if dsn is None else PgMemoryStore(dsn, agent, local))
        return opened[-1]

    yield opener
    for store in opened:
        store.close()


def chunks(*texts):
    return [(i + 1, i + 1, text, f'h-{text}') for i, text in enumerate(texts)]


def test_replace_file_records_file_and_chunks_and_bumps_generation(open_store):
    with open_store() as store:
        assert store.generation == 0
        ids = store.replace_file('memory/a.md', 'memory', 'f1', 10.0, 3, chunks('one', 'two'))
        assert store.generation == 1
        assert [c.text for c in store.chunks(ids)] == ['one', 'two']
        record = store.files()['memory/a.md']
        assert record == FileRecord('memory/a.md', 'memory', 'f1', 10.0, 3, record.indexed_at) and record.indexed_at > 0
        new_ids = store.replace_file('memory/a.md', 'memory', 'f2', 11.0, 4, chunks('three'))
        assert store.chunks(ids) == []  # old chunks are gone
        assert [c.text for c in store.chunks(new_ids)] == ['three']
        assert store.chunk_count() == 1
        assert store.generation == 2


def test_chunks_come_back_in_the_order_asked(open_store):
    store = open_store()
    ids = store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x', 'y', 'z'))
    assert [c.text for c in store.chunks(ids[::-1] + [999])] == ['z', 'y', 'x']
    assert [c.id for c in store.iter_chunks(batch=2)] == ids


def test_delete_file_returns_removed_chunk_ids(open_store):
    store = open_store()
    ids = store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x', 'y'))
    store.replace_file('b.md', 'memory', 'g', 0.0, 1, chunks('z'))
    assert store.delete_file('a.md') == ids
    assert list(store.files()) == ['b.md']
    assert store.chunk_count() == 1


def test_skipped_files_keep_their_reason_and_drop_indexed_versions(open_store):
    store = open_store()
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    store.record_skipped('a.md', 'is not valid UTF-8 (byte 3)')
    assert store.skipped() == {'a.md': 'is not valid UTF-8 (byte 3)'}
    assert store.files() == {} and store.chunk_count() == 0
    store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('fixed'))
    assert store.skipped() == {}


def test_state_and_identity_survive_reopening(open_store, tmp_path):
    path = tmp_path / 'nested' / 'dir' / 'agent.sqlite'
    with open_store(path=path) as store:
        store.set_identity({'provider': 'none', 'chunking': [400, 80]})
        store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    with open_store(path=path) as store:
        assert store.identity == {'provider': 'none', 'chunking': [400, 80]}
        assert store.generation == 2
        assert [c.text for c in store.iter_chunks()] == ['x']


def test_a_failed_write_leaves_the_previous_state(open_store):
    store = open_store()
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('keep'))
    bad = [(1, 1, 'new', 'h'), (2, 2, object(), 'h')]  # the second chunk cannot be stored
    with pytest.raises(Exception):
        store.replace_file('a.md', 'memory', 'f2', 0.0, 1, bad)
    assert [c.text for c in store.iter_chunks()] == ['keep']
    assert store.files()['a.md'].hash == 'f'
    assert store.generation == 1


def _opener_source(store):
    """Python source that opens the same store in another process."""
    if isinstance(store, PgMemoryStore):
        return f'from memsift.index.pgstore import PgMemoryStore\nstore = PgMemoryStore({store.dsn!r}, {store.agent!r}, {store.path!r})'
    return f'from memsift.index.store import MemoryStore\nstore = MemoryStore({store.path!r})'


def test_a_process_killed_mid_write_loses_nothing(open_store):
    with open_store() as store:
        store.replace_file('a.md', 'memory', 'f1', 0.0, 1, chunks('old-1', 'old-2'))
        opener = _opener_source(store)
    script = opener + textwrap.dedent("""
        import os
        def chunks():
            yield (1, 1, 'new-1', 'h')
            os._exit(9)  # killed after writing part of the new version
        store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks())
    """)
    assert subprocess.run([sys.executable, '-c', script], check=False).returncode == 9
    with open_store() as store:
        assert [c.text for c in store.iter_chunks()] == ['old-1', 'old-2']
        assert store.files()['a.md'].hash == 'f1'
        assert store.generation == 1


def test_concurrent_writers_and_readers(open_store):
    store = open_store()
    errors = []

    def writer(n):
        try:
            for i in range(20):
                store.replace_file(f'{n}-{i}.md', 'memory', 'f', 0.0, 1, chunks('a', 'b'))
                store.chunk_count()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert store.chunk_count() == 4 * 20 * 2
    assert store.generation == 80


def test_unusable_store_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(StoreError, match=str(blocker)) as info:
        MemoryStore(blocker / 'agent.sqlite')
    assert isinstance(info.value, memsift.MemsiftError)


def test_a_future_schema_is_refused_with_a_fix(tmp_path):
    path = tmp_path / 'agent.sqlite'
    with MemoryStore(path) as store:
        store._write(lambda db: store._set_meta('schema_version', '99'))
    with pytest.raises(StoreError, match='delete the file to rebuild'):
        MemoryStore(path)


def test_a_store_of_the_previous_schema_is_upgraded_in_place(tmp_path):
    # Schema 2 (before the change log): chunks without a generation, no removal log.
    path = tmp_path / 'agent.sqlite'
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory', hash TEXT NOT NULL,
                            mtime REAL NOT NULL, size INTEGER NOT NULL, indexed_at REAL NOT NULL);
        CREATE TABLE chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL REFERENCES files(path)
                             ON DELETE CASCADE, source TEXT NOT NULL, start_line INTEGER NOT NULL,
                             end_line INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '2'), ('generation', '7');
        INSERT INTO files VALUES ('MEMORY.md', 'memory', 'f', 0, 5, 0);
        INSERT INTO chunks VALUES (1, 'MEMORY.md', 'memory', 1, 1, 'h', 'hello');
    """)
    db.close()
    with MemoryStore(path) as store:
        assert store.generation == 7 and [c.text for c in store.chunks([1])] == ['hello']
        assert store.changes_since(6) is None  # what schema 2 changed was never logged: rebuild
        store.delete_file('MEMORY.md')
        changes = store.changes_since(7)
        assert changes is not None and changes.removed == [1] and changes.generation == 8
    with MemoryStore(path) as store:  # opens as schema 3 from now on
        assert store.generation == 8


# ---------------------------------------------------------------- PostgreSQL only


@pytest.fixture
def pg_store(pg_dsn, tmp_path):
    opened = []

    def opener(agent='agent'):
        opened.append(PgMemoryStore(pg_dsn, agent, tmp_path / f'{agent}.sqlite'))
        return opened[-1]

    yield opener
    for store in opened:
        store.close()


def test_agents_sharing_a_database_never_see_each_others_rows(pg_store):
    alice, bob = pg_store('alice'), pg_store('bob')
    alice_ids = alice.replace_file('MEMORY.md', 'memory', 'fa', 0.0, 1, chunks('alice secret plan'))
    bob.replace_file('MEMORY.md', 'memory', 'fb', 0.0, 1, chunks('bob notes', 'more'))
    bob.cache_vectors('k', [('h-alice secret plan', np.ones(4, dtype=np.float32))])
    assert [c.text for c in alice.iter_chunks()] == ['alice secret plan']
    assert bob.chunks(alice_ids) == [] and bob.chunk_texts(alice_ids) == {} and bob.chunk_heads(alice_ids) == {}
    assert alice.cached_vectors('k', ['h-alice secret plan'], 4) == {}
    assert (alice.generation, bob.generation, alice.chunk_count(), bob.chunk_count()) == (1, 1, 1, 2)
    bob.clear()
    assert alice.chunk_count() == 1 and alice.files()['MEMORY.md'].hash == 'fa'


def test_changes_since_give_what_a_reader_missed_in_one_snapshot(pg_store):
    writer, reader = pg_store(), pg_store()
    kept = writer.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('one', 'two'))
    gone = writer.replace_file('b.md', 'memory', 'g', 0.0, 1, chunks('three'), np.ones((1, 4), dtype=np.float32))
    assert reader.changes_since(writer.generation).added == []
    mark = reader.generation
    new = writer.replace_file('b.md', 'memory', 'g2', 0.0, 1, chunks('four'), np.full((1, 4), 2, dtype=np.float32))
    writer.delete_file('a.md')
    changes = reader.changes_since(mark, dims=4)
    assert changes.generation == mark + 2
    assert sorted(changes.removed) == sorted(gone + kept)
    assert [(c.id, c.text) for c in changes.added] == [(new[0], 'four')]
    assert np.frombuffer(changes.vectors[new[0]], dtype=np.float32).tolist() == [2, 2, 2, 2]
    assert reader.changes_since(mark, dims=8).vectors == {}  # another dimension: no vectors
    writer.clear()
    assert reader.changes_since(mark) is None  # from before a clear: rebuild
    assert reader.changes_since(writer.generation + 5) is None  # ahead of the store (restored backup): rebuild


def test_pruning_the_removal_log_makes_old_readers_rebuild(pg_store):
    store = pg_store()
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    store.delete_file('a.md')
    assert store.changes_since(0) is not None
    assert store.prune_removed(keep_s=-1) == 1
    assert store.changes_since(0) is None and store.changes_since(store.generation) is not None


def test_two_processes_writing_one_agent_lose_and_duplicate_nothing(pg_store):
    store = pg_store()
    script = _opener_source(store) + textwrap.dedent("""
        import sys
        n = sys.argv[1]
        for i in range(30):
            store.replace_file(f'shared-{i % 5}.md', 'memory', f'{n}-{i}', 0.0, 1, [(1, 1, f'{n} {i}', 'h')])
            store.replace_file(f'own-{n}-{i}.md', 'memory', 'f', 0.0, 1, [(1, 1, 'x', 'h'), (2, 2, 'y', 'h')])
    """)
    procs = [subprocess.Popen([sys.executable, '-c', script, str(n)]) for n in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert store.generation == 3 * 60
    assert len(store.files()) == 5 + 90
    assert store.chunk_count() == 5 + 180  # one chunk per shared file: every replace removed the one before
    replay = store.changes_since(0)
    assert len({c.id for c in replay.added}) == store.chunk_count()


def test_a_server_restart_fails_one_write_cleanly_and_the_next_reconnects(postgres_server, pg_store):
    store = pg_store()
    store.replace_file('a.md', 'memory', 'f1', 0.0, 1, chunks('kept'))
    postgres_server.stop(immediate=True)
    try:
        with pytest.raises(StoreError, match=r'store\.dsn'):
            store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('lost'))
    finally:
        postgres_server.start()
    assert [c.text for c in store.iter_chunks()] == ['kept'] and store.generation == 1
    store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('new'))
    assert [c.text for c in store.iter_chunks()] == ['new']


def test_unreachable_or_refused_databases_name_the_setting_not_the_password(postgres_server, tmp_path):
    dead = 'postgresql://memsift:hunter2-secret@127.0.0.1:1/memory'
    with pytest.raises(StoreError, match=r'cannot connect .*store\.dsn') as info:
        PgMemoryStore(dead, 'main', tmp_path / 'main.sqlite')
    assert 'hunter2-secret' not in str(info.value) and 'memsift:***@' in str(info.value)
    stranger = postgres_server.dsn().replace('memsift@', 'nobody:hunter2-secret@')
    with pytest.raises(StoreError, match='nobody') as info:
        PgMemoryStore(stranger, 'main', tmp_path / 'main.sqlite', setting='MEMSIFT_PG_DSN')
    assert 'hunter2-secret' not in str(info.value) and 'MEMSIFT_PG_DSN' in str(info.value)


def test_a_schema_from_a_newer_memsift_is_refused_untouched(pg_dsn, pg_store):
    pg_store().replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    import psycopg

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("UPDATE memsift_meta SET value = '99' WHERE key = 'memory_schema_version'")
    with pytest.raises(StoreError, match='has schema 99.*upgrade memsift'):
        pg_store()


def test_a_database_of_the_previous_schema_is_upgraded_once(pg_store, pg_dsn):
    import psycopg

    store = pg_store()
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, [(1, 1, 'one', 'h1')])
    mark = store.generation
    # Schema 1: removals were logged without their path.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute('ALTER TABLE memory_removed DROP COLUMN path')
        conn.execute("UPDATE memsift_meta SET value = '1' WHERE key = 'memory_schema_version'")
        conn.execute(
            'INSERT INTO memory_removed (agent, generation, chunk_id, removed_at) VALUES (%s, %s, 999, 0)',
            (store.agent, mark + 1),
        )
        conn.execute("UPDATE memory_agents SET generation = generation + 1 WHERE agent = 'agent'")
    upgraded = pg_store()
    assert upgraded.generation == mark + 1
    assert upgraded.paths_since(mark) is None  # a removal logged before paths were: read every path
    upgraded.replace_file('b.md', 'memory', 'g', 0.0, 1, [(1, 1, 'two', 'h2')])
    assert upgraded.paths_since(mark + 1) == (mark + 2, ['b.md'], [])
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        [(version,)] = conn.execute("SELECT value FROM memsift_meta WHERE key = 'memory_schema_version'").fetchall()
    assert version == '3'  # and on to the current schema (importance, 3)


def test_text_postgresql_cannot_hold_is_stored_and_odd_lookups_answer(pg_store):
    store = pg_store()
    ids = store.replace_file('a.md', 'memory', 'f', 0.0, 1, [(1, 1, 'nul\x00byte', 'h1'), (2, 2, '😀' * 10, 'h2')])
    assert [c.text for c in store.chunks(ids)] == ['nul\ufffdbyte', '😀' * 10]
    assert store.chunk_heads(ids)[ids[1]].chars == 10
    assert store.file('\ud800.md') is None and store.file('a.md').hash == 'f'


def test_heads_of_chunks_another_process_removed_are_not_answered_from_memory(tmp_path):
    # A keyword search notices the shared keyword index is behind by a head that is missing: no cached head may
    # hide that, though this process has not caught up (keyword-only searches do not).
    path = tmp_path / 'memory.sqlite'
    with MemoryStore(path) as store, MemoryStore(path) as other:
        [ids] = store.replace_files([FileWrite('a.md', 'memory', 'f', 0.0, 1, [(1, 2, 'one', 'h1')])])
        assert set(store.chunk_heads(ids)) == set(ids)
        other.delete_file('a.md')
        assert store.chunk_heads(ids) == {}


def test_another_processs_write_costs_the_heads_it_removed_not_every_head(tmp_path, monkeypatch):
    # A chunk row never changes, so a head read before stays true until the chunk is removed: after another
    # process's write, heads are read again only for the chunks it removed (found gone), whatever else is cached.
    path = tmp_path / 'memory.sqlite'
    with MemoryStore(path) as store, MemoryStore(path) as other:
        kept, edited = store.replace_files([
            FileWrite('a.md', 'memory', 'fa', 0.0, 1, [(1, 2, 'one', 'h1'), (3, 4, 'two', 'h2')]),
            FileWrite('b.md', 'memory', 'fb', 0.0, 1, [(1, 2, 'three', 'h3')]),
        ])  # fmt: skip
        assert set(store.chunk_heads(kept + edited)) == set(kept + edited)
        [added] = other.replace_files([FileWrite('b.md', 'memory', 'fb2', 0.0, 1, [(1, 2, 'four', 'h4')])])
        asked = []
        rows = store._rows
        monkeypatch.setattr(store, '_rows', lambda sql, params=None: asked.append(params) or rows(sql, params))
        assert set(store.chunk_heads(kept + edited + added)) == set(kept + added)
        assert [params['ids'] for params in asked if params and 'ids' in params] == [edited + added]
        asked.clear()
        assert set(store.chunk_heads(kept + added)) == set(kept + added) and asked == []  # all from memory


def test_heads_are_all_read_again_once_the_removal_log_no_longer_reaches_back(tmp_path):
    # A removal the log has forgotten (pruned, or a clear) cannot be told from the log: every head is dropped.
    path = tmp_path / 'memory.sqlite'
    with MemoryStore(path) as store, MemoryStore(path) as other:
        [ids] = store.replace_files([FileWrite('a.md', 'memory', 'f', 0.0, 1, [(1, 2, 'one', 'h1')])])
        assert set(store.chunk_heads(ids)) == set(ids)
        other.delete_file('a.md')
        assert other.prune_removed(keep_s=-1.0) == 1
        assert store.chunk_heads(ids) == {}
        [again] = other.replace_files([FileWrite('b.md', 'memory', 'g', 0.0, 1, [(1, 2, 'two', 'h2')])])
        assert set(store.chunk_heads(again)) == set(again)
        other.clear()
        assert store.chunk_heads(again) == {}


def test_a_connection_stops_mapping_the_file_once_another_process_commits(tmp_path):
    # SQLite drops and maps again the whole file after each commit another connection makes: kernel time that
    # grows with the file, on every catch-up. A store that finds such a commit reads without the map from then on;
    # one that sees only its own writes keeps it (a command line run's reads).
    path = tmp_path / 'memory.sqlite'
    with MemoryStore(path) as store, MemoryStore(path) as other:
        mmap_size = lambda s: s._db.execute('PRAGMA mmap_size').fetchone()[0]  # noqa: E731
        assert mmap_size(store) > 0 and store.generation == 0
        [ids] = store.replace_files([FileWrite('a.md', 'memory', 'f', 0.0, 1, [(1, 2, 'one', 'h1')])])
        assert store.generation == 1 and mmap_size(store) > 0
        other.replace_files([FileWrite('b.md', 'memory', 'g', 0.0, 1, [(1, 2, 'two', 'h2')])])
        assert store.generation == 2 and mmap_size(store) == 0
        assert [c.text for c in store.chunks(ids)] == ['one'] and mmap_size(other) > 0
