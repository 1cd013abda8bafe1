"""Path queries (reference §6): a query that names a file exactly (full path, basename or stem) puts that file in
a tier above every content match.

>>> catalogue = Catalogue(0, {'memory/2026-11-28.md': None})  # a path -> FileRecord mapping
>>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
[{'memory/2026-11-28.md': 3}, {'memory/2026-11-28.md': 2}, {'memory/2026-11-28.md': 1}, {}]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from memsift.index.store import FileRecord

__all__ = ['Catalogue', 'normalize_path']


def normalize_path(path: str) -> str:
    """OpenClaw's path-query normalization: trim, ``\\`` -> ``/``, no leading ``./``, NFC, lower case."""
    path = path.strip().replace('\\', '/')
    while path.startswith('./'):
        path = path[2:]
    return unicodedata.normalize('NFC', path).lower()


def _path_keys(path: str) -> tuple[str, str, str]:
    """Normalized full path, basename and stem (basename without its last extension)."""
    full = normalize_path(path)
    base = full.rsplit('/', 1)[-1]
    return full, base, base.rsplit('.', 1)[0] if '.' in base else base


class Catalogue:
    """The indexed files of one store generation, with lookup tables for exact path queries."""

    def __init__(self, generation: int, files: Mapping[str, FileRecord]) -> None:
        self.generation = generation
        self.files = files
        self._by_key: dict[tuple[int, str], list[str]] = {}
        for path in self.files:
            for tier, key in zip((3, 2, 1), _path_keys(path)):
                self._by_key.setdefault((tier, key), []).append(path)

    def exact(self, query: str) -> dict[str, int]:
        """Files the query names exactly: 3 = the full path, 2 = the basename (query without ``/``), 1 = the stem."""
        query = normalize_path(query)
        found: dict[str, int] = {}
        if not query:
            return found
        for tier in (3, 2, 1):
            if tier == 2 and '/' in query:
                continue
            for path in self._by_key.get((tier, query), ()):
                found.setdefault(path, tier)
        return found
