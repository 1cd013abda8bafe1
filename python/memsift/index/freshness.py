"""Keeping one agent's derived indexes in step with its workspace and with other writers.

:class:`Freshness` owns everything that decides *when* the index is written: the writer lock (one syncing process
at a time), the sync lock (one sync per process), the background sync thread, the dirty flag, catching up with what
other processes or hosts committed, the switch to a fallback embedding provider, and the file watcher. Searches ask
it to :meth:`~Freshness.prepare` before they read; ``MemoryIndex.sync`` and the watcher ask it to sync.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> search = {'store': {'path': str(ws / 'index.sqlite')}}
>>> with MemoryIndex(ws, {'agents': {'defaults': {'memorySearch': search}}}) as index:
...     index.freshness.dirty, index.sync().added, index.freshness.dirty
(True, ['MEMORY.md'], False)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._core import Bm25Index
from memsift._threads import lower_thread_priority
from memsift.config import MemoryConfig
from memsift.errors import MemsiftError, ProviderError, SearchIndexError
from memsift.index.cache import EmbeddingCache
from memsift.index.embeddings import Embeddings
from memsift.index.identity import media_suffixes
from memsift.index.sync import (
    FileDiff,
    Progress,
    StampCheck,
    SyncReport,
    ensure_index_current,
    sync_workspace,
)
from memsift.index.workspace import extra_paths, extra_roots, memory_scope
from memsift.index.writer import WriterLock
from memsift.media import MediaInput
from memsift.search.paths import Catalogue

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memsift.index.protocol import Store
    from memsift.index.session_memory import SessionMemory
    from memsift.index.watch import Watcher
    from memsift.index.workspace import ScanAhead
    from memsift.results import SnapshotState

__all__ = ['SEARCH_SYNC_BUDGET_S', 'SEARCH_SYNC_WAIT_S', 'Freshness', 'open_keyword_index']

SEARCH_SYNC_BUDGET_S = 0.2
"""How long a search waits for a background sync it started before answering from the current index, when that
sync is expected to end within it (an edit just made is then in the answer)."""
SEARCH_SYNC_WAIT_S = 0.005
"""The wait when the check is expected to take longer than :data:`QUICK_CHECK_S` (a workspace of many files: over
584k files it takes seconds, over 59k 0.2 s): the search answers from the committed index and says ``syncing`` in
``debug``."""
QUICK_CHECK_S = 0.05
"""A check expected to take at most this long is waited for, with what the sync then does (a changed note read and
embedded), up to :data:`SEARCH_SYNC_BUDGET_S`."""
CHECK_S_PER_FILE = 3e-6
"""About what the sync check costs per indexed file (a stat and a compare; 14 ms for 5,000 notes), to judge the
first sync of a process before one has been timed."""
PRUNE_LOG_EVERY_S = 3600.0
"""How often a process's syncs prune the store's removal log of entries older than it keeps."""


def open_keyword_index(db_path: str, writer: WriterLock) -> Bm25Index:
    """The tantivy index beside the store (in memory for a ``:memory:`` store); a folder from another memsift
    version, or a damaged one, is derived data and is rebuilt empty (the next sync refills it)."""
    if db_path == ':memory:':
        return Bm25Index()
    folder = Path(db_path).with_suffix('.bm25')
    if (folder / 'meta.json').is_file():
        with contextlib.suppress(SearchIndexError):
            return Bm25Index(folder)
    with writer.holding(wait=True, store=False):  # a write of this host's derived index: one process at a time
        try:
            return Bm25Index(folder)
        except SearchIndexError:
            if not (folder / 'meta.json').is_file():
                raise
            import shutil  # rarely needed: it imports the compression modules

            shutil.rmtree(folder)
            return Bm25Index(folder)


def snapshot_folder(config: MemoryConfig) -> Path | None:
    """``store.snapshots.path``, or ``None`` when snapshots are off."""
    folder = config.store.snapshots_path
    return Path(folder).expanduser() if folder else None


def no_snapshot(folder: Path | None) -> SnapshotState:
    """``status()['snapshot']`` before any snapshot was loaded, refused or published."""
    return {'path': None if folder is None else str(folder), 'loaded': None, 'refused': None, 'published': None,
            'error': None}  # fmt: skip


def start_from_snapshot(
    config: MemoryConfig, store: Store, db_path: str, vectors_path: Path | None, writer: WriterLock
) -> SnapshotState:
    """Install the newest usable snapshot (``store.snapshots.path``) where this host has no keyword index yet, so
    the first search catches up from it instead of rebuilding; what happened, for ``status()['snapshot']``."""
    folder = snapshot_folder(config)
    state = no_snapshot(folder)
    keyword = Path(db_path).with_suffix('.bm25')
    if folder is None or db_path == ':memory:' or (keyword / 'meta.json').is_file():
        return state
    from memsift.index import snapshots

    with writer.holding(wait=True, store=False):  # installing the folder is a write of this host's indexes
        if (keyword / 'meta.json').is_file():
            return state  # another process of this host built or installed it meanwhile
        snapshot, refused = snapshots.newest(folder, config.agent_id, store.identity, store.schema)
        if snapshot is not None:
            failed = snapshots.install(snapshot, keyword, vectors_path)
            if failed is None:
                state['loaded'] = snapshot.generation
            refused = failed or refused
        state['refused'] = refused
    return state


class Freshness:
    """When the index of one workspace is written, and whether a search can read it as it is.

    Args:
        config: The agent's config (``sync.*`` says when to sync, ``chunking.*`` how).
        workspace: The workspace folder.
        store: The memory store (source of truth).
        index: The keyword index derived from it.
        embeddings: The provider and vectors derived from it.
        cache: The embedding cache that syncs embed through.
        session_memory: The transcripts indexed with the notes, if session memory is on.
        writer: The cross-process writer lock of the store.
    """

    def __init__(
        self,
        config: MemoryConfig,
        workspace: Path,
        store: Store,
        index: Bm25Index,
        embeddings: Embeddings,
        cache: EmbeddingCache,
        session_memory: SessionMemory | None,
        writer: WriterLock,
        snapshot: SnapshotState | None = None,
    ) -> None:
        self.config, self.workspace, self.store, self.index = config, workspace, store, index
        self.embeddings, self.cache, self.session_memory, self.writer = embeddings, cache, session_memory, writer
        self.snapshot = snapshot or no_snapshot(snapshot_folder(config))
        """Snapshots of the derived indexes: where, which one this process started from or refused, which it
        published last (``status()['snapshot']``)."""
        self._publish_at = 0.0
        """When a sync may next publish a snapshot (``time.monotonic()``)."""
        self.sync_lock = threading.Lock()
        """Held by the sync (or catch-up, or compaction) running in this process."""
        self.sync_thread: threading.Thread | None = None
        self.sync_error: str | None = None
        """The last background or watched sync's failure, for ``status()``; cleared by the next sync."""
        self.dirty = True
        """True when the workspace may have changed since the last sync."""
        self.closed = False
        self.chunks_embedded = 0
        """Chunks this process's syncs have had embedded (from the cache or the provider), for progress displays."""
        self.watcher: Watcher | None = None
        self._thread_lock = threading.Lock()
        self._catalogue = Catalogue(-1, [])
        self._prune_log_at = 0.0
        """When a sync next prunes the store's removal log (``time.monotonic()``)."""
        self._identity_seen = store.generation
        """The store generation at which the embeddings last compared their identity with the store's."""
        self.scan_ahead: ScanAhead | None = None
        """A scan the opener started for the first sync check (the command line, which syncs at once)."""
        self.stamp_check = StampCheck(None if index.path is None else Path(index.path).with_suffix('.stamps'))
        """What the syncs' checks compare the workspace with (the store's file stamps, held in the core)."""
        self.check_s: float | None = None
        """How long this process's last sync check took (the scan and compare that tell whether there is work)."""

    def check_open(self) -> None:
        if self.closed:
            raise MemsiftError('this MemoryIndex is closed; open a new one')

    def catalogue(self) -> Catalogue:
        """The indexed paths as of the store's generation (for the path leg and the file count): the files writes
        since the last look touched, from the store's change log, else all of them (at first those the stamps the
        last process saved hold, moved along the change log, when they count as many files as the store)."""
        generation = self.store.generation
        catalogue = self._catalogue
        if catalogue.generation != generation:
            saved = self.stamp_check.saved_paths() if catalogue.generation < 0 else None
            if saved is not None:
                catalogue = Catalogue(saved[1], saved[0])  # the last process's stamps: no read of every path
            moved = self.store.paths_since(catalogue.generation) if catalogue.generation >= 0 else None
            if moved is not None:
                catalogue = catalogue.moved_to(*moved)
            if moved is None or (saved is not None and len(catalogue) != self.store.file_count()):
                catalogue = Catalogue(generation, self.store.paths())  # not this store's stamps, or none
            self._catalogue = catalogue
        return catalogue

    def switch_to_fallback(self, error: ProviderError) -> bool:
        """Use the configured fallback provider after ``error`` (the index then re-embeds); False if there is none."""
        if not self.embeddings.fall_back(error):
            return False
        self.dirty = True
        return True

    # ------------------------------------------------------------------ sync

    def sync(self, force: bool, progress: Progress | None) -> SyncReport:
        """One sync, waiting for another process's; see ``MemoryIndex.sync``."""
        self.check_open()
        report = self._sync_with_fallback(force, progress, wait=True)
        assert report is not None  # waiting for the writer lock either gets it or raises
        return report

    def _sync_with_fallback(
        self, force: bool, progress: Progress | None, *, wait: bool, named: Sequence[Path] | None = None
    ) -> SyncReport | None:
        try:
            return self._sync(force, progress, wait, named)
        except ProviderError as exc:
            if not self.switch_to_fallback(exc):
                raise
            return self._sync(force, progress, wait)  # a full reindex with the fallback provider

    def _sync(
        self, force: bool, progress: Progress | None, wait: bool, named: Sequence[Path] | None = None
    ) -> SyncReport | None:
        """One sync under the writer lock; ``None`` when another writer holds it and ``wait`` is False (that
        writer's commits reach this process's searches when they reload). ``named``: the files a watcher's events
        named, which the check looks at alone when it can."""
        identity = self.embeddings.ready()
        ahead, self.scan_ahead = self.scan_ahead, None  # the first sync's check only: a later one scans itself
        diff = None
        if not force:
            report, diff = self._check(ahead, named)
            if report is not None:
                return report
        with self.writer.holding(wait) as writing:
            if not writing:
                self.dirty = True  # the work found stays to do
                return None
            return self._sync_locked(identity, force, progress, diff)

    def _check(
        self, ahead: ScanAhead | None, named: Sequence[Path] | None = None
    ) -> tuple[SyncReport | None, FileDiff | None]:
        """Whether there is work, without the writer lock (the check writes nothing, so it need not wait for another
        process's sync): the report of a sync with nothing to do, or ``None`` and the diff the sync takes (``None``:
        the sync compares every file itself). Told from a stat scan (``ahead``'s, when it matches) and the store's
        stamps."""
        started = time.perf_counter()
        embeddings, generation = self.embeddings, self.store.generation
        if (
            self.session_memory is not None  # transcripts are read to know whether they changed
            or not embeddings.current
            or embeddings.stale(generation)
            or self.index.generation != generation
        ):
            return None, None
        suffixes, extra = media_suffixes(self.config, embeddings.provider), memory_scope(self.config)
        listing = ahead.take(self.workspace, extra, suffixes) if ahead is not None else None
        # What changes from here on, the scan sees or a later sync does (a change marks the index dirty again).
        self.dirty = False
        try:
            report, diff, every_file = self.stamp_check.check(
                self.store, self.workspace, extra, suffixes, listing, named
            )
        except BaseException:
            self.dirty = True
            raise
        seconds = time.perf_counter() - started
        if every_file:
            self.check_s = seconds  # what the next check of every file will cost
        if report is not None:
            report.seconds = seconds
        return report, diff

    def _sync_locked(
        self, identity: dict[str, Any], force: bool, progress: Progress | None, diff: FileDiff | None = None
    ) -> SyncReport:
        """One sync under the writer lock; ``diff``: what this sync's check found (it cleared the dirty flag before
        its scan, so a change marked since stays marked)."""
        with self.sync_lock:
            # Start from what the previous writer (maybe another process) left, not from a stale view of it: a
            # BM25 reader behind the store would be rebuilt in full, stale vectors would miss its changes.
            if self.index.generation != self.store.generation:
                self.index.reload()
            embeddings = self.embeddings
            if embeddings.stale(self.store.generation):
                embeddings.reload()
            provider, vectors = embeddings.provider, embeddings.vectors
            if embeddings.serving is not None and provider is not None and vectors is not None:
                self.cache.warm(provider, vectors.dims)
            if diff is None:
                self.dirty = False
            full = force or not embeddings.current
            try:
                report = sync_workspace(
                    self.store,
                    self.index,
                    self.workspace,
                    memory_scope(self.config),
                    tokens=self.config.chunking.tokens,
                    overlap=self.config.chunking.overlap,
                    force=full,
                    embedder=self._embed_chunks if provider is not None else None,
                    vectors=vectors,
                    progress=progress,
                    media_suffixes=media_suffixes(self.config, provider),
                    media_max_bytes=self.config.multimodal.max_file_bytes,
                    documents=[] if self.session_memory is None else self.session_memory.documents(full),
                    per_entry_files=self.config.profile.per_entry_files,
                    annotations=self.config.profile.importance,
                    diff=diff,
                )
                if not embeddings.current:
                    self.store.set_identity(identity)
                    self.index.commit(generation=self.store.generation)
                    embeddings.switched()
                    report.generation = self.store.generation  # recording the identity was this sync's last write
                embeddings.generation = self.store.generation
                embeddings.unsaved += report.chunks_written + len(report.removed)
                embeddings.save_if_due()
            except BaseException:
                self.dirty = True
                raise
            finally:
                self.index.release_writer()  # other processes (a watcher, the CLI) may sync this index too
            self._publish_if_due()
            self.cache.evict()
            if time.monotonic() >= self._prune_log_at:
                # The removal log keeps REMOVED_KEEP_S of history; pruned by a sync now and then, not only by compact.
                self._prune_log_at = time.monotonic() + PRUNE_LOG_EVERY_S
                self.store.prune_removed()
            self.sync_error = None
            return report

    def _publish_if_due(self) -> None:
        """After a sync (under the writer lock, no index writer open): publish the derived indexes as a snapshot
        when ``store.snapshots.path`` is set, the index is current and the last one is ``everyMinutes`` old. Best
        effort: a failure is reported in ``status()['snapshot']['error']`` and searches go on."""
        folder = snapshot_folder(self.config)
        generation = self.store.generation
        if (
            folder is None
            or self.index.path is None
            or self.index.generation != generation
            or self.snapshot['published'] == generation
            or time.monotonic() < self._publish_at
        ):
            return
        from memsift.index import snapshots

        embeddings = self.embeddings
        vectors = embeddings.vectors if embeddings.current and not embeddings.stale(generation) else None
        try:
            snapshots.publish(folder, self.config.agent_id, generation, self.store.identity, self.store.schema,
                              Path(self.index.path), vectors)  # fmt: skip
        except (OSError, MemsiftError) as exc:
            self.snapshot['error'] = f'cannot publish a snapshot in {folder}: {exc}'
            return
        self.snapshot['published'], self.snapshot['error'] = generation, None
        self._publish_at = time.monotonic() + self.config.store.snapshots_every_minutes * 60

    def _embed_chunks(self, texts: Sequence[str | MediaInput]) -> npt.NDArray[np.float32]:
        provider, vectors = self.embeddings.provider, self.embeddings.vectors
        assert provider is not None and vectors is not None
        embedded = self.cache.embed(provider, vectors.dims, texts)
        self.chunks_embedded += len(texts)
        return embedded

    def background_sync(self, wait: bool = False) -> threading.Thread:
        """Start a sync in a daemon thread unless one is running; returns the thread doing it. Unless ``wait``, the
        sync gives way to another process that is writing the index (the workspace stays marked dirty)."""
        with self._thread_lock:
            if self.sync_thread is not None and self.sync_thread.is_alive():
                return self.sync_thread

            def run() -> None:
                lower_thread_priority()
                try:
                    self.check_open()
                    self._sync_with_fallback(False, None, wait=wait)
                except Exception as exc:  # recorded for status(); the next trigger retries
                    self.sync_error = f'{type(exc).__name__}: {exc}'

            self.sync_thread = threading.Thread(target=run, name='memsift-sync', daemon=True)
            self.sync_thread.start()
            return self.sync_thread

    # ------------------------------------------------------------------ before a search

    def prepare(self, debug: dict[str, Any], wait_for_sync: bool = True) -> None:
        """Before a search: bootstrap an empty index, pick up other writers, start a sync when dirty.

        ``wait_for_sync=False`` never syncs on the query path: the bootstrap and rebuild syncs run in the background
        thread too (the bootstrap is still awaited), and otherwise the search answers from the index as it is after
        the usual short wait.
        """
        has_files = len(self.catalogue()) > 0
        thread = self.sync_thread
        syncing = thread is not None and thread.is_alive()
        # Empty as far as searches can tell: no files yet, or a first sync that has written files to the store
        # but not yet committed them to the keyword index.
        if (not has_files and self.dirty) or (syncing and (not has_files or self.index.num_docs == 0)):
            # First search on an empty index: one sync before answering (OpenClaw's bootstrap); without
            # wait_for_sync it runs in the background thread, and the caller bounds the wait (a tool deadline).
            if wait_for_sync and not syncing:
                self.sync(False, None)
            else:
                self.background_sync(wait=True).join()
            debug['bootstrapSync'] = True
            return
        catches_up = self.store.catches_up  # a shared store's index is rebuilt by catching up, below
        if (
            not catches_up
            and wait_for_sync
            and self.index.generation is None
            and has_files
            and not self.sync_lock.locked()
        ):
            self.sync(False, None)  # the BM25 folder was missing or damaged: rebuild it before answering from it
            debug['indexRebuilt'] = True
            return
        generation = self.store.generation
        if self.index.generation != generation:
            self.index.reload()  # another process (a watcher, the CLI) committed, or this one's sync is underway
            if self.index.generation != generation and catches_up:
                self.catch_up()  # another host wrote the shared store: apply its changes to this host's index
            elif not self.sync_lock.locked() and self.index.generation != generation:
                self.dirty = True  # the store is ahead of its index (no sync here is writing it): a sync rebuilds it
        if generation != self._identity_seen and not self.sync_lock.locked():
            self._identity_seen = generation
            self.embeddings.adopt()  # another process may have finished embedding the index with this provider
        if self.embeddings.stale(generation) and not self.sync_lock.locked():
            self.embeddings.reload()  # another process wrote
        if not self.dirty and self.session_memory is not None and self.session_memory.due():
            self.dirty = True
        if self.dirty and self.config.sync.on_search:
            started = time.perf_counter()
            thread = self.background_sync()
            thread.join(self._sync_wait(has_files))
            debug['syncWaitMs'] = round((time.perf_counter() - started) * 1000, 3)
        thread = self.sync_thread
        if thread is not None and thread.is_alive():
            debug['syncing'] = True  # the answer is the committed index's; the sync's changes come after

    def _sync_wait(self, has_files: bool) -> float:
        """How long a search waits for the sync it started: :data:`SEARCH_SYNC_BUDGET_S` when its check is expected
        to be quick (the last one was, or this workspace is small enough), else :data:`SEARCH_SYNC_WAIT_S`."""
        expected = self.check_s
        if expected is None:
            expected = len(self.catalogue()) * CHECK_S_PER_FILE if has_files else 0.0
        return SEARCH_SYNC_BUDGET_S if expected <= QUICK_CHECK_S else SEARCH_SYNC_WAIT_S

    def catch_up(self) -> None:
        """Bring this host's keyword index to a shared store's generation (the changes other hosts made, or a
        rebuild), unless a sync or another catch-up here is already writing it: searches then answer from the index
        as it is and the next one catches up."""
        if not self.sync_lock.acquire(blocking=False):
            return
        try:
            with self.writer.holding(wait=False, store=False) as writing:
                if writing:
                    try:
                        ensure_index_current(self.store, self.index)
                    finally:
                        self.index.release_writer()
        finally:
            self.sync_lock.release()

    def refresh_after_writer(self) -> None:
        """Take a writer's changes that removed chunks a ranking picked (it is then ranked again)."""
        if self.store.catches_up:
            self.catch_up()  # another host removed some of them: take its changes
        else:
            self.index.reload()

    # ------------------------------------------------------------------ watching

    def start_watching(self) -> None:
        """Sync when memory files change and every ``sync.intervalMinutes``; see ``MemoryIndex.start_watching``."""
        if self.watcher is None:
            from memsift.index.watch import Watcher  # here: watchdog is only needed by watching processes

            sync = self.config.sync
            self.watcher = Watcher(
                self.workspace,
                [self.workspace / 'memory', *extra_roots(self.workspace, extra_paths(self.config))],
                changed=self.mark_dirty,
                sync=self._watched_sync,
                debounce_s=sync.watch_debounce_ms / 1000,
                interval_s=sync.interval_minutes * 60,
                watch=sync.watch,
            )
            self.watcher.start()

    def mark_dirty(self) -> None:
        self.dirty = True

    def _watched_sync(self, named: list[Path] | None) -> None:
        """A sync the watcher asked for (``named``: the files its events named, or ``None``: check every file); a
        failure is reported by ``status()`` and the next change retries."""
        try:
            self.check_open()
            self._sync_with_fallback(False, None, wait=True, named=named)
        except Exception as exc:
            self.sync_error = f'{type(exc).__name__}: {exc}'

    def stop_watching(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    @contextlib.contextmanager
    def closing(self) -> Iterator[None]:
        """Stop watching, wait for a running sync, and keep any other from starting while the caller closes the
        store; the vectors are saved first if they are current (the next process loads the graph instead of
        building it)."""
        self.stop_watching()
        thread = self.sync_thread
        if thread is not None:
            thread.join()
        with self.sync_lock:
            self.closed = True
            if not self.embeddings.stale(self.store.generation):
                self.embeddings.save_if_due(closing=True)
            yield
