"""Searching the memory index, as a pipeline of named stages (``MemoryIndex.search`` calls them in this order):

1. :mod:`~memsift.search.request`: check the arguments, normalize the query (:class:`SearchRequest`);
2. (``MemoryIndex``: catch up with the workspace and other writers; pick the mode: hybrid, vector-only, fts-only);
3. :mod:`~memsift.search.legs`: the keyword, vector and path legs, each returning scored candidates;
4. (``MemoryIndex``: keep the sources asked for and the transcripts the caller may see);
5. :mod:`~memsift.search.merge`: the one ranking call into Rust: merge, relaxed pass, decay, path tiers, MMR, floor;
6. :mod:`~memsift.search.results`: :class:`MemoryHit` / :class:`SearchResult` with snippets and citations.

>>> hit = MemoryHit('MEMORY.md', 1, 1, 0.5, 'The deploy key lives in the team vault.')
>>> SearchResult([hit], 'none', 'fts-only').to_dict()['results'][0]['path']
'MEMORY.md'
"""

from memsift.search.request import MAX_QUERY_CHARS, SearchMode, SearchRequest
from memsift.search.results import MemoryHit, SearchResult

__all__ = ['MAX_QUERY_CHARS', 'MemoryHit', 'SearchMode', 'SearchRequest', 'SearchResult']
