"""Watch an agent's memory files and call back when they change (``MemoryIndex.start_watching`` uses it).

Like OpenClaw's chokidar watcher (when ``sync.watch`` is on, the default): the workspace root (for
``MEMORY.md``/``memory.md``), ``memory/`` and the extra paths are watched with watchdog; events on Markdown files
restart a ``sync.watchDebounceMs`` timer (1.5 s), and when it fires an incremental sync re-reads only the files
whose size or mtime moved. With ``sync.intervalMinutes`` set, a sync also runs on that period.

When the operating system has no watches or file handles left (Linux inotify limits, EMFILE/ENFILE), the watcher
falls back to polling, a sync every ``POLL_S`` seconds (its check is the core's stat scan), and says so (``mode``,
``fallback_reason``; the index reports both in ``status()['watch']``) instead of failing.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memsift._threads import lower_thread_priority
from memsift.index.workspace import IGNORED_DIRS

__all__ = ['MAX_EVENT_PATHS', 'POLL_S', 'Watcher']

POLL_S = 2.0
"""How often the polling fallback syncs (a stat per file; chokidar's default is 0.1-1 s)."""
MAX_EVENT_PATHS = 1000
"""Files named by events that a sync checks alone; more (a bulk copy), and it checks every file."""
_OUT_OF_WATCHES = {errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.ENOMEM}
"""inotify's answers when the user's watches (ENOSPC) or instances/handles (EMFILE, ENFILE) are used up."""


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ('opened', 'closed_no_write'):
            return
        paths = [Path(str(p)) for p in (event.src_path, getattr(event, 'dest_path', '')) if p]
        relevant = [p for p in paths if self.watcher.relevant(p, event.is_directory)]
        if not relevant:
            return
        if not event.is_directory:
            self.watcher.changed(relevant)
        elif event.event_type == 'modified':
            self.watcher.changed([])  # a folder's listing moved: its files' own events name them
        else:
            self.watcher.changed(None)  # a folder created, moved or deleted: its files are not named one by one


class Watcher:
    """Watches a workspace's memory files: ``changed`` at once on each relevant event, ``sync`` after
    ``debounce_s`` of quiet (and every ``interval_s`` when above 0). ``watch=False`` keeps only the period.

    Args:
        root: The workspace (``MEMORY.md`` / ``memory.md`` live there).
        trees: ``memory/`` and the extra paths (absolute): folders watched recursively, or single files.
        changed: Called on every relevant event (the index marks itself dirty).
        sync: Runs a sync; it reports its own errors (the next change retries). It is given the files the events
            since the last one named (as the scan names them: under each tree as given, not as resolved), or
            ``None`` when they cannot tell (a folder event, many files, a period, polling): then it checks every file.
    """

    def __init__(
        self,
        root: Path,
        trees: Sequence[Path],
        *,
        changed: Callable[[], None],
        sync: Callable[[list[Path] | None], None],
        debounce_s: float,
        interval_s: float = 0.0,
        watch: bool = True,
    ) -> None:
        self.root = root
        self.delay = debounce_s
        self.interval = interval_s
        self.watch = watch
        self._changed = changed
        self._sync = sync
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._stopped = threading.Event()
        self._observer: Any = None
        self._watched: set[Path] = set()
        self._trees = [tree.resolve() for tree in trees]
        self._given = list(trees)
        """The trees as given, which the scan walks (``_trees`` holds them resolved, as events name files)."""
        self._paths: set[Path] | None = set()
        """The files the events since the last sync named (scan form); ``None``: a sync must check every file."""
        self._interval_thread: threading.Thread | None = None
        self._poll_thread: threading.Thread | None = None
        self.syncs = 0
        self.mode = 'events' if watch else 'off'
        """``events`` (OS notifications), ``polling`` (the fallback), or ``off`` (``sync.watch`` is false)."""
        self.fallback_reason: str | None = None

    def relevant(self, path: Path, is_directory: bool) -> bool:
        """A change to a Markdown file (or a folder) under a memory root, outside ignored folders."""
        if any(part in IGNORED_DIRS for part in path.parts):
            return False
        if path.parent == self.root and path.name in ('MEMORY.md', 'memory.md'):
            return True
        if not any(path == tree or tree in path.parents for tree in self._trees):
            return False
        return is_directory or path.suffix.lower() == '.md'

    def _schedule(self) -> None:
        """Watch the root and every memory tree that exists now (``memory/`` may appear later)."""
        targets = [(self.root, False)]
        for tree in self._trees:
            if tree.is_dir():
                targets.append((tree, True))
            elif tree.parent.is_dir():
                targets.append((tree.parent, False))
        for path, recursive in targets:
            if path not in self._watched:
                try:
                    self._observer.schedule(_Handler(self), str(path), recursive=recursive)
                except OSError as exc:
                    if self.mode != 'events' or exc.errno not in _OUT_OF_WATCHES:
                        raise
                    self._poll_instead(exc)  # schedules every target on the polling observer
                    return
                self._watched.add(path)

    def _poll_instead(self, exc: OSError) -> None:
        """The OS ran out of watches: stop the event observer and sync every :data:`POLL_S` instead. A sync's check
        is the core's stat scan (GIL-free, at low priority), where a polling observer would list and stat every file
        in Python: over 584k files, seconds of each interval with the GIL held."""
        failed, self._observer = self._observer, None
        self.mode, self.fallback_reason = 'polling', f'{type(exc).__name__}: {exc} (polling every {POLL_S:g} s)'
        self._watched.clear()
        if failed is not None:
            failed.unschedule_all()
            if failed.is_alive():
                failed.stop()
        self._poll_thread = threading.Thread(target=self._poll, name='memsift-poll', daemon=True)
        self._poll_thread.start()

    def _poll(self) -> None:
        """Sync every :data:`POLL_S`, or twice as long as the last sync took (a check over many files takes
        seconds: the machine is never busy polling more than half the time)."""
        lower_thread_priority()
        wait = POLL_S
        while not self._stopped.wait(wait):
            started = time.monotonic()
            self._changed()
            self._fire(every_file=True)
            wait = max(POLL_S, 2 * (time.monotonic() - started))

    def start(self) -> None:
        if self.watch:
            try:
                self._observer = Observer()  # inotify's observer opens its instance here
                self._observer.daemon = True
                self._schedule()
                if self.mode == 'events' and self._observer is not None:
                    self._observer.start()
            except OSError as exc:
                if exc.errno not in _OUT_OF_WATCHES:
                    raise
                self._poll_instead(exc)
        if self.interval > 0:
            self._interval_thread = threading.Thread(target=self._every_interval, name='memsift-interval', daemon=True)
            self._interval_thread.start()

    def changed(self, paths: Sequence[Path] | None = None) -> None:
        """A relevant event on ``paths`` (``None``: on a folder, or unknown): tell the index and (re)start the
        debounce timer."""
        self._changed()
        with self._lock:
            if self._stopped.is_set():
                return
            if paths is None or self._paths is None:
                self._paths = None
            else:
                self._paths.update(self._scan_form(path) for path in paths)
                if len(self._paths) > MAX_EVENT_PATHS:
                    self._paths = None
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _scan_form(self, path: Path) -> Path:
        """``path`` as the scan names it: under the tree as given, where an event names it under the resolved one."""
        for given, resolved in zip(self._given, self._trees, strict=True):
            if path == resolved or resolved in path.parents:
                return given / path.relative_to(resolved)
        return path

    def _fire(self, every_file: bool = False) -> None:
        if self._stopped.is_set():
            return
        with self._lock:
            paths, self._paths = self._paths, set()
        self._sync(None if every_file or paths is None else sorted(paths))
        self.syncs += 1
        with self._lock:
            if self._observer is not None and not self._stopped.is_set():
                self._schedule()

    def _every_interval(self) -> None:
        while not self._stopped.wait(self.interval):
            self._changed()
            self._fire(every_file=True)

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
