"""``memsift mcp``: the MCP server run as a real subprocess and driven by the official SDK's client, over stdio and
streamable HTTP (plus plain HTTP requests for the Host, Origin and token checks)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import anyio
import httpx
import httpx2
import pytest
from conftest import memory_config, write
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

import memsift

pytestmark = pytest.mark.timeout(60)

MAIN = 'agent:main:main'
SUB = 'agent:main:subagent:certs'
T0 = 1767225600000  # 2026-01-01, in milliseconds
SEARCH_KEYS = {'path', 'startLine', 'endLine', 'score', 'snippet', 'source', 'corpus'}
HIT_KEYS = {'sessionKey', 'timestamp', 'role', 'snippet', 'score', 'sessionId', 'messageId'}


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
    body = json.dumps(config['memory'], ensure_ascii=False, indent=2)
    write(path, f'// written by test_mcp.py\n{{\n  memory: {body},\n}}\n')


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
                'memory_search': {'query', 'maxResults', 'minScore', 'corpus'},
                'memory_get': {'path', 'from', 'lines'},
                'sessions_search': {'query', 'sessionKey', 'limit'},
                'sessions_history': {'sessionKey', 'limit', 'includeTools'},
            }
            assert tools['memory_search'].input_schema['required'] == ['query']
            assert tools['memory_get'].input_schema['required'] == ['path']
            assert tools['memory_search'].input_schema['properties']['corpus']['enum'] == ['memory', 'sessions', 'all']
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
    """A slow embedding provider (2 s per query) behind a 0.05 s deadline: keyword results, marked partial."""

    def reply(request):
        texts = request['body']['input']
        if any(SLOW_QUERY in text for text in texts):
            time.sleep(2)
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
            started = time.monotonic()
            slow = await client.call_tool('memory_search', {'query': SLOW_QUERY, 'minScore': 0})
            elapsed = time.monotonic() - started
            return data(slow), elapsed

    result, elapsed = run(body, agent)
    assert result.get('partial') is True and 'keyword results' in result['warning'], result
    assert result['results'][0]['path'] == 'MEMORY.md' and elapsed < 1.5
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
    """Two slow calls (0.8 s of provider time each) overlap instead of queueing: the tools run in worker threads."""

    def reply(request):
        texts = request['body']['input']
        if any(text.startswith('slow ') for text in texts):
            time.sleep(0.8)
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
                timings = []

                async def call(i):
                    started = time.monotonic()
                    result = await client.call_tool('memory_search', {'query': f'slow {i} vault', 'minScore': 0})
                    timings.append((time.monotonic() - started, data(result)))

                started = time.monotonic()
                async with anyio.create_task_group() as group:
                    for i in range(4):
                        group.start_soon(call, i)
                return time.monotonic() - started, timings

        total, timings = run(body, None)
        assert len(timings) == 4 and all(r['mode'] == 'hybrid' and r['results'] for _, r in timings)
        assert min(seconds for seconds, _ in timings) >= 0.8 and total < 4 * 0.8 * 0.75, total  # serial: 3.2 s
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stderr.close()
