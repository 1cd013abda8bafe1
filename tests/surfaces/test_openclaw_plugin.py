"""The OpenClaw memory plugin memsift ships (``python/memsift/openclaw_plugin``): its manifest and package.json, and,
where Node 18+ is on PATH, ``index.js`` itself.

Node drives the plugin through a small fake of OpenClaw's plugin API: ``registerTool``, ``registerService``,
``registerMemoryCapability``, ``pluginConfig`` and ``logger``, called the way OpenClaw 2026.9.6 calls them. The
plugin talks to a real ``memsift mcp --openclaw`` child (``sys.executable -m memsift``) on a temporary OpenClaw home.
A scripted MCP server stands in for memsift where a child has to hang or crash on cue. Neither npm nor OpenClaw is
needed; ``benches/openclaw_plugin.py`` is the end-to-end proof against the real OpenClaw.
"""

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import write

import memsift
from memsift.openclaw_plugin import plugin_dir

pytestmark = pytest.mark.timeout(120)

PLUGIN = plugin_dir()
TOOLS = ['memory_search', 'memory_get']
MEMSIFT = [sys.executable, '-m', 'memsift']

# memory-core's parameter schemas in OpenClaw 2026.9.6 (dist/memory-tool-contract-*.mjs), verbatim.
MEMORY_SEARCH_SCHEMA = {
    'type': 'object',
    'properties': {
        'query': {'type': 'string'},
        'maxResults': {'type': 'integer', 'minimum': 1},
        'minScore': {'type': 'number'},
        'corpus': {'type': 'string', 'enum': ['memory', 'wiki', 'all', 'sessions']},
    },
    'required': ['query'],
    'additionalProperties': False,
}
MEMORY_GET_SCHEMA = {
    'type': 'object',
    'properties': {
        'path': {'type': 'string'},
        'from': {'type': 'integer', 'minimum': 1},
        'lines': {'type': 'integer', 'minimum': 1},
        'corpus': {'type': 'string', 'enum': ['memory', 'wiki', 'all']},
    },
    'required': ['path'],
    'additionalProperties': False,
}


def read_json(name: str) -> dict:
    return json.loads((PLUGIN / name).read_text(encoding='utf-8'))


# ---------------------------------------------------------------- the files (no Node needed)


def test_plugin_dir_holds_the_plugin():
    assert PLUGIN.is_dir() and PLUGIN.name == 'openclaw_plugin'
    for name in ('package.json', 'openclaw.plugin.json', 'index.js', 'README.md'):
        assert (PLUGIN / name).is_file(), f'{name} missing from {PLUGIN}'


def test_manifest_declares_a_memory_plugin_with_the_tools_it_registers():
    manifest = read_json('openclaw.plugin.json')
    assert manifest['id'] == 'memsift' and manifest['kind'] == 'memory'
    assert manifest['contracts']['tools'] == TOOLS
    schema = manifest['configSchema']
    assert schema['type'] == 'object'
    # memsift's own settings (store, query.rerank, ...) live in the same object: other keys must pass validation.
    assert schema['additionalProperties'] is True
    props = schema['properties']
    assert props['command'] == {'type': 'string', 'minLength': 1}
    assert props['args'] == {'type': 'array', 'items': {'type': 'string'}}
    assert props['deadlineMs']['type'] == 'integer' and props['deadlineMs']['minimum'] >= 1000
    assert props['env'] == {'type': 'object', 'additionalProperties': {'type': 'string'}}
    assert set(manifest['uiHints']) <= set(props)
    # the tools index.js registers are the ones the manifest declares (the Node tests check it at run time too)
    source = (PLUGIN / 'index.js').read_text(encoding='utf-8')
    assert re.findall(r'names: \["(\w+)"\]', source) == TOOLS


def test_package_json_points_openclaw_at_index_js():
    package = read_json('package.json')
    assert package['name'] == read_json('openclaw.plugin.json')['id']  # else OpenClaw warns on install
    assert package['type'] == 'module' and package['private'] is True
    assert package['openclaw']['extensions'] == ['./index.js']
    assert {'index.js', 'openclaw.plugin.json', 'README.md'} <= set(package['files'])
    assert not package.get('dependencies'), 'the plugin runs as shipped: no npm install'
    assert package['version'] == memsift.__version__, (
        'bump version in python/memsift/openclaw_plugin/package.json with Cargo.toml'
    )


def test_a_built_wheel_that_ships_the_plugin_ships_all_of_it():
    wheels = sorted((Path(__file__).resolve().parents[2] / 'target' / 'wheels').glob('memsift-*.whl'))
    names = set(zipfile.ZipFile(wheels[-1]).namelist()) if wheels else set()
    if 'memsift/openclaw_plugin/__init__.py' not in names:
        pytest.skip('no built wheel with memsift/openclaw_plugin in target/wheels (`make wheels` builds one)')
    for name in ('package.json', 'openclaw.plugin.json', 'index.js', 'README.md'):
        assert f'memsift/openclaw_plugin/{name}' in names


# ---------------------------------------------------------------- index.js under Node, with a fake plugin API

DRIVER = r"""
import { pathToFileURL } from "node:url";
const [indexPath, configJson, callsJson] = process.argv.slice(2);
const plugin = (await import(pathToFileURL(indexPath).href)).default;
const tools = new Map(), services = [], logs = [];
let capability;
const log = (level) => (message) => logs.push([level, String(message)]);
const api = {
  id: "memsift", name: "memsift memory", registrationMode: "full", config: {}, pluginConfig: JSON.parse(configJson),
  logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
  registerTool(factory, options) { for (const name of options.names) tools.set(name, factory); },
  registerService(service) { services.push(service); },
  registerMemoryCapability(value) { capability = value; },
};
plugin.register(api);
for (const service of services) await service.start?.({ logger: api.logger });
const out = {
  id: plugin.id,
  registered: [...tools.keys()],
  parameters: Object.fromEntries([...tools].map(([name, factory]) => [name, factory({}).parameters])),
  services: services.map((service) => service.id),
  prompt: capability?.promptBuilder({ availableTools: new Set(["memory_search", "memory_get", "sessions_search"]), citationsMode: "auto" }),
  calls: [],
};
for (const call of JSON.parse(callsJson)) {
  const tool = tools.get(call.tool)(call.ctx ?? {});
  const signal = call.abortAfterMs === undefined ? undefined : AbortSignal.timeout(call.abortAfterMs);
  const started = performance.now();
  try {
    const result = await tool.execute(`call-${out.calls.length}`, call.args, signal);
    out.calls.push({ ms: performance.now() - started, result });
  } catch (error) {
    out.calls.push({ ms: performance.now() - started, thrown: error?.name ?? String(error) });
  }
}
const pids = [...(globalThis[Symbol.for("memsift.openclaw.children")]?.values() ?? [])].map((child) => child.child.pid);
await Promise.all(services.map((service) => service.stop?.({})));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
out.childrenBeforeStop = pids.length;
out.aliveAfterStop = pids.filter(alive);
out.logs = logs;
console.log(JSON.stringify(out));
"""

# A stdio MCP server on cue: query "hang" is never answered, "crash" exits 3; every message it gets is logged.
SCRIPTED_SERVER = r"""
import json, os, sys
log = open(os.environ['SCRIPTED_LOG'], 'a')
for line in sys.stdin:
    msg = json.loads(line)
    log.write(json.dumps({'pid': os.getpid(), **msg}) + '\n')
    log.flush()
    if msg.get('method') == 'initialize':
        out = {'protocolVersion': '2025-06-18', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'scripted', 'version': '0'}}
    elif msg.get('method') == 'tools/call':
        query = msg['params']['arguments'].get('query', '')
        if query == 'hang':
            continue
        if query == 'crash':
            print('scripted: crashing as asked', file=sys.stderr, flush=True)
            sys.exit(3)
        out = {'content': [{'type': 'text', 'text': '{}'}], 'structuredContent': {'results': [], 'pid': os.getpid()}}
    else:
        continue
    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': out}), flush=True)
"""


@pytest.fixture(scope='module')
def node() -> str:
    found = shutil.which('node')
    if not found:
        pytest.skip('node is not on PATH: the plugin runs under Node 18+')
    version = subprocess.run([found, '--version'], capture_output=True, text=True, timeout=30).stdout.strip()
    major = int(version.lstrip('v').split('.')[0] or 0)
    if major < 18:
        pytest.skip(f'node {version} on PATH: the plugin needs Node 18+')
    return found


@pytest.fixture
def home(tmp_path):
    """An OpenClaw 2.x setup: agents main and ops with a note each; the environment that points memsift at it."""
    ws, ops = tmp_path / 'ws', tmp_path / 'ws-ops'
    write(ws / 'memory' / '2026-09-01.md', '# Deploy checklist\n\n- run migrations\n- notify #ops\n')
    write(ops / 'MEMORY.md', '# Ops\nThe pager rotation starts on Mondays.\n')
    entries = {'main': {'default': True}, 'ops': {'workspace': str(ops)}}
    config = {
        'memory': {'search': {'provider': 'none'}},
        'agents': {'defaults': {'workspace': str(ws)}, 'entries': entries},
    }
    write(tmp_path / 'etc' / 'openclaw.json', json.dumps(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith(('OPENCLAW_', 'MEMSIFT_'))}
    env.update(
        HOME=str(tmp_path / 'home'),
        OPENCLAW_STATE_DIR=str(tmp_path / 'state'),
        OPENCLAW_CONFIG_PATH=str(tmp_path / 'etc' / 'openclaw.json'),
    )
    (tmp_path / 'home').mkdir()
    return env


def drive(node, tmp_path, env, config, calls) -> dict:
    """Register the plugin with ``config`` as its pluginConfig, make ``calls``, stop its service; what happened."""
    driver = tmp_path / 'driver.mjs'
    driver.write_text(DRIVER, encoding='utf-8')
    done = subprocess.run(
        [node, str(driver), str(PLUGIN / 'index.js'), json.dumps(config), json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=100,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out['aliveAfterStop'] == [], 'stop() left memsift children running'
    return out


def details(call: dict) -> dict:
    """A tool result's payload, checked to be OpenClaw's jsonResult shape (the same JSON as text and details)."""
    result = call['result']
    assert result['content'][0]['type'] == 'text'
    assert json.loads(result['content'][0]['text']) == result['details']
    return result['details']


def real_memsift(**extra) -> dict:
    return {'command': MEMSIFT[0], 'args': MEMSIFT[1:], **extra}


def test_registration_is_memory_cores_contract(node, tmp_path, home):
    out = drive(node, tmp_path, home, real_memsift(), [])
    assert out['id'] == 'memsift' and out['registered'] == TOOLS
    assert out['parameters'] == {'memory_search': MEMORY_SEARCH_SCHEMA, 'memory_get': MEMORY_GET_SCHEMA}
    assert out['services'] == ['memsift-mcp'] and out['childrenBeforeStop'] == 0  # nothing starts before a call
    assert out['prompt'][0] == '## Memory Recall' and any('sessions_search' in line for line in out['prompt'])


def test_memory_tools_answer_from_a_real_memsift_per_agent(node, tmp_path, home):
    main = {'agentId': 'main', 'sessionKey': 'agent:main:main'}
    calls = [
        {'tool': 'memory_search', 'args': {'query': 'deploy checklist', 'maxResults': 3}, 'ctx': main},
        {'tool': 'memory_get', 'args': {'path': 'memory/2026-09-01.md', 'from': 3, 'lines': 2}, 'ctx': main},
        {'tool': 'memory_get', 'args': {'path': 'memory/missing.md', 'corpus': 'memory'}, 'ctx': main},
        {'tool': 'memory_search', 'args': {'query': 'pager rotation', 'corpus': 'all', 'minScore': 0}, 'ctx': main},
        {'tool': 'memory_search', 'args': {'query': 'pager rotation'}, 'ctx': {'agentId': 'ops'}},
        {'tool': 'memory_search', 'args': {'query': 'deploy', 'corpus': 'wiki'}, 'ctx': main},
    ]
    out = drive(node, tmp_path, home, real_memsift(), calls)
    found, read, missing, elsewhere, ops, wiki = (details(call) for call in out['calls'])
    assert [hit['path'] for hit in found['results']] == ['memory/2026-09-01.md']
    assert found['results'][0]['snippet'].startswith('# Deploy checklist')
    assert found['debug']['backend'] == 'memsift'
    assert read['text'].startswith('- run migrations\n- notify #ops') and read['from'] == 3
    assert missing['text'] == '' and not missing.get('code', '').startswith('MEMSIFT_')  # memsift's answer, unchanged
    assert elsewhere['results'] == [] and elsewhere['debug']['backend'] == 'memsift'  # main cannot see ops' notes
    assert [hit['path'] for hit in ops['results']] == ['MEMORY.md'] and ops['debug']['backend'] == 'memsift'
    assert out['childrenBeforeStop'] == 2  # one child per agent, reused across its calls
    # memsift answers corpus=wiki as OpenClaw does without a wiki plugin (an older memsift refuses the argument)
    not_registered = {'corpus': 'wiki', 'outcome': 'not-registered'} in wiki.get('corpora', [])
    assert wiki['results'] == [] and (not_registered or wiki['code'] == 'MEMSIFT_TOOL_ERROR')
    assert out['calls'][1]['ms'] < 2000, 'a call to a running child is not a process start'


def test_the_calling_session_reaches_memsift(node, tmp_path, home):
    server = importlib.import_module('memsift.tools.mcp.server')
    if not hasattr(server, 'SESSION_META_KEY'):
        pytest.skip("memsift mcp does not read the calling session from tools/call's _meta yet")
    calls = [
        {'tool': 'memory_search', 'args': {'query': 'deploy checklist'}, 'ctx': {'agentId': 'main', 'sessionKey': key}}
        for key in ('agent:main:main', 'agent:main:telegram:group:42')
    ]
    direct, group = (details(call) for call in drive(node, tmp_path, home, real_memsift(), calls)['calls'])
    # citations "auto": cited in a direct chat, not in a group
    assert direct['results'][0]['citation'] == 'memory/2026-09-01.md#L1-L5'
    assert 'citation' not in group['results'][0]


def test_failures_come_back_in_memory_cores_shapes_with_an_action(node, tmp_path, home):
    calls = [
        {'tool': 'memory_search', 'args': {'query': 'deploy'}, 'ctx': {'agentId': 'main'}},
        {'tool': 'memory_get', 'args': {'path': 'MEMORY.md'}, 'ctx': {'agentId': 'main'}},
    ]
    out = drive(node, tmp_path, home, {'command': str(tmp_path / 'no-such-memsift')}, calls)
    search, get = (details(call) for call in out['calls'])
    assert search['results'] == [] and search['disabled'] is True and search['unavailable'] is True
    assert search['code'] == 'MEMSIFT_NOT_FOUND' and 'no-such-memsift' in search['error']
    assert 'pip install memsift' in search['action'] and 'plugins.entries.memsift.config.command' in search['action']
    assert search['debug']['action'] == search['action']
    same = {key: search[key] for key in ('code', 'error', 'action')}
    assert get == {'path': 'MEMORY.md', 'text': '', 'status': 'error', **same}
    assert any(level == 'warn' and 'memory_search failed' in message for level, message in out['logs'])

    # memsift starts but cannot serve (here: no OpenClaw config): its own message comes back
    broken = {**home, 'OPENCLAW_CONFIG_PATH': str(tmp_path / 'nowhere.json')}
    search, get = (details(call) for call in drive(node, tmp_path, broken, real_memsift(), calls)['calls'])
    assert search['code'] == get['code'] == 'MEMSIFT_EXITED' and search['unavailable'] is True
    assert 'no OpenClaw config' in search['error'] and 'mcp --openclaw' in search['action']


def test_a_stuck_or_crashed_child_is_replaced_and_a_cancelled_call_is_not(node, tmp_path):
    script, log = tmp_path / 'scripted.py', tmp_path / 'scripted.jsonl'
    script.write_text(SCRIPTED_SERVER, encoding='utf-8')
    env = {**os.environ, 'SCRIPTED_LOG': str(log)}
    ctx = {'agentId': 'main', 'sessionKey': 'agent:main:chat'}
    calls = [
        {'tool': 'memory_search', 'args': {'query': 'ok'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'hang'}, 'ctx': ctx, 'abortAfterMs': 300},
        {'tool': 'memory_search', 'args': {'query': 'ok'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'hang'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'ok'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'crash'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'ok'}, 'ctx': ctx},
        {'tool': 'memory_search', 'args': {'query': 'ok', 'maxResults': 2, 'minScore': 7, 'corpus': 'all'}, 'ctx': ctx},
        {'tool': 'memory_get', 'args': {'path': 'MEMORY.md', 'from': 2, 'corpus': 'memory'}, 'ctx': ctx},
    ]
    out = drive(node, tmp_path, env, {'command': sys.executable, 'args': [str(script)], 'deadlineMs': 1000}, calls)
    first, cancelled, after_cancel, stuck, after_stuck, crashed, after_crash, _, _ = out['calls']
    assert cancelled['thrown'] == 'TimeoutError'  # the abort reaches OpenClaw as the signal's reason
    assert details(after_cancel)['pid'] == details(first)['pid']  # a cancelled call keeps the child
    timed_out = details(stuck)
    assert timed_out['code'] == 'MEMSIFT_TIMEOUT' and timed_out['timedOut'] is True
    assert 'deadlineMs' in timed_out['action']
    assert 900 <= stuck['ms'] < 5000
    assert details(after_stuck)['pid'] != details(first)['pid']  # the stuck child was replaced
    died = details(crashed)
    assert died['code'] == 'MEMSIFT_EXITED' and 'code 3' in died['error'] and 'crashing as asked' in died['error']
    assert details(after_crash)['pid'] not in (details(first)['pid'], details(after_stuck)['pid'])

    received = [json.loads(line) for line in log.read_text(encoding='utf-8').splitlines()]
    calls_seen = [m for m in received if m.get('method') == 'tools/call']
    assert all(m['params']['_meta'] == {'memsift/sessionKey': 'agent:main:chat'} for m in calls_seen)
    assert [m['params']['requestId'] for m in received if m.get('method') == 'notifications/cancelled'] == [
        calls_seen[1]['id']
    ]
    # memory-core's arguments go to memsift as given, minScore brought into memsift's 0..1
    assert [m['params']['arguments'] for m in calls_seen[-2:]] == [
        {'query': 'ok', 'maxResults': 2, 'minScore': 1, 'corpus': 'all'},
        {'path': 'MEMORY.md', 'from': 2, 'corpus': 'memory'},
    ]
    first_start = next(m for m in received if m.get('method') == 'initialize')
    assert first_start['params']['protocolVersion'] and first_start['params']['clientInfo']['name']
