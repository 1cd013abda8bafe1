"""When each candidate chunk was written, and what its file's front-matter says, for the time stage of a search
(time words in the query, ``since`` / ``until``) and for its filters (``paths``, ``tags``).

A chunk's day is, in order: the date in a daily note's name (``memory/2026-11-03.md``, as temporal decay reads
it), the ``date:`` of its file's front-matter, its file's modification time; a transcript's is its newest
message (an archive's, the date in its name). Days are local dates, as notes are named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

from memsift._core import memory_date_from_path
from memsift._text import preview
from memsift.errors import InvalidInputError
from memsift.index.frontmatter import FrontMatter, front_matter
from memsift.index.records import ChunkHead

if TYPE_CHECKING:
    from memsift.index.protocol import Store
    from memsift.index.session_memory import SessionMemory

__all__ = ['ChunkDates', 'path_filter']

_CACHE_SIZE = 4096


class ChunkDates:
    """The days and front-matter of a store's chunks (front-matter read from each file's first chunk, cached by
    that chunk's id, which changes whenever the file is re-indexed)."""

    def __init__(self, store: Store, session_memory: SessionMemory | None) -> None:
        self.store, self.session_memory = store, session_memory
        self._front: dict[int, FrontMatter | None] = {}

    def front_matters(self, paths: Sequence[str]) -> dict[str, FrontMatter | None]:
        """Each note's front-matter (``None``: it has none), by path; transcripts have none."""
        firsts = self.store.first_chunks([path for path in paths if not path.startswith('sessions/')])
        missing = [chunk for chunk in firsts.values() if chunk not in self._front]
        if missing:
            if len(self._front) + len(missing) > _CACHE_SIZE:
                self._front.clear()
            for chunk, text in self.store.chunk_texts(missing).items():
                self._front[chunk] = front_matter(text)
        return {path: self._front.get(chunk) for path, chunk in firsts.items()}

    def days(self, pool: Sequence[ChunkHead]) -> list[date | None]:
        """Each chunk's day (see the module's docstring)."""
        notes = sorted({head.path for head in pool if head.source != 'sessions'})
        named = {path: memory_date_from_path(path) for path in notes}
        unnamed = [path for path in notes if named[path] is None]
        front = self.front_matters(unnamed) if unnamed else {}
        mtimes = self.store.file_mtimes([path for path in unnamed if (front.get(path) or _NONE).date is None])
        days: dict[str, date | None] = {}
        for path in notes:
            meta = front.get(path)
            mtime = mtimes.get(path)
            days[path] = named[path] or (meta.date if meta else None) or (_local_day(mtime) if mtime else None)
        transcripts = self.session_memory.last_messages() if self.session_memory is not None else {}
        return [
            (_local_day(transcripts[head.path]) if head.path in transcripts else None)
            if head.source == 'sessions'
            else days[head.path]
            for head in pool
        ]


_NONE = FrontMatter(None, None, ())


def _local_day(epoch_s: float) -> date:
    return datetime.fromtimestamp(epoch_s).date()


def path_filter(globs: Sequence[str] | None) -> re.Pattern[str] | None:
    """One pattern for the ``paths`` filter's globs (workspace-relative: ``*`` within a folder, ``**`` across
    folders, ``?`` one character; a glob without wildcards also takes everything under it as a folder).

    Raises:
        InvalidInputError: a glob that is not a string, is empty, absolute, or climbs out of the workspace.

    >>> pattern = path_filter(['memory/2026-11-*.md', 'projects'])
    >>> [bool(pattern.fullmatch(p)) for p in ('memory/2026-11-03.md', 'memory/old/2026-11-03.md', 'projects/a.md')]
    [True, False, True]
    """
    if globs is None:
        return None
    if isinstance(globs, str) or not all(isinstance(glob, str) for glob in globs):
        raise InvalidInputError(f'paths must be a list of glob strings, got {preview(globs)}')
    parts = []
    for glob in globs:
        clean = glob.strip().replace('\\', '/').removeprefix('./')
        if not clean or clean.startswith('/') or re.match(r'^[A-Za-z]:', clean) or '..' in clean.split('/'):
            raise InvalidInputError(
                f'paths: {preview(glob)} is not a glob inside the workspace (use workspace-relative paths such as '
                '"memory/2026-11-*.md" or "projects/**")'
            )
        regex = ''
        for piece in re.split(r'(\*\*/?|\*|\?)', clean):
            if piece.startswith('**'):
                regex += '(?:.*/)?' if piece.endswith('/') else '.*'
            elif piece == '*':
                regex += '[^/]*'
            elif piece == '?':
                regex += '[^/]'
            else:
                regex += re.escape(piece)
        if not any(char in clean for char in '*?'):
            regex += '(?:/.*)?'  # a folder: everything under it
        parts.append(regex)
    return re.compile('|'.join(f'(?:{part})' for part in parts))
