"""A LangChain retriever over a memsift memory index (``pip install 'memsift[langchain]'``).

:class:`MemsiftRetriever` is a ``langchain_core`` ``BaseRetriever``: ``invoke`` / ``ainvoke`` a query and get one
``Document`` per hit, best first. ``page_content`` is the hit's whole chunk (secrets masked as in snippets);
``metadata`` holds ``path``, ``startLine``, ``endLine``, ``score`` (0 to 1), ``source`` (``memory`` or ``sessions``)
and ``citation`` (``path#Lx-Ly``, or ``None`` when citations are off); ``id`` is ``path#Lx-Ly``.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryIndex(ws, config) as index:
...     _ = index.sync()  # index the workspace first: a search answers from what is indexed
...     docs = MemsiftRetriever(index=index, min_score=0).invoke('where is the deploy key?')
>>> [(doc.page_content, doc.metadata['path'], doc.metadata['citation']) for doc in docs]
[('The deploy key lives in the team vault.\\n', 'MEMORY.md', 'MEMORY.md#L1-L2')]
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, NamedTuple

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import PrivateAttr, model_validator
except ImportError as exc:  # say which extra brings it, not only which module is missing
    raise ImportError(
        f'memsift.integrations.langchain needs langchain-core: pip install "memsift[langchain]" ({exc})'
    ) from exc

from memsift.index.memory_index import MemoryIndex
from memsift.integrations._hits import HitReader, check_options, hit_id

__all__ = ['MemsiftRetriever']


class MemsiftRetriever(BaseRetriever):
    """LangChain retriever searching a :class:`~memsift.MemoryIndex` as ``memory_search`` does.

    It wraps the index rather than :class:`~memsift.MemoryTools` (pass ``tools.index`` to use the tools' index): a
    retriever needs typed hits, not the tool's JSON answer, and raises errors where the tool would return them.
    The index stays open; closing it is the caller's. Sync it (``index.sync()``) or open it with
    ``MemoryTools.open`` before the first query: a search answers from what is indexed.

    Args:
        index: The memory index to search.
        max_results: Documents per query (default: the config's ``query.maxResults``, 6); ``invoke`` and
            ``ainvoke`` take ``max_results=`` too, for one call.
        min_score: Leave out hits scoring below this, 0 to 1 (default: ``query.minScore``, 0.35); also per call.
        session_key: The calling session, set by the application: the ``auto`` citation rule and, with session
            memory, which transcripts are visible depend on it (default: the agent's main session).
        since: Only material of this day or later: an ISO date (``2026-11-01``), a date, or a span back from the
            day of the query (``7d``, ``2w``, ``3m``, ``1y``); also per call.
        until: Only material of this day or earlier (same forms); also per call.
        paths: Only files matching one of these workspace-relative globs (``memory/2026-11-*.md``, ``projects/**``,
            a folder); also per call.
        tags: Only notes whose front-matter ``tags`` include one of these; also per call.

    A per-call option replaces the retriever's; left out (or ``None``), the retriever's applies. Without filters
    the documents are exactly ``memory_search``'s hits.

    An empty or blank query (or one of only unsearchable characters, such as NUL) finds nothing: ``[]``. Errors
    are memsift's: :class:`~memsift.InvalidInputError` for a query that is not a string, a ``max_results`` that
    is not a positive integer or a filter a search would refuse (raised by the constructor for its own options),
    :class:`~memsift.ConfigError` when memory search is disabled, :class:`~memsift.ProviderError` when an
    explicitly configured embedding provider fails.
    """

    index: MemoryIndex
    max_results: int | None = None
    min_score: float | None = None
    session_key: str | None = None
    since: str | datetime | date | None = None
    until: str | datetime | date | None = None
    paths: list[str] | None = None
    tags: list[str] | None = None

    _reader: HitReader = PrivateAttr()

    @model_validator(mode='before')
    @classmethod
    def _check_options(cls, data: Any) -> Any:
        # memsift's own checks on the values as given, before pydantic coerces them (True would become 1): a bad
        # option raises the same InvalidInputError a search would, when the retriever is made.
        if isinstance(data, dict):
            check_options(
                data.get('index'),
                data.get('max_results'),
                data.get('min_score'),
                since=data.get('since'),
                until=data.get('until'),
                paths=data.get('paths'),
                tags=data.get('tags'),
            )
        return data

    def model_post_init(self, context: Any, /) -> None:
        self._reader = HitReader(self.index)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        max_results: int | None = None,
        min_score: float | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> list[Document]:
        return self._documents(query, _Call(max_results, min_score, since, until, paths, tags))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        max_results: int | None = None,
        min_score: float | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> list[Document]:
        # The search is blocking (SQLite, tantivy, maybe an embedding request): a worker thread keeps the loop free.
        call = _Call(max_results, min_score, since, until, paths, tags)
        return await asyncio.to_thread(self._documents, query, call)

    def _documents(self, query: str, call: _Call) -> list[Document]:
        hits = self._reader.search(
            query,
            self.max_results if call.max_results is None else call.max_results,
            self.min_score if call.min_score is None else call.min_score,
            self.session_key,
            since=self.since if call.since is None else call.since,
            until=self.until if call.until is None else call.until,
            paths=self.paths if call.paths is None else call.paths,
            tags=self.tags if call.tags is None else call.tags,
        )
        return [Document(page_content=text, metadata=meta, id=hit_id(meta)) for text, meta in hits]


class _Call(NamedTuple):
    """One call's options (``None``: the retriever's)."""

    max_results: int | None
    min_score: float | None
    since: str | date | None
    until: str | date | None
    paths: Sequence[str] | None
    tags: Sequence[str] | None
