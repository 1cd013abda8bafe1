"""memsift demo: keyword search over a small bundled agent-memory workspace.

    python -m memsift.demo [--json] [QUERY ...]

The pipeline mirrors the keyword half of OpenClaw's ``memory_search``, using only memsift:

1. find the bundled ``sample_workspace`` with :mod:`importlib.resources`;
2. split every ``*.md`` file into chunks with :func:`memsift.chunk_markdown`;
3. index the chunks in an in-RAM :class:`memsift.Bm25Index` (id = chunk number, path = workspace-relative path);
4. per query: ``search(k=24)`` -> :func:`memsift.bm25_score_to_unit` -> :func:`memsift.apply_temporal_decay`
   (file mtimes, ``now=time.time()``) -> :func:`memsift.mmr` (``lambda_=0.7``) over the chunk texts;
5. print the top 3 hits per query as ``score  path#Lstart-Lend  snippet``, or one JSON object with ``--json``.

Without a QUERY it runs built-in English, identifier, Chinese, Japanese and Korean queries.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator, Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import memsift

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

DEFAULT_QUERIES = [
    'deploy rollback',
    'editor preferences',
    'ERR_CONN_RESET',
    'v2.3.1',
    '视频下载',
    '会議 火曜日',
    '회의 일정',
]
# The sample files are tiny, so use small chunks to get several per file (OpenClaw defaults to 400/80).
CHUNK_TOKENS = 64
CHUNK_OVERLAP = 8
CANDIDATES = 24
TOP = 3
SOURCE = 'memory'


def iter_markdown(root: Traversable, prefix: str = '') -> Iterator[tuple[str, Traversable]]:
    """Yield ``(workspace-relative path with '/', file)`` for every ``*.md`` under ``root``, sorted."""
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        relative = prefix + entry.name
        if entry.is_dir():
            yield from iter_markdown(entry, relative + '/')
        elif entry.name.endswith('.md'):
            yield relative, entry


def load_workspace() -> tuple[list[dict], dict[str, float | None]]:
    """Chunk the bundled workspace; returns the chunks (list index = chunk id) and each file's mtime."""
    chunks: list[dict] = []
    mtimes: dict[str, float | None] = {}
    for path, entry in iter_markdown(files('memsift') / 'sample_workspace'):
        mtimes[path] = entry.stat().st_mtime if isinstance(entry, Path) else None
        for chunk in memsift.chunk_markdown(entry.read_text(encoding='utf-8'), CHUNK_TOKENS, CHUNK_OVERLAP):
            chunks.append(
                {'path': path, 'start_line': chunk.start_line, 'end_line': chunk.end_line, 'text': chunk.text}
            )
    return chunks, mtimes


def build_index(chunks: Sequence[dict]) -> memsift.Bm25Index:
    index = memsift.Bm25Index()
    index.add(
        list(range(len(chunks))),
        [c['path'] for c in chunks],
        [SOURCE] * len(chunks),
        [c['text'] for c in chunks],
    )
    index.commit()
    return index


def search(
    index: memsift.Bm25Index, chunks: Sequence[dict], mtimes: dict[str, float | None], query: str, now: float
) -> list[dict]:
    """BM25 -> unit score -> temporal decay -> MMR; the top hits as JSON-ready dicts."""
    hits = index.search(query, k=CANDIDATES)
    if not hits:
        return []
    found = [chunks[chunk_id] for chunk_id, _ in hits]
    paths = [c['path'] for c in found]
    scores = memsift.apply_temporal_decay(
        [memsift.bm25_score_to_unit(score) for _, score in hits],
        paths,
        [SOURCE] * len(found),
        [mtimes[p] for p in paths],
        now=now,
    )
    order = memsift.mmr(scores, [c['text'] for c in found], lambda_=0.7)
    return [
        {
            'score': round(scores[i], 4),
            'path': found[i]['path'],
            'start_line': found[i]['start_line'],
            'end_line': found[i]['end_line'],
            'snippet': ' '.join(found[i]['text'].split())[:100],
        }
        for i in order[:TOP]
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='python -m memsift.demo', description='Keyword search over the bundled sample workspace.'
    )
    parser.add_argument('--json', action='store_true', help='print one JSON object {query: [hits]}')
    parser.add_argument('queries', nargs='*', metavar='QUERY', help='queries to run (default: a built-in set)')
    args = parser.parse_args(argv)

    chunks, mtimes = load_workspace()
    index = build_index(chunks)
    now = time.time()
    results = {query: search(index, chunks, mtimes, query, now) for query in args.queries or DEFAULT_QUERIES}

    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return 0
    print(f'memsift {memsift.__version__}: {len(chunks)} chunks from {len(mtimes)} files in the sample workspace')
    for query, hits in results.items():
        print(f'\n== {query}')
        if not hits:
            print('   (no matches)')
        for hit in hits:
            print(f"{hit['score']:.3f}  {hit['path']}#L{hit['start_line']}-L{hit['end_line']}  {hit['snippet']}")
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
