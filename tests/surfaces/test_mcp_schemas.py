"""The MCP tools' output schemas (``memsift.tools.mcp.schemas``) cannot drift from the results they describe.

The schemas are written out by hand, while the results come from the typed ``SearchResult``/``MemoryHit``
``to_dict()``, the index reader, the session store and the tools' error dicts. For every tool, each result shape it
can give (errors, deadlines and truncation included, reached through the real code) must validate against the
schema, match exactly one of its shapes, and use only keys the schema names, at every depth; and every key the
schema names must come out of some result, so a key dropped from the code does not linger in the schema.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import TimeoutError as FutureTimeout

import anyio
import jsonschema
import pytest
from conftest import memory_config, write
from mcp import Client

import memsift
from memsift.errors import StoreError
from memsift.search.results import MemoryHit, SearchResult, openclaw2_fields
from memsift.sessions.query import search_response
from memsift.tools.mcp import OUTPUT_SCHEMAS, build_server

pytestmark = pytest.mark.timeout(60)

MAIN = 'agent:main:main'
LONG = 'agent:main:long'
T0 = 1767225600000  # 2026-01-01, in milliseconds

# ---------------------------------------------------------------- the check


def shapes(schema: dict) -> list[dict]:
    """The alternatives of a tool's schema, each with the root's keywords (``type: object``) folded in."""
    root = {key: value for key, value in schema.items() if key != 'anyOf'}
    return [{**root, **branch} for branch in schema.get('anyOf', [schema])]


def schema_errors(schema: dict, instance) -> list[str]:
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(instance)]


def walk(schema: dict, instance, where: str, seen: set[str]) -> list[str]:
    """The key paths of ``instance`` that ``schema`` does not name (``$.results[].path`` style); adds the named ones
    to ``seen``. An object schema without ``properties`` (``debug``) is free-form: its keys are not checked."""
    if 'anyOf' in schema:
        matching = [shape for shape in shapes(schema) if not schema_errors(shape, instance)]
        if len(matching) != 1:
            return [f'{where}: matches {len(matching)} of the shapes, not exactly one']
        schema = matching[0]
    undeclared = []
    if isinstance(instance, dict) and 'properties' in schema:
        for key, value in instance.items():
            path = f'{where}.{key}'
            if key not in schema['properties']:
                undeclared.append(path)
            else:
                seen.add(path)
                undeclared += walk(schema['properties'][key], value, path, seen)
    elif isinstance(instance, list) and 'items' in schema:
        for item in instance:
            undeclared += walk(schema['items'], item, f'{where}[]', seen)
    return undeclared


def declared(schema: dict, where: str = '$') -> set[str]:
    """Every key path ``schema`` names, in any of its shapes."""
    paths = set()
    for shape in shapes(schema) if 'anyOf' in schema else [schema]:
        for key, sub in shape.get('properties', {}).items():
            paths |= {f'{where}.{key}', *declared(sub, f'{where}.{key}')}
        if 'items' in shape:
            paths |= declared(shape['items'], f'{where}[]')
    return paths


def check(results: list[tuple[str, dict]]) -> dict[str, set[str]]:
    """Each ``(tool, result)`` validates against the tool's schema and carries only keys it names; returns the key
    paths seen, by tool."""
    seen: dict[str, set[str]] = {name: set() for name in OUTPUT_SCHEMAS}
    for name, result in results:
        schema = OUTPUT_SCHEMAS[name]
        assert schema_errors(schema, result) == [], (name, result)
        assert walk(schema, result, '$', seen[name]) == [], (name, result)
    return seen


def test_the_check_finds_unnamed_keys_at_any_depth():
    hit = MemoryHit('MEMORY.md', 1, 2, 0.5, 'x').to_dict()
    good = SearchResult([], 'none', 'fts', debug={'anything': {'goes': 1}}).to_dict() | {'results': [hit]}
    seen: set[str] = set()
    assert walk(OUTPUT_SCHEMAS['memory_search'], good, '$', seen) == []
    assert '$.results[].snippet' in seen and '$.debug' in seen and not any('anything' in path for path in seen)
    assert walk(OUTPUT_SCHEMAS['memory_search'], {**good, 'extra': 1}, '$', set()) == ['$.extra']
    nested = {**good, 'results': [{**hit, 'rank': 1}]}
    assert walk(OUTPUT_SCHEMAS['memory_search'], nested, '$', set()) == ['$.results[].rank']
    assert walk(OUTPUT_SCHEMAS['sessions_history'], {'x': 1}, '$', set()) == [
        '$: matches 0 of the shapes, not exactly one'
    ]
    assert '$.messages[].content' in declared(OUTPUT_SCHEMAS['sessions_history'])


# ---------------------------------------------------------------- the typed results and the response builders


def search_results() -> list[tuple[str, dict]]:
    """``SearchResult`` and ``MemoryHit`` with every field set, as a result and as the unavailable shape."""
    # explain: only with MemoryIndex.search(explain=True), which the tools never ask for.
    hits = [
        MemoryHit('MEMORY.md', 1, 3, 0.9, 'The deploy key', 'memory', 'MEMORY.md#L1-L3'),
        MemoryHit('sessions/abc.jsonl', 4, 4, 0.5, 'orion-7', 'sessions', 'sessions/abc.jsonl#L4'),
        # alsoIn: the copies query.dedupe folded into this hit (tests/search/test_dedupe.py reaches it for real).
        MemoryHit(
            'memory/a.md',
            2,
            2,
            0.4,
            'Deploy on Tuesday',
            also_in=({'path': 'memory/b.md', 'startLine': 3, 'endLine': 3},),
            # front: a note's front-matter (tests/search/test_when.py reaches it for real)
            front={'title': 'Deploys', 'date': '2026-11-03', 'tags': ['ops']},
            # contract: OpenClaw 2.x's fields (tests/surfaces/test_tools_openclaw2.py reaches them for real)
            contract=openclaw2_fields('memory/a.md', 'memory', 2.0, 0.5, 1.0, 7),
        ),
    ]
    full = {
        'provider': 'openai',
        'model': 'text-embedding-3-small',
        'citations': 'on',
        'mode': 'hybrid',
        'fallback': {'from': 'local', 'reason': 'model missing'},
        'debug': {'tookMs': 1.5},
        'warning': 'w',
        'action': 'a',
    }
    ok = SearchResult(hits, **full).to_dict()
    unavailable = SearchResult([], **full, error='embedding provider failed').to_dict()
    assert ok['results'][1]['corpus'] == 'sessions' and unavailable['unavailable'] is True
    assert 'alsoIn' not in ok['results'][0] and ok['results'][2]['alsoIn'][0]['path'] == 'memory/b.md'
    return [('memory_search', ok), ('memory_search', unavailable)]


def sessions_responses() -> list[tuple[str, dict]]:
    """What ``search_response`` (which builds every ``sessions_search`` answer) gives for hits of both kinds, more
    than the limit (truncated) and sessions still being indexed (indexing, warning): the store reports indexing only
    while a large stale session is rebuilt in the background, which the tests of sessions/ reach."""
    hit = {'sessionKey': MAIN, 'timestamp': T0, 'role': 'user', 'snippet': 'orion-7', 'sessionId': 's1'}
    hits = [
        {**hit, 'score': 0.9, 'messageId': 'm1', 'match': 'all'},
        {**hit, 'score': 0.8, 'messageId': 'm2', 'match': 'all'},
        {**hit, 'score': 0.4, 'messageId': 'm3', 'match': 'partial'},
    ]
    response = search_response(hits, True, 1)
    assert response['truncated'] is True and response['indexing'] is True, response
    return [('sessions_search', response)]


def test_every_field_of_the_typed_search_results_is_in_the_memory_search_schema():
    """A field added to ``SearchResult`` or ``MemoryHit`` (and to ``to_dict``) must be set in
    :func:`search_results`, and named by the schema."""
    assert [f.name for f in dataclasses.fields(MemoryHit)] == [
        'path',
        'start_line',
        'end_line',
        'score',
        'snippet',
        'source',
        'citation',
        'explain',
        'also_in',
        'front',
        'contract',
    ]
    assert [f.name for f in dataclasses.fields(SearchResult)] == [
        'results',
        'provider',
        'model',
        'citations',
        'mode',
        'fallback',
        'debug',
        'error',
        'warning',
        'action',
    ]
    seen = check(search_results())['memory_search']
    assert {'$.fallback.from', '$.results[].citation', '$.action', '$.results[].alsoIn[].endLine'} <= seen
    assert {'$.results[].title', '$.results[].date', '$.results[].tags'} <= seen
    assert {'$.results[].textScore', '$.results[].vectorScore', '$.results[].provenance.observedAt'} <= seen


def test_every_sessions_search_response_key_is_in_the_schema():
    seen = check(sessions_responses())['sessions_search']
    assert {'$.indexing', '$.warning', '$.truncated', '$.results[].match'} <= seen


# ---------------------------------------------------------------- every tool, through the real code


def message(event_id, parent, role, text, minutes=0):
    return {
        'type': 'message',
        'id': event_id,
        'parentId': parent,
        'timestamp': T0 + minutes * 60_000,
        'message': {'role': role, 'content': text},
    }


@pytest.fixture
def home(tmp_path):
    """A workspace of two memory files, and two sessions: a short one and one too long for one history answer."""
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\nStandup moved to 9:30 on Mondays.\n')
    write(
        ws / 'memory' / '2026-11-27.md',
        '# 2026-11-27\n- The deploy key lives in the team vault.\n- Standup moved to 9:30 on Mondays.\n',
    )  # a copy: alsoIn
    write(ws / 'memory' / '2026-11-28.md', '数据库迁移在周五完成\nERR_CONN_RESET retried with backoff\n' * 800)
    with memsift.SessionStore(tmp_path / 'sessions.sqlite', 'main') as store:
        store.append_many(
            MAIN,
            [
                message('m1', None, 'user', 'Remember: the Kubernetes cluster is named orion-7'),
                message('m2', 'm1', 'assistant', 'Noted, the cluster is orion-7.', 1),
                message('m3', 'm2', 'user', 'Was orion-7 upgraded? The database migration is on Friday', 2),
                message('m4', 'm3', 'toolResult', 'kubectl: orion-7 v1.31', 3),
            ],
        )
        # 12 messages of ~4,000 characters: more than sessions_history's 32 KiB, so the oldest are dropped.
        store.append_many(
            LONG,
            [message(f'l{i}', f'l{i - 1}' if i else None, 'user', f'note {i} ' + 'word ' * 800, i) for i in range(12)],
            spawned_by=MAIN,
        )
    return tmp_path


def open_tools(home, **search):
    return memsift.MemoryTools.open(
        home / 'ws',
        memory_config(home, provider='none', **search),
        sessions_path=home / 'sessions.sqlite',
        sync=False,
    )


def openclaw2_answers(home) -> list[tuple[str, dict]]:
    """The answers only a 2.x config gives: its corpora, result fields and ``memory_get`` window and statuses."""
    config = {
        'memory': {'search': {'provider': 'none'}},
        'plugins': {'entries': {'memsift': {'config': {'store': {'path': str(home / 'v2' / '{agentId}.sqlite')}}}}},
    }
    with memsift.MemoryTools.open(home / 'ws', config, sessions_path=home / 'v2.sqlite', sync=False) as tools:
        tools.index.sync()
        return [
            *(('memory_search', tools.memory_search('deploy key', corpus=c)) for c in ('all', 'wiki', 'sessions')),
            *(('memory_get', tools.memory_get(path)) for path in ('MEMORY.md', 'memory/none.md', '../x.md')),
            *(('memory_get', tools.memory_get('MEMORY.md', corpus=c)) for c in ('wiki', 'all')),
            ('memory_get', tools.memory_get('memory/none.md', corpus='all')),
        ]


def raise_(error):
    raise error


def past_the_deadline(tools, monkeypatch):
    """Every call of ``tools`` runs out of time (as a slow provider or a locked store makes it)."""

    def timeout(fn, timeout=None):
        raise FutureTimeout

    monkeypatch.setattr(tools, '_call', timeout)


CALLS = [
    ('memory_search', {'query': 'deploy key vault', 'minScore': 0}, False),
    ('memory_search', {'query': 'nothing like this at all'}, False),
    ('memory_search', {'query': 'orion-7', 'corpus': 'sessions'}, False),  # with its warning
    ('memory_get', {'path': 'MEMORY.md', 'from': 2, 'lines': 1}, False),
    ('memory_get', {'path': 'memory/2026-11-28.md'}, False),  # over 20,000 characters: truncated, nextFrom
    ('memory_get', {'path': 'memory/2026-11-28.md', 'from': 9999}, False),  # past the end: no lines
    ('memory_get', {'path': '../../etc/passwd'}, True),
    ('sessions_search', {'query': 'orion-7', 'limit': 1}, False),  # more than the limit: truncated
    ('sessions_search', {'query': 'when is the database migration'}, False),  # partial matches too
    ('sessions_search', {'query': '   '}, True),
    ('sessions_search', {'query': 'x', 'sessionKey': 'agent:other:main'}, True),
    ('sessions_history', {'sessionKey': MAIN, 'includeTools': True}, False),
    ('sessions_history', {'sessionKey': LONG}, False),  # over 32 KiB: truncated
    ('sessions_history', {'sessionKey': 'agent:other:main'}, True),
    # memory_write (with allow_write), last: the notes it writes must not change what the calls above find.
    ('memory_write', {'text': 'Lunch moved to noon on Fridays.', 'path': 'memory/lunch.md'}, False),
    ('memory_write', {'text': '   '}, True),
    ('memory_write', {'text': 'x', 'path': '../outside.md'}, True),
]


def test_every_result_of_every_tool_is_described_by_its_schema(home, monkeypatch, embedder):
    async def over_mcp(tools):
        async with Client(build_server(tools, allow_write=True)) as client:
            results = []
            for name, arguments, failed in CALLS:
                result = await client.call_tool(name, arguments)
                assert result.is_error is failed, (name, arguments, result)
                results.append((name, result.structured_content))
            return results

    with open_tools(home) as tools:
        tools.index.sync()
        results = anyio.run(over_mcp, tools)
        # What the MCP layer turns away before the tool sees it: the tool's own error dict.
        results.append(('memory_search', tools.memory_search('x', maxResults=0)))
        # Transcript embeddings whose provider is down: the ranked top-up says why it ran without vectors (debug).
        tools.sessions.use_embeddings(embedder, background=False)
        embedder.fail = True
        results.append(('sessions_search', tools.sessions_search('when is the database migration')))
        # A note written whose indexing failed: said in a warning.
        monkeypatch.setattr(tools.index, 'sync', lambda *args, **kwargs: raise_(StoreError('the disk is full')))
        results.append(('memory_write', tools.memory_write('Indexed later.', 'memory/lunch.md')))
        past_the_deadline(tools, monkeypatch)
        results += [
            ('memory_write', tools.memory_write('Never written.')),  # timed out: whether it was written is unknown
            ('memory_search', tools.memory_search('deploy key', minScore=0)),  # keyword results, partial
            ('memory_get', tools.memory_get('MEMORY.md')),
            ('sessions_search', tools.sessions_search('orion-7')),
            ('sessions_history', tools.sessions_history(MAIN)),
        ]
    with open_tools(home, enabled=False) as off:
        results.append(('memory_search', off.memory_search('vault')))  # search unavailable
        past_the_deadline(off, monkeypatch)
        results.append(('memory_search', off.memory_search('vault')))  # unavailable, partial
    results += openclaw2_answers(home)
    hits = [hit for name, result in results if name == 'memory_search' for hit in result.get('results', [])]
    assert any('alsoIn' in hit for hit in hits), hits  # the copy folded into the note it repeats
    by_shape = {(name, tuple(sorted(result))) for name, result in results}
    assert len(by_shape) >= 12, by_shape  # the successes and errors of each tool, not one shape over and over

    seen = check([*results, *search_results(), *sessions_responses()])
    for name, schema in OUTPUT_SCHEMAS.items():
        unseen = declared(schema) - seen[name]
        assert unseen == set(), f'{name}: the schema names keys no result carries: {sorted(unseen)}'
