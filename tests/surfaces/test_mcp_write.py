"""Writing memory from the surfaces: ``memsift write`` (a real subprocess), ``MemoryTools.memory_write``, and the MCP
server's ``memory_write``, served only with ``--allow-write`` and driven by the official SDK's client (in process,
and ``memsift mcp --allow-write`` over stdio), with a second process searching what it wrote."""

import json
import subprocess
import sys
import time

import anyio
import pytest
from conftest import memory_config, write
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import memsift
from memsift.errors import StoreError
from memsift.tools.mcp import build_server
from memsift.tools.mcp.texts import INSTRUCTIONS, WRITE_INSTRUCTIONS

pytestmark = pytest.mark.timeout(90)

FOUR = ['memory_search', 'memory_get', 'sessions_search', 'sessions_history']


@pytest.fixture
def agent(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\n')
    config = tmp_path / 'openclaw.json'
    config.write_text(json.dumps(memory_config(tmp_path, provider='none')))
    store = tmp_path / 'state' / 'main.sqlite'
    return ws, config, store


def memsift_cli(*args, stdin=None, check=True):
    proc = subprocess.run(
        [sys.executable, '-m', 'memsift', *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def search_paths(ws, store, query):
    """What a second process finds, without syncing itself: only what a writer has indexed."""
    done = memsift_cli('search', query, '--workspace', ws, '--store', store, '--no-sync', '--json', '--min-score', 0)
    return [hit['path'] for hit in json.loads(done.stdout)['results']]


# ---------------------------------------------------------------- memsift write


def test_cli_write_from_an_argument_and_from_stdin(agent):
    ws, _, store = agent
    common = ['--workspace', ws, '--store', store]
    done = json.loads(memsift_cli('write', 'Quokkas visit the patio at dusk.', *common, '--json').stdout)
    assert done['path'].startswith('memory/') and (done['startLine'], done['chars']) == (1, 32)
    assert search_paths(ws, store, 'quokkas patio') == [done['path']]
    line = memsift_cli('write', '-', '--path', 'memory/projects/deploy.md', *common, stdin='Deploy on Thursdays.\n')
    assert line.stdout.strip() == 'wrote memory/projects/deploy.md:1-1 (20 characters)'
    assert (ws / 'memory' / 'projects' / 'deploy.md').read_text() == 'Deploy on Thursdays.\n'
    assert search_paths(ws, store, 'thursdays')[0] == 'memory/projects/deploy.md'


def test_cli_write_refusals_name_the_argument_and_exit_1(agent):
    ws, _, store = agent
    common = ['--workspace', ws, '--store', store]
    empty = memsift_cli('write', '  ', *common, check=False)
    assert empty.returncode == 1 and empty.stderr.strip() == (
        'memsift: text is empty (or only whitespace): pass the note to write'
    )
    huge = memsift_cli('write', '-', *common, '--json', stdin='x' * (10 * 1024 * 1024), check=False)
    error = json.loads(huge.stdout)
    assert huge.returncode == 1 and error['type'] == 'InvalidInputError'
    assert error['error'].startswith('text is ') and 'at most 20,000' in error['error']
    outside = memsift_cli('write', 'x', '--path', '../escape.md', *common, check=False)
    assert outside.returncode == 1 and outside.stderr.startswith("memsift: path '../escape.md' must not hold")
    assert not (ws / 'memory').exists() and not (ws.parent / 'escape.md').exists()


# ---------------------------------------------------------------- MemoryTools.memory_write


def open_tools(tmp_path, ws, **kwargs):
    config = memory_config(tmp_path, provider='none')
    return memsift.MemoryTools.open(ws, config, sessions_path=tmp_path / 'sessions.sqlite', sync=False, **kwargs)


def test_tools_write_and_report_errors_as_the_other_tools_do(tmp_path, agent, monkeypatch):
    ws = agent[0]
    with open_tools(tmp_path, ws) as tools:
        written = tools.memory_write('The staging database is pg-stage-2.', 'memory/infra.md')
        assert written == {'path': 'memory/infra.md', 'startLine': 1, 'endLine': 1, 'chars': 35}
        found = tools.memory_search('staging database', minScore=0)['results']
        assert found[0]['path'] == 'memory/infra.md'
        assert tools.memory_get('memory/infra.md', written['startLine'])['text'].startswith('The staging')
        assert tools.memory_write('') == {
            'status': 'error',
            'error': 'text is empty (or only whitespace): pass the note to write',
        }
        assert tools.memory_write('x', 'MEMORY.md')['error'].startswith("path 'MEMORY.md' is not under memory/")

        # Written, but indexing fails (or runs past the deadline): said in a warning, never an error to retry.
        def broken(*args, **kwargs):
            raise StoreError('the store is read-only')

        monkeypatch.setattr(tools.index, 'sync', broken)
        late = tools.memory_write('Indexed later.', 'memory/infra.md')
        assert late['startLine'] == 3 and 'the note was written' in late['warning']
        assert 'do not write it again' in late['warning']
        assert (ws / 'memory' / 'infra.md').read_text().endswith('\n\nIndexed later.\n')


# ---------------------------------------------------------------- MCP


async def listing(client):
    tools = (await client.list_tools()).tools
    return {tool.name: tool for tool in tools}, [tool.model_dump_json() for tool in tools]


def test_mcp_without_allow_write_is_unchanged_and_with_it_adds_memory_write(tmp_path, agent):
    async def body(tools):
        async with Client(build_server(tools)) as client:
            off, off_json = await listing(client)
            off_instructions = client.instructions
        async with Client(build_server(tools, allow_write=False)) as client:
            assert (await listing(client))[1] == off_json
        async with Client(build_server(tools, allow_write=True)) as client:
            on, on_json = await listing(client)
            on_instructions = client.instructions
            result = await client.call_tool('memory_write', {'text': 'Lunch is at noon.', 'path': 'memory/a.md'})
            assert not result.is_error and result.structured_content['path'] == 'memory/a.md'
            for arguments, named in (
                ({'text': ''}, 'text'),
                ({'text': 'x' * (10 * 1024 * 1024)}, 'text'),
                ({'text': ' '}, 'text is empty'),
                ({'text': 'x', 'path': '/etc/passwd.md'}, "path '/etc/passwd.md' is absolute"),
            ):
                refused = await client.call_tool('memory_write', arguments)
                assert refused.is_error and named in refused.content[0].text, (arguments, refused)
        return off, off_json, off_instructions, on, on_json, on_instructions

    with open_tools(tmp_path, agent[0]) as tools:
        off, off_json, off_instructions, on, on_json, on_instructions = anyio.run(body, tools)
    assert list(off) == FOUR and 'memory_write' not in ''.join(off_json) and off_instructions == INSTRUCTIONS
    assert list(on) == [*FOUR, 'memory_write'] and on_json[:4] == off_json
    assert on_instructions == f'{INSTRUCTIONS} {WRITE_INSTRUCTIONS}' and '--allow-write' in on_instructions
    tool = on['memory_write']
    hints = tool.annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (False, False, False)
    assert all(on[name].annotations.read_only_hint for name in FOUR)
    assert tool.input_schema['required'] == ['text'] and set(tool.input_schema['properties']) == {'text', 'path'}
    assert tool.input_schema['properties']['text']['maxLength'] == 20_000
    assert '--allow-write' in tool.description and 'memory/YYYY-MM-DD.md' in tool.description
    assert (agent[0] / 'memory' / 'a.md').read_text() == 'Lunch is at noon.\n'


def test_mcp_stdio_allow_write_a_note_found_at_once_here_and_by_another_process(tmp_path, agent):
    ws, config, store = agent
    params = StdioServerParameters(
        command=sys.executable,
        args=['-m', 'memsift', 'mcp', '--allow-write', '--workspace', str(ws), '--config', str(config)]
        + ['--sessions-db', str(tmp_path / 'sessions.sqlite')],
        cwd=str(tmp_path),
    )

    async def body():
        with (tmp_path / 'server.log').open('a') as log, anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=log), read_timeout_seconds=30) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert names == [*FOUR, 'memory_write']
                started = time.monotonic()
                result = await client.call_tool('memory_write', {'text': 'The orion-7 cluster runs Kubernetes 1.31.'})
                written = result.structured_content
                assert not result.is_error, written
                found = await client.call_tool('memory_search', {'query': 'orion-7 kubernetes', 'minScore': 0})
                assert found.structured_content['results'][0]['path'] == written['path']
                # A second process, which does not sync: the server's write indexed it before answering.
                assert search_paths(ws, store, 'orion-7 kubernetes')[0] == written['path']
                return written, time.monotonic() - started

    written, seconds = anyio.run(body)
    assert written['path'].startswith('memory/') and written['startLine'] == 1
    assert seconds < 30, seconds  # generous: the point is that nothing waits for a watcher or a poll
    assert (
        '"write": true' in (tmp_path / 'server.log').read_text()
        or 'memory_write on' in (tmp_path / 'server.log').read_text()
    )
