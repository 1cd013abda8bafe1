"""The ``outputSchema`` of each MCP tool (JSON Schema): every shape of the dict the Python tool returns as
structured content, the error dicts too.

A client validates a successful result against it (the SDK's client does, with jsonschema) and may validate any
result, so a shape missing here would turn a good answer into a client-side failure. Keys a later version may add
stay allowed (no ``additionalProperties: false``). The schemas are written out rather than derived, because the
result dicts are built in several places (:class:`~memsift.search.results.SearchResult`, the index reader, the
session store, the tools' error dicts); ``tests/surfaces/test_mcp_schemas.py`` keeps them in step with those: each
real result validates, and every key a result carries is named here.

>>> sorted(OUTPUT_SCHEMAS)
['memory_get', 'memory_search', 'memory_write', 'sessions_history', 'sessions_search']
>>> MEMORY_GET_SCHEMA['anyOf'][1]['required']
['path', 'text', 'error']
"""

from __future__ import annotations

from typing import Any

from memsift.index.reader import MAX_GET_CHARS

__all__ = [
    'MEMORY_GET_SCHEMA',
    'MEMORY_SEARCH_SCHEMA',
    'MEMORY_WRITE_SCHEMA',
    'OUTPUT_SCHEMAS',
    'SESSIONS_HISTORY_SCHEMA',
    'SESSIONS_SEARCH_SCHEMA',
]

_STRING = {'type': 'string'}
_INTEGER = {'type': 'integer'}
_NUMBER = {'type': 'number'}
_BOOLEAN = {'type': 'boolean'}
_FLAG = {'const': True}
_DEBUG = {'type': 'object', 'description': 'Timings and decisions of this call, for diagnosis; keys may change.'}

_REFUSED = {
    'type': 'object',
    'description': 'A refused call (isError): a bad argument, or a session the caller may not see.',
    'properties': {'status': {'enum': ['error', 'forbidden']}, 'error': _STRING},
    'required': ['status', 'error'],
}

_CORPORA = {
    'type': 'array',
    'description': 'OpenClaw 2.x: which corpora the answer covers.',
    'items': {
        'type': 'object',
        'properties': {'corpus': _STRING, 'outcome': {'enum': ['ok', 'not-registered', 'unavailable']}},
        'required': ['corpus', 'outcome'],
    },
}

_MEMORY_HIT = {
    'type': 'object',
    'properties': {
        'path': _STRING,
        'startLine': _INTEGER,
        'endLine': _INTEGER,
        'score': _NUMBER,
        'snippet': _STRING,
        'source': _STRING,
        'corpus': {'enum': ['memory', 'sessions']},
        'citation': _STRING,
        'title': {**_STRING, 'description': "The note's front-matter title."},
        'date': {**_STRING, 'description': "The note's front-matter date (ISO)."},
        'tags': {'type': 'array', 'items': _STRING, 'description': "The note's front-matter tags."},
        'textScore': {**_NUMBER, 'description': 'OpenClaw 2.x: the keyword leg score, r / (1 + r) of BM25.'},
        'importance': {**_INTEGER, 'description': "OpenClaw 2.x: the entry's <!-- importance: N --> (1 to 10)."},
        'vectorScore': {**_NUMBER, 'description': 'OpenClaw 2.x, hybrid mode: the cosine similarity.'},
        'provenance': {
            'type': 'object',
            'description': 'OpenClaw 2.x: who wrote it (agent, system, untrusted) and when it was seen (ms).',
            'properties': {'originClass': _STRING, 'sessionKind': _STRING, 'observedAt': _INTEGER},
            'required': ['originClass', 'sessionKind'],
        },
        'alsoIn': {
            'type': 'array',
            'description': 'Other places holding the same text (or nearly), folded into this result, best first.',
            'items': {
                'type': 'object',
                'properties': {'path': _STRING, 'startLine': _INTEGER, 'endLine': _INTEGER},
                'required': ['path', 'startLine', 'endLine'],
            },
        },
    },
    'required': ['path', 'startLine', 'endLine', 'score', 'snippet', 'source', 'corpus'],
}

MEMORY_SEARCH_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'anyOf': [
        {
            'description': 'Results, best first (partial: keyword results only, the full search ran out of time).',
            'properties': {
                'results': {'type': 'array', 'items': _MEMORY_HIT},
                'provider': _STRING,
                'model': _STRING,
                'citations': _STRING,
                'mode': {'enum': ['hybrid', 'vector-only', 'fts-only']},
                'fallback': {'type': 'object', 'properties': {'from': _STRING, 'reason': _STRING}},
                'partial': _BOOLEAN,
                'warning': _STRING,
                'corpora': _CORPORA,
                'debug': _DEBUG,
            },
            'required': ['results', 'provider', 'model', 'citations', 'mode', 'debug'],
        },
        {
            'description': 'OpenClaw 2.x, corpus "wiki": memsift holds no wiki corpus (not registered).',
            'properties': {
                'results': {'type': 'array', 'maxItems': 0},
                'citations': _STRING,
                'corpora': _CORPORA,
                'warning': _STRING,
            },
            'required': ['results', 'corpora', 'warning'],
        },
        {
            'description': 'Search could not run (disabled, or the configured embedding provider failed): error '
            'says why, action how to fix it.',
            'properties': {
                'results': {'type': 'array', 'maxItems': 0},
                'disabled': _FLAG,
                'unavailable': _FLAG,
                'error': _STRING,
                'warning': {'type': ['string', 'null']},
                'action': {'type': ['string', 'null']},
                'partial': _BOOLEAN,
                'debug': _DEBUG,
            },
            'required': ['results', 'disabled', 'unavailable', 'error'],
        },
        _REFUSED,
    ],
}

MEMORY_GET_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'anyOf': [
        {
            'description': 'Lines from..from+lines-1; truncated: the 20,000-character cap cut it, read on at nextFrom.',
            'properties': {
                'path': _STRING,
                'from': {'type': 'integer', 'minimum': 1},
                'lines': {'type': 'integer', 'minimum': 0},
                'totalLines': {'type': 'integer', 'minimum': 1},
                'text': {'type': 'string', 'maxLength': MAX_GET_CHARS},
                'truncated': _FLAG,
                'nextFrom': {'type': 'integer', 'minimum': 1},
            },
            'required': ['path', 'from', 'lines', 'totalLines', 'text'],
        },
        {
            'description': 'An unreadable path (isError): not an indexed memory file, or a bad range.',
            'properties': {'path': _STRING, 'text': {'const': ''}, 'error': _STRING},
            'required': ['path', 'text', 'error'],
            'not': {'required': ['status']},
        },
        {
            'description': 'OpenClaw 2.x: up to 120 whole lines within 12,000 characters; truncated: read on at '
            'nextFrom.',
            'properties': {
                'status': {'const': 'ok'},
                'path': _STRING,
                'from': {'type': 'integer', 'minimum': 1},
                'lines': {'type': 'integer', 'minimum': 0},
                'text': _STRING,
                'truncated': _FLAG,
                'nextFrom': {'type': 'integer', 'minimum': 1},
                'corpora': _CORPORA,
            },
            'required': ['status', 'path', 'from', 'lines', 'text'],
        },
        {
            'description': 'OpenClaw 2.x, corpus "wiki": memsift holds no wiki corpus (not registered).',
            'properties': {'path': _STRING, 'text': {'const': ''}, 'corpora': _CORPORA, 'warning': _STRING},
            'required': ['path', 'text', 'corpora', 'warning'],
            'not': {'required': ['status']},
        },
        {
            'description': 'OpenClaw 2.x: no such memory file (not_found), or a path memory_get does not read.',
            'properties': {
                'status': {'enum': ['not_found', 'error']},
                'path': _STRING,
                'text': {'const': ''},
                'code': _STRING,
                'error': _STRING,
                'reason': _STRING,
                'corpora': _CORPORA,
            },
            'required': ['status', 'path', 'text'],
        },
    ],
}

SESSIONS_SEARCH_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'anyOf': [
        {
            'description': 'Matching messages, best first; truncated: more matched than fit.',
            'properties': {
                'results': {
                    'type': 'array',
                    'items': {
                        'type': 'object',
                        'properties': {
                            'sessionKey': _STRING,
                            'timestamp': {'type': 'number', 'description': 'Milliseconds since 1970.'},
                            'role': _STRING,
                            'snippet': _STRING,
                            'score': _NUMBER,
                            'sessionId': _STRING,
                            'messageId': _STRING,
                            'match': {'enum': ['all', 'partial']},
                        },
                        'required': ['sessionKey', 'timestamp', 'role', 'snippet', 'score', 'sessionId', 'messageId'],
                    },
                },
                'indexing': _BOOLEAN,
                'warning': _STRING,
                'truncated': _BOOLEAN,
                'debug': _DEBUG,
            },
            'required': ['results'],
        },
        _REFUSED,
    ],
}

SESSIONS_HISTORY_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'anyOf': [
        {
            'description': 'The most recent messages, oldest first; truncated: older ones were dropped.',
            'properties': {
                'sessionKey': _STRING,
                'sessionId': _STRING,
                'messages': {
                    'type': 'array',
                    'items': {
                        'type': 'object',
                        'properties': {
                            'id': _STRING,
                            'role': {'enum': ['user', 'assistant', 'toolResult']},
                            'timestamp': {'type': 'number', 'description': 'Milliseconds since 1970.'},
                            'content': _STRING,
                        },
                        'required': ['id', 'role', 'timestamp', 'content'],
                    },
                },
                'truncated': _BOOLEAN,
            },
            'required': ['sessionKey', 'sessionId', 'messages'],
        },
        _REFUSED,
    ],
}

MEMORY_WRITE_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'anyOf': [
        {
            'description': 'The note was appended: the lines it occupies in path (memory_get from=startLine reads '
            'it); warning: written, but not indexed yet.',
            'properties': {
                'path': _STRING,
                'startLine': {'type': 'integer', 'minimum': 1},
                'endLine': {'type': 'integer', 'minimum': 1},
                'chars': {'type': 'integer', 'minimum': 1},
                'warning': _STRING,
            },
            'required': ['path', 'startLine', 'endLine', 'chars'],
        },
        _REFUSED,
    ],
}

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    'memory_search': MEMORY_SEARCH_SCHEMA,
    'memory_get': MEMORY_GET_SCHEMA,
    'sessions_search': SESSIONS_SEARCH_SCHEMA,
    'sessions_history': SESSIONS_HISTORY_SCHEMA,
    'memory_write': MEMORY_WRITE_SCHEMA,
}
"""Each tool's declared ``outputSchema`` (JSON Schema), by tool name (``memory_write``: with ``--allow-write``)."""
