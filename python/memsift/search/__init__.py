"""Searching the memory index, as a pipeline of named stages (:mod:`~memsift.search.pipeline` runs them in this
order; ``MemoryIndex.search`` hands it the request once and gets the result back):

1. :mod:`~memsift.search.request`: check the arguments, normalize the query (:class:`SearchRequest`);
2. ``Freshness.prepare``: catch up with the workspace and other writers; pick the mode (hybrid, vector-only,
   fts-only);
3. :mod:`~memsift.search.legs`: the keyword, vector and path legs, each returning scored candidates
   (:mod:`~memsift.search.paths`: the file names the path leg matches);
4. keep the sources asked for and the transcripts the caller may see;
5. :mod:`~memsift.search.merge`: the one ranking call into Rust: merge, relaxed pass, decay, path tiers, MMR, floor;
6. :mod:`~memsift.search.rerank`: the optional second-stage reranker (``query.rerank``);
7. :mod:`~memsift.search.results`: :class:`MemoryHit` / :class:`SearchResult` with snippets and citations, and
   :mod:`~memsift.search.explain`: how each hit was scored, when asked.

>>> hit = MemoryHit('MEMORY.md', 1, 1, 0.5, 'The deploy key lives in the team vault.')
>>> SearchResult([hit], 'none', 'fts-only').to_dict()['results'][0]['path']
'MEMORY.md'
"""

from memsift.search.request import MAX_QUERY_CHARS, SearchMode, SearchRequest
from memsift.search.results import MemoryHit, SearchResult

__all__ = ['MAX_QUERY_CHARS', 'MemoryHit', 'SearchMode', 'SearchRequest', 'SearchResult']
