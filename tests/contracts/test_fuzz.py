"""Fuzz every public entry point with hostile text and values: each call returns, or raises a documented error.

The rule, checked by :func:`call` for every call:

* a call either returns normally or raises a subclass of :class:`memsift.MemsiftError` (``InvalidInputError``,
  ``ConfigError``, ``SearchIndexError``, ``SessionStoreError``, ``StoreError``, ``ProviderError``...), except
  ``InternalError`` (a caught Rust panic: a bug by definition);
* ``TypeError`` is also accepted, but only where the test passed a value of the wrong Python type (an int where a
  ``str`` is documented). A ``str`` of any content, an ``int`` of any size, a ``float`` of any value and a mapping
  of any JSON-ish values are the right types: anything but a ``MemsiftError`` for them (``UnicodeEncodeError``,
  ``RecursionError``, ``OverflowError``, ``ValueError``, ``KeyError``, sqlite3 errors, panics...) fails;
* a warning is an error too (the project's pytest setting), except the unknown-key ``ConfigWarning`` that fuzzed
  configs are expected to cause;
* each call finishes within :data:`CALL_LIMIT_S` seconds;
* data meant for output (search results, history, status, tool results) survives
  ``json.dumps(result, ensure_ascii=False).encode('utf-8')``.

Covered: the Rust core (``tokenize``, ``Analyzer``, ``chunk_markdown``, ``Chunk``, ``estimate_chars``,
``Bm25Index``, ``VectorStore``, ``mmr``, ``jaccard``, ``bm25_score_to_unit``, ``decay_multiplier``,
``apply_temporal_decay``, ``memory_date_from_path``, ``is_evergreen_path``, ``normalize_weights``),
``load_config`` (dicts with arbitrary values at real key positions and at random keys; files of arbitrary bytes),
``MemoryIndex`` (search / get / status over a fixed workspace, over notes of arbitrary bytes, and under fuzzed
configs), ``SessionStore`` (append, import_jsonl of arbitrary lines, search, history), ``Redactor`` and
``memsift.tools.MemoryTools``. Text includes lone surrogates, NUL, CJK, emoji, RTL marks, combining marks and
1 MB strings (prebuilt; they print as the expression that builds them); JSON-ish values include 2,000-deep nesting
(printed as ``deep(kind)``, see :func:`deep`), huge ints (``10**400``, ``2**64``) and ``inf``/``nan``/``1e20``/``-0.0``.
Explicit regression cases for known-hostile inputs follow the property tests. The tests of the Rust core run in a
child process (:func:`isolated`): native code that aborts fails that test, naming the call, instead of the run.

Cost: ``MEMSIFT_FUZZ_EXAMPLES`` examples per property test (default 60, about 40 s in all on 2 cores; tests that
build an index per example run half as many). ``MEMSIFT_FUZZ_ISOLATE=0`` runs everything in one process (``--pdb``).
:data:`CALLS` counts the calls made per entry point (in the process that made them).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import reprlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memsift
import memsift.tools
from memsift import (
    Analyzer,
    Bm25Index,
    Caller,
    Chunk,
    ConfigWarning,
    InternalError,
    MemoryIndex,
    MemsiftError,
    SessionStore,
    VectorStore,
)
from memsift.redact import Redactor, redact
from memsift.tools import MemoryTools

MAIN = 'agent:main:main'
CALL_LIMIT_S = 5.0
EXAMPLES = int(os.environ.get('MEMSIFT_FUZZ_EXAMPLES', '60'))
CALLS: Counter[str] = Counter()
"""Calls made per entry point (all tests of this module, this process)."""
LAST_CALL = os.environ.get('MEMSIFT_FUZZ_LAST_CALL')
COUNT_FILE = os.environ.get('MEMSIFT_FUZZ_COUNT')
"""Where each process appends its :data:`CALLS` as a JSON line when it exits (``benches/chaos.py fuzz`` sums them)."""


def _save_counts() -> None:
    if COUNT_FILE and CALLS:
        with open(COUNT_FILE, 'a', encoding='utf-8') as out:
            out.write(json.dumps(CALLS) + '\n')


atexit.register(_save_counts)
"""Set in a child process of :func:`isolated`: the file where each call is recorded before it runs."""
CHILD_TIMEOUT_S = 280
"""Under pytest-timeout's 300 s, so the parent reports a hung child itself."""


def fuzz(share: float = 1.0) -> settings:
    """Settings for a property test: ``share`` of ``MEMSIFT_FUZZ_EXAMPLES`` examples, no per-example deadline."""
    return settings(
        max_examples=max(1, round(EXAMPLES * share)),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


# ---------------------------------------------------------------- the rule


@dataclass
class Refused:
    """What :func:`call` returns when the call raised an accepted (documented) error."""

    error: BaseException


def _short(exc: BaseException) -> str:
    """The start of an exception's message, printable (lone surrogates escaped)."""
    text = str(exc).encode('utf-8', 'backslashreplace').decode('utf-8')
    return text if len(text) <= 300 else text[:300] + '…'


def _unwound(exc: RecursionError) -> str:
    """Where a RecursionError entered and where it gave up (its own traceback is a thousand frames long)."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # [0] is call() itself
    ends = [frames[0], frames[-1]] if frames else []
    return ' ... '.join(f'{Path(f.filename).name}:{f.lineno} in {f.name}' for f in ends)


def call(name: str, fn: Callable[..., Any], *args: Any, wrong_type: bool = False, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, checked against the rule; :class:`Refused` if it raised a documented error.

    ``wrong_type``: the test passed an argument of the wrong Python type, so ``TypeError`` is accepted too.
    Fuzzed configs are expected to warn about unknown keys (``ConfigWarning``): ignored; other warnings stay errors.
    """
    __tracebackhide__ = True
    CALLS[name] += 1
    if LAST_CALL:
        Path(LAST_CALL).write_text(describe(name, args, kwargs), encoding='utf-8', errors='backslashreplace')
    accepted: tuple[type[BaseException], ...] = (MemsiftError, TypeError) if wrong_type else (MemsiftError,)
    failure = ''
    started = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ConfigWarning)
            result: Any = fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit, pytest.fail.Exception):
        raise
    except BaseException as exc:  # PanicException derives from BaseException
        if not isinstance(exc, accepted) or isinstance(exc, InternalError):
            failure = f'{name} raised {type(exc).__module__}.{type(exc).__qualname__}: {_short(exc)}'
            if not isinstance(exc, RecursionError):
                raise AssertionError(failure) from exc
            # Unchained: hypothesis tells bugs apart by the innermost frame, which varies for a RecursionError
            # (it would report the test as flaky).
            failure += f' (at {_unwound(exc)})'
        else:
            result = Refused(exc)
    if failure:
        raise AssertionError(failure)
    elapsed = time.monotonic() - started
    assert elapsed < CALL_LIMIT_S, f'{name} took {elapsed:.1f} s (limit {CALL_LIMIT_S:g} s)'
    return result


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 160
_REPR.maxlevel = 4


def describe(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """``name(args...)`` with long and deeply nested values abbreviated (safe for 2,000-deep values)."""
    shown = [_REPR.repr(a) for a in args] + [f'{k}={_REPR.repr(v)}' for k, v in kwargs.items()]
    return f'{name}({", ".join(shown)})'


def isolated(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` in a child pytest process, so that native code that aborts (an allocation failure, a panic
    that cannot unwind, a segfault) fails this test, naming the call that was running, instead of killing the run.

    ``MEMSIFT_FUZZ_ISOLATE=0`` runs it in this process (for ``--pdb``).
    """
    if LAST_CALL is not None or os.environ.get('MEMSIFT_FUZZ_ISOLATE') == '0':
        return test

    def in_child(request: pytest.FixtureRequest) -> None:
        __tracebackhide__ = True
        with tempfile.TemporaryDirectory() as folder:
            last = Path(folder) / 'last-call'
            try:
                child = subprocess.run(
                    [
                        sys.executable,
                        '-m',
                        'pytest',
                        request.node.nodeid,
                        '-q',
                        '--tb=short',
                        '--capture=no',
                        '-p',
                        'no:cacheprovider',
                        '-p',
                        'no:faulthandler',
                    ],  # the native code's last words, no dump
                    cwd=request.config.rootpath,
                    env={**os.environ, 'MEMSIFT_FUZZ_LAST_CALL': str(last)},
                    capture_output=True,
                    text=True,
                    errors='backslashreplace',
                    timeout=CHILD_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                child = None
            running = last.read_text(encoding='utf-8') if last.exists() else '(none recorded)'
        if child is None:
            pytest.fail(f'the child process was still running after {CHILD_TIMEOUT_S} s, during {running}')
        output = (child.stdout + child.stderr)[-12_000:]
        if child.returncode < 0:
            crash = signal.Signals(-child.returncode).name
            pytest.fail(f'the process died of {crash} during {running}\n--- child output ---\n{output}')
        if child.returncode != 0:
            pytest.fail(f'failed in a child process (exit status {child.returncode})\n{output}')

    in_child.__name__, in_child.__doc__ = test.__name__, test.__doc__
    return in_child


def check_output(name: str, data: Any) -> None:
    """Output data must be JSON that encodes to UTF-8 (no lone surrogates, no stray Python objects)."""
    __tracebackhide__ = True
    if isinstance(data, Refused):
        return
    try:
        json.dumps(data, ensure_ascii=False).encode('utf-8')
    except Exception as exc:
        raise AssertionError(
            f'{name} returned data that is not UTF-8 JSON: {type(exc).__name__}: {_short(exc)}'
        ) from exc


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# ---------------------------------------------------------------- values


class PrintedAsRepr:
    """Hypothesis prints examples of this class with its ``__repr__`` (a short expression that rebuilds it)."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


class Big(PrintedAsRepr, str):
    """A prebuilt ~1 MB string that prints as the expression building it (hypothesis examples stay readable)."""

    expr: str

    def __new__(cls, unit: str, count: int) -> Big:
        self = super().__new__(cls, unit * count)
        self.expr = f'{unit!r} * {count}'
        return self

    def __repr__(self) -> str:
        return self.expr


MB = 1_000_000
BIG = [
    Big('x', MB),  # one 1 MB word
    Big('lorem ipsum ', MB // 12),
    Big('中文分词', MB // 4),
    Big('😀\ud83d', MB // 2),  # emoji and lone surrogates
    Big('line\n', MB // 5),
    Big('(', MB),
    Big('\x00', MB),
    Big('e\u0301', MB // 2),
    Big('sk-A', MB // 4),
    Big('\u202e', MB),
]
ODD = [
    '\x00',
    '\ud83d',
    '\udc00',
    '\udfff',
    '\ud83d\ude00',
    '中文',
    '視頻下載',
    'カタカナ',
    '한국어를',
    '😀',
    '👨\u200d👩\u200d👧',
    '🇯🇵',
    'مرحبا',
    'שלום',
    '\u202e',
    '\u200f',
    'e\u0301',
    '\u0301',
    'a' + '\u0300' * 40,
    '\u2028',
    '\u2029',
    '\ufeff',
    '\ufffd',
    '\r\n',
    '\r',
    '\t',
    ' ',
    '\\',
    '"',
    "'",
    '*',
    '(',
    ')',
    ':',
    '^',
    '-',
    'AND',
    'OR',
    'NOT',
    'NEAR',
    '..',
    '../',
    '~',
    '{agentId}',
    '%s',
    '\\ud83d',
    'sk-proj-4f9aXb81QzLmN0pRt7Uv',
    'ghp_' + 'x' * 36,
    '-----BEGIN PRIVATE KEY-----\n',
    'MEMORY.md',
    'memory/2026-02-30.md',
    'memory/9999-99-99.md',
]
SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
SMALL_TEXT = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(ODD), SURROGATE), max_size=8).map(''.join)
TEXT = st.one_of(SMALL_TEXT, st.sampled_from(BIG))
"""Any text: short and hostile, or one of the 1 MB strings."""


class BigInt(PrintedAsRepr, int):
    """A huge int that prints as the expression building it."""

    expr: str

    def __new__(cls, value: int, expr: str) -> BigInt:
        self = super().__new__(cls, value)
        self.expr = expr
        return self

    def __repr__(self) -> str:
        return self.expr


HUGE_INTS = [
    BigInt(2**31, '2**31'),
    BigInt(2**32, '2**32'),
    BigInt(2**63 - 1, '2**63 - 1'),
    BigInt(2**63, '2**63'),
    BigInt(2**64, '2**64'),
    BigInt(-(2**63) - 1, '-2**63 - 1'),
    BigInt(-(2**64), '-2**64'),
    BigInt(10**400, '10**400'),
    BigInt(-(10**400), '-10**400'),
]
ODD_FLOATS = [math.inf, -math.inf, math.nan, 1e20, -1e20, 1e300, -0.0, 5e-324, 1.5]
# Hypothesis favours the first branch of one_of when generating: the hostile values come first.
INTS = st.one_of(st.sampled_from(HUGE_INTS), st.integers(-3, 2_000))
FLOATS = st.one_of(st.sampled_from(ODD_FLOATS), st.floats())
NUMBERS = st.one_of(INTS, FLOATS)
WRONG = st.one_of(st.none(), st.booleans(), SMALL_TEXT, st.lists(st.integers(), max_size=2), st.just(b'bytes'))
"""Values of the wrong Python type for a str/int/float parameter."""


def deep(kind: str = 'list', depth: int = 2_000) -> Any:
    """A value nested ``depth`` levels: ``list`` ``[[[...'x'...]]]``, ``dict`` ``{'a': {'a': ...}}``, or ``blocks``
    (message content: text blocks whose text is again blocks)."""
    value: Any = 'x'
    for _ in range(depth):
        value = [value] if kind == 'list' else {'a': value} if kind == 'dict' else [{'type': 'text', 'text': value}]
    return value


@dataclass(frozen=True, repr=False)
class Deep(PrintedAsRepr):
    """A placeholder for :func:`deep` in generated values (repr stays short); :func:`real` builds it."""

    kind: str

    def __repr__(self) -> str:
        return f'deep({self.kind!r})'


def real(value: Any) -> Any:
    """``value`` with every :class:`Deep` placeholder built."""
    if isinstance(value, Deep):
        return deep(value.kind)
    if isinstance(value, list):
        return [real(item) for item in value]
    if isinstance(value, dict):
        return {key: real(item) for key, item in value.items()}
    return value


def json_values(*, nested: bool = True, text: st.SearchStrategy[str] = TEXT) -> st.SearchStrategy[Any]:
    """JSON-ish values; ``nested`` adds 2,000-deep placeholders (pass the value through :func:`real`)."""
    leaves = st.one_of(NUMBERS, text, st.none(), st.booleans())
    if nested:
        leaves = st.one_of(st.sampled_from([Deep('list'), Deep('dict'), Deep('blocks')]), leaves)
    return st.recursive(
        leaves, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(SMALL_TEXT, kids, max_size=4), max_leaves=8
    )


JSON = json_values()
FLAT_JSON = json_values(nested=False, text=SMALL_TEXT)


# ---------------------------------------------------------------- transcript events

TIMESTAMPS = st.one_of(
    NUMBERS,
    st.sampled_from(
        ['2026-01-01T00:00:00Z', '0001-01-01', '9999-12-31T23:59:59+14:00', '2026-13-45', 'yesterday', '', '1e20']
    ),
    FLAT_JSON,
)


def events(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """OpenClaw transcript events whose fields hold ``values`` where the shape allows."""
    block = st.fixed_dictionaries(
        {
            'type': st.sampled_from(['text', 'input_text', 'output_text', 'thinking', 'image']) | SMALL_TEXT,
            'text': st.one_of(TEXT, values),
        }
    )
    content = st.one_of(TEXT, st.lists(st.one_of(block, values), max_size=3), values)
    message = st.fixed_dictionaries(
        {'role': st.sampled_from(['user', 'assistant', 'toolResult', 'system']) | values, 'content': content},
        optional={'timestamp': TIMESTAMPS},
    )
    return st.fixed_dictionaries(
        {'type': st.sampled_from(['message', 'session', 'compaction']) | SMALL_TEXT},
        optional={
            'id': st.one_of(SMALL_TEXT, values),
            'parentId': st.one_of(st.none(), SMALL_TEXT, values),
            'timestamp': TIMESTAMPS,
            'message': st.one_of(message, values, TEXT),
        },
    )


EVENTS = events(JSON)
FLAT_EVENTS = events(FLAT_JSON)
SESSION_KEYS = st.one_of(st.just(MAIN), st.just('agent:main:sub'), TEXT)
CALLERS = st.one_of(
    st.just(MAIN),
    TEXT,
    st.builds(Caller, SESSION_KEYS, visibility=st.sampled_from(['self', 'tree', 'agent', 'all']) | SMALL_TEXT),
)


def event_line(event: dict[str, Any], ascii_only: bool) -> bytes:
    """One JSONL line; with ``ascii_only=False`` lone surrogates are written raw (not UTF-8)."""
    return json.dumps(event, ensure_ascii=ascii_only).encode('utf-8', 'surrogatepass')


DEEP_TEXT = '[' * 2_000 + '"x"' + ']' * 2_000
SPECIAL_LINES = [
    rb'{"type": "message", "id": "s1", "message": {"role": "user", "content": "done \ud83d"}}',
    b'{"type": "message", "id": "d1", "message": {"role": "user", "content": ' + DEEP_TEXT.encode() + b'}}',
    DEEP_TEXT.encode(),
    b'{"type": "message", "id": "t1", "timestamp": 1e20, "message": {"role": "user", "content": "far future"}}',
    b'{"type": "message", "id": "t2", "timestamp": 1e400, "message": {"role": "user", "content": "inf"}}',
    b'{"type": "message", "id": "t3", "timestamp": NaN, "message": {"role": "user", "content": "nan"}}',
    b'{"type": "message", "id": "t4", "timestamp": ' + b'9' * 400 + b', "message": {"role": "user", "content": "x"}}',
    b'{"type": "message", "id": "b1", "message": {"role": "user", "content": "caf\xe9"}}',
    b'\xff\xfe',
    b'{"type": "message", "id": "p1", "message": "plain string"}',
    b'{"type": "message", "id": "u1", "message": {"role": "user", "content": "line\xe2\x80\xa8sep"}}',
    b'\xef\xbb\xbf{"type": "session", "id": "bom"}',
    b'{"type": "message", "id": "r1", "message": {"role": "user", "content": "crlf"}}\r',
    b'{"type": 1}',
    b'[]',
    b'',
]
LINES = st.one_of(
    st.builds(event_line, FLAT_EVENTS, st.booleans()),
    st.sampled_from(SPECIAL_LINES),
    st.binary(max_size=40),
)


# ---------------------------------------------------------------- config key positions

SEARCH_KEYS = [
    '',
    'enabled',
    'provider',
    'model',
    'fallback',
    'sources',
    'extraPaths',
    'experimental',
    'experimental.sessionMemory',
    'outputDimensionality',
    'remote',
    'remote.baseUrl',
    'remote.apiKey',
    'remote.headers',
    'remote.batch',
    'remote.batch.concurrency',
    'remote.batch.timeoutMinutes',
    'local.contextSize',
    'store',
    'store.path',
    'store.fts.tokenizer',
    'store.vector.enabled',
    'chunking',
    'chunking.tokens',
    'chunking.overlap',
    'cache.maxEntries',
    'sync.watchDebounceMs',
    'sync.intervalMinutes',
    'sync.sessions.deltaBytes',
    'query',
    'query.maxResults',
    'query.minScore',
    'query.hybrid.vectorWeight',
    'query.hybrid.textWeight',
    'query.hybrid.candidateMultiplier',
    'query.hybrid.mmr.lambda',
    'query.hybrid.temporalDecay.halfLifeDays',
    'multimodal',
    'multimodal.enabled',
    'multimodal.modalities',
    'multimodal.maxFileBytes',
]
CONFIG_PATHS = [
    *(
        f'{prefix}.{key}'.rstrip('.')
        for prefix in (
            'agents.defaults.memorySearch',
            'memory.search',
            'agents.entries.main.memory.search',
            'agents.list.0.memorySearch',
        )
        for key in SEARCH_KEYS
    ),
    '',
    'agents',
    'agents.defaults',
    'agents.list',
    'agents.list.0',
    'agents.list.0.id',
    'agents.entries',
    'agents.defaults.workspace',
    'agents.defaults.sandbox.sessionToolsVisibility',
    'memory',
    'memory.citations',
    'tools',
    'tools.sessions.visibility',
    'tools.agentToAgent.enabled',
    'logging.redactPatterns',
    'logging.redactPatterns.0',
    'models',
    'models.providers',
    'models.providers.x',
    'models.providers.x.headers',
    'models.providers.x.apiKey',
    'models.providers.x.baseUrl',
]
INDEX_CONFIG_KEYS = [
    'chunking.tokens',
    'chunking.overlap',
    'query.maxResults',
    'query.minScore',
    'query.hybrid.vectorWeight',
    'query.hybrid.textWeight',
    'query.hybrid.candidateMultiplier',
    'query.hybrid.mmr.enabled',
    'query.hybrid.mmr.lambda',
    'query.hybrid.temporalDecay.enabled',
    'query.hybrid.temporalDecay.halfLifeDays',
    'cache.maxEntries',
    'cache.enabled',
    'sync.onSearch',
    'store.fts.tokenizer',
    'multimodal.maxFileBytes',
]
"""Keys whose values a MemoryIndex uses at once (no network, no paths outside the test's folders)."""


def nest(path: str, value: Any) -> Any:
    """``nest('a.0.b', v)`` -> ``{'a': [{'b': v}]}`` (a numeric part is a list index)."""
    for part in reversed([p for p in path.split('.') if p]):
        value = [value] if part.isdigit() else {part: value}
    return value


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, key by key where both hold objects."""
    out = dict(base)
    for key, value in extra.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge(out[key], value) if both else value
    return out


def index_config(store: Path) -> dict[str, Any]:
    """A keyword-only config whose store lives at ``store``."""
    return {'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': str(store)}}}}}


# ---------------------------------------------------------------- fixtures

WORKSPACE = {
    'MEMORY.md': '# Facts\n- Retries for ERR_CONN_RESET use exponential backoff.\n- The deploy key is in the vault.\n',
    'memory/2026-01-05.md': '# 会议\nBBDown视频下载工具的配置：默认画质 1080P\n東京リージョンへデプロイ\n회의를 했다\n',
    'memory/people.md': '## Team\nمرحبا, שלום, emoji 😀 and e\u0301 combining.\n' + 'long line ' * 2_000 + '\n',
}


def make_workspace(root: Path, files: Mapping[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode('utf-8', 'surrogatepass') if isinstance(content, str) else content)
    return root


@pytest.fixture(scope='module')
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp('ws'), WORKSPACE)


@pytest.fixture(scope='module')
def index(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryIndex]:
    with MemoryIndex(workspace, index_config(tmp_path_factory.mktemp('store') / 'x.sqlite')) as idx:
        idx.sync()
        yield idx


@pytest.fixture(scope='module')
def tools(index: MemoryIndex, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryTools]:
    with SessionStore(tmp_path_factory.mktemp('sessions') / 'sessions.sqlite') as sessions:
        sessions.append(
            MAIN,
            {
                'type': 'message',
                'id': 'm1',
                'timestamp': 1_767_225_600_000,
                'message': {'role': 'user', 'content': 'we chose the walrus protocol; 数据库迁移'},
            },
        )
        sessions.append(
            'agent:main:child',
            {
                'type': 'message',
                'id': 'c1',
                'message': {'role': 'assistant', 'content': [{'type': 'text', 'text': 'walrus details'}]},
            },
            spawned_by=MAIN,
        )
        tools = MemoryTools(index, sessions)
        memsift.tools.configure(tools)
        try:
            yield tools
        finally:
            memsift.tools.configure(None)
            tools.close()


@pytest.fixture
def scratch() -> Iterator[Callable[[], Path]]:
    """A factory of fresh temporary folders (one per hypothesis example), all removed at the end."""
    made: list[str] = []

    def new() -> Path:
        made.append(tempfile.mkdtemp(prefix='memsift-fuzz-'))
        return Path(made[-1])

    yield new
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- the Rust core


@isolated
@fuzz()
@given(text=TEXT, other=TEXT, stem=st.one_of(st.booleans(), WRONG))
def test_analyzer(text: str, other: str, stem: Any) -> None:
    check_output('tokenize', call('tokenize', memsift.tokenize, text))
    analyzer = call('Analyzer', Analyzer, stem, wrong_type=not isinstance(stem, bool))
    if not isinstance(analyzer, Refused):
        check_output('Analyzer.tokenize', call('Analyzer.tokenize', analyzer.tokenize, text))
        check_output('Analyzer.tokenize_batch', call('Analyzer.tokenize_batch', analyzer.tokenize_batch, [text, other]))
        call('Analyzer.count_tokens', analyzer.count_tokens, text)
    call('estimate_chars', memsift.estimate_chars, text)
    call('jaccard', memsift.jaccard, text, other)


@isolated
@fuzz()
@given(text=TEXT, tokens=st.one_of(INTS, WRONG), overlap=st.one_of(INTS, WRONG))
def test_chunk_markdown(text: str, tokens: Any, overlap: Any) -> None:
    wrong = not (is_int(tokens) and is_int(overlap))
    chunks = call('chunk_markdown', memsift.chunk_markdown, text, tokens, overlap, wrong_type=wrong)
    if not isinstance(chunks, Refused):
        check_output('chunk_markdown', [(c.start_line, c.end_line, c.text, c.hash) for c in chunks])


@isolated
@fuzz()
@given(start=st.one_of(INTS, WRONG), end=st.one_of(INTS, WRONG), text=TEXT, digest=TEXT)
def test_chunk_constructor(start: Any, end: Any, text: str, digest: str) -> None:
    call('Chunk', Chunk, start, end, text, digest, wrong_type=not (is_int(start) and is_int(end)))


@isolated
@fuzz()
@given(path=TEXT, score=st.one_of(NUMBERS, WRONG), age=st.one_of(NUMBERS, WRONG), half=st.one_of(NUMBERS, WRONG))
def test_path_and_score_helpers(path: str, score: Any, age: Any, half: Any) -> None:
    call('memory_date_from_path', memsift.memory_date_from_path, path)
    call('is_evergreen_path', memsift.is_evergreen_path, path)
    call('bm25_score_to_unit', memsift.bm25_score_to_unit, score, wrong_type=not is_number(score))
    call('decay_multiplier', memsift.decay_multiplier, age, half, wrong_type=not (is_number(age) and is_number(half)))


@isolated
@fuzz()
@given(
    texts=st.lists(TEXT, max_size=4),
    paths=st.lists(TEXT, max_size=4),
    sources=st.lists(TEXT, max_size=4),
    ids=st.one_of(st.none(), st.lists(INTS, max_size=4)),
    query=TEXT,
    k=st.one_of(INTS, WRONG),
    only=st.one_of(st.none(), st.lists(TEXT, max_size=2)),
    generation=st.one_of(st.none(), INTS),
)
def test_bm25_index(
    texts: list[str],
    paths: list[str],
    sources: list[str],
    ids: list[int] | None,
    query: str,
    k: Any,
    only: list[str] | None,
    generation: int | None,
) -> None:
    bm25 = Bm25Index()
    n = min(len(texts), len(paths), len(sources))
    ids = list(range(n)) if ids is None else ids
    call('Bm25Index.add', bm25.add, ids, paths[:n], sources[:n], texts[:n])
    call('Bm25Index.commit', bm25.commit, generation)
    check_output(
        'Bm25Index.search', call('Bm25Index.search', bm25.search, query, k, sources=only, wrong_type=not is_int(k))
    )
    check_output(
        'Bm25Index.search_paths', call('Bm25Index.search_paths', bm25.search_paths, query, k, wrong_type=not is_int(k))
    )
    call('Bm25Index.delete_path', bm25.delete_path, paths[0] if paths else query)
    call('Bm25Index.commit', bm25.commit)
    call('Bm25Index.delete_ids', bm25.delete_ids, ids)
    call('Bm25Index.commit', bm25.commit)


@isolated
@fuzz()
@given(
    dims=st.one_of(st.integers(1, 8), INTS),
    metric=st.sampled_from(['cosine', 'dot']) | SMALL_TEXT,
    dtype=st.sampled_from(['f32', 'f16', 'i8']) | SMALL_TEXT,
    threshold=st.one_of(st.just(20_000), INTS),
    values=st.lists(FLOATS, min_size=1, max_size=24),
    ids=st.lists(INTS, min_size=1, max_size=3),
    k=st.one_of(INTS, WRONG),
    exact=st.one_of(st.none(), st.booleans()),
    extra=st.integers(0, 1),
)
def test_vector_store(
    dims: int,
    metric: str,
    dtype: str,
    threshold: int,
    values: list[float],
    ids: list[int],
    k: Any,
    exact: bool | None,
    extra: int,
) -> None:
    store = call('VectorStore', VectorStore, dims, metric=metric, dtype=dtype, ann_threshold=threshold)
    if isinstance(store, Refused) or not 0 < dims <= 64:
        return
    width = dims + extra  # extra: a wrong-width array, which must be refused with InvalidInputError
    with np.errstate(all='ignore'):
        cells = np.resize(np.array(values, dtype=np.float32), len(ids) * width)
    vectors = np.ascontiguousarray(cells.reshape(len(ids), width))
    call('VectorStore.add', store.add, ids, vectors)
    call('VectorStore.search', store.search, vectors[0], k, exact=exact, wrong_type=not is_int(k))
    call('VectorStore.search_batch', store.search_batch, vectors, k, exact=exact, wrong_type=not is_int(k))
    call('VectorStore.__contains__', store.__contains__, ids[0])
    call('VectorStore.remove', store.remove, ids)


@isolated
@fuzz()
@given(
    scores=st.lists(NUMBERS, max_size=6),
    texts=st.lists(TEXT, max_size=6),
    lam=NUMBERS,
    weights=st.tuples(NUMBERS, NUMBERS),
    k=INTS,
    mtimes=st.lists(st.none() | NUMBERS, max_size=6),
    now=NUMBERS,
    half=NUMBERS,
)
def test_ranking(
    scores: list[float],
    texts: list[str],
    lam: float,
    weights: tuple[float, float],
    k: int,
    mtimes: list[float | None],
    now: float,
    half: float,
) -> None:
    call('mmr', memsift.mmr, scores, texts, lam)
    call('normalize_weights', memsift._core.normalize_weights, *weights)
    call(
        'apply_temporal_decay', memsift.apply_temporal_decay, scores, texts, ['memory'] * len(texts), mtimes, now, half
    )
    n = len(scores)
    for mode in ('hybrid', 'vector-only', 'fts-only'):
        ranked = call(
            'rank_candidates',
            memsift._core.rank_candidates,
            list(range(n)),
            scores,
            scores[::-1],
            [0.0] * n,
            [i % 4 for i in range(n)],
            texts[:n] + [''] * (n - len(texts[:n])),
            ['memory'] * n,
            (mtimes + [None] * n)[:n],
            [len(t) for t in texts[:n]] + [0] * (n - len(texts[:n])),
            mode=mode,
            query=texts[0] if texts else '',
            keyword_best=now,
            vector_weight=weights[0],
            text_weight=weights[1],
            decay=(now, half),
            mmr=(lam, k),
            min_score=lam,
            limit=k,
            texts=texts[:n] + [''] * (n - len(texts[:n])),
        )
        if not isinstance(ranked, Refused):
            order, reported, _, _ = ranked
            assert (
                sorted(set(order)) == sorted(order) and all(0 <= i < n for i in order) and len(reported) == len(order)
            )


# ---------------------------------------------------------------- redaction


REGEXES = st.one_of(
    st.sampled_from(
        [
            'a{4294967296}',
            '(',
            'x{99999999999999999999}',
            '(?P<1>x)',
            '\\',
            '/x/gi',
            '/(/',
            '[',
            '(?<=a+)b',
            r'\N{no such name}',
            '(a)|(b)',
            '(?P<secret>token)',
            '^',
            '',
            ' ',
            '(' * 200 + ')' * 200,
        ]
    ),
    SMALL_TEXT,
)
"""``logging.redactPatterns`` entries: broken, odd and arbitrary regular expressions."""


@fuzz()
@given(text=TEXT, patterns=st.one_of(st.lists(REGEXES, min_size=1, max_size=3), WRONG))
def test_redact(text: str, patterns: Any) -> None:
    call('redact', redact, text)  # text in, text out: a lone surrogate may stay (outputs are checked downstream)
    redactor = call('Redactor', Redactor, patterns, wrong_type=not is_str_list(patterns))
    if not isinstance(redactor, Refused):
        call('Redactor.redact', redactor.redact, text)


# ---------------------------------------------------------------- load_config


@fuzz()
@given(path=st.sampled_from(CONFIG_PATHS), value=JSON, agent_id=st.one_of(st.just('main'), TEXT))
def test_load_config_value_at_real_key(path: str, value: Any, agent_id: str) -> None:
    call('load_config', memsift.load_config, nest(path, real(value)), agent_id)


@fuzz()
@given(
    root=st.dictionaries(TEXT, JSON, max_size=4),
    under=st.sampled_from(['', 'agents.defaults.memorySearch', 'memory.search', 'memory.search.query']),
)
def test_load_config_random_keys(root: dict[str, Any], under: str) -> None:
    call('load_config', memsift.load_config, nest(under, real(root)))


CONFIG_FILES = [
    b'[' * 2_000 + b']' * 2_000,
    b'{a:' * 2_000 + b'1' + b'}' * 2_000,
    b'{memory: {search: {query: {maxResults: 1' + b'0' * 400 + b'}}}}',
    b'{memory: {search: {chunking: {tokens: 18446744073709551616}}}}',
    b'{memory: {search: {query: {minScore: 1e400}}}}',
    b'{memory: {search: {query: {minScore: NaN}}}}',
    b'{memory: {search: {query: {maxResults: Infinity}}}}',
    b'{memory: {search: {provider: "\\ud83d"}}}',
    b'{"memory": {"search": {"provider": "none"}}}\xff',
    b'\xef\xbb\xbf{}',
    b'// only a comment',
    b'',
    b'\x00',
    b'{a: 1' + b'1' * 5_000 + b'}',
]


@fuzz()
@given(
    data=st.one_of(
        st.binary(max_size=200),
        TEXT.map(lambda t: t.encode('utf-8', 'surrogatepass')),
        st.builds(lambda v: json.dumps(v).encode(), FLAT_JSON),
        st.sampled_from(CONFIG_FILES),
    )
)
def test_load_config_file(data: bytes, scratch: Callable[[], Path]) -> None:
    file = scratch() / 'openclaw.json5'
    file.write_bytes(data)
    call('load_config(path)', memsift.load_config, file)


# ---------------------------------------------------------------- MemoryIndex


@fuzz()
@given(
    query=TEXT,
    max_results=st.one_of(st.none(), INTS, WRONG),
    min_score=st.one_of(st.none(), NUMBERS, WRONG),
    session_key=st.one_of(st.none(), TEXT),
    sources=st.one_of(st.none(), st.lists(TEXT, max_size=2)),
)
def test_memory_search(
    index: MemoryIndex, query: str, max_results: Any, min_score: Any, session_key: str | None, sources: list[str] | None
) -> None:
    wrong = not ((max_results is None or is_int(max_results)) and (min_score is None or is_number(min_score)))
    result = call(
        'MemoryIndex.search',
        index.search,
        query,
        max_results,
        min_score,
        session_key=session_key,
        sources=sources,
        wrong_type=wrong,
    )
    if not isinstance(result, Refused):
        check_output('MemoryIndex.search', result.to_dict())


@fuzz()
@given(
    path=st.one_of(st.sampled_from(sorted(WORKSPACE)), TEXT),
    from_line=st.one_of(st.none(), INTS, WRONG),
    lines=st.one_of(st.none(), INTS, WRONG),
)
def test_memory_get(index: MemoryIndex, path: str, from_line: Any, lines: Any) -> None:
    wrong = not ((from_line is None or is_int(from_line)) and (lines is None or is_int(lines)))
    check_output('MemoryIndex.get', call('MemoryIndex.get', index.get, path, from_line, lines, wrong_type=wrong))


def test_memory_status(index: MemoryIndex) -> None:
    for deep_check in (False, True):
        check_output('MemoryIndex.status', call('MemoryIndex.status', index.status, deep_check))


@fuzz(0.2)
@given(cache_days=st.one_of(NUMBERS, WRONG))
def test_memory_compact(index: MemoryIndex, cache_days: Any) -> None:
    wrong = not (isinstance(cache_days, int | float) and not isinstance(cache_days, bool))
    check_output(
        'MemoryIndex.compact', call('MemoryIndex.compact', index.compact, cache_days=cache_days, wrong_type=wrong)
    )


NOTE_BYTES = st.one_of(TEXT.map(lambda t: t.encode('utf-8', 'surrogatepass')), st.binary(max_size=200))


@fuzz(0.5)
@given(note=NOTE_BYTES, daily=NOTE_BYTES, query=TEXT, from_line=st.one_of(st.none(), INTS))
def test_memory_index_over_hostile_notes(
    note: bytes, daily: bytes, query: str, from_line: int | None, scratch: Callable[[], Path]
) -> None:
    root = scratch()
    ws = make_workspace(root / 'ws', {'MEMORY.md': note, 'memory/2026-01-05.md': daily, 'memory/ok.md': 'deploy'})
    idx = call('MemoryIndex', MemoryIndex, ws, index_config(root / 'x.sqlite'))
    if isinstance(idx, Refused):
        return
    try:
        check_output('MemoryIndex.sync', call('MemoryIndex.sync', lambda: idx.sync().to_dict()))
        for q in (query, note.decode('utf-8', 'replace')[:200]):
            result = call('MemoryIndex.search', idx.search, q, min_score=0)
            if not isinstance(result, Refused):
                check_output('MemoryIndex.search', result.to_dict())
        for path in ('MEMORY.md', 'memory/2026-01-05.md'):
            check_output('MemoryIndex.get', call('MemoryIndex.get', idx.get, path, from_line))
        check_output('MemoryIndex.status', call('MemoryIndex.status', idx.status))
    finally:
        call('MemoryIndex.close', idx.close)


@fuzz()
@given(key=st.sampled_from(INDEX_CONFIG_KEYS), value=st.one_of(NUMBERS, JSON))
def test_memory_index_under_fuzzed_config(key: str, value: Any, workspace: Path, scratch: Callable[[], Path]) -> None:
    config = call(
        'load_config',
        memsift.load_config,
        merge(index_config(scratch() / 'x.sqlite'), nest(f'memory.search.{key}', real(value))),
    )
    if isinstance(config, Refused):
        return
    idx = call('MemoryIndex', MemoryIndex, workspace, config)
    if isinstance(idx, Refused):
        return
    try:
        call('MemoryIndex.sync', idx.sync)
        result = call('MemoryIndex.search', idx.search, 'deploy 视频下载')
        if not isinstance(result, Refused):
            check_output('MemoryIndex.search', result.to_dict())
        check_output('MemoryIndex.status', call('MemoryIndex.status', idx.status))
    finally:
        call('MemoryIndex.close', idx.close)


# ---------------------------------------------------------------- SessionStore


def read_back(store: SessionStore, key: Any, query: str, caller: Any = MAIN) -> None:
    """Search and history as ``caller``, for ``key`` and the main session; outputs must be UTF-8 JSON."""
    wrong = not isinstance(caller, (str, Caller))
    check_output(
        'SessionStore.search', call('SessionStore.search', store.search, query, caller=caller, wrong_type=wrong)
    )
    for session in (key, MAIN):
        check_output(
            'SessionStore.history',
            call(
                'SessionStore.history',
                store.history,
                session,
                caller=caller,
                wrong_type=wrong or not isinstance(session, str),
            ),
        )
    check_output('SessionStore.sessions', call('SessionStore.sessions', store.sessions))


@fuzz()
@given(
    key=SESSION_KEYS,
    event=st.one_of(EVENTS, EVENTS, JSON),
    follow_up=EVENTS,
    query=TEXT,
    caller=CALLERS,
    spawned_by=st.one_of(st.none(), TEXT),
)
def test_session_append(
    key: str, event: Any, follow_up: dict[str, Any], query: str, caller: Any, spawned_by: str | None
) -> None:
    with SessionStore(':memory:') as store:
        event = real(event)
        call('SessionStore.append', store.append, key, event, spawned_by, wrong_type=not isinstance(event, dict))
        call('SessionStore.append', store.append, key, real(follow_up))
        read_back(store, key, query)
        read_back(store, key, query, caller)


@fuzz()
@given(
    lines=st.lists(LINES, min_size=1, max_size=6),
    newline=st.sampled_from([b'\n', b'\r\n']),
    last_newline=st.booleans(),
    key=st.one_of(st.just(MAIN), TEXT),
    query=TEXT,
    forward=st.booleans(),
)
def test_session_import(
    lines: list[bytes],
    newline: bytes,
    last_newline: bool,
    key: str,
    query: str,
    forward: bool,
    scratch: Callable[[], Path],
) -> None:
    file = scratch() / 'transcript.jsonl'
    file.write_bytes(newline.join(lines) + (newline if last_newline else b''))
    with SessionStore(':memory:') as store:
        check_output(
            'SessionStore.import_jsonl',
            call('SessionStore.import_jsonl', store.import_jsonl, file, key, forward=forward),
        )
        read_back(store, key, query)
        call('SessionStore.reconcile', store.reconcile)
        read_back(store, key, 'done')


# ---------------------------------------------------------------- tools


@fuzz()
@given(
    query=TEXT,
    max_results=st.one_of(st.none(), INTS, WRONG),
    min_score=st.one_of(st.none(), NUMBERS, WRONG),
    corpus=st.sampled_from(['memory', 'sessions', 'all']) | SMALL_TEXT,
    session_key=st.one_of(st.none(), TEXT),
    path=st.one_of(st.sampled_from(sorted(WORKSPACE)), TEXT),
    from_=st.one_of(st.none(), INTS, WRONG),
    lines=st.one_of(st.none(), INTS, WRONG),
)
def test_memory_tools(
    tools: MemoryTools,
    query: str,
    max_results: Any,
    min_score: Any,
    corpus: str,
    session_key: str | None,
    path: str,
    from_: Any,
    lines: Any,
) -> None:
    wrong = not ((max_results is None or is_int(max_results)) and (min_score is None or is_number(min_score)))
    check_output(
        'tools.memory_search',
        call(
            'tools.memory_search',
            tools.memory_search,
            query,
            max_results,
            min_score,
            corpus,
            sessionKey=session_key,
            wrong_type=wrong,
        ),
    )
    wrong = not ((from_ is None or is_int(from_)) and (lines is None or is_int(lines)))
    check_output('tools.memory_get', call('tools.memory_get', tools.memory_get, path, from_, lines, wrong_type=wrong))


@fuzz()
@given(
    query=TEXT,
    session_key=st.one_of(st.none(), st.sampled_from([MAIN, 'agent:main:child', 'current', 'main']), TEXT),
    limit=st.one_of(st.none(), INTS, WRONG),
    include_tools=st.one_of(st.booleans(), WRONG),
)
def test_session_tools(tools: MemoryTools, query: str, session_key: str | None, limit: Any, include_tools: Any) -> None:
    wrong = not (limit is None or is_int(limit))
    check_output(
        'tools.sessions_search',
        call('tools.sessions_search', tools.sessions_search, query, session_key, limit, wrong_type=wrong),
    )
    check_output(
        'tools.sessions_history',
        call(
            'tools.sessions_history',
            tools.sessions_history,
            MAIN if session_key is None else session_key,
            limit,
            include_tools,
            wrong_type=wrong or not isinstance(include_tools, bool),
        ),
    )


# ---------------------------------------------------------------- regressions: the exact inputs, once each


OK_LINE = b'{"type": "message", "id": "ok", "message": {"role": "user", "content": "done"}}'


def check_import(tmp_path: Path, *lines: bytes) -> None:
    """Import ``lines`` as the main session, then search and read it back."""
    file = tmp_path / 'transcript.jsonl'
    file.write_bytes(b'\n'.join(lines) + b'\n')
    with SessionStore(':memory:') as store:
        check_output('SessionStore.import_jsonl', call('SessionStore.import_jsonl', store.import_jsonl, file, MAIN))
        read_back(store, MAIN, 'done')


def test_regression_import_lone_surrogate_escape(tmp_path: Path) -> None:
    check_import(tmp_path, SPECIAL_LINES[0])


def test_regression_import_2000_deep_nesting(tmp_path: Path) -> None:
    check_import(tmp_path, SPECIAL_LINES[1], DEEP_TEXT.encode(), OK_LINE)


def test_regression_import_timestamp_1e20(tmp_path: Path) -> None:
    check_import(tmp_path, SPECIAL_LINES[3])


def test_regression_import_non_utf8_line(tmp_path: Path) -> None:
    check_import(tmp_path, OK_LINE, SPECIAL_LINES[7])


def test_regression_import_plain_string_message(tmp_path: Path) -> None:
    check_import(tmp_path, SPECIAL_LINES[9])


@pytest.mark.parametrize(
    'event',
    [
        pytest.param({'type': 'message', 'id': 'p1', 'message': 'plain string'}, id='plain-string-message'),
        pytest.param(
            {'type': 'message', 'id': 's1', 'message': {'role': 'user', 'content': 'done \ud83d'}}, id='lone-surrogate'
        ),
        pytest.param(
            {'type': 'message', 'id': 'd1', 'message': {'role': 'user', 'content': deep('blocks')}}, id='deep-content'
        ),
        pytest.param(
            {'type': 'message', 'id': 'd2', 'message': {'role': 'user', 'content': 'done'}, 'meta': deep()},
            id='deep-extra-field',
        ),
        pytest.param(
            {'type': 'message', 'id': 't1', 'timestamp': 1e20, 'message': {'role': 'user', 'content': 'done'}},
            id='timestamp-1e20',
        ),
        pytest.param(
            {'type': 'message', 'id': 't2', 'timestamp': 10**400, 'message': {'role': 'user', 'content': 'done'}},
            id='timestamp-10**400',
        ),
    ],
)
def test_regression_append_then_read(event: dict[str, Any]) -> None:
    with SessionStore(':memory:') as store:
        call('SessionStore.append', store.append, MAIN, event)
        read_back(store, MAIN, 'done')


@pytest.mark.parametrize(
    ('tokens', 'overlap'),
    [(2**64, 0), (2**63, 80), (10**400, 80), (400, 2**64), (400, -(2**64)), (2**64, 2**64 - 1), (-(2**64), 0)],
)
def test_regression_chunk_markdown_absurd_sizes(tokens: int, overlap: int) -> None:
    call('chunk_markdown', memsift.chunk_markdown, '# Title\nbody\n', tokens, overlap)


@pytest.mark.parametrize(
    'value',
    [10**400, -(10**400), 2**64, math.inf, math.nan, 1e20],
    ids=['10**400', '-10**400', '2**64', 'inf', 'nan', '1e20'],
)
@pytest.mark.parametrize(
    'key',
    [
        'query.maxResults',
        'query.minScore',
        'chunking.tokens',
        'chunking.overlap',
        'cache.maxEntries',
        'query.hybrid.candidateMultiplier',
    ],
)
def test_regression_load_config_huge_numbers(key: str, value: Any, workspace: Path, tmp_path: Path) -> None:
    call('load_config', memsift.load_config, nest(f'agents.defaults.memorySearch.{key}', value))
    # A value load_config accepts must work in an index too.
    root = merge(index_config(tmp_path / 'x.sqlite'), nest(f'memory.search.{key}', value))
    if isinstance(call('load_config', memsift.load_config, root), Refused):
        return
    idx = call('MemoryIndex', MemoryIndex, workspace, root)
    if not isinstance(idx, Refused):
        try:
            call('MemoryIndex.sync', idx.sync)
            call('MemoryIndex.search', idx.search, 'deploy')
        finally:
            idx.close()


@pytest.mark.parametrize(
    'path',
    [
        'agents.defaults.memorySearch',
        'agents.defaults.memorySearch.query.maxResults',
        'memory.search.extraPaths',
        'logging.redactPatterns',
        'models.providers.x',
        'agents.list',
    ],
)
@pytest.mark.parametrize('kind', ['list', 'dict'])
def test_regression_load_config_deep_nesting(path: str, kind: str) -> None:
    call('load_config', memsift.load_config, nest(path, deep(kind)))


def test_regression_load_config_deep_nesting_in_two_layers() -> None:
    layer = {'query': deep('dict')}
    root = {'agents': {'defaults': {'memorySearch': layer}, 'list': [{'id': 'main', 'memorySearch': layer}]}}
    call('load_config', memsift.load_config, root)


@pytest.mark.parametrize('data', CONFIG_FILES[:3], ids=['deep-list', 'deep-object', '10**400'])
def test_regression_load_config_file(data: bytes, tmp_path: Path) -> None:
    file = tmp_path / 'openclaw.json5'
    file.write_bytes(data)
    call('load_config(path)', memsift.load_config, file)


def test_regression_index_over_hostile_notes(tmp_path: Path) -> None:
    notes: dict[str, str | bytes] = {
        'MEMORY.md': 'done \ud83d and NUL \x00\n',
        'memory/2026-01-05.md': b'caf\xe9 done\n',
        'memory/deep.md': DEEP_TEXT,
        'memory/long.md': 'done ' * 200_000,
    }
    ws = make_workspace(tmp_path / 'ws', notes)
    idx = call('MemoryIndex', MemoryIndex, ws, index_config(tmp_path / 'x.sqlite'))
    if isinstance(idx, Refused):
        return
    try:
        check_output('MemoryIndex.sync', call('MemoryIndex.sync', lambda: idx.sync().to_dict()))
        for query in ('done', 'done \ud83d', '\x00'):
            result = call('MemoryIndex.search', idx.search, query, min_score=0)
            if not isinstance(result, Refused):
                check_output('MemoryIndex.search', result.to_dict())
        for path in ('MEMORY.md', 'memory/2026-01-05.md', 'memory/deep.md'):
            check_output('MemoryIndex.get', call('MemoryIndex.get', idx.get, path))
        check_output('MemoryIndex.status', call('MemoryIndex.status', idx.status, True))
    finally:
        idx.close()


@isolated
def test_regression_bm25_huge_k() -> None:
    bm25 = Bm25Index()
    bm25.add([0], ['memory/a.md'], ['memory'], ['x y'])
    bm25.commit()
    for k in (2**31, 2**32, 2**63 - 1):
        call('Bm25Index.search', bm25.search, 'x', k)
        call('Bm25Index.search_paths', bm25.search_paths, 'a', k)


def test_regression_redact_pattern_with_huge_repeat() -> None:
    call('Redactor', Redactor, ['a{4294967296}'])


def test_regression_module_tools_with_lone_surrogates(tools: MemoryTools) -> None:
    cases: list[tuple[str, Callable[..., Any], str]] = [
        ('memory_search', memsift.tools.memory_search, 'deploy \ud83d'),
        ('memory_get', memsift.tools.memory_get, '\ud83d.md'),
        ('sessions_search', memsift.tools.sessions_search, 'walrus \ud83d'),
        ('sessions_history', memsift.tools.sessions_history, '\ud83d'),
    ]
    for name, fn, arg in cases:
        check_output(f'memsift.tools.{name}', call(f'memsift.tools.{name}', fn, arg))


# ---------------------------------------------------------------- the PostgreSQL backend


@fuzz(0.3)
@given(dsn=st.one_of(TEXT, TEXT.map(lambda t: 'postgresql://' + t)), agent_id=st.one_of(st.just('main'), TEXT))
def test_postgres_dsn(dsn: str, agent_id: str, scratch: Callable[[], Path]) -> None:
    """Any text as ``store.dsn`` (no server behind it), and any agent id: a typed error, never a driver's."""
    root = scratch()
    store = {'backend': 'postgres', 'dsn': dsn, 'path': str(root / 'x.sqlite')}
    config = {'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': store}}}}
    result = call('MemoryIndex(postgres)', MemoryIndex, make_workspace(root / 'ws', WORKSPACE), config, agent_id)
    if not isinstance(result, Refused):
        result.close()
    sessions = call('SessionStore(postgres)', SessionStore, dsn if dsn.startswith('postgresql://') else None, agent_id)
    if not isinstance(sessions, Refused):
        sessions.close()


@pytest.fixture(scope='module')
def pg_tools(postgres_server: Any, workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryTools]:
    """The fuzzed workspace served from a PostgreSQL database, with a session in it."""
    dsn = postgres_server.create_database('fuzz_tools')
    store = {'backend': 'postgres', 'dsn': dsn, 'path': str(tmp_path_factory.mktemp('pg') / 'x.sqlite')}
    tools = MemoryTools.open(
        workspace, {'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': store}}}}, sync=False
    )
    tools.index.sync()
    tools.sessions.append(
        MAIN, {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'walrus protocol 数据库'}}
    )
    yield tools
    tools.close()


@fuzz(0.5)
@given(query=TEXT, path=TEXT, session_key=st.one_of(st.none(), TEXT))
def test_postgres_tools(pg_tools: MemoryTools, query: str, path: str, session_key: str | None) -> None:
    """The four tools on the PostgreSQL backend: arbitrary queries, paths and session keys answer or refuse."""
    for name, fn, args in (
        ('memory_search(postgres)', pg_tools.memory_search, (query,)),
        ('memory_get(postgres)', pg_tools.memory_get, (path,)),
        ('sessions_search(postgres)', pg_tools.sessions_search, (query,)),
        ('sessions_history(postgres)', pg_tools.sessions_history, (session_key or query,)),
    ):
        result = call(name, fn, *args)
        if not isinstance(result, Refused):
            check_output(name, result)
