"""What another process's write costs a reader on one SQLite store, by corpus size (issues 33, 41).

A workspace of the SciFact notes repeated to ``--chunks`` (each size in turn) is indexed with a deterministic
384-dimension embedder (token hashes: vectors at full size, no model's minutes), so hybrid search runs its vector
leg. One reader process opens it and searches; then, ``--writes`` times, the bench process writes one new note and
syncs, and the reader searches for the note's marker word until it finds it. Per size it reports the reader's CPU
and wall time for that first search after a write (its catch-up included) against the same search again (nothing
to catch up, everything it read cached: ``extraCpuMs`` is the difference, issue 41's measure) and against a search
for a word no note has, made after them (a new query with nothing to catch up: ``catchUpCpuMs``, the catch-up
alone), and whether every write was found. The last line gives both differences' growth from the smallest size to
the largest (issue 41's bar: at most x2.5 from 5k to 200k chunks). Before the SQLite change log, the reader re-read
every vector after each write: its cost grew with the corpus.

    python benches/catchup.py [--data-root ../shared/data] [--chunks 5000,200000] [--writes 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _beir  # noqa: E402
import _notes  # noqa: E402
from postgres import HashingEmbedder, config, probe_word  # noqa: E402

import memsift  # noqa: E402

ABSENT = 26**3
"""Markers from here on name words no note has (the writes use the first ``--writes``)."""


def reader(ws: str, state: str, asks: mp.Queue, answers: mp.Queue) -> None:
    """Answer each marker with the CPU and wall time of the first search that found it (catch-up included), of the
    same search again, and of a search for a word no note has (a new query, nothing to catch up)."""
    cfg = config('sqlite', Path(state), None, sync={'onSearch': False, 'watch': False})
    with memsift.MemoryIndex(ws, cfg, provider=HashingEmbedder()) as index:
        index.search('warm up')
        answers.put('ready')
        while (marker := asks.get()) is not None:
            word = probe_word(marker)
            cpu, wall = time.process_time(), time.perf_counter()
            found = any(word in hit.snippet for hit in index.search(word).results)
            first = (time.process_time() - cpu, time.perf_counter() - wall)
            cpu, wall = time.process_time(), time.perf_counter()
            index.search(word)
            steady = (time.process_time() - cpu, time.perf_counter() - wall)
            cpu, wall = time.process_time(), time.perf_counter()
            index.search(probe_word(marker + ABSENT))
            fresh = (time.process_time() - cpu, time.perf_counter() - wall)
            answers.put((found, first, steady, fresh))


def measure(notes: list[tuple[str, str]], root: Path, chunks: int, writes: int) -> dict:
    ws = _notes.write_workspace(root / f'ws-{chunks}', notes, chunks, mark_copies=True)
    state = root / f'state-{chunks}'
    cfg = config('sqlite', state, None, sync={'onSearch': False, 'watch': False})
    ctx = mp.get_context('spawn')
    asks, answers = ctx.Queue(), ctx.Queue()
    with memsift.MemoryIndex(ws.root, cfg, provider=HashingEmbedder()) as index:
        index.sync()
        proc = ctx.Process(target=reader, args=(str(ws.root), str(state), asks, answers))
        proc.start()
        assert answers.get(timeout=1800) == 'ready'
        rows = []
        for marker in range(writes):
            note = ws.root / 'memory' / 'live' / f'probe-{marker:05d}.md'
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f'# probe\n\n{(probe_word(marker) + " ") * 30}written by the bench\n')
            index.sync()
            asks.put(marker)
            rows.append(answers.get(timeout=600))
        asks.put(None)
        proc.join(timeout=120)

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 2)

    first, steady, fresh = ([row[k] for row in rows] for k in (1, 2, 3))
    return {
        'chunks': ws.chunks,
        'writes': writes,
        'found': sum(row[0] for row in rows),
        'firstSearchCpuMs': ms([cpu for cpu, _ in first]),
        'firstSearchWallMs': ms([wall for _, wall in first]),
        'steadySearchCpuMs': ms([cpu for cpu, _ in steady]),
        'steadySearchWallMs': ms([wall for _, wall in steady]),
        'freshSearchCpuMs': ms([cpu for cpu, _ in fresh]),
        'extraCpuMs': ms([a[0] - b[0] for a, b in zip(first, steady)]),
        'catchUpCpuMs': ms([a[0] - b[0] for a, b in zip(first, fresh)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT)
    parser.add_argument('--chunks', default='5000,200000', help='corpus sizes, comma-separated')
    parser.add_argument('--writes', type=int, default=20, help='one-note writes per size')
    parser.add_argument('--json', type=Path, help='write the figures here')
    args = parser.parse_args()
    notes = _notes.scifact_notes(_beir.load_dataset(args.data_root / 'scifact'))
    figures = []
    with tempfile.TemporaryDirectory(prefix='memsift-catchup-') as tmp:
        for chunks in (int(c) for c in args.chunks.split(',')):
            figures.append(measure(notes, Path(tmp), chunks, args.writes))
            print(json.dumps(figures[-1]), flush=True)
    if len(figures) > 1:
        small, large = figures[0], figures[-1]
        span = f'from {small["chunks"]:,} to {large["chunks"]:,} chunks'
        for key, what in [
            ('firstSearchCpuMs', 'first search after a write'),
            ('extraCpuMs', 'first minus the same search again'),
            ('catchUpCpuMs', 'first minus a new query with nothing to catch up'),
        ]:
            growth = large[key] / max(small[key], 1e-3)
            print(f'reader CPU, {what}: {small[key]} -> {large[key]} ms, x{growth:.2f} {span}')
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == '__main__':
    main()
