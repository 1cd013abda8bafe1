"""memsift.integrations.llamaindex: MemsiftRetriever on a real llama_index.core, over a real keyword-only workspace."""

import asyncio
import time

import pytest

pytest.importorskip('llama_index.core', reason='LlamaIndex is optional: pip install "memsift[llamaindex]"')

from conftest import HashEmbedder, memory_config, write  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.response_synthesizers.no_text import NoText  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

import memsift  # noqa: E402
from memsift.integrations.llamaindex import MemsiftRetriever  # noqa: E402

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


def test_it_is_a_llamaindex_retriever_returning_whole_chunks_with_metadata(index):
    retriever = MemsiftRetriever(index, min_score=0)
    assert isinstance(retriever, BaseRetriever)
    [first, *_] = retriever.retrieve('where does the deploy key live?')
    assert isinstance(first, NodeWithScore) and isinstance(first.node, TextNode)
    assert first.node.get_content() == '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n'
    assert first.node.node_id == 'MEMORY.md#L1-L5'
    assert first.node.metadata == {
        'path': 'MEMORY.md',
        'startLine': 1,
        'endLine': 5,
        'score': first.score,
        'source': 'memory',
        'citation': 'MEMORY.md#L1-L5',
    }
    assert 0 < first.score <= 1
    [cjk] = MemsiftRetriever(index, min_score=0, max_results=1).retrieve(QueryBundle('会議 火曜日'))
    assert cjk.node.metadata['path'] == 'memory/cjk.md' and '火曜日' in cjk.node.get_content()


def test_nodes_follow_the_ranking_and_long_chunks_come_whole(index):
    nodes = MemsiftRetriever(index, min_score=0, max_results=10).retrieve('walrus protocol backup tapes')
    expected = index.search('walrus protocol backup tapes', 10, 0).results
    assert [(n.node.metadata['path'], n.node.metadata['startLine'], n.score) for n in nodes] == [
        (hit.path, hit.start_line, hit.score) for hit in expected
    ]
    walrus = [n.node.get_content() for n in nodes if n.node.metadata['path'] == 'memory/walrus.md']
    assert len(walrus) >= 2 and all(len(text) > 700 for text in walrus)
    assert 'DB_PASSWORD=***' in ''.join(walrus) and 'hunter2' not in ''.join(walrus)


def test_options_and_the_calling_session(index):
    assert len(MemsiftRetriever(index, min_score=0, max_results=1).retrieve('walrus')) == 1
    assert MemsiftRetriever(index).retrieve('no such words anywhere') == []
    group = MemsiftRetriever(index, min_score=0, session_key='agent:main:telegram:group:7')
    assert group.retrieve('deploy key')[0].node.metadata['citation'] is None


def test_async_matches_sync_and_leaves_the_loop_free(tmp_path):
    class SlowQueries(HashEmbedder):
        def embed_query(self, text):
            time.sleep(0.5)
            return super().embed_query(text)

    with memsift.MemoryIndex(workspace(tmp_path), memory_config(tmp_path), provider=SlowQueries()) as index:
        index.sync()
        retriever = MemsiftRetriever(index, min_score=0, max_results=3)

        async def run():
            ticks = 0

            async def tick():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            nodes = await retriever.aretrieve('deploy key vault')
            ticker.cancel()
            return nodes, ticks

        nodes, ticks = asyncio.run(run())
        assert ticks >= 10
        assert [(n.node.node_id, n.score) for n in nodes] == [
            (n.node.node_id, n.score) for n in retriever.retrieve('deploy key vault')
        ]
        assert nodes[0].node.metadata['path'] == 'MEMORY.md'


@pytest.mark.parametrize('query', ['', '   ', '\x00', '\ud800'])
def test_empty_and_unsearchable_queries_find_nothing(index, query):
    retriever = MemsiftRetriever(index, min_score=0)
    assert retriever.retrieve(query) == []
    assert asyncio.run(retriever.aretrieve(query)) == []


@pytest.mark.parametrize('bad', [0, -1, True, 2.5])
def test_a_bad_max_results_is_refused_when_made(index, bad):
    with pytest.raises(memsift.InvalidInputError, match='max_results must be a positive integer'):
        MemsiftRetriever(index, max_results=bad)


def test_other_bad_arguments(tmp_path, index):
    with pytest.raises(memsift.InvalidInputError, match='min_score'):
        MemsiftRetriever(index, min_score='high')
    with pytest.raises(memsift.InvalidInputError, match='tools.index'):
        MemsiftRetriever(memsift.MemoryTools(index))
    disabled = tmp_path / 'off'
    config = memory_config(disabled, provider='none', enabled=False)
    with memsift.MemoryIndex(workspace(disabled), config) as off:
        with pytest.raises(memsift.ConfigError, match='disabled'):
            MemsiftRetriever(off).retrieve('deploy key')


def test_it_serves_a_query_engine(index):
    # No model call: the 'no_text' synthesizer (given LlamaIndex's offline MockLLM) returns the retrieved nodes.
    synthesizer = NoText(llm=MockLLM())
    engine = RetrieverQueryEngine(MemsiftRetriever(index, min_score=0, max_results=2), synthesizer)
    response = engine.query('ERR_CONN_RESET backoff')
    assert response.source_nodes[0].node.metadata['citation'] == 'memory/2026-11-20.md#L1-L4'


def test_filters(tmp_path):
    root = workspace(tmp_path)
    write(root / 'memory' / '2026-11-03.md', 'Deploy: the canary goes out first.\n')
    write(root / 'memory' / 'projects' / 'plan.md', '---\ntags: [ops, Budget]\n---\nDeploy tooling budget.\n')
    with memsift.MemoryIndex(root, memory_config(tmp_path, provider='none')) as index:
        index.sync()

        def found(**options):
            nodes = MemsiftRetriever(index, min_score=0, **options).retrieve('deploy')
            return sorted(n.node.metadata['path'] for n in nodes)

        assert found() == ['MEMORY.md', 'memory/2026-11-03.md', 'memory/projects/plan.md']
        assert found(until='2026-11-30') == found(since='2026-11-01', until='2026-11-03') == ['memory/2026-11-03.md']
        assert found(paths=['memory/projects', 'MEMORY.md']) == ['MEMORY.md', 'memory/projects/plan.md']
        assert found(tags=['#OPS']) == found(tags=['budget'], since='30d') == ['memory/projects/plan.md']
        retriever = MemsiftRetriever(index, min_score=0, paths=('memory/2026-*.md',))
        assert [n.node.metadata['path'] for n in asyncio.run(retriever.aretrieve('deploy'))] == ['memory/2026-11-03.md']


@pytest.mark.parametrize(
    ('options', 'named'),
    [
        ({'since': 'soonish'}, 'since'),
        ({'until': 20261101}, 'until'),
        ({'since': '2026-11-10', 'until': '2026-11-01'}, 'since'),
        ({'paths': 'memory/*.md'}, 'paths'),
        ({'tags': 'ops'}, 'tags'),
    ],
)
def test_a_bad_filter_is_refused_when_made(index, options, named):
    with pytest.raises(memsift.InvalidInputError, match=named):
        MemsiftRetriever(index, **options)
