"""Behaviour of ``memsift.Bm25Index``: ranking, staging, persistence, filters, errors and thread safety."""

import gc
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import memsift

DOCS = [
    (1, 'MEMORY.md', 'memory', 'The user prefers Neovim and concise answers with code first.'),
    (2, 'memory/2026-11-20.md', 'memory', 'sync-service v2.3.1 fixed ERR_CONN_RESET with exponential backoff.'),
    (3, 'memory/2026-11-28.md', 'memory', 'BBDown视频下载工具的配置：默认画质 1080P，字幕下载为 srt。'),
    (4, 'memory/projects/cjk-notes.md', 'memory', '日本語のドキュメントは田中さんが管理している。'),
    (5, 'memory/projects/cjk-notes.md', 'memory', '회의 일정은 매주 목요일 오후 3시입니다.'),
    (6, 'sessions/abc.jsonl', 'sessions', 'We deployed the canary and rolled back the release after errors.'),
    (7, 'sessions/def.jsonl', 'sessions', 'The snake_case_name variable holds the config path src/lib.rs.'),
    (8, 'memory/topics/tooling.md', 'memory', 'Deploy with podman; the canary deploy runs migrations first.'),
]


def add_docs(index, docs):
    ids, paths, sources, texts = (list(column) for column in zip(*docs))
    index.add(ids, paths, sources, texts)


def build(docs=DOCS, path=None, **kwargs):
    index = memsift.Bm25Index(path, **kwargs)
    add_docs(index, docs)
    index.commit()
    return index


def ids_of(results):
    return [doc_id for doc_id, _ in results]


@pytest.fixture
def index():
    return build()


# ---------------------------------------------------------------- searching


def test_search_returns_id_score_pairs_best_first(index):
    results = index.search('canary deploy')
    assert results, 'expected matches'
    for doc_id, score in results:
        assert isinstance(doc_id, int)
        assert isinstance(score, float)
        assert score > 0
    scores = [score for _, score in results]
    assert scores == sorted(scores, reverse=True)
    assert set(ids_of(results)) == {6, 8}
    assert ids_of(results)[0] == 8


def test_search_is_or_of_query_terms_and_docs_matching_more_terms_rank_first():
    index = build(
        [(1, 'a.md', 'memory', 'alpha apples'), (2, 'b.md', 'memory', 'alpha beta'), (3, 'c.md', 'memory', 'gamma')]
    )
    results = index.search('alpha beta')
    assert ids_of(results) == [2, 1]


def test_search_with_no_matching_term_is_empty(index):
    assert index.search('kubernetes') == []


def test_search_uses_the_analyzer_so_stems_and_case_match(index):
    assert ids_of(index.search('PREFERRING')) == [1]
    assert set(ids_of(index.search('Deployed'))) == {6, 8}


@pytest.mark.parametrize('query', ['视频下载', '下载 配置', '载工', '画质', '视'])
def test_chinese_queries_find_the_chinese_doc(index, query):
    assert ids_of(index.search(query))[0] == 3


def test_japanese_and_korean_queries_find_their_docs(index):
    assert ids_of(index.search('管理'))[0] == 4
    assert ids_of(index.search('田中'))[0] == 4
    assert ids_of(index.search('회의 일정'))[0] == 5


def test_identifier_parts_are_searchable(index):
    assert ids_of(index.search('conn')) == [2]
    assert ids_of(index.search('reset')) == [2]
    assert ids_of(index.search('ERR_CONN_RESET')) == [2]
    assert ids_of(index.search('v2.3.1'))[0] == 2
    assert ids_of(index.search('lib.rs')) == [7]


def test_exact_identifier_ranks_the_exact_doc_first():
    index = build(
        [
            (1, 'a.md', 'memory', 'a snake in the case of a name'),
            (2, 'b.md', 'memory', 'the snake_case_name variable'),
            (3, 'c.md', 'memory', 'snake_case_other is different'),
        ]
    )
    results = index.search('snake_case_name')
    assert ids_of(results)[0] == 2
    assert set(ids_of(results)) == {1, 2, 3}


HOSTILE_QUERIES = [
    '"',
    'a:b',
    '(x',
    '-foo',
    '*',
    'foo AND OR NOT',
    '\\',
    '',
    ' ',
    ')',
    '[1 TO',
    '~2',
    '^',
    'text:foo',
    'x' * 100_000,
    'foo ' * 25_000,
    '🙂\x00\ufffd',
]


@pytest.mark.parametrize('query', HOSTILE_QUERIES, ids=lambda q: repr(q[:20]))
def test_hostile_queries_never_raise(index, query):
    results = index.search(query)
    assert isinstance(results, list)
    assert all(isinstance(doc_id, int) and score > 0 for doc_id, score in results)
    assert isinstance(index.search_paths(query), list)
    assert isinstance(index.search(query, sources=['memory']), list)


SYNTAX_QUERIES = ['"foo', '(foo', 'foo)', 'foo*', 'foo\\', 'foo AND OR NOT', '-foo', 'text:foo', 'foo^2', 'foo~1']


@pytest.mark.parametrize('query', SYNTAX_QUERIES)
def test_query_syntax_characters_are_plain_text(query):
    index = build([(1, 'a.md', 'memory', 'foo bar'), (2, 'b.md', 'memory', 'baz qux')])
    assert ids_of(index.search(query)) == [1]


def test_k_zero_returns_nothing(index):
    assert index.search('canary', k=0) == []
    assert index.search_paths('memory', k=0) == []


def test_k_limits_results_and_large_k_returns_all_matches(index):
    assert len(index.search('deploy canary sync', k=1)) == 1
    all_matches = index.search('deploy canary sync', k=1000)
    assert set(ids_of(all_matches)) == {2, 6, 8}


def test_source_filter(index):
    assert ids_of(index.search('canary deploy', sources=['sessions'])) == [6]
    assert ids_of(index.search('canary deploy', sources=['memory'])) == [8]
    assert set(ids_of(index.search('canary deploy', sources=['memory', 'sessions']))) == {6, 8}
    assert index.search('canary deploy', sources=['nowhere']) == []


def test_search_paths_finds_docs_by_path(index):
    assert ids_of(index.search_paths('2026-11-20'))[0] == 2
    assert set(ids_of(index.search_paths('notes'))) == {4, 5}
    assert ids_of(index.search_paths('tooling.md'))[0] == 8
    assert set(ids_of(index.search_paths('sessions'))) == {6, 7}


def test_search_paths_does_not_search_text(index):
    assert index.search_paths('canary') == []


def test_search_does_not_search_paths(index):
    assert index.search('tooling') == []


# ---------------------------------------------------------------- staging


def test_uncommitted_adds_are_invisible_until_commit():
    index = memsift.Bm25Index()
    add_docs(index, DOCS[:2])
    assert index.num_docs == 0
    assert index.search('conn') == []
    index.commit()
    assert index.num_docs == 2
    assert ids_of(index.search('conn')) == [2]


def test_delete_ids_then_commit_removes_docs(index):
    index.delete_ids([2, 6])
    assert index.num_docs == len(DOCS)
    assert ids_of(index.search('conn')) == [2]
    index.commit()
    assert index.num_docs == len(DOCS) - 2
    assert index.search('conn') == []
    assert ids_of(index.search('canary')) == [8]


def test_delete_path_then_commit_removes_every_chunk_of_that_path(index):
    index.delete_path('memory/projects/cjk-notes.md')
    index.commit()
    assert index.num_docs == len(DOCS) - 2
    assert index.search('田中') == []
    assert index.search('회의') == []
    assert ids_of(index.search('视频'))[0] == 3


def test_delete_path_matches_the_exact_path_only(index):
    index.delete_path('memory/2026-11-2')
    index.delete_path('MEMORY')
    index.commit()
    assert index.num_docs == len(DOCS)


def test_clear_then_commit_removes_everything(index):
    index.clear()
    index.commit()
    assert index.num_docs == 0
    assert index.search('canary') == []
    add_docs(index, DOCS[:1])
    index.commit()
    assert index.num_docs == 1


def test_rollback_drops_staged_changes(index):
    add_docs(index, [(100, 'new.md', 'memory', 'brand new kubernetes note')])
    index.delete_ids([2])
    index.rollback()
    index.commit()
    assert index.num_docs == len(DOCS)
    assert index.search('kubernetes') == []
    assert ids_of(index.search('conn')) == [2]


def test_add_rejects_columns_of_different_lengths():
    index = memsift.Bm25Index()
    with pytest.raises(memsift.InvalidInputError):
        index.add([1, 2], ['a.md'], ['memory'], ['text'])


def test_add_rejects_negative_ids():
    index = memsift.Bm25Index()
    with pytest.raises(memsift.InvalidInputError):
        index.add([-1], ['a.md'], ['memory'], ['text'])


# ---------------------------------------------------------------- persistence


def test_in_ram_index_properties():
    index = memsift.Bm25Index()
    assert index.path is None
    assert index.stem is True
    assert index.num_docs == 0
    assert index.generation is None
    assert memsift.Bm25Index(stem=False).stem is False


def test_generation_and_documents_survive_reopening(tmp_path):
    path = str(tmp_path / 'idx')
    index = build(path=path)
    assert index.path == path
    assert index.generation is None
    index.commit(generation=7)
    assert index.generation == 7
    queries = ['canary deploy', '视频下载', 'ERR_CONN_RESET', '회의']
    before = [index.search(q) for q in queries]
    paths_before = index.search_paths('2026-11-20')
    del index
    gc.collect()

    reopened = memsift.Bm25Index(path)
    assert reopened.generation == 7
    assert reopened.num_docs == len(DOCS)
    assert [reopened.search(q) for q in queries] == before
    assert reopened.search_paths('2026-11-20') == paths_before


def test_reload_picks_up_commits_made_by_another_handle(tmp_path):
    path = str(tmp_path / 'idx')
    writer = build(DOCS[:2], path=path)
    reader = memsift.Bm25Index(path)
    assert reader.num_docs == 2
    add_docs(writer, DOCS[2:4])
    writer.commit(generation=3)
    reader.reload()
    assert reader.num_docs == 4
    assert reader.generation == 3
    assert ids_of(reader.search('视频下载'))[0] == 3


def test_reopening_with_different_stem_setting_raises_naming_the_path(tmp_path):
    path = str(tmp_path / 'idx')
    index = build(path=path, stem=True)
    del index
    gc.collect()
    with pytest.raises(memsift.SearchIndexError, match='idx') as excinfo:
        memsift.Bm25Index(path, stem=False)
    assert path in str(excinfo.value)


def test_path_that_is_a_regular_file_raises_naming_it(tmp_path):
    file_path = tmp_path / 'not-a-dir.txt'
    file_path.write_text('hello')
    with pytest.raises(memsift.SearchIndexError) as excinfo:
        memsift.Bm25Index(str(file_path))
    assert str(file_path) in str(excinfo.value)
    assert isinstance(excinfo.value, memsift.MemsiftError)


# ---------------------------------------------------------------- concurrency


def test_concurrent_searches_while_another_thread_adds_and_commits():
    index = build([(i, f'memory/base-{i}.md', 'memory', f'base note {i} about deploy canary') for i in range(200)])
    batches, batch_size = 10, 20
    queries = ['deploy', 'canary note', 'ERR_CONN_RESET', '视频下载', 'fresh', 'base', '"(', 'note 7']
    errors = []

    def writer():
        try:
            for b in range(batches):
                start = 1000 + b * batch_size
                ids = range(start, start + batch_size)
                docs = [(i, f'sessions/s{i}.jsonl', 'sessions', f'fresh session {i} deploy') for i in ids]
                add_docs(index, docs)
                index.commit(generation=b)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def reader(n):
        query = queries[n % len(queries)]
        if n % 3 == 0:
            return index.search_paths('base', k=5)
        if n % 3 == 1:
            return index.search(query, k=10, sources=['sessions'])
        return index.search(query, k=10)

    writer_thread = threading.Thread(target=writer)
    writer_thread.start()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(reader, range(200)))
    writer_thread.join()

    assert errors == []
    assert len(results) == 200
    assert all(isinstance(r, list) for r in results)
    assert index.num_docs == 200 + batches * batch_size
    assert index.generation == batches - 1
    assert len(index.search('fresh', k=1000)) == batches * batch_size
    assert len(index.search('base', k=1000)) == 200


def test_a_query_term_counts_as_often_as_the_query_repeats_it():
    """BM25 sums over the query's terms: a long query that says a word twice means it twice (bm25s does the same)."""
    index = memsift.Bm25Index()
    index.add([1, 2, 3], ['a.md', 'b.md', 'c.md'], ['memory'] * 3, ['alpha gamma', 'beta gamma', 'delta gamma'])
    index.commit(generation=1)
    once = dict(index.search('alpha beta', k=3))
    twice = dict(index.search('alpha beta beta', k=3))
    assert once[1] == pytest.approx(once[2])
    assert twice[2] == pytest.approx(2 * twice[1]) and twice[1] == pytest.approx(once[1])
