"""Read replicas of the PostgreSQL memory store (``store.readDsn``), against a real streaming replica (a hot standby
``pg_basebackup`` made of a server of this module): reads served by it, a write visible to another process through
it, a replica paused, stopped or unreachable (reads go to the primary, answers stay fresh, status warns), the primary
stopped (searches answer from the replica, with a warning; writes fail), and DSNs never shown with their password."""

import contextlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
import time

import psycopg
import pytest
from conftest import write

import memsift
from memsift.errors import ConfigError, StoreError
from memsift.index.pgstore import GENERATION_TTL_S
from memsift.index.replicas import RETRY_S

_names = itertools.count()


def new_database(replicated):
    """``(primary DSN, replica DSN)`` of a new, empty database, created on the primary and replayed by the standby."""
    primary, standby = replicated
    name = f'replica_{os.getpid()}_{next(_names)}'
    dsn = primary.create_database(name)
    standby.wait_replayed(primary)
    return dsn, standby.dsn(name)


@pytest.fixture
def dbs(replicated, tmp_path):
    """:func:`new_database` with memsift's tables set up, replayed too: a replica first asked before it has replayed
    the set-up is left alone for ``RETRY_S``, which would make the first searches' routing depend on timing."""
    from memsift.index.pgstore import PgMemoryStore

    dsn, read_dsn = new_database(replicated)
    PgMemoryStore(dsn, 'main', tmp_path / 'set-up' / 'main.sqlite').close()
    replicated[1].wait_replayed(replicated[0])
    return dsn, read_dsn


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    for i in range(10):
        write(root / 'memory' / f'2026-10-{i + 1:02d}.md', f'# day {i}\n\nbackoff retry note {i}\n')
    return root


def config(tmp_path, dsn, read_dsn, host='host-a', **store) -> dict:
    store = {'backend': 'postgres', 'dsn': dsn, 'readDsn': read_dsn,
             'path': str(tmp_path / host / '{agentId}.sqlite'), **store}  # fmt: skip
    return {'agents': {'defaults': {'memorySearch': {'store': store}}}}


def paths(result):
    return [hit.path for hit in result.results]


def replica_queries(standby, database):
    """What memsift's connections to the standby last ran there (``pg_stat_activity``): proof it read there."""
    with psycopg.connect(standby.dsn(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend' "
            'AND pid <> pg_backend_pid()',
            (database,),
        ).fetchall()
    return [row[0] for row in rows]


def settled(replicated):
    """Wait until the standby has replayed the primary's writes, and cached generations have expired."""
    primary, standby = replicated
    standby.wait_replayed(primary)
    time.sleep(GENERATION_TTL_S * 2)


def indexed_and_replayed(tmp_path, replicated, dbs, notes):
    """The notes indexed through the primary, then replayed by the standby."""
    dsn, read_dsn = dbs
    with memsift.MemoryIndex(notes, config(tmp_path, dsn, read_dsn)) as writer:
        writer.sync()
    settled(replicated)


def test_reads_are_served_by_the_replica(tmp_path, replicated, dbs, notes):
    primary, standby = replicated
    dsn, read_dsn = dbs
    indexed_and_replayed(tmp_path, replicated, dbs, notes)
    with memsift.MemoryIndex(notes, config(tmp_path, dsn, read_dsn, host='host-b')) as reader:
        assert paths(reader.search('vault'))[0] == 'MEMORY.md'
        ran = replica_queries(standby, read_dsn.rsplit('/', 1)[1])
        assert any('FROM memory_chunks' in query for query in ran), ran  # the chunks the search showed
        state = reader.status()['replica']
        assert state['warning'] is None and state['readsFrom'] == read_dsn
        assert state['replicaReads'] > 0 and state['replicaReads'] > state['primaryReads']
        assert state['replicas'][0] == {'dsn': read_dsn, 'reachable': True, 'generation': reader.store.generation,
                                        'behind': 0, 'lagMs': 0.0, 'standby': True,
                                        'reads': state['replicaReads'], 'problem': None}  # fmt: skip


def test_a_write_becomes_visible_to_a_reader_process_through_the_replica(tmp_path, replicated, dbs, notes):
    dsn, read_dsn = dbs
    reader_config = tmp_path / 'reader.json'
    reader_config.write_text(json.dumps(config(tmp_path, dsn, read_dsn, host='host-b')))
    script = textwrap.dedent(f"""
        import json, sys, time, memsift
        with memsift.MemoryIndex({str(notes)!r}, json.load(open({str(reader_config)!r}))) as index:
            index.search('warm up')
            print('ready', flush=True)
            sys.stdin.readline()
            started = time.monotonic()
            while not index.search('quokka').results and time.monotonic() - started < 20:
                time.sleep(0.01)
            found = [hit.path for hit in index.search('quokka').results]
            print(json.dumps({{'found': found, 'replica': index.status()['replica']}}), flush=True)
    """)
    with memsift.MemoryIndex(notes, config(tmp_path, dsn, read_dsn)) as writer:
        writer.sync()
        with subprocess.Popen([sys.executable, '-c', script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}) as reader:  # fmt: skip
            assert reader.stdout.readline().strip() == 'ready'
            write(notes / 'memory' / 'quokka.md', 'A quokka was seen on the island.\n')
            writer.sync()
            reader.stdin.write('go\n')
            reader.stdin.flush()
            answer = json.loads(reader.stdout.readline())
    assert answer['found'] == ['memory/quokka.md']
    assert answer['replica']['warning'] is None and answer['replica']['replicaReads'] > 0


def test_a_paused_replica_leaves_reads_to_the_primary_and_answers_stay_fresh(tmp_path, replicated, dbs, notes):
    primary, standby = replicated
    dsn, read_dsn = dbs
    cfg_a = config(tmp_path, dsn, read_dsn, replicaMaxLagMs=200)
    cfg_b = config(tmp_path, dsn, read_dsn, host='host-b', replicaMaxLagMs=200)
    with memsift.MemoryIndex(notes, cfg_a) as writer, memsift.MemoryIndex(notes, cfg_b) as reader:
        writer.sync()
        settled(replicated)
        assert paths(reader.search('vault'))[0] == 'MEMORY.md'
        with psycopg.connect(standby.dsn(), autocommit=True) as conn:
            conn.execute('SELECT pg_wal_replay_pause()')
            try:
                write(notes / 'memory' / 'quokka.md', 'A quokka was seen on the island.\n')
                writer.sync()
                time.sleep(GENERATION_TTL_S * 2)
                before = reader.status()['replica']['primaryReads']
                # The replica has not replayed the write: the reader's reads go to the primary, never stale.
                assert paths(reader.search('quokka')) == ['memory/quokka.md']
                assert reader.status()['replica']['primaryReads'] > before
                time.sleep(0.3)  # longer than replicaMaxLagMs
                assert paths(reader.search('quokka')) == ['memory/quokka.md']
                state = reader.status()['replica']
                assert state['readsFrom'] == dsn
                assert state['replicas'][0]['behind'] >= 1 and state['replicas'][0]['lagMs'] > 200
                assert read_dsn in state['warning'] and 'store.replicaMaxLagMs' in state['warning']
            finally:
                conn.execute('SELECT pg_wal_replay_resume()')
        settled(replicated)
        time.sleep(RETRY_S)
        assert paths(reader.search('quokka')) == ['memory/quokka.md']
        state = reader.status()['replica']
        assert state['warning'] is None and state['readsFrom'] == read_dsn


def test_a_stopped_or_unreachable_replica_leaves_reads_to_the_primary_with_a_warning(tmp_path, replicated, dbs, notes):
    primary, standby = replicated
    dsn, read_dsn = dbs
    nowhere = read_dsn.replace(f':{standby.port}/', ':1/')
    with memsift.MemoryIndex(notes, config(tmp_path, dsn, [nowhere, read_dsn])) as index:
        index.sync()
        settled(replicated)
        assert paths(index.search('vault'))[0] == 'MEMORY.md'
        state = index.status()['replica']
        assert state['readsFrom'] == read_dsn  # the first is down: the second serves
        assert [r['reachable'] for r in state['replicas']] == [False, True]
        assert nowhere in state['warning'] and 'store.readDsn[0]' in state['warning']
        standby.stop()
        try:
            write(notes / 'memory' / 'quokka.md', 'A quokka was seen on the island.\n')
            index.sync()
            time.sleep(GENERATION_TTL_S * 2)
            assert paths(index.search('quokka')) == ['memory/quokka.md']
            state = index.status()['replica']
            assert state['readsFrom'] == dsn and state['replicas'][1]['reachable'] is False
            assert read_dsn in state['warning'] and 'reads go to the primary' in state['warning']
        finally:
            standby.start()
        settled(replicated)
        time.sleep(RETRY_S)
        assert paths(index.search('quokka')) == ['memory/quokka.md']
        assert index.status()['replica']['readsFrom'] == read_dsn


def test_with_the_primary_stopped_searches_answer_from_the_replica(tmp_path, replicated, dbs, notes):
    primary, standby = replicated
    dsn, read_dsn = dbs
    indexed_and_replayed(tmp_path, replicated, dbs, notes)
    with memsift.MemoryIndex(notes, config(tmp_path, dsn, read_dsn, host='host-b')) as index:
        assert paths(index.search('vault'))[0] == 'MEMORY.md'
        primary.stop(immediate=True)
        try:
            time.sleep(GENERATION_TTL_S * 2)
            for query in ('vault', 'backoff', 'tabs'):
                assert index.search(query).results, query
            state = index.status()['replica']
            assert state['readsFrom'] == read_dsn
            assert 'the primary' in state['warning'] and 'may miss writes' in state['warning']
            write(notes / 'memory' / 'quokka.md', 'A quokka was seen on the island.\n')
            with pytest.raises(StoreError, match=r'store\.dsn'):
                index.sync()
        finally:
            primary.start()
        time.sleep(RETRY_S + GENERATION_TTL_S)
        index.sync()
        assert paths(index.search('quokka')) == ['memory/quokka.md']
        state = index.status()['replica']
        assert state['warning'] is None


@contextlib.contextmanager
def another_standby(replicated, read_dsn):
    """A second standby of the primary, replayed to now, and the DSN of ``read_dsn``'s database on it."""
    primary, _ = replicated
    with primary.standby() as server:
        server.wait_replayed(primary)
        yield server, server.dsn(read_dsn.rsplit('/', 1)[1])


def test_reads_take_turns_among_the_replicas(tmp_path, replicated, dbs, notes):
    dsn, read_dsn = dbs
    indexed_and_replayed(tmp_path, replicated, dbs, notes)
    with another_standby(replicated, read_dsn) as (_, second_dsn):
        with memsift.MemoryIndex(notes, config(tmp_path, dsn, [read_dsn, second_dsn], host='host-b')) as reader:
            for query in ['vault', 'backoff', 'tabs', 'deploy'] * 5:
                assert reader.search(query).results, query
            state = reader.status()['replica']
    reads = [replica['reads'] for replica in state['replicas']]
    assert sum(reads) == state['replicaReads'] and state['warning'] is None
    assert min(reads) >= sum(reads) // 3, f'each replica serves its share: {reads}'


def test_a_promoted_replica_still_serves_reads_and_status_says_where_writes_go(tmp_path, replicated, dbs, notes):
    dsn, read_dsn = dbs
    indexed_and_replayed(tmp_path, replicated, dbs, notes)
    with another_standby(replicated, read_dsn) as (failed_over, promoted_dsn):
        failed_over.promote()
        with memsift.MemoryIndex(notes, config(tmp_path, dsn, promoted_dsn, host='host-b')) as reader:
            assert paths(reader.search('vault'))[0] == 'MEMORY.md'
            state = reader.status()['replica']
    assert state['replicas'][0]['standby'] is False and state['replicaReads'] > 0
    assert f'replica {promoted_dsn} (store.readDsn) is no longer a standby' in state['warning']
    assert 'point store.dsn at it' in state['warning']


def test_read_dsns_are_never_shown_with_their_password(tmp_path, replicated, dbs, notes, monkeypatch):
    primary, standby = replicated
    dsn, read_dsn = dbs
    secret_dsn = read_dsn.replace('memsift@', 'memsift:pa55word-replica@')  # trust auth: any password is let in
    gone = secret_dsn.replace(f':{standby.port}/', ':1/')
    cfg = config(tmp_path, dsn, [gone, secret_dsn])
    with memsift.MemoryIndex(notes, cfg) as index:
        index.sync()
        settled(replicated)
        index.search('vault')
        shown = json.dumps(index.status(deep=True)) + repr(index.store) + repr(index.config)
        assert 'pa55word-replica' not in shown and 'memsift:***@' in shown
        assert index.status()['replica']['readsFrom'] == read_dsn.replace('memsift@', 'memsift:***@')
    with pytest.raises(ConfigError) as info:
        memsift.MemoryIndex(notes, config(tmp_path, dsn, [secret_dsn, 5]))
    assert 'pa55word-replica' not in str(info.value) and 'store.readDsn' in str(info.value)
    # $MEMSIFT_PG_READ_DSN when store.readDsn is not set
    del cfg['agents']['defaults']['memorySearch']['store']['readDsn']
    monkeypatch.setenv('MEMSIFT_PG_READ_DSN', secret_dsn)
    with memsift.MemoryIndex(notes, cfg) as index:
        index.search('vault')
        state = index.status()['replica']
        assert state['replicaReads'] > 0 and 'pa55word-replica' not in json.dumps(state)


def test_a_replica_without_the_schema_is_named_with_the_fix(tmp_path, replicated):
    from memsift.index.pgstore import PgMemoryStore

    primary, standby = replicated
    dsn, read_dsn = new_database(replicated)  # no store has set it up yet
    # The primary's database has the tables, the replica's (another database here) not yet.
    store = PgMemoryStore(primary.dsn(), 'main', tmp_path / 's', replicas=[(read_dsn, 'store.readDsn')])
    try:
        assert store.chunk_count() == 0  # the primary answers while the replica has no tables yet
        state = store.read_replicas()
        assert state is not None and 'has no memsift tables' in state['warning']
        assert 'store.readDsn' in state['warning']
    finally:
        store.close()


def test_a_process_opened_while_the_primary_is_down_searches_from_the_replica(tmp_path, replicated, dbs, notes):
    primary, _ = replicated
    dsn, read_dsn = dbs
    indexed_and_replayed(tmp_path, replicated, dbs, notes)
    primary.stop(immediate=True)
    try:
        with memsift.MemoryIndex(notes, config(tmp_path, dsn, read_dsn, host='host-c')) as index:
            assert paths(index.search('vault'))[0] == 'MEMORY.md'
            state = index.status()['replica']
            assert state['readsFrom'] == read_dsn and 'may miss writes' in state['warning']
            with pytest.raises(StoreError, match=r'store\.dsn'):
                index.sync(force=True)
    finally:
        primary.start()
