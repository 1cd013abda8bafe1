"""How fast memsift meets the time promises the tests check only as behaviour: one JSON line per check.

    .venv/bin/python benches/timing.py [--runs 3] [--only mcp_http_parallel,tools_deadline]

The tests prove each behaviour without a clock (an answer that came while the provider, the reranker or another
writer still held it up; calls that met in flight); the figures here say how long it took, against the bound the
tests used to assert. Each line: ``check``, ``seconds`` (the median of ``--runs``), ``runs`` (each run), ``bound_s``
and ``ok`` (median within the bound), plus what the figure is. Exits 1 when a median is over its bound.

- ``tools_deadline``: ``MemoryTools.memory_search`` with ``deadline_s=0.3`` and a provider taking 2 s per query
  embedding: seconds to the partial keyword answer (bound 1.5 s).
- ``search_during_reindex``: a search on a dirty index whose background sync embeds 3 s per batch: seconds to the
  answer from the index as it is (bound 2 s).
- ``search_while_locked``: a search while another process holds the writer lock (bound 1 s).
- ``sync_after_killed_writer``: a sync after the lock's holder was SIGKILLed (bound 5 s).
- ``huge_config``: ``load_config`` refusing an 11 MB config file (bound 1 s).
- ``rerank_timeout``: a search whose reranker never answers, ``timeoutMs`` 300 (bound 5 s).
- ``rerank_deadline``: ``memory_search`` with ``deadline_s=2.5`` and a reranker that never answers (60 s
  ``timeoutMs``): the full answer within the deadline (bound 2.5 s).
- ``mcp_stdio_deadline``: ``memsift mcp --deadline 0.05`` over stdio, a provider taking 2 s on the query (bound 1.5 s).
- ``mcp_http_parallel``: four concurrent ``memory_search`` calls over streamable HTTP, each embedding taking 0.8 s
  at the provider: wall seconds of the four (serial: 3.2 s; bound 2.4 s).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

import memsift
from memsift import MemoryIndex, MemoryTools

NOTES = {
    'MEMORY.md': '# Facts\nThe deploy key lives in the team vault.\nStandup moved to 9:30 on Mondays.\n',
    'memory/2026-11-28.md': 'Kayak trip planned for March.\nERR_CONN_RESET retried with backoff.\n',
    'memory/a.md': 'Deploy key deploy key: rotate the deploy key monthly.\n',
}
SLOW_QUERY = 'where do we keep the deploy key'


def workspace(root: Path) -> Path:
    for path, text in NOTES.items():
        (root / 'ws' / path).parent.mkdir(parents=True, exist_ok=True)
        (root / 'ws' / path).write_text(text, encoding='utf-8')
    return root / 'ws'


def config(root: Path, **search: object) -> dict:
    return {
        'agents': {
            'defaults': {'memorySearch': {'store': {'path': str(root / 'state' / '{agentId}.sqlite')}, **search}}
        }
    }


def vector(text: str, dims: int = 32) -> list[float]:
    """A deterministic bag-of-tokens vector (the tests' HashEmbedder, smaller)."""
    vec = [0.0] * dims
    for token in memsift.tokenize(text):
        vec[int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), 'little') % dims] += 1.0
    vec[0] += 0.5  # never all zero
    return vec


class Slow:
    """An in-process embedding provider: ``query_s`` seconds per query, ``documents_s`` per document batch."""

    id = 'bench-slow'
    model = 'hash'
    dims = 32

    def __init__(self) -> None:
        self.query_s = 0.0
        self.documents_s = 0.0

    def embed_query(self, text: str) -> np.ndarray:
        time.sleep(self.query_s)
        return np.array(vector(text), dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        time.sleep(self.documents_s)
        return np.array([vector(t) for t in texts], dtype=np.float32)


class Server(ThreadingHTTPServer):
    """A loopback server: OpenAI-compatible embeddings (``delay(texts)`` seconds first) and a reranker that answers
    only when the server closes."""

    daemon_threads = True

    def __init__(self, delay: Callable[[list[str]], float] = lambda texts: 0.0) -> None:
        super().__init__(('127.0.0.1', 0), Handler)
        self.delay = delay
        self.closing = threading.Event()
        self.url = f'http://127.0.0.1:{self.server_address[1]}'

    def __enter__(self) -> Server:
        threading.Thread(target=self.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get('content-length', 0))) or b'{}')
        if 'documents' in body:  # a rerank request: never answered in time
            self.server.closing.wait(60)
            answer: dict = {'results': []}
        else:
            texts = body['input']
            time.sleep(self.server.delay(texts))
            answer = {'data': [{'index': i, 'embedding': vector(t)} for i, t in enumerate(texts)]}
        data = json.dumps(answer).encode()
        with contextlib.suppress(OSError):  # the client may have given up (that is what the checks time)
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# ---------------------------------------------------------------- the checks: each returns seconds (and a note)


def tools_deadline(root: Path) -> tuple[float, str]:
    provider = Slow()
    with MemoryIndex(workspace(root), config(root), provider=provider) as index:
        index.sync()
        provider.query_s = 2.0
        tools = MemoryTools(index, deadline_s=0.3)
        result: dict = {}
        seconds = timed(lambda: result.update(tools.memory_search('deploy key', minScore=0)))
        tools.close()
    return seconds, f'partial={result.get("partial")} mode={result.get("mode")}; deadline 0.3 s, query 2 s'


def search_during_reindex(root: Path) -> tuple[float, str]:
    provider = Slow()
    ws = workspace(root)
    with MemoryIndex(ws, config(root), provider=provider) as index:
        index.sync()
        provider.documents_s = 3.0
        (ws / 'memory' / 'new.md').write_text('A new note about the deploy key rotation.\n', encoding='utf-8')
        index.mark_dirty()
        tools = MemoryTools(index, deadline_s=10)
        seconds = timed(lambda: tools.memory_search('deploy key', minScore=0))
        tools.close()
    return seconds, 'background sync embedding 3 s per batch'


HOLD_LOCK = textwrap.dedent("""
    import signal, sys
    from filelock import FileLock
    FileLock(sys.argv[1], preserve_lock_file=True, fallback_to_soft=False).acquire()
    signal.alarm(60)
    print('held', flush=True)
    sys.stdin.read()
""")


@contextlib.contextmanager
def lock_holder(lock: Path) -> Iterator[subprocess.Popen]:
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, '-c', HOLD_LOCK, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == 'held\n'
        yield holder
    finally:
        holder.kill()
        holder.wait()


def search_while_locked(root: Path) -> tuple[float, str]:
    ws = workspace(root)
    with MemoryIndex(ws, config(root)) as index:
        index.sync()
        (ws / 'memory' / 'new.md').write_text('Quarterly lantern review.\n', encoding='utf-8')
        index.mark_dirty()
        with lock_holder(root / 'state' / 'main.lock'):
            seconds = timed(lambda: index.search('vault'))
    return seconds, 'another process holds <store>.lock'


def sync_after_killed_writer(root: Path) -> tuple[float, str]:
    with MemoryIndex(workspace(root), config(root)) as index:
        with lock_holder(root / 'state' / 'main.lock') as holder:
            holder.kill()
            holder.wait()
        return timed(index.sync), 'first sync of the workspace'


def huge_config(root: Path) -> tuple[float, str]:
    big = root / 'openclaw.json'
    big.write_text('{"agents": {"list": [' + ','.join(f'{{"id": "a{i}"}}' for i in range(600_000)) + ']}}')

    def load() -> None:
        with contextlib.suppress(memsift.ConfigError):
            memsift.load_config(big)

    return timed(load), f'{big.stat().st_size / 1e6:.1f} MB refused'


def rerank_timeout(root: Path) -> tuple[float, str]:
    os.environ['COHERE_API_KEY'] = 'rk-bench'
    with Server() as server:
        rerank = {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url, 'timeoutMs': 300}
        with MemoryIndex(workspace(root), config(root, provider='none', query={'rerank': rerank})) as index:
            index.sync()
            result = []
            seconds = timed(lambda: result.append(index.search('deploy key', min_score=0)))
    return seconds, f'rerankMs={result[0].debug.get("rerankMs")}'


def rerank_deadline(root: Path) -> tuple[float, str]:
    os.environ['COHERE_API_KEY'] = 'rk-bench'
    with Server() as server:
        rerank = {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url, 'timeoutMs': 60_000}
        cfg = config(root, provider='none', query={'rerank': rerank})
        sessions = root / 'sessions.sqlite'
        with MemoryTools.open(workspace(root), cfg, sessions_path=sessions, sync=False, deadline_s=2.5) as tools:
            tools.index.sync()
            data: dict = {}
            seconds = timed(lambda: data.update(tools.memory_search('deploy key', minScore=0)))
    return seconds, f'partial={data.get("partial", False)} rerankMs={data["debug"].get("rerankMs")}'


def embedding_config(root: Path, url: str) -> Path:
    remote = {'baseUrl': url + '/v1', 'apiKey': 'sk-bench'}
    path = root / 'openclaw.json'
    path.write_text(json.dumps(config(root, provider='openai-compatible', model='tiny', remote=remote)))
    return path


async def warm(client: object) -> None:
    """Until the server's first sync has indexed the files, vectors included."""
    import anyio

    for _ in range(300):
        result = await client.call_tool('memory_search', {'query': 'vault', 'minScore': 0})  # type: ignore[attr-defined]
        if json.loads(result.content[0].text).get('mode') == 'hybrid':
            return
        await anyio.sleep(0.1)
    raise RuntimeError('the MCP server never reached hybrid mode')


def mcp_stdio_deadline(root: Path) -> tuple[float, str]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    with Server(lambda texts: 2.0 if any(SLOW_QUERY in t for t in texts) else 0.0) as server:
        args = ['-m', 'memsift', 'mcp', '--workspace', str(workspace(root)), '--deadline', '0.05']
        args += ['--config', str(embedding_config(root, server.url)), '--sessions-db', str(root / 'sessions.sqlite')]
        params = StdioServerParameters(command=sys.executable, args=args, cwd=str(root))

        async def body() -> tuple[float, dict]:
            with open(root / 'server.log', 'a') as log:
                async with Client(stdio_client(params, errlog=log), read_timeout_seconds=60) as client:
                    await warm(client)
                    started = time.perf_counter()
                    result = await client.call_tool('memory_search', {'query': SLOW_QUERY, 'minScore': 0})
                    return time.perf_counter() - started, json.loads(result.content[0].text)

        seconds, data = anyio.run(body)
    return seconds, f'partial={data.get("partial")}; deadline 0.05 s, query embedding 2 s'


def mcp_http_parallel(root: Path) -> tuple[float, str]:
    import anyio
    from mcp import Client

    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    with Server(lambda texts: 0.8 if any(t.startswith('slow ') for t in texts) else 0.0) as server:
        args = ['--workspace', str(workspace(root)), '--config', str(embedding_config(root, server.url))]
        args += ['--sessions-db', str(root / 'sessions.sqlite'), '--http', str(port)]
        with open(root / 'server.log', 'a') as log:
            proc = subprocess.Popen([sys.executable, '-m', 'memsift', 'mcp', *args], stdout=log, stderr=log)
        try:
            for _ in range(300):
                with contextlib.suppress(OSError), socket.create_connection(('127.0.0.1', port), timeout=0.5):
                    break
                time.sleep(0.1)

            async def body() -> float:
                async with Client(f'http://127.0.0.1:{port}/mcp', read_timeout_seconds=60) as client:
                    await warm(client)
                    started = time.perf_counter()
                    async with anyio.create_task_group() as group:
                        for i in range(4):
                            group.start_soon(client.call_tool, 'memory_search', {'query': f'slow {i} vault'})
                    return time.perf_counter() - started

            seconds = anyio.run(body)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return seconds, '4 calls of 0.8 s provider time each; serial would take 3.2 s'


CHECKS: dict[str, tuple[Callable[[Path], tuple[float, str]], float]] = {
    'tools_deadline': (tools_deadline, 1.5),
    'search_during_reindex': (search_during_reindex, 2.0),
    'search_while_locked': (search_while_locked, 1.0),
    'sync_after_killed_writer': (sync_after_killed_writer, 5.0),
    'huge_config': (huge_config, 1.0),
    'rerank_timeout': (rerank_timeout, 5.0),
    'rerank_deadline': (rerank_deadline, 2.5),
    'mcp_stdio_deadline': (mcp_stdio_deadline, 1.5),
    'mcp_http_parallel': (mcp_http_parallel, 2.4),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=3, help='runs per check; the median is compared (default 3)')
    parser.add_argument('--only', default='', help=f'comma-separated checks (default: all of {", ".join(CHECKS)})')
    args = parser.parse_args()
    names = [name.strip() for name in args.only.split(',') if name.strip()] or list(CHECKS)
    unknown = set(names) - set(CHECKS)
    if unknown:
        parser.error(f'unknown checks: {", ".join(sorted(unknown))}')
    over = 0
    for name in names:
        check, bound = CHECKS[name]
        runs, note = [], ''
        for _ in range(max(1, args.runs)):
            with tempfile.TemporaryDirectory(prefix='memsift-timing-') as tmp:
                seconds, note = check(Path(tmp))
            runs.append(round(seconds, 3))
        median = statistics.median(runs)
        over += median > bound
        line = {'check': name, 'seconds': median, 'runs': runs, 'bound_s': bound, 'ok': median <= bound, 'note': note}
        print(json.dumps(line), flush=True)
    sys.exit(1 if over else 0)


if __name__ == '__main__':
    main()
