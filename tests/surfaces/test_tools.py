"""memsift.tools / memsift.aio: the four agent tools with OpenClaw's result shapes, corpora and deadlines."""

import asyncio
import json
import threading

import pytest
from conftest import HashEmbedder, memory_config, write

import memsift
import memsift.tools
from memsift import MemoryIndex, SessionStore
from memsift.aio import AsyncMemoryTools
from memsift.tools import MemoryTools

MAIN = 'agent:main:main'


def msg(event_id, role, content, ts=1_767_225_600_000):
    return {'type': 'message', 'id': event_id, 'timestamp': ts, 'message': {'role': role, 'content': content}}


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-28.md', 'Kayak trip planned for March.\n数据库迁移在周五完成。\n')
    return root


def open_tools(tmp_path, ws, **search):
    config = memory_config(tmp_path, provider='none', **search)
    tools = MemoryTools.open(ws, config, sessions_path=tmp_path / 'sessions.sqlite')
    tools.sessions.append(MAIN, msg('m1', 'user', 'we chose the walrus protocol for backups'))
    tools.sessions.append('agent:main:child', msg('c1', 'user', 'walrus details from the child'), spawned_by=MAIN)
    return tools


def test_memory_search_and_get_shapes(tmp_path, ws):
    with open_tools(tmp_path, ws) as tools:
        found = tools.memory_search('deploy key', minScore=0)
        assert {'results', 'provider', 'model', 'citations', 'mode', 'debug'} <= set(found)
        hit = found['results'][0]
        assert set(hit) >= {'path', 'startLine', 'endLine', 'score', 'snippet', 'source', 'corpus'}
        assert (hit['path'], hit['source'], hit['corpus'], hit['citation']) == (
            'MEMORY.md',
            'memory',
            'memory',
            'MEMORY.md#L1-L3',
        )
        assert (
            tools.memory_search('数据库迁移', maxResults=1, minScore=0)['results'][0]['path'] == 'memory/2026-11-28.md'
        )
        got = tools.memory_get('MEMORY.md', from_=2, lines=1)
        assert (got['path'], got['text']) == ('MEMORY.md', 'The deploy key lives in the team vault.')
        missing = tools.memory_get('../etc/passwd')
        assert missing['text'] == '' and 'not an indexed memory file' in missing['error']


def test_citations_follow_the_calling_session(tmp_path, ws):
    with open_tools(tmp_path, ws) as tools:
        direct = tools.memory_search('deploy key', minScore=0, sessionKey='agent:main:telegram:dm:42')
        group = tools.memory_search('deploy key', minScore=0, sessionKey='agent:main:telegram:group:7')
        assert 'citation' in direct['results'][0] and 'citation' not in group['results'][0]


def test_bad_arguments_come_back_as_errors(tmp_path, ws):
    with open_tools(tmp_path, ws) as tools:
        assert tools.memory_search('x', corpus='wiki') == {
            'status': 'error',
            'error': 'unknown corpus \'wiki\': use "memory", "sessions" or "all"',
        }
        assert tools.memory_search(42)['status'] == 'error'
        assert 'max_results' in tools.memory_search('x', maxResults=0)['error']
        assert tools.sessions_search('   ')['status'] == 'error'
        assert tools.memory_search('deploy', minScore=0)['results']  # still serving


def test_sessions_tools_use_the_callers_visibility(tmp_path, ws):
    with open_tools(tmp_path, ws) as tools:
        assert {h['sessionKey'] for h in tools.sessions_search('walrus')['results']} == {MAIN, 'agent:main:child'}
        assert tools.sessions_history('agent:main:child')['messages'][0]['content'] == 'walrus details from the child'
        child = MemoryTools(tools.index, tools.sessions, session_key='agent:main:child')
        assert {h['sessionKey'] for h in child.sessions_search('walrus')['results']} == {'agent:main:child'}
        assert child.sessions_history(MAIN)['status'] == 'forbidden'


def test_corpus_sessions_needs_session_memory(tmp_path, ws):
    with open_tools(tmp_path, ws) as tools:
        off = tools.memory_search('walrus', minScore=0, corpus='sessions')
        assert off['results'] == [] and 'experimental.sessionMemory' in off['warning']
    with open_tools(tmp_path, ws, sources=['memory', 'sessions'], experimental={'sessionMemory': True}) as tools:
        tools.index.sync()
        only = tools.memory_search('walrus protocol', minScore=0, corpus='sessions')
        assert only['results'] and {h['source'] for h in only['results']} == {'sessions'}
        assert {h['corpus'] for h in only['results']} == {'sessions'}
        both = tools.memory_search('walrus protocol deploy key', minScore=0, corpus='all', maxResults=10)
        assert {h['source'] for h in both['results']} == {'sessions', 'memory'}


STUCK_S = 20.0
"""How long a stuck provider call waits for the test to release it: a hang guard, never reached when tools behave."""


class Stuck(HashEmbedder):
    """Once ``stuck`` is set, the calls named by ``what`` (``'query'`` or ``'documents'``) wait until the test sets
    ``release`` (a provider stuck in traffic). ``returned`` counts the stuck calls that came back: a caller that
    answered while it is 0 did not wait for the provider (no clock involved)."""

    def __init__(self, what):
        super().__init__()
        self.what = what
        self.stuck = False
        self.release = threading.Event()
        self.returned = 0

    def _wait(self, what):
        if self.stuck and what == self.what:
            self.release.wait(STUCK_S)
            self.returned += 1

    def embed_query(self, text):
        self._wait('query')
        return super().embed_query(text)

    def embed_documents(self, texts):
        self._wait('documents')
        return super().embed_documents(texts)


def test_deadline_answers_with_keyword_results_marked_partial(tmp_path, ws):
    embedder = Stuck('query')
    index = MemoryIndex(ws, memory_config(tmp_path), provider=embedder)
    index.sync()
    embedder.stuck = True
    with SessionStore(tmp_path / 's.sqlite') as sessions:
        tools = MemoryTools(index, sessions, deadline_s=0.3)
        try:
            result = tools.memory_search('deploy key', minScore=0)
            assert embedder.returned == 0  # answered while the query embedding was still stuck
        finally:
            embedder.release.set()
        assert result['partial'] is True and '0.3 s' in result['warning'] and result['mode'] == 'fts-only'
        assert [h['path'] for h in result['results']] == ['MEMORY.md']
        tools.close()
    index.close()


def test_search_never_waits_for_a_reindex(tmp_path, ws):
    embedder = Stuck('documents')
    index = MemoryIndex(ws, memory_config(tmp_path), provider=embedder)
    index.sync()
    embedder.stuck = True
    write(ws / 'memory' / 'new.md', 'A new note about the deploy key rotation.\n')
    index.mark_dirty()
    tools = MemoryTools(index, deadline_s=10)
    try:
        result = tools.memory_search('deploy key', minScore=0)
        assert embedder.returned == 0  # answered while the re-index it started was stuck embedding
    finally:
        embedder.release.set()
    assert 'partial' not in result  # answered from the index as it is
    assert 'MEMORY.md' in [h['path'] for h in result['results']]
    assert 'memory/new.md' not in [h['path'] for h in result['results']]
    tools.close()
    index.close()  # waits for the background sync


def test_module_functions_and_asyncio(tmp_path, ws):
    tools = open_tools(tmp_path, ws)
    memsift.tools.configure(tools)
    try:
        assert memsift.tools.memory_search('deploy key', minScore=0)['results'][0]['path'] == 'MEMORY.md'
        assert memsift.tools.sessions_search('walrus', limit=1)['results'][0]['messageId'] in ('m1', 'c1')
        assert memsift.tools.memory_get('MEMORY.md')['totalLines'] == 3

        async def run():
            async_tools = AsyncMemoryTools(tools)
            return await asyncio.gather(
                *(async_tools.memory_search('deploy key', minScore=0) for _ in range(4)),
                async_tools.sessions_history(MAIN),
            )

        *searches, history = asyncio.run(run())
        assert all(s['results'][0]['path'] == 'MEMORY.md' for s in searches)
        assert history['messages'][0]['id'] == 'm1'
    finally:
        memsift.tools.configure(None)
        tools.close()


def test_deadline_must_be_positive(tmp_path, ws):
    with MemoryIndex(ws, memory_config(tmp_path, provider='none')) as index:
        with pytest.raises(memsift.InvalidInputError, match='deadline_s'):
            MemoryTools(index, deadline_s=0)


def test_sessions_search_limit_over_25_and_unknown_session_are_errors(tmp_path, ws):
    # OpenClaw: "rejects empty queries and invalid limits" and "declares exact success and error result contracts".
    with open_tools(tmp_path, ws) as tools:
        over = tools.sessions_search('walrus', limit=26)
        assert over['status'] == 'error' and 'limit must be a positive integer' in over['error']
        unknown = tools.sessions_search('walrus', sessionKey='01234567-89ab-4def-8123-456789abcdef')
        assert unknown == {
            'status': 'error',
            'error': 'Session not found: 01234567-89ab-4def-8123-456789abcdef (use the full sessionKey from '
            'sessions_list)',
        }
        assert tools.sessions_history('01234567-89ab-4def-8123-456789abcdef')['status'] == 'error'
        assert tools.sessions_search('walrus', sessionKey='agent:main:dashboard:incognito-x')['status'] == 'forbidden'
        assert tools.sessions_search('walrus', limit=1)['truncated'] is True


def test_reset_and_deleted_archives_are_imported_and_age_from_their_file_name(tmp_path):
    # OpenClaw: "includes reset and deleted transcripts in session file listing" (not .bak copies, not subfolders).
    from memsift.tools.openclaw import import_openclaw_sessions

    sessions_dir = tmp_path / 'sessions'
    (sessions_dir / 'archive').mkdir(parents=True)
    line = json.dumps(msg('m1', 'user', 'archived heron notes', ts=1_767_225_600_000)) + '\n'
    names = [
        'active.jsonl',
        'active.jsonl.reset.2026-02-16T22-26-33.000Z',
        'active.jsonl.deleted.2026-02-16T22-27-33.000Z',
        'active.jsonl.bak.2026-02-16T22-28-33.000Z',
    ]
    for name in names:
        (sessions_dir / name).write_text(line)
    (sessions_dir / 'archive' / 'nested.jsonl.deleted.2026-02-16T22-29-33.000Z').write_text(line)
    config = {
        'agents': {
            'defaults': {
                'memorySearch': {
                    'provider': 'none',
                    'store': {'path': str(tmp_path / 'index.sqlite')},
                    'experimental': {'sessionMemory': True},
                    'sources': ['memory', 'sessions'],
                }
            }
        }
    }
    (tmp_path / 'ws').mkdir()
    with MemoryTools.open(tmp_path / 'ws', config, sessions_path=tmp_path / 's.sqlite', sync=False) as tools:
        import_openclaw_sessions(tools.sessions, sessions_dir)
        expected = ['agent:main:active', *(f'agent:main:{n}' for n in names[1:3])]
        assert sorted(s['key'] for s in tools.sessions.sessions()) == sorted(expected)
        ages = tools.index.session_memory.last_messages()
        assert ages['sessions/agent:main:active.jsonl.reset.2026-02-16T22-26-33.000Z.jsonl'] == 1_771_280_793
        assert ages['sessions/agent:main:active.jsonl.deleted.2026-02-16T22-27-33.000Z.jsonl'] == 1_771_280_853
        assert ages['sessions/agent:main:active.jsonl'] == 1_767_225_600
