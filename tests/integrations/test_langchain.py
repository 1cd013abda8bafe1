"""memsift.integrations.langchain: MemsiftRetriever on a real langchain_core, over a real keyword-only workspace."""

import asyncio
import time

import pytest

pytest.importorskip('langchain_core', reason='LangChain is optional: pip install "memsift[langchain]"')

from conftest import HashEmbedder, memory_config, write  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402

import memsift  # noqa: E402
from memsift.integrations.langchain import MemsiftRetriever  # noqa: E402

WALRUS = [f'Step {i}: the walrus protocol rotates backup tapes every {i + 1} days.' for i in range(40)]


def workspace(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff.\n')
    write(
        root / 'memory' / 'walrus.md',
        '# Walrus\n\n' + '\n'.join(WALRUS[:20] + ['DB_PASSWORD=hunter2hunter2'] + WALRUS[20:]),
    )
    write(root / 'memory' / 'cjk.md', '视频下载工具 BBDown 配置\n東京オフィスの会議は火曜日\n')
    return root


@pytest.fixture
def index(tmp_path):
    with memsift.MemoryIndex(workspace(tmp_path), memory_config(tmp_path, provider='none')) as index:
        index.sync()
        yield index


def test_it_is_a_langchain_retriever_returning_whole_chunks_with_metadata(index):
    retriever = MemsiftRetriever(index=index, min_score=0)
    assert isinstance(retriever, BaseRetriever)
    [doc, *_] = retriever.invoke('where does the deploy key live?')
    assert isinstance(doc, Document)
    assert doc.page_content == '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n'
    assert doc.id == 'MEMORY.md#L1-L5'
    assert doc.metadata == {
        'path': 'MEMORY.md',
        'startLine': 1,
        'endLine': 5,
        'score': doc.metadata['score'],
        'source': 'memory',
        'citation': 'MEMORY.md#L1-L5',
    }
    assert 0 < doc.metadata['score'] <= 1
    [cjk] = retriever.invoke('会議 火曜日', max_results=1)
    assert (cjk.metadata['path'], cjk.page_content) == (
        'memory/cjk.md',
        '视频下载工具 BBDown 配置\n東京オフィスの会議は火曜日\n',
    )


def test_documents_follow_the_ranking_and_long_chunks_come_whole(index):
    retriever = MemsiftRetriever(index=index, min_score=0, max_results=10)
    docs = retriever.invoke('walrus protocol backup tapes')
    expected = index.search('walrus protocol backup tapes', 10, 0).results
    assert [(d.metadata['path'], d.metadata['startLine'], d.metadata['score']) for d in docs] == [
        (hit.path, hit.start_line, hit.score) for hit in expected
    ]
    walrus = [d for d in docs if d.metadata['path'] == 'memory/walrus.md']
    assert len(walrus) >= 2 and all(len(d.page_content) > 700 for d in walrus)
    assert all(d.page_content.startswith(hit.snippet) for d, hit in zip(docs, expected))
    text = ''.join(d.page_content for d in walrus)
    assert 'DB_PASSWORD=***' in text and 'hunter2' not in text  # masked as the snippets are


def test_options_per_retriever_and_per_call(index):
    assert len(MemsiftRetriever(index=index, min_score=0, max_results=1).invoke('walrus')) == 1
    assert len(MemsiftRetriever(index=index, min_score=0, max_results=1).invoke('walrus', max_results=2)) == 2
    assert MemsiftRetriever(index=index, min_score=1).invoke('walrus', min_score=0)  # per call wins
    assert MemsiftRetriever(index=index).invoke('no such words anywhere') == []


def test_citations_follow_the_calling_session(index):
    group = MemsiftRetriever(index=index, min_score=0, session_key='agent:main:telegram:group:7')
    assert group.invoke('deploy key')[0].metadata['citation'] is None


def test_async_matches_sync_and_leaves_the_loop_free(tmp_path):
    class SlowQueries(HashEmbedder):
        def embed_query(self, text):
            time.sleep(0.5)  # a provider stuck in traffic: only a worker thread keeps the loop turning
            return super().embed_query(text)

    config = memory_config(tmp_path, provider='openai')
    with memsift.MemoryIndex(workspace(tmp_path), config, provider=SlowQueries()) as index:
        index.sync()
        retriever = MemsiftRetriever(index=index, min_score=0, max_results=3)

        async def run():
            ticks = 0

            async def tick():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            docs = await retriever.ainvoke('deploy key vault')
            ticker.cancel()
            return docs, ticks

        docs, ticks = asyncio.run(run())
        assert ticks >= 10
        assert [(d.id, d.page_content) for d in docs] == [
            (d.id, d.page_content) for d in retriever.invoke('deploy key vault')
        ]
        assert docs[0].metadata['path'] == 'MEMORY.md'
        assert asyncio.run(retriever.ainvoke('walrus', max_results=1))[0].metadata['path'] == 'memory/walrus.md'


@pytest.mark.parametrize('query', ['', '   ', '\x00', '\x00\x00 \x00', '\ud800', '\udfff\ud800'])
def test_empty_and_unsearchable_queries_find_nothing(index, query):
    retriever = MemsiftRetriever(index=index, min_score=0)
    assert retriever.invoke(query) == []
    assert asyncio.run(retriever.ainvoke(query)) == []


def test_a_lone_surrogate_beside_words_still_searches(index):
    [doc, *_] = MemsiftRetriever(index=index, min_score=0).invoke('deploy key \ud83d')
    assert doc.metadata['path'] == 'MEMORY.md'


@pytest.mark.parametrize('bad', [0, -1, True, 2.5, '3'])
def test_a_bad_max_results_is_refused_when_made_and_per_call(index, bad):
    with pytest.raises(memsift.InvalidInputError, match='max_results must be a positive integer'):
        MemsiftRetriever(index=index, max_results=bad)
    retriever = MemsiftRetriever(index=index)
    with pytest.raises(memsift.InvalidInputError, match='max_results must be a positive integer'):
        retriever.invoke('walrus', max_results=bad)
    with pytest.raises(memsift.InvalidInputError, match='max_results must be a positive integer'):
        asyncio.run(retriever.ainvoke('walrus', max_results=bad))


def test_other_bad_arguments(index):
    with pytest.raises(memsift.InvalidInputError, match='min_score'):
        MemsiftRetriever(index=index, min_score=float('nan'))
    with pytest.raises(memsift.InvalidInputError, match='tools.index'):
        MemsiftRetriever(index=memsift.MemoryTools(index))
    with pytest.raises(memsift.InvalidInputError, match='query must be a string'):
        MemsiftRetriever(index=index).invoke(42)
    with pytest.raises(TypeError):
        MemsiftRetriever(index=index).invoke('walrus', k=3)  # memsift's names, not a guessed one


def test_a_disabled_memory_search_raises_instead_of_finding_nothing(tmp_path):
    config = memory_config(tmp_path, provider='none', enabled=False)
    with memsift.MemoryIndex(workspace(tmp_path), config) as index:
        with pytest.raises(memsift.ConfigError, match='disabled'):
            MemsiftRetriever(index=index).invoke('deploy key')


def test_it_composes_in_a_chain(index):
    chain = MemsiftRetriever(index=index, min_score=0, max_results=2) | RunnableLambda(
        lambda docs: [d.metadata['citation'] for d in docs]
    )
    assert chain.invoke('ERR_CONN_RESET backoff')[0] == 'memory/2026-11-20.md#L1-L4'


def dated_index(tmp_path):
    """The workspace plus a daily note of 2026-11-03 and a tagged project note, both about deploys."""
    root = workspace(tmp_path)
    write(root / 'memory' / '2026-11-03.md', 'Deploy: the canary goes out first.\n')
    write(root / 'memory' / 'projects' / 'plan.md', '---\ntags: [ops, Budget]\n---\nDeploy tooling budget.\n')
    return memsift.MemoryIndex(root, memory_config(tmp_path, provider='none'))


def found(docs):
    return sorted(doc.metadata['path'] for doc in docs)


def test_filters_per_retriever_and_per_call(tmp_path):
    with dated_index(tmp_path) as index:
        index.sync()
        everything = found(MemsiftRetriever(index=index, min_score=0).invoke('deploy'))
        assert everything == ['MEMORY.md', 'memory/2026-11-03.md', 'memory/projects/plan.md']
        assert found(MemsiftRetriever(index=index, min_score=0, until='2026-11-30').invoke('deploy')) == [
            'memory/2026-11-03.md'
        ]
        assert found(MemsiftRetriever(index=index, min_score=0, tags=['budget']).invoke('deploy')) == [
            'memory/projects/plan.md'
        ]
        projects = MemsiftRetriever(index=index, min_score=0, paths=['memory/projects/**'], since='2026-11-01')
        assert found(projects.invoke('deploy')) == ['memory/projects/plan.md']
        assert found(projects.invoke('deploy', paths=['MEMORY.md', 'memory/2026-*.md'])) == [
            'MEMORY.md',
            'memory/2026-11-03.md',
        ]  # per call wins
        assert found(asyncio.run(projects.ainvoke('deploy', paths=['memory'], until='2026-11-30'))) == [
            'memory/2026-11-03.md'
        ]
        assert found(projects.invoke('deploy', tags=['nothing'])) == []
        assert (projects.since, projects.paths, projects.tags) == ('2026-11-01', ['memory/projects/**'], None)


@pytest.mark.parametrize(
    ('options', 'named'),
    [
        ({'since': 'soonish'}, 'since'),
        ({'until': '2026-02-30'}, 'until'),
        ({'since': '2026-11-10', 'until': '2026-11-01'}, 'since'),
        ({'paths': 'memory/*.md'}, 'paths'),
        ({'paths': ['../outside']}, 'paths'),
        ({'tags': ['']}, 'tags'),
    ],
)
def test_a_bad_filter_is_refused_when_made_and_per_call(index, options, named):
    with pytest.raises(memsift.InvalidInputError, match=named):
        MemsiftRetriever(index=index, **options)
    retriever = MemsiftRetriever(index=index)
    with pytest.raises(memsift.InvalidInputError, match=named):
        retriever.invoke('walrus', **options)
    with pytest.raises(memsift.InvalidInputError, match=named):
        asyncio.run(retriever.ainvoke('walrus', **options))
