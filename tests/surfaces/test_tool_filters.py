"""The filters of issue 31 on the agent tools: ``since`` / ``until`` / ``paths`` / ``tags`` on ``memory_search`` and
``since`` / ``until`` on ``sessions_search``, through :class:`MemoryTools`, :class:`AsyncMemoryTools` and the MCP
server (driven by the official SDK's client, in process). A bad filter comes back as the tools' error dict."""

import asyncio
from datetime import datetime, timedelta, timezone

import anyio
import pytest
from conftest import memory_config, write
from mcp import Client

from memsift.aio import AsyncMemoryTools
from memsift.tools import MemoryTools
from memsift.tools.mcp import build_server

pytestmark = pytest.mark.timeout(60)

MAIN = 'agent:main:main'


def message(event_id, text, when):
    return {
        'type': 'message',
        'id': event_id,
        'timestamp': when.isoformat(),
        'message': {'role': 'user', 'content': text},
    }


@pytest.fixture
def tools(tmp_path):
    """Tools over dated notes (two daily files of 2020; two project notes changed today, one tagged) and a session
    with a message of 2020 and one of today."""
    ws = tmp_path / 'ws'
    write(ws / 'memory' / '2020-03-01.md', 'Deploy: the canary goes out first.\n')
    write(ws / 'memory' / '2020-06-15.md', 'Deploy freeze during the audit.\n')
    write(ws / 'memory' / 'projects' / 'budget.md', '---\ntags: [ops, Budget]\n---\nDeploy tooling budget approved.\n')
    write(ws / 'memory' / 'projects' / 'misc.md', 'Deploy checklist: tests, changelog, tag.\n')
    config = memory_config(tmp_path, provider='none')
    with MemoryTools.open(ws, config, sessions_path=tmp_path / 'sessions.sqlite', sync=False) as tools:
        tools.index.sync()
        now = datetime.now(timezone.utc)
        tools.sessions.append_many(
            MAIN,
            [
                message('m1', 'the deploy moved to Mondays', datetime(2020, 3, 2, 12, tzinfo=timezone.utc)),
                message('m2', 'the deploy moved to Thursdays', now - timedelta(minutes=5)),
            ],
        )
        yield tools


def found(answer):
    assert 'status' not in answer, answer
    return sorted(hit['path'] for hit in answer['results'])


def message_ids(answer):
    assert 'status' not in answer, answer
    return sorted(hit['messageId'] for hit in answer['results'])


DAILY = ['memory/2020-03-01.md', 'memory/2020-06-15.md']
PROJECTS = ['memory/projects/budget.md', 'memory/projects/misc.md']


def test_memory_search_filters(tools):
    assert found(tools.memory_search('deploy', minScore=0)) == DAILY + PROJECTS
    assert found(tools.memory_search('deploy', minScore=0, since='2020-06-01', until='2020-12-31')) == [DAILY[1]]
    assert found(tools.memory_search('deploy', minScore=0, since='7d')) == PROJECTS  # dated by their change today
    assert found(tools.memory_search('deploy', minScore=0, until='1y')) == DAILY
    assert found(tools.memory_search('deploy', minScore=0, paths=['memory/2020-*.md'])) == DAILY
    assert found(tools.memory_search('deploy', minScore=0, paths=['memory/projects'])) == PROJECTS
    assert found(tools.memory_search('deploy', minScore=0, tags=['budget'])) == [PROJECTS[0]]
    assert found(tools.memory_search('deploy', minScore=0, paths=['memory/**'], tags=['ops'], since='7d')) == [
        PROJECTS[0]
    ]


def test_without_filters_the_answer_is_the_plain_one(tools):
    plain = tools.memory_search('deploy checklist', minScore=0)
    unfiltered = tools.memory_search('deploy checklist', minScore=0, since=None, until=None, paths=None, tags=None)
    for answer in (plain, unfiltered):
        answer.pop('debug')  # timings
    assert plain == unfiltered


@pytest.mark.parametrize(
    ('arguments', 'named'),
    [
        ({'since': 'soonish'}, 'since'),
        ({'until': '2026-02-30'}, 'until'),
        ({'since': '2020-06-01', 'until': '2020-01-01'}, 'since'),
        ({'paths': ['../outside/*.md']}, 'paths'),
        ({'paths': 'memory/*.md'}, 'paths'),
        ({'tags': 'ops'}, 'tags'),
    ],
)
def test_a_bad_memory_filter_is_the_error_dict(tools, arguments, named):
    answer = tools.memory_search('deploy', **arguments)
    assert set(answer) == {'status', 'error'} and answer['status'] == 'error' and named in answer['error']


def test_sessions_search_filters(tools):
    assert message_ids(tools.sessions_search('deploy moved')) == ['m1', 'm2']
    assert message_ids(tools.sessions_search('deploy moved', since='7d')) == ['m2']
    assert message_ids(tools.sessions_search('deploy moved', until='2020-12-31')) == ['m1']
    assert message_ids(tools.sessions_search('deploy moved', MAIN, 5, since='2020-03-01', until='2020-03-02')) == ['m1']
    bad = tools.sessions_search('deploy', until='whenever')
    assert bad['status'] == 'error' and 'until' in bad['error']


def test_async_tools_pass_the_filters_and_write(tools):
    async def body():
        wrapped = AsyncMemoryTools(tools)
        tagged = await wrapped.memory_search('deploy', minScore=0, tags=['ops'])
        recent = await wrapped.sessions_search('deploy moved', since='7d')
        bad = await wrapped.memory_search('deploy', paths=['/etc/*'])
        written = await wrapped.memory_write('Deploy windows close at 16:00.', 'memory/projects/windows.md')
        fresh = await wrapped.memory_search('deploy windows', minScore=0, paths=['memory/projects/windows.md'])
        return tagged, recent, bad, written, fresh

    tagged, recent, bad, written, fresh = asyncio.run(body())
    assert found(tagged) == [PROJECTS[0]] and message_ids(recent) == ['m2']
    assert bad['status'] == 'error' and 'paths' in bad['error']
    assert written['path'] == 'memory/projects/windows.md' and 'warning' not in written
    assert found(fresh) == ['memory/projects/windows.md']


# ---------------------------------------------------------------- MCP


def call(tools, name, arguments):
    async def body():
        async with Client(build_server(tools)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            return listed, await client.call_tool(name, arguments)

    return anyio.run(body)


def test_mcp_declares_the_filters_as_optional_documented_properties(tools):
    listed, _ = call(tools, 'memory_search', {'query': 'deploy'})
    search = listed['memory_search'].input_schema
    sessions = listed['sessions_search'].input_schema
    assert search['required'] == ['query'] and sessions['required'] == ['query']
    assert {'since', 'until', 'paths', 'tags'} <= set(search['properties'])
    assert {'since', 'until'} <= set(sessions['properties']) and 'paths' not in sessions['properties']
    for name in ('since', 'until', 'paths', 'tags'):
        prop = search['properties'][name]
        assert prop['default'] is None and len(prop['description']) > 40
    assert {'type': 'array', 'items': {'type': 'string'}} in search['properties']['paths']['anyOf']
    assert '7d' in search['properties']['since']['description']
    assert 'memory/2026-11-*.md' in search['properties']['paths']['description']


def test_mcp_memory_search_filters(tools):
    _, result = call(tools, 'memory_search', {'query': 'deploy', 'minScore': 0, 'since': '2020-06-01', 'until': '1y'})
    assert not result.is_error and found(result.structured_content) == [DAILY[1]]
    _, result = call(tools, 'memory_search', {'query': 'deploy', 'minScore': 0, 'paths': ['memory/projects']})
    assert found(result.structured_content) == PROJECTS
    _, result = call(tools, 'memory_search', {'query': 'deploy', 'minScore': 0, 'tags': ['Budget']})
    assert found(result.structured_content) == [PROJECTS[0]]
    _, result = call(tools, 'sessions_search', {'query': 'deploy moved', 'since': '7d'})
    assert not result.is_error and message_ids(result.structured_content) == ['m2']


def test_mcp_bad_filters_are_error_results(tools):
    _, result = call(tools, 'memory_search', {'query': 'deploy', 'since': 'last Blursday'})
    assert result.is_error and result.structured_content['status'] == 'error'
    assert set(result.structured_content) == {'status', 'error'} and 'since' in result.structured_content['error']
    _, result = call(tools, 'sessions_search', {'query': 'deploy', 'until': '2026-13-01'})
    assert result.is_error and 'until' in result.structured_content['error']
    _, result = call(tools, 'memory_search', {'query': 'deploy', 'paths': ['../x']})
    assert result.is_error and 'paths' in result.structured_content['error']
