"""The memory tools for asyncio agent frameworks: each call runs in a worker thread, never blocking the event loop.

>>> import asyncio, tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('Standup moved to 9:30.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> async def main():
...     async with AsyncMemoryTools.open(ws, config, sessions_path=ws / 's.sqlite') as tools:
...         return (await tools.memory_search('standup', minScore=0))['results'][0]['path']
>>> asyncio.run(main())
'MEMORY.md'
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date
from typing import Any

from memsift.tools.agent import MemoryTools

__all__ = ['AsyncMemoryTools']


class AsyncMemoryTools:
    """:class:`~memsift.tools.MemoryTools` with ``async`` methods (same arguments, same results)."""

    def __init__(self, tools: MemoryTools) -> None:
        self.tools = tools

    @classmethod
    def open(cls, *args: Any, **kwargs: Any) -> AsyncMemoryTools:
        """:meth:`MemoryTools.open <memsift.tools.MemoryTools.open>`, wrapped."""
        return cls(MemoryTools.open(*args, **kwargs))

    @classmethod
    def from_openclaw(cls, *args: Any, **kwargs: Any) -> AsyncMemoryTools:
        """:func:`memsift.from_openclaw`, wrapped."""
        from memsift.tools import from_openclaw

        return cls(from_openclaw(*args, **kwargs))

    async def memory_search(
        self,
        query: str,
        maxResults: int | None = None,  # noqa: N803
        minScore: float | None = None,
        corpus: str = 'memory',  # noqa: N803
        *,
        sessionKey: str | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        return await asyncio.to_thread(
            self.tools.memory_search,
            query,
            maxResults,
            minScore,
            corpus,
            sessionKey=sessionKey,
            since=since,
            until=until,
            paths=paths,
            tags=tags,
        )

    async def memory_get(self, path: str, from_: int | None = None, lines: int | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.tools.memory_get, path, from_, lines)

    async def memory_write(self, text: str, path: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.tools.memory_write, text, path)

    async def sessions_search(
        self,
        query: str,
        sessionKey: str | None = None,  # noqa: N803
        limit: int | None = None,
        *,
        since: str | date | None = None,
        until: str | date | None = None,
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self.tools.sessions_search, query, sessionKey, limit, since=since, until=until)

    async def sessions_history(
        self,
        sessionKey: str,
        limit: int | None = None,  # noqa: N803
        includeTools: bool = False,
    ) -> dict[str, Any]:  # noqa: N803
        return await asyncio.to_thread(self.tools.sessions_history, sessionKey, limit, includeTools)

    async def close(self) -> None:
        await asyncio.to_thread(self.tools.close)

    async def __aenter__(self) -> AsyncMemoryTools:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
