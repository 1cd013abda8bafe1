"""Keep the store and the BM25 index in step with the workspace's memory files.

The SQLite store is written first, one atomic transaction per file; the tantivy index is derived and committed
with the store generation it reflects. If a process dies between the two, the index is behind the store, and
:func:`ensure_index_current` rebuilds it from the store on the next open: nothing is lost or duplicated.

>>> import tempfile, pathlib, memsift
>>> from memsift.index.store import MemoryStore
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
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memsift._core import Bm25Index, VectorStore, chunk_markdown
from memsift.errors import SkippedFile
from memsift.index.store import ChunkRow, FileRecord, MemoryStore
from memsift.index.workspace import DEFAULT_MAX_FILE_BYTES, MemoryFile, list_memory_files, read_memory_file
from memsift.media import MediaInput, read_media_file

__all__ = [
    'Embedder',
    'Progress',
    'SyncReport',
    'ensure_index_current',
    'load_vectors',
    'sync_workspace',
    'workspace_changed',
]

_REBUILD_BATCH = 2000
_EMBED_BATCH = 64
"""Chunks gathered from changed files before one embedding call."""
_COMPACT_AFTER_CHUNKS = 256
"""A sync that wrote at least this many chunks merges the BM25 index into one segment at its last commit."""
_COMMIT_EVERY_S = 1.0
"""During a long sync, new files become searchable at least this often (a commit costs milliseconds)."""
_RACY_S = 2.0
"""A file whose mtime is this close to when it was indexed is re-read even if its stat looks unchanged: a write
in the same mtime tick as the previous index would otherwise go unnoticed (git's "racy clean" rule)."""

Embedder = Callable[[Sequence[str | MediaInput]], npt.NDArray[np.float32]]
"""Chunk texts (or media inputs) -> one float32 row each (the provider's ``embed_documents`` after validation)."""
Progress = Callable[[int, int, str], None]
"""``progress(done, total, path)`` after each file of a sync."""


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
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            'added': self.added,
            'updated': self.updated,
            'removed': self.removed,
            'unchanged': self.unchanged,
            'skipped': self.skipped,
            'chunksWritten': self.chunks_written,
            'indexRebuilt': self.index_rebuilt,
            'generation': self.generation,
            'seconds': round(self.seconds, 4),
        }


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


def load_vectors(store: MemoryStore, vectors: VectorStore) -> None:
    """Fill ``vectors`` (emptied first) with the embeddings the store holds for its dimension."""
    vectors.clear()
    for ids, matrix in store.iter_vectors(vectors.dims):
        vectors.add(ids, matrix)


def _stat_unchanged(previous: FileRecord, entry: MemoryFile) -> bool:
    return previous.mtime == entry.mtime and previous.size == entry.size and entry.mtime < previous.indexed_at - _RACY_S


def workspace_changed(
    store: MemoryStore,
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    media_suffixes: Iterable[str] = (),
) -> bool:
    """Whether a sync would find work: a memory file added, removed, or with a new size or mtime (stat only)."""
    known = store.files()
    listed = 0
    for entry in list_memory_files(workspace, extra_paths, media_suffixes):
        previous = known.get(entry.path)
        if previous is None:
            return entry.path not in store.skipped()
        listed += 1
        if (previous.mtime, previous.size) != (entry.mtime, entry.size):
            return True
    return listed != len(known)


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
    embedder: Embedder | None = None,
    vectors: VectorStore | None = None,
    progress: Progress | None = None,
    media_suffixes: Iterable[str] = (),
    media_max_bytes: int = 10 * 1024 * 1024,
    documents: Iterable[MemoryFile] = (),
) -> SyncReport:
    """Bring ``store`` and ``index`` (and ``vectors``) up to date with the memory files of ``workspace``.

    Files are compared by the sha256 of their text (a file whose size and mtime are unchanged since well before
    it was indexed is not even read); changed files are re-chunked, vanished files are removed, unreadable ones
    are recorded with the reason. ``force`` re-chunks every file (after a chunking or identity change). With an
    ``embedder``, each new chunk's vector is stored with it and added to ``vectors``. Files with
    ``media_suffixes`` in the extra paths become one labelled chunk each, embedded with their bytes. ``documents``
    are indexed like files, their text coming from ``read`` (session transcripts).
    """
    started = time.perf_counter()
    report = SyncReport(index_rebuilt=ensure_index_current(store, index))
    known = store.files()
    known_skipped = store.skipped()
    media = frozenset(media_suffixes)
    entries = [*list_memory_files(workspace, extra_paths, media), *documents]
    seen: set[str] = set()

    def sync_file(
        entry: MemoryFile, previous: FileRecord | None, skipped_reason: str | None, report: SyncReport
    ) -> None:
        if previous is not None and not force and _stat_unchanged(previous, entry):
            report.unchanged += 1
            return
        item: MediaInput | None = None
        line_map: tuple[int, ...] = ()
        try:
            if entry.read is not None:
                text, line_map = entry.read()
                digest = hashlib.sha256(text.encode('utf-8')).hexdigest()
            elif Path(entry.path).suffix.lower() in media:
                item = read_media_file(entry.abs_path, entry.path, media_max_bytes)
                text, digest = item.label, item.sha256
            else:
                text = read_memory_file(entry.abs_path, max_file_bytes)
                digest = hashlib.sha256(text.encode('utf-8')).hexdigest()
        except SkippedFile as skipped:
            report.skipped[entry.path] = skipped.reason
            if skipped_reason != skipped.reason:
                replaced.append(entry.path)
                removed = store.chunk_ids(entry.path)
                store.record_skipped(entry.path, skipped.reason)
                index.delete_path(entry.path)
                if vectors is not None:
                    vectors.remove(removed)
            return
        if previous is not None and previous.hash == digest and not force:
            report.unchanged += 1
            if (previous.mtime, previous.size) != (entry.mtime, entry.size):
                store.touch_file(entry.path, entry.mtime, entry.size)  # touched, not changed: skip the read next time
            return
        if item is not None:
            chunks = [(1, 1, item.label, digest)]  # one chunk per media file (OpenClaw)
        else:
            chunks = [(c.start_line, c.end_line, c.text, c.hash) for c in chunk_markdown(text, tokens, overlap)]
            if line_map:  # chunk lines name the source's lines (a transcript's JSONL lines)
                chunks = [(line_map[start - 1], line_map[end - 1], body, h) for start, end, body, h in chunks]
        changes.append((entry, previous, digest, chunks, item))
        if embedder is None or sum(len(c[3]) for c in changes) >= _EMBED_BATCH:
            write_changes()

    # Changed files wait here until enough chunks are gathered for one embedding call (a provider or a local
    # model is far faster on one batch than on many one-chunk calls); each file is then written in its own
    # transaction, with its vectors.
    changes: list[tuple[MemoryFile, FileRecord | None, str, list[tuple[int, int, str, str]], MediaInput | None]] = []

    def write_changes() -> None:
        inputs: list[str | MediaInput] = []
        for _, _, _, chunks, item in changes:
            inputs.extend([item] if item is not None else [c[2] for c in chunks])
        matrix = embedder(inputs) if embedder is not None and inputs else None
        offset = 0
        for entry, previous, digest, chunks, _ in changes:
            rows = None if matrix is None else matrix[offset : offset + len(chunks)]
            offset += len(chunks)
            # The stat recorded is the listing's, taken before the text was read: an edit that lands while the
            # chunks embed gives the file a newer mtime than recorded, so the next sync reads it again.
            old_ids = store.chunk_ids(entry.path) if vectors is not None else []
            # The store first, then the BM25 index: if the store write fails nothing is staged for this file, so
            # the commit in `finally` below never makes the BM25 index disagree with the store.
            ids = store.replace_file(entry.path, entry.source, digest, entry.mtime, entry.size, chunks, rows)
            index.delete_path(entry.path)
            index.add(ids, [entry.path] * len(ids), [entry.source] * len(ids), [c[2] for c in chunks])
            if vectors is not None:
                vectors.remove(old_ids)
                if rows is not None and len(ids):
                    pending.append((ids, rows))
            (report.added if previous is None else report.updated).append(entry.path)
            if previous is not None:
                replaced.append(entry.path)
            report.chunks_written += len(ids)
        changes.clear()

    pending: list[tuple[list[int], npt.NDArray[np.float32]]] = []
    # Files whose old chunks the store no longer holds while the BM25 index still points at them: until the next
    # commit, searches (in any process) cannot find those files at all, so that commit comes at once.
    replaced: list[str] = []

    def flush_vectors() -> None:
        # One add per batch: HNSW inserts run in parallel, and per-file calls would cost a round trip each.
        if vectors is not None and pending:
            vectors.add(
                np.fromiter((i for ids, _ in pending for i in ids), dtype=np.uint64),
                np.concatenate([matrix for _, matrix in pending]),
            )
            pending.clear()

    last_commit = time.monotonic()
    try:
        for done, entry in enumerate(entries, 1):
            seen.add(entry.path)
            sync_file(entry, known.get(entry.path), known_skipped.get(entry.path), report)
            if progress is not None:
                progress(done, len(entries), entry.path)
            due = replaced or time.monotonic() - last_commit > _COMMIT_EVERY_S
            if due and index.generation != store.generation:
                flush_vectors()
                index.commit(generation=store.generation, compact=False)
                last_commit = time.monotonic()
                replaced.clear()
        write_changes()
        for path in sorted(set(known) - seen):
            removed = store.delete_file(path)
            index.delete_path(path)
            if vectors is not None:
                vectors.remove(removed)
            report.removed.append(path)
        for path in sorted(set(known_skipped) - seen):
            store.delete_file(path)  # a skipped file that is gone: forget its reason too
    finally:
        # Whatever was written to the store (even before an error) becomes searchable.
        flush_vectors()
        if index.generation != store.generation:
            # Merging into one segment costs time proportional to the whole index: worth it after bulk changes,
            # not after a one-note edit (tantivy's merge policy tidies small segments in the background).
            index.commit(generation=store.generation, compact=report.chunks_written >= _COMPACT_AFTER_CHUNKS)
    report.generation = store.generation
    report.seconds = time.perf_counter() - started
    return report
