"""The PostgreSQL backend against the SQLite one, measured in the same run (issue 18's numbers).

Sections:
    1. Sync speed: the SciFact notes (one note per document, ~8.9k chunks) indexed keyword-only into an empty store,
       SQLite file vs PostgreSQL database; chunks/s and the ratio (bar: PostgreSQL >= 1/3 of SQLite).
    2. Many processes: a workspace of ~100k chunks (the SciFact notes repeated), then for ``--seconds`` (default 300)
       four search processes and one writer on one store. Each search process has its own derived indexes (as on
       four hosts; on SQLite they share the file and its folders, as processes of one host do). Searchers loop over
       the SciFact queries (timed: p50/p95) and, between queries, look for the writer's newest marker note; the
       writer adds a note with a unique marker word every ``--write-every`` seconds and records when its sync
       returned. Visibility lag = when a searcher first found a marker - when its write committed. Reports search
       p50 per backend and the ratio (bar: <= 1.5x), the lag distribution (bar: every write visible within 1 s)
       and errors (bar: none).
    3. Where the keyword leg runs: memsift's BM25 (tantivy, local to each process) against the same leg pushed into
       PostgreSQL (a ``tsvector`` of memsift's own analyzer tokens, GIN index, ``ts_rank`` / ``ts_rank_cd`` over an
       OR of the query's tokens): nDCG@10 on SciFact, and query p50 at ~100k chunks.
    4. A new host: the ~100k-chunk workspace indexed by one process with ``store.snapshots.path`` set (it publishes
       a snapshot), then a fresh process on a host with no derived indexes, timed from opening the index to its
       first answer: rebuilding from the database, then starting from the snapshot; whether both answer 20 SciFact
       queries identically.
    5. Read replicas: a streaming replica of the server (``pg_basebackup`` + a hot standby), four searchers with
       ``store.readDsn`` pointing at it and one writer, for ``--seconds``; halfway through the primary is crashed
       (``pg_ctl -m immediate``), kept down 2 s and restarted. Reports the searches' reads served by the replica and
       by the primary, search p50/p95, write->visible p50/p95 (as section 2), the replication lag (each write's
       commit until the replica has replayed its generation, and PostgreSQL's own ``replay_lag``), search errors
       (bar: none) and the writer's syncs refused while the primary was down (retried).

Both backends use the same deterministic 384-dimension embedder (token hashes), so hybrid search runs its vector
leg and vectors are stored, caught up and searched at full size, without a model's minutes of embedding dominating;
query embedding is then nearly free, which makes the store's own overhead the larger share of each search.

PostgreSQL: a server from Debian's packages started in a temporary folder (tests/pgserver.py), fsync on.

    python benches/postgres.py [--data-root ../shared/data] [--seconds 300] [--quick] [--sections 1,2,3,4,5]
        [--backends sqlite,postgres] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

import _beir  # noqa: E402
import _notes  # noqa: E402
import pgserver  # noqa: E402

import memsift  # noqa: E402

DIMS = 384


class HashingEmbedder:
    """Deterministic bag-of-token-hashes vectors: real sizes, no model."""

    id = 'bench-hash'
    model = 'hash-384'
    dims = DIMS

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(DIMS, dtype=np.float32)
        for token in memsift.tokenize(text):
            vec[int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), 'little') % DIMS] += 1.0
        return vec

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, DIMS), dtype=np.float32)


def probe_word(n: int) -> str:
    """The writer's n-th marker: letters only (the analyzer splits letters from digits), found in no other note."""
    letters = ''.join(chr(ord('a') + (n // 26**k) % 26) for k in range(4))
    return f'zqprobe{letters}'


def config(backend: str, state: Path, dsn: str | None, read_dsn: str | None = None, **search) -> dict:
    store = {'path': str(state / '{agentId}.sqlite')}
    if backend == 'postgres':
        store |= {'backend': 'postgres', 'dsn': dsn}
    if read_dsn:
        store['readDsn'] = read_dsn
    return {'agents': {'defaults': {'memorySearch': {'store': store, 'cache': {'enabled': False}, **search}}}}


# ---------------------------------------------------------------- 1. sync speed


def bench_sync(notes: list[tuple[str, str]], root: Path, dsn: str) -> dict:
    one_copy = sum(len(memsift.chunk_markdown(text, 400, 80)) for _, text in notes)
    ws = _notes.write_workspace(root / 'sync-ws', notes, one_copy)
    out = {'chunks': ws.chunks, 'files': ws.files}
    for backend in ('sqlite', 'postgres'):
        with memsift.MemoryIndex(ws.root, config(backend, root / f'sync-{backend}', dsn)) as index:
            started = time.perf_counter()
            report = index.sync()
            seconds = time.perf_counter() - started
        out[backend] = {'seconds': round(seconds, 2), 'chunksPerS': round(report.chunks_written / seconds, 1)}
        print(f'  sync {backend:8} {report.chunks_written:,} chunks in {seconds:.1f} s', flush=True)
    out['ratio'] = round(out['postgres']['chunksPerS'] / out['sqlite']['chunksPerS'], 3)
    return out


# ---------------------------------------------------------------- 2. many processes


def searcher(
    n: int,
    backend: str,
    ws: str,
    state: str,
    dsn: str | None,
    queries: list[str],
    stop,
    out,
    read_dsn: str | None = None,
) -> None:
    """Search until ``stop`` (a shared time, 0 until the run starts): timed queries, and between them a probe for the
    writer's next marker. Searches before the run starts warm up and are not counted."""
    cfg = config(backend, Path(state), dsn, read_dsn, sync={'onSearch': False, 'watch': False})
    times, found, errors = [], {}, []
    index = memsift.MemoryIndex(ws, cfg, provider=HashingEmbedder())
    index.search('warm up')  # opening: local indexes built or loaded
    out.put(('ready', n, None))
    marker, i = 0, 0
    while stop.value == 0 or time.time() < stop.value:
        query = queries[i % len(queries)]
        i += 1
        counted = stop.value > 0
        try:
            started = time.perf_counter()
            index.search(query)
            if counted:
                times.append(time.perf_counter() - started)
            while True:  # every marker already written counts as found now
                word = probe_word(marker)
                if not any(word in hit.snippet for hit in index.search(word).results):
                    break
                found[marker] = time.time()
                marker += 1
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors.append(f'{type(exc).__name__}: {exc}')
    replica = index.status()['replica']
    index.close()
    out.put(
        (
            'done',
            n,
            {'times': times, 'found': found, 'errors': errors[:20], 'errorCount': len(errors), 'replica': replica},
        )
    )


def replayed_after(read_dsn: str, agent: str, generation: int, committed: float) -> float | None:
    """Seconds from ``committed`` until the replica at ``read_dsn`` has replayed ``generation`` (None: not in 10 s)."""
    import psycopg

    with psycopg.connect(read_dsn, autocommit=True) as conn:
        while time.time() - committed < 10:
            rows = conn.execute('SELECT generation FROM memory_agents WHERE agent = %s', (agent,)).fetchall()
            if rows and rows[0][0] >= generation:
                return time.time() - committed
            time.sleep(0.001)
    return None


def writer(
    backend: str,
    ws: str,
    state: str,
    dsn: str | None,
    every: float,
    stop_at: float,
    out: mp.Queue,
    read_dsn: str | None = None,
) -> None:
    cfg = config(backend, Path(state), dsn, sync={'onSearch': False, 'watch': False})
    committed, errors, replicated = {}, [], []
    with memsift.MemoryIndex(ws, cfg, provider=HashingEmbedder()) as index:
        marker = 0
        while time.time() < stop_at - 2:
            due = time.time() + every
            note = Path(ws) / 'memory' / 'live' / f'probe-{marker:05d}.md'
            note.parent.mkdir(parents=True, exist_ok=True)
            # The word many times: the note's vector is then the word's own, so the note leads a search for it
            # whatever other notes share the word's hash bucket.
            note.write_text(f'# probe\n\n{(probe_word(marker) + " ") * 30}written by the bench writer\n')
            try:
                report = index.sync()
                committed[marker] = time.time()
                marker += 1
            except Exception as exc:  # noqa: BLE001 - counted and reported
                errors.append(f'{type(exc).__name__}: {exc}')
                time.sleep(0.2)  # the primary is away: try the same note again soon
                continue
            if read_dsn:  # the replication lag of this write: its commit until the replica replayed it
                with contextlib.suppress(Exception):
                    replicated.append(replayed_after(read_dsn, 'main', report.generation, committed[marker - 1]))
            time.sleep(max(0.0, due - time.time()))
    out.put(
        (
            'writer',
            0,
            {'committed': committed, 'errors': errors[:20], 'errorCount': len(errors), 'replicated': replicated},
        )
    )


def bench_processes(backend: str, ws: Path, root: Path, dsn: str | None, queries: list[str], seconds: float) -> dict:
    """Four searchers and a writer on one store for ``seconds``."""
    ctx = mp.get_context('spawn')
    out: mp.Queue = ctx.Queue()
    shared_state = root / f'state-{backend}'
    with memsift.MemoryIndex(ws, config(backend, shared_state, dsn), provider=HashingEmbedder()) as index:
        started = time.perf_counter()
        report = index.sync()
        print(
            f'  {backend}: indexed {report.chunks_written:,} chunks in {time.perf_counter() - started:.0f} s',
            flush=True,
        )
    stop = ctx.Value('d', 0.0)
    states = [shared_state if backend == 'sqlite' else root / f'state-{backend}-host{n}' for n in range(4)]
    procs = [
        ctx.Process(target=searcher, args=(n, backend, str(ws), str(states[n]), dsn, queries, stop, out))
        for n in range(4)
    ]
    for p in procs:
        p.start()
    ready_started = time.perf_counter()
    for _ in procs:
        kind, n, _ = out.get(timeout=1800)
        assert kind == 'ready', kind
    ready_s = time.perf_counter() - ready_started
    print(f'  {backend}: 4 searchers ready in {ready_s:.0f} s (their indexes built or loaded)', flush=True)
    stop_at = time.time() + seconds  # the run proper: searchers and the writer stop together
    stop.value = stop_at
    write_proc = ctx.Process(target=writer, args=(backend, str(ws), str(shared_state), dsn, WRITE_EVERY, stop_at, out))
    write_proc.start()
    results, written, times, lags = gather(out, [*procs, write_proc], seconds)
    measured = [lag for lag in lags if lag is not None]
    return {
        'searchers': 4,
        'readyS': round(ready_s, 1),
        'searches': len(times),
        'p50Ms': round(statistics.median(times) * 1000, 2),
        'p95Ms': round(float(np.percentile(times, 95)) * 1000, 2),
        'writes': len(written['committed']),
        'visibility': {
            'probes': len(lags),
            'missed': sum(lag is None for lag in lags),
            'p50Ms': round(statistics.median(measured) * 1000, 1) if measured else None,
            'p95Ms': round(float(np.percentile(measured, 95)) * 1000, 1) if measured else None,
            'maxMs': round(max(measured) * 1000, 1) if measured else None,
            'within1s': round(sum(lag <= 1.0 for lag in measured) / max(1, len(lags)), 4),
        },
        'errors': sum(r['errorCount'] for r in results) + written['errorCount'],
        'errorSamples': [e for r in results for e in r['errors']][:5] + written['errors'][:5],
    }


WRITE_EVERY = 1.0


def gather(out: mp.Queue, procs: list, seconds: float) -> tuple[list[dict], dict, list[float], list[float | None]]:
    """The four searchers' results and the writer's, once all have reported (then joined): also every search's
    seconds, and for each write and searcher how long after its commit the searcher found it (``None``: never)."""
    results, written = [], {}
    for _ in procs:
        kind, _, data = out.get(timeout=seconds + 3600)
        if kind == 'writer':
            written = data
        else:
            results.append(data)
    for proc in procs:
        proc.join(timeout=60)
    times = [t for r in results for t in r['times']]
    lags = [
        None if (seen := r['found'].get(marker)) is None else seen - at
        for marker, at in written['committed'].items()
        for r in results
    ]
    return results, written, times, lags


def _ms(values: list[float]) -> dict:
    """p50 / p95 / max of seconds, in ms."""
    if not values:
        return {'p50Ms': None, 'p95Ms': None, 'maxMs': None}
    return {
        'p50Ms': round(statistics.median(values) * 1000, 1),
        'p95Ms': round(float(np.percentile(values, 95)) * 1000, 1),
        'maxMs': round(max(values) * 1000, 1),
    }


# ---------------------------------------------------------------- 5. read replicas


def bench_replicas(ws: Path, root: Path, pg: pgserver.Server, queries: list[str], seconds: float) -> dict:
    """Four searchers reading from a streaming replica and a writer for ``seconds``; the primary crashes and
    restarts once halfway."""
    import psycopg

    dsn = pg.create_database('replicas')
    with pg.standby() as standby:
        read_dsn = standby.dsn('replicas')
        with memsift.MemoryIndex(ws, config('postgres', root / 'state-replica', dsn), provider=HashingEmbedder()) as ix:
            started = time.perf_counter()
            report = ix.sync()
            print(f'  indexed {report.chunks_written:,} chunks in {time.perf_counter() - started:.0f} s', flush=True)
        standby.wait_replayed(pg, timeout=600)
        ctx = mp.get_context('spawn')
        out: mp.Queue = ctx.Queue()
        stop = ctx.Value('d', 0.0)
        procs = [
            ctx.Process(
                target=searcher,
                args=(n, 'postgres', str(ws), str(root / f'state-replica-host{n}'), dsn, queries, stop, out, read_dsn),
            )
            for n in range(4)
        ]
        for p in procs:
            p.start()
        for _ in procs:
            kind, n, _ = out.get(timeout=1800)
            assert kind == 'ready', kind
        stop_at = time.time() + seconds
        stop.value = stop_at
        write_proc = ctx.Process(
            target=writer,
            args=('postgres', str(ws), str(root / 'state-replica'), dsn, WRITE_EVERY, stop_at, out, read_dsn),
        )
        write_proc.start()
        restart_at, restarted, replay_lags = time.time() + seconds / 2, None, []
        while time.time() < stop_at:  # PostgreSQL's own view of the replica's lag, and the restart halfway
            if restarted is None and time.time() >= restart_at:
                down = time.time()
                pg.stop(immediate=True)
                time.sleep(2.0)
                pg.start()
                restarted = {'downS': round(time.time() - down, 2), 'atS': round(down - (stop_at - seconds), 1)}
                print(f'  primary crashed and restarted: down {restarted["downS"]} s', flush=True)
            with contextlib.suppress(psycopg.Error), psycopg.connect(pg.dsn(), autocommit=True) as conn:
                rows = conn.execute('SELECT EXTRACT(epoch FROM replay_lag)::float8 FROM pg_stat_replication').fetchall()
                replay_lags += [float(r[0]) for r in rows if r[0] is not None]
            time.sleep(0.5)
        results, written, times, lags = gather(out, [*procs, write_proc], seconds)
    measured = [lag for lag in lags if lag is not None]
    replicated = [lag for lag in written['replicated'] if lag is not None]
    return {
        'searchers': 4,
        'searches': len(times),
        'p50Ms': round(statistics.median(times) * 1000, 2),
        'p95Ms': round(float(np.percentile(times, 95)) * 1000, 2),
        'reads': {
            'replica': sum(r['replica']['replicaReads'] for r in results),
            'primary': sum(r['replica']['primaryReads'] for r in results),
        },
        'writes': len(written['committed']),
        'visibility': {
            'probes': len(lags),
            'missed': sum(lag is None for lag in lags),
            **_ms(measured),
            'within1s': round(sum(lag <= 1.0 for lag in measured) / max(1, len(lags)), 4),
        },
        'replicationLag': {
            'writes': len(replicated),
            'notReplayedIn10s': len(written['replicated']) - len(replicated),
            **_ms(replicated),
        },
        'pgReplayLag': {'samples': len(replay_lags), **_ms(replay_lags)},
        'primaryRestart': restarted,
        'searchErrors': sum(r['errorCount'] for r in results),
        'searchErrorSamples': [e for r in results for e in r['errors']][:5],
        'writesRefusedWhilePrimaryDown': written['errorCount'],
        'writeErrorSamples': written['errors'][:3],
        'warningsAtEnd': [r['replica']['warning'] for r in results if r['replica']['warning']],
    }


# ---------------------------------------------------------------- 4. a new host: rebuild or snapshot


def first_answer(ws: str, state: str, dsn: str, snapshots: str | None, queries: list[str], out: mp.Queue) -> None:
    """A fresh process on a host with no derived indexes: seconds from opening the index to its first answer (the
    rebuild or the snapshot's install and catch-up included), and its answers to ``queries``."""
    started = time.perf_counter()
    cfg = config('postgres', Path(state), dsn, sync={'onSearch': False, 'watch': False})
    if snapshots:
        cfg['memory']['search']['store']['snapshots'] = {'path': snapshots}
    with memsift.MemoryIndex(ws, cfg, provider=HashingEmbedder()) as index:

        def answer(query: str, keyword_only: bool = False) -> list[tuple[str, int, float]]:
            hits = index.search(query, keyword_only=keyword_only).results
            return [(h.path, h.start_line, round(h.score, 6)) for h in hits]

        first = answer(queries[0])
        seconds = time.perf_counter() - started
        out.put({
            'seconds': seconds,
            'answers': [first, *(answer(q) for q in queries[1:])],
            'keyword': [answer(q, keyword_only=True) for q in queries],
            'snapshot': index.status()['snapshot'],
        })  # fmt: skip


def bench_new_host(ws: Path, root: Path, dsn: str, queries: list[str]) -> dict:
    """Index with snapshots on (one published), then a new host's first answer without and with the snapshot."""
    snapshots = root / 'snapshots'
    cfg = config('postgres', root / 'state-publisher', dsn)
    cfg['memory']['search']['store']['snapshots'] = {'path': str(snapshots)}
    with memsift.MemoryIndex(ws, cfg, provider=HashingEmbedder()) as index:
        started = time.perf_counter()
        report = index.sync()
        print(f'  indexed {report.chunks_written:,} chunks in {time.perf_counter() - started:.0f} s, snapshot '
              f'{index.status()["snapshot"]["published"]} published', flush=True)  # fmt: skip
    ctx = mp.get_context('spawn')
    runs = {}
    for name, folder in (('rebuild', None), ('rebuild again', None), ('snapshot', str(snapshots))):
        out: mp.Queue = ctx.Queue()
        proc = ctx.Process(target=first_answer, args=(str(ws), str(root / f'state-new-{name.replace(" ", "-")}'),
                                                      dsn, folder, queries[:20], out))  # fmt: skip
        proc.start()
        runs[name] = out.get(timeout=1800)
        proc.join(timeout=60)
        print(f'  a new host, {name}: first answer in {runs[name]["seconds"]:.2f} s', flush=True)

    def same(a: str, b: str, part: str) -> int:
        return sum(x == y for x, y in zip(runs[a][part], runs[b][part]))

    n = len(runs['rebuild']['answers'])
    return {
        'rebuildS': round(runs['rebuild']['seconds'], 2),
        'snapshotS': round(runs['snapshot']['seconds'], 2),
        'loaded': runs['snapshot']['snapshot']['loaded'],
        'queries': n,
        # Hybrid answers agree where the vector leg is exact; above 20k vectors it is HNSW, whose graph two
        # builds of the same vectors do not share, so two rebuilds differ too.
        'hybridSameAsRebuild': {'snapshot': same('snapshot', 'rebuild', 'answers'),
                                'rebuildAgain': same('rebuild again', 'rebuild', 'answers')},
        'keywordSameAsRebuild': same('snapshot', 'rebuild', 'keyword'),
    }  # fmt: skip


# ---------------------------------------------------------------- 3. keyword leg: local BM25 or PostgreSQL


def _tsvector(tokens: list[str]) -> str:
    """A tsvector literal of analyzer tokens with their positions, so PostgreSQL never splits them again."""
    positions: dict[str, list[int]] = {}
    for at, token in enumerate(tokens[:16383], 1):
        positions.setdefault(token, []).append(at)
    quote = lambda t: "'" + t.replace('\\', '\\\\').replace("'", "''") + "'"  # noqa: E731
    return ' '.join(f'{quote(t)}:{",".join(map(str, p[:256]))}' for t, p in positions.items() if len(t.encode()) < 2047)


def _tsquery(tokens: list[str]) -> str | None:
    quoted = sorted({"'" + t.replace('\\', '\\\\').replace("'", "''") + "'" for t in tokens})
    return ' | '.join(quoted) or None


def bench_keyword_leg(data: _beir.Dataset, dsn: str, copies: int) -> dict:
    """nDCG@10 on one copy of SciFact, then query p50 with ``copies`` copies (~100k documents), for memsift's BM25
    and for PostgreSQL's two rank functions over the same analyzer tokens."""
    import psycopg

    tokenize = memsift.Analyzer().tokenize
    docs = [tokenize(doc) for doc in data.docs]
    bm25 = memsift.Bm25Index()
    ranks = {'ts_rank': 'ts_rank(tsv, q, 1)', 'ts_rank_cd': 'ts_rank_cd(tsv, q, 1)'}
    out: dict = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute('CREATE TABLE kw (id BIGINT PRIMARY KEY, doc INTEGER NOT NULL, tsv TSVECTOR NOT NULL)')
        conn.execute('CREATE INDEX kw_tsv ON kw USING GIN (tsv)')

        def load(copy_numbers: range) -> None:
            with conn.cursor().copy('COPY kw (id, doc, tsv) FROM STDIN') as copy:
                for c in copy_numbers:
                    for i, tokens in enumerate(docs):
                        copy.write_row((c * len(docs) + i, i, _tsvector(tokens)))
            for c in copy_numbers:
                ids = list(range(c * len(docs), (c + 1) * len(docs)))
                bm25.add(ids, list(data.doc_ids), ['memory'] * len(docs), data.docs)
            bm25.commit()
            conn.execute('VACUUM ANALYZE kw')

        def measure() -> tuple[dict[str, dict[str, list[str]]], dict[str, float]]:
            runs: dict[str, dict[str, list[str]]] = {'memsift BM25': {}, **{name: {} for name in ranks}}
            times: dict[str, list[float]] = {name: [] for name in runs}
            for qid, text in data.queries:
                started = time.perf_counter()
                hits = bm25.search(text, 10)
                times['memsift BM25'].append(time.perf_counter() - started)
                runs['memsift BM25'][qid] = [data.doc_ids[int(i) % len(docs)] for i, _ in hits]
                query = _tsquery(tokenize(text))
                for name, rank in ranks.items():
                    started = time.perf_counter()
                    sql = f'SELECT doc FROM kw, to_tsquery(%s) q WHERE tsv @@ q ORDER BY {rank} DESC, id LIMIT 10'
                    rows = [] if query is None else conn.execute(sql, (query,)).fetchall()
                    times[name].append(time.perf_counter() - started)
                    runs[name][qid] = [data.doc_ids[r[0]] for r in rows]
            return runs, {name: round(statistics.median(t) * 1000, 2) for name, t in times.items()}

        load(range(1))
        runs, small = measure()
        load(range(1, copies))
        _, large = measure()
        for name, run in runs.items():
            ndcg = _beir.evaluate(run, data.qrels)['ndcg@10']
            out[name] = {'ndcg@10': ndcg, 'p50Ms': small[name], 'p50MsLarge': large[name]}
            print(f'  {name:13} nDCG@10 {ndcg:.4f}  p50 {small[name]:.2f} ms at {len(docs):,} docs, '
                  f'{large[name]:.2f} ms at {copies * len(docs):,}', flush=True)  # fmt: skip
    out['docs'], out['docsLarge'] = len(docs), copies * len(docs)
    return out


def main() -> None:
    global WRITE_EVERY
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT)
    parser.add_argument('--seconds', type=float, default=300.0, help='length of the many-process run per backend')
    parser.add_argument('--chunks', type=int, default=100_000, help='workspace size for the many-process run')
    parser.add_argument('--write-every', type=float, default=1.0, help="seconds between the writer's notes")
    parser.add_argument('--quick', action='store_true', help='20k chunks, 60 s runs')
    parser.add_argument('--sections', default='1,2,3,4,5')
    parser.add_argument('--backends', default='sqlite,postgres', help='the backends section 2 runs, in turn')
    parser.add_argument('--json', type=Path, help='write the figures here')
    args = parser.parse_args()
    WRITE_EVERY = args.write_every
    if args.quick:
        args.chunks, args.seconds = 20_000, 60.0
    reason = pgserver.unavailable()
    if reason:
        _beir.fail(reason)
    data = _beir.load_dataset(args.data_root / 'scifact')
    notes = _notes.scifact_notes(data)
    queries = [text for _, text in data.queries]
    figures: dict = {}
    with (
        tempfile.TemporaryDirectory(prefix='memsift-pg-bench-') as tmp,
        pgserver.Server(settings={'fsync': 'on'}) as pg,
    ):
        root = Path(tmp)
        if '1' in args.sections:
            print('1. sync speed (SciFact notes, keyword-only)', flush=True)
            figures['sync'] = bench_sync(notes, root, pg.create_database('sync'))
            print(f'  PostgreSQL / SQLite: {figures["sync"]["ratio"]:.2f}', flush=True)
        if '2' in args.sections:
            print(f'2. four searchers + one writer at ~{args.chunks:,} chunks, {args.seconds:.0f} s each', flush=True)
            ws = _notes.write_workspace(root / 'big-ws', notes, args.chunks, mark_copies=True)
            dsn = pg.create_database('processes')
            figures['processes'] = {'chunks': ws.chunks}
            for backend in args.backends.split(','):
                run = bench_processes(backend, ws.root, root, dsn, queries, args.seconds)
                figures['processes'][backend] = run
                print(f'  {backend}: {json.dumps(run)}', flush=True)
                for probe in (ws.root / 'memory' / 'live').glob('*.md'):  # the next backend starts from the same notes
                    probe.unlink()
            if {'sqlite', 'postgres'} <= figures['processes'].keys():
                lite, pgr = figures['processes']['sqlite'], figures['processes']['postgres']
                figures['processes']['p50Ratio'] = round(pgr['p50Ms'] / lite['p50Ms'], 3)
                print(f'  search p50 PostgreSQL / SQLite: {figures["processes"]["p50Ratio"]:.2f}', flush=True)
        if '4' in args.sections:
            print(f'4. a new host at ~{args.chunks:,} chunks: rebuild or snapshot', flush=True)
            ws = _notes.write_workspace(root / 'snapshot-ws', notes, args.chunks, mark_copies=True)
            figures['newHost'] = bench_new_host(ws.root, root, pg.create_database('newhost'), queries)
            print(f'  {json.dumps(figures["newHost"])}', flush=True)
        if '5' in args.sections:
            print(
                f'5. read replicas: four searchers on a streaming replica + one writer at ~{args.chunks:,} chunks, '
                f'{args.seconds:.0f} s, the primary restarted once',
                flush=True,
            )
            ws = _notes.write_workspace(root / 'replica-ws', notes, args.chunks, mark_copies=True)
            figures['replicas'] = bench_replicas(ws.root, root, pg, queries, args.seconds)
            print(f'  {json.dumps(figures["replicas"])}', flush=True)
        if '3' in args.sections:
            copies = max(1, round(args.chunks / len(data.docs)))
            print(f'3. the keyword leg at ~{copies * len(data.docs):,} documents: local BM25 or PostgreSQL', flush=True)
            figures['keywordLeg'] = bench_keyword_leg(data, pg.create_database('keyword'), copies)
    figures['machine'] = {'cpus': os.cpu_count(), 'python': sys.version.split()[0]}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == '__main__':
    main()
