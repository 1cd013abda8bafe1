"""Speed of memsift against common peers, measured in the same run; prints ratio tables (or JSON).

Sections:
    1. Tokenizer throughput on one core (MB/s of UTF-8 input): English (scifact) vs a Python regex,
       Chinese (cmrc2018) vs jieba.lcut.
    2. BM25 on SciFact: build (docs/s) and top-10 query (queries/s) vs bm25s and SQLite FTS5,
       with each engine's nDCG@10 next to its speed.
    3. Vectors: exact top-10 (f32, f16, i8) vs numpy on random unit vectors, then HNSW (ANN) vs exact.
    4. Memory index end to end: memsift.MemoryIndex on workspaces of SciFact notes (~10k and ~100k chunks) vs an
       OpenClaw-architecture baseline (SQLite + FTS5 + sqlite-vec through apsw): index build MB/s, sync with nothing
       changed, FTS-only and hybrid search p50/p95, and the `memsift search` CLI wall time. Latencies are shown as
       rates (queries/s = 1 / latency at that percentile) so every ratio stays higher-is-better; the check column
       has the milliseconds. Needs apsw and sqlite-vec for the baseline rows (skipped with a message otherwise).
    5. Embedding provider indexing: memsift.MemoryIndex with the openai-compatible provider against a loopback
       OpenAI-compatible embeddings server started by the script, on ~10k chunks of SciFact notes, vs the same
       OpenClaw-architecture baseline embedding through the same server (4 files at a time, requests per file):
       cold index chunks/s and requests/s (0 ms and 20 ms of server latency per request), re-index after editing
       one note (inputs re-embedded) and full re-index with the embedding cache warm (no input should be sent).
    6. Session transcripts: memsift.SessionStore vs an OpenClaw-style sessions index in SQLite (an events table, an
       FTS5 table with tokenize='unicode61 remove_diacritics 2', and OpenClaw's active-event and index-state rows
       written in the same transaction), both WAL + synchronous=NORMAL. Append
       throughput (messages/s, each message and its index row in one transaction) of SciFact texts in sessions of
       200 messages, empty store -> ~100k messages (--quick: ~20k); search p50 with AND-of-terms semantics on 200
       SciFact queries at that size and, with --long, at 1M messages (the extra 900k are added in large
       transactions: memsift's through SessionStore.append_many, one per session); Recall@10 on
       CMRC2018 (Chinese passages as assistant messages; all questions, --quick: 500), each question posed raw and
       as jieba keywords (words of 2+ characters joined by spaces) to both engines.
    7. MCP round trip: `memsift mcp` over stdio, driven by the official MCP SDK client, on a ~10k-chunk workspace of
       SciFact notes (FTS-only; --quick: ~5k chunks, 100 queries): memory_search p50/p95 over 200 SciFact queries
       (per-query best of 3 passes, after a warm-up pass) vs the same MemoryTools.memory_search called in-process,
       so the ratio is the share of the latency left after the protocol (JSON-RPC, pipes, the server's thread hop);
       plus the time from starting the server process to its first answer.

Every ratio is memsift / peer of a higher-is-better rate, so > 1 means memsift is faster.
Run from the repository root (unset the OpenBLAS overrides of this machine so numpy is not handicapped):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benches/speed.py [--quick] [--json] [--sections 1,4]
"""

import argparse
import collections
import functools
import hashlib
import http.server
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import _beir
import bm25s
import httpx
import jieba
import numpy as np
from _notes import MB, NOTE_MTIME, scifact_notes, write_workspace

import memsift

REPS = 3
LATIN_GOAL_MBS = 100.0
CJK_GOAL_MBS = 50.0
WORD = re.compile(r'\w+')
T = TypeVar('T')


@dataclass
class Row:
    """One measured comparison: memsift's rate against a peer's rate (same unit, higher is better)."""

    section: str
    task: str
    unit: str
    memsift: float
    peer: str = ''
    peer_value: float | None = None
    check: str = ''

    @property
    def ratio(self) -> float | None:
        """memsift / peer, or None without a peer."""
        return self.memsift / self.peer_value if self.peer_value else None


def log(message: str) -> None:
    """Progress message on stderr (stdout stays clean for the table or JSON)."""
    print(message, file=sys.stderr, flush=True)


def best_time(fn: Callable[[], T], reps: int = REPS) -> tuple[float, T]:
    """Best wall time of ``reps`` (>= 1) calls of ``fn`` (time.perf_counter) and the last call's result."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


# ---------------------------------------------------------------- 1. tokenizer


def take_bytes(texts: list[str], limit: float) -> list[str]:
    """Leading ``texts`` whose UTF-8 size (counting a joining newline each) stays within ``limit`` bytes."""
    taken, size = [], 0
    for text in texts:
        size += len(text.encode()) + 1
        if size > limit:
            break
        taken.append(text)
    return taken


def regex_tokenize(text: str) -> list[str]:
    """The Python baseline tokenizer."""
    return WORD.findall(text.lower())


def throughput(fn: Callable[[str], object], texts: list[str], reps: int = REPS) -> float:
    """MB/s of ``fn`` applied to each of ``texts`` in a loop."""
    size = sum(len(t.encode()) for t in texts)
    seconds, _ = best_time(lambda: [fn(t) for t in texts], reps)
    return size / MB / seconds


def mb(texts: list[str]) -> str:
    """UTF-8 size of ``texts`` as ``'x.y MB'``."""
    return f'{sum(len(t.encode()) for t in texts) / MB:.1f} MB'


def bench_tokenizer(data_root: Path, scale: float) -> tuple[list[Row], list[str]]:
    """Section 1 rows and goal lines: memsift.tokenize / count_tokens vs regex (English), vs jieba (Chinese)."""
    section = '1. Tokenizer, one core (MB/s of UTF-8)'
    english = take_bytes(_beir.load_dataset(data_root / 'scifact').docs, 8 * MB * scale)
    corpus = _beir.read_jsonl(data_root / 'cmrc2018' / 'corpus.jsonl')
    chinese = take_bytes([d['text'] for d in corpus], 1.5 * MB * scale)
    jieba.setLogLevel(60)
    jieba.initialize()
    count_tokens = memsift.Analyzer().count_tokens

    rows = []
    for label, texts in ((f'{len(english)} docs', english), ('one string', ['\n'.join(english)])):
        log(f'tokenizer: English, {label}')
        regex = throughput(regex_tokenize, texts)
        rows.append(
            Row(
                section,
                f'EN tokenize, {label}',
                'MB/s',
                throughput(memsift.tokenize, texts),
                're \\w+ lower',
                regex,
                f'input {mb(texts)}',
            )
        )
        rows.append(
            Row(
                section,
                f'EN count_tokens, {label}',
                'MB/s',
                throughput(count_tokens, texts),
                're \\w+ lower',
                regex,
                f'input {mb(texts)}',
            )
        )
    # The goals are about the analyzer; `tokenize` also pays for one Python str per token.
    latin = rows[1]
    for label, texts in ((f'{len(chinese)} docs', chinese), ('one string', ['\n'.join(chinese)])):
        log(f'tokenizer: Chinese, {label}')
        jieba_mbs = throughput(jieba.lcut, texts, reps=1)
        rows.append(
            Row(
                section,
                f'ZH tokenize, {label}',
                'MB/s',
                throughput(memsift.tokenize, texts),
                'jieba.lcut',
                jieba_mbs,
                f'input {mb(texts)}',
            )
        )
        rows.append(
            Row(
                section,
                f'ZH count_tokens, {label}',
                'MB/s',
                throughput(count_tokens, texts),
                'jieba.lcut',
                jieba_mbs,
                f'input {mb(texts)}',
            )
        )
    cjk = rows[5]
    goals = [
        goal_line(f'Latin analyzer ({latin.task})', latin.memsift, LATIN_GOAL_MBS),
        goal_line(f'CJK analyzer ({cjk.task})', cjk.memsift, CJK_GOAL_MBS),
    ]
    return rows, goals


def goal_line(what: str, value: float, goal: float) -> str:
    """``goal >= X MB/s: what = Y MB/s -> met|NOT met``."""
    verdict = 'met' if value >= goal else 'NOT met'
    return f'goal >= {goal:.0f} MB/s: {what} = {value:.1f} MB/s -> {verdict}'


# ---------------------------------------------------------------- 2. BM25


def build_memsift(texts: list[str]) -> memsift.Bm25Index:
    """In-RAM memsift BM25 index of ``texts`` (ids = row numbers), committed."""
    index = memsift.Bm25Index(None)
    index.add(list(range(len(texts))), [str(i) for i in range(len(texts))], ['memory'] * len(texts), texts)
    index.commit()
    return index


def build_bm25s(texts: list[str]) -> bm25s.BM25:
    """bm25s index (k1=1.2, b=0.75) over bm25s.tokenize with English stopwords."""
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(texts, stopwords='en', show_progress=False), show_progress=False)
    return retriever


def build_fts5(texts: list[str]) -> sqlite3.Connection:
    """In-memory SQLite FTS5 table ``t(text)`` with rowid = row number, filled in one transaction."""
    conn = sqlite3.connect(':memory:')
    conn.execute('CREATE VIRTUAL TABLE t USING fts5(text)')
    with conn:
        conn.executemany('INSERT INTO t(rowid, text) VALUES (?, ?)', enumerate(texts))
    return conn


def query_memsift(index: memsift.Bm25Index, queries: list[str]) -> list[list[int]]:
    """Top-10 row numbers per query, one memsift search at a time."""
    return [[i for i, _ in index.search(q, k=10)] for q in queries]


def bm25s_hits(docs: np.ndarray, scores: np.ndarray) -> list[int]:
    """Row numbers of one bm25s result row, zero-score padding dropped."""
    return [int(d) for d, s in zip(docs, scores) if s > 0]


def query_bm25s_single(retriever: bm25s.BM25, queries: list[str]) -> list[list[int]]:
    """Top-10 row numbers per query, tokenizing and retrieving one query at a time."""
    run = []
    for q in queries:
        tokens = bm25s.tokenize([q], stopwords='en', return_ids=False, show_progress=False)
        docs, scores = retriever.retrieve(tokens, k=10, show_progress=False)
        run.append(bm25s_hits(docs[0], scores[0]))
    return run


def query_bm25s_batch(retriever: bm25s.BM25, queries: list[str]) -> list[list[int]]:
    """Top-10 row numbers per query, tokenizing and retrieving all queries in one call each."""
    tokens = bm25s.tokenize(queries, stopwords='en', return_ids=False, show_progress=False)
    docs, scores = retriever.retrieve(tokens, k=10, show_progress=False)
    return [bm25s_hits(d, s) for d, s in zip(docs, scores)]


def fts5_match(text: str) -> str:
    """FTS5 OR query of the quoted ``\\w+`` terms of ``text`` (empty if it has none)."""
    return ' OR '.join(f'"{term}"' for term in WORD.findall(text))


def query_fts5(conn: sqlite3.Connection, queries: list[str]) -> list[list[int]]:
    """Top-10 rowids per query ranked by FTS5's bm25()."""
    sql = 'SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10'
    run = []
    for q in queries:
        match = fts5_match(q)
        run.append([rowid for rowid, _ in conn.execute(sql, (match,))] if match else [])
    return run


def ndcg10(data: _beir.Dataset, rows: list[list[int]]) -> float:
    """nDCG@10 of per-query row-number rankings aligned with ``data.queries``."""
    run = {qid: [data.doc_ids[i] for i in ranked] for (qid, _), ranked in zip(data.queries, rows)}
    return _beir.evaluate(run, data.qrels)['ndcg@10']


def bench_bm25(data_root: Path) -> list[Row]:
    """Section 2 rows: build docs/s and top-10 queries/s on SciFact, with nDCG@10 per engine."""
    data = _beir.load_dataset(data_root / 'scifact')
    section = f'2. BM25 on SciFact ({len(data.docs)} docs, {len(data.queries)} test queries, top-10)'
    n_docs, n_queries = len(data.docs), len(data.queries)
    queries = [text for _, text in data.queries]

    log('bm25: build')
    build_s, index = best_time(lambda: build_memsift(data.docs))
    bm25s_build_s, retriever = best_time(lambda: build_bm25s(data.docs))
    fts5_build_s, conn = best_time(lambda: build_fts5(data.docs))
    rows = [
        Row(section, 'build', 'docs/s', n_docs / build_s, 'bm25s tokenize+index', n_docs / bm25s_build_s),
        Row(section, 'build', 'docs/s', n_docs / build_s, 'sqlite FTS5 insert', n_docs / fts5_build_s),
    ]

    log('bm25: query')
    query_s, run = best_time(lambda: query_memsift(index, queries))
    ours = ndcg10(data, run)
    peers = (
        ('bm25s one query at a time', lambda: query_bm25s_single(retriever, queries)),
        ('bm25s batch of all queries', lambda: query_bm25s_batch(retriever, queries)),
        ('sqlite FTS5 OR query', lambda: query_fts5(conn, queries)),
    )
    for name, fn in peers:
        peer_s, peer_run = best_time(fn)
        check = f'nDCG@10 {ours:.4f} vs {ndcg10(data, peer_run):.4f}'
        rows.append(Row(section, 'query', 'queries/s', n_queries / query_s, name, n_queries / peer_s, check))
    # Batch against batch: one call each, all queries.
    batch_s, batch_run = best_time(lambda: [[i for i, _ in hits] for hits in index.search_batch(queries, k=10)])
    bm25s_s, bm25s_run = best_time(lambda: query_bm25s_batch(retriever, queries))
    check = f'nDCG@10 {ndcg10(data, batch_run):.4f} vs {ndcg10(data, bm25s_run):.4f}'
    rows.append(
        Row(
            section,
            'query, batch of all queries',
            'queries/s',
            n_queries / batch_s,
            'bm25s batch',
            n_queries / bm25s_s,
            check,
        )
    )
    return rows


# ---------------------------------------------------------------- 3. vectors


def unit_vectors(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    """``n`` random float32 unit vectors, C-contiguous ``(n, dims)``."""
    m = rng.standard_normal((n, dims), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return np.ascontiguousarray(m)


def numpy_top10(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Exact top-10 row indices by dot product, best first (argpartition then sort)."""
    scores = matrix @ query
    top = np.argpartition(-scores, 10)[:10]
    return top[np.argsort(-scores[top])]


def store_top10(store: memsift.VectorStore, queries: np.ndarray, exact: bool | None) -> list[np.ndarray]:
    """Top-10 ids per query, one VectorStore.search at a time."""
    return [store.search(q, k=10, exact=exact)[0] for q in queries]


def agreement(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    """Mean overlap of the top-10 id sets, in percent (= recall@10 against ``truth`` x 100)."""
    return 100 * float(np.mean([len(set(f.tolist()) & set(t.tolist())) / 10 for f, t in zip(found, truth)]))


def bench_exact(section: str, matrix: np.ndarray, queries: np.ndarray) -> tuple[list[Row], list[np.ndarray]]:
    """Exact VectorStore search (f32, f16, i8) vs numpy, per query; returns the rows and numpy's top-10s."""
    n, dims = matrix.shape
    n_queries = len(queries)
    numpy_s, truth = best_time(lambda: [numpy_top10(matrix, q) for q in queries])
    rows = []
    for dtype in ('f32', 'f16', 'i8'):
        store = memsift.VectorStore(dims, dtype=dtype, ann_threshold=2**62)
        store.add(np.arange(n, dtype=np.uint64), matrix)
        seconds, found = best_time(lambda: store_top10(store, queries, exact=True))
        rows.append(
            Row(
                section,
                f'exact {dtype}, n={n:,}',
                'queries/s',
                n_queries / seconds,
                'numpy f32 M @ q',
                n_queries / numpy_s,
                f'top-10 agree {agreement(found, truth):.1f}%',
            )
        )
    return rows, truth


def build_ann(matrix: np.ndarray, probe: np.ndarray) -> memsift.VectorStore:
    """VectorStore with HNSW active from the first vector, filled with ``matrix`` and searched once (``probe``)."""
    store = memsift.VectorStore(matrix.shape[1], ann_threshold=1)
    store.add(np.arange(len(matrix), dtype=np.uint64), matrix)
    store.search(probe, k=10)
    return store


def bench_ann(
    section: str, matrix: np.ndarray, queries: np.ndarray, truth: list[np.ndarray], exact_qps: float, label: str
) -> list[Row]:
    """HNSW build rate, then HNSW queries/s vs exact f32 and its recall@10 against numpy's exact top-10."""
    n, n_queries = len(matrix), len(queries)
    build_s, store = best_time(lambda: build_ann(matrix, queries[0]), reps=1)
    if not store.ann_active:
        log('warning: VectorStore(ann_threshold=1).ann_active is False after add')
    seconds, found = best_time(lambda: store_top10(store, queries, exact=None))
    return [
        Row(section, f'ANN build (HNSW), n={n:,}, {label}', 'vectors/s', n / build_s, check=f'{build_s:.1f} s'),
        Row(
            section,
            f'ANN f32, n={n:,}, {label}',
            'queries/s',
            n_queries / seconds,
            'memsift exact f32',
            exact_qps,
            f'recall@10 {agreement(found, truth) / 100:.3f}',
        ),
    ]


def clustered_vectors(rng: np.random.Generator, n: int, dims: int, clusters: int = 1000) -> np.ndarray:
    """Unit vectors around ``clusters`` random centres: closer to real embeddings than uniform noise."""
    centres = unit_vectors(rng, clusters, dims)
    points = centres[rng.integers(0, clusters, n)] + 0.04 * rng.standard_normal((n, dims)).astype(np.float32)
    return np.ascontiguousarray(points / np.linalg.norm(points, axis=1, keepdims=True), dtype=np.float32)


def bench_ann_clustered(section: str, rng: np.random.Generator, n: int, n_queries: int, dims: int) -> list[Row]:
    """HNSW on embedding-like (clustered) data; exact f32 speed measured on the same data for the ratio."""
    matrix = clustered_vectors(rng, n + n_queries, dims)
    matrix, queries = np.ascontiguousarray(matrix[:n]), np.ascontiguousarray(matrix[n:])
    truth = [numpy_top10(matrix, q) for q in queries]
    exact = memsift.VectorStore(dims, ann_threshold=2**62)
    exact.add(np.arange(n, dtype=np.uint64), matrix)
    exact_s, _ = best_time(lambda: store_top10(exact, queries, exact=True))
    rows = bench_ann(section, matrix, queries, truth, n_queries / exact_s, 'clustered')
    return rows + bench_ann_tradeoff(section, matrix, queries, truth)


ANN_GRID = ((16, 64), (16, 128), (16, 40), (12, 40), (24, 64))
"""(connectivity, expansion_add) pairs measured; the first is VectorStore's default."""


def bench_ann_tradeoff(section: str, matrix: np.ndarray, queries: np.ndarray, truth: list[np.ndarray]) -> list[Row]:
    """HNSW build rate against recall@10 and queries/s for each (connectivity, expansion_add) of ``ANN_GRID``, then
    saving the default store and loading it back (graph included) against building it again."""
    n, dims = matrix.shape
    ids = np.arange(n, dtype=np.uint64)
    rows, default = [], None
    for connectivity, expansion in ANN_GRID:
        log(f'vectors: HNSW build M={connectivity} ef_add={expansion}, n={n:,}')
        store = memsift.VectorStore(dims, ann_threshold=1, connectivity=connectivity, expansion_add=expansion)
        start = time.perf_counter()
        store.add(ids, matrix)
        build_s = time.perf_counter() - start
        seconds, found = best_time(lambda store=store: store_top10(store, queries, exact=None))
        label = ' (default)' if default is None else ''
        rows.append(
            Row(
                section,
                f'HNSW build M={connectivity} ef_add={expansion}{label}, n={n:,} clustered',
                'vectors/s',
                n / build_s,
                check=f'recall@10 {agreement(found, truth) / 100:.3f}, {len(queries) / seconds:,.0f} q/s, '
                f'{build_s:.1f} s',
            )
        )
        default = default or (store, build_s)
    store, build_s = default
    with tempfile.TemporaryDirectory(prefix='memsift-vectors-') as tmp:
        path = Path(tmp) / 'index.vectors'
        save_s, _ = best_time(lambda: store.save(path, tag=1), reps=1)
        load_s, (loaded, _) = best_time(lambda: memsift.VectorStore.load(path), reps=1)
        same = agreement(store_top10(loaded, queries, exact=None), store_top10(store, queries, exact=None))
        rows.append(
            Row(
                section,
                f'HNSW store loaded from its saved file, n={n:,} clustered',
                'vectors/s',
                n / load_s,
                'building it again',
                n / build_s,
                f'load {load_s:.2f} s, save {save_s:.2f} s, {path.stat().st_size / MB:.0f} MB; same top-10 {same:.0f}%',
            )
        )
    return rows


def bench_vectors(n_sizes: tuple[int, ...], n_queries: int, dims: int = 384) -> list[Row]:
    """Section 3 rows: exact search for every size in ``n_sizes``, then HNSW vs exact on the last size."""
    rng = np.random.default_rng(0)
    queries = unit_vectors(rng, n_queries, dims)
    section = f'3. Vectors ({dims} dims, {n_queries} queries, top-10, random unit vectors)'
    rows: list[Row] = []
    for n in n_sizes:
        log(f'vectors: exact, n={n:,}')
        matrix = unit_vectors(rng, n, dims)
        exact_rows, truth = bench_exact(section, matrix, queries)
        rows += exact_rows
        if n == n_sizes[-1]:
            log(f'vectors: ANN, n={n:,}')
            rows += bench_ann(section, matrix, queries, truth, exact_rows[0].memsift, 'uniform random (worst case)')
            log(f'vectors: ANN, n={n:,}, clustered')
            rows += bench_ann_clustered(section, rng, n, n_queries, dims)
    return rows


# ---------------------------------------------------------------- 4. memory index end to end

MEMORY_SECTION = '4. Memory index end to end (SciFact as Markdown notes; peer: OpenClaw architecture in SQLite)'
MEMORY_SIZES = (10_000, 100_000)
"""Workspace sizes in chunks (``--quick``: the first only)."""
MEMORY_QUERIES = 200
OPENCLAW_MAX_RESULTS = 6
OPENCLAW_MIN_SCORE = 0.35
OPENCLAW_CANDIDATES = 24
"""OpenClaw fetches ``maxResults x candidateMultiplier`` (6 x 4) rows per leg."""
OPENCLAW_VECTOR_WEIGHT, OPENCLAW_TEXT_WEIGHT = 0.7, 0.3
OPENCLAW_SNIPPET_CHARS = 700
OPENCLAW_CLI_NOTE = 'OpenClaw reference (issue): about 4 s per CLI search'
CLI_RUNS = 5
SCAN_QUERIES, SCAN_QUERIES_LARGE = 100, 30
"""Queries timed (one pass) against the baseline's full-scan vector leg on the ~10k and ~100k workspaces."""
OR_QUERIES_LARGE = 50
"""Queries timed (one pass) against the baseline's FTS5 OR variant on the ~100k workspace (~0.1 s each)."""
EMBED_DIMS = 384
EMBED_BUCKETS = 4096
EMBED_SHARED_WEIGHT = 0.8
FTS_TOKEN = re.compile(r'\w+')
"""OpenClaw's ``[\\p{L}\\p{N}_]+``: Python's Unicode ``\\w`` is letters, digits and ``_`` (nearly the same set)."""
EMBED_STOP_WORDS = frozenset(
    [
        'a',
        'an',
        'and',
        'are',
        'as',
        'at',
        'be',
        'by',
        'for',
        'from',
        'has',
        'have',
        'in',
        'is',
        'it',
        'its',
        'of',
        'on',
        'or',
        'that',
        'the',
        'their',
        'this',
        'to',
        'was',
        'were',
        'which',
        'with',
    ]
)

OPENCLAW_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory', hash TEXT NOT NULL,
                    mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'memory',
                     start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL,
                     text TEXT NOT NULL, embedding TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX idx_chunks_path ON chunks(path);
CREATE INDEX idx_chunks_source ON chunks(source);
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, id UNINDEXED, path UNINDEXED, source UNINDEXED, model UNINDEXED,
                                           start_line UNINDEXED, end_line UNINDEXED);
"""
OPENCLAW_INSERT_CHUNK = (
    'INSERT INTO chunks (id, path, source, start_line, end_line, hash, model, text, embedding, updated_at) '
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET hash=excluded.hash, model=excluded.model, '
    'text=excluded.text, embedding=excluded.embedding, updated_at=excluded.updated_at'
)
OPENCLAW_INSERT_FTS = (
    'INSERT INTO chunks_fts (text, id, path, source, model, start_line, end_line) VALUES (?, ?, ?, ?, ?, ?, ?)'
)
OPENCLAW_UPSERT_FILE = (
    'INSERT INTO files (path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET '
    'source=excluded.source, hash=excluded.hash, mtime=excluded.mtime, size=excluded.size'
)
OPENCLAW_KEYWORD_SQL = (
    'SELECT id, path, start_line, end_line, text, bm25(chunks_fts) AS rank FROM chunks_fts '
    'WHERE chunks_fts MATCH ?{model} ORDER BY rank ASC LIMIT ?'
)
OPENCLAW_VECTOR_SCAN_SQL = (
    'SELECT c.id, c.path, c.start_line, c.end_line, c.text, vec_distance_cosine(v.embedding, ?) AS dist '
    'FROM chunks_vec v JOIN chunks c ON c.id = v.id WHERE c.model = ? ORDER BY dist ASC LIMIT ?'
)
OPENCLAW_VECTOR_KNN_SQL = (
    'WITH knn AS (SELECT c.id, c.path, c.start_line, c.end_line, c.text, '
    'vec_distance_cosine(v.embedding, ?) AS dist FROM chunks_vec v JOIN chunks c ON c.id = v.id '
    'WHERE c.model = ? AND v.embedding MATCH ? AND k = ?) '
    'SELECT id, path, start_line, end_line, text, dist FROM knn ORDER BY dist ASC LIMIT ?'
)


def remove_db(db: Path) -> None:
    """Delete a SQLite database with its WAL/journal files, and memsift's BM25 folder beside it."""
    for suffix in ('', '-wal', '-shm', '-journal'):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    shutil.rmtree(db.with_suffix('.bm25'), ignore_errors=True)


def memsift_config(db: Path) -> dict:
    """FTS-only memsift config with its store at ``db`` (everything else OpenClaw's defaults)."""
    return {'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': str(db)}}}}}


class BenchEmbedder:
    """Deterministic embedding provider: hashed bag of words through a fixed random projection.

    Each distinct ``memsift.tokenize`` token of a text (a few English function words left out) picks one of
    4096 rows of a seeded Gaussian ``(4096, 384)`` matrix by crc32; their sum, L2-normalized, plus 0.8 x a fixed
    unit vector shared by all texts, L2-normalized again, is the embedding. The shared part mimics the anisotropy
    of real embedding models: unrelated texts sit near cosine 0.4 and a query's best SciFact chunk near 0.6, so
    OpenClaw's minScore 0.35 on 0.7 x cosine behaves as with a real model (a pure bag of words gives ~0.03 and
    ~0.36, and the baseline would drop almost every hit). A text without such tokens (a chunk that is just ``.``)
    picks a row by the crc32 of the whole text: a zero vector has no cosine distance (sqlite-vec returns NULL).
    Texts that share words get close vectors, and every run gets the same ones. Vectors are memoized by text and the
    bench fills the memo before any timing, so inside a timed loop an embedding costs a dict lookup: the same
    small cost for memsift (which calls ``embed_query`` itself) and the baseline (which calls it too).
    """

    id = 'bench'
    model = 'random-proj-384'
    dims = EMBED_DIMS

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self._projection = rng.standard_normal((EMBED_BUCKETS, EMBED_DIMS), dtype=np.float32)
        shared = rng.standard_normal(EMBED_DIMS, dtype=np.float32)
        self._shared = EMBED_SHARED_WEIGHT * shared / np.linalg.norm(shared)
        self._memo: dict[str, np.ndarray] = {}

    def _embed(self, text: str) -> np.ndarray:
        rows = sorted(
            {zlib.crc32(t.encode()) % EMBED_BUCKETS for t in memsift.tokenize(text) if t not in EMBED_STOP_WORDS}
        ) or [zlib.crc32(text.encode()) % EMBED_BUCKETS]
        vector = self._projection[rows].sum(axis=0)
        vector = vector / np.linalg.norm(vector) + self._shared
        return vector / np.linalg.norm(vector)

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._memo.get(text)
        if vector is None:
            vector = self._memo[text] = self._embed(text)
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts])


class OpenClawBaseline:
    """OpenClaw's builtin memory index, rebuilt in Python on SQLite (apsw) + FTS5 (+ sqlite-vec).

    Mirrors its schema, chunk ids, one transaction per file, the FTS-only keyword query, the hybrid vector leg
    (full ``vec_distance_cosine`` scan joined with ``chunks``, or vec0's ``MATCH ... AND k = ?`` KNN) and the
    0.7/0.3 weighted merge. Chunking is memsift's ``chunk_markdown`` (OpenClaw's algorithm), so only storage,
    index and query differ.
    """

    def __init__(self, apsw: Any, db: Path, vec_extension: str | None = None) -> None:
        remove_db(db)
        self.conn = apsw.Connection(str(db))
        if vec_extension is not None:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(vec_extension)
        # The durability settings of memsift's store, so both pay the same for a commit.
        self.conn.execute('PRAGMA journal_mode = WAL')
        self.conn.execute('PRAGMA synchronous = NORMAL')
        self.conn.execute(OPENCLAW_SCHEMA)
        if vec_extension is not None:
            self.conn.execute(
                f'CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, embedding FLOAT[{EMBED_DIMS}])'
            )

    def build(
        self, workspace: Path, model: str, embedder: BenchEmbedder | None = None, transaction_per_file: bool = True
    ) -> None:
        """Index every ``*.md`` below ``workspace/memory``: read, sha256, chunk, (embed,) insert."""
        conn = self.conn
        if not transaction_per_file:
            conn.execute('BEGIN')
        for path in sorted((workspace / 'memory').rglob('*.md')):
            rel = path.relative_to(workspace).as_posix()
            text = path.read_text(encoding='utf-8')
            stat = path.stat()
            digest = hashlib.sha256(text.encode()).hexdigest()
            chunks = [c for c in memsift.chunk_markdown(text, 400, 80) if c.text.strip()]
            vectors = embedder.embed_documents([c.text for c in chunks]) if embedder is not None and chunks else None
            now = int(time.time() * 1000)
            if transaction_per_file:
                conn.execute('BEGIN')
            for n, chunk in enumerate(chunks):
                chunk_id = hashlib.sha256(
                    f'memory:{rel}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}:{model}'.encode()
                ).hexdigest()
                embedding = '[]' if vectors is None else json.dumps(vectors[n].tolist())
                conn.execute(
                    OPENCLAW_INSERT_CHUNK,
                    (
                        chunk_id,
                        rel,
                        'memory',
                        chunk.start_line,
                        chunk.end_line,
                        chunk.hash,
                        model,
                        chunk.text,
                        embedding,
                        now,
                    ),
                )
                if vectors is not None:
                    conn.execute(
                        'INSERT INTO chunks_vec (id, embedding) VALUES (?, ?)',
                        (chunk_id, vectors[n].astype(np.float32).tobytes()),
                    )
                conn.execute(
                    OPENCLAW_INSERT_FTS, (chunk.text, chunk_id, rel, 'memory', model, chunk.start_line, chunk.end_line)
                )
            conn.execute(OPENCLAW_UPSERT_FILE, (rel, 'memory', digest, int(stat.st_mtime * 1000), stat.st_size))
            if transaction_per_file:
                conn.execute('COMMIT')
        if not transaction_per_file:
            conn.execute('COMMIT')

    def sync_unchanged(self, workspace: Path) -> int:
        """OpenClaw's sync when nothing changed: list, read and hash every file, compare with ``files``.

        Returns how many files would be re-indexed (0 here).
        """
        known = dict(self.conn.execute("SELECT path, hash FROM files WHERE source = 'memory'"))
        changed, active = 0, set()
        for path in sorted((workspace / 'memory').rglob('*.md')):
            rel = path.relative_to(workspace).as_posix()
            path.stat()
            digest = hashlib.sha256(path.read_text(encoding='utf-8').encode()).hexdigest()
            active.add(rel)
            changed += known.get(rel) != digest
        return changed + len(set(known) - active)

    def keyword(
        self, query: str, model: str | None, joiner: str = ' AND '
    ) -> list[tuple[str, str, int, int, str, float]]:
        """The keyword leg: quoted ``\\w+`` tokens joined with AND (OpenClaw's), bm25 rank -> score in (0, 1)."""
        tokens = FTS_TOKEN.findall(query)
        if not tokens:
            return []
        match = joiner.join(f'"{t}"' for t in tokens)
        sql = OPENCLAW_KEYWORD_SQL.format(model=' AND model = ?' if model else '')
        args = (match, model, OPENCLAW_CANDIDATES) if model else (match, OPENCLAW_CANDIDATES)
        hits = []
        for chunk_id, path, start, end, text, rank in self.conn.execute(sql, args):
            relevance = -rank
            score = relevance / (1 + relevance) if rank < 0 else 1 / (1 + rank)
            hits.append((chunk_id, path, start, end, text[:OPENCLAW_SNIPPET_CHARS], score))
        return hits

    def search_fts_only(self, query: str, joiner: str = ' AND ') -> list[tuple[str, float]]:
        """FTS-only ``memory_search``: keyword leg over all models, minScore 0.35, top 6 as ``(path, score)``."""
        hits = self.keyword(query.strip(), None, joiner)
        hits.sort(key=lambda h: -h[5])
        return [(h[1], h[5]) for h in hits if h[5] >= OPENCLAW_MIN_SCORE][:OPENCLAW_MAX_RESULTS]

    def search_hybrid(self, query: str, embedder: BenchEmbedder, knn: bool) -> list[tuple[str, float]]:
        """Hybrid ``memory_search``: keyword + vector legs (24 each), 0.7 x (1 - dist) + 0.3 x text, top 6."""
        text = query.strip()
        keyword = self.keyword(text, embedder.model)
        blob = np.asarray(embedder.embed_query(text), dtype=np.float32).tobytes()
        if knn:
            rows = self.conn.execute(
                OPENCLAW_VECTOR_KNN_SQL, (blob, embedder.model, blob, OPENCLAW_CANDIDATES, OPENCLAW_CANDIDATES)
            )
        else:
            rows = self.conn.execute(OPENCLAW_VECTOR_SCAN_SQL, (blob, embedder.model, OPENCLAW_CANDIDATES))
        merged: dict[str, list] = {}
        for chunk_id, path, _, _, snippet, dist in rows:
            merged[chunk_id] = [path, snippet[:OPENCLAW_SNIPPET_CHARS], 1 - dist, 0.0]
        for chunk_id, path, _, _, snippet, score in keyword:
            entry = merged.setdefault(chunk_id, [path, snippet, 0.0, 0.0])
            entry[1], entry[3] = snippet, score
        scored = sorted(
            ((OPENCLAW_VECTOR_WEIGHT * v + OPENCLAW_TEXT_WEIGHT * t, path) for path, _, v, t in merged.values()),
            reverse=True,
        )
        return [(path, score) for score, path in scored if score >= OPENCLAW_MIN_SCORE][:OPENCLAW_MAX_RESULTS]

    def close(self) -> None:
        self.conn.close()


def build_memsift_index(
    workspace: Path, db: Path, provider: BenchEmbedder | None = None
) -> tuple[float, memsift.MemoryIndex]:
    """Seconds to open a fresh memsift index on ``workspace`` and sync it, and the open index."""
    remove_db(db)
    start = time.perf_counter()
    index = memsift.MemoryIndex(workspace, memsift_config(db), provider=provider)
    index.sync()
    return time.perf_counter() - start, index


def best_build(build: Callable[[], tuple[float, T]], close: Callable[[T], None], reps: int) -> tuple[float, T]:
    """Best seconds of ``reps`` fresh builds; every result but the last is closed."""
    best, result = float('inf'), None
    for rep in range(reps):
        if result is not None:
            close(result)
        seconds, result = build()
        best = min(best, seconds)
    return best, result  # type: ignore[return-value]


def timed_baseline_build(
    apsw: Any,
    db: Path,
    workspace: Path,
    model: str,
    vec_extension: str | None = None,
    embedder: BenchEmbedder | None = None,
) -> tuple[float, OpenClawBaseline]:
    """Seconds to create the baseline database and index ``workspace`` one transaction per file."""
    start = time.perf_counter()
    baseline = OpenClawBaseline(apsw, db, vec_extension)
    baseline.build(workspace, model, embedder)
    return time.perf_counter() - start, baseline


def latencies(
    search: Callable[[str], list], queries: list[str], passes: int, warmup: int | None = None
) -> tuple[np.ndarray, list[list]]:
    """Per-query best-of-``passes`` seconds and the results of the last pass, after an untimed warm-up pass over
    the first ``warmup`` queries (default: all)."""
    for q in queries[:warmup]:
        search(q)
    best = np.full(len(queries), np.inf)
    results: list[list] = []
    for _ in range(passes):
        results = []
        for i, q in enumerate(queries):
            start = time.perf_counter()
            results.append(search(q))
            best[i] = min(best[i], time.perf_counter() - start)
    return best, results


def doc_key(path: str) -> str:
    """The SciFact doc id of a note path (``memory/c03/123.md`` -> ``123``): copies of a note count as the same."""
    return path.rsplit('/', 1)[-1].removesuffix('.md')


def latency_rows(
    what: str,
    label: str,
    peer: str,
    ours: tuple[np.ndarray, list[list]],
    theirs: tuple[np.ndarray, list[list]],
    n_queries: int,
) -> list[Row]:
    """p50 and p95 rows (as queries/s = 1 / latency) with ms, zero-result counts and top-1 agreement as check.

    When the peer ran only the first n queries, memsift's figures are taken over the same n.
    """
    (peer_s, peer_hits) = theirs
    n = len(peer_s)
    our_s, our_hits = ours[0][:n], ours[1][:n]
    both = [(a[0][0], b[0][0]) for a, b in zip(our_hits, peer_hits) if a and b]
    same = sum(doc_key(a) == doc_key(b) for a, b in both)
    subset = f'first {n} queries, one pass; ' if n < n_queries else ''
    empty = (
        f'{subset}no results: {sum(not h for h in our_hits)} vs {sum(not h for h in peer_hits)} of {n}; '
        f'same top-1 doc {same}/{len(both)}'
    )
    rows = []
    for pct in (50, 95):
        mine, peers = float(np.percentile(our_s, pct)), float(np.percentile(peer_s, pct))
        rows.append(
            Row(
                MEMORY_SECTION,
                f'{what} p{pct}, {label}',
                f'queries/s (1/p{pct})',
                1 / mine,
                peer,
                1 / peers,
                f'p{pct} {mine * 1000:.2f} ms vs {peers * 1000:.2f} ms' + ('; ' + empty if pct == 50 else ''),
            )
        )
    return rows


def solo_latency_rows(what: str, label: str, seconds: np.ndarray) -> list[Row]:
    """memsift's p50 and p95 rows when the baseline could not run."""
    rows = []
    for pct in (50, 95):
        value = float(np.percentile(seconds, pct))
        rows.append(
            Row(
                MEMORY_SECTION,
                f'{what} p{pct}, {label}',
                f'queries/s (1/p{pct})',
                1 / value,
                check=f'p{pct} {value * 1000:.2f} ms',
            )
        )
    return rows


def memsift_hits(index: memsift.MemoryIndex) -> Callable[[str], list[tuple[str, float]]]:
    """``index.search`` with OpenClaw's defaults (6 results, minScore 0.35) as ``(path, score)`` pairs."""
    return lambda q: [(hit.path, hit.score) for hit in index.search(q).results]


def cli_search_seconds(workspace: Path, db: Path, queries: list[str]) -> tuple[float, str]:
    """Median wall seconds of ``memsift search QUERY --json`` over ``CLI_RUNS`` queries (after one warm-up run)."""
    exe = Path(sys.executable).with_name('memsift')
    command = [str(exe)] if exe.is_file() else [sys.executable, '-m', 'memsift']
    times, hits = [], []
    for i, query in enumerate(queries[: CLI_RUNS + 1]):
        start = time.perf_counter()
        done = subprocess.run(
            command + ['search', query, '--workspace', str(workspace), '--store', str(db), '--json'],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f'memsift search exited {done.returncode}: {done.stderr.strip() or done.stdout[:500]}')
        if i:
            times.append(elapsed)
            hits.append(len(json.loads(done.stdout)['results']))
    return float(np.median(times)), f'min {min(times):.2f} s, max {max(times):.2f} s, {sum(hits)} hits'


def optional_module(name: str, consequence: str) -> Any:
    """``import name``, or None with a message on stderr when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        log(f'memory: {name} is not installed (pip install {name.replace("_", "-")}): {consequence}')
        return None


def bench_memory(data_root: Path, quick: bool, long: bool) -> tuple[list[Row], list[str]]:
    """Section 4 rows: memsift's MemoryIndex vs the OpenClaw-architecture baseline on SciFact notes.

    Sizes: ~10k chunks, then ~100k (not with ``quick``). Per size: FTS-only index build (MB/s of notes), sync
    with nothing changed (files/s), FTS-only search p50/p95 (vs OpenClaw's AND query and an OR variant). On the
    small workspace also the ``memsift search`` CLI wall time, the index build with vectors and hybrid search
    p50/p95 with BenchEmbedder vectors (vs a sqlite-vec full scan and vs vec0 KNN); with ``long`` hybrid search
    on the large workspace too (minutes: both hybrid indexes must be built there). Latencies are reported as
    rates (1 / seconds at the percentile) so the ratio keeps meaning "higher is better"; the check column has
    the milliseconds.
    """
    apsw = optional_module('apsw', 'the OpenClaw-baseline rows are skipped')
    sqlite_vec = optional_module('sqlite_vec', 'the hybrid baseline rows are skipped')
    vec_extension = sqlite_vec.loadable_path() if sqlite_vec is not None else None

    started = time.perf_counter()

    def step(message: str) -> None:
        log(f'memory [{time.perf_counter() - started:4.0f} s]: {message}')

    data = _beir.load_dataset(data_root / 'scifact')
    notes = scifact_notes(data)
    queries = [text for _, text in data.queries[:MEMORY_QUERIES]]
    sizes = MEMORY_SIZES[:1] if quick else MEMORY_SIZES
    build_reps = 2 if quick else REPS
    embedder = BenchEmbedder()
    for q in queries:
        embedder.embed_query(q.strip())
    embedder.embed_documents([c.text for _, text in notes for c in memsift.chunk_markdown(text, 400, 80)])

    rows: list[Row] = []
    lines: list[str] = []
    peer_fts = 'OpenClaw arch: FTS5'
    with tempfile.TemporaryDirectory(prefix='memsift-bench-') as tmp_name:
        tmp = Path(tmp_name)
        for size in sizes:
            small = size == sizes[0]
            root = tmp / f'workspace-{size}'
            step(f'writing a workspace of ~{size:,} chunks')
            ws = write_workspace(root, notes, size)
            reps = build_reps if small else 1
            passes = REPS if small else 2
            m_db, b_db = tmp / f'm{size}.sqlite', tmp / f'b{size}.sqlite'

            step(f'FTS-only build, {ws.label} ({ws.describe()}), memsift')
            m_s, index = best_build(lambda: build_memsift_index(root, m_db), lambda i: i.close(), reps)
            chunks = index.status()['chunks']
            label = f'{chunks:,} chunks'
            lines.append(
                f'section 4 workspace: {ws.describe()}, {chunks:,} chunks in memsift ({ws.chunks:,} by chunk_markdown)'
            )
            baseline = None
            if apsw is not None:
                step(f'FTS-only build, {label}, OpenClaw baseline')
                b_s, baseline = best_build(
                    lambda: timed_baseline_build(apsw, b_db, root, 'fts-only'), lambda b: b.close(), reps
                )
                b_chunks = baseline.conn.execute('SELECT COUNT(*) FROM chunks').fetchone()[0]
            rows.append(
                Row(
                    MEMORY_SECTION,
                    f'index build FTS-only, {label}',
                    'MB/s',
                    ws.size / MB / m_s,
                    peer_fts if baseline else '',
                    ws.size / MB / b_s if baseline else None,
                    f'{ws.describe()}; {m_s:.1f} s' + (f' vs {b_s:.1f} s ({b_chunks:,} chunks)' if baseline else ''),
                )
            )

            step(f'sync with nothing changed, {label}')
            sync_s, report = best_time(index.sync, reps)
            check = f'{sync_s:.2f} s'
            peer_sync = None
            if baseline is not None:
                peer_s, changed = best_time(lambda: baseline.sync_unchanged(root), reps)
                peer_sync = ws.files / peer_s
                redone = len(report.added) + len(report.updated)
                check = f'{sync_s:.2f} s vs {peer_s:.2f} s; files re-indexed {redone} vs {changed}'
            rows.append(
                Row(
                    MEMORY_SECTION,
                    f'sync, nothing changed, {label}',
                    'files/s',
                    ws.files / sync_s,
                    'OpenClaw arch: read + sha256 each file' if baseline else '',
                    peer_sync,
                    check,
                )
            )

            step(f'FTS-only search, {label}, {len(queries)} queries')
            ours = latencies(memsift_hits(index), queries, passes)
            if baseline is not None:
                # The OR variant takes ~0.1 s a query at 100k chunks: there, a subset of the queries and one pass.
                or_sample, or_passes = (queries, passes) if small else (queries[:OR_QUERIES_LARGE], 1)
                for joiner, peer, sample, n_passes in (
                    (' AND ', 'AND query', queries, passes),
                    (' OR ', 'OR query (variant)', or_sample, or_passes),
                ):
                    search = functools.partial(baseline.search_fts_only, joiner=joiner)
                    theirs = latencies(search, sample, n_passes, warmup=None if small else 3)
                    rows += latency_rows('search FTS-only', label, f'{peer_fts} {peer}', ours, theirs, len(queries))
                baseline.close()
            else:
                rows += solo_latency_rows('search FTS-only', label, ours[0])
            index.close()

            if small:
                step(f'memsift search CLI x {CLI_RUNS}, {label}')
                median, spread = cli_search_seconds(root, m_db, queries)
                rows.append(
                    Row(
                        MEMORY_SECTION,
                        f'`memsift search --json` CLI wall time, {label}',
                        's (median)',
                        median,
                        check=f'{spread}; {OPENCLAW_CLI_NOTE}',
                    )
                )
            remove_db(m_db)
            remove_db(b_db)
            if not (small or long):
                shutil.rmtree(root)
                continue

            h_db, v_db = tmp / f'h{size}.sqlite', tmp / f'v{size}.sqlite'
            step(f'hybrid build, {label}, memsift')
            hm_s, index = best_build(
                lambda: build_memsift_index(root, h_db, embedder), lambda i: i.close(), reps if small else 1
            )
            vector_base = None
            if apsw is not None and vec_extension is not None:
                step(f'hybrid build, {label}, OpenClaw baseline')
                if small:
                    hb_s, vector_base = best_build(
                        lambda: timed_baseline_build(apsw, v_db, root, embedder.model, vec_extension, embedder),
                        lambda b: b.close(),
                        reps,
                    )
                else:  # not reported at this size: one transaction keeps the set-up short
                    vector_base = OpenClawBaseline(apsw, v_db, vec_extension)
                    vector_base.build(root, embedder.model, embedder, transaction_per_file=False)
            if small:
                rows.append(
                    Row(
                        MEMORY_SECTION,
                        f'index build with vectors, {label}',
                        'MB/s',
                        ws.size / MB / hm_s,
                        'OpenClaw arch: + sqlite-vec vec0' if vector_base else '',
                        ws.size / MB / hb_s if vector_base else None,
                        f'{hm_s:.1f} s'
                        + (f' vs {hb_s:.1f} s' if vector_base else '')
                        + '; embeddings memoized (a lookup)',
                    )
                )
            else:
                lines.append(
                    f'section 4 hybrid index, {label}: memsift built it in {hm_s:.1f} s '
                    '(the baseline one is built in one transaction, untimed)'
                )

            step(f'hybrid search, {label}, {len(queries)} queries')
            ann = index.status()['vector']['ann']
            lines.append(f'section 4 hybrid, {label}: memsift vector leg is {"HNSW (approximate)" if ann else "exact"}')
            ours = latencies(memsift_hits(index), queries, passes)
            if vector_base is not None:
                # The full scan costs ~10 us per chunk and query: a subset of the queries, one pass.
                scan = queries[: SCAN_QUERIES if small else SCAN_QUERIES_LARGE]
                for knn, peer, sample, n_passes in (
                    (False, 'vec_distance_cosine full scan', scan, 1),
                    (True, 'vec0 KNN (MATCH, k = 24)', queries, passes),
                ):
                    search = functools.partial(vector_base.search_hybrid, embedder=embedder, knn=knn)
                    theirs = latencies(search, sample, n_passes, warmup=None if knn else 3)
                    rows += latency_rows(
                        'search hybrid', label, f'OpenClaw arch: {peer} + FTS5', ours, theirs, len(queries)
                    )
                vector_base.close()
            else:
                rows += solo_latency_rows('search hybrid', label, ours[0])
            index.close()
            remove_db(h_db)
            remove_db(v_db)
            shutil.rmtree(root)
    return rows, lines


def memory_environment() -> dict:
    """Versions of the section 4 baseline's libraries (when installed)."""
    env = {}
    try:
        import apsw

        env['apsw'] = apsw.apswversion()
        env['apsw_sqlite'] = apsw.sqlite_lib_version()
    except ImportError:
        pass
    try:
        import sqlite_vec

        env['sqlite_vec'] = getattr(sqlite_vec, '__version__', '?')
    except ImportError:
        pass
    return env


# ---------------------------------------------------------------- 5. embedding provider indexing

EMBEDDING_SECTION = (
    '5. Embedding provider indexing (SciFact notes through a loopback OpenAI-compatible server; '
    'peer: OpenClaw architecture)'
)
EMBEDDING_SIZE, EMBEDDING_SIZE_QUICK = 10_000, 2_000
"""Workspace size in chunks."""
EMBEDDING_LATENCIES_MS = (0, 20)
"""Server delay per request: none (the engines alone), then a fixed delay (where concurrency pays)."""
EMBEDDING_MODEL = 'bench-384'
EDIT_LINE = 'Edited by the bench: one more line, {n}.\n'
OPENCLAW_INDEX_CONCURRENCY = 4
"""OpenClaw indexes 4 files at a time (each file's requests one after another)."""
OPENCLAW_BATCH_BYTES = 8000
"""OpenClaw's ``EMBEDDING_BATCH_MAX_TOKENS``, in UTF-8 bytes of text per request."""
OPENCLAW_CACHE_SCHEMA = """
CREATE TABLE embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL, provider_key TEXT NOT NULL,
                              hash TEXT NOT NULL, embedding TEXT NOT NULL, dims INTEGER, updated_at INTEGER NOT NULL,
                              PRIMARY KEY (provider, model, provider_key, hash));
CREATE INDEX idx_embedding_cache_updated_at ON embedding_cache(updated_at);
"""
OPENCLAW_CACHE_UPSERT = (
    'INSERT INTO embedding_cache (provider, model, provider_key, hash, embedding, dims, updated_at) '
    'VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(provider, model, provider_key, hash) DO UPDATE SET '
    'embedding=excluded.embedding, dims=excluded.dims, updated_at=excluded.updated_at'
)


@dataclass
class ServerStats:
    """What the embedding server saw between two ``EmbeddingServer.take`` calls."""

    requests: int = 0
    inputs: int = 0
    max_bytes: int = 0
    """Largest request, in UTF-8 bytes of input text."""
    max_in_flight: int = 0

    def describe(self) -> str:
        per = self.inputs / self.requests if self.requests else 0.0
        return (
            f'{self.requests:,} requests, {self.inputs:,} inputs ({per:.1f} per request, max '
            f'{self.max_bytes:,} B of text), {self.max_in_flight} in flight at most'
        )


class EmbeddingServer:
    """A loopback OpenAI-compatible embeddings endpoint: ``POST /v1/embeddings`` with ``{model, input: [...]}``
    answers ``{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model": m}``.

    A ``ThreadingHTTPServer`` on 127.0.0.1 (HTTP/1.1 keep-alive, one thread per connection) in a daemon thread.
    Vectors are ``BenchEmbedder``'s (384 dims, deterministic); each text's JSON array (full float repr, as real
    providers send) is memoized and ``prefill`` computes them before any timing, so an answer costs a lookup and a
    string join; texts it has not seen are embedded on the fly. ``latency_s`` is slept in every request (the
    thread sleeps: concurrent requests overlap). Requests, inputs, the largest request's text bytes and the most
    requests in flight at once are counted under a lock.
    """

    def __init__(self, embedder: BenchEmbedder) -> None:
        self.embedder = embedder
        self.latency_s = 0.0
        self._json: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stats = ServerStats()
        self._in_flight = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm holds a small body until
                # the client's delayed ACK (~40 ms a request). Production servers set it too.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                outer.answer(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
                pass

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name='bench-embeddings', daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """Base URL of the OpenAI-style API (``http://127.0.0.1:PORT/v1``)."""
        return f'http://127.0.0.1:{self._server.server_address[1]}/v1'

    def vector_json(self, text: str) -> str:
        row = self._json.get(text)
        if row is None:
            row = self._json[text] = json.dumps(self.embedder.embed_query(text).tolist())
        return row

    def prefill(self, texts: Sequence[str]) -> None:
        for text in texts:
            self.vector_json(text)

    def take(self) -> ServerStats:
        """The counters since the previous call, then zeroed."""
        with self._lock:
            stats, self._stats = self._stats, ServerStats()
        return stats

    def answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get('Content-Length') or 0))
        if handler.path.rstrip('/') != '/v1/embeddings':
            self._send(handler, 404, b'{"error": {"message": "not found"}}')
            return
        request = json.loads(body)
        texts = request['input'] if isinstance(request['input'], list) else [request['input']]
        size = sum(len(t.encode()) for t in texts)
        with self._lock:
            stats = self._stats
            stats.requests += 1
            stats.inputs += len(texts)
            stats.max_bytes = max(stats.max_bytes, size)
            self._in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, self._in_flight)
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
            data = ','.join(
                f'{{"object":"embedding","index":{i},"embedding":{self.vector_json(t)}}}' for i, t in enumerate(texts)
            )
            self._send(
                handler, 200, f'{{"object":"list","data":[{data}],"model":{json.dumps(request["model"])}}}'.encode()
            )
        finally:
            with self._lock:
                self._in_flight -= 1

    @staticmethod
    def _send(handler: http.server.BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
        handler.send_response(status)
        handler.send_header('Content-Type', 'application/json')
        handler.send_header('Content-Length', str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def byte_batches(texts: Sequence[str], limit: int = OPENCLAW_BATCH_BYTES) -> list[list[str]]:
    """``texts`` in order, grouped so a group holds at most ``limit`` UTF-8 bytes (a larger text goes alone)."""
    groups: list[list[str]] = []
    size = 0
    for text in texts:
        length = len(text.encode())
        if groups and size + length <= limit:
            groups[-1].append(text)
            size += length
        else:
            groups.append([text])
            size = length
    return groups


@dataclass
class PreparedFile:
    """One changed file in the baseline's sync: chunks, cached embeddings (JSON) and the texts still to embed."""

    rel: str
    path: Path
    digest: str
    known: bool
    chunks: list[memsift.Chunk]
    vectors: dict[str, tuple[str, list[float]]]
    """Chunk sha256 -> (JSON text, vector): the cached ones, then the fresh ones."""
    missing: dict[str, str]
    """Chunk sha256 -> text, for the chunk texts not in the cache."""


class OpenClawEmbeddingBaseline(OpenClawBaseline):
    """OpenClaw's indexing through a remote embedding provider, on top of ``OpenClawBaseline``'s schema.

    Adds the ``embedding_cache`` table (vectors as JSON text, keyed by provider, model, provider key and chunk
    sha256). Its sync reads and sha256-hashes every note, then indexes the changed ones 4 at a time: per file,
    chunk (empty chunks dropped), look the chunk hashes up in the cache, send the missing texts in requests of at
    most 8000 UTF-8 bytes one after another (httpx, keep-alive), then in the main thread upsert the new vectors
    into the cache and replace the file's rows (``chunks``, ``chunks_vec``, ``chunks_fts``, ``files``) in one
    transaction. HTTP runs in worker threads, SQLite only in the main thread (Node's single event loop).
    """

    provider = 'openai-compatible'

    def __init__(self, apsw: Any, db: Path, vec_extension: str, base_url: str, model: str) -> None:
        super().__init__(apsw, db, vec_extension)
        self.conn.execute(OPENCLAW_CACHE_SCHEMA)
        self.model = model
        self.url = f'{base_url}/embeddings'
        self.provider_key = hashlib.sha256(json.dumps({'baseUrl': base_url, 'model': model}).encode()).hexdigest()
        self.client = httpx.Client(headers={'Content-Type': 'application/json'})

    def seed_cache(self, other: Path) -> None:
        """Copy another baseline database's embedding cache into this one (OpenClaw's safe reindex)."""
        self.conn.execute('ATTACH DATABASE ? AS old', (str(other),))
        self.conn.execute('INSERT INTO embedding_cache SELECT * FROM old.embedding_cache')
        self.conn.execute('DETACH DATABASE old')

    def sync(self, workspace: Path) -> int:
        """Index the notes whose sha256 differs from ``files`` (all of them in a fresh database); returns how many."""
        known = dict(self.conn.execute("SELECT path, hash FROM files WHERE source = 'memory'"))
        changed = []
        for path in sorted((workspace / 'memory').rglob('*.md')):
            rel = path.relative_to(workspace).as_posix()
            digest = hashlib.sha256(path.read_text(encoding='utf-8').encode()).hexdigest()
            if known.get(rel) != digest:
                changed.append((rel, path, digest))
        window: collections.deque[tuple[PreparedFile, Future[list[list[float]]]]] = collections.deque()
        with ThreadPoolExecutor(OPENCLAW_INDEX_CONCURRENCY, thread_name_prefix='openclaw-embed') as pool:
            for rel, path, digest in changed:
                prepared = self.prepare(rel, path, digest, rel in known)
                window.append((prepared, pool.submit(self.embed, list(prepared.missing.values()))))
                if len(window) >= OPENCLAW_INDEX_CONCURRENCY:
                    self.write(*window.popleft())
            while window:
                self.write(*window.popleft())
        return len(changed)

    def prepare(self, rel: str, path: Path, digest: str, known: bool) -> PreparedFile:
        """Chunk a note and look its chunk hashes up in the cache (one query: a note has far fewer than 400)."""
        text = path.read_text(encoding='utf-8')
        chunks = [c for c in memsift.chunk_markdown(text, 400, 80) if c.text.strip()]
        hashes = sorted({c.hash for c in chunks})
        vectors = {
            digest: (embedding, json.loads(embedding))
            for digest, embedding in self.conn.execute(
                'SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND provider_key = ? '
                f'AND hash IN ({",".join("?" * len(hashes))})',
                (self.provider, self.model, self.provider_key, *hashes),
            )
        }
        missing = {c.hash: c.text for c in chunks if c.hash not in vectors}
        return PreparedFile(rel, path, digest, known, chunks, vectors, missing)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts`` in requests of at most 8000 bytes, one after another (a worker thread)."""
        vectors: list[list[float]] = []
        for group in byte_batches(texts):
            response = self.client.post(self.url, json={'model': self.model, 'input': group}, timeout=120)
            response.raise_for_status()
            data = sorted(response.json()['data'], key=lambda d: d['index'])
            vectors += [d['embedding'] for d in data]
        return vectors

    def write(self, prepared: PreparedFile, future: Future[list[list[float]]]) -> None:
        """Upsert the new vectors into the cache and replace the file's rows, in one transaction."""
        fresh = future.result()
        now = int(time.time() * 1000)
        conn, rel = self.conn, prepared.rel
        vectors = prepared.vectors
        conn.execute('BEGIN')
        for digest, vector in zip(prepared.missing, fresh):
            vectors[digest] = (json.dumps(vector), vector)
            conn.execute(
                OPENCLAW_CACHE_UPSERT,
                (self.provider, self.model, self.provider_key, digest, vectors[digest][0], len(vector), now),
            )
        if prepared.known:
            conn.execute(
                "DELETE FROM chunks_vec WHERE id IN (SELECT id FROM chunks WHERE path = ? AND source = 'memory')",
                (rel,),
            )
            conn.execute("DELETE FROM chunks WHERE path = ? AND source = 'memory'", (rel,))
            conn.execute("DELETE FROM chunks_fts WHERE path = ? AND source = 'memory'", (rel,))
        for chunk in prepared.chunks:
            chunk_id = hashlib.sha256(
                f'memory:{rel}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}:{self.model}'.encode()
            ).hexdigest()
            embedding, vector = vectors[chunk.hash]
            conn.execute(
                OPENCLAW_INSERT_CHUNK,
                (
                    chunk_id,
                    rel,
                    'memory',
                    chunk.start_line,
                    chunk.end_line,
                    chunk.hash,
                    self.model,
                    chunk.text,
                    embedding,
                    now,
                ),
            )
            conn.execute(
                'INSERT INTO chunks_vec (id, embedding) VALUES (?, ?)',
                (chunk_id, np.asarray(vector, dtype=np.float32).tobytes()),
            )
            conn.execute(
                OPENCLAW_INSERT_FTS, (chunk.text, chunk_id, rel, 'memory', self.model, chunk.start_line, chunk.end_line)
            )
        stat = prepared.path.stat()
        conn.execute(OPENCLAW_UPSERT_FILE, (rel, 'memory', prepared.digest, int(stat.st_mtime * 1000), stat.st_size))
        conn.execute('COMMIT')

    def close(self) -> None:
        self.client.close()
        super().close()


def memsift_embedding_config(db: Path, base_url: str) -> dict:
    """memsift config with the ``openai-compatible`` provider at ``base_url`` and its store at ``db``."""
    return {
        'agents': {
            'defaults': {
                'memorySearch': {
                    'provider': 'openai-compatible',
                    'model': EMBEDDING_MODEL,
                    'remote': {'baseUrl': base_url},
                    'store': {'path': str(db)},
                }
            }
        }
    }


def cold_memsift(
    root: Path, db: Path, server: EmbeddingServer
) -> tuple[float, tuple[memsift.MemoryIndex, ServerStats]]:
    """Seconds of the first sync of a fresh memsift store (so a cold embedding cache: it lives in the store), the
    open index and what the server saw during that sync (opening, with its dimension probe, is not counted)."""
    remove_db(db)
    index = memsift.MemoryIndex(root, memsift_embedding_config(db, server.url))
    server.take()
    start = time.perf_counter()
    index.sync()
    seconds = time.perf_counter() - start
    return seconds, (index, server.take())


def cold_baseline(
    apsw: Any, db: Path, vec_extension: str, root: Path, server: EmbeddingServer
) -> tuple[float, tuple[OpenClawEmbeddingBaseline, ServerStats]]:
    """Seconds of the baseline's first sync into a fresh database, the baseline and what the server saw."""
    baseline = OpenClawEmbeddingBaseline(apsw, db, vec_extension, server.url, EMBEDDING_MODEL)
    server.take()
    start = time.perf_counter()
    baseline.sync(root)
    seconds = time.perf_counter() - start
    return seconds, (baseline, server.take())


def reindex_baseline(
    apsw: Any, db: Path, old: Path, vec_extension: str, root: Path, server: EmbeddingServer
) -> tuple[float, OpenClawEmbeddingBaseline]:
    """Seconds of OpenClaw's safe reindex: a fresh database seeded with ``old``'s embedding cache, then a sync."""
    start = time.perf_counter()
    baseline = OpenClawEmbeddingBaseline(apsw, db, vec_extension, server.url, EMBEDDING_MODEL)
    baseline.seed_cache(old)
    baseline.sync(root)
    return time.perf_counter() - start, baseline


def count_rows(baseline: OpenClawBaseline) -> int:
    return baseline.conn.execute('SELECT COUNT(*) FROM chunks').fetchone()[0]


def bench_embedding(data_root: Path, quick: bool) -> tuple[list[Row], list[str]]:
    """Section 5 rows: memsift's MemoryIndex indexing through a real HTTP embedding provider vs the OpenClaw
    architecture, both against the same loopback OpenAI-compatible server (``EmbeddingServer``).

    On ~10k chunks of SciFact notes (``quick``: ~2k): the cold index (fresh store, so a cold embedding cache)
    with 0 ms and 20 ms of server latency per request, as chunks/s, with a requests/s row whose check column has
    what the server counted; then, at 0 ms, the re-index after appending a line to one note (the inputs
    re-embedded must be that note's chunks with new text) and the full re-index with the cache warm (no input
    should reach the server).
    """
    apsw = optional_module('apsw', 'the OpenClaw-baseline rows are skipped')
    sqlite_vec = optional_module('sqlite_vec', 'the OpenClaw-baseline rows are skipped')
    vec_extension = sqlite_vec.loadable_path() if apsw is not None and sqlite_vec is not None else None

    started = time.perf_counter()

    def step(message: str) -> None:
        log(f'embedding [{time.perf_counter() - started:4.0f} s]: {message}')

    notes = scifact_notes(_beir.load_dataset(data_root / 'scifact'))
    reps = 2
    server = EmbeddingServer(BenchEmbedder())
    rows: list[Row] = []
    lines: list[str] = []
    peer = 'OpenClaw arch: 4 files at a time, requests per file'
    try:
        with tempfile.TemporaryDirectory(prefix='memsift-bench-') as tmp_name:
            tmp = Path(tmp_name)
            root = tmp / 'workspace'
            step(f'writing a workspace of ~{EMBEDDING_SIZE_QUICK if quick else EMBEDDING_SIZE:,} chunks')
            ws = write_workspace(root, notes, EMBEDDING_SIZE_QUICK if quick else EMBEDDING_SIZE)
            known_texts = {c.text for _, text in notes[: ws.files] for c in memsift.chunk_markdown(text, 400, 80)}
            step(f'server: embedding {len(known_texts):,} distinct chunk texts ahead of the timing')
            server.prefill(sorted(known_texts))

            index = baseline = None
            m_db, b_db = tmp / 'm0.sqlite', tmp / 'b0.sqlite'
            for latency_ms in EMBEDDING_LATENCIES_MS:
                server.latency_s = latency_ms / 1000
                db, other_db = tmp / f'm{latency_ms}.sqlite', tmp / f'b{latency_ms}.sqlite'
                runs = reps if latency_ms == 0 else 1
                step(f'cold index, {ws.describe()}, {latency_ms} ms per request, memsift')
                m_s, (m_index, m_stats) = best_build(
                    lambda: cold_memsift(root, db, server), lambda r: r[0].close(), runs
                )
                chunks = m_index.status()['chunks']
                label = f'{chunks:,} chunks'
                if latency_ms == 0:
                    lines.append(
                        f'section 5 workspace: {ws.describe()}, {chunks:,} chunks in memsift '
                        f'({ws.chunks:,} by chunk_markdown), {len(known_texts):,} distinct chunk texts (both '
                        'sides embed a repeated text once: the second time it comes from their cache)'
                    )
                b_base = None
                if vec_extension is not None:
                    step(f'cold index, {label}, {latency_ms} ms per request, OpenClaw baseline')
                    b_s, (b_base, b_stats) = best_build(
                        lambda: cold_baseline(apsw, other_db, vec_extension, root, server), lambda r: r[0].close(), runs
                    )
                    b_chunks = count_rows(b_base)
                where = f'{label}, {latency_ms} ms/request'
                rows.append(
                    Row(
                        EMBEDDING_SECTION,
                        f'cold index, {where}',
                        'chunks/s',
                        chunks / m_s,
                        peer if b_base else '',
                        b_chunks / b_s if b_base else None,
                        f'{m_s:.1f} s'
                        + (
                            f' vs {b_s:.1f} s ({b_chunks:,} chunks); server inputs '
                            f'{m_stats.inputs:,} vs {b_stats.inputs:,}'
                            if b_base
                            else ''
                        ),
                    )
                )
                rows.append(
                    Row(
                        EMBEDDING_SECTION,
                        f'requests, cold index, {where}',
                        'requests/s',
                        m_stats.requests / m_s,
                        check=m_stats.describe()
                        + (
                            f'; OpenClaw arch: {b_stats.requests / b_s:,.0f} requests/s, {b_stats.describe()}'
                            if b_base
                            else ''
                        ),
                    )
                )
                if latency_ms == 0:
                    index, baseline, m_db, b_db = m_index, b_base, db, other_db
                else:
                    m_index.close()
                    remove_db(db)
                    if b_base is not None:
                        b_base.close()
                        remove_db(other_db)
            assert index is not None
            server.latency_s = 0.0

            # One note with 3+ chunks gets a line appended, REPS times; each time only its chunks with new text
            # may reach the server (the others come from the embedding cache).
            doc_id, text = next((d, t) for d, t in notes[: ws.files] if len(memsift.chunk_markdown(t, 400, 80)) >= 3)
            path = root / 'memory' / 'c00' / f'{doc_id}.md'
            step(f're-index after editing one file ({path.relative_to(root)}) x {REPS}')
            edits = []
            for n in range(1, REPS + 1):
                text += EDIT_LINE.format(n=n)
                path.write_text(text, encoding='utf-8')
                os.utime(path, (NOTE_MTIME + 60 * n, NOTE_MTIME + 60 * n))
                texts = {c.text for c in memsift.chunk_markdown(text, 400, 80)}
                expected, file_chunks = len(texts - known_texts), len(memsift.chunk_markdown(text, 400, 80))
                known_texts |= texts
                server.take()
                start = time.perf_counter()
                report = index.sync()
                m_s = time.perf_counter() - start
                m_inputs = server.take().inputs
                b_s, b_inputs = float('nan'), -1
                if baseline is not None:
                    start = time.perf_counter()
                    baseline.sync(root)
                    b_s = time.perf_counter() - start
                    b_inputs = server.take().inputs
                edits.append((m_s, b_s, m_inputs, b_inputs, expected, file_chunks, report.updated))
            m_s, b_s = min(e[0] for e in edits), min(e[1] for e in edits)
            *_, m_inputs, b_inputs, expected, file_chunks, updated = edits[-1]
            wrong = [e for e in edits if e[2] != e[4] or (baseline is not None and e[3] != e[4]) or len(e[6]) != 1]
            if wrong:
                log(
                    f'warning: section 5 edit re-index sent unexpected inputs (memsift, baseline, expected, '
                    f'updated files): {[(e[2], e[3], e[4], e[6]) for e in wrong]}'
                )
            check = (
                f'{m_s * 1000:.0f} ms' + (f' vs {b_s * 1000:.0f} ms' if baseline else '') + f' (best of {REPS} '
                f'edits); inputs re-embedded: {m_inputs} (file has {file_chunks} chunks, {expected} with new '
                'text)' + (f' vs {b_inputs}' if baseline else '') + ('; UNEXPECTED INPUTS, see stderr' if wrong else '')
            )
            rows.append(
                Row(
                    EMBEDDING_SECTION,
                    f're-index after editing one file, {label}',
                    'files/s',
                    ws.files / m_s,
                    'OpenClaw arch: read + sha256 each file, re-embed the changed one' if baseline else '',
                    ws.files / b_s if baseline else None,
                    check,
                )
            )

            step(f'full re-index, warm cache, {label}, memsift')
            hits = index.cache_hits
            server.take()
            m_s, _ = best_time(lambda: index.sync(force=True), reps)
            hits, m_stats = (index.cache_hits - hits) // reps, server.take()
            check = f'{m_s:.1f} s'
            b_value = None
            if baseline is not None and vec_extension is not None:
                step(f'full re-index, warm cache, {label}, OpenClaw baseline')
                r_db = tmp / 'b-reindex.sqlite'
                b_s, fresh = best_build(
                    lambda: reindex_baseline(apsw, r_db, b_db, vec_extension, root, server), lambda b: b.close(), reps
                )
                b_value = count_rows(fresh) / b_s
                fresh.close()
                check += f' vs {b_s:.1f} s'
            b_stats = server.take()
            check += (
                f'; server inputs {m_stats.inputs}'
                + (f' vs {b_stats.inputs}' if b_value else '')
                + f'; memsift cache hits {hits:,} per re-index'
            )
            rows.append(
                Row(
                    EMBEDDING_SECTION,
                    f'full re-index (force), warm cache, {label}',
                    'chunks/s',
                    chunks / m_s,
                    'OpenClaw arch: safe reindex, new DB seeded with the cache' if b_value else '',
                    b_value,
                    check,
                )
            )
            status = index.status()['cache']
            lines.append(
                f'section 5 memsift embedding cache: {status["entries"]:,} entries, {status["hits"]:,} hits, '
                f'{status["misses"]:,} misses since it was opened (cold index, edits, re-indexes)'
            )
            index.close()
            if baseline is not None:
                baseline.close()
    finally:
        server.close()
    return rows, lines


# ---------------------------------------------------------------- 6. session transcripts

SESSION_SECTION = '6. Session transcripts (memsift.SessionStore vs an OpenClaw-style SQLite FTS5 sessions index)'
SESSION_PEER = 'sqlite fts5 unicode61'
SESSION_MESSAGES = 200
"""Messages per session."""
SESSION_SIZE, SESSION_SIZE_QUICK, SESSION_SIZE_LONG = 100_000, 20_000, 1_000_000
"""Messages in the store appended one at a time; with ``--long`` it is bulk-filled up to the last size."""
SESSION_QUERIES = 200
SESSION_CMRC_QUICK = 500
"""CMRC2018 questions posed with ``--quick`` (all of them otherwise)."""
SESSION_CALLER = 'agent:main:main'
"""The main session of agent ``main``: it sees every session of the agent."""
SESSION_LIMIT = 10
SESSION_T0 = 1_767_225_600_000
"""Timestamp of message 0 (2026-01-01, in ms); message i comes i seconds later."""
SESSION_BULK_ROWS = 50_000
"""Messages per transaction when bulk-filling the ``--long`` stores."""
SESSION_SNIPPET_CHARS = 300
OPENCLAW_SESSIONS_SCHEMA = """
CREATE TABLE events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, event_id TEXT NOT NULL, parent_id TEXT,
                     role TEXT, timestamp INTEGER NOT NULL, body TEXT NOT NULL);
CREATE INDEX events_session ON events(session_id, id);
CREATE VIRTUAL TABLE fts USING fts5(text, session_id UNINDEXED, tokenize='unicode61 remove_diacritics 2');
CREATE TABLE active_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL,
                            PRIMARY KEY (session_id, seq));
CREATE TABLE index_state (session_id TEXT PRIMARY KEY, indexed_seq INTEGER NOT NULL, leaf_event_id TEXT,
                          active_event_count INTEGER NOT NULL, active_message_count INTEGER NOT NULL,
                          needs_rebuild INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL);
"""
OPENCLAW_SESSIONS_INSERT_ACTIVE = 'INSERT INTO active_events (session_id, seq, event_id) VALUES (?, ?, ?)'
OPENCLAW_SESSIONS_UPSERT_STATE = (
    'INSERT INTO index_state (session_id, indexed_seq, leaf_event_id, active_event_count, active_message_count, '
    'updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET indexed_seq = excluded.indexed_seq, '
    'leaf_event_id = excluded.leaf_event_id, active_event_count = active_event_count + excluded.active_event_count, '
    'active_message_count = active_message_count + excluded.active_message_count, updated_at = excluded.updated_at'
)
OPENCLAW_SESSIONS_INSERT_EVENT = (
    'INSERT INTO events (session_id, event_id, parent_id, role, timestamp, body) VALUES (?, ?, ?, ?, ?, ?)'
)
OPENCLAW_SESSIONS_SEARCH = (
    'SELECT e.session_id, e.event_id, e.timestamp, e.role, fts.text FROM fts JOIN events e ON e.id = fts.rowid '
    'WHERE fts MATCH ? ORDER BY bm25(fts), e.timestamp DESC LIMIT ?'
)


def session_events(
    texts: Sequence[str],
    start: int,
    stop: int,
    roles: Sequence[str] = ('user', 'assistant'),
    ids: Sequence[str] | None = None,
) -> Iterator[tuple[str, dict]]:
    """``(session key, transcript event)`` of messages ``start`` to ``stop - 1``.

    Message i holds ``texts[i % len(texts)]`` and sits in session ``agent:main:s{i // 200}`` (one linear
    transcript: its parent is the session's previous message); roles alternate through ``roles``, the timestamp is
    ``SESSION_T0`` plus i seconds and the id is ``ids[i]`` (default ``m{i}``).
    """
    for i in range(start, stop):
        session, n = divmod(i, SESSION_MESSAGES)
        event_id = ids[i] if ids is not None else f'm{i}'
        parent = (ids[i - 1] if ids is not None else f'm{i - 1}') if n else None
        yield (
            f'agent:main:s{session:05d}',
            {
                'type': 'message',
                'id': event_id,
                'parentId': parent,
                'timestamp': SESSION_T0 + 1000 * i,
                'message': {'role': roles[n % len(roles)], 'content': texts[i % len(texts)]},
            },
        )


class OpenClawSessionBaseline:
    """OpenClaw's sessions index, rebuilt in Python on SQLite (the stdlib module, as memsift's store uses).

    An ``events`` table (the raw JSON line, with an index on the session for history reads), an FTS5 table
    ``fts(text, session_id UNINDEXED, tokenize='unicode61 remove_diacritics 2')`` whose rowid is the event's, and
    the forward-indexing bookkeeping OpenClaw writes in the same transaction (reference §11.6): the event's row in
    ``active_events`` and the session's ``index_state`` (indexed seq, leaf, active counts). An append writes all of
    them in one ``BEGIN IMMEDIATE`` ... ``COMMIT``; WAL and ``synchronous = NORMAL``, the
    durability settings of memsift's store. A search quotes every whitespace-separated term (``"`` doubled) and
    joins them with ``AND``, ranked by ``bm25(fts)`` then newest first.
    """

    def __init__(self, db: Path) -> None:
        remove_db(db)
        self.conn = sqlite3.connect(db, isolation_level=None)
        self.conn.execute('PRAGMA journal_mode = WAL')
        self.conn.execute('PRAGMA synchronous = NORMAL')
        self.conn.executescript(OPENCLAW_SESSIONS_SCHEMA)

    @staticmethod
    def event_row(session_key: str, event: dict) -> tuple:
        message = event['message']
        return (
            session_key,
            event['id'],
            event['parentId'],
            message['role'],
            event['timestamp'],
            json.dumps(event, ensure_ascii=False),
        )

    def append(self, session_key: str, event: dict) -> None:
        """One event and its full-text row, in one transaction."""
        conn = self.conn
        conn.execute('BEGIN IMMEDIATE')
        try:
            rowid = conn.execute(OPENCLAW_SESSIONS_INSERT_EVENT, self.event_row(session_key, event)).lastrowid
            conn.execute(OPENCLAW_SESSIONS_INSERT_ACTIVE, (session_key, rowid, event['id']))
            conn.execute(
                'INSERT INTO fts (rowid, text, session_id) VALUES (?, ?, ?)',
                (rowid, event['message']['content'], session_key),
            )
            conn.execute(OPENCLAW_SESSIONS_UPSERT_STATE, (session_key, rowid, event['id'], 1, 1, event['timestamp']))
            conn.execute('COMMIT')
        except BaseException:
            conn.execute('ROLLBACK')
            raise

    def bulk(self, events: Iterable[tuple[str, dict]]) -> None:
        """The same rows as ``append`` would write, ``SESSION_BULK_ROWS`` events per transaction."""
        conn = self.conn
        rowid = conn.execute('SELECT COALESCE(MAX(id), 0) FROM events').fetchone()[0]
        batch: list[tuple[int, str, dict]] = []

        def flush() -> None:
            conn.execute('BEGIN IMMEDIATE')
            conn.executemany(
                'INSERT INTO events (id, session_id, event_id, parent_id, role, timestamp, body) '
                'VALUES (?, ?, ?, ?, ?, ?, ?)',
                [(i, *self.event_row(k, e)) for i, k, e in batch],
            )
            conn.executemany(OPENCLAW_SESSIONS_INSERT_ACTIVE, [(k, i, e['id']) for i, k, e in batch])
            conn.executemany(
                'INSERT INTO fts (rowid, text, session_id) VALUES (?, ?, ?)',
                [(i, e['message']['content'], k) for i, k, e in batch],
            )
            conn.executemany(
                OPENCLAW_SESSIONS_UPSERT_STATE, [(k, i, e['id'], 1, 1, e['timestamp']) for i, k, e in batch]
            )
            conn.execute('COMMIT')
            batch.clear()

        for key, event in events:
            rowid += 1
            batch.append((rowid, key, event))
            if len(batch) == SESSION_BULK_ROWS:
                flush()
        if batch:
            flush()

    def search(self, query: str, limit: int = SESSION_LIMIT) -> list[tuple[str, str, int, str, str]]:
        """``(session id, event id, timestamp, role, snippet)`` of the best ``limit`` messages with every term."""
        match = ' AND '.join('"' + term.replace('"', '""') + '"' for term in query.split())
        if not match:
            return []
        return [
            (session, event_id, timestamp, role, text[:SESSION_SNIPPET_CHARS])
            for session, event_id, timestamp, role, text in self.conn.execute(OPENCLAW_SESSIONS_SEARCH, (match, limit))
        ]

    def close(self) -> None:
        self.conn.close()


def bulk_memsift_sessions(db: Path, texts: Sequence[str], start: int, stop: int) -> None:
    """Fill a closed memsift session store with messages ``start`` to ``stop - 1`` through
    ``SessionStore.append_many``: one transaction per session's run of messages (the same rows ``append`` writes)."""
    with memsift.SessionStore(db) as store:
        batch: list[dict] = []
        current = None
        for key, event in session_events(texts, start, stop):
            if key != current and batch:
                store.append_many(current, batch)
                batch = []
            current = key
            batch.append(event)
        if batch:
            store.append_many(current, batch)


def timed_appends(append: Callable[[str, dict], object], events: Sequence[tuple[str, dict]]) -> tuple[float, float]:
    """Seconds to append ``events`` one call each, and the rate (messages/s) over the last tenth of them."""
    mark = len(events) - max(1, len(events) // 10)
    tail = start = time.perf_counter()
    for i, (key, event) in enumerate(events):
        if i == mark:
            tail = time.perf_counter()
        append(key, event)
    end = time.perf_counter()
    return end - start, (len(events) - mark) / (end - tail)


def memsift_session_hits(store: memsift.SessionStore) -> Callable[[str], list[dict]]:
    """``store.search`` as the main session of agent ``main`` (every session visible), top 10, as the hit list."""
    return lambda q: store.search(q, caller=SESSION_CALLER, limit=SESSION_LIMIT).get('results', [])


def session_search_rows(
    store: memsift.SessionStore, baseline: OpenClawSessionBaseline, queries: list[str], label: str, passes: int
) -> list[Row]:
    """The search p50 row (queries/s = 1 / p50) at one store size, with ms and non-empty result counts."""
    ours = latencies(memsift_session_hits(store), queries, passes)
    theirs = latencies(baseline.search, queries, passes)
    mine, peers = float(np.percentile(ours[0], 50)), float(np.percentile(theirs[0], 50))
    found = f'queries with >= 1 hit: {sum(map(bool, ours[1]))} vs {sum(map(bool, theirs[1]))} of {len(queries)}'
    return [
        Row(
            SESSION_SECTION,
            f'search p50, AND of terms, {label}',
            'queries/s (1/p50)',
            1 / mine,
            SESSION_PEER,
            1 / peers,
            f'p50 {mine * 1000:.2f} ms vs {peers * 1000:.2f} ms; {found}',
        )
    ]


def session_store_counts(store: memsift.SessionStore) -> tuple[int, int]:
    """``(sessions, events)`` of a session store, with a warning when some session is not indexed."""
    sessions = store.sessions()
    if not all(s['indexed'] for s in sessions):
        log('warning: section 6 memsift store has sessions waiting for a rebuild')
    return len(sessions), sum(s['events'] for s in sessions)


def cmrc_keywords(question: str) -> str:
    """A Chinese question as ``jieba.lcut`` words joined by spaces, single characters and punctuation dropped."""
    return ' '.join(w for w in jieba.lcut(question) if len(w) > 1 and WORD.search(w))


def bench_cmrc_recall(data_root: Path, quick: bool, tmp: Path) -> list[Row]:
    """Recall@10 on CMRC2018: each passage one assistant message (sessions of 200), each question posed raw and
    as jieba keywords to both engines."""
    data = _beir.load_dataset(data_root / 'cmrc2018')
    questions = data.queries[:SESSION_CMRC_QUICK] if quick else data.queries
    jieba.setLogLevel(60)
    jieba.initialize()
    variants = (
        ('raw question (one term: no spaces)', [text for _, text in questions]),
        ('jieba keywords (words of 2+ chars)', [cmrc_keywords(text) for _, text in questions]),
    )
    # All-terms mode: these rows compare OpenClaw's AND-of-terms search; the ranked default gets its own row below.
    store = memsift.SessionStore(tmp / 'cmrc-memsift.sqlite', search_mode='all-terms')
    baseline = OpenClawSessionBaseline(tmp / 'cmrc-baseline.sqlite')
    for key, event in session_events(data.docs, 0, len(data.docs), roles=('assistant',), ids=data.doc_ids):
        store.append(key, event)
        baseline.append(key, event)
    search = memsift_session_hits(store)
    rows = []
    for label, texts in variants:
        log(f'sessions: CMRC2018 recall, {label}, {len(texts):,} questions')
        ours = [[hit['messageId'] for hit in search(q)] if q else [] for q in texts]
        theirs = [[hit[1] for hit in baseline.search(q)] for q in texts]
        recall = [
            float(
                np.mean(
                    [_beir.recall_at_k(run, data.qrels[qid], SESSION_LIMIT) for (qid, _), run in zip(questions, runs)]
                )
            )
            for runs in (ours, theirs)
        ]
        terms = np.mean([len(q.split()) for q in texts])
        check = (
            f'{len(texts):,} questions, {len(data.docs):,} passages, {terms:.1f} terms per question; '
            f'questions with >= 1 hit: {sum(map(bool, ours)):,} vs {sum(map(bool, theirs)):,}'
        )
        rows.append(
            Row(SESSION_SECTION, f'CMRC2018 Recall@10, {label}', 'Recall@10', recall[0], SESSION_PEER, recall[1], check)
        )
    raw = variants[0][1]
    with memsift.SessionStore(tmp / 'cmrc-memsift.sqlite') as ranked:  # the default: ranked top-up
        runs = [[hit['messageId'] for hit in memsift_session_hits(ranked)(q)] for q in raw]
        baseline_runs = [[hit[1] for hit in baseline.search(q)] for q in raw]
        recall = [
            float(
                np.mean([_beir.recall_at_k(run, data.qrels[qid], SESSION_LIMIT) for (qid, _), run in zip(questions, r)])
            )
            for r in (runs, baseline_runs)
        ]
    rows.append(
        Row(
            SESSION_SECTION,
            'CMRC2018 Recall@10, raw question, memsift ranked (default mode)',
            'Recall@10',
            recall[0],
            SESSION_PEER,
            recall[1],
            f'{len(raw):,} questions; questions with >= 1 hit: {sum(map(bool, runs)):,} vs '
            f'{sum(map(bool, baseline_runs)):,}',
        )
    )
    store.close()
    baseline.close()
    return rows


def bench_sessions(data_root: Path, quick: bool, long: bool) -> tuple[list[Row], list[str]]:
    """Section 6 rows: memsift's SessionStore vs an OpenClaw-style SQLite FTS5 ``unicode61`` sessions index.

    Append throughput: SciFact texts (English) as messages, alternating user and assistant, in sessions of 200,
    appended one at a time (each message and its index row in one transaction, the product's contract) into an
    empty store until it holds ~100k messages (``quick``: ~20k). Search: 200 SciFact queries with AND-of-terms on
    that store (p50, as queries/s with the ms in the check column), and with ``long`` again at 1M messages: that
    store is the 100k one bulk-filled with 900k more messages in transactions of 50k (for memsift, straight into its
    ``sessions``, ``events`` and ``message_fts`` tables with the token text ``SessionStore.append`` writes, as
    ``Analyzer.tokenize_batch`` joined by spaces): at the ~2.5k appends/s measured for each engine on 2 cores, and
    falling as the store grows, appending 1M messages one at a time would take over 12 minutes for the two.
    Recall: CMRC2018 (Chinese) passages as assistant messages, each question (``quick``: the first 500) posed raw
    and as jieba keywords; Recall@10 against the qrels.
    """
    started = time.perf_counter()

    def step(message: str) -> None:
        log(f'sessions [{time.perf_counter() - started:4.0f} s]: {message}')

    scifact = _beir.load_dataset(data_root / 'scifact')
    texts, queries = scifact.docs, [text for _, text in scifact.queries[:SESSION_QUERIES]]
    size = SESSION_SIZE_QUICK if quick else SESSION_SIZE
    label = f'{size:,} messages'
    rows: list[Row] = []
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix='memsift-bench-') as tmp_name:
        tmp = Path(tmp_name)
        m_db, b_db = tmp / 'sessions-memsift.sqlite', tmp / 'sessions-baseline.sqlite'
        events = list(session_events(texts, 0, size))
        step(f'append {label} one at a time, memsift')
        store = memsift.SessionStore(m_db, search_mode='all-terms')  # the rows compare AND-of-terms search
        m_s, m_tail = timed_appends(store.append, events)
        step(f'append {label} one at a time, {SESSION_PEER}')
        baseline = OpenClawSessionBaseline(b_db)
        b_s, b_tail = timed_appends(baseline.append, events)
        n_sessions, n_events = session_store_counts(store)
        rows.append(
            Row(
                SESSION_SECTION,
                f'append, one transaction each, empty store -> {label}',
                'messages/s',
                size / m_s,
                SESSION_PEER,
                size / b_s,
                f'{m_s:.1f} s vs {b_s:.1f} s; last 10%: {m_tail:,.0f} vs {b_tail:,.0f} messages/s',
            )
        )
        lines.append(
            f'section 6 store: {n_events:,} messages in {n_sessions:,} sessions of {SESSION_MESSAGES} '
            f'(SciFact texts, {mb(texts)} for one copy of the corpus)'
        )
        step(f'search, {label}, {len(queries)} queries')
        rows += session_search_rows(store, baseline, queries, label, passes=REPS)
        if long:
            store.close()
            big = f'{SESSION_SIZE_LONG:,} messages'
            step(f'bulk fill to {big}, memsift')
            bulk_memsift_sessions(m_db, texts, size, SESSION_SIZE_LONG)
            step(f'bulk fill to {big}, {SESSION_PEER}')
            baseline.bulk(session_events(texts, size, SESSION_SIZE_LONG))
            store = memsift.SessionStore(m_db, search_mode='all-terms')
            n_sessions, n_events = session_store_counts(store)
            lines.append(
                f'section 6 long store: {n_events:,} messages in {n_sessions:,} sessions (bulk-filled from {size:,})'
            )
            step(f'search, {big}, {len(queries)} queries')
            rows += session_search_rows(store, baseline, queries, big, passes=2)
        store.close()
        baseline.close()
        step('CMRC2018 recall')
        rows += bench_cmrc_recall(data_root, quick, tmp)
    return rows, lines


# ---------------------------------------------------------------- 7. MCP round trip

MCP_SECTION = (
    '7. MCP round trip (memory_search over stdio through the official MCP SDK client; peer: the same call in-process)'
)
MCP_QUERIES = 200


async def mcp_latencies(client: Any, queries: list[str], passes: int) -> tuple[np.ndarray, list[list]]:
    """:func:`latencies` for ``memory_search`` tool calls over an MCP client session (result: the hit paths)."""

    async def call(query: str) -> list[str]:
        result = await client.call_tool('memory_search', {'query': query})
        if result.is_error:
            raise RuntimeError(f'memory_search over MCP failed: {result.content[0].text[:500]}')
        return [hit['path'] for hit in result.structured_content['results']]

    for q in queries:
        await call(q)
    best = np.full(len(queries), np.inf)
    results: list[list] = []
    for _ in range(passes):
        results = []
        for i, q in enumerate(queries):
            start = time.perf_counter()
            results.append(await call(q))
            best[i] = min(best[i], time.perf_counter() - start)
    return best, results


def bench_mcp(data_root: Path, quick: bool) -> tuple[list[Row], list[str]]:
    """Section 7 rows: ``memory_search`` through ``memsift mcp`` (stdio) vs in-process, on one FTS-only index."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from memsift.tools import MemoryTools

    data = _beir.load_dataset(data_root / 'scifact')
    queries = [text for _, text in data.queries[: MCP_QUERIES // 2 if quick else MCP_QUERIES]]
    size = MEMORY_SIZES[0] // 2 if quick else MEMORY_SIZES[0]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix='memsift-bench-') as tmp_name:
        tmp = Path(tmp_name)
        log(f'mcp: writing a workspace of ~{size:,} chunks')
        ws = write_workspace(tmp / 'ws', scifact_notes(data), size)
        db, sessions, config = tmp / 'index.sqlite', tmp / 'sessions.sqlite', tmp / 'config.json'
        config.write_text(json.dumps(memsift_config(db)))
        with MemoryTools.open(ws.root, memsift_config(db), sessions_path=sessions, sync=False) as tools:
            tools.index.sync()
            label = f'{tools.index.status()["chunks"]:,} chunks'
            log(f'mcp: in-process memory_search, {label}, {len(queries)} queries')
            inproc = latencies(lambda q: [hit['path'] for hit in tools.memory_search(q)['results']], queries, REPS)

        # The server is started after the in-process runs: both never compete for the cores.
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                '-m',
                'memsift',
                'mcp',
                '--workspace',
                str(ws.root),
                '--config',
                str(config),
                '--sessions-db',
                str(sessions),
            ],
        )

        async def over_mcp() -> tuple[float, tuple[np.ndarray, list[list]]]:
            with open(tmp / 'server.log', 'w') as errlog:
                start = time.perf_counter()
                async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
                    await client.call_tool('memory_search', {'query': queries[0]})
                    first = time.perf_counter() - start
                    return first, await mcp_latencies(client, queries, REPS)

        log(f'mcp: memory_search over stdio, {label}, {len(queries)} queries')
        try:
            first, remote = anyio.run(over_mcp)
        except Exception:
            log((tmp / 'server.log').read_text()[-2000:])
            raise
    same = sum(a == b for a, b in zip(remote[1], inproc[1]))
    for pct in (50, 95):
        theirs, ours = float(np.percentile(remote[0], pct)), float(np.percentile(inproc[0], pct))
        check = f'p{pct} {theirs * 1000:.2f} ms vs {ours * 1000:.2f} ms (+{(theirs - ours) * 1000:.2f} ms)'
        if pct == 50:
            check += f'; same results for {same}/{len(queries)} queries'
        rows.append(
            Row(
                MCP_SECTION,
                f'memory_search p{pct} over MCP stdio, {label}',
                f'queries/s (1/p{pct})',
                1 / theirs,
                'MemoryTools.memory_search in-process',
                1 / ours,
                check,
            )
        )
    rows.append(
        Row(
            MCP_SECTION,
            f'`memsift mcp` start to first memory_search answer, {label}',
            's',
            first,
            check='process start, imports, index open, MCP handshake, one query',
        )
    )
    return rows, [f'section 7 workspace: {ws.describe()}, {label}']


# ---------------------------------------------------------------- output


def environment() -> dict:
    """Versions, cores, OpenBLAS overrides and (if threadpoolctl is importable) BLAS thread pools."""
    env = {
        'memsift': memsift.__version__,
        'numpy': np.__version__,
        'bm25s': getattr(bm25s, '__version__', '?'),
        'sqlite': sqlite3.sqlite_version,
        'cpus': os.cpu_count(),
        'openblas_env': {k: v for k, v in os.environ.items() if k.startswith('OPENBLAS_')},
    }
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return env
    env['threadpools'] = [
        {k: info.get(k) for k in ('internal_api', 'version', 'num_threads', 'architecture')}
        for info in threadpool_info()
    ]
    return env


def fmt(value: float | None) -> str:
    """Compact number: thousands separators from 100 up, 3 significant digits below."""
    if value is None:
        return '-'
    return f'{value:,.0f}' if value >= 100 else f'{value:.3g}'


def print_tables(env: dict, rows: list[Row], goals: list[str]) -> None:
    """Markdown tables, one per section, then the goal lines."""
    print(f'environment: {json.dumps(env)}')
    if env['openblas_env']:
        print('note: OPENBLAS_* overrides are set; numpy may be slower than usual (see benches/README.md)')
    header = '| task | unit | memsift | peer | peer value | ratio | check |'
    section = None
    for row in rows:
        if row.section != section:
            section = row.section
            print(f'\n## {section}\n\n{header}\n|---|---|--:|---|--:|--:|---|')
        ratio = f'{row.ratio:.2f}x' if row.ratio is not None else '-'
        print(
            f'| {row.task} | {row.unit} | {fmt(row.memsift)} | {row.peer or "-"} | {fmt(row.peer_value)} '
            f'| {ratio} | {row.check} |'
        )
    print()
    for line in goals:
        print(line)


ALL_SECTIONS = (1, 2, 3, 4, 5, 6, 7)


def parse_sections(text: str) -> tuple[int, ...]:
    """``'1,4'`` -> ``(1, 4)``; every number must name a section."""
    try:
        sections = tuple(sorted({int(part) for part in text.split(',') if part.strip()}))
    except ValueError:
        sections = ()
    if not sections or not set(sections) <= set(ALL_SECTIONS):
        raise argparse.ArgumentTypeError(
            f'expected section numbers from {ALL_SECTIONS} separated by commas, got {text!r}'
        )
    return sections


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        '--data-root',
        type=Path,
        default=_beir.DEFAULT_DATA_ROOT,
        help='directory holding scifact/ and cmrc2018/ (default: ../shared/data from the repo root)',
    )
    parser.add_argument(
        '--quick',
        action='store_true',
        help='halve the input sizes (section 4: only the ~10k-chunk workspace; section 5: ~2k chunks; '
        'section 6: ~20k messages, 500 CMRC2018 questions; section 7: ~5k chunks, 100 queries)',
    )
    parser.add_argument('--json', action='store_true', help='print one JSON object instead of tables')
    parser.add_argument(
        '--long',
        action='store_true',
        help='section 4: hybrid search on the ~100k-chunk workspace too (adds about 5 minutes); '
        'section 6: search on a 1M-message store too (bulk-filled; roughly 5 more minutes on 2 '
        'cores and ~11 GB of temporary disk)',
    )
    parser.add_argument(
        '--sections',
        type=parse_sections,
        default=ALL_SECTIONS,
        metavar='N[,N...]',
        help='sections to run, e.g. 4 or 1,2,3 (default: all)',
    )
    return parser.parse_args()


def main() -> None:
    """Run the chosen sections and print the results."""
    args = parse_args()
    sections = set(args.sections)
    needed = {'scifact'} if sections & {1, 2, 4, 5, 6, 7} else set()
    if sections & {1, 6}:
        needed.add('cmrc2018')
    for name in sorted(needed):
        _beir.require_dataset_dir(args.data_root / name, '--data-root')
    scale = 0.5 if args.quick else 1.0
    env = environment()

    rows: list[Row] = []
    goals: list[str] = []
    if 1 in sections:
        rows, goals = bench_tokenizer(args.data_root, scale)
    if 2 in sections:
        rows += bench_bm25(args.data_root)
    if 3 in sections:
        rows += bench_vectors((int(10_000 * scale), int(100_000 * scale)), n_queries=200)
    if 4 in sections:
        env.update(memory_environment())
        memory_rows, memory_lines = bench_memory(args.data_root, args.quick, args.long)
        rows += memory_rows
        goals += memory_lines
    if 5 in sections:
        env.update(memory_environment(), httpx=httpx.__version__)
        embedding_rows, embedding_lines = bench_embedding(args.data_root, args.quick)
        rows += embedding_rows
        goals += embedding_lines
    if 6 in sections:
        env.update(jieba=jieba.__version__)
        session_rows, session_lines = bench_sessions(args.data_root, args.quick, args.long)
        rows += session_rows
        goals += session_lines
    if 7 in sections:
        env.update(mcp=importlib.metadata.version('mcp'))
        mcp_rows, mcp_lines = bench_mcp(args.data_root, args.quick)
        rows += mcp_rows
        goals += mcp_lines

    if args.json:
        records = [{**asdict(row), 'ratio': row.ratio} for row in rows]
        print(json.dumps({'environment': env, 'rows': records, 'goals': goals}))
    else:
        print_tables(env, rows, goals)


if __name__ == '__main__':
    main()
