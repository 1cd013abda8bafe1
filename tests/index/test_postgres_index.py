"""Memory search on the PostgreSQL backend: the same answers as SQLite, hosts that share one agent's memory and
catch up by generation, agents kept apart, and faults that leave both the database and the derived indexes right."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import HashEmbedder, paths, write

import memsift
from memsift.errors import ConfigError, StoreError
from memsift.index.pgstore import GENERATION_TTL_S


def settle():
    """Wait until other stores' cached generation has expired: another host's write shows within this time."""
    time.sleep(GENERATION_TTL_S)


def pg_config(tmp_path, dsn, host='host-a', **search) -> dict:
    """A config on the PostgreSQL backend; ``host`` names where this process keeps its derived indexes."""
    store = {'backend': 'postgres', 'dsn': dsn, 'path': str(tmp_path / host / '{agentId}.sqlite')}
    return {'agents': {'defaults': {'memorySearch': {'store': store, **search}}}}


def sqlite_config(tmp_path, **search) -> dict:
    return {
        'agents': {
            'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'sqlite' / '{agentId}.sqlite')}, **search}}
        }
    }


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff.\n')
    write(root / 'memory' / '2026-11-21.md', '# 2026-11-21\n\nThe physician moved the appointment to Friday.\n')
    write(root / 'memory' / 'projects' / 'cjk.md', '视频下载工具 BBDown 配置\n東京オフィスの会議は火曜日\n')
    for i in range(30):
        write(root / 'memory' / 'log' / f'2026-10-{i + 1:02d}.md', f'# day {i}\n\nbackoff retry note {i} car doctor\n')
    return root


def hits(result):
    return [(h.path, h.start_line, h.end_line, round(h.score, 6), h.snippet, h.source) for h in result.results]


QUERIES = ['backoff', 'tabs spaces', 'doctor appointment', '视频下载', 'vault', 'ERR_CONN_RESET', 'car']


@pytest.mark.parametrize(
    'query_config',
    [{}, {'hybrid': {'mmr': {'enabled': True}, 'temporalDecay': {'enabled': True, 'halfLifeDays': 30}}}],
    ids=['defaults', 'mmr-and-decay'],
)
def test_search_answers_exactly_as_on_sqlite(tmp_path, pg_dsn, notes, query_config):
    """Same corpus, same config: the same hits, scores, snippets and order on both backends, keyword and hybrid,
    with OpenClaw's defaults and with MMR and temporal decay on (dated notes, so decay moves scores)."""
    provider = HashEmbedder()
    with (
        memsift.MemoryIndex(notes, sqlite_config(tmp_path, query=query_config), provider=provider) as lite,
        memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, query=query_config), provider=provider) as pg,
    ):
        assert lite.sync().to_dict()['added'] == pg.sync().to_dict()['added']
        for query in QUERIES:
            for keyword_only in (False, True):
                a = lite.search(query, keyword_only=keyword_only)
                b = pg.search(query, keyword_only=keyword_only)
                assert hits(a) == hits(b), query
                assert a.mode == b.mode
        assert pg.get('MEMORY.md')['text'] == lite.get('MEMORY.md')['text']
        status = pg.status()
        assert status['store'] == {'backend': 'postgres', 'location': pg.store.location}
        assert status['chunks'] == lite.status()['chunks'] and status['vector']['vectors'] == status['chunks']


def test_a_second_host_sees_each_write_and_removal(tmp_path, pg_dsn, notes):
    """Two processes with their own derived indexes on one agent: the reader catches up by generation, applying
    only what changed (no rebuild), for keyword and vector search."""
    provider = HashEmbedder()
    with (
        memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, 'writer'), provider=provider) as writer,
        memsift.MemoryIndex(
            notes, pg_config(tmp_path, pg_dsn, 'reader', sync={'onSearch': False}), provider=provider
        ) as reader,
    ):
        writer.sync()
        settle()
        assert 'memory/2026-11-20.md' in paths(reader.search('ERR_CONN_RESET'))
        docs = reader.index.num_docs
        write(notes / 'memory' / '2026-11-22.md', 'Zanzibar offsite planned for March.\n')
        (notes / 'memory' / '2026-11-20.md').unlink()
        writer.sync()
        settle()
        assert paths(reader.search('Zanzibar offsite')) == ['memory/2026-11-22.md']
        assert reader.search('ERR_CONN_RESET', keyword_only=True).results == []
        assert reader.index.num_docs == docs  # one chunk in, one out: applied, not rebuilt
        assert reader.index.generation == writer.store.generation == reader.embeddings.generation
        assert len(reader.vectors) == len(writer.vectors)
        found = paths(reader.search('automobile'))  # only the vector leg can find it: no shared word
        assert found and all(path.startswith('memory/log/') for path in found)


def test_a_new_host_builds_its_index_from_the_database(tmp_path, pg_dsn, notes):
    with memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, 'one')) as one:
        one.sync()
    other_ws = tmp_path / 'empty-ws'  # a search-only host: its own folder has no notes
    other_ws.mkdir()
    with memsift.MemoryIndex(other_ws, pg_config(tmp_path, pg_dsn, 'two', sync={'onSearch': False})) as two:
        assert paths(two.search('tabs spaces')) == ['MEMORY.md']
        assert two.index.num_docs == two.store.chunk_count() > 30


def test_agents_sharing_a_database_are_kept_apart(tmp_path, pg_dsn, notes):
    other = tmp_path / 'other-ws'
    write(other / 'MEMORY.md', 'Bob keeps the launch codes in the blue binder.\n')
    main_config = pg_config(tmp_path, pg_dsn)
    bob_config = pg_config(tmp_path, pg_dsn)
    with (
        memsift.MemoryIndex(notes, main_config, agent_id='main') as main,
        memsift.MemoryIndex(other, bob_config, agent_id='bob') as bob,
    ):
        main.sync()
        bob.sync()
        assert main.search('launch codes binder').results == []
        assert paths(bob.search('launch codes binder')) == ['MEMORY.md']
        assert bob.search('ERR_CONN_RESET').results == []
        assert main.status()['files'] == 34 and bob.status()['files'] == 1
        with pytest.raises(memsift.InvalidInputError):
            bob.get('memory/2026-11-20.md')  # main's file, not indexed for bob


def test_the_dsn_comes_from_the_environment_and_is_never_shown(tmp_path, postgres_server, notes, monkeypatch):
    dsn = postgres_server.create_database('from_env').replace('memsift@', 'memsift:pa55word-xyz@')
    config = pg_config(tmp_path, None)
    del config['agents']['defaults']['memorySearch']['store']['dsn']
    with pytest.raises(ConfigError, match='MEMSIFT_PG_DSN'):
        memsift.MemoryIndex(notes, config)
    monkeypatch.setenv('MEMSIFT_PG_DSN', dsn)
    with memsift.MemoryIndex(notes, config) as index:
        index.sync()
        shown = json.dumps(index.status(deep=True))
        assert 'pa55word-xyz' not in shown and 'memsift:***@' in shown and repr(index.store).count('***') == 1
    monkeypatch.setenv('MEMSIFT_PG_DSN', dsn.replace(str(postgres_server.port), '1'))
    with pytest.raises(StoreError, match='MEMSIFT_PG_DSN') as info:
        memsift.MemoryIndex(notes, config)
    assert 'pa55word-xyz' not in str(info.value)


def test_a_server_killed_mid_sync_loses_nothing_and_the_next_sync_completes(tmp_path, postgres_server, notes):
    dsn = postgres_server.create_database('killed')
    for i in range(400):
        write(notes / 'memory' / 'bulk' / f'note-{i}.md', f'bulk note {i} about topic-{i}\n')
    index = memsift.MemoryIndex(notes, pg_config(tmp_path, dsn), provider=HashEmbedder())
    stopper = threading.Timer(0.3, postgres_server.stop, kwargs={'immediate': True})
    stopper.start()
    try:
        with pytest.raises(StoreError, match=r'store\.dsn'):
            for _ in range(50):  # until the server goes away mid-sync
                index.sync(force=True)
    finally:
        stopper.join()
        postgres_server.start()
    report = index.sync()
    assert index.store.chunk_count() == index.index.num_docs == len(index.vectors)
    assert len(index.store.files()) == 434 and report.generation == index.store.generation
    assert paths(index.search('topic-399', keyword_only=True))[0] == 'memory/bulk/note-399.md'
    index.close()


def test_a_server_restarted_while_the_index_sat_idle_answers_the_next_calls(tmp_path, postgres_server, notes):
    """The server goes away between two calls, not during one: the idle connection is dead but not known to be, so
    the next statement, the next transaction and the next sync must reconnect rather than fail."""
    dsn = postgres_server.create_database('restarted')
    with memsift.MemoryIndex(notes, pg_config(tmp_path, dsn), provider=HashEmbedder()) as index:
        index.sync()
        first_calls = {
            'a statement': lambda: index.store.generation,
            'a transaction': lambda: index.store.changes_since(0),
            'a sync': lambda: index.sync(force=True),
        }
        for name, first_call in first_calls.items():
            postgres_server.stop(immediate=True)
            postgres_server.start()
            try:
                first_call()
            except StoreError as exc:
                pytest.fail(f'{name} on the connection the restart dropped: {exc}')
        write(notes / 'memory' / 'after-restart.md', 'written after the restarts: quokka\n')
        index.sync()
        assert paths(index.search('quokka'))[0] == 'memory/after-restart.md'


def test_two_processes_syncing_one_agent_store_every_file_once(tmp_path, pg_dsn, notes):
    config = tmp_path / 'config.json'
    script = textwrap.dedent(f"""
        import json, sys, memsift
        config = json.loads(open({str(config)!r}).read())
        config['agents']['defaults']['memorySearch']['store']['path'] = sys.argv[1] + '/{{agentId}}.sqlite'
        with memsift.MemoryIndex({str(notes)!r}, config) as index:
            for _ in range(3):
                index.sync(force=True)
    """)
    config.write_text(json.dumps(pg_config(tmp_path, pg_dsn)))
    for i in range(100):
        write(notes / 'memory' / 'many' / f'n-{i}.md', f'note {i}\n')
    procs = [subprocess.Popen([sys.executable, '-c', script, str(tmp_path / f'h{n}')]) for n in range(2)]
    assert [p.wait(timeout=180) for p in procs] == [0, 0]
    with memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, 'check')) as index:
        chunks = list(index.store.iter_chunks())
        assert len({c.path for c in chunks}) == 134 == len(chunks)  # one chunk per note, none twice
        result = index.search('note 77')
        assert paths(result)[:1] == ['memory/many/n-77.md'], result


def test_a_host_whose_index_is_older_than_the_removal_log_rebuilds(tmp_path, pg_dsn, notes):
    with memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, 'w')) as writer:
        writer.sync()
        with memsift.MemoryIndex(notes, pg_config(tmp_path, pg_dsn, 'r', sync={'onSearch': False})) as reader:
            assert paths(reader.search('vault'))
            (notes / 'MEMORY.md').unlink()
            writer.sync()
            writer.store.prune_removed(keep_s=-1)
            settle()
            assert reader.search('vault').results == []
            assert reader.index.num_docs == writer.store.chunk_count()


def test_status_and_the_command_line_show_the_backend(tmp_path, pg_dsn, notes):
    config = tmp_path / 'openclaw.json'
    config.write_text(json.dumps(pg_config(tmp_path, pg_dsn.replace('memsift@', 'memsift:s3cr3t-pw@'))))
    env = {**os.environ, 'PYTHONWARNINGS': 'ignore'}

    def run(*args):
        command = [sys.executable, '-m', 'memsift', *args, '--config', str(config), '--workspace', str(notes)]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    done = run('index', '--json')
    assert done.returncode == 0, done.stderr
    status = run('status')
    assert status.returncode == 0 and 'postgresql://memsift:***@127.0.0.1' in status.stdout
    assert 's3cr3t-pw' not in status.stdout + status.stderr + done.stdout + done.stderr
    found = run('search', 'tabs spaces', '--json')
    assert json.loads(found.stdout)['results'][0]['path'] == 'MEMORY.md', found.stderr
