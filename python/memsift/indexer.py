"""Keep the store and the BM25 index in step with the workspace's memory files.

The SQLite store is written first, one atomic transaction per file; the tantivy index is derived and committed
with the store generation it reflects. If a process dies between the two, the index is behind the store, and
:func:`ensure_index_current` rebuilds it from the store on the next open: nothing is lost or duplicated.

>>> import tempfile, pathlib, memsift
>>> from memsift.store import MemoryStore
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('Prefers tabs over spaces.')
>>> store, index = MemoryStore(':memory:'), memsift.Bm25Index()
>>> sync_workspace(store, index, ws).added
['MEMORY.md']
>>> [store.chunks([i])[0].path for i, _ in index.search('tabs')]
['MEMORY.md']
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memsift._core import Bm25Index, chunk_markdown
from memsift.store import ChunkRow, MemoryStore
from memsift.workspace import DEFAULT_MAX_FILE_BYTES, SkippedFile, list_memory_files, read_memory_file

__all__ = ['SyncReport', 'ensure_index_current', 'sync_workspace']

_REBUILD_BATCH = 2000


@dataclass
class SyncReport:
    """What a sync changed (paths are workspace-relative)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    chunks_written: int = 0
    index_rebuilt: bool = False
    generation: int = 0


def _add_to_index(index: Bm25Index, rows: list[ChunkRow]) -> None:
    if rows:
        index.add([r.id for r in rows], [r.path for r in rows], [r.source for r in rows], [r.text for r in rows])


def ensure_index_current(store: MemoryStore, index: Bm25Index) -> bool:
    """Rebuild ``index`` from ``store`` when it does not reflect the store's generation; returns whether it did."""
    if index.generation == store.generation:
        return False
    index.clear()
    batch: list[ChunkRow] = []
    for row in store.iter_chunks(batch=_REBUILD_BATCH):
        batch.append(row)
        if len(batch) >= _REBUILD_BATCH:
            _add_to_index(index, batch)
            batch = []
    _add_to_index(index, batch)
    index.commit(generation=store.generation)
    return True


def sync_workspace(
    store: MemoryStore,
    index: Bm25Index,
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    *,
    tokens: int = 400,
    overlap: int = 80,
    force: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> SyncReport:
    """Bring ``store`` and ``index`` up to date with the memory files of ``workspace``.

    Files are compared by the sha256 of their text: unchanged files cost a read and a hash, changed files are
    re-chunked, vanished files are removed, unreadable ones are recorded with the reason. ``force`` re-chunks
    every file (after a chunking or identity change).
    """
    report = SyncReport(index_rebuilt=ensure_index_current(store, index))
    known = store.files()
    seen: set[str] = set()
    for entry in list_memory_files(workspace, extra_paths):
        seen.add(entry.path)
        try:
            text = read_memory_file(entry.abs_path, max_file_bytes)
        except SkippedFile as skipped:
            report.skipped[entry.path] = skipped.reason
            if store.skipped().get(entry.path) != skipped.reason:
                store.record_skipped(entry.path, skipped.reason)
                index.delete_path(entry.path)
            continue
        digest = hashlib.sha256(text.encode('utf-8')).hexdigest()
        previous = known.get(entry.path)
        if previous is not None and previous.hash == digest and not force:
            report.unchanged += 1
            continue
        stat = Path(entry.abs_path).stat()
        chunks = [(c.start_line, c.end_line, c.text, c.hash) for c in chunk_markdown(text, tokens, overlap)]
        ids = store.replace_file(entry.path, entry.source, digest, stat.st_mtime, stat.st_size, chunks)
        index.delete_path(entry.path)
        index.add(ids, [entry.path] * len(ids), [entry.source] * len(ids), [c[2] for c in chunks])
        (report.added if previous is None else report.updated).append(entry.path)
        report.chunks_written += len(ids)
    for path in sorted(set(known) - seen):
        store.delete_file(path)
        index.delete_path(path)
        report.removed.append(path)
    for path in sorted(set(store.skipped()) - seen):
        store.delete_file(path)  # a skipped file that is gone: forget its reason too
    if index.generation != store.generation:
        index.commit(generation=store.generation)
    report.generation = store.generation
    return report
