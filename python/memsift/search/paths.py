"""Path queries (reference §6): a query that names a file exactly (full path, basename or stem) puts that file in
a tier above every content match. The lookup tables live in Rust (``memsift._core.PathCatalogue``).

>>> catalogue = Catalogue(0, ['memory/2026-11-28.md'])
>>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
[{'memory/2026-11-28.md': 3}, {'memory/2026-11-28.md': 2}, {'memory/2026-11-28.md': 1}, {}]
"""

from __future__ import annotations

from collections.abc import Sequence

from memsift._core import PathCatalogue

__all__ = ['Catalogue']


class Catalogue:
    """The indexed files of one store generation, with lookup tables for exact path queries."""

    def __init__(self, generation: int, paths: Sequence[str]) -> None:
        self.generation = generation
        self._paths = PathCatalogue(paths)

    def __len__(self) -> int:
        return len(self._paths)

    def exact(self, query: str) -> dict[str, int]:
        """Files the query names exactly: 3 = the full path, 2 = the basename (query without ``/``), 1 = the stem."""
        return dict(self._paths.exact(query))
