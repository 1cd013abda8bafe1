"""``memory_get``: reading part of an indexed memory file, safely (never through a symlink, never a file that is not
indexed, never a transcript), with OpenClaw's 20,000-character cap and ``nextFrom`` continuation.

>>> import tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('one\\ntwo\\nthree')
>>> read_lines(ws, [ws], 'MEMORY.md', *check_range(2, 1))
{'path': 'MEMORY.md', 'from': 2, 'lines': 1, 'totalLines': 3, 'text': 'two'}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memsift._text import preview
from memsift.errors import InvalidInputError, SkippedFile
from memsift.index.workspace import is_inside, read_memory_file

__all__ = ['DREAM_FILES', 'MAX_GET_CHARS', 'check_range', 'read_lines']

DREAM_FILES = ('DREAMS.md', 'dreams.md')
"""The dream diary at the workspace root: never indexed, but ``memory_get`` reads it (OpenClaw reference §2.1)."""

MAX_GET_CHARS = 20_000
"""``get`` returns at most this many characters; ``nextFrom`` says where to continue."""


def check_range(from_line: object, lines: object) -> tuple[int, int | None]:
    """``(first line, line count)`` from ``memory_get``'s arguments (``None``: from line 1, to the end). A ``from``
    below 1 (zero or negative) is clamped to line 1, as OpenClaw does.

    Raises:
        InvalidInputError: ``from_line`` is not an integer, or ``lines`` not a positive integer.
    """
    start = 1 if from_line is None else from_line
    if isinstance(start, int) and not isinstance(start, bool) and start < 1:
        start = 1
    for name, value in (('from_line', start), ('lines', lines)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InvalidInputError(f'{name} must be a positive integer, got {preview(value)}')
    assert isinstance(start, int) and (lines is None or isinstance(lines, int))
    return start, lines


def read_lines(workspace: Path, roots: Sequence[Path], path: str, start: int, lines: int | None) -> dict[str, Any]:
    """Lines ``start`` (1-based) to ``start + lines - 1`` (``None``: to the end) of the memory file at
    workspace-relative ``path``, which must lie inside one of ``roots`` by its real path.

    Raises:
        InvalidInputError: the file is no longer a regular file inside the roots, or it cannot be read.
    """
    target = workspace / path
    if not is_inside(target, roots):
        raise InvalidInputError(
            f'{path} is no longer a regular file inside the workspace (it or a folder on its '
            'path is now a symlink; memory is never read through links); run sync'
        )
    if not target.is_file():
        raise InvalidInputError(f'{path} is no longer a regular file; run sync')
    try:
        content = read_memory_file(target)
    except SkippedFile as exc:
        raise InvalidInputError(f'cannot read {path}: {exc.reason}') from exc
    all_lines = content.split('\n')
    stop = len(all_lines) if lines is None else min(len(all_lines), start - 1 + lines)
    selected = all_lines[start - 1 : stop]
    text = '\n'.join(selected)
    out: dict[str, Any] = {'path': path, 'from': start, 'lines': len(selected), 'totalLines': len(all_lines)}
    if len(text) > MAX_GET_CHARS:
        text = text[:MAX_GET_CHARS]
        shown = text.count('\n') + 1
        out.update(lines=shown, truncated=True, nextFrom=start + shown - 1)
    out['text'] = text
    return out
