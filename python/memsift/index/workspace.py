"""Which files of an agent workspace are memory, and reading them safely.

Follows OpenClaw's ``listMemoryFiles``: ``MEMORY.md``, ``memory.md``, every ``*.md`` below ``memory/`` and the
configured extra paths (files, or folders scanned recursively). Symlinks are never followed (so a symlink loop
cannot hang a scan), files reached twice are kept once (by real path), and tool folders such as ``.git`` or
``node_modules`` are skipped. Reading refuses binary, non-UTF-8 and oversized files with a reason that ``status``
can show, instead of failing the whole sync.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = (root / 'MEMORY.md').write_text('# Facts')
>>> [f.path for f in list_memory_files(root)]
['MEMORY.md']
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from memsift._core import scan_memory_files
from memsift._files import read_bounded
from memsift._record import field, record
from memsift.config import ExtraPath, MemoryConfig
from memsift.errors import SkippedFile

__all__ = [
    'DEFAULT_MAX_FILE_BYTES',
    'IGNORED_DIRS',
    'MemoryFile',
    'MemoryScope',
    'ScanAhead',
    'extra_path_pattern',
    'extra_paths',
    'extra_roots',
    'is_inside',
    'list_memory_files',
    'memory_scope',
    'read_memory_file',
    'scan_arguments',
    'scan_workspace',
]

IGNORED_DIRS = frozenset(
    {'.git', '.hg', '.svn', 'node_modules', '.venv', 'venv', '__pycache__', '.mypy_cache', '.pytest_cache', '.tox'}
)
"""Folder names never scanned: version control, dependencies and caches, not notes (``src/workspace.rs`` holds
the same list for the scan)."""

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
"""Larger Markdown files are skipped (and reported): they are almost certainly not hand-written memory."""

_SNIFF_BYTES = 8192


@record
class MemoryFile:
    """One memory file: ``path`` relative to the workspace with ``/`` separators (``../`` for outside extra paths)."""

    path: str
    abs_path: str | os.PathLike[str]
    """Where to read it: the path it was found at."""
    mtime: float = 0.0
    size: int = 0
    source: str = 'memory'
    read: Callable[[], tuple[str, tuple[int, ...]]] | None = field(default=None, compare=False)
    """A document that is not a file (a session transcript): returns its text and, per text line, the source line
    the chunk line numbers map to. ``mtime`` and ``size`` then describe the source (message count, bytes)."""


def extra_roots(workspace: Path, extra_paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The configured extra paths as absolute paths (``~`` expanded, relative ones under ``workspace``)."""
    roots = []
    for extra in extra_paths:
        target = Path(os.path.expanduser(os.fspath(extra)))
        roots.append(target if target.is_absolute() else workspace / target)
    return roots


def is_inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` lies under one of ``roots`` with no symlink on the way: each component below the root is
    the real folder it names, and the file itself is not a link (so swapping ``memory/`` for a link to a folder
    outside the workspace does not make its files readable as memory).

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / 'notes').mkdir(); (root / 'link').symlink_to(root / 'notes')
    >>> is_inside(root / 'notes' / 'a.md', [root]), is_inside(root / 'link' / 'a.md', [root])
    (True, False)
    """
    lexical = os.path.normpath(os.path.abspath(path))
    if os.path.islink(lexical):
        return False
    for root in roots:
        base = os.path.normpath(os.path.abspath(root))
        if lexical == base or lexical.startswith(base.rstrip(os.sep) + os.sep):
            expected = os.path.normpath(os.path.join(os.path.realpath(base), os.path.relpath(lexical, base)))
            return os.path.realpath(lexical) == expected
    return False


@record
class MemoryScope:
    """What of a workspace is memory besides ``memory/``: the root files, the extra paths, and the ``pattern`` an
    extra path's files must match (``extraPaths: [{path, pattern}]``), from :func:`memory_scope`."""

    extra: tuple[str, ...] = ()
    patterns: tuple[str | None, ...] = ()
    """Each extra path's glob (``None``: every file under it counts): a file counts when the glob matches its path
    relative to the extra path."""
    root_files: tuple[str, ...] = ('MEMORY.md', 'memory.md')


def memory_scope(config: MemoryConfig) -> MemoryScope:
    """The config's scope: its profile's root files, its extra paths and their patterns (the config refused any
    pattern that could reach outside its extra path)."""
    patterns: list[str | None] = []
    for entry in config.extra_paths:
        pattern = entry.pattern.strip() if isinstance(entry, ExtraPath) and entry.pattern else None
        patterns.append(pattern or None)
    return MemoryScope(tuple(extra_paths(config)), tuple(patterns), tuple(config.profile.root_files))


@functools.lru_cache(maxsize=64)
def extra_path_pattern(pattern: str) -> re.Pattern[str]:
    """An ``extraPaths`` pattern as OpenClaw matches it (Node's ``path.posix.matchesGlob``) against a file's path
    relative to its extra path: ``**`` any folders (none too), ``*`` and ``?`` within a name, ``[ab]``, ``{a,b}``;
    case-sensitive; a wildcard never matches a name's leading dot.

    >>> pattern = extra_path_pattern('runbooks/**/*.md')
    >>> [bool(pattern.fullmatch(p)) for p in ('runbooks/a.md', 'runbooks/x/b.md', 'runbooks/.x/c.md', 'notes/a.md')]
    [True, True, False, False]
    """
    clean = pattern.strip().replace('\\', '/')
    return re.compile('|'.join(f'(?:{_glob_regex(alternative)})' for alternative in _braces(clean)))


def _braces(pattern: str) -> list[str]:
    """``a{b,c}d`` as ``['abd', 'acd']`` (nested and several groups too)."""
    match = re.search(r'\{([^{}]*)\}', pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [expanded for option in match[1].split(',') for expanded in _braces(head + option + tail)]


def _glob_regex(pattern: str) -> str:
    segments = pattern.split('/')
    out = ''
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == '**':
            out += '.*' if last else '(?:(?!\\.)[^/]*/)*'  # any folders, none of them hidden
            continue
        out += _glob_segment(segment) + ('' if last else '/')
    return out


def _glob_segment(segment: str) -> str:
    regex = '(?!\\.)' if segment[:1] in ('*', '?', '[') else ''  # wildcards never match a leading dot
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == '*':
            regex += '[^/]*'
        elif char == '?':
            regex += '[^/]'
        elif char == '[' and (end := segment.find(']', i + 2)) != -1:
            body = segment[i + 1 : end]
            negate = body[:1] in ('!', '^')
            body = body[1:] if negate else body
            regex += '[' + ('^' if negate else '') + body.replace('\\', '\\\\') + ']'
            i = end
        else:
            regex += re.escape(char)
        i += 1
    return regex


def list_memory_files(
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] | MemoryScope = (),
    media_suffixes: Iterable[str] = (),
) -> list[MemoryFile]:
    """Memory files of ``workspace`` in scan order, each once (the same file reached twice, through overlapping
    extra paths or a hard link, is kept at its first path). Files with ``media_suffixes`` (lower-case, with the
    dot) are listed from the extra paths only, as OpenClaw does for multimodal memory. The scan is
    ``memsift._core.scan_memory_files`` (stat only, in Rust)."""
    return [
        MemoryFile(rel, path, mtime, size)
        for rel, path, mtime, size in scan_workspace(workspace, extra_paths, media_suffixes)
    ]


def extra_paths(config: MemoryConfig) -> list[str]:
    """The configured ``extraPaths`` as path strings (the roots a scan covers beside the workspace)."""
    return [p.path if isinstance(p, ExtraPath) else p for p in config.extra_paths]


Listing = list[tuple[str, str, float, int]]
"""``(path, abs_path, mtime, size)`` of each memory file, in scan order."""


def scan_workspace(
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] | MemoryScope = (),
    media_suffixes: Iterable[str] = (),
) -> Listing:
    """:func:`list_memory_files` as plain ``(path, abs_path, mtime, size)`` tuples: what a sync with nothing to do
    compares, without building an object per file. ``extra_paths``: the extra paths, or a whole
    :class:`MemoryScope` (root files and patterns too)."""
    scope = _as_scope(extra_paths)
    arguments = scan_arguments(workspace, scope, media_suffixes)
    listing = scan_memory_files(*arguments)
    if not any(scope.patterns):
        return listing  # type: ignore[no-any-return]
    return _matching(listing, Path(arguments[0]), scope)


def _as_scope(extra_paths: Iterable[str | os.PathLike[str]] | MemoryScope) -> MemoryScope:
    """``extra_paths`` as a :class:`MemoryScope` (the default root files, no patterns) unless it is one."""
    if isinstance(extra_paths, MemoryScope):
        return extra_paths
    extra = tuple(os.fspath(path) for path in extra_paths)
    return MemoryScope(extra, (None,) * len(extra))


def scan_arguments(
    workspace: str | os.PathLike[str], scope: MemoryScope, media_suffixes: Iterable[str]
) -> tuple[str, list[str], list[str], list[str]]:
    """The core scan's ``(workspace, extra_roots, media, root_files)`` for ``scope`` (its patterns are applied to
    the listing afterwards)."""
    root = Path(workspace).expanduser().absolute()
    roots = [str(r) for r in extra_roots(root, scope.extra)]
    return str(root), roots, sorted(set(media_suffixes)), list(scope.root_files)


def _matching(listing: Listing, workspace: Path, scope: MemoryScope) -> Listing:
    """The listing without the files of patterned extra paths that no pattern (or unpatterned entry) of the extra
    paths holding them admits."""
    rules = [
        (os.path.normpath(os.fspath(folder)), None if pattern is None else extra_path_pattern(pattern))
        for folder, pattern in zip(extra_roots(workspace, scope.extra), scope.patterns, strict=True)
    ]
    kept = []
    for entry in listing:
        found = os.path.normpath(entry[1])
        under = [(base, rule) for base, rule in rules if found.startswith(base.rstrip(os.sep) + os.sep)]
        if not under or any(rule is None or rule.fullmatch(os.path.relpath(found, base)) for base, rule in under):
            kept.append(entry)
    return kept


class ScanAhead:
    """:func:`scan_workspace` started on a thread by a process about to open an index and sync it at once (the
    command line), so the stat calls of that sync's check (14 ms for 5,000 notes) overlap the opening; the scan
    releases the GIL. :meth:`take` gives its listing once, to a check of the same workspace, extra paths and media.
    Only for that use: a listing taken later could miss a file written after the scan.

    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> ahead = ScanAhead(root, [], [])
    >>> ahead.take(root, [], []), ahead.take(root, [], [])
    ([], None)
    """

    def __init__(
        self, workspace: str | os.PathLike[str], extra_paths: Iterable[str] | MemoryScope, media: Iterable[str]
    ) -> None:
        self._key = _scan_key(workspace, extra_paths, media)
        self._listing: Listing | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._scan, name='memsift-scan-ahead', daemon=True
        )
        self._thread.start()

    def _scan(self) -> None:
        root, extra, media = self._key
        try:
            self._listing = scan_workspace(root, extra, media)
        except Exception:  # noqa: BLE001 - the check scans again and meets the error itself
            self._listing = None

    def take(
        self, workspace: str | os.PathLike[str], extra_paths: Iterable[str] | MemoryScope, media: Iterable[str]
    ) -> Listing | None:
        """The listing, the first time it is asked for with the arguments it was started with; else ``None``."""
        thread, self._thread = self._thread, None
        if thread is None or _scan_key(workspace, extra_paths, media) != self._key:
            return None
        thread.join()
        return self._listing


def _scan_key(
    workspace: str | os.PathLike[str], extra_paths: Iterable[str] | MemoryScope, media: Iterable[str]
) -> tuple[str, MemoryScope | tuple[str, ...], tuple[str, ...]]:
    scope = extra_paths if isinstance(extra_paths, MemoryScope) else tuple(extra_paths)
    return str(Path(workspace).expanduser().resolve()), scope, tuple(sorted(set(media)))


def read_memory_file(path: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a memory file (a leading BOM dropped).

    Raises:
        SkippedFile: the file is too large, binary, not UTF-8 or unreadable; ``reason`` says which and how to fix.
    """
    data = read_bounded(path, max_bytes, f'{max_bytes}); split it or raise the limit')
    if b'\x00' in data[:_SNIFF_BYTES]:
        raise SkippedFile(path, 'looks binary (contains NUL bytes); memory files must be UTF-8 text')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise SkippedFile(path, f'is not valid UTF-8 (byte {exc.start}); re-save it as UTF-8') from exc
    return text.removeprefix('\ufeff')
