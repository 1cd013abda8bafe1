"""The tools on an OpenClaw 2.x config answer in 2.x's shapes: corpora, result fields, ``memory_get``'s window."""

import pytest
from conftest import write

from memsift.tools import MemoryTools


@pytest.fixture
def tools(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\n- The router VLAN for lab hosts is 42.\n- Deploys happen on Thursdays.\n')
    write(ws / 'memory' / 'notes.md', ''.join(f'line {i}\n' for i in range(1, 301)))
    config = {
        'memory': {'search': {'provider': 'none', 'query': {'minScore': 0}}},
        'plugins': {'entries': {'memsift': {'config': {'store': {'path': str(tmp_path / '{agentId}.sqlite')}}}}},
    }
    with MemoryTools.open(ws, config, sessions_path=tmp_path / 'sessions.sqlite', sync=False) as opened:
        opened.index.sync()
        yield opened


def test_results_carry_2x_fields(tools):
    found = tools.memory_search('router VLAN')
    top = found['results'][0]
    assert (top['path'], top['corpus'], found['debug']['backend']) == ('MEMORY.md', 'memory', 'memsift')
    assert 0 < top['textScore'] < 1 and 'vectorScore' not in top  # keyword-only: no vector leg
    assert top['provenance']['originClass'] == 'agent' and top['provenance']['observedAt'] > 0


def test_corpora_answer_as_2x_does(tools):
    wiki = tools.memory_search('router', corpus='wiki')
    assert wiki['results'] == [] and wiki['corpora'] == [{'corpus': 'wiki', 'outcome': 'not-registered'}]
    assert 'Wiki corpus is not registered' in wiki['warning']
    every = tools.memory_search('router', corpus='all')
    assert every['results'] and [c['outcome'] for c in every['corpora']] == ['ok', 'not-registered']
    off = tools.memory_search('router', corpus='sessions')  # session memory is off in this config
    assert (off['disabled'], off['unavailable'], off['error']) == (
        True,
        True,
        'Session transcript search is not enabled.',
    )
    assert 'memory.search.experimental.sessionMemory' in off['action']
    assert tools.memory_search('router', corpus='web') == {
        'status': 'error',
        'error': 'corpus must be one of: memory, wiki, all, sessions',
    }


def test_memory_get_window_status_and_errors(tools):
    first = tools.memory_get('memory/notes.md')
    assert (first['status'], first['from'], first['lines'], first['truncated'], first['nextFrom']) == (
        'ok', 1, 120, True, 121
    )  # fmt: skip
    assert first['text'].endswith('line 120\n\n[More content available. Use from=121 to continue.]')
    last = tools.memory_get('memory/notes.md', 290, 50)
    assert (last['lines'], last['text'], 'truncated' in last) == (
        11,
        '\n'.join(f'line {i}' for i in range(290, 301)),
        False,
    )
    assert tools.memory_get('memory/missing.md') == {'status': 'not_found', 'text': '', 'path': 'memory/missing.md'}
    refused = tools.memory_get('../etc/passwd')
    assert (refused['status'], refused['code'], refused['text']) == ('error', 'MEMORY_PATH_NOT_ALLOWED', '')


def test_every_2x_answer_fits_the_mcp_output_schemas(tools):
    import jsonschema

    from memsift.tools.mcp import OUTPUT_SCHEMAS

    answers = [
        ('memory_search', tools.memory_search('router VLAN')),
        *(('memory_search', tools.memory_search('router', corpus=c)) for c in ('wiki', 'all', 'sessions', 'web')),
        *(('memory_get', tools.memory_get(p)) for p in ('memory/notes.md', 'memory/missing.md', '../etc/passwd')),
    ]
    for tool, answer in answers:
        assert not list(jsonschema.Draft202012Validator(OUTPUT_SCHEMAS[tool]).iter_errors(answer)), (tool, answer)


def test_remember_across_conversations_reaches_only_other_private_conversations(tmp_path):
    """2.x: ``rememberAcrossConversations`` (on by default on a personal install) with ``sessions`` in ``sources``
    lets memory_search find the agent's other private conversations: not the caller's own, not groups or channels,
    not keys of an unknown kind."""
    import memsift

    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\n')
    sessions = tmp_path / 'sessions.sqlite'
    with memsift.SessionStore(sessions, 'main') as store:
        for key in (
            'agent:main:main',
            'agent:main:telegram:direct:42',
            'agent:main:telegram:group:7',
            'agent:main:cron:nightly',
            'agent:main:odd:thing',
        ):
            event = {'type': 'message', 'id': key, 'message': {'role': 'user', 'content': f'the kiwi plan ({key})'}}
            store.append_many(key, [event])
    config = {
        'memory': {'search': {'provider': 'none', 'sources': ['memory', 'sessions'], 'query': {'minScore': 0}}},
        'tools': {'sessions': {'visibility': 'all'}},
        'plugins': {'entries': {'memsift': {'config': {'store': {'path': str(tmp_path / '{agentId}.sqlite')}}}}},
    }
    with MemoryTools.open(ws, config, sessions_path=sessions, sync=False) as tools:
        tools.index.sync()
        found = tools.memory_search('kiwi plan', corpus='sessions')
        direct = next(s for s in tools.sessions.sessions() if s['key'] == 'agent:main:telegram:direct:42')
        # 2.x shows a transcript hit as sessions/<agentId>/<sessionId>.jsonl
        assert [hit['path'] for hit in found['results']] == [f'sessions/main/{direct["sessionId"]}.jsonl']
        assert found['results'][0]['provenance']['originClass'] == 'untrusted'
    off = {**config, 'memory': {'search': {**config['memory']['search'], 'rememberAcrossConversations': False}}}
    with MemoryTools.open(ws, off, sessions_path=sessions, sync=False) as tools:
        assert tools.memory_search('kiwi plan', corpus='sessions')['disabled'] is True
