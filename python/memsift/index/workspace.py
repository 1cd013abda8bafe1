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

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memsift._files import read_bounded
from memsift.errors import SkippedFile

__all__ = [
    'DEFAULT_MAX_FILE_BYTES',
    'IGNORED_DIRS',
    'MemoryFile',
    'extra_roots',
    'is_inside',
    'list_memory_files',
    'read_memory_file',
]

IGNORED_DIRS = frozenset(
    {'.git', '.hg', '.svn', 'node_modules', '.venv', 'venv', '__pycache__', '.mypy_cache', '.pytest_cache', '.tox'}
)
"""Folder names never scanned: version control, dependencies and caches, not notes."""

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
"""Larger Markdown files are skipped (and reported): they are almost certainly not hand-written memory."""

_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory file: ``path`` relative to the workspace with ``/`` separators (``../`` for outside extra paths)."""

    path: str
    abs_path: Path
    mtime: float = 0.0
    size: int = 0
    source: str = 'memory'
    read: Callable[[], tuple[str, tuple[int, ...]]] | None = field(default=None, compare=False)
    """A document that is not a file (a session transcript): returns its text and, per text line, the source line
    the chunk line numbers map to. ``mtime`` and ``size`` then describe the source (message count, bytes)."""


def _lstat(path: Path) -> os.stat_result | None:
    """The status of ``path`` itself (a symlink is not followed); ``None`` if it cannot be read."""
    try:
        return path.lstat()
    except OSError:
        return None


def _mode(path: Path) -> int:
    info = _lstat(path)
    return 0 if info is None else info.st_mode


def _is_plain_dir(path: Path) -> bool:
    return stat.S_ISDIR(_mode(path))


def _wanted(name: str, media: frozenset[str]) -> bool:
    return name.endswith('.md') or (bool(media) and os.path.splitext(name)[1].lower() in media)


def _walk_markdown(root: Path, media: frozenset[str] = frozenset()) -> Iterator[tuple[Path, os.stat_result]]:
    """``*.md`` files (and files with a ``media`` suffix) below ``root``, with their lstat, in a stable order,
    without following symlinks or entering ignored folders."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and _is_plain_dir(Path(dirpath, d)))
        for name in sorted(filenames):
            if _wanted(name, media):
                candidate = Path(dirpath, name)
                info = _lstat(candidate)
                if info is not None and stat.S_ISREG(info.st_mode):
                    yield candidate, info


def _plain_file(path: Path) -> Iterator[tuple[Path, os.stat_result]]:
    info = _lstat(path)
    if info is not None and stat.S_ISREG(info.st_mode):
        yield path, info


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


def _candidates(
    workspace: Path, extra_paths: Iterable[str | os.PathLike[str]], media: frozenset[str]
) -> Iterator[tuple[Path, os.stat_result]]:
    for name in ('MEMORY.md', 'memory.md'):
        yield from _plain_file(workspace / name)
    if _is_plain_dir(workspace / 'memory'):
        yield from _walk_markdown(workspace / 'memory')
    for target in extra_roots(workspace, extra_paths):
        if _is_plain_dir(target):
            yield from _walk_markdown(target, media)
        elif _wanted(target.name, media):
            yield from _plain_file(target)


def _relative(workspace: Path, path: Path) -> str:
    return Path(os.path.relpath(path, workspace)).as_posix()


def list_memory_files(
    workspace: str | os.PathLike[str],
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    media_suffixes: Iterable[str] = (),
) -> list[MemoryFile]:
    """Memory files of ``workspace`` in scan order, each once (the same file reached twice, through overlapping
    extra paths or a hard link, is kept at its first path). Files with ``media_suffixes`` (lower-case, with the
    dot) are listed from the extra paths only, as OpenClaw does for multimodal memory."""
    media = frozenset(media_suffixes)
    root = Path(workspace).expanduser().absolute()
    seen: set[tuple[int, int]] = set()
    files = []
    for path, info in _candidates(root, extra_paths, media):
        key = (info.st_dev, info.st_ino)
        if key in seen:
            continue
        seen.add(key)
        files.append(MemoryFile(_relative(root, path), path, mtime=info.st_mtime, size=info.st_size))
    return files


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
