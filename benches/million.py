"""A memory of a million chunks: hybrid ``memory_search`` latency, recall of the vector leg, memory (issue 15 part 2).

    .venv/bin/python benches/million.py [--chunks 1000000] [--queries 200] [--json OUT] [--keep DIR]

Writes SciFact notes (5,183 documents) again and again until OpenClaw's chunker would make ``--chunks`` chunks; each
copy's notes carry their copy number, so no two chunks have the same text. Embeddings are deterministic and
text-derived (``speed.BenchEmbedder``'s hashed bag of words) plus a small per-text jitter: copies of a note land
close together, as rewordings of one fact do with a real model, so the vectors have neighbourhood structure rather
than uniform noise. Then, in one process:

1. index the workspace with vectors (seconds, peak RSS so far);
2. close and reopen it: the vectors (and an HNSW graph, where the store uses one) load from the saved file
   (seconds, file size); every query runs once untimed, so both passes below meet a warm page cache;
3. run ``--queries`` SciFact test queries through ``MemoryIndex.search`` (hybrid, OpenClaw's defaults) in a new
   index, as a second process would (its first searches start a sync check of every file), again in that process
   once the check is done (``defaults_settled``), then with the sync off: p50/p95/p99/max, and per stage from
   ``debug``;
4. recall@10 of the vector leg as the search runs it (``LEG_CANDIDATES`` asked) against the exact scan over the
   same vectors, and the same for the final hybrid top-10 (the search again with the exact vector leg). From
   ``embeddings.U4_FROM`` vectors the scan ranks with 4-bit codes first (``"fourBit": true``) and rescores the best
   1,000, which these measure; with a graph (``ANN_THRESHOLD`` lowered) they measure the graph;
5. with the watcher on: how soon a word appended to a note, and a new note, are found (``watched``);
6. report the peak RSS of the process (``ru_maxrss``).

``--notes-per-file 12`` writes the same chunks into about 59k longer files.

Needs about 2 GB of disk under the temporary folder (``--keep DIR``: there, kept). Targets (issue 15): hybrid p50
<= 30 ms at 1M and <= 5 ms at 100k, recall@10 >= 0.95, vectors <= 1 GiB resident.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import _beir
import numpy as np
from _notes import MB, scifact_notes, write_workspace
from speed import BenchEmbedder

import memsift
import memsift.search.legs as legs

JITTER = 0.5
"""Norm of the per-text jitter added to the unit text-derived embedding (before normalizing): a copy of a note sits
at cosine ~0.89 of the original, as a rewording would with a real model."""


class JitteredEmbedder(BenchEmbedder):
    """``BenchEmbedder`` without its memo (a million vectors would not fit it) and with a per-text jitter."""

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._embed(text)
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        noise = rng.standard_normal(vector.shape[0]).astype(np.float32)
        vector = vector + JITTER * noise / np.linalg.norm(noise)
        return vector / np.linalg.norm(vector)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts])


@contextlib.contextmanager
def exact_vector_leg() -> Iterator[None]:
    """Searches in the block run their vector leg as an exact scan (same candidates count, same clamping)."""

    def exact_leg(vectors: memsift.VectorStore, query_vector: np.ndarray) -> dict[int, float]:
        if not np.any(query_vector) or not len(vectors):
            return {}
        ids, scores = vectors.search(query_vector, legs.LEG_CANDIDATES, exact=True)
        return {chunk_id: max(0.0, score) for chunk_id, score in zip(ids.tolist(), scores.tolist())}

    original = legs.vector_leg
    legs.vector_leg = exact_leg
    try:
        yield
    finally:
        legs.vector_leg = original


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--data', type=Path, default=_beir.DEFAULT_DATA_ROOT, help='folder of the BEIR datasets')
    parser.add_argument('--chunks', type=int, default=1_000_000)
    parser.add_argument('--queries', type=int, default=200)
    parser.add_argument('--json', type=Path, metavar='OUT')
    parser.add_argument('--keep', type=Path, metavar='DIR', help='work in DIR and keep it (to profile it)')
    parser.add_argument(
        '--notes-per-file',
        type=int,
        default=1,
        help='notes written into each file (12: the same chunks in about 50k longer files instead of 584k)',
    )
    parser.add_argument(
        '--reuse', action='store_true', help='with --keep: search the index a previous run left there (no rebuild)'
    )
    args = parser.parse_args(argv)
    data = _beir.load_dataset(args.data / 'scifact')
    queries = [text for _, text in data.queries[: args.queries]]
    out: dict[str, object] = {'chunks_asked': args.chunks, 'notes_per_file': args.notes_per_file}

    def log(message: str) -> None:
        print(f'million [{time.strftime("%H:%M:%S")}] {message} (peak RSS {peak_rss_mb():,.0f} MB)', file=sys.stderr)

    tmp = args.keep or Path(tempfile.mkdtemp(prefix='memsift-million-'))
    config = {'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp / 'index.sqlite')}}}}}
    embedder = JitteredEmbedder()
    try:
        if not (args.reuse and (tmp / 'index.sqlite').is_file()):
            build(args.chunks, data, tmp, config, embedder, out, log, args.notes_per_file)
        search(tmp, config, embedder, queries, out, log)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**out, 'date': time.strftime('%Y-%m-%d')}, indent=1), encoding='utf-8')
    return 0


Log = Callable[[str], None]


def build(
    chunks: int,
    data: _beir.Dataset,
    tmp: Path,
    config: dict,
    embedder: JitteredEmbedder,
    out: dict,
    log: Log,
    notes_per_file: int = 1,
) -> None:
    """Steps 1 and 2's first half: write the workspace of ``chunks`` chunks and index it with vectors."""
    ws = tmp / 'ws'
    started = time.perf_counter()
    shutil.rmtree(ws, ignore_errors=True)
    written = write_workspace(ws, scifact_notes(data), chunks, mark_copies=True, notes_per_file=notes_per_file)
    log(f'wrote {written.describe()}, {written.label} in {time.perf_counter() - started:.0f} s')
    out.update(files=written.files, chunks=written.chunks, mb=round(written.size / MB, 1))
    with memsift.MemoryIndex(ws, config, provider=embedder) as index:
        started = time.perf_counter()
        report = index.sync()
        out['index_s'] = round(time.perf_counter() - started, 1)
        log(f'indexed {report.chunks_written:,} chunks in {out["index_s"]} s; vectors {index.embeddings.vectors!r}')
    out['peak_rss_after_index_mb'] = round(peak_rss_mb())
    saved = tmp / 'index.vectors'
    out['vector_file_mb'] = round(saved.stat().st_size / MB) if saved.is_file() else None


def search(tmp: Path, config: dict, embedder: JitteredEmbedder, queries: list[str], out: dict, log: Log) -> None:
    """Steps 2 (reopening) to 4: latency of the searches, recall of the vector leg and of the hybrid top 10."""
    search_config = {**config['agents']['defaults']['memorySearch'], 'sync': {'onSearch': False, 'watch': False}}
    sync_off = {'agents': {'defaults': {'memorySearch': search_config}}}
    started = time.perf_counter()
    with memsift.MemoryIndex(tmp / 'ws', sync_off, provider=embedder) as index:
        out['reopen_s'] = round(time.perf_counter() - started, 2)
        log(f'reopened in {out["reopen_s"]} s')
        for q in queries:  # untimed: the page cache as warm as a running agent's, for both passes below
            index.search(q)
    with memsift.MemoryIndex(tmp / 'ws', config, provider=embedder) as index:
        vectors = index.embeddings.vectors
        out.update(
            vectors=len(vectors),
            dtype=vectors.dtype,
            ann=vectors.ann_active,
            fourBit=vectors.u4_active,
            oneBit=vectors.one_bit_active,
        )
        out['defaults'] = timed_searches(index, queries)  # a new process: its first searches start a sync check
        out['hybrid_p50_ms'], out['hybrid_p95_ms'] = out['defaults']['p50_ms'], out['defaults']['p95_ms']
        log(f'defaults: {json.dumps(out["defaults"])}')
        settle = time.monotonic() + 120
        while index.status()['sync']['running'] and time.monotonic() < settle:
            time.sleep(0.1)
        out['defaults_settled'] = timed_searches(index, queries)  # the same process once that check is done
        log(f'defaults, the first check done: {json.dumps(out["defaults_settled"])}')
        recalls, ann_s, exact_s = [], [], []
        for q in queries:
            qv = embedder.embed_query(q.strip())
            started = time.perf_counter()
            approx = vectors.search(qv, legs.LEG_CANDIDATES)[0][:10]
            ann_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            exact = vectors.search(qv, 10, exact=True)[0]
            exact_s.append(time.perf_counter() - started)
            recalls.append(len(set(approx.tolist()) & set(exact.tolist())) / 10)
        out['vector_leg_recall@10'] = round(float(np.mean(recalls)), 4)
        out['vector_leg_p50_ms'] = round(1000 * statistics.median(ann_s), 2)
        out['vector_exact_p50_ms'] = round(1000 * statistics.median(exact_s), 2)
        top = [[h.path, h.start_line] for h in index.search(queries[0], 10, 0).results]
        agree = []
        for q in queries[:50]:
            approx_top = [(h.path, h.start_line) for h in index.search(q, 10, 0).results]
            with exact_vector_leg():
                exact_top = [(h.path, h.start_line) for h in index.search(q, 10, 0).results]
            # Counted with repeats: the chunks of one long line share a path and a start line.
            agree.append(sum((Counter(approx_top) & Counter(exact_top)).values()) / max(1, len(exact_top)))
        out['hybrid_recall@10'] = round(float(np.mean(agree)), 4)
        out['example_top'] = top[:3]
    with memsift.MemoryIndex(tmp / 'ws', sync_off, provider=embedder) as index:
        out['sync_off'] = timed_searches(index, queries)
        log(f'sync off: {json.dumps(out["sync_off"])}')
    out['watched'] = watched_edits(tmp, config, embedder)
    log(f'watched: {json.dumps(out["watched"])}')
    out['peak_rss_mb'] = round(peak_rss_mb())
    log(json.dumps(out))


def watched_edits(tmp: Path, config: dict, embedder: JitteredEmbedder) -> dict:
    """With the watcher on (the defaults: 1.5 s debounce), once the first sync check is done: seconds until the
    keyword leg finds a word appended to an existing note and a new note, and the slowest search meanwhile (ms;
    searches run every 50 ms). The kept workspace keeps both."""
    out = {}
    with memsift.MemoryIndex(tmp / 'ws', config, provider=embedder) as index:
        index.search('warm up')
        while (thread := index.freshness.sync_thread) is not None and thread.is_alive():
            time.sleep(0.05)
        index.start_watching()
        time.sleep(1)
        stamp = int(time.time())
        existing = min((tmp / 'ws' / 'memory' / 'c00').iterdir())
        for kind, path in (('edit', existing), ('new', tmp / 'ws' / 'memory' / 'c00' / f'new-{stamp}.md')):
            word, rel = f'{kind}{stamp}word', path.relative_to(tmp / 'ws').as_posix()
            with path.open('a', encoding='utf-8') as file:
                file.write(f'\n{word} appears here\n')
            started, slowest = time.perf_counter(), 0.0
            while time.perf_counter() - started < 60:
                began = time.perf_counter()
                index.search(word)
                slowest = max(slowest, time.perf_counter() - began)
                if any(chunk.path == rel for chunk in index.store.chunks([i for i, _ in index.index.search(word, 5)])):
                    break
                time.sleep(0.05)
            out[f'{kind}_found_s'] = round(time.perf_counter() - started, 2)
            out[f'{kind}_slowest_search_ms'] = round(1000 * slowest, 1)
        index.stop_watching()
    return out


STAGES = ('syncWaitMs', 'embedMs', 'keywordMs', 'vectorMs', 'pathMs', 'mergeMs')
"""The stages a search reports in ``debug``, timed per query."""


def timed_searches(index: memsift.MemoryIndex, queries: list[str]) -> dict:
    """Each query once after 5 warm-up searches: the first search's time (a new process's first answer), p50 / p95 /
    p99 / max of the whole search (ms), how many waited for a sync and how many answered while one ran, and p50 /
    p95 / max of each stage that took time."""
    started = time.perf_counter()
    index.search(queries[0])
    first = round(1000 * (time.perf_counter() - started), 1)
    for q in queries[1:5]:
        index.search(q)
    totals, stages, waited, syncing = [], {stage: [] for stage in STAGES}, 0, 0
    for q in queries:
        started = time.perf_counter()
        debug = index.search(q).debug
        totals.append(1000 * (time.perf_counter() - started))
        for stage, times in stages.items():
            times.append(float(debug.get(stage, 0.0)))
        waited += 'syncWaitMs' in debug
        syncing += bool(debug.get('syncing'))
    return {
        'first_search_ms': first,
        **percentiles(totals),
        'waited_for_sync': waited,
        'answered_while_syncing': syncing,
        'stages': {stage: percentiles(times, (50, 95)) for stage, times in stages.items() if any(times)},
    }


def percentiles(times: list[float], at: Sequence[int] = (50, 95, 99)) -> dict[str, float]:
    """``p<k>_ms`` for each k and ``max_ms`` of ``times`` (ms)."""
    return {
        **{f'p{k}_ms': round(float(np.percentile(times, k)), 2) for k in at},
        'max_ms': round(max(times), 2),
    }


if __name__ == '__main__':
    sys.exit(main())
