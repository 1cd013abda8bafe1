"""The OpenClaw memory plugin end to end: the real OpenClaw 2026.9.6 Gateway answers ``memory_search`` and
``memory_get`` through memsift, timed against memory-core's builtin engine in the same run.

Everything lives in a temporary root (HOME, state folder, config, workspace) and stays on 127.0.0.1:

1. A workspace of ``--notes`` synthetic daily notes, and a config holding only the Gateway mode, the workspace and
   ``memory.search.provider: "none"``: keyword-only on both sides, so the comparison is of engines, not of models.
2. memory-core (OpenClaw's default) serves the tools. A loopback Gateway answers ``POST /tools/invoke``.
   ``--calls`` calls of each tool are timed after a warm-up.
3. The Gateway stops. The plugin goes in with OpenClaw's own installer (``openclaw plugins install <plugin_dir()>
   --force --accept-capabilities``), memory-core is disabled (``openclaw plugins disable memory-core``), and the
   plugin config is set with ``openclaw config set``. That config holds the command plus one memsift key
   (``query.maxResults``), which shows the schema lets memsift's own settings through. ``openclaw plugins inspect``
   must report the plugin loaded and holding the memory slot.
4. The Gateway starts again, and the same calls are timed. Every ``memory_search`` answer must carry
   ``debug.backend: "memsift"``. The first call after each start (memsift's starts its ``memsift mcp`` child) is
   reported on its own.
   After the Gateway stops, no memsift process may be left.

The output is one line per measure and the ratio memsift / builtin of the per-call medians (``--json OUT`` also
writes the figures). Latency is the client's wall time of one ``/tools/invoke`` over a kept-alive connection, so it
includes the Gateway's own work on both sides; ``sessions_list`` (a core tool, the same in both runs) shows that
floor.

    .venv/bin/python benches/openclaw_plugin.py [--notes 300] [--calls 40] [--json OUT] [--keep]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _openclaw

import memsift
from memsift.openclaw_plugin import plugin_dir

TOKEN = 'bench-token'
PROJECTS = ['orion', 'atlas', 'kestrel', 'juniper', 'halcyon', 'basalt', 'marigold', 'tundra', 'cobalt', 'saffron']
ACTIONS = ['deploy', 'migrate', 'review', 'rotate', 'benchmark', 'audit', 'rollback', 'provision', 'archive', 'debug']
PEOPLE = ['Ana', 'Bo', 'Chen', 'Dara', 'Eli', 'Farah', 'Goran', 'Hana']
CHECK_NOTE = 'memory/2026-01-01.md'


def write_notes(workspace: Path, count: int) -> list[str]:
    """``count`` daily notes (a few facts each) plus a deploy checklist; the queries that find them."""
    memory = workspace / 'memory'
    memory.mkdir(parents=True, exist_ok=True)
    (workspace / CHECK_NOTE).write_text('# Deploy checklist\n\n- run migrations\n- notify #ops\n', encoding='utf-8')
    for i in range(count):
        day = time.strftime('%Y-%m-%d', time.gmtime(1_767_225_600 + (i + 1) * 86_400))  # after 2026-01-01
        lines = [f'# Notes {day}', '']
        for j in range(4):
            k = i * 4 + j
            project, action, person = PROJECTS[k % 10], ACTIONS[(k // 10) % 10], PEOPLE[k % 8]
            lines.append(f'- {person} will {action} the {project} service; ticket {project.upper()}-{k}.')
        (memory / f'{day}.md').write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return ['deploy checklist'] + [f'{ACTIONS[i % 10]} {PROJECTS[(i * 3) % 10]}' for i in range(19)]


class Gateway:
    """``openclaw gateway run`` on a free loopback port, in its own session (its children stay in it)."""

    def __init__(self, claw: _openclaw.OpenClaw, env: dict[str, str], log: Path) -> None:
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            self.port = probe.getsockname()[1]
        self.log = log
        args = ('gateway', 'run', '--port', str(self.port), '--bind', 'loopback', '--auth', 'token', '--token', TOKEN)
        with log.open('ab') as out:
            self.proc = subprocess.Popen(
                claw.command(*args), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.conn: http.client.HTTPConnection | None = None

    def invoke(self, tool: str, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Seconds of one ``/tools/invoke`` and the tool's payload (``details``)."""
        body = json.dumps({'tool': tool, 'args': args, 'sessionKey': 'main'})
        headers = {'Authorization': f'Bearer {TOKEN}', 'Content-Type': 'application/json'}
        for attempt in (0, 1):  # one reconnect: the Gateway may close an idle connection
            if self.conn is None:
                self.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=120)
            try:
                start = time.perf_counter()
                self.conn.request('POST', '/tools/invoke', body, headers)
                response = self.conn.getresponse()
                raw = response.read()
                elapsed = time.perf_counter() - start
                break
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        data = json.loads(raw)
        if response.status != 200 or not data.get('ok'):
            raise RuntimeError(f'{tool}: HTTP {response.status}: {raw[:500]!r}')
        result = data.get('result') or data.get('output') or {}
        return elapsed, result.get('details') or {}

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f'the Gateway exited {self.proc.returncode}: {self.tail()}')
            try:
                self.invoke('sessions_list', {})  # a core tool: the memory tools stay cold
                return
            except (OSError, RuntimeError, json.JSONDecodeError):
                if self.conn is not None:
                    self.conn.close()
                    self.conn = None
                time.sleep(1)
        raise RuntimeError(f'the Gateway was not ready within {timeout:g} s: {self.tail()}')

    def stop(self) -> list[int]:
        """SIGTERM the Gateway alone (its plugin stops its children), then whatever of its session is left: the
        pids that outlived it."""
        if self.conn is not None:
            self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        time.sleep(0.5)
        left = session_members(self.proc.pid)
        if left:
            os.killpg(self.proc.pid, signal.SIGKILL)
        return left

    def tail(self) -> str:
        return self.log.read_text(encoding='utf-8', errors='replace')[-1500:]


def session_members(sid: int) -> list[int]:
    """Live processes in session ``sid`` (Linux /proc)."""
    members = []
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != 'Z':
            members.append(int(stat.parent.name))
    return members


def timed_calls(gateway: Gateway, queries: list[str], calls: int) -> dict[str, Any]:
    """Warm up, then ``calls`` calls of each tool; per-call seconds and what came back."""
    for query in queries[:3]:
        gateway.invoke('memory_search', {'query': query})
        gateway.invoke('memory_get', {'path': CHECK_NOTE, 'from': 3, 'lines': 2})
    search, get, floor, backends, hits = [], [], [], [], []
    for i in range(calls):
        floor.append(gateway.invoke('sessions_list', {})[0])
        elapsed, found = gateway.invoke('memory_search', {'query': queries[i % len(queries)], 'maxResults': 6})
        search.append(elapsed)
        backends.append((found.get('debug') or {}).get('backend'))
        hits.append(len(found.get('results') or []))
        elapsed, read = gateway.invoke('memory_get', {'path': CHECK_NOTE, 'from': 3, 'lines': 2})
        get.append(elapsed)
    _, checklist = gateway.invoke('memory_search', {'query': 'deploy checklist'})
    return {
        'search': search,
        'get': get,
        'floor': floor,
        'backends': backends,
        'hits': statistics.mean(hits),
        'checklist': [hit['path'] for hit in checklist.get('results') or []][:1],
        'get_text': read.get('text'),
    }


def oc(claw: _openclaw.OpenClaw, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(claw.command(*args), env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f'openclaw {" ".join(args)} exited {done.returncode}: {(done.stderr + done.stdout)[-1500:]}')
    return done.stdout


def ms(seconds: float) -> str:
    return f'{seconds * 1000:.1f} ms'


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--notes', type=int, default=300, help='daily notes in the workspace (default 300)')
    parser.add_argument('--calls', type=int, default=40, help='timed calls of each tool per engine (default 40)')
    parser.add_argument('--openclaw-dir', type=Path, default=_openclaw.DEFAULT_DIR)
    parser.add_argument('--json', type=Path, metavar='OUT', help='also write the figures here')
    parser.add_argument('--keep', action='store_true', help='keep the temporary root (logs, config) and say where')
    args = parser.parse_args(argv)

    claw = _openclaw.locate(args.openclaw_dir)
    root = Path(tempfile.mkdtemp(prefix='memsift-oc-plugin-'))
    state, workspace = root / 'state', root / 'state' / 'workspace'
    (root / 'home').mkdir()
    queries = write_notes(workspace, args.notes)
    config = state / 'openclaw.json'
    base = {
        'gateway': {'mode': 'local'},
        'agents': {'defaults': {'workspace': str(workspace)}},
        'memory': {'search': {'provider': 'none'}},
    }
    config.write_text(json.dumps(base), encoding='utf-8')
    env = {k: v for k, v in os.environ.items() if not k.startswith(('OPENCLAW_', 'MEMSIFT_'))}
    env.update(
        HOME=str(root / 'home'),
        OPENCLAW_STATE_DIR=str(state),
        OPENCLAW_CONFIG_PATH=str(config),
        OPENCLAW_GATEWAY_TOKEN=TOKEN,
    )
    env['PATH'] = f'{Path(claw.node).parent}{os.pathsep}{env.get("PATH", "")}'
    report: dict[str, Any] = {'openclaw': claw.version, 'memsift': memsift.__version__, 'notes': args.notes}
    print(f'OpenClaw {claw.version}, memsift {memsift.__version__}: {args.notes} notes, {args.calls} calls per tool')
    try:
        gateway = Gateway(claw, env, root / 'gateway-builtin.log')
        try:
            gateway.wait_ready()
            builtin_first, _ = gateway.invoke('memory_search', {'query': queries[1]})
            builtin = timed_calls(gateway, queries, args.calls)
        finally:
            gateway.stop()
        print(f'builtin: backend {sorted(set(map(str, builtin["backends"])))}, mean hits {builtin["hits"]:.1f}')

        oc(claw, env, 'plugins', 'install', str(plugin_dir()), '--force', '--accept-capabilities')
        oc(claw, env, 'plugins', 'disable', 'memory-core')
        # command + one of memsift's own keys: the schema must let memsift's settings through
        plugin_config = {'command': sys.executable, 'args': ['-m', 'memsift'], 'query': {'maxResults': 6}}
        oc(claw, env, 'config', 'set', 'plugins.entries.memsift.config', json.dumps(plugin_config), '--strict-json')
        plugin = json.loads(oc(claw, env, 'plugins', 'inspect', 'memsift', '--runtime', '--json'))['plugin']
        written = json.loads(config.read_text(encoding='utf-8'))
        setup = {
            'status': plugin.get('status'),
            'memorySlotSelected': plugin.get('memorySlotSelected'),
            'tools': plugin.get('toolNames'),
            'slot': written['plugins']['slots']['memory'],
            'memoryCoreEnabled': written['plugins']['entries']['memory-core']['enabled'],
        }
        print(f'plugin: {json.dumps(setup)}')
        assert setup['status'] == 'loaded' and setup['memorySlotSelected'] and setup['slot'] == 'memsift', setup
        assert setup['tools'] == ['memory_search', 'memory_get'], setup

        gateway = Gateway(claw, env, root / 'gateway-memsift.log')
        try:
            gateway.wait_ready()
            first, found = gateway.invoke('memory_search', {'query': queries[1]})  # starts the memsift child
            plugged = timed_calls(gateway, queries, args.calls)
        finally:
            left = gateway.stop()
        log = (root / 'gateway-memsift.log').read_text(encoding='utf-8', errors='replace')
    finally:
        if args.keep:
            print(f'kept: {root}')
        else:
            shutil.rmtree(root, ignore_errors=True)

    backends = sorted(set(map(str, plugged['backends'])))
    print(f'memsift: backend {backends} on {plugged["backends"].count("memsift")}/{len(plugged["backends"])} answers')
    print(f'memsift: mean hits {plugged["hits"]:.1f}')
    print(f'first memory_search after a Gateway start: builtin {ms(builtin_first)}, memsift {ms(first)}')
    # the engines' own rankings, shown rather than asserted: this bench is about the plugin
    print(f'top hit for "deploy checklist": builtin {builtin["checklist"]}, memsift {plugged["checklist"]}')
    conflicts = 'plugin tool name conflict' in log
    print(f'memsift: tool name conflicts in the Gateway log: {conflicts}; processes left after stop: {left}')
    assert plugged['backends'] == ['memsift'] * args.calls, backends
    assert (found.get('debug') or {}).get('backend') == 'memsift', found
    assert plugged['get_text'].startswith('- run migrations\n- notify #ops'), plugged['get_text']
    assert not conflicts and not left

    print(f'{"tool":<22}{"builtin p50":>13}{"p95":>10}{"memsift p50":>14}{"p95":>10}{"memsift/builtin":>17}')
    for tool, key in (('memory_search', 'search'), ('memory_get', 'get'), ('sessions_list (floor)', 'floor')):
        b, m = builtin[key], plugged[key]
        ratio = statistics.median(m) / statistics.median(b)
        print(
            f'{tool:<22}{ms(statistics.median(b)):>13}{ms(p95(b)):>10}'
            f'{ms(statistics.median(m)):>14}{ms(p95(m)):>10}{ratio:>16.2f}x'
        )
        report[tool] = {
            'builtin_ms': [round(v * 1000, 3) for v in b],
            'memsift_ms': [round(v * 1000, 3) for v in m],
            'ratio_p50': round(ratio, 3),
        }
    report['first_call_ms'] = {'builtin': round(builtin_first * 1000, 1), 'memsift': round(first * 1000, 1)}
    report['setup'] = setup
    report['checklist_top_hit'] = {'builtin': builtin['checklist'], 'memsift': plugged['checklist']}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + '\n', encoding='utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
