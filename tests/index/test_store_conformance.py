"""Both memory-store backends are one :class:`~memsift.index.protocol.Store`: the same calls give the same answers on
SQLite and on PostgreSQL, and what differs is said by a capability (``catches_up``, ``database_lock``), not the
class. Every test here goes through the protocol only."""

import time

import numpy as np
import pytest

from memsift._postgres import is_dsn
from memsift.config import load_config
from memsift.index.backend import choose_backend, open_memory_store, sessions_target
from memsift.index.pgstore import PgMemoryStore
from memsift.index.protocol import Store
from memsift.index.records import Changes, ChunkHead, ChunkRow, FileRecord, FileWrite
from memsift.index.store import MemoryStore
from memsift.sessions import SessionStore


@pytest.fixture(params=['sqlite', 'postgres'])
def store(request, tmp_path):
    local = tmp_path / 'state' / 'agent.sqlite'
    if request.param == 'sqlite':
        opened: Store = MemoryStore(local)
    else:
        opened = PgMemoryStore(request.getfixturevalue('pg_dsn'), 'agent', local)
    with opened:
        yield opened


def chunks(*texts):
    return [(i + 1, i + 2, text, f'h-{text}') for i, text in enumerate(texts)]


def vectors(n, dims=4, value=1.0):
    return np.full((n, dims), value, dtype=np.float32) + np.arange(n, dtype=np.float32)[:, None]


def _public(cls):
    return {name for name in dir(cls) if not name.startswith('_')}


@pytest.mark.parametrize('cls', [MemoryStore, PgMemoryStore])
def test_each_backend_has_exactly_the_protocols_methods(cls):
    protocol = _public(Store) | {'path', 'location', 'catches_up', 'schema'}
    # replace_files for one file; tuning; the PostgreSQL store's own description
    extra = {'replace_file', 'LOOKUP_BATCH', 'HEADS_CACHED', 'agent', 'dsn', 'setting'}
    assert protocol <= _public(cls) | {'path', 'location'}
    assert _public(cls) - protocol <= extra


def test_the_backends_are_the_protocol_with_their_capabilities(store):
    assert isinstance(store, Store)
    assert store.catches_up == isinstance(store, PgMemoryStore)
    lock = store.database_lock()
    assert (lock is not None) == store.catches_up
    assert store.path.endswith('agent.sqlite') and store.location


def test_writes_move_the_generation_and_reads_agree(store):
    assert store.generation == 0 and store.identity is None and store.files() == {}
    first, second = store.replace_files([
        FileWrite('memory/b.md', 'memory', 'fb', 20.0, 7, chunks('bee', 'bees'), vectors(2)),
        FileWrite('MEMORY.md', 'memory', 'fm', 10.0, 5, chunks('main')),
    ])  # fmt: skip
    assert store.generation == 1 and len(first) == 2 and len(second) == 1
    assert first[0] < first[1] < second[0]
    assert store.paths() == ['MEMORY.md', 'memory/b.md']
    record = store.file('memory/b.md')
    assert record == FileRecord('memory/b.md', 'memory', 'fb', 20.0, 7, record.indexed_at)
    assert record.indexed_at == pytest.approx(time.time(), abs=60)
    assert store.files() == {'MEMORY.md': store.file('MEMORY.md'), 'memory/b.md': record}
    assert store.file('nowhere.md') is None and store.file('\udc80.md') is None
    assert store.file_mtimes(['MEMORY.md', 'memory/b.md', 'gone.md']) == {'MEMORY.md': 10.0, 'memory/b.md': 20.0}
    assert store.file_mtimes([]) == {}
    assert store.file_stamps() == {'MEMORY.md': (10.0, 5, store.file('MEMORY.md').indexed_at),
                                   'memory/b.md': (20.0, 7, record.indexed_at)}  # fmt: skip
    assert store.chunk_count() == 3 and store.vector_count() == 2
    assert store.source_counts() == [('memory', 2, 3)]
    assert store.chunk_ids('memory/b.md') == first
    assert store.first_chunks(['memory/b.md', 'MEMORY.md', 'gone.md']) == {
        'memory/b.md': first[0],
        'MEMORY.md': second[0],
    }
    assert store.first_chunks([]) == {}


def test_chunks_heads_and_texts(store):
    [ids] = store.replace_files([FileWrite('a.md', 'memory', 'f', 0.0, 1, chunks('one', 'three', 'emoji 😀'))])
    rows = store.chunks([ids[2], 10**9, ids[0]])
    assert rows == [ChunkRow(ids[2], 'a.md', 'memory', 3, 4, 'h-emoji 😀', 'emoji 😀'),
                    ChunkRow(ids[0], 'a.md', 'memory', 1, 2, 'h-one', 'one')]  # fmt: skip
    assert store.chunks([]) == [] and store.chunk_heads([]) == {} and store.chunk_texts([]) == {}
    heads = store.chunk_heads({ids[1], ids[2], 10**9})
    assert heads == {
        ids[1]: ChunkHead(ids[1], 'a.md', 'memory', 2, 3, 5),
        ids[2]: ChunkHead(ids[2], 'a.md', 'memory', 3, 4, 7),
    }
    assert store.chunk_heads([ids[1]]) == {ids[1]: heads[ids[1]]}  # asked again (a cache, where there is one)
    assert store.chunk_texts([ids[0], ids[2]]) == {ids[0]: 'one', ids[2]: 'emoji 😀'}
    assert [c.id for c in store.iter_chunks(batch=2)] == ids


def another_process(store):
    """A second opener of ``store``'s agent, as another process has it."""
    if isinstance(store, PgMemoryStore):
        return PgMemoryStore(store._pg.dsn, store.agent, store.path)
    return MemoryStore(store.path)


def test_cached_heads_go_with_their_chunks(store):
    [ids] = store.replace_files([FileWrite('a.md', 'memory', 'f', 0.0, 1, chunks('one', 'two'))])
    assert set(store.chunk_heads(ids)) == set(ids)
    store.delete_file('a.md')  # its own write
    assert store.chunk_heads(ids) == {}
    [ids] = store.replace_files([FileWrite('b.md', 'memory', 'g', 0.0, 1, chunks('three'))])
    seen = store.generation
    assert set(store.chunk_heads(ids)) == set(ids)
    with another_process(store) as other:
        other.delete_file('b.md')
    store.changes_since(seen)  # catching up with the other process's write
    assert store.chunk_heads(ids) == {}


def test_vectors_are_paged_by_id_and_filtered_by_size(store):
    a, b, c = store.replace_files([
        FileWrite('a.md', 'memory', 'f', 0.0, 1, chunks('x', 'y', 'z'), vectors(3)),
        FileWrite('b.md', 'memory', 'f', 0.0, 1, chunks('w'), vectors(1, dims=8)),
        FileWrite('c.md', 'memory', 'f', 0.0, 1, chunks('v')),
    ])  # fmt: skip
    batches = list(store.iter_vectors(4, batch=2))
    assert [ids.tolist() for ids, _ in batches] == [a[:2], a[2:]]
    assert all(matrix.dtype == np.float32 and matrix.shape == (len(ids), 4) for ids, matrix in batches)
    assert np.vstack([m for _, m in batches]).tolist() == vectors(3).tolist()
    assert store.vector_ids(4).tolist() == a and store.vector_ids(8).tolist() == b and store.vector_ids(3).size == 0
    found = list(store.vectors_of([a[2], b[0], c[0], a[0]], 4, batch=1))
    assert sorted(int(i) for ids, _ in found for i in ids) == [a[0], a[2]]
    assert {int(ids[0]): m[0].tolist() for ids, m in found} == {a[0]: [1.0] * 4, a[2]: [3.0] * 4}
    assert list(store.vectors_of([], 4)) == []
    assert store.vector_count() == 4


def test_replacing_deleting_and_skipping(store):
    [old] = store.replace_files([FileWrite('a.md', 'memory', 'f1', 1.0, 1, chunks('old'), vectors(1))])
    new = store.replace_file('a.md', 'memory', 'f2', 2.0, 2, chunks('new', 'newer'))
    assert store.chunks(old) == [] and [c.text for c in store.chunks(new)] == ['new', 'newer']
    assert store.vector_count() == 0 and store.generation == 2
    store.record_skipped('a.md', 'too large')
    assert store.skipped() == {'a.md': 'too large'} and store.paths() == [] and store.chunk_count() == 0
    store.replace_file('a.md', 'memory', 'f3', 3.0, 3, chunks('back'))
    assert store.skipped() == {}
    ids = store.chunk_ids('a.md')
    assert store.delete_file('a.md') == ids and store.delete_file('a.md') == []
    assert store.paths() == [] and store.generation == 6
    with pytest.raises(ValueError, match='2 vectors for 1 chunks'):
        store.replace_file('b.md', 'memory', 'f', 0.0, 1, chunks('x'), vectors(2))
    assert store.generation == 6 and store.paths() == []


def test_touch_identity_and_clear(store):
    store.replace_file('a.md', 'sessions', 'f', 1.0, 1, chunks('x'))
    store.replace_file('b.md', 'memory', 'g', 2.0, 2, chunks('y'))
    generation = store.generation
    store.touch_files([('a.md', 5.0, 9), ('b.md', 6.5, 4)], read_at=7.25)
    assert (store.file('a.md').mtime, store.file('a.md').size, store.file('a.md').indexed_at) == (5.0, 9, 7.25)
    assert store.file_stamps()['b.md'] == (6.5, 4, 7.25)
    assert store.generation == generation  # nothing searchable moved
    # What a check reads: every stamp, the stamps and records of some paths, how many files there are.
    assert sorted(store.file_stamp_rows()) == [('a.md', 5.0, 9, 7.25), ('b.md', 6.5, 4, 7.25)]
    assert [tuple(r) for r in store.file_stamp_rows(['b.md', 'gone.md', 'bad\udcff.md'])] == [('b.md', 6.5, 4, 7.25)]
    assert store.file_stamp_rows([]) == [] and store.file_count() == 2
    assert set(store.files_of(['a.md', 'gone.md', 'bad\udcff.md'])) == {'a.md'} and store.files_of([]) == {}
    store.set_identity({'model': 'm', 'dims': 4})
    assert store.identity == {'dims': 4, 'model': 'm'} and store.generation == generation + 1
    store.clear()
    assert store.paths() == [] and store.chunk_count() == 0 and store.skipped() == {}
    assert store.identity == {'dims': 4, 'model': 'm'} and store.generation == generation + 2


def test_the_embedding_cache(store):
    store.cache_vectors('k', [('h1', np.ones(4, dtype=np.float32)), ('h2', np.full(4, 2, dtype=np.float32))])
    store.cache_vectors('k', [('h3', np.ones(8, dtype=np.float32))])
    store.cache_vectors('other', [('h1', np.zeros(4, dtype=np.float32))])
    generation = store.generation
    assert generation == 0 and store.cache_size() == 4
    found = store.cached_vectors('k', ['h2', 'h1', 'h1', 'h3', 'missing'], 4)
    assert {h: v.tolist() for h, v in found.items()} == {'h1': [1.0] * 4, 'h2': [2.0] * 4}  # h3: the wrong size
    assert sorted(store.cache_rows())[0] == ('k', 'h1', np.ones(4, dtype=np.float32).tobytes())
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, [(1, 1, 'kept', 'h2')])
    assert store.prune_cache(time.time() + 60) == 3  # every row but the one a chunk still has
    assert [(k, h) for k, h, _ in store.cache_rows()] == [('k', 'h2')]
    assert store.prune_cache(0.0) == 0
    store.cache_vectors('k', [(f'n{i}', np.ones(4, dtype=np.float32)) for i in range(3)])
    assert store.evict_cache(2) == 2 and store.cache_size() == 2


def test_the_change_log(store):
    assert store.changes_since(0) == Changes(0, [], [], {}) and store.paths_since(0) == (0, [], [])  # no write yet
    kept = store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('one'), vectors(1))
    mark = store.generation
    gone = store.replace_file('b.md', 'memory', 'g', 0.0, 1, chunks('two'))
    added = store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('three'), vectors(1, value=5))
    store.delete_file('b.md')
    changes = store.changes_since(mark, dims=4)
    assert isinstance(changes, Changes) and changes.generation == store.generation == mark + 3
    assert sorted(changes.removed) == sorted(kept + gone)
    assert [(c.id, c.text) for c in changes.added] == [(added[0], 'three')]
    assert np.frombuffer(changes.vectors[added[0]], dtype=np.float32).tolist() == [5.0] * 4
    assert store.changes_since(store.generation) == Changes(store.generation, [], [], {})
    assert store.changes_since(mark, text=False).added[0].text == ''  # the vectors need no text
    assert store.changes_since(mark).vectors == {}  # nor does the keyword index need vectors
    assert store.prune_removed(keep_s=-1) == 2  # the two removed chunks' entries
    assert store.changes_since(mark) is None  # the log no longer reaches back there: rebuild
    latest = store.generation
    store.replace_file('c.md', 'memory', 'h', 0.0, 1, chunks('four'))
    assert [c.text for c in store.changes_since(latest).added] == ['four']
    store.clear()
    assert store.changes_since(latest) is None  # what a clear removed is not logged one by one: rebuild
    assert store.changes_since(store.generation) == Changes(store.generation, [], [], {})
    assert store.changes_since(store.generation + 1) is None  # ahead of the store: another store's index


def test_the_files_writes_touched(store):
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('one'))
    store.replace_file('b.md', 'memory', 'g', 0.0, 1, chunks('two'))
    mark = store.generation
    assert store.paths_since(mark) == (mark, [], [])
    store.replace_file('a.md', 'memory', 'f2', 0.0, 1, chunks('one again'))  # edited
    store.replace_file('c.md', 'memory', 'h', 0.0, 1, chunks('three'))  # new
    store.delete_file('b.md')  # gone
    store.record_skipped('c.md', 'too large')  # gone again: skipped
    assert store.paths_since(mark) == (mark + 4, ['a.md'], ['b.md', 'c.md'])
    assert store.paths_since(mark + 5) is None  # ahead of the store
    store.clear()
    assert store.paths_since(mark) is None  # before a clear: read every path


def test_vacuum_and_table_sizes(store):
    store.replace_file('a.md', 'memory', 'f', 0.0, 1, chunks('x'))
    store.vacuum()
    assert store.chunk_count() == 1
    sizes = store.table_bytes()
    assert sizes is None or sizes.get('chunks', 0) > 0


def test_config_chooses_the_backend_of_both_stores_once(pg_dsn, tmp_path, monkeypatch):
    """A DSN written as libpq keywords is no URL: only the config's choice tells it from a file name, for the memory
    store and for the session store alike."""
    from psycopg.conninfo import conninfo_to_dict

    keywords = ' '.join(f'{key}={value}' for key, value in conninfo_to_dict(pg_dsn).items())
    assert not is_dsn(keywords)
    monkeypatch.chdir(tmp_path)
    store = {'backend': 'postgres', 'dsn': keywords, 'path': str(tmp_path / 'main.sqlite')}
    config = load_config({'agents': {'defaults': {'memorySearch': {'store': store}}}}, 'main')
    assert choose_backend(config)[:2] == ('postgres', keywords)
    with open_memory_store(config) as memory:
        assert memory.catches_up
    target, setting = sessions_target(config)
    with SessionStore(target, 'main', setting=setting) as sessions:
        assert type(sessions._db).__name__ == 'PostgresDatabase'
    assert list(tmp_path.iterdir()) == []  # no SQLite file named after the DSN
