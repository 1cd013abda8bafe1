"""Shared pytest configuration: hypothesis profiles.

Choose a profile with ``HYPOTHESIS_PROFILE=fast|slow`` (default ``fast``).
"""

import os

from hypothesis import settings

settings.register_profile('fast', max_examples=60, deadline=None)
settings.register_profile('slow', max_examples=1000, deadline=None)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'fast'))


# ---------------------------------------------------------------- memory workspaces

import hashlib  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import memsift  # noqa: E402

SYNONYMS = {'automobil': 'car', 'vehicl': 'car', 'physician': 'doctor', 'medic': 'doctor'}  # analyzer (stemmed) forms
"""What makes the test embedder "semantic": synonyms share a dimension, so a vector search finds what BM25 cannot."""


class HashEmbedder:
    """A small deterministic embedding provider: bag of analyzer tokens hashed into ``dims`` buckets.

    ``calls`` counts ``embed_documents`` inputs (``seen`` keeps them); ``fail`` makes every call raise (a provider
    outage).
    """

    id = 'test-hash'

    def __init__(self, dims: int = 64, model: str = 'hash-v1') -> None:
        self.dims = dims
        self.model = model
        self.calls = 0
        self.seen: list[str] = []
        self.fail = False

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dims, dtype=np.float32)
        for token in memsift.tokenize(text):
            token = SYNONYMS.get(token, token)
            vec[int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), 'little') % self.dims] += 1
        return vec

    def embed_query(self, text):
        if self.fail:
            raise ConnectionError('provider unreachable')
        return self._vector(text)

    def embed_documents(self, texts):
        if self.fail:
            raise ConnectionError('provider unreachable')
        self.calls += len(texts)
        self.seen.extend(texts)
        return np.stack([self._vector(t) for t in texts])


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


def both_search_modes(root, texts):
    """A ranked session store with a vector leg and an all-terms one, each holding ``texts`` as one message per
    session (``agent:main:case-<i>``, message ``m<i>``): what the guess-oracle tests search in both modes."""
    from memsift.sessions import SessionStore

    ranked = SessionStore(root / 'ranked.sqlite', search_mode='ranked', visibility='agent')
    ranked.use_embeddings(HashEmbedder(), background=False)
    terms = SessionStore(root / 'terms.sqlite', search_mode='all-terms', visibility='agent')
    for store in (ranked, terms):
        for i, text in enumerate(texts):
            store.append(
                f'agent:main:case-{i}',
                {'type': 'message', 'id': f'm{i}', 'timestamp': 1767225600000 + i,
                 'message': {'role': 'user', 'content': text}},
            )  # fmt: skip
    assert ranked.vectors is not None and ranked.vectors.embed_pending() == len(texts)
    return ranked, terms


def write(path, text: str) -> None:
    """Write ``text`` to ``path`` (parents created), UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')


def memory_config(tmp_path, **search) -> dict:
    """An OpenClaw config dict whose store lives in ``tmp_path`` plus the given ``memory.search`` keys."""
    return {
        'agents': {
            'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'state' / '{agentId}.sqlite')}, **search}}
        }
    }


def open_index(tmp_path, ws=None, provider=None, **search):
    """A :class:`memsift.MemoryIndex` on ``ws`` (default ``tmp_path / 'ws'``) with its store in ``tmp_path``."""
    return memsift.MemoryIndex(ws or tmp_path / 'ws', memory_config(tmp_path, **search), provider=provider)


@pytest.fixture
def ws(tmp_path):
    """A small workspace: MEMORY.md, a dated note and a Chinese/Japanese/Korean note."""
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff.\n')
    write(
        root / 'memory' / 'projects' / 'cjk.md',
        '视频下载工具 BBDown 配置\n東京オフィスの会議は火曜日\n회의는 목요일입니다\n',
    )
    return root


def paths(result):
    """The paths of a search result's hits, in order."""
    return [hit.path for hit in result.results]


PROVIDER_ENV = (
    'OPENAI_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'VOYAGE_API_KEY',
    'MISTRAL_API_KEY',
    'DEEPINFRA_API_KEY',
    'OLLAMA_API_KEY',
    'LM_API_TOKEN',
)


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch):
    """Tests never pick up the developer's API keys: ``auto`` resolves to keyword-only unless a test sets a key."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def no_openclaw_setup(monkeypatch):
    """Tests never read the developer's OpenClaw setup (the command line reads ``~/.openclaw/openclaw.json`` by
    default): a test that wants one sets ``OPENCLAW_CONFIG_PATH`` / ``OPENCLAW_STATE_DIR`` itself."""
    monkeypatch.setenv('OPENCLAW_CONFIG_PATH', '/nonexistent/memsift-tests/openclaw.json')
    monkeypatch.delenv('OPENCLAW_STATE_DIR', raising=False)


# ---------------------------------------------------------------- a loopback HTTP server for provider tests

import json  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402


class Recorder(ThreadingHTTPServer):
    """Records each request (``method``, ``path``, ``headers``, ``raw`` bytes and JSON ``body``) and answers with
    ``self.reply(request) -> (status, headers, body)``; a ``None`` status drops the connection."""

    daemon_threads = True

    def __init__(self):
        super().__init__(('127.0.0.1', 0), Handler)
        self.requests = []
        self.reply = None
        self.url = f'http://127.0.0.1:{self.server_address[1]}'

    def paths(self):
        return [(r['method'], r['path']) for r in self.requests]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, method):
        raw = self.rfile.read(int(self.headers.get('content-length', 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        is_json = headers.get('content-type', 'application/json').startswith('application/json')
        request = {
            'method': method,
            'path': self.path,
            'headers': headers,
            'raw': raw,
            'body': json.loads(raw) if raw and is_json else None,
        }
        self.server.requests.append(request)
        status, headers, body = self.server.reply(request)
        if status is None:
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for name, value in {'Content-Type': 'application/json', **headers}.items():
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's naming
        self._answer('GET')

    def do_POST(self):  # noqa: N802
        self._answer('POST')


@pytest.fixture
def server():
    srv = Recorder()
    thread = threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def pauses(monkeypatch):
    """Retry pauses are recorded instead of slept."""
    from memsift.providers import _http

    recorded = []
    monkeypatch.setattr(_http, '_sleep', recorded.append)
    return recorded


# ---------------------------------------------------------------- a real PostgreSQL server (store.backend: postgres)

import itertools  # noqa: E402

import pgserver  # noqa: E402

_databases = itertools.count()


def _started(start, what='PostgreSQL test server'):
    """``start()``'s server; where none can be started, the test skips with the reason, except under ``CI=true``:
    CI installs Debian's ``postgresql``, so there it fails with it (a CI run that skipped the backend would pass
    without testing it)."""
    reason = pgserver.unavailable()
    if reason is None:
        try:
            return start()
        except pgserver.ServerError as exc:
            reason = f'the {what} did not start: {exc}\n({pgserver.FIX})'
    if os.environ.get('CI') == 'true':
        pytest.fail(f'CI=true, so the PostgreSQL tests fail instead of skipping: {reason}', pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope='session')
def postgres_server():
    """One PostgreSQL server for the whole run (started on first use; skips or fails as :func:`_started` says)."""
    with _started(pgserver.Server) as srv:
        yield srv


@pytest.fixture(scope='module')
def replicated():
    """``(primary, standby)``: a PostgreSQL server of its own and a streaming replica of it (``pgserver.Server``'s
    ``standby``), for the tests of one module, which may stop, pause or restart either and must leave both running.
    Skips or fails as the other servers do."""
    with _started(pgserver.Server) as primary, _started(primary.standby, 'PostgreSQL standby') as standby:
        yield primary, standby


@pytest.fixture
def pg_dsn(postgres_server):
    """The DSN of a new, empty database on the test server: each test starts from nothing."""
    return postgres_server.create_database(f'test_{os.getpid()}_{next(_databases)}')
