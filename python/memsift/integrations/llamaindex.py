"""A LlamaIndex retriever over a memsift memory index (``pip install 'memsift[llamaindex]'``).

:class:`MemsiftRetriever` is a ``llama_index.core`` ``BaseRetriever``: ``retrieve`` / ``aretrieve`` a query and get
one ``NodeWithScore`` per hit, best first, usable wherever LlamaIndex takes a retriever (``RetrieverQueryEngine``,
``RouterRetriever``, ...). Each node is a ``TextNode`` whose text is the hit's whole chunk (secrets masked as in
snippets), whose ``metadata`` holds ``path``, ``startLine``, ``endLine``, ``score`` (0 to 1), ``source``
(``memory`` or ``sessions``) and ``citation`` (``path#Lx-Ly``, or ``None`` when citations are off), and whose id is
``path#Lx-Ly``; the node's score is the hit's.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryIndex(ws, config) as index:
...     _ = index.sync()  # index the workspace first: a search answers from what is indexed
...     nodes = MemsiftRetriever(index, min_score=0).retrieve('where is the deploy key?')
>>> [(n.node.get_content(), n.node.metadata['path'], n.node.node_id) for n in nodes]
[('The deploy key lives in the team vault.\\n', 'MEMORY.md', 'MEMORY.md#L1-L2')]
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # say which extra brings it, not only which module is missing
    raise ImportError(
        f'memsift.integrations.llamaindex needs llama-index-core: pip install "memsift[llamaindex]" ({exc})'
    ) from exc

from memsift.index.memory_index import MemoryIndex
from memsift.integrations._hits import HitReader, check_options, hit_id

__all__ = ['MemsiftRetriever']


class MemsiftRetriever(BaseRetriever):
    """LlamaIndex retriever searching a :class:`~memsift.MemoryIndex` as ``memory_search`` does.

    It wraps the index rather than :class:`~memsift.MemoryTools` (pass ``tools.index`` to use the tools' index): a
    retriever needs typed hits, not the tool's JSON answer, and raises errors where the tool would return them.
    The index stays open; closing it is the caller's. Sync it (``index.sync()``) or open it with
    ``MemoryTools.open`` before the first query: a search answers from what is indexed.

    Args:
        index: The memory index to search.
        max_results: Nodes per query (default: the config's ``query.maxResults``, 6).
        min_score: Leave out hits scoring below this, 0 to 1 (default: ``query.minScore``, 0.35).
        session_key: The calling session, set by the application: the ``auto`` citation rule and, with session
            memory, which transcripts are visible depend on it (default: the agent's main session).
        since: Only material of this day or later: an ISO date (``2026-11-01``), a date, or a span back from the
            day of the query (``7d``, ``2w``, ``3m``, ``1y``).
        until: Only material of this day or earlier (same forms).
        paths: Only files matching one of these workspace-relative globs (``memory/2026-11-*.md``, ``projects/**``,
            a folder).
        tags: Only notes whose front-matter ``tags`` include one of these.
        callback_manager: LlamaIndex callbacks (default: ``Settings.callback_manager``'s handlers).
        verbose: LlamaIndex's verbose flag.

    Raises:
        InvalidInputError: ``index`` is not a :class:`~memsift.MemoryIndex`, or ``max_results`` / ``min_score``
            or a filter is one a search would refuse.

    Without filters the nodes are exactly ``memory_search``'s hits. An empty or blank query (or one of only
    unsearchable characters, such as NUL) finds nothing: ``[]``. A search raises :class:`~memsift.ConfigError`
    when memory search is disabled and :class:`~memsift.ProviderError` when an explicitly configured embedding
    provider fails.
    """

    def __init__(
        self,
        index: MemoryIndex,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        session_key: str | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        # Checked now, not on the first query.
        checked = check_options(index, max_results, min_score, since=since, until=until, paths=paths, tags=tags)
        self._reader = HitReader(checked)
        self.index = index
        self.max_results = max_results
        self.min_score = min_score
        self.session_key = session_key
        self.since, self.until, self.paths, self.tags = since, until, paths, tags
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(query_bundle.query_str)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # The search is blocking (SQLite, tantivy, maybe an embedding request): a worker thread keeps the loop free.
        return await asyncio.to_thread(self._nodes, query_bundle.query_str)

    def _nodes(self, query: str) -> list[NodeWithScore]:
        hits = self._reader.search(
            query,
            self.max_results,
            self.min_score,
            self.session_key,
            since=self.since,
            until=self.until,
            paths=self.paths,
            tags=self.tags,
        )
        return [
            NodeWithScore(node=TextNode(id_=hit_id(meta), text=text, metadata=meta), score=meta['score'])
            for text, meta in hits
        ]

    def __repr__(self) -> str:
        return f'MemsiftRetriever(index={self.index!r}, max_results={self.max_results!r}, min_score={self.min_score!r})'
