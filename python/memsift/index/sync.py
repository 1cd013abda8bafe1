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

import math
import os
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from memsift._core import (
    Bm25Index,
    FileStamps,
    PathCatalogue,
    VectorStore,
    chunk_markdown,
    chunk_memory,
    prepare_files,
)
from memsift._record import field, record
from memsift._text import sha256_hex
from memsift.errors import SkippedFile
from memsift.index.records import ChunkRow, FileRecord, FileWrite
from memsift.index.workspace import (
    DEFAULT_MAX_FILE_BYTES,
    IGNORED_DIRS,
    Listing,
    MemoryFile,
    MemoryScope,
    read_memory_file,
    scan_arguments,
    scan_workspace,
)
from memsift.media import MediaInput, read_media_file

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift.index.protocol import Store

__all__ = [
    'Embedder',
    'FileDiff',
    'Progress',
    'StampCheck',
    'SyncReport',
    'ensure_index_current',
    'load_vectors',
    'sync_workspace',
    'unchanged_report',
    'workspace_changed',
]

_REBUILD_BATCH = 2000
_EMBED_BATCH = 64
"""Chunks gathered from changed files before one embedding call."""
_WRITE_BATCH = 1024
"""Keyword-only, chunks of changed files written in one store transaction."""
_READ_BLOCK = 256
"""Files whose reading, hashing and chunking run together, in parallel (``memsift._core.prepare_files``)."""
_COMPACT_AFTER_CHUNKS = 256
"""A sync that wrote at least this many chunks merges the BM25 index into one segment at its last commit."""
_COMMIT_EVERY_S = 1.0
"""During a long sync, new files become searchable at least this often (a commit costs milliseconds)."""
_PARTIAL_MAX = 4096
"""Changed files a sync looks up one by one whatever the index's size (see :func:`_partial`)."""
_RACY_S = 2.0
"""A file whose whole-second mtime is this close to when it was indexed is re-read even if its stat looks
unchanged: a write in the same mtime tick as the previous index would otherwise go unnoticed (git's "racy clean"
rule). Whole seconds are the mark of a coarse filesystem (FAT's 2 s ticks, HFS+, old ext4 inodes)."""
_RACY_FINE_S = 0.1
"""The same for an mtime with a fraction of a second: its filesystem stamps at the kernel clock's tick (at most
10 ms), so a file indexed this long after it was written is clean (git compares nanoseconds the same way)."""

Embedder = Callable[[Sequence['str | MediaInput']], 'npt.NDArray[np.float32]']  # strings: numpy loads lazily
"""Chunk texts (or media inputs) -> one float32 row each (the provider's ``embed_documents`` after validation)."""
Progress = Callable[[int, int, str], None]
"""``progress(done, total, path)`` after each file of a sync."""


@record(frozen=False, slots=False)
class SyncReport:
    """What a sync changed (paths are workspace-relative)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    read: int = 0
    """Files whose text was read: changed ones, and unchanged ones whose stat could not vouch for them."""
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
            'read': self.read,
            'skipped': self.skipped,
            'chunksWritten': self.chunks_written,
            'indexRebuilt': self.index_rebuilt,
            'generation': self.generation,
            'seconds': round(self.seconds, 4),
        }


def _add_to_index(index: Bm25Index, rows: list[ChunkRow]) -> None:
    if rows:
        index.add([r.id for r in rows], [r.path for r in rows], [r.source for r in rows], [r.text for r in rows])


def ensure_index_current(store: Store, index: Bm25Index) -> bool:
    """Bring ``index`` to the store's generation: by applying what the store's change log says changed since the
    index's generation (other hosts' writes, or a write whose process died before committing the index), else (when
    the log does not reach back that far) by rebuilding it; returns whether it rebuilt."""
    if index.generation == store.generation:
        return False
    changes = store.changes_since(index.generation) if index.generation is not None else None
    if changes is not None:
        import numpy as np

        index.delete_ids(np.asarray(changes.removed, dtype=np.uint64))
        _add_to_index(index, changes.added)
        index.commit(generation=changes.generation, compact=False)
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


def load_vectors(store: Store, vectors: VectorStore) -> None:
    """Fill ``vectors`` (emptied first) with the embeddings the store holds for its dimension."""
    vectors.clear()
    for ids, matrix in store.iter_vectors(vectors.dims):
        vectors.add(ids, matrix)


def _stat_unchanged(previous: FileRecord, entry: MemoryFile) -> bool:
    return _stamp_unchanged((previous.mtime, previous.size, previous.indexed_at), entry.mtime, entry.size)


def _stamp_unchanged(stamp: tuple[float, int, float], mtime: float, size: int) -> bool:
    """Same mtime and size as indexed, and not written so close to the indexing that an edit could hide."""
    return stamp[0] == mtime and stamp[1] == size and not _racy(mtime, stamp[2])


def _racy(mtime: float, indexed_at: float) -> bool:
    """Whether a file with ``mtime``, read at ``indexed_at``, could have been written again within the same mtime
    tick after the read. An mtime in the future (a clock set wrong, an archive from elsewhere) is not racy: the next
    write stamps an earlier time, which the stat compare sees."""
    window = _RACY_S if mtime.is_integer() else _RACY_FINE_S
    return -window < indexed_at - mtime < window


def unchanged_report(store: Store, listing: Sequence[tuple[str, str, float, int]], started: float) -> SyncReport | None:
    """The report of a sync with nothing to do, when every listed ``(path, abs_path, mtime, size)`` is indexed
    with its current stat and nothing indexed or skipped has gone; else ``None``. The common sync, answered from one
    table read without building a record per file (and without the writer lock: it writes nothing)."""
    stamps = store.file_stamps()
    if len(stamps) != len(listing) or store.skipped():
        return None
    for path, _, mtime, size in listing:
        stamp = stamps.get(path)
        if stamp is None or not _stamp_unchanged(stamp, mtime, size):
            return None
    return SyncReport(unchanged=len(listing), generation=store.generation, seconds=time.perf_counter() - started)


class FileDiff(NamedTuple):
    """What a check in the core found (:meth:`StampCheck.diff`): the listed files a sync must read (new, changed,
    racy, or skipped before: those have no stamp), the indexed or skipped paths gone, and how many files are
    indexed."""

    changed: Listing
    gone: list[str]
    stamped: int

    @property
    def empty(self) -> bool:
        """Nothing to sync."""
        return not self.changed and not self.gone


def _same_file_as_another(path: Path, names: Sequence[str]) -> bool:
    """Whether another of the root file ``names`` beside ``path`` is the same file (a case-insensitive disk)."""
    try:
        found = path.stat()
        others = [path.with_name(name).stat() for name in names if name != path.name and path.with_name(name).exists()]
    except OSError:
        return False
    return any((other.st_dev, other.st_ino) == (found.st_dev, found.st_ino) for other in others)


class StampCheck:
    """What a sync must look at, told in the core: the store's file stamps are held there
    (:class:`~memsift._core.FileStamps`) and the scan and the compare run with the GIL released. A search running
    beside the check is not slowed by it: over 584k files the Python compare held the GIL for seconds, and each
    return of a search from the core waited its turn (keyword legs of 0.6-2 s on 2 cores). A sync given the diff
    then visits only those files.

    The stamps are read whole once; after that only those of the paths the store's change log names since, and of
    the paths the last diff named (a sync may restamp them without a new generation), are read again."""

    BATCH = 20_000
    """Stamps handed to the core at a time when they are read: each hand-over holds the GIL only briefly."""

    def __init__(self, saved: Path | None = None) -> None:
        self._saved_path = saved
        """Where the stamps are kept between processes (derived, like the keyword index), if anywhere."""
        self._saved_generation: int | None = None
        self._stamps: FileStamps | None = None
        self._generation = 0
        self._recheck: set[str] = set()
        """Paths diffs named since the stamps were last read, whose stamps the next check reads again."""
        self._recheck_lock = threading.Lock()  # held briefly: a check of named files must not wait for a scan
        self._lock = threading.Lock()  # one check of every file at a time: it updates the stamps another one reads

    def saved_paths(self) -> tuple[PathCatalogue, int] | None:
        """The indexed paths of the stamps the last process saved, and the store generation they reflect; ``None``
        without such a copy."""
        return None if self._saved_path is None else PathCatalogue.of_saved_stamps(self._saved_path)

    def diff(
        self,
        store: Store,
        workspace: str | os.PathLike[str],
        scope: MemoryScope,
        media_suffixes: Iterable[str] = (),
        named: Sequence[Path] | None = None,
    ) -> FileDiff | None:
        """The workspace against the store's stamps; ``None`` for a scope with patterns (filtered in Python: the
        caller compares every file). ``named``: only these files (absolute, as the scan reaches them), which a
        watcher's events named; ``None`` also when one of them cannot be judged alone."""
        if any(scope.patterns):
            return None
        if named is not None:
            return self._named(store, workspace, scope, media_suffixes, named)
        with self._lock:
            stamps, skipped = self._refresh(store)
            changed, gone = stamps.changes(*scan_arguments(workspace, scope, media_suffixes), _RACY_S, _RACY_FINE_S)
            self._remember({path for path, *_ in changed} | set(gone))
            saved, generation = self._saved_path, self._generation
            if saved is not None and self._saved_generation != generation and stamps.save(saved, generation):
                self._saved_generation = generation  # the next process starts from them
            return FileDiff(changed, gone, len(stamps) - skipped)

    def check(
        self,
        store: Store,
        workspace: str | os.PathLike[str],
        scope: MemoryScope,
        media_suffixes: Iterable[str] = (),
        listing: Listing | None = None,
        named: Sequence[Path] | None = None,
    ) -> tuple[SyncReport | None, FileDiff | None, bool]:
        """A sync's check: the report of a sync with nothing to do (else ``None``), the diff the sync takes
        (``None``: it compares every file itself), and whether every file was looked at. ``listing``: a scan made
        already (compared in Python); ``named``: the files a watcher's events named, looked at alone when they can
        be."""
        diff = (
            self.diff(store, workspace, scope, media_suffixes, named) if listing is None and named is not None else None
        )
        every_file = diff is None
        if listing is None and diff is None:
            diff = self.diff(store, workspace, scope, media_suffixes)
        if diff is None:
            listing = scan_workspace(workspace, scope, media_suffixes) if listing is None else listing
            return unchanged_report(store, listing, time.perf_counter()), None, every_file
        report = SyncReport(unchanged=diff.stamped, generation=store.generation) if diff.empty else None
        return report, diff, every_file

    def _remember(self, paths: set[str]) -> None:
        """Read the stamps of ``paths`` again at the next check: a sync may restamp them without a new generation."""
        with self._recheck_lock:
            self._recheck |= paths

    def _named(
        self,
        store: Store,
        workspace: str | os.PathLike[str],
        scope: MemoryScope,
        media_suffixes: Iterable[str],
        named: Sequence[Path],
    ) -> FileDiff | None:
        """The diff of the ``named`` files alone, as the scan would list them (``FileDiff.stamped``: how many of
        them are indexed), or ``None`` when one cannot be judged without it: a symlink on its way (the scan follows
        none) or a file with other hard links (the scan keeps one path per file)."""
        root, extra_roots, media, root_files = scan_arguments(workspace, scope, media_suffixes)
        bases = [(Path(root) / 'memory', ()), *((Path(extra), tuple(media)) for extra in extra_roots)]
        listed: dict[str, tuple[str, str, float, int]] = {}
        missing: list[str] = []
        for path in (Path(os.path.abspath(p)) for p in named):
            rel = os.path.relpath(path, root).replace(os.sep, '/')
            if path.parent == Path(root) and path.name in root_files:
                if _same_file_as_another(path, root_files):
                    return None  # MEMORY.md and memory.md on a case-insensitive disk: the scan keeps the first
                on_the_way = []
            else:
                base = next(((b, s) for b, s in bases if b == path or b in path.parents), None)
                if base is None or not (path.name.endswith('.md') or path.suffix.lower() in base[1]):
                    continue  # not memory: the scan's rule (``*.md`` as written, media suffixes in any case)
                inside = path.relative_to(base[0]).parts[:-1]
                if any(part in IGNORED_DIRS for part in inside):
                    continue
                on_the_way = [base[0], *(base[0].joinpath(*inside[:n]) for n in range(1, len(inside) + 1))]
            try:
                if any(folder.is_symlink() for folder in on_the_way):
                    return None
                found = path.lstat()
            except FileNotFoundError:
                missing.append(rel)
                continue
            except OSError:
                return None
            if not stat.S_ISREG(found.st_mode):
                missing.append(rel)  # a folder or a link now: not a memory file the scan lists
            elif found.st_nlink > 1:
                return None
            else:
                listed[rel] = (rel, str(path), found.st_mtime, found.st_size)
        stamps = {row[0]: row[1:] for row in store.file_stamp_rows([*listed, *missing])}
        skipped = store.skipped()
        changed = [entry for rel, entry in listed.items() if rel not in stamps or not _stamp_unchanged(
            stamps[rel], entry[2], entry[3])]  # fmt: skip
        gone = sorted(rel for rel in missing if rel in stamps or rel in skipped)
        self._remember({*listed, *missing})
        return FileDiff(changed, gone, len(stamps))

    def _refresh(self, store: Store) -> tuple[FileStamps, int]:
        """The stamps as the store holds them now, and how many of them are skipped files'. A skipped file has no
        stamp: it gets one that never matches, so it is tried again while it is there (as a full sync does) and its
        reason forgotten once it is gone."""
        with self._recheck_lock:
            recheck, self._recheck = self._recheck, set()
        stamps, loaded = self._stamps, False
        if stamps is None and self._saved_path is not None and (saved := FileStamps.load(self._saved_path)):
            (stamps, self._generation), loaded = saved, True  # another process's copy: brought up to date below
            self._saved_generation = self._generation
        moved = None if stamps is None else store.paths_since(self._generation)
        if moved is not None and len(moved[1]) + len(moved[2]) + len(recheck) > self.BATCH:
            moved = None  # a bulk change: reading every stamp at once is cheaper than looking each one up
        if stamps is None or moved is None:
            generation, loaded = store.generation, False  # taken first: a write while reading is read again
            stamps = self._read_all(store)
        else:
            generation, present, gone = moved
            paths = recheck | set(present) | set(gone)
            if paths:
                rows = store.file_stamp_rows(paths)
                stamps.remove(sorted(paths - {row[0] for row in rows}))
                stamps.extend(rows)
        skipped = store.skipped()
        stamps.extend([(path, math.nan, 0, 0.0) for path in skipped])
        if loaded and len(stamps) - len(skipped) != store.file_count():  # a saved copy that is not this store's
            generation = store.generation
            stamps = self._read_all(store)
            stamps.extend([(path, math.nan, 0, 0.0) for path in skipped])
        self._stamps, self._generation = stamps, generation
        return stamps, len(skipped)

    def _read_all(self, store: Store) -> FileStamps:
        """Every stamp the store holds (take its generation before: a write meanwhile is then read again)."""
        stamps, rows = FileStamps(), store.file_stamp_rows()
        for start in range(0, len(rows), self.BATCH):
            stamps.extend(rows[start : start + self.BATCH])
        return stamps


def workspace_changed(
    store: Store,
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] | MemoryScope = (),
    media_suffixes: Iterable[str] = (),
) -> bool:
    """Whether a sync would find work: a memory file added, removed, or with a new size or mtime (stat only)."""
    stamps = store.file_stamps()
    listed = 0
    for path, _, mtime, size in scan_workspace(workspace, extra_paths, media_suffixes):
        stamp = stamps.get(path)
        if stamp is None:
            return path not in store.skipped()
        listed += 1
        if stamp[:2] != (mtime, size):
            return True
    return listed != len(stamps)


def _partial(diff: FileDiff) -> bool:
    """Whether a sync visits only the diff's files: not when they are many (a first index, a bulk import), where
    reading every record at once is cheaper than looking each one up."""
    return len(diff.changed) + len(diff.gone) <= _PARTIAL_MAX + diff.stamped // 4


def sync_workspace(
    store: Store,
    index: Bm25Index,
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] | MemoryScope = (),
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
    per_entry_files: Collection[str] = (),
    annotations: bool = False,
    diff: FileDiff | None = None,
) -> SyncReport:
    """Bring ``store`` and ``index`` (and ``vectors``) up to date with the memory files of ``workspace``.

    Files are compared by the sha256 of their text (a file whose size and mtime are unchanged since well before
    it was indexed is not even read); changed files are re-chunked, vanished files are removed, unreadable ones
    are recorded with the reason. ``force`` re-chunks every file (after a chunking or identity change). With an
    ``embedder``, each new chunk's vector is stored with it and added to ``vectors``. Files with
    ``media_suffixes`` in the extra paths become one labelled chunk each, embedded with their bytes. ``documents``
    are indexed like files, their text coming from ``read`` (session transcripts). ``per_entry_files`` (paths such as
    ``MEMORY.md``) are chunked one entry at a time with their ``<!-- importance: N -->``; with ``annotations``, memory
    files' annotation comments are left out of the chunk text (OpenClaw 2.x; ``memsift._core.chunk_memory``).
    ``diff``: what a :class:`StampCheck` of this workspace found; unless it is large, only its files are visited.
    """
    started = time.perf_counter()
    report = SyncReport(index_rebuilt=ensure_index_current(store, index))
    media = frozenset(media_suffixes)
    documents = list(documents)
    known: dict[str, FileRecord] | None = None
    if diff is not None and not force and not report.index_rebuilt and not documents and _partial(diff):
        if diff.empty:
            report.unchanged, report.generation = diff.stamped, store.generation
            report.seconds = time.perf_counter() - started
            return report
        entries = [MemoryFile(path, abs_path, mtime, size) for path, abs_path, mtime, size in diff.changed]
        known = store.files_of([entry.path for entry in entries] + diff.gone)  # read under the writer lock
        report.unchanged = max(0, diff.stamped - len(known))  # the files the check found as indexed
    else:
        files = scan_workspace(workspace, extra_paths, media)
        if not force and not report.index_rebuilt:
            unchanged = unchanged_report(store, files + [(d.path, '', d.mtime, d.size) for d in documents], started)
            if unchanged is not None:
                return unchanged
        entries = [MemoryFile(path, abs_path, mtime, size) for path, abs_path, mtime, size in files] + documents
    chunking = (tokens, overlap, max_file_bytes, media_max_bytes)
    run = _SyncRun(
        store, index, report, vectors=vectors, embedder=embedder, force=force, media=media, chunking=chunking
    )
    run.known = store.files() if known is None else known
    run.per_entry, run.annotations = frozenset(per_entry_files), annotations
    run.run(entries, progress)
    report.generation = store.generation
    report.seconds = time.perf_counter() - started
    return report


_Chunk = tuple[int, int, str, str, int | None]
"""``(start_line, end_line, text, hash, importance)``."""
_Change = tuple[MemoryFile, FileRecord | None, str, list[_Chunk], MediaInput | None]
"""A changed file waiting to be written: its entry, its previous record, its new hash, chunks and media item."""


class _SyncRun:
    """One :func:`sync_workspace` pass over the workspace's entries: what it has read but not yet written, the
    vectors it has not yet added, and its report."""

    def __init__(
        self,
        store: Store,
        index: Bm25Index,
        report: SyncReport,
        *,
        vectors: VectorStore | None,
        embedder: Embedder | None,
        force: bool,
        media: frozenset[str],
        chunking: tuple[int, int, int, int],
    ) -> None:
        self.store, self.index, self.report, self.vectors, self.embedder = store, index, report, vectors, embedder
        self.force, self.media = force, media
        self.per_entry: frozenset[str] = frozenset()
        """Files chunked one entry at a time (OpenClaw 2.x's ``MEMORY.md`` / ``USER.md``)."""
        self.annotations = False
        """Leave ``<!-- importance / trigger / project: … -->`` out of memory files' chunk text (OpenClaw 2.x)."""
        self.chunking = chunking
        """``(tokens, overlap, max_file_bytes, media_max_bytes)``."""
        self.known: dict[str, FileRecord] = {}
        """The records of the files this run visits or removes (the caller sets them: every indexed file, or a
        diff's)."""
        self.known_skipped = store.skipped()
        # Changed files wait here until enough chunks are gathered for one embedding call (a provider or a local
        # model is far faster on one batch than on many one-chunk calls) or, keyword-only, for one store
        # transaction.
        self.changes: list[_Change] = []
        self.staged = 0
        """Chunks in :attr:`changes`."""
        self.pending: list[tuple[list[int], npt.NDArray[np.float32]]] = []
        """Vectors written to the store, not yet added to :attr:`vectors`."""
        self.read_at = time.time()
        """When this run started reading (before any file's text): the stamp a file unchanged since gets."""
        self.touched: list[tuple[str, float, int]] = []
        """``(path, mtime, size)`` of files read again whose text had not changed: restamped together."""
        # Files whose old chunks the store no longer holds while the BM25 index still points at them: until the
        # next commit, searches (in any process) cannot find those files at all, so that commit comes at once.
        self.replaced: list[str] = []

    def run(self, entries: list[MemoryFile], progress: Progress | None) -> None:
        store, index = self.store, self.index
        seen: set[str] = set()
        last_commit = time.monotonic()
        prepared: dict[str, tuple[str, list[_Chunk]]] = {}
        try:
            for done, entry in enumerate(entries, 1):
                seen.add(entry.path)
                if (done - 1) % _READ_BLOCK == 0:
                    prepared = self.prepare(entries[done - 1 : done - 1 + _READ_BLOCK])
                self.sync_file(entry, prepared.get(entry.path))
                if progress is not None:
                    progress(done, len(entries), entry.path)
                due = self.replaced or time.monotonic() - last_commit > _COMMIT_EVERY_S
                if due and index.generation != store.generation:
                    self.flush_vectors()
                    index.commit(generation=store.generation, compact=False)
                    last_commit = time.monotonic()
                    self.replaced.clear()
            self.write_changes()
            self.remove_vanished(seen)
            if self.touched:
                store.touch_files(self.touched, self.read_at)
        finally:
            # Whatever was written to the store (even before an error) becomes searchable.
            self.flush_vectors()
            if index.generation != store.generation:
                # Merging into one segment costs time proportional to the whole index: worth it after bulk changes,
                # not after a one-note edit (tantivy's merge policy tidies small segments in the background).
                index.commit(generation=store.generation, compact=self.report.chunks_written >= _COMPACT_AFTER_CHUNKS)

    def needs_read(self, entry: MemoryFile) -> bool:
        previous = self.known.get(entry.path)
        return self.force or previous is None or not _stat_unchanged(previous, entry)

    def is_markdown(self, entry: MemoryFile) -> bool:
        return entry.read is None and os.path.splitext(entry.path)[1].lower() not in self.media

    def prepare(self, block: Sequence[MemoryFile]) -> dict[str, tuple[str, list[_Chunk]]]:
        """Read, hash and chunk the block's changed Markdown files at once, in parallel in Rust."""
        tokens, overlap, max_file_bytes, _ = self.chunking
        wanted = [entry for entry in block if self.is_markdown(entry) and self.needs_read(entry)]
        per_entry = [entry.path in self.per_entry for entry in wanted]
        found = prepare_files(
            [str(e.abs_path) for e in wanted], max_file_bytes, tokens, overlap, per_entry, self.annotations
        )
        return {entry.path: result for entry, result in zip(wanted, found) if result is not None}

    def sync_file(self, entry: MemoryFile, prepared: tuple[str, list[_Chunk]] | None) -> None:
        """Stage ``entry``'s new chunks if its text changed (``prepared``: already read and chunked)."""
        report = self.report
        if not self.needs_read(entry):
            report.unchanged += 1
            return
        report.read += 1
        tokens, overlap, max_file_bytes, media_max_bytes = self.chunking
        item: MediaInput | None = None
        line_map: tuple[int, ...] = ()
        chunks: list[_Chunk] | None = None
        try:
            if prepared is not None and self.is_markdown(entry):
                digest, chunks = prepared
            elif entry.read is not None:
                text, line_map = entry.read()
                digest = sha256_hex(text)
            elif Path(entry.path).suffix.lower() in self.media:
                item = read_media_file(Path(entry.abs_path), entry.path, media_max_bytes)
                text, digest = item.label, item.sha256
            else:
                text = read_memory_file(Path(entry.abs_path), max_file_bytes)
                digest = sha256_hex(text)
        except SkippedFile as skipped:
            self.skip(entry, skipped.reason)
            return
        previous = self.known.get(entry.path)
        if previous is not None and previous.hash == digest and not self.force:
            report.unchanged += 1
            # Touched, or read again only because it was racy: a new stamp spares the next sync the read (once
            # the read is no longer within the file's mtime tick).
            restamp = (previous.mtime, previous.size) != (entry.mtime, entry.size) or _racy(
                previous.mtime, previous.indexed_at
            )
            if restamp and not _racy(entry.mtime, self.read_at):
                self.touched.append((entry.path, entry.mtime, entry.size))
            return
        if item is not None:
            chunks = [(1, 1, item.label, digest, None)]  # one chunk per media file (OpenClaw)
        elif chunks is None and entry.read is not None:  # a transcript: its lines name the source's (JSONL) lines
            chunks = [
                (line_map[c.start_line - 1], line_map[c.end_line - 1], c.text, c.hash, None)
                for c in chunk_markdown(text, tokens, overlap)
            ]
        elif chunks is None:
            chunks = chunk_memory(text, tokens, overlap, entry.path in self.per_entry, self.annotations)
        self.changes.append((entry, previous, digest, chunks, item))
        self.staged += len(chunks)
        if self.staged >= (_WRITE_BATCH if self.embedder is None else _EMBED_BATCH):
            self.write_changes()

    def skip(self, entry: MemoryFile, reason: str) -> None:
        """Record that ``entry`` cannot be indexed, and why; its chunks go if the reason is new."""
        self.report.skipped[entry.path] = reason
        if self.known_skipped.get(entry.path) != reason:
            self.replaced.append(entry.path)
            removed = self.store.chunk_ids(entry.path)
            self.store.record_skipped(entry.path, reason)
            self.index.delete_path(entry.path)
            if self.vectors is not None:
                self.vectors.remove(removed)

    def write_changes(self) -> None:
        """Embed the staged chunks in one call, write them in one store transaction, then stage them for the BM25
        index."""
        changes, store, report = self.changes, self.store, self.report
        if not changes:
            return
        inputs: list[str | MediaInput] = []
        for _, _, _, chunks, item in changes:
            inputs.extend([item] if item is not None else [c[2] for c in chunks])
        matrix = self.embedder(inputs) if self.embedder is not None and inputs else None
        writes, offset = [], 0
        for entry, _, digest, chunks, _ in changes:
            rows = None if matrix is None else matrix[offset : offset + len(chunks)]
            offset += len(chunks)
            # The stat recorded is the listing's, taken before the text was read: an edit that lands while the
            # chunks embed gives the file a newer mtime than recorded, so the next sync reads it again.
            writes.append(FileWrite(entry.path, entry.source, digest, entry.mtime, entry.size, chunks, rows))
        old = [store.chunk_ids(entry.path) if self.vectors is not None else [] for entry, *_ in changes]
        # The store first, then the BM25 index: if the store write fails nothing is staged for these files, so the
        # final commit never makes the BM25 index disagree with the store.
        new = store.replace_files(writes)
        added_ids: list[int] = []
        added_paths: list[str] = []
        added_sources: list[str] = []
        added_texts: list[str] = []
        for (entry, previous, _, chunks, _), write, old_ids, ids in zip(changes, writes, old, new):
            self.index.delete_path(entry.path)
            added_ids += ids
            added_paths += [entry.path] * len(ids)
            added_sources += [entry.source] * len(ids)
            added_texts += [c[2] for c in chunks]
            if self.vectors is not None:
                self.vectors.remove(old_ids)
                if write.vectors is not None and len(ids):
                    self.pending.append((ids, write.vectors))
            (report.added if previous is None else report.updated).append(entry.path)
            if previous is not None:
                self.replaced.append(entry.path)
            report.chunks_written += len(ids)
        if added_ids:
            self.index.add(added_ids, added_paths, added_sources, added_texts)
        changes.clear()
        self.staged = 0

    def flush_vectors(self) -> None:
        # One add per batch: HNSW inserts run in parallel, and per-file calls would cost a round trip each.
        if self.vectors is not None and self.pending:
            import numpy as np

            self.vectors.add(
                np.fromiter((i for ids, _ in self.pending for i in ids), dtype=np.uint64),
                np.concatenate([matrix for _, matrix in self.pending]),
            )
            self.pending.clear()

    def remove_vanished(self, seen: set[str]) -> None:
        """Remove the files (and forget the skipped ones) that the workspace no longer lists."""
        for path in sorted(set(self.known) - seen):
            removed = self.store.delete_file(path)
            self.index.delete_path(path)
            if self.vectors is not None:
                self.vectors.remove(removed)
            self.report.removed.append(path)
        for path in sorted(set(self.known_skipped) - seen):
            self.store.delete_file(path)  # a skipped file that is gone: forget its reason too
