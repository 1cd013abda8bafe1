"""Writing memory: appending a note to a Markdown file under ``memory/`` (``MemoryIndex.write``, ``memory_write``).

A note goes to today's daily file ``memory/YYYY-MM-DD.md`` (local time), or to a named Markdown file under
``memory/``, after a blank line; what the file held stays as it was. The path is checked before anything is touched
(workspace-relative, under ``memory/``, ``.md``, no ``..``), and the folders are then opened one at a time without
following links (``O_NOFOLLOW`` relative to the folder above), so neither ``memory/`` nor a folder or file below it
may be a symlink, even one swapped in while the note is written. Missing folders are created.

Appends are atomic and safe between processes: the writer locks the note's file itself (``flock``, so a lock cannot
outlive its process and no lock file lies in the user's notes), reads it, writes old content + note to a temporary
file in the same folder and renames it over the file (``os.replace``), so a reader (a sync, an editor) sees the file
before or after the note, never half of it. A writer that waited on the lock re-opens the file when another writer's
rename replaced it meanwhile, so concurrent notes are all kept, each once.

>>> import tempfile, pathlib, datetime
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> day = datetime.datetime(2026, 11, 28, 9, 30)
>>> append_note(ws, 'The deploy key lives in the team vault.', now=day)
{'path': 'memory/2026-11-28.md', 'startLine': 1, 'endLine': 1, 'chars': 39}
>>> append_note(ws, 'Standup moved to 9:30.\\nOn Mondays only.', now=day)['startLine']
3
>>> print((ws / 'memory' / '2026-11-28.md').read_text(), end='')
The deploy key lives in the team vault.
<BLANKLINE>
Standup moved to 9:30.
On Mondays only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memsift._text import preview, scrub, without_nul
from memsift.errors import InvalidInputError, MemsiftError, StoreError
from memsift.index.reader import MAX_GET_CHARS
from memsift.index.workspace import DEFAULT_MAX_FILE_BYTES, IGNORED_DIRS

if TYPE_CHECKING:
    from memsift.results import MemoryWriteResult

__all__ = ['LOCK_WAIT_S', 'MAX_NOTE_CHARS', 'append_note', 'note_path', 'note_text']

MAX_NOTE_CHARS = MAX_GET_CHARS
"""The longest note, in characters (20,000): one ``memory_get`` call returns a note this long whole, and a note is
a thing to remember, not a document (a 10 MB paste is refused, naming ``text``, before anything is written)."""

LOCK_WAIT_S = 30.0
"""How long a writer waits for another writer's append to the same file (each holds it for milliseconds)."""

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NO_LINK = os.O_NOFOLLOW | os.O_CLOEXEC
_EXAMPLE = 'such as "memory/projects/deploy.md"'


def note_text(text: object) -> str:
    """The note as it is written: lone surrogates and NUL replaced by U+FFFD (a NUL would make the whole file look
    binary to the indexer), line breaks as ``\\n``, blank lines around it dropped.

    >>> note_text('\\r\\n  Deploy on Fridays.\\r\\n\\n')
    '  Deploy on Fridays.'

    Raises:
        InvalidInputError: ``text`` is not a string, is empty or only whitespace, or is longer than
            :data:`MAX_NOTE_CHARS`.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f'text must be a string (the note to write), got {preview(text)}')
    lines = without_nul(scrub(text)).replace('\r\n', '\n').replace('\r', '\n').split('\n')
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    note = '\n'.join(lines).rstrip()
    if not note:
        raise InvalidInputError('text is empty (or only whitespace): pass the note to write')
    if len(note) > MAX_NOTE_CHARS:
        raise InvalidInputError(
            f'text is {len(note):,} characters; a note holds at most {MAX_NOTE_CHARS:,}: split it into smaller notes'
        )
    return note


def note_path(path: object = None, now: datetime | None = None) -> str:
    """The workspace-relative file a note goes to: ``path`` checked and normalized (``\\`` as ``/``, a leading
    ``./`` dropped), or today's daily file (``now``'s date; default: the local date now).

    >>> note_path(None, datetime(2026, 11, 28)), note_path('./memory/projects/deploy.md')
    ('memory/2026-11-28.md', 'memory/projects/deploy.md')

    Raises:
        InvalidInputError: ``path`` is not a Markdown file under ``memory/``, or not a plain relative path.
    """
    if path is None:
        return f'memory/{(now or datetime.now()).date().isoformat()}.md'
    if not isinstance(path, str):
        raise InvalidInputError(f'path must be a string {_EXAMPLE}, got {preview(path)}')
    wanted = path.strip().replace('\\', '/')
    while wanted.startswith('./'):
        wanted = wanted[2:]
    parts = wanted.split('/')
    if '\x00' in wanted or scrub(wanted) != wanted:
        problem = 'holds a NUL or an unencodable character'
    elif wanted.startswith('/') or os.path.isabs(wanted):
        problem = 'is absolute; give it relative to the workspace'
    elif any(part in ('', '.', '..') for part in parts):
        problem = 'must not hold "..", "." or empty segments'
    elif parts[0] != 'memory' or len(parts) < 2:
        problem = 'is not under memory/; notes are written to Markdown files under memory/'
    elif not parts[-1].endswith('.md') or parts[-1] == '.md':
        problem = 'is not a Markdown file; give a name ending in .md'
    elif ignored := [part for part in parts[1:-1] if part in IGNORED_DIRS]:
        problem = f'is inside {ignored[0]}/, a folder memory never indexes'
    else:
        return wanted
    raise InvalidInputError(f"path {preview(path)} {problem} ({_EXAMPLE}, or none for today's file)")


def append_note(
    workspace: str | os.PathLike[str], text: object, path: object = None, *, now: datetime | None = None
) -> MemoryWriteResult:
    """Append ``text`` (checked by :func:`note_text`) to the file :func:`note_path` gives, after a blank line.

    Returns:
        ``{path, startLine, endLine, chars}``: the file and the lines the note now occupies (1-based, as
        ``memory_get`` numbers them), and the note's length in characters.

    Raises:
        InvalidInputError: a bad ``text`` or ``path``; a symlink, a file where a folder should be (or the reverse)
            on the way; a file that is not UTF-8 text, or that the note would grow past the largest file memory
            indexes (16 MiB).
        StoreError: the file could not be written (permissions, a full disk) or stayed locked by another writer
            for :data:`LOCK_WAIT_S` seconds.
    """
    note = note_text(text)
    rel = note_path(path, now)
    *folders, name = rel.split('/')
    folder = _open_folders(Path(workspace), folders, rel)
    try:
        return _append(folder, name, rel, note)
    finally:
        os.close(folder)


def _open_folders(workspace: Path, folders: list[str], rel: str) -> int:
    """A descriptor of the note's folder, reached from ``workspace`` one folder at a time, each created when
    missing and opened without following a link."""
    try:
        fd = os.open(workspace, _DIRECTORY)
    except OSError as exc:
        raise _failed(rel, exc) from exc
    try:
        for depth, name in enumerate(folders, 1):
            shown = '/'.join(folders[:depth])
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise _failed(rel, exc) from exc
            try:
                child = os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise _refused(rel, shown, exc, fd, name, 'a folder') from exc
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _append(folder: int, name: str, rel: str, note: str) -> MemoryWriteResult:
    fd, created = _lock(folder, name, rel)
    existing = b''
    try:
        size = os.fstat(fd).st_size
        if size > DEFAULT_MAX_FILE_BYTES:
            raise _too_large(rel)
        existing = _read(fd, size)
        if b'\x00' in existing[:8192]:
            raise InvalidInputError(f'path {rel}: the file looks binary (it holds NUL bytes); write to another file')
        try:
            before = existing.decode('utf-8').removeprefix('\ufeff')
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f'path {rel}: the file is not UTF-8 text; re-save it as UTF-8') from exc
        gap = '' if not before or before.endswith('\n\n') else '\n' if before.endswith('\n') else '\n\n'
        data = existing + f'{gap}{note}\n'.encode()
        if len(data) > DEFAULT_MAX_FILE_BYTES:
            raise _too_large(rel)
        _replace(folder, name, rel, data, os.fstat(fd).st_mode)
        start = (before + gap).count('\n') + 1
        return {'path': rel, 'startLine': start, 'endLine': start + note.count('\n'), 'chars': len(note)}
    except BaseException:
        if created and not existing:  # nothing was written: leave no empty file behind
            _unlink_if_same(folder, name, fd)
        raise
    finally:
        os.close(fd)  # releases the lock


def _lock(folder: int, name: str, rel: str) -> tuple[int, bool]:
    """The note's file, open and locked (created when missing; ``True`` then), and the file its name names now:
    a writer that waited re-opens it when another writer's rename replaced the file it locked."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        created = False
        try:
            fd = os.open(name, os.O_RDWR | os.O_NONBLOCK | _NO_LINK, dir_fd=folder)
        except FileNotFoundError:
            try:
                fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o666, dir_fd=folder)
            except FileExistsError:
                continue  # another writer created it first
            except OSError as exc:
                raise _refused(rel, rel, exc, folder, name, 'a file') from exc
            created = True
        except OSError as exc:
            raise _refused(rel, rel, exc, folder, name, 'a file') from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InvalidInputError(f'path {rel} is not a regular file; notes are written to Markdown files')
            if _wait_for_lock(fd, deadline) and _same_file(folder, name, fd):
                return fd, created
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if time.monotonic() > deadline:
            raise StoreError(f'{rel} stayed locked by another writer for {LOCK_WAIT_S:g} s; retry')


def _wait_for_lock(fd: int, deadline: float) -> bool:
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.02)


def _same_file(folder: int, name: str, fd: int) -> bool:
    try:
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _read(fd: int, size: int) -> bytes:
    chunks, done = [], 0
    while chunk := os.pread(fd, max(size - done, 65536), done):
        chunks.append(chunk)
        done += len(chunk)
    return b''.join(chunks)


def _replace(folder: int, name: str, rel: str, data: bytes, mode: int) -> None:
    """``data`` as the file ``name``, atomically: a temporary file in the same folder (not ``.md``: never indexed),
    flushed to disk, renamed over it, with the old file's permissions."""
    tmp = f'.memsift-{os.getpid()}-{os.urandom(6).hex()}.tmp'
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o600, dir_fd=folder)
        try:
            os.fchmod(fd, stat.S_IMODE(mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        if isinstance(exc, OSError):
            raise _failed(rel, exc) from exc
        raise
    with contextlib.suppress(OSError):  # a folder some file systems cannot sync: the rename still happened
        os.fsync(folder)  # the rename itself survives a crash


def _unlink_if_same(folder: int, name: str, fd: int) -> None:
    try:
        if _same_file(folder, name, fd) and os.fstat(fd).st_size == 0:
            os.unlink(name, dir_fd=folder)
    except OSError:
        pass


def _refused(rel: str, shown: str, exc: OSError, folder: int, name: str, kind: str) -> MemsiftError:
    """The error for an ``open`` of ``name`` (shown as ``shown``) on the way to the note that failed with ``exc``."""
    try:
        link = stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        link = False
    if link or exc.errno == errno.ELOOP:
        return InvalidInputError(
            f'path {rel}: {shown} is a symlink; memory is never written through links (replace it with {kind})'
        )
    if exc.errno in (errno.ENOTDIR, errno.EISDIR):
        other = 'a file' if kind == 'a folder' else 'a folder'
        return InvalidInputError(f'path {rel}: {shown} is {other}, not {kind}; choose another path')
    return _failed(rel, exc)


def _failed(rel: str, exc: OSError) -> MemsiftError:
    if exc.errno == errno.ENAMETOOLONG:
        return InvalidInputError(f'path {rel}: a name on it is too long for the file system; choose a shorter one')
    return StoreError(f'cannot write {rel}: {exc.strerror or exc}; check the permissions and free space of memory/')


def _too_large(rel: str) -> InvalidInputError:
    return InvalidInputError(
        f'path {rel}: the file would grow past {DEFAULT_MAX_FILE_BYTES // (1024 * 1024)} MiB, the largest memory '
        'file memsift indexes; write to another file under memory/'
    )
