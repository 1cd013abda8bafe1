"""The OpenClaw drop-in: a fake OpenClaw home (JSON5 config, two agents, workspaces, JSONL transcripts)."""

import json

import pytest
from conftest import write

import memsift
import memsift.tools.openclaw
from memsift.tools import from_openclaw
from memsift.tools.openclaw import openclaw_agents


def transcript(path, session_id, lines):
    events = [{'type': 'session', 'version': 3, 'id': session_id, 'timestamp': '2026-11-20T09:00:00Z'}]
    parent = None
    for i, (role, text) in enumerate(lines):
        events.append(
            {
                'type': 'message',
                'id': f'{session_id}-{i}',
                'parentId': parent,
                'timestamp': f'2026-11-20T09:0{i}:00Z',
                'message': {'role': role, 'content': [{'type': 'text', 'text': text}]},
            }
        )
        parent = f'{session_id}-{i}'
    write(path, ''.join(json.dumps(e, ensure_ascii=False) + '\n' for e in events))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """~/.openclaw with agents ``main`` (default workspace) and ``ops`` (its own workspace path)."""
    state = tmp_path / '.openclaw'
    monkeypatch.setenv('HOME', str(tmp_path))  # memsift's own stores go to ~/.memsift, here in tmp
    monkeypatch.setenv('OPENCLAW_STATE_DIR', str(state))
    monkeypatch.delenv('OPENCLAW_CONFIG_PATH', raising=False)
    write(
        state / 'openclaw.json',
        f'''// OpenClaw config (JSON5)
{{
  agents: {{
    defaults: {{ memorySearch: {{ provider: "none", store: {{ path: "{state}/memory/{{agentId}}.sqlite" }} }} }},
    list: [
      {{ id: "main", default: true }},
      {{ id: "ops", workspace: "{tmp_path}/ops-workspace" }},
    ],
  }},
  tools: {{ sessions: {{ visibility: "tree" }} }},
}}
''',
    )
    write(state / 'workspace' / 'MEMORY.md', '# Main\nThe staging cluster lives in Oslo.\n')
    write(tmp_path / 'ops-workspace' / 'MEMORY.md', '# Ops\nThe pager rotation starts on Mondays.\n')
    sessions = state / 'agents' / 'main' / 'sessions'
    transcript(
        sessions / 'aaa.jsonl',
        'aaa',
        [('user', 'remember the kiwi launch date'), ('assistant', 'kiwi launches on 3 December')],
    )
    transcript(sessions / 'bbb.jsonl', 'bbb', [('user', 'kiwi subtask notes')])
    write(
        sessions / 'sessions.json',
        json.dumps(
            {
                'agent:main:main': {'sessionId': 'aaa', 'updatedAt': 1},
                'agent:main:subagent:x1': {'sessionId': 'bbb', 'spawnedBy': 'agent:main:main', 'updatedAt': 2},
            }
        ),
    )
    transcript(state / 'agents' / 'ops' / 'sessions' / 'ccc.jsonl', 'ccc', [('user', 'kiwi pager escalation')])
    return tmp_path


def test_agents_and_workspaces_are_found(home):
    agents = {a.id: a for a in openclaw_agents()}
    assert set(agents) == {'main', 'ops'} and agents['main'].default and not agents['ops'].default
    assert agents['main'].workspace == home / '.openclaw' / 'workspace'
    assert agents['ops'].workspace == home / 'ops-workspace'
    assert agents['ops'].sessions_dir == home / '.openclaw' / 'agents' / 'ops' / 'sessions'


def test_both_agents_are_served_with_their_own_memory_and_sessions(home):
    with from_openclaw() as main, from_openclaw('ops') as ops:
        assert main.agent_id == 'main' and ops.agent_id == 'ops'
        assert [h['path'] for h in main.memory_search('staging cluster', minScore=0)['results']] == ['MEMORY.md']
        assert main.memory_search('pager rotation', minScore=0)['results'] == []
        assert [h['path'] for h in ops.memory_search('pager rotation', minScore=0)['results']] == ['MEMORY.md']
        hits = main.sessions_search('kiwi')['results']
        assert {h['sessionKey'] for h in hits} == {'agent:main:main', 'agent:main:subagent:x1'}
        assert {h['sessionId'] for h in hits} == {'aaa', 'bbb'}
        assert [h['sessionKey'] for h in ops.sessions_search('kiwi')['results']] == ['agent:ops:ccc']
        # sessions.json's spawnedBy builds the tree: the subagent sees only itself
        sub = memsift.MemoryTools(main.index, main.sessions, session_key='agent:main:subagent:x1')
        assert {h['sessionKey'] for h in sub.sessions_search('kiwi')['results']} == {'agent:main:subagent:x1'}
    # memsift wrote its own stores, never OpenClaw's
    assert (home / '.memsift' / 'memory' / 'main.sqlite').is_file()
    assert not (home / '.openclaw' / 'memory').exists()


def test_new_transcript_lines_are_picked_up(home, monkeypatch):
    monkeypatch.setattr(memsift.tools.openclaw, 'SESSION_RESCAN_S', 0.0)
    path = home / '.openclaw' / 'agents' / 'main' / 'sessions' / 'aaa.jsonl'
    with from_openclaw() as main:
        assert main.sessions_search('mango')['results'] == []
        with path.open('a', encoding='utf-8') as f:
            f.write(
                json.dumps(
                    {
                        'type': 'message',
                        'id': 'aaa-9',
                        'parentId': 'aaa-1',
                        'timestamp': 9,
                        'message': {'role': 'user', 'content': 'mango is the next codename'},
                    }
                )
                + '\n'
            )
        assert [h['messageId'] for h in main.sessions_search('mango')['results']] == ['aaa-9']


def test_setup_errors_say_what_to_do(home, monkeypatch, tmp_path):
    with pytest.raises(memsift.ConfigError, match=r"Unknown agent id 'nope'.*main, ops"):
        from_openclaw('nope')
    monkeypatch.setenv('OPENCLAW_CONFIG_PATH', str(tmp_path / 'missing.json'))
    with pytest.raises(memsift.ConfigError, match='OPENCLAW_CONFIG_PATH'):
        from_openclaw()


@pytest.mark.timeout(90)
def test_mcp_openclaw_serves_each_agent(home):
    """``memsift mcp --openclaw --agent ID`` over stdio, driven by the MCP SDK's client, for both agents."""
    import os
    import sys

    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, 'HOME': str(home), 'OPENCLAW_STATE_DIR': str(home / '.openclaw')}

    async def ask(agent):
        params = StdioServerParameters(
            command=sys.executable,
            args=['-m', 'memsift', 'mcp', '--openclaw', '--agent', agent],
            env=env,
            cwd=str(home),
        )
        with (home / f'{agent}.log').open('a') as log, anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=log)) as client:
                notes = await client.call_tool('memory_search', {'query': 'cluster rotation', 'minScore': 0})
                said = await client.call_tool('sessions_search', {'query': 'kiwi'})
                return (
                    [h['path'] + ':' + h['snippet'].split('\n')[0] for h in notes.structured_content['results']],
                    sorted(h['sessionKey'] for h in said.structured_content['results']),
                )

    assert anyio.run(ask, 'main') == (
        ['MEMORY.md:# Main'],
        ['agent:main:main', 'agent:main:main', 'agent:main:subagent:x1'],
    )
    assert anyio.run(ask, 'ops') == (['MEMORY.md:# Ops'], ['agent:ops:ccc'])


def write_2x_home(tmp_path, monkeypatch, agents, **extra):
    """A 2.x ``openclaw.json`` (``agents.entries``, ``memory.search``) outside the state folder, which
    ``OPENCLAW_CONFIG_PATH`` names."""
    state, config = tmp_path / 'state', tmp_path / 'etc' / 'openclaw.json'
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.setenv('OPENCLAW_STATE_DIR', str(state))
    monkeypatch.setenv('OPENCLAW_CONFIG_PATH', str(config))
    root = {'meta': {'lastTouchedVersion': '2026.9.6'}, 'memory': {'search': {'provider': 'none'}}, 'agents': agents}
    write(config, json.dumps({**root, **extra}))
    return state


def test_2x_agents_entries_are_found_with_their_workspaces_and_state(tmp_path, monkeypatch):
    entries = {'main': {'default': True}, 'work': {'workspace': str(tmp_path / 'work-ws')}, 'ops': {}}
    state = write_2x_home(tmp_path, monkeypatch, {'defaults': {'workspace': str(tmp_path / 'ws')}, 'entries': entries})
    agents = {a.id: a for a in openclaw_agents()}
    assert set(agents) == {'main', 'work', 'ops'} and agents['main'].default
    assert agents['main'].workspace == tmp_path / 'ws'
    assert agents['work'].workspace == tmp_path / 'work-ws'
    assert agents['ops'].workspace == tmp_path / 'ws' / 'ops'  # 2.x: the others get a folder in the shared one
    # the transcripts are in the state folder, not beside the config file
    assert agents['work'].database == state / 'agents' / 'work' / 'agent' / 'openclaw-agent.sqlite'
    assert agents['work'].config.profile.name == 'openclaw-2'


def test_several_2x_agents_and_none_named_is_openclaws_question(tmp_path, monkeypatch):
    write_2x_home(tmp_path, monkeypatch, {'ownership': 'explicit', 'entries': {'main': {}, 'work': {}}})
    with pytest.raises(memsift.ConfigError, match=r'Multiple agents are configured.*--agent.*main, work'):
        from_openclaw()
    with pytest.raises(memsift.ConfigError, match=r"Unknown agent id 'nope'.*main, work.*agents\.entries"):
        from_openclaw('nope')
    write(tmp_path / 'ws' / 'MEMORY.md', '# Work\nThe build farm is in Lisbon.\n')
    write_2x_home(
        tmp_path,
        monkeypatch,
        {'ownership': 'explicit', 'entries': {'main': {}, 'work': {'workspace': str(tmp_path / 'ws')}}},
    )
    with from_openclaw('work', sync=False) as tools:
        tools.index.sync()
        assert [h['path'] for h in tools.memory_search('build farm Lisbon', minScore=0)['results']] == ['MEMORY.md']


def test_2x_transcripts_are_read_from_the_agent_database_and_caught_up(tmp_path, monkeypatch):
    """A 2.x setup: conversations live in ``<state>/agents/main/agent/openclaw-agent.sqlite`` (made from OpenClaw
    2026.9.6's own rows, tests/sessions/openclaw2); ``sessions_search`` finds them, a message OpenClaw appends is
    found at the next call, and OpenClaw's file is never written."""
    import hashlib
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).parents[1] / 'sessions' / 'openclaw2'
    spec = importlib.util.spec_from_file_location('openclaw_fixture', folder / 'openclaw_fixture.py')
    oc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oc)
    monkeypatch.setattr(memsift.tools.openclaw, 'SESSION_RESCAN_S', 0.0)
    state = write_2x_home(tmp_path, monkeypatch, {'entries': {'main': {'workspace': str(tmp_path / 'ws')}}})
    write(tmp_path / 'ws' / 'MEMORY.md', '# Main\n')
    database = state / 'agents' / 'main' / 'agent' / 'openclaw-agent.sqlite'
    database.parent.mkdir(parents=True)
    oc.build(database)
    before = hashlib.sha256(database.read_bytes()).hexdigest()

    def exact(tools, query):  # the all-terms hits (memsift's ranked partial matches follow them)
        return [h['sessionKey'] for h in tools.sessions_search(query)['results'] if h.get('match') == 'all']

    with from_openclaw(sync=False) as tools:
        assert exact(tools, 'zebra-marker-one') == ['agent:main:main']
        assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # read only
        conn = oc.connect(database)
        session = '00000000-0000-4000-8000-000000000001'
        oc.append(conn, session, [oc.message('the walrus-marker arrived', oc.leaf_id(conn, session))])
        conn.close()
        assert exact(tools, 'walrus-marker arrived') == ['agent:main:main']
