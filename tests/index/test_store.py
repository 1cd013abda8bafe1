"""The SQLite store: atomic writes, generations, persistence, crash safety."""

import subprocess
import sys
import textwrap
import threading

import pytest

import memsift
from memsift.errors import StoreError
from memsift.index.store import FileRecord, MemoryStore


def chunks(*texts):
    return [(i + 1, i + 1, text, f'h-{text}') for i, text in enumerate(texts)]


def test_replace_file_records_file_and_chunks_and_bumps_generation(tmp_path):
    with MemoryStore(tmp_path / 'agent.sqlite') as store:
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


def test_chunks_come_back_in_the_order_asked(tmp_path):
    store = MemoryStore(':memory:')
    ids = store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x', 'y', 'z'))
    assert [c.text for c in store.chunks(ids[::-1] + [999])] == ['z', 'y', 'x']
    assert [c.id for c in store.iter_chunks(batch=2)] == ids


def test_delete_file_returns_removed_chunk_ids(tmp_path):
    store = MemoryStore(':memory:')
    ids = store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x', 'y'))
    store.replace_file('b.md', 'memory', 'g', 0.0, 1, chunks('z'))
    assert store.delete_file('a.md') == ids
    assert list(store.files()) == ['b.md']
    assert store.chunk_count() == 1


def test_skipped_files_keep_their_reason_and_drop_indexed_versions(tmp_path):
    store = MemoryStore(':memory:')
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    store.record_skipped('a.md', 'is not valid UTF-8 (byte 3)')
    assert store.skipped() == {'a.md': 'is not valid UTF-8 (byte 3)'}
    assert store.files() == {} and store.chunk_count() == 0
    store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('fixed'))
    assert store.skipped() == {}


def test_state_and_identity_survive_reopening(tmp_path):
    path = tmp_path / 'nested' / 'dir' / 'agent.sqlite'
    with MemoryStore(path) as store:
        store.set_identity({'provider': 'none', 'chunking': [400, 80]})
        store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    with MemoryStore(path) as store:
        assert store.identity == {'provider': 'none', 'chunking': [400, 80]}
        assert store.generation == 2
        assert [c.text for c in store.iter_chunks()] == ['x']


def test_a_failed_write_leaves_the_previous_state(tmp_path):
    store = MemoryStore(':memory:')
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('keep'))
    bad = [(1, 1, 'new', 'h'), (2, 2, object(), 'h')]  # the second chunk cannot be stored
    with pytest.raises(Exception):
        store.replace_file('a.md', 'memory', 'f2', 0.0, 1, bad)
    assert [c.text for c in store.iter_chunks()] == ['keep']
    assert store.files()['a.md'].hash == 'f'
    assert store.generation == 1


def test_a_process_killed_mid_write_loses_nothing(tmp_path):
    path = tmp_path / 'agent.sqlite'
    with MemoryStore(path) as store:
        store.replace_file('a.md', 'memory', 'f1', 0.0, 1, chunks('old-1', 'old-2'))
    script = textwrap.dedent(f"""
        import os
        from memsift.index.store import MemoryStore
        store = MemoryStore({str(path)!r})
        def chunks():
            yield (1, 1, 'new-1', 'h')
            os._exit(9)  # killed after writing part of the new version
        store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks())
    """)
    assert subprocess.run([sys.executable, '-c', script], check=False).returncode == 9
    with MemoryStore(path) as store:
        assert [c.text for c in store.iter_chunks()] == ['old-1', 'old-2']
        assert store.files()['a.md'].hash == 'f1'
        assert store.generation == 1


def test_concurrent_writers_and_readers(tmp_path):
    store = MemoryStore(tmp_path / 'agent.sqlite')
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
