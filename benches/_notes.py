"""Agent workspaces of SciFact notes, shared by the benches: one Markdown note per SciFact document.

``write_workspace`` repeats the corpus (``memory/c00/``, ``memory/c01/``, ...) until OpenClaw's chunker would make the
number of chunks asked for; every note gets the same old mtime, as notes in a real workspace are older than the
index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import _beir

import memsift

MB = 1e6
"""Sizes are reported in decimal megabytes."""

NOTE_MTIME = 1_700_000_000
"""Every note gets this mtime (Nov 2023): notes older than the index, as in a real workspace."""


@dataclass
class Workspace:
    """An agent workspace of SciFact notes: ``memory/cNN/<doc id>.md``, copy NN of the corpus."""

    root: Path
    files: int
    chunks: int
    size: int

    @property
    def label(self) -> str:
        return f'{self.chunks:,} chunks'

    def describe(self) -> str:
        return f'{self.files:,} files, {self.size / MB:.1f} MB'


def scifact_notes(data: _beir.Dataset) -> list[tuple[str, str]]:
    """``(doc id, Markdown note)`` per SciFact document: ``# title``, a blank line, the abstract."""
    notes = []
    for doc_id, doc in zip(data.doc_ids, data.docs):
        title, _, text = doc.partition('\n')
        notes.append((doc_id, f'# {title}\n\n{text}\n'))
    return notes


def write_workspace(
    root: Path,
    notes: list[tuple[str, str]],
    target_chunks: int,
    *,
    mark_copies: bool = False,
    notes_per_file: int = 1,
) -> Workspace:
    """Write notes (the corpus repeated as needed) until OpenClaw's chunker would make ``target_chunks`` chunks.
    ``mark_copies``: each copy's notes end with a line naming the copy, so no two chunks have the same text.
    ``notes_per_file``: that many consecutive notes of a copy share one file (named after the first), as real
    memories keep fewer, longer notes."""
    counts = [len(memsift.chunk_markdown(text, 400, 80)) for _, text in notes] if notes_per_file == 1 else []
    position = files = chunks = size = 0
    while chunks < target_chunks:
        copy, i = divmod(position, len(notes))
        folder = root / 'memory' / f'c{copy:02d}'
        if i == 0:
            folder.mkdir(parents=True)
        group = notes[i : i + max(1, notes_per_file)]
        texts = [f'{text}\nCopy {copy} of this note.\n' if mark_copies else text for _, text in group]
        text = '\n'.join(texts)
        data = text.encode()
        path = folder / f'{group[0][0]}.md'
        path.write_bytes(data)
        os.utime(path, (NOTE_MTIME, NOTE_MTIME))
        made = counts[i] if counts else len(memsift.chunk_markdown(text, 400, 80))
        position, files, chunks, size = position + len(group), files + 1, chunks + made, size + len(data)
    return Workspace(root, files, chunks, size)
