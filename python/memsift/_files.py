"""Reading a file whole, with a size bound: memory notes and media files alike are refused, not loaded, when too
large, and an unreadable file becomes a :class:`~memsift.errors.SkippedFile` with the reason.

>>> import tempfile, pathlib
>>> note = pathlib.Path(tempfile.mkdtemp()) / 'note.md'
>>> _ = note.write_text('hello')
>>> read_bounded(note, 10, '10)')
b'hello'
>>> read_bounded(note, 3, '3)')
Traceback (most recent call last):
...
memsift.errors.SkippedFile: ...note.md: too large (5 bytes > 3)
"""

from __future__ import annotations

from pathlib import Path

from memsift.errors import SkippedFile

__all__ = ['read_bounded']


def read_bounded(path: Path, max_bytes: int, limit: str) -> bytes:
    """The bytes of ``path`` if it holds at most ``max_bytes``; ``limit`` ends the too-large reason.

    Raises:
        SkippedFile: too large or unreadable.
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SkippedFile(path, f'too large ({size} bytes > {limit}')
        return path.read_bytes()
    except OSError as exc:
        raise SkippedFile(path, f'cannot be read ({exc.strerror or exc})') from exc
