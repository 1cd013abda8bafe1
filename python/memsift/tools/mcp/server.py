"""The MCP server for the four memory tools, on the official MCP Python SDK (``mcp`` 2.x), and its stdio transport.

:func:`build_server` registers ``memory_search``, ``memory_get``, ``sessions_search`` and ``sessions_history`` of
one :class:`~memsift.tools.MemoryTools` on a :class:`~memsift.tools.mcp.resources.MemoryServer` (an
:class:`mcp.server.mcpserver.MCPServer` that also serves the memory files as resources), and ``memory_write`` only
when asked to (``allow_write``: a client with no file tools may then append notes; off, the server is read-only);
:func:`serve_stdio` runs it over stdin/stdout (:mod:`memsift.tools.mcp.http` over HTTP). Each tool answers with the
dict the Python tool returns, both as structured content and as its JSON text; a result whose dict is an error
(``status: "error" | "forbidden"``, or ``memory_get``'s ``error``) is marked ``isError``. Arguments keep OpenClaw's
names (camelCase); ``memory_get``'s start line is ``from`` on the wire. The calling session is the server's
(``MemoryTools.session_key``), never an argument: it decides which transcripts are visible, so a model must not be
able to pick it.

The tools run in worker threads, so concurrent calls proceed in parallel and the event loop keeps serving; each
call still honours the tools' deadline. Each tool declares an ``outputSchema``
(:data:`~memsift.tools.mcp.schemas.OUTPUT_SCHEMAS`) that every result it can give validates against, error results
included.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from memsift.index.notes import MAX_NOTE_CHARS
from memsift.tools.agent import MemoryTools
from memsift.tools.mcp.resources import MemoryServer
from memsift.tools.mcp.schemas import OUTPUT_SCHEMAS
from memsift.tools.mcp.texts import DESCRIPTIONS, INSTRUCTIONS, TITLES, WRITE_INSTRUCTIONS

__all__ = ['SESSION_META_KEY', 'build_server', 'serve_stdio']

SESSION_META_KEY = 'memsift/sessionKey'
"""The calling session, in a ``tools/call``'s ``_meta``: set by the host (never by a model), honoured only with
``session_meta`` (``memsift mcp --openclaw``: memsift's OpenClaw plugin puts each call's session there)."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
APPENDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
"""``memory_write``: it writes (not read-only), only ever adds (not destructive), and twice adds twice."""

# ---------------------------------------------------------------- the tools' parameters, as clients see them

SearchQuery = Annotated[
    str,
    Field(
        description='What to look for: a question, keywords or a file name, in any '
        'language. At most 4096 characters (a longer query is cut).'
    ),
]
MaxResults = Annotated[int | None, Field(ge=1, description='How many results to return (default 6).')]
MinScore = Annotated[
    float | None,
    Field(
        ge=0,
        le=1,
        description=(
            'Leave out results scoring below this, 0 to 1 (default 0.35). Lower it (e.g. 0.1) when nothing comes back.'
        ),
    ),
]
Corpus = Annotated[
    Literal['memory', 'sessions', 'all', 'wiki'],
    Field(
        description=(
            'Where to search: "memory" (the memory files; default), "sessions" (past conversations, when '
            'session memory is on), "all", or "wiki" (OpenClaw 2.x\'s wiki corpus, which memsift does not hold).'
        )
    ),
]
GetCorpus = Annotated[
    Literal['memory', 'all', 'wiki'],
    Field(description='Where to read: "memory" (default), "all", or "wiki" (not held by memsift).'),
]
Since = Annotated[
    str | None,
    Field(
        description=(
            'Only material of this day or later: an ISO date ("2026-11-01") or a span back from today ("7d", '
            '"2w", "3m", "1y"). A note is dated by its daily file name, its front-matter date, else its last change; '
            'a message by when it was sent. Default: no limit.'
        )
    ),
]
Until = Annotated[
    str | None,
    Field(
        description=(
            'Only material up to this day (inclusive): an ISO date ("2026-11-30") or a span back from today '
            '("7d", "2w", "3m", "1y"). Default: no limit.'
        )
    ),
]
PathGlobs = Annotated[
    list[str] | None,
    Field(
        description=(
            'Only files matching one of these workspace-relative globs, e.g. ["memory/2026-11-*.md", '
            '"projects/**"] (* stays within a folder, ** crosses folders; a plain folder name takes everything '
            'under it). Default: every file.'
        )
    ),
]
Tags = Annotated[
    list[str] | None,
    Field(
        description=(
            'Only notes whose front-matter tags include one of these, e.g. ["ops", "budget"] (case-insensitive). '
            'Default: every note.'
        )
    ),
]
GetPath = Annotated[
    str,
    Field(description='Workspace-relative path exactly as memory_search returned it, e.g. "memory/2026-11-28.md".'),
]
GetFrom = Annotated[
    int | None,
    Field(alias='from', ge=1, description="First line to read, 1-based (default 1): usually a result's startLine."),
]
GetLines = Annotated[
    int | None,
    Field(
        ge=1, description='How many lines to read (default: to the end of the file, within the 20,000-character cap).'
    ),
]
SessionsQuery = Annotated[
    str, Field(max_length=4096, description='Words or a question, in any language; 1 to 4096 characters.')
]
SessionKeyFilter = Annotated[
    str | None,
    Field(
        description=(
            'Only search this conversation (a sessionKey such as "agent:main:main"); default: every visible one.'
        )
    ),
]
SearchLimit = Annotated[
    int | None, Field(ge=1, description='Most hits to return: default 10, at most 25 (larger values count as 25).')
]
SessionKey = Annotated[
    str,
    Field(description='The conversation: a sessionKey from sessions_search (e.g. "agent:main:main") or a sessionId.'),
]
HistoryLimit = Annotated[
    int | None, Field(ge=1, description='How many of the most recent messages to return: default 50, at most 200.')
]
IncludeTools = Annotated[
    bool, Field(description='Also return tool results (default false: only user and assistant messages).')
]
NoteText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_NOTE_CHARS,
        description='The note to remember, in Markdown: self-contained (who, what, when), 1 to 20,000 characters.',
    ),
]
NotePath = Annotated[
    str | None,
    Field(
        description=(
            'A Markdown file under memory/ to append to, e.g. "memory/projects/deploy.md" (created if missing); '
            "default: today's memory/YYYY-MM-DD.md."
        )
    ),
]


def build_server(
    tools: MemoryTools, *, name: str = 'memsift', allow_write: bool = False, session_meta: bool = False
) -> MCPServer[Any]:
    """An MCP server exposing ``tools``' four memory tools (the tools stay open; closing them is the caller's).

    Args:
        tools: The agent's tools; every call goes to them.
        name: The server name announced to clients.
        allow_write: Also expose ``memory_write`` (``memsift mcp --allow-write``), and say so in the instructions;
            without it the tools and instructions are the read-only ones, unchanged.

    >>> import anyio, tempfile, pathlib
    >>> from mcp import Client
    >>> from memsift.tools import MemoryTools
    >>> ws = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
    >>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
    >>> config = {'agents': {'defaults': {'memorySearch': search}}}
    >>> async def ask(tools):
    ...     async with Client(build_server(tools)) as client:  # in-process, as the SDK's tests do
    ...         result = await client.call_tool('memory_search', {'query': 'deploy key', 'minScore': 0})
    ...         return [hit['path'] for hit in result.structured_content['results']]
    >>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite') as tools:
    ...     anyio.run(ask, tools)
    ['MEMORY.md']
    """

    def caller(ctx: Context) -> str | None:
        """The session the host named in this call's ``_meta`` (with ``session_meta``), else ``None``: the tools'."""
        key = (ctx.request_context.meta or {}).get(SESSION_META_KEY) if session_meta else None
        return key if isinstance(key, str) and key.strip() else None

    async def memory_search(
        ctx: Context,
        query: SearchQuery,
        maxResults: MaxResults = None,  # noqa: N803
        minScore: MinScore = None,  # noqa: N803
        corpus: Corpus = 'memory',
        since: Since = None,
        until: Until = None,
        paths: PathGlobs = None,
        tags: Tags = None,
    ) -> CallToolResult:
        session = caller(ctx)
        return await _run(
            lambda: tools.memory_search(
                query,
                maxResults,
                minScore,
                corpus,
                sessionKey=session,
                since=since,
                until=until,
                paths=paths,
                tags=tags,
            )
        )

    async def memory_get(**arguments: Any) -> CallToolResult:
        return await _run(
            lambda: tools.memory_get(arguments['path'], arguments['from'], arguments['lines'], arguments['corpus'])
        )

    memory_get.__signature__ = MEMORY_GET_SIGNATURE  # type: ignore[attr-defined]

    async def sessions_search(
        query: SessionsQuery,
        sessionKey: SessionKeyFilter = None,  # noqa: N803
        limit: SearchLimit = None,
        since: Since = None,
        until: Until = None,
    ) -> CallToolResult:
        return await _run(lambda: tools.sessions_search(query, sessionKey, limit, since=since, until=until))

    async def sessions_history(
        sessionKey: SessionKey,  # noqa: N803
        limit: HistoryLimit = None,
        includeTools: IncludeTools = False,  # noqa: N803
    ) -> CallToolResult:
        return await _run(lambda: tools.sessions_history(sessionKey, limit, includeTools))

    async def memory_write(text: NoteText, path: NotePath = None) -> CallToolResult:
        return await _run(lambda: tools.memory_write(text, path))

    registered = [_tool(fn) for fn in (memory_search, memory_get, sessions_search, sessions_history)]
    instructions = INSTRUCTIONS
    if allow_write:
        registered.append(_tool(memory_write, APPENDS))
        instructions = f'{INSTRUCTIONS} {WRITE_INSTRUCTIONS}'
    return MemoryServer(tools, name, instructions=instructions, log_level='WARNING', tools=registered)


def serve_stdio(tools: MemoryTools, *, allow_write: bool = False, session_meta: bool = False) -> None:
    """Serve the tools over stdin/stdout until stdin closes (the SDK keeps stray output off the protocol stream);
    ``allow_write`` as in :func:`build_server`.

    Raises:
        KeyboardInterrupt: on Ctrl-C (the caller decides how to exit).
    """
    anyio.run(build_server(tools, allow_write=allow_write, session_meta=session_meta).run_stdio_async)


def _tool(fn: Callable[..., Any], annotations: ToolAnnotations = READ_ONLY) -> Tool:
    """``fn`` as a tool named after it (read-only unless ``annotations`` say otherwise), with its title and
    description from :mod:`.texts`, publishing its entry of :data:`OUTPUT_SCHEMAS` as ``outputSchema``."""
    name = fn.__name__
    tool = Tool.from_function(
        fn, name=name, title=TITLES[name], description=DESCRIPTIONS[name], annotations=annotations
    )
    # The functions return a ready CallToolResult, so the SDK derives no schema from them. FuncMetadata reads
    # output_schema live: set here, before anything reads it, it is what tools/list publishes. With no output model
    # beside it the server does not re-validate results against it (that is the clients' side; the tests check it).
    tool.fn_metadata.output_schema = OUTPUT_SCHEMAS[tool.name]
    return tool


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


# `from` is a Python keyword, so no parameter can carry the name: the signature the SDK reads declares `from_` with
# the alias `from`, and the SDK then passes the validated arguments by alias, into memory_get's **arguments.
MEMORY_GET_SIGNATURE = inspect.Signature(
    [
        _param('path', GetPath),
        _param('from_', GetFrom, None),
        _param('lines', GetLines, None),
        _param('corpus', GetCorpus, 'memory'),
    ],
    return_annotation=CallToolResult,
)


async def _run(call: Callable[[], dict[str, Any]]) -> CallToolResult:
    """``call()`` in a worker thread (the tools block up to their deadline), as a tool result."""
    data = await anyio.to_thread.run_sync(call)
    failed = data.get('status') in ('error', 'forbidden') or ('error' in data and data.get('text') == '')
    return CallToolResult(
        content=[TextContent(type='text', text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
        is_error=failed,
    )
