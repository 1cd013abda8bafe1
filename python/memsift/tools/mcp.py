"""An MCP server for the four memory tools, on the official MCP Python SDK (``mcp`` 2.x).

:func:`build_server` registers ``memory_search``, ``memory_get``, ``sessions_search`` and ``sessions_history`` of
one :class:`~memsift.tools.MemoryTools` on an :class:`mcp.server.mcpserver.MCPServer`; :func:`serve_stdio` and
:func:`serve_http` run it. Each tool answers with the dict the Python tool returns, both as structured content and
as its JSON text; a result whose dict is an error (``status: "error" | "forbidden"``, or ``memory_get``'s
``error``) is marked ``isError``. Arguments keep OpenClaw's names (camelCase); ``memory_get``'s start line is
``from`` on the wire. The calling session is the server's (``MemoryTools.session_key``), never an argument: it
decides which transcripts are visible, so a model must not be able to pick it.

The tools run in worker threads, so concurrent calls proceed in parallel and the event loop keeps serving; each
call still honours the tools' deadline. Each tool declares an ``outputSchema`` that every result it can give
validates against, error results included.

The indexed memory files are also MCP resources, ``memsift://<agentId>/<path>`` (:func:`memory_uri`): ``resources/list``
gives the files indexed now, and ``resources/read`` answers with what ``memory_get`` gives for the file (its first
20,000 characters; ``_meta`` holds the rest of ``memory_get``'s answer, ``nextFrom`` included). Any other URI is
refused with an error naming it.

>>> import anyio, tempfile, pathlib
>>> from mcp import Client
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> config = {'memory': {'search': {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}}}
>>> async def ask(tools):
...     async with Client(build_server(tools)) as client:  # in-process, as the SDK's tests do
...         result = await client.call_tool('memory_search', {'query': 'deploy key', 'minScore': 0})
...         return [hit['path'] for hit in result.structured_content['results']]
>>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite') as tools:
...     anyio.run(ask, tools)
['MEMORY.md']
>>> memory_uri('main', 'memory/2026-11-20.md'), memory_uri('main', 'notes/a b#1.md')
('memsift://main/memory/2026-11-20.md', 'memsift://main/notes/a%20b%231.md')
"""

from __future__ import annotations

import hmac
import inspect
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any, Literal
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, InputRequiredResult, Resource, TextContent, ToolAnnotations
from pydantic import AnyUrl, Field
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memsift._text import preview
from memsift.index.reader import MAX_GET_CHARS
from memsift.media import EXTENSIONS as MEDIA_EXTENSIONS
from memsift.tools.agent import MemoryTools

__all__ = [
    'DEFAULT_PORT',
    'LOCAL_HOSTS',
    'LOCAL_ORIGINS',
    'OUTPUT_SCHEMAS',
    'SCHEME',
    'build_server',
    'http_app',
    'memory_uri',
    'serve_http',
    'serve_stdio',
]

DEFAULT_PORT = 8765
LOCAL_HOSTS = ('127.0.0.1', 'localhost', '[::1]')
"""Host header values :func:`http_app` accepts by default (with or without a port): DNS-rebinding protection."""
LOCAL_ORIGINS = tuple(f'{scheme}://{host}:*' for scheme in ('http', 'https') for host in LOCAL_HOSTS) + tuple(
    f'{scheme}://{host}' for scheme in ('http', 'https') for host in LOCAL_HOSTS
)
"""Origin header values accepted by default; a request without an Origin (not from a browser) is accepted too."""

INSTRUCTIONS = """\
Long-term memory of this agent. memory_search recalls notes, facts, decisions and preferences written in the \
agent's memory files, by meaning and by words, in any language; sessions_search finds the exact words said in \
earlier conversations. memory_get and sessions_history read more around a hit."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

MEMORY_SEARCH = """\
Search this agent's long-term memory: the notes, facts, decisions, preferences, people and to-dos written in \
MEMORY.md and memory/*.md (and, when session memory is on, past conversations). It matches by meaning as well as \
by words, in any language (Chinese, Japanese and Korean included), so a paraphrase finds the note; a file name \
works too. Use it first whenever the user refers to something from before. For the exact words someone said in an \
earlier conversation use sessions_search instead.

Returns {results: [{path, startLine, endLine, score, snippet, source, corpus, citation?}], provider, model, mode, \
...}, best first; score is 0-1. To read more around a hit, call memory_get with its path and from=startLine. \
partial: true means the full search ran out of time and these are keyword results only: retry shortly for the \
full search. No results: try other words or a lower minScore."""

MEMORY_GET = """\
Read lines of a memory file, usually one that memory_search returned, to see the whole note around a hit. Only \
indexed memory files can be read (MEMORY.md, memory/**/*.md and configured extra paths); conversations are read \
with sessions_history.

Returns {path, from, lines, totalLines, text, truncated?, nextFrom?}: at most 20,000 characters per call; when \
truncated is true, call again with from=nextFrom. An unreadable path gives {path, text: "", error}."""

SESSIONS_SEARCH = """\
Find messages of this agent's earlier conversations (session transcripts) by their words, in any language: \
what the user or the assistant actually said, such as a quote, a name, a number or an error message. Keywords or \
a plain question both work: messages holding every word come first (match: "all"), then, unless configured \
otherwise, the messages that best answer the rest of the question (match: "partial"). For notes and facts in \
memory files, or recall by meaning, use memory_search. Only sessions visible to this agent are searched.

Returns {results: [{sessionKey, timestamp, role, snippet, score, sessionId, messageId, match?}], indexing?, \
warning?, truncated?}, best first; timestamp is in milliseconds since 1970. To read the conversation around a \
hit, call sessions_history with its sessionKey."""

SESSIONS_HISTORY = """\
Read the most recent messages of one earlier conversation, oldest first, for example the context of a \
sessions_search hit. Text is redacted of secrets and each message is capped at 4,000 characters; tool calls are \
left out.

Returns {sessionKey, sessionId, messages: [{id, role, timestamp, content}], truncated?}; truncated: true means \
older messages were dropped to keep the answer under 32 KiB."""

# ---------------------------------------------------------------- output schemas
# One per tool, describing the dict the Python tool returns (structured content): every shape it can take, the error
# dicts too. A client validates a successful result against it (the SDK's client does, with jsonschema) and may
# validate any result, so a shape missing here would turn a good answer into a client-side failure. Keys a later
# version may add stay allowed (no additionalProperties: false).

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
                'debug': _DEBUG,
            },
            'required': ['results', 'provider', 'model', 'citations', 'mode', 'debug'],
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

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    'memory_search': MEMORY_SEARCH_SCHEMA,
    'memory_get': MEMORY_GET_SCHEMA,
    'sessions_search': SESSIONS_SEARCH_SCHEMA,
    'sessions_history': SESSIONS_HISTORY_SCHEMA,
}
"""Each tool's declared ``outputSchema`` (JSON Schema), by tool name."""

SCHEME = 'memsift'
"""The scheme of the memory file resources: ``memsift://<agentId>/<path>``."""


def build_server(tools: MemoryTools, *, name: str = 'memsift') -> MCPServer[Any]:
    """An MCP server exposing ``tools``' four memory tools (the tools stay open; closing them is the caller's).

    Args:
        tools: The agent's tools; every call goes to them.
        name: The server name announced to clients.
    """

    async def memory_search(
        query: Annotated[
            str,
            Field(
                description='What to look for: a question, keywords or a file name, in any '
                'language. At most 4096 characters (a longer query is cut).'
            ),
        ],
        maxResults: Annotated[
            int | None,
            Field(  # noqa: N803
                ge=1, description='How many results to return (default 6).'
            ),
        ] = None,
        minScore: Annotated[
            float | None,
            Field(
                ge=0,
                le=1,
                description=(  # noqa: N803
                    'Leave out results scoring below this, 0 to 1 (default 0.35). Lower it (e.g. 0.1) when nothing '
                    'comes back.'
                ),
            ),
        ] = None,
        corpus: Annotated[
            Literal['memory', 'sessions', 'all'],
            Field(
                description=(
                    'Where to search: "memory" (the memory files; default), "sessions" (past conversations, when '
                    'session memory is on) or "all".'
                )
            ),
        ] = 'memory',
    ) -> CallToolResult:
        return await _run(lambda: tools.memory_search(query, maxResults, minScore, corpus))

    async def memory_get(**arguments: Any) -> CallToolResult:
        return await _run(lambda: tools.memory_get(arguments['path'], arguments['from'], arguments['lines']))

    # `from` is a Python keyword, so no parameter can carry the name: the signature the SDK reads declares `from_`
    # with the alias `from`, and the SDK then passes the validated arguments by alias, into **arguments.
    memory_get.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            _param(
                'path',
                Annotated[
                    str,
                    Field(
                        description=(
                            'Workspace-relative path exactly as memory_search returned it, e.g. "memory/2026-11-28.md".'
                        )
                    ),
                ],
            ),
            _param(
                'from_',
                Annotated[
                    int | None,
                    Field(
                        alias='from',
                        ge=1,
                        description=("First line to read, 1-based (default 1): usually a result's startLine."),
                    ),
                ],
                None,
            ),
            _param(
                'lines',
                Annotated[
                    int | None,
                    Field(
                        ge=1,
                        description=(
                            'How many lines to read (default: to the end of the file, within the 20,000-character cap).'
                        ),
                    ),
                ],
                None,
            ),
        ],
        return_annotation=CallToolResult,
    )

    async def sessions_search(
        query: Annotated[
            str,
            Field(
                max_length=4096,
                description=('Words or a question, in any language; 1 to 4096 characters.'),
            ),
        ],
        sessionKey: Annotated[
            str | None,
            Field(
                description=(  # noqa: N803
                    'Only search this conversation (a sessionKey such as "agent:main:main"); default: every visible '
                    'one.'
                )
            ),
        ] = None,
        limit: Annotated[
            int | None,
            Field(ge=1, description=('Most hits to return: default 10, at most 25 (larger values count as 25).')),
        ] = None,
    ) -> CallToolResult:
        return await _run(lambda: tools.sessions_search(query, sessionKey, limit))

    async def sessions_history(
        sessionKey: Annotated[
            str,
            Field(
                description=(  # noqa: N803
                    'The conversation: a sessionKey from sessions_search (e.g. "agent:main:main") or a sessionId.'
                )
            ),
        ],
        limit: Annotated[
            int | None,
            Field(ge=1, description=('How many of the most recent messages to return: default 50, at most 200.')),
        ] = None,
        includeTools: Annotated[
            bool,
            Field(
                description=(  # noqa: N803
                    'Also return tool results (default false: only user and assistant messages).'
                )
            ),
        ] = False,
    ) -> CallToolResult:
        return await _run(lambda: tools.sessions_history(sessionKey, limit, includeTools))

    registered = [
        _tool(fn, title, description)
        for fn, title, description in (
            (memory_search, 'Search memory', MEMORY_SEARCH),
            (memory_get, 'Read a memory file', MEMORY_GET),
            (sessions_search, 'Search past conversations', SESSIONS_SEARCH),
            (sessions_history, 'Read a past conversation', SESSIONS_HISTORY),
        )
    ]
    return _MemoryServer(tools, name, instructions=INSTRUCTIONS, log_level='WARNING', tools=registered)


def _tool(fn: Callable[..., Any], title: str, description: str) -> Tool:
    """``fn`` as a read-only tool publishing its entry of :data:`OUTPUT_SCHEMAS` as ``outputSchema``."""
    tool = Tool.from_function(fn, name=fn.__name__, title=title, description=description, annotations=READ_ONLY)
    # The functions return a ready CallToolResult, so the SDK derives no schema from them. FuncMetadata reads
    # output_schema live: set here, before anything reads it, it is what tools/list publishes. With no output model
    # beside it the server does not re-validate results against it (that is the clients' side; the tests check it).
    tool.fn_metadata.output_schema = OUTPUT_SCHEMAS[tool.name]
    return tool


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


async def _run(call: Callable[[], dict[str, Any]]) -> CallToolResult:
    """``call()`` in a worker thread (the tools block up to their deadline), as a tool result."""
    data = await anyio.to_thread.run_sync(call)
    failed = data.get('status') in ('error', 'forbidden') or ('error' in data and data.get('text') == '')
    return CallToolResult(
        content=[TextContent(type='text', text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
        is_error=failed,
    )


# ---------------------------------------------------------------- resources


def memory_uri(agent_id: str, path: str) -> str:
    """The resource URI of an indexed memory file: ``memsift://<agentId>/<path>``, each path segment
    percent-encoded (UTF-8) except the ``/`` between them.

    A ``.`` or ``..`` segment (``../`` leads an extra path outside the workspace) is written ``%2E``/``%2E%2E`` so
    that no URI library resolves it away; :meth:`_MemoryServer.read_resource` decodes it back to the indexed path.
    """
    segments = [s.replace('.', '%2E') if s in ('.', '..') else quote(s, safe='') for s in path.split('/')]
    return f'{SCHEME}://{quote(agent_id, safe="")}/{"/".join(segments)}'


_MEDIA_SUFFIXES = tuple(suffix for suffixes in MEDIA_EXTENSIONS.values() for suffix in suffixes)


class _MemoryServer(MCPServer[Any]):
    """An :class:`MCPServer` whose resources are the agent's indexed memory files, listed afresh on every
    ``resources/list`` (the SDK's own resources are registered once, and the index changes as the workspace does).

    Args:
        memory: The agent's tools: the index the files are listed from, and ``memory_get`` that reads them.
        name: The server name; ``**settings`` go to :class:`MCPServer`.
    """

    def __init__(self, memory: MemoryTools, name: str, **settings: Any) -> None:
        super().__init__(name, **settings)
        self.memory = memory

    async def list_resources(self) -> list[Resource]:
        """The SDK's registered resources (none today), then every indexed memory file."""
        files = await anyio.to_thread.run_sync(self._memory_files)  # the store may wait on a sync's write
        return [*await super().list_resources(), *files]

    def _memory_files(self) -> list[Resource]:
        agent = self.memory.agent_id
        # The store's file table, in one SELECT: the very records memory_get checks a path against, so every listed
        # URI reads and nothing unlisted does. index.status() would also stat the whole workspace and probe the
        # embedding provider, and the search catalogue is private and holds transcripts too. Transcripts
        # (source "sessions") are read with sessions_history; images and audio (multimodal) are not text memory_get
        # can return, so neither is listed.
        return [
            Resource(
                uri=memory_uri(agent, record.path),
                name=record.path,
                mime_type='text/markdown',
                description=(
                    f'Memory file of agent {agent}. Reading gives its first {MAX_GET_CHARS:,} characters, as '
                    'memory_get does; memory_get with from reads on.'
                ),
            )
            for record in self.memory.index.store.files().values()
            if record.source == 'memory' and not record.path.lower().endswith(_MEDIA_SUFFIXES)
        ]

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        """A ``memsift:`` URI read as ``memory_get`` reads its file; any other URI goes to the SDK (which knows
        none, and answers ``Unknown resource``).

        Raises:
            ResourceNotFoundError: the URI names no indexed memory file of this agent (the client gets an
                invalid-params error whose message names the URI).
            ResourceError: the file is indexed but ``memory_get`` cannot read it now (say it was deleted since the
                last sync).
        """
        text = str(uri)
        scheme, separator, _ = text.partition('://')
        if not separator or scheme.lower() != SCHEME:
            return await super().read_resource(uri, context)
        return await anyio.to_thread.run_sync(self._read, text)

    def _read(self, uri: str) -> list[ReadResourceContents]:
        path = self._indexed_path(uri)
        data = self.memory.memory_get(path)  # the tool itself: the same cap, checks and errors as the tool call
        if 'error' in data:
            raise ResourceError(f'{preview(uri, 200)}: {data["error"]}')
        # The text as memory_get bounds it; the rest of its answer (totalLines, truncated, nextFrom) says whether
        # there is more and where memory_get continues.
        meta = {key: value for key, value in data.items() if key not in ('path', 'text')}
        return [ReadResourceContents(content=data['text'], mime_type='text/markdown', meta=meta)]

    def _indexed_path(self, uri: str) -> str:
        """The indexed path ``uri`` names, exactly as indexed, or :class:`ResourceNotFoundError` naming the URI.

        Only an exact match of a listed file counts: no normalisation (``./``, ``..``, ``\\``, case) that could
        make a URI reach past what resources/list shows, and ``..``, absolute paths, NUL and lone surrogates all
        simply name no indexed file. memory_get's root ``DREAMS.md`` is not indexed, so it is not a resource.
        """
        shown = preview(uri, 200)  # bounded, escaped (NUL, lone surrogates), secrets masked
        agent, _, encoded = uri.partition('://')[2].partition('/')
        if unquote(agent) != self.memory.agent_id:
            raise ResourceNotFoundError(
                f'{shown} names agent {preview(unquote(agent))}; this server serves the memory of agent '
                f'{self.memory.agent_id!r} only'
            )
        try:
            path = unquote(encoded, errors='strict')
            path.encode('utf-8')
        except UnicodeError:  # percent-encoded bytes that are not UTF-8, or a lone surrogate: no indexed path is
            path = ''
        record = self.memory.index.store.file(path) if path and '\x00' not in path else None
        if record is None or record.path != path or record.source != 'memory' or path.lower().endswith(_MEDIA_SUFFIXES):
            raise ResourceNotFoundError(
                f'{shown} is not an indexed memory file of agent {self.memory.agent_id!r}; resources/list gives '
                f'the readable URIs ({SCHEME}://<agentId>/<path>)'
            )
        return path


# ---------------------------------------------------------------- transports


def serve_stdio(tools: MemoryTools) -> None:
    """Serve the tools over stdin/stdout until stdin closes (the SDK keeps stray output off the protocol stream).

    Raises:
        KeyboardInterrupt: on Ctrl-C (the caller decides how to exit).
    """
    anyio.run(build_server(tools).run_stdio_async)


def http_app(
    tools: MemoryTools,
    *,
    host: str = '127.0.0.1',
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = LOCAL_ORIGINS,
    path: str = '/mcp',
) -> ASGIApp:
    """The streamable HTTP app (ASGI) serving the tools at ``path``.

    Args:
        host: The address it will be bound to; a specific one is also accepted in the Host header.
        token: Require ``Authorization: Bearer <token>`` (else HTTP 401 with ``WWW-Authenticate``).
        allowed_hosts: Host header values accepted besides :data:`LOCAL_HOSTS` (``name:*`` allows any port).
        allowed_origins: Origin header values accepted (default :data:`LOCAL_ORIGINS`); requests from any other
            web page are refused with 403, so a browser page cannot reach the server (DNS rebinding).
    """
    hosts = [*LOCAL_HOSTS, *allowed_hosts]
    if host not in ('0.0.0.0', '::', ''):
        hosts.append(f'[{host}]' if ':' in host else host)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f'{h}:*' for h in hosts if not h.endswith(':*'))],
        allowed_origins=list(allowed_origins),
    )
    app: ASGIApp = build_server(tools).streamable_http_app(
        streamable_http_path=path, transport_security=security, host=host
    )
    return _BearerAuth(app, token) if token else app


def serve_http(
    tools: MemoryTools,
    host: str = '127.0.0.1',
    port: int = DEFAULT_PORT,
    *,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = LOCAL_ORIGINS,
) -> None:
    """Serve the tools over streamable HTTP at ``http://{host}:{port}/mcp`` until interrupted (see :func:`http_app`).

    Raises:
        KeyboardInterrupt: on Ctrl-C, after a graceful shutdown.
    """
    import uvicorn

    if token is None and host not in ('127.0.0.1', 'localhost', '::1'):
        print(
            f'memsift mcp: warning: serving on {host} without a token; anyone who can reach it can read this memory',
            file=sys.stderr,
        )
    app = http_app(tools, host=host, token=token, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level='warning', lifespan='on')).run()


class _BearerAuth:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>`` (the SDK's own auth is OAuth)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':  # the lifespan (which starts the SDK's session manager) passes through
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get('authorization', '')
        scheme, _, given = header.partition(' ')
        # compare_digest: the time taken does not reveal how much of the token matched
        if scheme.lower() == 'bearer' and hmac.compare_digest(given.strip().encode(), self.token):
            await self.app(scope, receive, send)
            return
        challenge = 'Bearer realm="memsift"' + (', error="invalid_token"' if header else '')
        message = 'invalid bearer token' if header else 'missing bearer token: send Authorization: Bearer <token>'
        await JSONResponse(
            {'error': 'unauthorized', 'error_description': message},
            status_code=401,
            headers={'WWW-Authenticate': challenge},
        )(scope, receive, send)
