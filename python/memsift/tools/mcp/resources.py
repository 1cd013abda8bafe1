"""The agent's indexed memory files as MCP resources, ``memsift://<agentId>/<path>`` (:func:`memory_uri`).

``resources/list`` gives the files indexed now, and ``resources/read`` answers with what ``memory_get`` gives for the
file (its first 20,000 characters; ``_meta`` holds the rest of ``memory_get``'s answer, ``nextFrom`` included). Any
other URI is refused with an error naming it. :class:`MemoryServer` is the MCP server that serves them;
:func:`~memsift.tools.mcp.server.build_server` adds the tools.

>>> memory_uri('main', 'memory/2026-11-20.md')
'memsift://main/memory/2026-11-20.md'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import InputRequiredResult, Resource
from pydantic import AnyUrl

from memsift._text import preview
from memsift.index.reader import MAX_GET_CHARS
from memsift.media import EXTENSIONS as MEDIA_EXTENSIONS
from memsift.tools.agent import MemoryTools

__all__ = ['SCHEME', 'MemoryServer', 'memory_uri']

SCHEME = 'memsift'
"""The scheme of the memory file resources: ``memsift://<agentId>/<path>``."""


def memory_uri(agent_id: str, path: str) -> str:
    """The resource URI of an indexed memory file: ``memsift://<agentId>/<path>``, each path segment
    percent-encoded (UTF-8) except the ``/`` between them.

    A ``.`` or ``..`` segment (``../`` leads an extra path outside the workspace) is written ``%2E``/``%2E%2E`` so
    that no URI library resolves it away; :meth:`MemoryServer.read_resource` decodes it back to the indexed path.

    >>> memory_uri('main', 'memory/2026-11-20.md'), memory_uri('main', 'notes/a b#1.md')
    ('memsift://main/memory/2026-11-20.md', 'memsift://main/notes/a%20b%231.md')
    >>> memory_uri('main', '../secret.txt')
    'memsift://main/%2E%2E/secret.txt'
    """
    segments = [s.replace('.', '%2E') if s in ('.', '..') else quote(s, safe='') for s in path.split('/')]
    return f'{SCHEME}://{quote(agent_id, safe="")}/{"/".join(segments)}'


_MEDIA_SUFFIXES = tuple(suffix for suffixes in MEDIA_EXTENSIONS.values() for suffix in suffixes)


class MemoryServer(MCPServer[Any]):
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
