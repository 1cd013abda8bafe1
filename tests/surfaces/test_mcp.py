"""``memsift mcp``: the MCP server run as a real subprocess and driven by the official SDK's client, over stdio and
streamable HTTP (plus plain HTTP requests for the Host, Origin and token checks); its resources and output schemas
through the same client, in process."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from conftest import memory_config, write
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError

import memsift
from memsift.tools.mcp import OUTPUT_SCHEMAS, build_server, memory_uri

pytestmark = pytest.mark.timeout(60)

MAIN = 'agent:main:main'
SUB = 'agent:main:subagent:certs'
T0 = 1767225600000  # 2026-01-01, in milliseconds
SEARCH_KEYS = {'path', 'startLine', 'endLine', 'score', 'snippet', 'source', 'corpus'}
HIT_KEYS = {'sessionKey', 'timestamp', 'role', 'snippet', 'score', 'sessionId', 'messageId'}
SERVED = {name: schema for name, schema in OUTPUT_SCHEMAS.items() if name != 'memory_write'}
"""The output schemas of the tools served by default (memory_write only with --allow-write: test_mcp_write.py)."""


def message(event_id, parent, role, text, minutes=0):
    return {
        'type': 'message',
        'id': event_id,
        'parentId': parent,
        'timestamp': T0 + minutes * 60_000,
        'message': {'role': role, 'content': text},
    }


def write_json5(path, config):
    """``config`` as JSON5 (a comment, unquoted top-level key), as an OpenClaw user would write it."""
    body = json.dumps(config['agents'], ensure_ascii=False, indent=2)
    write(path, f'// written by test_mcp.py\n{{\n  agents: {body},\n}}\n')


@pytest.fixture
def agent(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\nStandup moved to 9:30 on Mondays.\n')
    write(
        ws / 'memory' / '2026-11-28.md',
        'BBDown视频下载工具的配置\n数据库迁移在周五完成\nERR_CONN_RESET retried with backoff\n',
    )
    config = tmp_path / 'openclaw.json5'
    write_json5(config, memory_config(tmp_path, provider='none'))
    sessions = tmp_path / 'sessions.sqlite'
    with memsift.SessionStore(sessions, 'main') as store:
        store.append_many(
            MAIN,
            [
                message('m1', None, 'user', 'Remember: the Kubernetes cluster is named orion-7'),
                message('m2', 'm1', 'assistant', 'Noted, the cluster is orion-7.', 1),
                message('m3', 'm2', 'user', '数据库迁移安排在周五晚上', 2),
            ],
        )
        store.append_many(
            SUB,
            [
                message('s1', None, 'user', 'Rotate the staging certificates', 5),
                message('s2', 's1', 'assistant', 'Rotated the staging certificates on web-3', 6),
            ],
            spawned_by=MAIN,
        )
    return SimpleNamespace(
        tmp=tmp_path,
        ws=ws,
        config=config,
        args=['--workspace', str(ws), '--config', str(config), '--sessions-db', str(sessions)],
    )


def stdio(agent, *extra, env=None):
    """A client transport that launches ``python -m memsift mcp`` (its stderr goes to ``server.log``)."""
    params = StdioServerParameters(
        command=sys.executable, args=['-m', 'memsift', 'mcp', *agent.args, *extra], env=env, cwd=str(agent.tmp)
    )
    log = open(agent.tmp / 'server.log', 'a')  # noqa: SIM115 - closed with the test's tmp dir
    agent.log = log
    return stdio_client(params, errlog=log)


def run(fn, *args, seconds=50):
    """Run an async test body, failing (not hanging) past ``seconds``."""

    async def bounded():
        with anyio.fail_after(seconds):
            return await fn(*args)

    try:
        return anyio.run(bounded)
    finally:
        log = getattr(args[0], 'log', None) if args else None
        if log is not None:
            log.close()


def data(result):
    """The tool result's dict, checked to be the same as structured content and as text."""
    assert result.structured_content == json.loads(result.content[0].text)
    return result.structured_content


# ---------------------------------------------------------------- stdio


def test_stdio_lists_and_calls_the_four_tools(agent):
    async def body(agent):
        async with Client(stdio(agent), read_timeout_seconds=30) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {'memory_search', 'memory_get', 'sessions_search', 'sessions_history'}
            params = {name: set(tool.input_schema['properties']) for name, tool in tools.items()}
            assert params == {
                'memory_search': {'query', 'maxResults', 'minScore', 'corpus', 'since', 'until', 'paths', 'tags'},
                'memory_get': {'path', 'from', 'lines', 'corpus'},
                'sessions_search': {'query', 'sessionKey', 'limit', 'since', 'until'},
                'sessions_history': {'sessionKey', 'limit', 'includeTools'},
            }
            assert tools['memory_search'].input_schema['required'] == ['query']
            assert tools['memory_get'].input_schema['required'] == ['path']
            assert tools['memory_search'].input_schema['properties']['corpus']['enum'] == [
                'memory',
                'sessions',
                'all',
                'wiki',
            ]
            assert 'sessions_search' in tools['memory_search'].description  # says when to use which
            assert all(len(tool.description) > 200 and tool.annotations.read_only_hint for tool in tools.values())
            assert all(p.get('description') for t in tools.values() for p in t.input_schema['properties'].values())

            found = data(await client.call_tool('memory_search', {'query': 'deploy key vault', 'minScore': 0}))
            assert found['results'][0]['path'] == 'MEMORY.md' and set(found['results'][0]) >= SEARCH_KEYS
            assert found['provider'] == 'none'
            hit = data(await client.call_tool('memory_search', {'query': '数据库迁移'}))['results'][0]
            assert hit['path'] == 'memory/2026-11-28.md' and '周五' in hit['snippet']
            got = data(await client.call_tool('memory_get', {'path': hit['path'], 'from': 2, 'lines': 1}))
            assert got['text'] == '数据库迁移在周五完成' and got['from'] == 2
            assert {name: tool.output_schema for name, tool in tools.items()} == SERVED

            # The memory files as resources, over the wire (the search above waited for the first sync).
            resources = {r.uri: r for r in (await client.list_resources()).resources}
            assert set(resources) == {'memsift://main/MEMORY.md', 'memsift://main/memory/2026-11-28.md'}
            assert all(
                r.name == r.uri.removeprefix('memsift://main/') and r.mime_type == 'text/markdown'
                for r in resources.values()
            )
            read = (await client.read_resource('memsift://main/memory/2026-11-28.md')).contents[0]
            whole = data(await client.call_tool('memory_get', {'path': 'memory/2026-11-28.md'}))
            assert read.text == whole['text'] and '数据库迁移在周五完成' in read.text
            with pytest.raises(MCPError, match='memsift://main/../MEMORY.md') as refused:
                await client.read_resource('memsift://main/../MEMORY.md')
            assert refused.value.code == -32602

            said = data(await client.call_tool('sessions_search', {'query': 'orion-7'}))['results']
            assert [h['messageId'] for h in said] and set(said[0]) >= HIT_KEYS and said[0]['sessionKey'] == MAIN
            zh = data(await client.call_tool('sessions_search', {'query': '周五', 'limit': 5}))['results']
            assert [h['messageId'] for h in zh] == ['m3']
            only = data(await client.call_tool('sessions_search', {'query': 'certificates', 'sessionKey': SUB}))
            assert {h['sessionKey'] for h in only['results']} == {SUB}
            history = data(await client.call_tool('sessions_history', {'sessionKey': SUB, 'limit': 1}))
            assert history['sessionKey'] == SUB and [m['id'] for m in history['messages']] == ['s2']
            assert {'id', 'role', 'timestamp', 'content'} <= set(history['messages'][0])

            # Bad arguments: an error result saying what is wrong; the server keeps serving.
            for arguments, words in (
                ({'query': 123}, 'query'),
                ({}, 'query'),
                ({'query': 'x', 'corpus': 'web'}, 'corpus'),
                ({'query': 'x', 'minScore': 2}, 'minScore'),
            ):
                bad = await client.call_tool('memory_search', arguments)
                assert bad.is_error and words in bad.content[0].text, bad
            missing = await client.call_tool('memory_get', {'path': '../../etc/passwd'})
            assert missing.is_error and 'not an indexed memory file' in data(missing)['error']
            hidden = await client.call_tool('sessions_history', {'sessionKey': 'agent:other:main'})
            assert hidden.is_error and data(hidden)['status'] == 'forbidden'
            assert not (await client.call_tool('memory_search', {'query': 'standup', 'minScore': 0})).is_error

            # Concurrent calls: all answered, each with its own result.
            results = {}

            async def call(i):
                query = ['standup', 'vault', '视频下载', 'ERR_CONN_RESET'][i % 4]
                results[i] = await client.call_tool('memory_search', {'query': query, 'minScore': 0})

            async with anyio.create_task_group() as group:
                for i in range(8):
                    group.start_soon(call, i)
            assert all(not r.is_error and data(r)['results'] for r in results.values()) and len(results) == 8
            assert data(results[2])['results'][0]['path'] == 'memory/2026-11-28.md'

    run(body, agent)


SLOW_QUERY = 'where do we keep the deploy key'


def test_stdio_deadline_answers_with_keyword_results(agent, server):
    """An embedding provider stuck on one query (until the test has its answer) behind a 0.05 s deadline: keyword
    results, marked partial, answered while the provider still had the query."""
    release, answered = threading.Event(), []

    def reply(request):
        texts = request['body']['input']
        if any(SLOW_QUERY in text for text in texts):
            release.wait(20)  # a hang guard: the test releases it once it has its answer
            answered.append(SLOW_QUERY)
        return (
            200,
            {},
            {'data': [{'index': i, 'embedding': [1.0, float(len(t) % 5), 0.5]} for i, t in enumerate(texts)]},
        )

    server.reply = reply
    write_json5(
        agent.config,
        memory_config(
            agent.tmp,
            provider='openai-compatible',
            model='tiny',
            remote={'baseUrl': server.url + '/v1', 'apiKey': 'sk-test'},
        ),
    )

    async def body(agent):
        async with Client(stdio(agent, '--deadline', '0.05'), read_timeout_seconds=30) as client:
            for _ in range(200):  # until the background sync has indexed the files, vectors included
                ready = data(await client.call_tool('memory_search', {'query': 'vault', 'minScore': 0}))
                if ready['mode'] == 'hybrid' and ready['results']:
                    break
                await anyio.sleep(0.1)
            try:
                slow = await client.call_tool('memory_search', {'query': SLOW_QUERY, 'minScore': 0})
                return data(slow), list(answered)  # what the provider had answered when the tool answered
            finally:
                release.set()  # before the server is asked to exit

    result, answered_then = run(body, agent)
    assert result.get('partial') is True and 'keyword results' in result['warning'], result
    assert result['results'][0]['path'] == 'MEMORY.md' and answered_then == []  # the deadline did not wait for it
    assert any(SLOW_QUERY in text for r in server.requests for text in r['body']['input'])


def test_stdio_stdout_carries_only_the_protocol_and_eof_exits_0(agent):
    proc = subprocess.Popen(
        [sys.executable, '-m', 'memsift', 'mcp', *agent.args, '--json'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        requests = [
            {
                'jsonrpc': '2.0',
                'id': 1,
                'method': 'initialize',
                'params': {
                    'protocolVersion': '2025-06-18',
                    'capabilities': {},
                    'clientInfo': {'name': 'test', 'version': '1'},
                },
            },
            {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
            {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'},
        ]
        proc.stdin.write(''.join(json.dumps(r) + '\n' for r in requests))
        proc.stdin.flush()
        lines = [json.loads(proc.stdout.readline()) for _ in range(2)]  # answers before closing stdin
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        rest = proc.stdout.read()
        assert [line['id'] for line in lines] == [1, 2] and len(lines[1]['result']['tools']) == 4
        assert not rest.strip() and '"event": "serving"' in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            stream.close()


def test_openclaw_agent_over_stdio(tmp_path):
    state = tmp_path / 'home' / '.openclaw'
    ws = tmp_path / 'agent-ws'
    write(ws / 'MEMORY.md', 'Prefers tea over coffee.\n')
    sessions_dir = state / 'agents' / 'main' / 'sessions'
    write(
        sessions_dir / 'abc.jsonl', json.dumps(message('e1', None, 'user', 'the wifi password is hunter-hunter')) + '\n'
    )
    write(sessions_dir / 'sessions.json', json.dumps({MAIN: {'sessionId': 'abc'}}))
    config = memory_config(tmp_path, provider='none')
    config['agents'] = {'defaults': {'workspace': str(ws)}}
    write(state / 'openclaw.json', json.dumps(config))
    env = {'HOME': str(tmp_path / 'home'), 'OPENCLAW_CONFIG_PATH': str(state / 'openclaw.json')}

    async def body(agent):
        async with Client(stdio(agent, '--openclaw', env=env), read_timeout_seconds=30) as client:
            notes = data(await client.call_tool('memory_search', {'query': 'tea', 'minScore': 0}))['results']
            said = data(await client.call_tool('sessions_search', {'query': 'wifi password'}))['results']
            return notes, said

    notes, said = run(body, SimpleNamespace(tmp=tmp_path, args=[]))
    assert [hit['path'] for hit in notes] == ['MEMORY.md']
    assert [(hit['sessionKey'], hit['messageId']) for hit in said] == [(MAIN, 'e1')]
    assert (tmp_path / 'home' / '.memsift' / 'agents' / 'main' / 'sessions.sqlite').is_file()  # memsift's own store


def test_cli_refuses_a_missing_token_and_openclaw_with_a_workspace(agent):
    env = {k: v for k, v in os.environ.items() if k != 'NO_SUCH_TOKEN'}
    proc = subprocess.run(
        [sys.executable, '-m', 'memsift', 'mcp', *agent.args, '--http', '0', '--token-env', 'NO_SUCH_TOKEN'],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert proc.returncode == 1 and 'NO_SUCH_TOKEN' in proc.stderr and not proc.stdout
    proc = subprocess.run(
        [sys.executable, '-m', 'memsift', 'mcp', '--openclaw', '--workspace', str(agent.ws)],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1 and '--openclaw' in proc.stderr


# ---------------------------------------------------------------- streamable HTTP


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def wait_listening(proc, port, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f'the server did not listen on port {port} within {seconds} s')


def test_http_with_token_host_and_origin_checks(agent):
    port, token = free_port(), 'tok-' + os.urandom(8).hex()
    url = f'http://127.0.0.1:{port}/mcp'
    env = {**os.environ, 'MEMSIFT_TEST_MCP_TOKEN': token}
    proc = subprocess.Popen(
        [
            sys.executable,
            '-m',
            'memsift',
            'mcp',
            *agent.args,
            '--http',
            str(port),
            '--token-env',
            'MEMSIFT_TEST_MCP_TOKEN',
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(proc, port)
        assert token not in ' '.join(proc.args)  # the token never shows on the command line

        async def body(_):
            auth = {'Authorization': f'Bearer {token}'}
            async with (
                httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(30)) as http,
                Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client,
            ):
                names = {tool.name for tool in (await client.list_tools()).tools}
                found = await client.call_tool('memory_search', {'query': '视频下载'})
                return names, data(found)

        names, found = run(body, None)
        assert names == {'memory_search', 'memory_get', 'sessions_search', 'sessions_history'}
        assert found['results'][0]['path'] == 'memory/2026-11-28.md'

        initialize = {
            'jsonrpc': '2.0',
            'id': 1,
            'method': 'initialize',
            'params': {
                'protocolVersion': '2025-06-18',
                'capabilities': {},
                'clientInfo': {'name': 'curl', 'version': '1'},
            },
        }
        accept = {'Accept': 'application/json, text/event-stream'}
        good = {**accept, 'Authorization': f'Bearer {token}'}

        def post(headers):
            return httpx.post(url, json=initialize, headers=headers, timeout=30)

        assert post({**good, 'Origin': f'http://localhost:{port}'}).status_code == 200  # a local page is fine
        assert post({**good, 'Origin': 'http://evil.example'}).status_code in (400, 403)
        assert post({**good, 'Host': 'evil.example'}).status_code in (400, 403, 421)
        missing = post(accept)
        assert missing.status_code == 401 and missing.headers['WWW-Authenticate'].startswith('Bearer')
        wrong = post({**accept, 'Authorization': 'Bearer not-the-token'})
        assert wrong.status_code == 401 and 'invalid_token' in wrong.headers['WWW-Authenticate']
        assert token not in missing.text + wrong.text

        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_http_serves_concurrent_clients_in_parallel(agent, server):
    """Four concurrent calls overlap instead of queueing (the tools run in worker threads): each one's query embedding
    is held at a barrier until another call's is in flight too, which never happens when calls queue. How much
    faster that is: benches/timing.py (mcp_http_parallel)."""
    meet = threading.Barrier(2)
    overlapped = []

    def reply(request):
        texts = request['body']['input']
        if any(text.startswith('slow ') for text in texts):
            try:
                meet.wait(timeout=20)  # a hang guard: a server that queues calls breaks the barrier
                overlapped.append(True)
            except threading.BrokenBarrierError:
                overlapped.append(False)
        return 200, {}, {'data': [{'index': i, 'embedding': [1.0, 0.5]} for i in range(len(texts))]}

    server.reply = reply
    write_json5(
        agent.config,
        memory_config(
            agent.tmp,
            provider='openai-compatible',
            model='tiny',
            remote={'baseUrl': server.url + '/v1', 'apiKey': 'sk-test'},
        ),
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, '-m', 'memsift', 'mcp', *agent.args, '--http', str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(proc, port)

        async def body(_):
            async with Client(f'http://127.0.0.1:{port}/mcp', read_timeout_seconds=30) as client:
                for _ in range(200):  # until the first sync has indexed the files, vectors included
                    if data(await client.call_tool('memory_search', {'query': 'warm up'}))['mode'] == 'hybrid':
                        break
                    await anyio.sleep(0.1)
                results = []

                async def call(i):
                    result = await client.call_tool('memory_search', {'query': f'slow {i} vault', 'minScore': 0})
                    results.append(data(result))

                async with anyio.create_task_group() as group:
                    for i in range(4):
                        group.start_soon(call, i)
                return results

        results = run(body, None)
        assert len(results) == 4 and all(r['mode'] == 'hybrid' and r['results'] for r in results)
        assert overlapped == [True] * 4  # each call's embedding met another call's in flight
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stderr.close()


# ---------------------------------------------------------------- resources and output schemas, in process


def open_tools(tmp_path, **search):
    """Memory tools on ``tmp_path / 'ws'`` (keyword search; synced by the caller), the sessions of ``agent`` if any."""
    return memsift.MemoryTools.open(
        tmp_path / 'ws',
        memory_config(tmp_path, provider='none', **search),
        sessions_path=tmp_path / 'sessions.sqlite',
        sync=False,
    )


async def listed(client):
    """``resources/list``: ``{uri: resource}``."""
    return {r.uri: r for r in (await client.list_resources()).resources}


def test_resources_list_exactly_the_indexed_files(agent):
    shared = agent.tmp / 'shared'
    write(shared / 'notes.md', 'Shared: the on-call rota is in the wiki.\n')  # an extra path outside the workspace
    write(agent.ws / 'DREAMS.md', 'a dream diary: readable by memory_get, never indexed\n')

    async def body(tools):
        async with Client(build_server(tools)) as client:
            first = await listed(client)
            assert {r.name for r in first.values()} == set(tools.index.store.paths())
            assert set(first) == {
                'memsift://main/MEMORY.md',
                'memsift://main/memory/2026-11-28.md',
                'memsift://main/%2E%2E/shared/notes.md',  # `..` encoded, so no URI library resolves it away
            }
            assert all(r.mime_type == 'text/markdown' and 'memory_get' in r.description for r in first.values())
            shared_read = (await client.read_resource('memsift://main/%2E%2E/shared/notes.md')).contents[0]
            assert shared_read.text == tools.memory_get('../shared/notes.md')['text'] != ''

            # A new file appears once synced, its URI percent-encoded; a deleted one disappears.
            odd = 'memory/2026-11-20 stand-up #3 %done 会议.md'
            write(agent.ws / odd, 'Decided: ship on Thursday.\n')
            assert await listed(client) == first  # the index's files, not the folder's: not synced yet
            tools.index.sync()
            second = await listed(client)
            uri = 'memsift://main/memory/2026-11-20%20stand-up%20%233%20%25done%20%E4%BC%9A%E8%AE%AE.md'
            assert set(second) == set(first) | {uri} and second[uri].name == odd == tools.index.store.file(odd).path
            assert memory_uri('main', odd) == uri
            read = (await client.read_resource(uri)).contents[0]
            assert read.text == tools.memory_get(odd)['text'] == 'Decided: ship on Thursday.\n'

            (agent.ws / 'memory' / '2026-11-28.md').unlink()
            tools.index.sync()
            third = await listed(client)
            assert set(third) == set(second) - {'memsift://main/memory/2026-11-28.md'}
            assert {r.name for r in third.values()} == set(tools.index.store.paths())
            with pytest.raises(MCPError, match='memory/2026-11-28.md. is not an indexed memory file'):
                await client.read_resource('memsift://main/memory/2026-11-28.md')

    with open_tools(agent.tmp, extraPaths=[str(shared)]) as tools:
        tools.index.sync()
        run(body, tools)


def test_resource_read_is_memory_get(agent):
    """The same text as memory_get, bounded by the same 20,000-character cap; the rest of its answer in _meta."""
    big = '\n'.join(f'line {i:05d} of a long running log that keeps going' for i in range(1, 3001))
    write(agent.ws / 'memory' / 'big.md', big)

    async def body(tools):
        async with Client(build_server(tools)) as client:
            result = await client.read_resource('memsift://main/memory/big.md')
            got = tools.memory_get('memory/big.md')
            tool = data(await client.call_tool('memory_get', {'path': 'memory/big.md'}))
            small = (await client.read_resource('memsift://main/MEMORY.md')).contents[0]
        return result, got, tool, small

    with open_tools(agent.tmp) as tools:
        tools.index.sync()
        result, got, tool, small = run(body, tools)
    [content] = result.contents
    assert got == tool and got['truncated'] is True and len(got['text']) == 20_000 < len(big)
    assert content.text == got['text'] and content.uri == 'memsift://main/memory/big.md'
    assert content.mime_type == 'text/markdown'
    assert content.meta == {k: got[k] for k in ('from', 'lines', 'totalLines', 'truncated', 'nextFrom')}
    assert small.text == (agent.ws / 'MEMORY.md').read_text() and small.meta['totalLines'] == 4


BAD_URIS = [
    'memsift://other/MEMORY.md',  # another agent
    'memsift://main/memory/missing.md',  # not indexed
    'memsift://main/DREAMS.md',  # memory_get reads it, but it is not indexed: not a resource
    'memsift://main/secret.txt',  # in the workspace, not a memory file
    'memsift://main/memory/../MEMORY.md',  # `..` traversal, even to an indexed file
    'memsift://main/../secret.txt',
    'memsift://main/%2E%2E/%2E%2E/etc/passwd',
    'memsift://main/..%2Fsecret.txt',
    'memsift://main/./MEMORY.md',
    'memsift://main/memory%5C2026-11-28.md',  # a backslash is not a separator here
    'memsift://main//etc/passwd',  # absolute paths
    'memsift://main/%2Fetc%2Fpasswd',
    'memsift:///etc/passwd',
    'memsift://main/MEMORY.md%00',  # NUL, encoded and not
    'memsift://main/MEMORY.md\x00',
    'memsift://main/%ED%A0%80',  # a lone surrogate, UTF-8 encoded
    'memsift://main/%FF.md',  # not UTF-8
    'memsift://main/memory.md',
    'memsift://main',
    'memsift://main/',
    'file:///etc/passwd',  # unknown schemes
    'https://example.com/MEMORY.md',
    'MEMORY.md',
]


def test_bad_resource_uris_are_refused_naming_them(agent):
    write(agent.ws / 'DREAMS.md', 'dream: TOP-SECRET-DREAM\n')
    write(agent.ws / 'secret.txt', 'TOP-SECRET-WORKSPACE\n')
    write(agent.tmp / 'secret.txt', 'TOP-SECRET-OUTSIDE\n')

    async def body(tools):
        server = build_server(tools)
        refusals = {}
        async with Client(server) as client:
            for uri in BAD_URIS:
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                refusals[uri] = refused.value
            # A lone surrogate cannot be sent by the client (nor parsed from JSON by the transports): the server's
            # own refusal is checked directly.
            lone = 'memsift://main/\ud800'
            with pytest.raises(ResourceNotFoundError, match=re.escape(f'{lone!r} is not an indexed memory file')):
                await server.read_resource(lone)
            assert (await client.read_resource('memsift://main/MEMORY.md')).contents[0].text.startswith('# Facts')
        return refusals

    with open_tools(agent.tmp) as tools:
        tools.index.sync()
        refusals = run(body, tools)
    for uri, error in refusals.items():
        assert error.code == -32602, (uri, error)  # invalid params: the resource does not exist
        assert uri in error.message or repr(uri) in error.message, (uri, error.message)
        assert 'TOP-SECRET' not in error.message + json.dumps(error.data)
    assert "this server serves the memory of agent 'main' only" in refusals['memsift://other/MEMORY.md'].message
    assert 'not an indexed memory file' in refusals['memsift://main/../secret.txt'].message
    assert refusals['file:///etc/passwd'].message == 'Unknown resource: file:///etc/passwd'


def schema_errors(schema, instance):
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(instance)]


def test_output_schemas_validate_every_result(agent):
    """Each tool's declared outputSchema holds for its real results, errors included (the SDK's client validates
    every successful result against it already: a mismatch would raise in call_tool)."""

    async def body(tools):
        async with Client(build_server(tools)) as client:
            schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
            calls = [
                ('memory_search', {'query': 'deploy key vault', 'minScore': 0}, False),
                ('memory_search', {'query': '会议 nothing like this', 'corpus': 'all'}, False),
                ('memory_search', {'query': 'orion-7', 'corpus': 'sessions'}, False),  # with its warning
                ('memory_get', {'path': 'MEMORY.md', 'from': 2, 'lines': 1}, False),
                ('memory_get', {'path': 'memory/2026-11-28.md', 'from': 99}, False),  # past the end: no lines
                ('memory_get', {'path': '../../etc/passwd'}, True),
                ('memory_get', {'path': 'DREAMS.md'}, True),  # readable if present; it is not
                ('sessions_search', {'query': 'orion-7'}, False),
                ('sessions_search', {'query': 'when is the database migration 数据库迁移', 'limit': 1}, False),
                ('sessions_search', {'query': '   '}, True),
                ('sessions_search', {'query': 'x', 'sessionKey': 'agent:other:main'}, True),
                ('sessions_history', {'sessionKey': MAIN, 'limit': 2}, False),
                ('sessions_history', {'sessionKey': SUB, 'includeTools': True}, False),
                ('sessions_history', {'sessionKey': 'agent:other:main'}, True),
            ]
            results = []
            for name, arguments, failed in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error is failed, (name, arguments, result)
                results.append((name, data(result)))
        return schemas, results

    with open_tools(agent.tmp) as tools:
        tools.index.sync()
        schemas, results = run(body, tools)
        # memory_search's own error dict: the MCP layer turns away what causes it, so the Python tool gives it.
        results.append(('memory_search', tools.memory_search('x', maxResults=0)))
    assert schemas == SERVED
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema['type'] == 'object'  # what tools/list requires of an outputSchema's root
    shapes = {(name, tuple(sorted(result))) for name, result in results}
    assert len(shapes) >= 9  # successes and errors of each tool, not one shape over and over
    assert {result.get('status') for _, result in results} >= {'error', 'forbidden'}
    for name, result in results:
        assert schema_errors(schemas[name], result) == [], (name, result)

    # Search unavailable (disabled here; a failing embedding provider gives the same shape) is no error result,
    # so the client validated it; and the schemas are not vacuous.
    write_json5(agent.config, memory_config(agent.tmp, provider='none', enabled=False))
    with memsift.MemoryTools.open(agent.ws, str(agent.config), sessions_path=agent.tmp / 'sessions.sqlite') as off:

        async def disabled(tools):
            async with Client(build_server(tools)) as client:
                return await client.call_tool('memory_search', {'query': 'vault'})

        result = run(disabled, off)
    assert not result.is_error and data(result)['unavailable'] is True
    assert schema_errors(OUTPUT_SCHEMAS['memory_search'], data(result)) == []
    for name, bad in (
        ('memory_search', {'results': 'none'}),
        (
            'memory_search',
            {
                'results': [{'path': 'MEMORY.md'}],
                'provider': 'none',
                'model': 'x',
                'citations': 'auto',
                'mode': 'fts-only',
                'debug': {},
            },
        ),
        ('memory_get', {'path': 'MEMORY.md', 'text': 'x'}),
        ('sessions_search', {'status': 'oops', 'error': 'x'}),
        ('sessions_history', {'sessionKey': MAIN, 'sessionId': 's', 'messages': [{'id': 'm1'}]}),
    ):
        assert schema_errors(OUTPUT_SCHEMAS[name], bad), (name, bad)


# ---------------------------------------------------------------- agents sharing one PostgreSQL database


def test_agents_sharing_a_postgres_database_see_only_their_own_memory_and_sessions(tmp_path, pg_dsn):
    """Two agents' MCP servers on one database: each one's tools and resources answer from its own rows only."""
    opened = []
    for name, fact, said in (
        ('main', 'The deploy key lives in the team vault.', 'the cluster is named orion-7'),
        ('bob', 'Bob keeps the launch codes in the blue binder.', 'the staging password rotates on Fridays'),
    ):
        ws = tmp_path / name
        write(ws / 'MEMORY.md', f'{fact}\n')
        store = {'backend': 'postgres', 'dsn': pg_dsn, 'path': str(tmp_path / 'state' / '{agentId}.sqlite')}
        config = {'agents': {'defaults': {'memorySearch': {'store': store, 'provider': 'none'}}}}
        tools = memsift.MemoryTools.open(ws, config, name, sync=False)
        tools.index.sync()
        tools.sessions.append(f'agent:{name}:main', message(f'{name}-1', None, 'user', said))
        opened.append(tools)
    main, bob = opened

    async def body():
        async with Client(build_server(main)) as client:
            found = data(await client.call_tool('memory_search', {'query': 'launch codes blue binder'}))
            assert found['results'] == []
            found = data(await client.call_tool('memory_search', {'query': 'deploy key vault'}))
            assert [hit['path'] for hit in found['results']] == ['MEMORY.md']
            said = data(await client.call_tool('sessions_search', {'query': 'staging password'}))
            assert said['results'] == []
            said = data(await client.call_tool('sessions_search', {'query': 'orion-7'}))
            assert [hit['sessionKey'] for hit in said['results']] == ['agent:main:main']
            history = (await client.call_tool('sessions_history', {'sessionKey': 'agent:bob:main'})).content[0].text
            assert 'forbidden' in history and 'staging' not in history
            assert set(await listed(client)) == {'memsift://main/MEMORY.md'}

    try:
        run(body)
    finally:
        for tools in opened:
            tools.close()
