"""``memsift migrate``: SQLite to PostgreSQL and back, verified, resumable after a kill, answering the same searches."""

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import HashEmbedder, write

import memsift
from memsift.index.pgstore import PgMemoryStore
from memsift.index.store import MemoryStore
from memsift.migrate import memory_digest, migrate_memory


@pytest.fixture
def indexed(tmp_path):
    """A SQLite memory store with 60 notes, vectors, a skipped file and cache rows; returns its config dict."""
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'Prefers tabs over spaces. 😀\n')
    write(ws / 'memory' / 'bad.md', 'x')
    (ws / 'memory' / 'bad.md').write_bytes(b'\xff\xfe not utf-8')
    for i in range(60):
        write(ws / 'memory' / f'2026-10-{i % 28 + 1:02d}-{i}.md', f'# note {i}\n\nbackoff retry {i} car doctor\n' * 3)
    config = {
        'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'state' / '{agentId}.sqlite')}}}}
    }
    with memsift.MemoryIndex(ws, config, provider=HashEmbedder()) as index:
        index.sync()
        assert index.store.skipped() and index.store.cache_size() > 0
    return ws, config


def test_sqlite_to_postgres_and_back_copies_everything(tmp_path, pg_dsn, indexed):
    ws, config = indexed
    lite_path = tmp_path / 'state' / 'main.sqlite'
    with MemoryStore(lite_path) as lite, PgMemoryStore(pg_dsn, 'main', tmp_path / 'pg' / 'main.sqlite') as pg:
        report = migrate_memory(lite, pg)
        assert report['filesCopied'] == 61 and report['filesAlreadyThere'] == 0
        source = memory_digest(lite)
        assert memory_digest(pg) == source and source['vectors'] == source['chunks'] > 60
        again = migrate_memory(lite, pg)  # nothing left to copy
        assert again['filesCopied'] == 0 and again['filesAlreadyThere'] == 61
        with MemoryStore(tmp_path / 'back.sqlite') as back:
            migrate_memory(pg, back)
            assert memory_digest(back) == source
    pg_config = {
        'agents': {
            'defaults': {
                'memorySearch': {
                    'store': {'backend': 'postgres', 'dsn': pg_dsn, 'path': str(tmp_path / 'pg' / '{agentId}.sqlite')}
                }
            }
        }
    }
    with (
        memsift.MemoryIndex(ws, config, provider=HashEmbedder()) as a,
        memsift.MemoryIndex(ws, pg_config, provider=HashEmbedder()) as b,
    ):
        assert b.sync().chunks_written == 0  # the migrated store is current: nothing re-embedded
        for query in ('backoff retry 7', 'tabs', 'automobile'):
            left, right = a.search(query).results, b.search(query).results
            assert [(h.path, h.start_line, round(h.score, 6)) for h in left] == [
                (h.path, h.start_line, round(h.score, 6)) for h in right
            ]


def test_a_migration_killed_halfway_resumes_and_verifies(tmp_path, pg_dsn, indexed):
    lite_path = tmp_path / 'state' / 'main.sqlite'
    script = textwrap.dedent(f"""
        import os
        from memsift.index.store import MemoryStore
        from memsift.index.pgstore import PgMemoryStore
        from memsift import migrate
        migrate.BLOCK_CHUNKS = 8
        def progress(what, done, total):
            if done == 30:
                os._exit(7)  # killed mid-copy
        migrate.migrate_memory(MemoryStore({str(lite_path)!r}), PgMemoryStore({pg_dsn!r}, 'main', {str(tmp_path)!r}), progress)
    """)
    assert subprocess.run([sys.executable, '-c', script], check=False).returncode == 7
    with MemoryStore(lite_path) as lite, PgMemoryStore(pg_dsn, 'main', tmp_path / 'x.sqlite') as pg:
        partial = pg.files()
        assert 0 < len(partial) < 61 and pg.identity is None  # whole files only, and not taken for a finished index
        for path in partial:
            assert [c.hash for c in pg.chunks(pg.chunk_ids(path))] == [
                c.hash for c in lite.chunks(lite.chunk_ids(path))
            ]
        report = migrate_memory(lite, pg)
        assert report['filesAlreadyThere'] >= len(partial) - 8
        assert memory_digest(pg) == memory_digest(lite)


def test_the_digest_sees_a_changed_chunk(tmp_path, pg_dsn, indexed):
    with MemoryStore(tmp_path / 'state' / 'main.sqlite') as lite, PgMemoryStore(pg_dsn, 'main', tmp_path) as pg:
        migrate_memory(lite, pg)
        ids = pg.chunk_ids('MEMORY.md')
        row = pg.chunks(ids)[0]
        pg.replace_file('MEMORY.md', row.source, pg.file('MEMORY.md').hash, pg.file('MEMORY.md').mtime,
                        pg.file('MEMORY.md').size, [(1, 2, 'tampered', row.hash)])  # fmt: skip
        assert memory_digest(pg)['sha256'] != memory_digest(lite)['sha256']
        assert json.dumps(memory_digest(pg))  # plain data, for --json


def test_migrate_moves_memory_and_sessions_both_ways_from_the_command_line(tmp_path, pg_dsn, indexed):
    """``memsift migrate --to postgres`` then ``--to sqlite`` into a fresh folder: both verified, and the copies
    answer memory and session searches as the original does."""
    ws, _ = indexed
    sessions = tmp_path / 'sessions.sqlite'
    with memsift.SessionStore(sessions, 'main') as store:
        store.append_many(
            'agent:main:main',
            [
                {'type': 'session', 'id': 'sess-1'},
                {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'the cluster is orion-7'}},
                {'type': 'message', 'id': 'm2', 'parentId': 'm1', 'message': {'role': 'assistant', 'content': 'ok'}},
            ],
        )
        store.append('agent:main:subagent:x', {'type': 'message', 'id': 's1', 'message': {'role': 'user',
                     'content': 'rotate certificates'}}, spawned_by='agent:main:main')  # fmt: skip
        store.set_flags('agent:main:subagent:x', archived=True)
        original = store.search('orion-7', caller='agent:main:main')
    config = tmp_path / 'openclaw.json'
    config.write_text(
        json.dumps(
            {
                'agents': {
                    'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'state' / '{agentId}.sqlite')}}}
                }
            }
        )
    )

    def run(*args, env=None):
        command = [sys.executable, '-m', 'memsift', 'migrate', *args, '--config', str(config), '--json']
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)

    import os

    env = {**os.environ, 'MEMSIFT_PG_DSN': pg_dsn}
    done = run('--to', 'postgres', '--sessions-db', str(sessions), env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report['verified'] and report['memory']['target']['files'] == 61
    assert report['sessions']['target'] == report['sessions']['source']
    assert report['sessions']['target']['sessions'] == 2 and report['sessions']['sessionsCopied'] == 2
    again = json.loads(run('--to', 'postgres', '--sessions-db', str(sessions), env=env).stdout)
    assert again['verified'] and again['sessions']['sessionsCopied'] == 0 and again['memory']['filesCopied'] == 0
    with memsift.SessionStore(pg_dsn, 'main') as shared:
        assert shared.search('orion-7', caller='agent:main:main')['results'] == original['results']
        assert {s['key']: s['archived'] for s in shared.sessions()}['agent:main:subagent:x'] is True
    back = tmp_path / 'back'
    config.write_text(
        json.dumps({'agents': {'defaults': {'memorySearch': {'store': {'path': str(back / '{agentId}.sqlite')}}}}})
    )
    done = run('--to', 'sqlite', '--dsn', pg_dsn, '--sessions-db', str(back / 'sessions.sqlite'))
    assert done.returncode == 0, done.stderr
    returned = json.loads(done.stdout)
    assert returned['verified'] and returned['memory']['target']['sha256'] == report['memory']['source']['sha256']
    assert returned['sessions']['target']['sha256'] == report['sessions']['source']['sha256']
    with memsift.SessionStore(back / 'sessions.sqlite', 'main') as copy:
        assert copy.search('orion-7', caller='agent:main:main')['results'] == original['results']


def test_migrate_refuses_what_it_cannot_do(tmp_path, pg_dsn):
    from memsift.config import load_config
    from memsift.errors import ConfigError, InvalidInputError
    from memsift.migrate import migrate

    config = load_config(
        {'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'none' / '{agentId}.sqlite')}}}}},
        'main',
    )
    with pytest.raises(InvalidInputError, match='no SQLite memory store'):
        migrate(config, 'postgres', dsn=pg_dsn)
    with pytest.raises(InvalidInputError, match='postgres or sqlite'):
        migrate(config, 'mysql', dsn=pg_dsn)
    with pytest.raises(ConfigError, match='MEMSIFT_PG_DSN'):
        migrate(config, 'postgres')
