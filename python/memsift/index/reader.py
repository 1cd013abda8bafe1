"""``memory_get``: reading part of an indexed memory file, safely (never through a symlink, never a file that is not
indexed, never a transcript), with OpenClaw's 20,000-character cap and ``nextFrom`` continuation.

>>> import tempfile, pathlib
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('one\\ntwo\\nthree')
>>> read_lines(ws, [ws], 'MEMORY.md', *check_range(2, 1))
{'path': 'MEMORY.md', 'from': 2, 'lines': 1, 'totalLines': 3, 'text': 'two'}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memsift._text import preview
from memsift.errors import InvalidInputError, SkippedFile
from memsift.index.records import FileRecord
from memsift.index.workspace import is_inside, read_memory_file

if TYPE_CHECKING:
    from memsift.results import MemoryGetResult

__all__ = ['DREAM_FILES', 'MAX_GET_CHARS', 'check_range', 'masked_lines', 'memory_get', 'read_lines']

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


def masked_lines(content: str, redact: Callable[[str], str]) -> list[str]:
    """The lines of ``content`` with secrets masked by ``redact``, one per line of the file: the whole text is
    masked at once (a secret the range would cut, or a PEM key over many lines, is still found), and where a mask
    took lines away (a PEM body becomes one ``…redacted…`` line) empty lines stand in for them, so line numbers stay
    the file's, as ``memory_search`` cites them.

    >>> from memsift.redact import redact
    >>> masked_lines('a\\n-----BEGIN PRIVATE KEY-----\\nAAA\\nBBB\\n-----END PRIVATE KEY-----\\nb', redact)
    ['a', '-----BEGIN PRIVATE KEY-----', '…redacted…', '', '-----END PRIVATE KEY-----', 'b']
    """
    lines = content.split('\n')
    shown = redact(content).split('\n')
    if len(shown) == len(lines):
        return shown
    out: list[str] = []
    import difflib  # here: only a few results need it, and it costs every process a millisecond at import

    for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, shown, autojunk=False).get_opcodes():
        block = shown[j1:j2]
        if len(block) > i2 - i1:  # a mask added lines: the extra ones join the last kept
            keep = max(i2 - i1, 1)
            block = [*block[: keep - 1], ' '.join(block[keep - 1 :])]
            if i2 == i1:  # nothing of the file stands here: the text joins the line before
                if out:
                    out[-1] = f'{out[-1]} {block[0]}'
                else:
                    out.append(block[0])
                continue
        out.extend(block + [''] * (i2 - i1 - len(block)))
    return out if len(out) == len(lines) else [redact(line) for line in lines]  # (a text added at the very start)


def read_lines(
    workspace: Path,
    roots: Sequence[Path],
    path: str,
    start: int,
    lines: int | None,
    redact: Callable[[str], str] | None = None,
) -> MemoryGetResult:
    """Lines ``start`` (1-based) to ``start + lines - 1`` (``None``: to the end) of the memory file at
    workspace-relative ``path``, which must lie inside one of ``roots`` by its real path; with ``redact``
    (``query.redactGet``), secrets masked in the whole file before the lines are cut (:func:`masked_lines`).

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
    all_lines = content.split('\n') if redact is None else masked_lines(content, redact)
    stop = len(all_lines) if lines is None else min(len(all_lines), start - 1 + lines)
    selected = all_lines[start - 1 : stop]
    text = '\n'.join(selected)
    total = len(all_lines)
    if len(text) <= MAX_GET_CHARS:
        return {'path': path, 'from': start, 'lines': len(selected), 'totalLines': total, 'text': text}
    text = text[:MAX_GET_CHARS]
    shown = text.count('\n') + 1
    return {
        'path': path,
        'from': start,
        'lines': shown,
        'totalLines': total,
        'truncated': True,
        'nextFrom': start + shown - 1,
        'text': text,
    }


def memory_get(
    workspace: Path,
    extra: Sequence[Path],
    indexed: Callable[[str], FileRecord | None],
    path: object,
    from_line: object,
    lines: object,
    redact: Callable[[str], str] | None = None,
) -> MemoryGetResult:
    """``MemoryIndex.get``: part of an indexed memory file (``indexed`` tells which are, and their source), or of
    the root dream diary, read from ``workspace`` or one of the ``extra`` folders; verbatim (OpenClaw's contract),
    or with secrets masked by ``redact`` (``query.redactGet``).

    Raises:
        InvalidInputError: the path is not an indexed memory file, is a transcript, or the range is invalid.
    """
    wanted = path.strip().replace('\\', '/').removeprefix('./') if isinstance(path, str) else None
    record = indexed(wanted) if wanted is not None else None
    if wanted in DREAM_FILES and record is None:  # the dream diary: readable, though never indexed
        start, count = check_range(from_line, lines)
        return read_lines(workspace, [workspace], wanted, start, count, redact)
    if wanted is None or record is None:
        raise InvalidInputError(
            f'{preview(path)} is not an indexed memory file; memory_get reads only paths that memory_search returns'
        )
    start, count = check_range(from_line, lines)
    if record.source == 'sessions':
        raise InvalidInputError(
            f'{wanted} is a session transcript; read it with sessions_history (memsift sessions history KEY)'
        )
    return read_lines(workspace, [workspace, *extra], wanted, start, count, redact)
