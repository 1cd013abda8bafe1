"""An MCP server for the four memory tools, on the official MCP Python SDK (``mcp`` 2.x).

:func:`build_server` registers ``memory_search``, ``memory_get``, ``sessions_search`` and ``sessions_history`` of
one :class:`~memsift.tools.MemoryTools` on an :class:`mcp.server.mcpserver.MCPServer`; :func:`serve_stdio` and
:func:`serve_http` run it. Each tool answers with the dict the Python tool returns, both as structured content and
as its JSON text; a result whose dict is an error (``status: "error" | "forbidden"``, or ``memory_get``'s
``error``) is marked ``isError``. Arguments keep OpenClaw's names (camelCase); ``memory_get``'s start line is
``from`` on the wire. The calling session is the server's (``MemoryTools.session_key``), never an argument: it
decides which transcripts are visible, so a model must not be able to pick it.

The tools run in worker threads, so concurrent calls proceed in parallel and the event loop keeps serving; each
call still honours the tools' deadline.

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
"""

from __future__ import annotations

import hmac
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memsift.tools.agent import MemoryTools

__all__ = ['DEFAULT_PORT', 'LOCAL_HOSTS', 'LOCAL_ORIGINS', 'build_server', 'http_app', 'serve_http', 'serve_stdio']

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


def build_server(tools: MemoryTools, *, name: str = 'memsift') -> MCPServer[Any]:
    """An MCP server exposing ``tools``' four memory tools (the tools stay open; closing them is the caller's).

    Args:
        tools: The agent's tools; every call goes to them.
        name: The server name announced to clients.
    """
    server: MCPServer[Any] = MCPServer(name, instructions=INSTRUCTIONS, log_level='WARNING')

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

    for fn, title, description in (
        (memory_search, 'Search memory', MEMORY_SEARCH),
        (memory_get, 'Read a memory file', MEMORY_GET),
        (sessions_search, 'Search past conversations', SESSIONS_SEARCH),
        (sessions_history, 'Read a past conversation', SESSIONS_HISTORY),
    ):
        server.add_tool(fn, name=fn.__name__, title=title, description=description, annotations=READ_ONLY)
    return server


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
