"""The memory_search pipeline end to end on temporary workspaces: the result shape, citations, snippets, CJK, hostile
queries, limits, temporal decay, path tiers, hybrid and relaxed passes, MMR, provider failures, background syncs."""

import json
import threading

import pytest
from conftest import HashEmbedder, memory_config, open_index, paths, write

import memsift
from memsift import MemoryIndex

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
    config['memory'] = {'citations': 'off'}
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
    decay = {'hybrid': {'temporalDecay': {'enabled': True, 'halfLifeDays': 30}}}
    with open_index(tmp_path, query={**decay, 'dedupe': False}) as index:  # one text in four files: keep each copy
        scores = {h.path: h.score for h in index.search('rollout checklist', max_results=10, min_score=0).results}
    with open_index(tmp_path, query={'dedupe': False}) as index:
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
        index.freshness.sync_thread.join(10)
        assert paths(index.search('zeppelin')) == ['memory/late.md']
        assert not index.dirty


def test_a_search_answers_from_the_index_while_a_long_sync_check_runs(tmp_path, ws, monkeypatch):
    from memsift.index import freshness, sync

    with open_index(tmp_path) as index:
        index.sync()
    release = threading.Event()
    diff = sync.StampCheck.diff

    def held_check(self, *args):  # a check over a large workspace: it ends when the test says so
        release.wait(30)
        return diff(self, *args)

    monkeypatch.setattr(sync.StampCheck, 'diff', held_check)
    monkeypatch.setattr(freshness, 'CHECK_S_PER_FILE', 1.0)  # as if each file cost a second to check
    with open_index(tmp_path) as index:  # a new process: the workspace may have changed since the last one
        result = index.search('ERR_CONN_RESET')
        assert paths(result) == ['memory/2026-11-20.md']  # from the committed index
        assert result.debug['syncing'] is True and result.debug['syncWaitMs'] < 1000
        write(ws / 'memory' / 'late.md', 'zeppelin hangar inventory')  # lands while the check runs
        index.mark_dirty()  # as the watcher would
        again = index.search('zeppelin')
        assert again.results == [] and again.debug['syncing'] is True  # the check's sync is not waited for
        release.set()
        index.freshness.sync_thread.join(10)
        found = index.search('zeppelin')  # the mark made during the check starts one more sync
        index.freshness.sync_thread.join(10)
        found = found if found.results else index.search('zeppelin')
        assert paths(found) == ['memory/late.md'] and not index.dirty
        assert 'syncing' not in index.search('zeppelin').debug


def test_a_search_waits_for_a_sync_as_long_as_the_last_check_took(tmp_path, ws):
    from memsift.index.freshness import SEARCH_SYNC_BUDGET_S, SEARCH_SYNC_WAIT_S

    with open_index(tmp_path) as index:
        index.sync()
    with open_index(tmp_path) as index:
        fresh = index.freshness
        assert fresh.check_s is None and fresh._sync_wait(True) == SEARCH_SYNC_BUDGET_S  # a few files: quick
        write(ws / 'memory' / 'late.md', 'zeppelin hangar inventory')
        index.search('zeppelin')
        fresh.sync_thread.join(10)
        assert paths(index.search('zeppelin')) == ['memory/late.md']
        assert fresh.check_s is not None and fresh._sync_wait(True) == SEARCH_SYNC_BUDGET_S
        fresh.check_s = 0.2  # as a check over 59k files measures
        assert fresh._sync_wait(True) == SEARCH_SYNC_WAIT_S
        fresh.check_s = 2.0  # over 584k
        assert fresh._sync_wait(True) == SEARCH_SYNC_WAIT_S


def test_on_search_false_does_not_sync(tmp_path, ws):
    with open_index(tmp_path, sync={'onSearch': False}) as index:
        index.sync()
        write(ws / 'memory' / 'late.md', 'zeppelin hangar inventory')
        index.mark_dirty()
        assert index.search('zeppelin').results == []


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


def test_snippets_mask_secrets_unless_configured_off(tmp_path):
    write(tmp_path / 'ws' / 'MEMORY.md', 'Staging deploy: OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv\n')
    with open_index(tmp_path) as index:
        [hit] = index.search('staging deploy', min_score=0).results
        assert '4f9aXb81QzLmN0' not in hit.snippet and 'OPENAI_API_KEY=sk-pro\u2026t7Uv' in hit.snippet
        assert 'sk-proj-4f9aXb81QzLmN0pRt7Uv' in index.get('MEMORY.md')['text']  # memory_get stays verbatim
    with open_index(tmp_path, query={'redactSnippets': False}) as index:
        [hit] = index.search('staging deploy', min_score=0).results
        assert 'sk-proj-4f9aXb81QzLmN0pRt7Uv' in hit.snippet
