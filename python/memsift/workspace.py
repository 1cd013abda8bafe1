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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memsift.errors import MemsiftError

__all__ = ['DEFAULT_MAX_FILE_BYTES', 'IGNORED_DIRS', 'MemoryFile', 'SkippedFile', 'list_memory_files', 'read_memory_file']

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
    source: str = 'memory'


class SkippedFile(MemsiftError):
    """A memory file that cannot be indexed; ``reason`` says why and ``path`` which file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f'{path}: {reason}')
        self.path = path
        self.reason = reason


def _mode(path: Path) -> int:
    """The file mode of ``path`` itself (a symlink is not followed); 0 if it cannot be read."""
    try:
        return path.lstat().st_mode
    except OSError:
        return 0


def _is_plain_file(path: Path) -> bool:
    return stat.S_ISREG(_mode(path))


def _is_plain_dir(path: Path) -> bool:
    return stat.S_ISDIR(_mode(path))


def _walk_markdown(root: Path) -> Iterator[Path]:
    """``*.md`` files below ``root`` in a stable order, without following symlinks or entering ignored folders."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and _is_plain_dir(Path(dirpath, d)))
        for name in sorted(filenames):
            candidate = Path(dirpath, name)
            if name.endswith('.md') and _is_plain_file(candidate):
                yield candidate


def _candidates(workspace: Path, extra_paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    for name in ('MEMORY.md', 'memory.md'):
        if _is_plain_file(workspace / name):
            yield workspace / name
    if _is_plain_dir(workspace / 'memory'):
        yield from _walk_markdown(workspace / 'memory')
    for extra in extra_paths:
        target = Path(os.path.expanduser(os.fspath(extra)))
        target = target if target.is_absolute() else workspace / target
        if _is_plain_dir(target):
            yield from _walk_markdown(target)
        elif _is_plain_file(target) and target.name.endswith('.md'):
            yield target


def _relative(workspace: Path, path: Path) -> str:
    return Path(os.path.relpath(path, workspace)).as_posix()


def list_memory_files(
    workspace: str | os.PathLike[str], extra_paths: Iterable[str | os.PathLike[str]] = ()
) -> list[MemoryFile]:
    """Memory files of ``workspace`` in scan order, each once (by real path)."""
    root = Path(workspace).expanduser().absolute()
    seen: set[str] = set()
    files = []
    for path in _candidates(root, extra_paths):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        files.append(MemoryFile(path=_relative(root, path), abs_path=path))
    return files


def read_memory_file(path: Path, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a memory file (a leading BOM dropped).

    Raises:
        SkippedFile: the file is too large, binary, not UTF-8 or unreadable; ``reason`` says which and how to fix.
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SkippedFile(path, f'too large ({size} bytes > {max_bytes}); split it or raise the limit')
        data = path.read_bytes()
    except OSError as exc:
        raise SkippedFile(path, f'cannot be read ({exc.strerror or exc})') from exc
    if b'\x00' in data[:_SNIFF_BYTES]:
        raise SkippedFile(path, 'looks binary (contains NUL bytes); memory files must be UTF-8 text')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise SkippedFile(path, f'is not valid UTF-8 (byte {exc.start}); re-save it as UTF-8') from exc
    return text.removeprefix('\ufeff')
