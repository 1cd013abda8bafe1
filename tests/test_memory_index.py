"""MemoryIndex end to end on temporary workspaces: sync, identity, crash recovery, the search pipeline, get, status."""

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import HashEmbedder, memory_config, write

import memsift
from memsift import MemoryIndex


def open_index(tmp_path, ws=None, provider=None, **search):
    return MemoryIndex(ws or tmp_path / 'ws', memory_config(tmp_path, **search), provider=provider)


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff.\n')
    write(
        root / 'memory' / 'projects' / 'cjk.md',
        '视频下载工具 BBDown 配置\n東京オフィスの会議は火曜日\n회의는 목요일입니다\n',
    )
    return root


def paths(result):
    return [hit.path for hit in result.results]


# ---------------------------------------------------------------- sync


def test_sync_is_incremental_and_tracks_changes_and_deletes(tmp_path, ws):
    with open_index(tmp_path) as index:
        first = index.sync()
        assert sorted(first.added) == ['MEMORY.md', 'memory/2026-11-20.md', 'memory/projects/cjk.md']
        again = index.sync()
        assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 3)
        write(ws / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nSwitched the pool to idle_timeout 45s.\n')
        (ws / 'MEMORY.md').unlink()
        changed = index.sync()
        assert (changed.updated, changed.removed) == (['memory/2026-11-20.md'], ['MEMORY.md'])
        assert paths(index.search('idle_timeout', min_score=0)) == ['memory/2026-11-20.md']
        assert index.search('ERR_CONN_RESET', min_score=0).results == []
        assert index.search('deploy key vault', min_score=0).results == []
        assert index.status()['files'] == 2


def test_a_file_rewritten_in_the_same_second_with_the_same_size_is_noticed(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
        note = ws / 'memory' / '2026-11-20.md'
        stat = note.stat()
        write(note, note.read_text().replace('backoff', 'jitters'))  # same size
        os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime
        assert index.sync().updated == ['memory/2026-11-20.md']
        assert paths(index.search('jitters', min_score=0)) == ['memory/2026-11-20.md']


def test_identity_change_reindexes_everything(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
    with MemoryIndex(ws, memory_config(tmp_path, chunking={'tokens': 64, 'overlap': 8})) as index:
        assert index.status()['identity']['status'] == 'rebuild-pending'
        report = index.sync()
        assert len(report.updated) == 3
        assert index.status()['identity']['status'] == 'current'
        assert index.sync().unchanged == 3


def test_provider_change_re_embeds_and_vectors_come_back_after_reopen(tmp_path, ws, embedder):
    with open_index(tmp_path) as index:
        index.sync()
    with open_index(tmp_path, provider=embedder) as index:
        assert len(index.sync().updated) == 3
        assert index.status()['vector']['vectors'] == index.status()['chunks']
    again = HashEmbedder()
    with open_index(tmp_path, provider=again) as index:
        assert index.status()['vector']['vectors'] == index.status()['chunks']  # loaded from the store
        assert index.sync().unchanged == 3
        assert again.calls == 0


_KILL_MIDWAY = """
import os, sys
sys.path.insert(0, {tests!r})
from conftest import memory_config
import memsift
calls = []
def progress(done, total, path):
    calls.append(path)
    if len(calls) == 3:
        os._exit(9)  # killed in the middle of a sync
with memsift.MemoryIndex({ws!r}, memory_config(__import__('pathlib').Path({tmp!r}))) as index:
    index.sync(force=True, progress=progress)
"""


def test_a_killed_sync_leaves_a_searchable_index_and_the_next_sync_completes_it(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
    for i in range(6):
        write(ws / 'memory' / f'topic-{i}.md', f'note {i} about kafka partitions and rebalancing\n')
    script = _KILL_MIDWAY.format(tests=os.path.dirname(__file__), ws=str(ws), tmp=str(tmp_path))
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    with open_index(tmp_path) as index:
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']  # previous data still served
        index.sync()
        status = index.status(deep=True)
        expected = sum(len(memsift.chunk_markdown(p.read_text())) for p in ws.rglob('*.md'))
        assert status['chunks'] == expected == status['fts']['docs']
        assert status['issues'] == []
        found = paths(index.search('kafka partitions', max_results=20, min_score=0))
        assert sorted(found) == [f'memory/topic-{i}.md' for i in range(6)]


def test_a_deleted_or_damaged_bm25_folder_is_rebuilt_from_the_store(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
        folder = index.index.path
    import shutil

    shutil.rmtree(folder)
    with open_index(tmp_path) as index:
        result = index.search('deploy key', min_score=0)
        assert paths(result) == ['MEMORY.md'] and result.debug['indexRebuilt'] is True
    (tmp_path / 'state' / 'main.bm25' / 'meta.json').write_text('{not json')
    with open_index(tmp_path) as index:
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']


def test_bad_files_are_skipped_with_a_reason_not_a_crash(tmp_path, ws):
    (ws / 'memory' / 'blob.md').write_bytes(b'\x00\x01\x02binary\x00' * 100)
    (ws / 'memory' / 'latin1.md').write_bytes('caf\xe9 notes'.encode('latin-1'))
    with open_index(tmp_path) as index:
        report = index.sync()
        assert set(report.skipped) == {'memory/blob.md', 'memory/latin1.md'}
        skipped = {item['path']: item['reason'] for item in index.status()['skipped']}
        assert 'binary' in skipped['memory/blob.md'] and 'UTF-8' in skipped['memory/latin1.md']
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']


def test_config_errors_name_the_key_path(tmp_path, ws):
    with pytest.raises(memsift.ConfigError, match=r'query\.maxResults'):
        MemoryIndex(ws, memory_config(tmp_path, query={'maxResults': 'many'}))
    with pytest.raises(memsift.InvalidInputError, match='not a folder'):
        MemoryIndex(tmp_path / 'missing', memory_config(tmp_path))


def test_store_path_takes_the_agent_id(tmp_path, ws):
    with MemoryIndex(ws, memory_config(tmp_path), agent_id='ops') as index:
        index.sync()
        assert index.status()['dbPath'] == str(tmp_path / 'state' / 'ops.sqlite')
        assert (tmp_path / 'state' / 'ops.bm25').is_dir()


# ---------------------------------------------------------------- search


def test_first_search_on_an_empty_index_syncs_once(tmp_path, ws):
    with open_index(tmp_path) as index:
        result = index.search('ERR_CONN_RESET')
        assert paths(result) == ['memory/2026-11-20.md']
        assert result.debug['bootstrapSync'] is True


def test_result_has_openclaw_tool_shape(tmp_path, ws):
    with open_index(tmp_path) as index:
        data = index.search('deploy key').to_dict()
    assert set(data) == {'results', 'provider', 'model', 'citations', 'mode', 'debug'}
    assert (data['provider'], data['model'], data['mode'], data['citations']) == (
        'none',
        'fts-only',
        'fts-only',
        'auto',
    )
    hit = data['results'][0]
    assert hit == {
        'path': 'MEMORY.md',
        'startLine': 1,
        'endLine': 5,
        'score': hit['score'],
        'corpus': 'memory',
        'snippet': (ws / 'MEMORY.md').read_text(),
        'source': 'memory',
        'citation': 'MEMORY.md#L1-L5',
    }
    assert 0.35 <= hit['score'] <= 1
    for key in ('backend', 'effectiveMode', 'searchMs', 'keywordMs', 'pathMs', 'mergeMs', 'hits'):
        assert key in data['debug']
    json.dumps(data)


def test_citations_follow_the_auto_on_off_rules(tmp_path, ws):
    with open_index(tmp_path) as index:
        assert index.search('deploy key', session_key='agent:main:main').results[0].citation == 'MEMORY.md#L1-L5'
        assert index.search('deploy key', session_key='agent:main:telegram:group:42').results[0].citation is None
    config = memory_config(tmp_path)
    config['memory']['citations'] = 'off'
    with MemoryIndex(ws, config) as index:
        assert index.search('deploy key').results[0].citation is None


def test_snippets_are_bounded_to_700_utf16_units(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'needle ' + '😀' * 1200)
    with open_index(tmp_path) as index:
        snippet = index.search('needle').results[0].snippet
    assert snippet.startswith('needle ') and len(snippet.encode('utf-16-le')) // 2 <= 700


def test_cjk_queries_find_chinese_japanese_and_korean(tmp_path, ws):
    with open_index(tmp_path) as index:
        for query in ('视频下载', '下载工具配置', '会議', '火曜日の会議', '회의', '목요일'):
            assert paths(index.search(query))[:1] == ['memory/projects/cjk.md'], query


def test_hostile_queries_do_not_break_search(tmp_path, ws):
    with open_index(tmp_path) as index:
        for query in ('"AND OR NOT (*:^~', 'x' * 200_000, '\x00\ud800', '   ', 'deploy' * 5000):
            result = index.search(query)
            assert isinstance(result.to_dict()['results'], list)
        assert index.search('x' * 200_000).debug['queryTruncated'] is True
        for bad in (0, -1, 2.5, True):
            with pytest.raises(memsift.InvalidInputError, match='max_results'):
                index.search('deploy', max_results=bad)
        with pytest.raises(memsift.InvalidInputError, match='min_score'):
            index.search('deploy', min_score=float('nan'))
        with pytest.raises(memsift.InvalidInputError, match='query'):
            index.search(None)


def test_max_results_and_min_score(tmp_path):
    ws = tmp_path / 'ws'
    for i in range(10):
        write(ws / 'memory' / f'n{i}.md', f'kafka rebalancing note {i} ' + 'filler ' * i)
    for i in range(30):
        write(ws / 'memory' / f'other{i}.md', f'unrelated note {i}')
    with open_index(tmp_path) as index:
        assert len(index.search('kafka').results) == 6  # query.maxResults default
        assert len(index.search('kafka', max_results=3).results) == 3
        top10 = index.search('kafka', max_results=10).results
        assert [h.path for h in top10[:3]] == paths(index.search('kafka', max_results=3))  # stable across limits
        assert all(h.score >= 0.35 for h in top10)
        relaxed = index.search('kafka', min_score=1.0)  # relaxed pass: FTS-only keeps what matched
        assert len(relaxed.results) == 6 and relaxed.debug['relaxed'] is True
        assert index.search('zzzz', min_score=0).results == []


def test_temporal_decay_applies_to_dated_files_only(tmp_path):
    ws = tmp_path / 'ws'
    text = 'the rollout checklist for canary deploys\n'
    for path in ('MEMORY.md', 'memory/2020-01-01.md', 'memory/runbooks/deploy.md', 'memory/2026-11-29-ops.md'):
        write(ws / path, text)
    with open_index(tmp_path, query={'hybrid': {'temporalDecay': {'enabled': True, 'halfLifeDays': 30}}}) as index:
        scores = {h.path: h.score for h in index.search('rollout checklist', max_results=10, min_score=0).results}
    with open_index(tmp_path) as index:
        plain = {h.path: h.score for h in index.search('rollout checklist', max_results=10, min_score=0).results}
    assert scores['MEMORY.md'] == plain['MEMORY.md']
    assert scores['memory/runbooks/deploy.md'] == plain['memory/runbooks/deploy.md']
    assert scores['memory/2020-01-01.md'] < 0.01 * plain['memory/2020-01-01.md']
    assert 0 < scores['memory/2026-11-29-ops.md'] <= plain['memory/2026-11-29-ops.md']


def test_path_tiers_exact_path_then_basename_then_stem_then_partial(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'a' / 'notes.md', 'unrelated text one')
    write(ws / 'memory' / 'b' / 'notes.md', 'unrelated text two')
    write(ws / 'memory' / 'notes.txt.md', 'unrelated text three')
    write(ws / 'memory' / 'kubernetes-setup.md', 'cluster bootstrap steps')
    write(ws / 'memory' / 'other.md', 'we wrote notes.md about notes')
    with open_index(tmp_path) as index:
        full = index.search('memory/b/notes.md')
        assert paths(full)[0] == 'memory/b/notes.md' and full.results[0].score == 1.0
        assert (
            set(paths(full)[1:3]) == {'memory/a/notes.md', 'memory/other.md'} or paths(full)[1] != 'memory/b/notes.md'
        )
        base = paths(index.search('notes.md'))
        assert set(base[:2]) == {'memory/a/notes.md', 'memory/b/notes.md'}  # basename tier beats the body hit
        stem = paths(index.search('NOTES'))
        assert set(stem[:2]) == {'memory/a/notes.md', 'memory/b/notes.md'}
        assert paths(index.search('./memory\\kubernetes-setup.md'))[0] == 'memory/kubernetes-setup.md'
        partial = index.search('kubernetes')  # not in any note's text: found by its file name
        assert (
            paths(partial) == ['memory/kubernetes-setup.md'] and partial.results[0].snippet == 'cluster bootstrap steps'
        )


def test_hybrid_search_finds_synonyms_keyword_search_cannot(tmp_path, embedder):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'garage.md', 'The car needs new tyres before winter.')
    write(ws / 'memory' / 'health.md', 'Book the doctor appointment for March.')
    with open_index(tmp_path) as index:
        assert index.search('automobile').results == []
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()  # the re-embedding for the new provider (a search waits for it only 0.2 s)
        result = index.search('automobile', min_score=0.2)
        assert paths(result) == ['memory/garage.md']
        data = result.to_dict()
        assert (data['provider'], data['model'], data['mode']) == ('test-hash', 'hash-v1', 'hybrid')
        assert 'vectorMs' in data['debug'] and 'embedMs' in data['debug']
        assert paths(index.search('physician appointment'))[0] == 'memory/health.md'


def test_hybrid_relaxed_pass_keeps_strong_keyword_hits(tmp_path):
    class Orthogonal(HashEmbedder):
        def embed_query(self, text):  # a query vector unlike every chunk
            vec = [0.0] * self.dims
            vec[0] = 1.0
            return vec

        def embed_documents(self, texts):
            import numpy as np

            out = np.zeros((len(texts), self.dims), dtype=np.float32)
            out[:, 1] = 1.0
            return out

    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'ERR_POOL_TIMEOUT ERR_POOL_TIMEOUT ERR_POOL_TIMEOUT raised by the pool')
    write(ws / 'memory' / 'x.md', 'something else entirely')
    with open_index(tmp_path, provider=Orthogonal()) as index:
        result = index.search('ERR_POOL_TIMEOUT', min_score=0.5)
        assert paths(result) == ['MEMORY.md']  # 0.3 x keyword score < 0.5, but the keyword score itself passes
        assert result.debug['relaxed'] is True
        assert result.results[0].score <= 0.3  # a keyword-only hit scores at most textWeight


def test_mmr_reorders_near_duplicates(tmp_path, embedder):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'a.md', 'canary deploy checklist: build, push, canary deploy, watch dashboards')
    write(ws / 'memory' / 'b.md', 'canary deploy checklist: build, push, canary deploy, watch dashboards again')
    write(ws / 'memory' / 'c.md', 'canary deploy of the billing service went fine yesterday evening')
    base = {'hybrid': {'mmr': {'enabled': False}}}
    with open_index(tmp_path, provider=embedder, query=base) as index:
        plain = paths(index.search('canary deploy checklist', min_score=0))
    diverse = {'hybrid': {'mmr': {'enabled': True, 'lambda': 0.3}}}
    with open_index(tmp_path, provider=embedder, query=diverse) as index:
        mmr = paths(index.search('canary deploy checklist', min_score=0))
    assert plain[2] == 'memory/c.md'
    assert sorted(mmr) == sorted(plain) and mmr[1] == 'memory/c.md'


def test_provider_failures(tmp_path, ws, embedder):
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()
        embedder.fail = True
        data = index.search('deploy key').to_dict()
        assert data['results'] == [] and data['unavailable'] is True and data['disabled'] is True
        assert 'test-hash' in data['error'] and 'provider unreachable' in data['error']
        assert data['action']
        write(ws / 'memory' / 'new.md', 'fresh note')
        with pytest.raises(memsift.ProviderError, match='provider unreachable'):
            index.sync()
        embedder.fail = False
        assert paths(index.search('deploy key'))[0] == 'MEMORY.md'

    class WrongDims(HashEmbedder):
        def embed_documents(self, texts):
            return [[1.0, 2.0]] * len(texts)

    with open_index(tmp_path / 'other', ws=ws, provider=WrongDims()) as index:
        with pytest.raises(memsift.ProviderError, match='dimension 2, expected 64'):
            index.sync()
    with pytest.raises(memsift.InvalidInputError, match='not an embedding provider'):
        open_index(tmp_path, provider=object())


def test_concurrent_searches_during_syncs(tmp_path, ws):
    errors = []
    with open_index(tmp_path) as index:
        index.sync()

        def searcher():
            try:
                for _ in range(40):
                    assert 'MEMORY.md' in paths(index.search('deploy key vault', min_score=0))
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=searcher) for _ in range(4)]
        for thread in threads:
            thread.start()
        for i in range(20):
            write(ws / 'memory' / f'churn-{i}.md', f'churn note {i}')
            index.sync()
        for thread in threads:
            thread.join()
    assert errors == []


def test_a_dirty_index_syncs_in_the_background_at_search_time(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
        write(ws / 'memory' / 'late.md', 'zeppelin hangar inventory')
        index.mark_dirty()
        index.search('zeppelin')
        index._sync_thread.join(10)
        assert paths(index.search('zeppelin')) == ['memory/late.md']
        assert not index.dirty


def test_on_search_false_does_not_sync(tmp_path, ws):
    with open_index(tmp_path, sync={'onSearch': False}) as index:
        index.sync()
        write(ws / 'memory' / 'late.md', 'zeppelin hangar inventory')
        index.mark_dirty()
        assert index.search('zeppelin').results == []


# ---------------------------------------------------------------- get and status


def test_get_returns_bounded_excerpts_of_indexed_files_only(tmp_path, ws):
    write(ws / 'notes' / 'private.md', 'not memory')
    with open_index(tmp_path) as index:
        index.sync()
        whole = index.get('MEMORY.md')
        assert whole['text'] == (ws / 'MEMORY.md').read_text() and whole['from'] == 1
        part = index.get('MEMORY.md', from_line=3, lines=2)
        assert part['text'] == 'Prefers tabs over spaces.\nThe deploy key lives in the team vault.'
        assert (part['from'], part['lines'], part['totalLines']) == (3, 2, 5)
        for outside in ('notes/private.md', '../ws/MEMORY.md', '/etc/passwd', 'memory/../MEMORY.md', ''):
            with pytest.raises(memsift.InvalidInputError, match='not an indexed memory file'):
                index.get(outside)
        with pytest.raises(memsift.InvalidInputError, match='from_line'):
            index.get('MEMORY.md', from_line=0)
        write(ws / 'memory' / 'big.md', 'x' * 100 + '\n' + ('line\n' * 10_000))
        index.sync()
        big = index.get('memory/big.md')
        assert big['truncated'] is True and len(big['text']) == memsift.index.reader.MAX_GET_CHARS
        rest = index.get('memory/big.md', from_line=big['nextFrom'])
        assert rest['from'] == big['nextFrom']
        (ws / 'memory' / 'big.md').unlink()
        (ws / 'memory' / 'big.md').symlink_to('/etc/passwd')  # swapped for a symlink after indexing
        with pytest.raises(memsift.InvalidInputError, match='no longer a regular file'):
            index.get('memory/big.md')


def test_status_reports_openclaw_fields(tmp_path, ws, embedder):
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()
        status = index.status(deep=True)
    for key in (
        'backend',
        'provider',
        'model',
        'requestedProvider',
        'files',
        'chunks',
        'dirty',
        'workspaceDir',
        'dbPath',
        'extraPaths',
        'sources',
        'sourceCounts',
        'cache',
        'fts',
        'vector',
        'skipped',
    ):
        assert key in status
    assert (status['files'], status['chunks']) == (3, 3)
    assert status['sourceCounts'] == [{'source': 'memory', 'files': 3, 'chunks': 3}]
    assert status['vector'] == {
        'enabled': True,
        'available': True,
        'dims': 64,
        'vectors': 3,
        'ann': False,
        'probe': 'ok',
    }
    assert status['issues'] == [] and status['dirty'] is False
    json.dumps(status)


def test_closed_index_refuses_calls(tmp_path, ws):
    index = open_index(tmp_path)
    index.close()
    index.close()
    with pytest.raises(memsift.MemsiftError, match='closed'):
        index.search('x')


def test_extra_paths_are_indexed(tmp_path, ws):
    shared = tmp_path / 'shared-notes'
    write(shared / 'team.md', 'oncall rotation: alice then bob')
    with open_index(tmp_path, extraPaths=[str(shared)]) as index:
        assert paths(index.search('oncall rotation'))[0].endswith('shared-notes/team.md')


def test_config_object_and_dataclass_replace(tmp_path, ws):
    config = memsift.load_config(memory_config(tmp_path))
    config = dataclasses.replace(config, chunking=dataclasses.replace(config.chunking, tokens=50, overlap=0))
    with MemoryIndex(ws, config) as index:
        index.sync()
        assert index.status()['identity']['chunkTokens'] == 50


def test_watch_reindexes_changed_files_after_the_debounce(tmp_path, ws):
    with open_index(tmp_path, sync={'watchDebounceMs': 200}) as index:
        index.sync()
        index.start_watching()
        write(ws / 'memory' / 'watched.md', 'quokka sightings on rottnest island')
        (ws / 'memory' / '2026-11-20.md').unlink()
        deadline = time.time() + 15
        while time.time() < deadline and not (
            paths(index.search('quokka')) and not index.search('ERR_CONN_RESET').results
        ):
            time.sleep(0.1)
        assert paths(index.search('quokka')) == ['memory/watched.md']
        assert index.search('ERR_CONN_RESET').results == []
        write(ws / 'ignored' / 'x.md', 'quokka')  # outside memory roots: not indexed
        write(ws / 'memory' / 'new-dir' / 'deep.md', 'wombat burrow')  # a folder created after start
        deadline = time.time() + 15
        while time.time() < deadline and not paths(index.search('wombat')):
            time.sleep(0.1)
        assert paths(index.search('wombat')) == ['memory/new-dir/deep.md']
        assert paths(index.search('quokka')) == ['memory/watched.md']
        assert index.status()['watching'] is True
        index.stop_watching()


def test_interval_sync_without_file_watching(tmp_path, ws):
    config = memsift.load_config(memory_config(tmp_path, sync={'watch': False}))
    config = dataclasses.replace(config, sync=dataclasses.replace(config.sync, interval_minutes=0.005))  # 0.3 s
    with MemoryIndex(ws, config) as index:
        index.sync()
        index.start_watching()
        assert index._watcher._observer is None  # no file watching: only the period
        write(ws / 'memory' / 'periodic.md', 'narwhal migration')
        deadline = time.time() + 15
        while time.time() < deadline and not paths(index.search('narwhal', min_score=0)):
            time.sleep(0.1)
        assert paths(index.search('narwhal', min_score=0)) == ['memory/periodic.md']


def test_disabled_memory_search_says_so(tmp_path, ws):
    with open_index(tmp_path, enabled=False) as index:
        data = index.search('deploy key').to_dict()
    assert data['disabled'] is True and data['results'] == [] and 'disabled' in data['error']


def test_vector_only_mode_when_hybrid_is_off(tmp_path, embedder):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'garage.md', 'The car needs new tyres before winter.')
    write(ws / 'memory' / 'cars.md', 'automobile automobile automobile')
    with open_index(tmp_path, provider=embedder, query={'hybrid': {'enabled': False}}) as index:
        result = index.search('automobile', min_score=0)
        assert result.mode == 'vector-only' and 'keywordMs' not in result.debug
        assert paths(result)[0] == 'memory/cars.md'
        assert result.results[0].score == pytest.approx(1.0, abs=1e-5)


def test_embedding_cache_means_unchanged_text_is_never_re_embedded(tmp_path, ws, embedder):
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()
        first = embedder.calls
        assert first == 3 and index.status()['cache']['entries'] == 3
        index.sync(force=True)  # a full reindex: every chunk comes from the cache
        assert embedder.calls == first and index.cache_hits == 3
        write(ws / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nA new line about retries.\n')
        index.sync()
        assert embedder.calls == first + 1  # only the edited file's chunk
    with open_index(tmp_path, provider=HashEmbedder(model='hash-v2')) as index:
        index.sync()  # another model: nothing reusable, and the old model's rows stay
        assert index.cache_misses == 3 and index.status()['cache']['entries'] == 7
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()  # back to the first model: all cached, the index serves again without a provider call
        assert embedder.calls == first + 1 and index.status()['vector']['vectors'] == 3
    with open_index(tmp_path, provider=embedder, cache={'maxEntries': 2}) as index:
        index.sync(force=True)
        assert index.status()['cache']['entries'] == 2
