"""Path queries (reference §6): a query that names a file exactly (full path, basename or stem) puts that file in
a tier above every content match. The lookup tables live in Rust (``memsift._core.PathCatalogue``).

>>> catalogue = Catalogue(0, ['memory/2026-11-28.md'])
>>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
[{'memory/2026-11-28.md': 3}, {'memory/2026-11-28.md': 2}, {'memory/2026-11-28.md': 1}, {}]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

from memsift._core import PathCatalogue

__all__ = ['Catalogue']


class Catalogue:
    """The indexed files of one store generation, with lookup tables for exact path queries.

    Another process's writes move it along (:meth:`moved_to`) without rebuilding its tables: the files added since
    get small tables of their own and the files removed are left out of answers, until those changes reach
    :data:`REBUILD_FROM` (then the tables are rebuilt from every path).
    """

    REBUILD_FROM = 1_000
    """Files added or removed since the tables were built, past which they are rebuilt (or 5 % of the files)."""

    def __init__(self, generation: int, paths: Iterable[str] | PathCatalogue) -> None:
        self.generation = generation
        self._tables = paths if isinstance(paths, PathCatalogue) else PathCatalogue(list(paths))  # sorted there
        self._added: frozenset[str] = frozenset()
        self._added_tables: PathCatalogue | None = None
        self._removed: frozenset[str] = frozenset()

    def __contains__(self, path: str) -> bool:
        return path in self._added or (path in self._tables and path not in self._removed)

    def __len__(self) -> int:
        return len(self._tables) - len(self._removed) + len(self._added)

    def moved_to(self, generation: int, present: Sequence[str], gone: Sequence[str]) -> Catalogue:
        """This catalogue at ``generation``, after writes that left ``present`` indexed and removed ``gone``: the
        same tables when the set of files did not change (an edited note), else these plus the changes.

        >>> before = Catalogue(4, ['MEMORY.md', 'memory/a.md'])
        >>> before.moved_to(5, ['memory/a.md'], [])._tables is before._tables
        True
        >>> after = before.moved_to(6, ['memory/b.md'], ['memory/a.md'])
        >>> len(after), 'memory/a.md' in after, after.exact('b.md'), after.exact('a.md')
        (2, False, {'memory/b.md': 2}, {})
        """
        entering = {p for p in present if p not in self}
        leaving = {p for p in gone if p in self}
        moved = copy.copy(self)
        moved.generation = generation
        if not entering and not leaving:
            return moved
        added = (self._added - leaving) | {p for p in entering if p not in self._tables}
        removed = (self._removed | {p for p in leaving if p in self._tables}) - entering
        if len(added) + len(removed) > max(self.REBUILD_FROM, len(self._tables) // 20):
            return Catalogue(generation, {*(p for p in self._tables.paths() if p not in removed), *added})
        moved._added, moved._removed = frozenset(added), frozenset(removed)
        moved._added_tables = PathCatalogue(list(added)) if added else None
        return moved

    def exact(self, query: str) -> dict[str, int]:
        """Files the query names exactly: 3 = the full path, 2 = the basename (query without ``/``), 1 = the stem;
        best tier first, in path order within a tier."""
        found = [(path, tier) for path, tier in self._tables.exact(query) if path not in self._removed]
        if self._added_tables is not None:
            found += self._added_tables.exact(query)
            found.sort(key=lambda hit: (-hit[1], hit[0]))
        return dict(found)
