"""The records both memory stores (SQLite, PostgreSQL) take and give: files, chunks and what changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from memsift._record import record

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['Changes', 'ChunkHead', 'ChunkRow', 'FileRecord', 'FileWrite']


@record
class FileRecord:
    """An indexed file (or transcript document) as the last sync saw it."""

    path: str
    source: str
    """``memory`` for workspace files, ``sessions`` for transcripts."""
    hash: str
    mtime: float
    """The change stamp a sync compares: the file's mtime (epoch seconds); for a transcript, its message count
    (``index/session_memory.py`` ages transcripts from their newest message instead)."""
    size: int
    indexed_at: float


class FileWrite(NamedTuple):
    """One file for a store's ``replace_files``: its record and its ``(start_line, end_line, text, hash)`` chunks,
    with one float32 embedding row per chunk or ``None``."""

    path: str
    source: str
    file_hash: str
    mtime: float
    size: int
    chunks: Sequence[tuple[int, int, str, str] | tuple[int, int, str, str, int | None]]
    """``(start_line, end_line, text, hash[, importance])`` each."""
    vectors: npt.NDArray[np.float32] | None = None


@record
class ChunkRow:
    id: int
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    text: str


class ChunkHead(NamedTuple):
    """What ranking needs of a chunk: everything but its text (read for the results only)."""

    id: int
    path: str
    source: str
    start_line: int
    end_line: int
    chars: int
    """The text's length in characters."""
    importance: int | None = None
    """Its entry's ``<!-- importance: N -->`` (1 to 10; OpenClaw 2.x's curated files), else ``None``."""


@record
class Changes:
    """What a store changed after some generation, read in one snapshot (a store's ``changes_since``)."""

    generation: int
    """The generation the changes lead to."""
    removed: list[int]
    """Ids of chunks removed (some may never have reached the reader: removing them is a no-op)."""
    added: list[ChunkRow]
    """Chunks added, in id order (with ``text`` only when asked for)."""
    vectors: dict[int, bytes]
    """The added chunks' stored embeddings (float32 bytes) of the asked dimension."""
