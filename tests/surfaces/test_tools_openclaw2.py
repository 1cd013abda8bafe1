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


def test_a_note_holding_every_term_outranks_a_one_term_memory_md_match_under_2x_only(tmp_path):
    """2.x scores a keyword hit by its overlap with the query (+0.45 x the share of terms it holds, +0.2 x their
    density) and, as its all-terms FTS query does, leaves partial matches out when a chunk holds every term: the
    dated note naming the production database host wins over MEMORY.md's important entry holding "production" alone,
    old as the note is. A 1.x config (decay on too) ranks as memsift always did there: ``r/(1+r)`` plus the length
    boost, decayed, partial matches kept, so the evergreen one-term match comes first."""
    from datetime import date, timedelta

    ws = tmp_path / 'ws'
    day = (date.today() - timedelta(days=90)).isoformat()
    note = f'memory/{day}.md'
    write(
        ws / 'MEMORY.md',
        '# Facts\n- The production VPN gateway for every office laptop is vpn-b.example. <!-- importance: 9 -->\n',
    )
    write(ws / note, f'# {day}\n\nProduction database host is now db-gamma.internal; the migration finished.\n')

    def store(generation):
        return {'store': {'path': str(tmp_path / f'{generation}x-{{agentId}}.sqlite')}}

    decay = {'hybrid': {'temporalDecay': {'enabled': True, 'halfLifeDays': 30}}}
    configs = {
        2: {
            'memory': {'search': {'provider': 'none', 'query': {'minScore': 0}}},
            'plugins': {'entries': {'memsift': {'config': store(2)}}},
        },
        1: {
            'agents': {
                'defaults': {'memorySearch': {**store(1), 'provider': 'none', 'query': {'minScore': 0, **decay}}}
            }
        },
    }
    found = {}
    for generation, config in configs.items():
        sessions = tmp_path / f'sessions-{generation}.sqlite'
        with MemoryTools.open(ws, config, sessions_path=sessions, sync=False) as tools:
            tools.index.sync()
            found[generation] = tools.index.search('production database host', min_score=0, explain=True)
    two, one = found[2], found[1]
    # 2.x: the note's boosted keyword score is capped at 1 (then decayed); MEMORY.md's one-term match is no candidate.
    assert [hit.path for hit in two.results] == [note]
    assert two.results[0].explain['bm25Normalized'] == 1.0
    assert [(cut['path'], cut['cut']) for cut in two.debug['cut']] == [('MEMORY.md', 'partialMatch')]
    # 1.x: both, MEMORY.md first; each merged score r/(1+r) + 0.18 (length), unboosted, then decayed.
    assert [hit.path for hit in one.results] == ['MEMORY.md', note]
    for hit in one.results:
        bm25, why = hit.explain['bm25'], hit.explain
        assert why['bm25Normalized'] == pytest.approx(bm25 / (1 + bm25), abs=1e-12)
        assert why['merged'] == pytest.approx(bm25 / (1 + bm25) + 0.18, abs=1e-12)
        assert hit.score == pytest.approx(why['merged'] * why['decay'], abs=1e-12)


@pytest.mark.parametrize('path', ['memory/\x00.md', 'memory/\ud800.md', 'USER.md', '', 5])
def test_memory_get_answers_odd_paths_with_2x_statuses(tools, path):
    answer = tools.memory_get(path)
    assert answer['text'] == '' and answer.get('status') in ('not_found', 'error')
