"""Speed of memsift against common peers, measured in the same run; prints ratio tables (or JSON).

Sections:
    1. Tokenizer throughput on one core (MB/s of UTF-8 input): English (scifact) vs a Python regex,
       Chinese (cmrc2018) vs jieba.lcut.
    2. BM25 on SciFact: build (docs/s) and top-10 query (queries/s) vs bm25s and SQLite FTS5,
       with each engine's nDCG@10 next to its speed.
    3. Vectors: exact top-10 (f32, f16, i8) vs numpy on random unit vectors, then HNSW (ANN) vs exact.

Every ratio is memsift / peer of a higher-is-better rate, so > 1 means memsift is faster.
Run from the repository root (unset the OpenBLAS overrides of this machine so numpy is not handicapped):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benches/speed.py [--quick] [--json]
"""

import argparse
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

import _beir
import bm25s
import jieba
import memsift
import numpy as np

MB = 1e6
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
        rows.append(Row(section, f'EN tokenize, {label}', 'MB/s', throughput(memsift.tokenize, texts),
                        're \\w+ lower', regex, f'input {mb(texts)}'))
        rows.append(Row(section, f'EN count_tokens, {label}', 'MB/s', throughput(count_tokens, texts),
                        're \\w+ lower', regex, f'input {mb(texts)}'))
    # The goals are about the analyzer; `tokenize` also pays for one Python str per token.
    latin = rows[1]
    for label, texts in ((f'{len(chinese)} docs', chinese), ('one string', ['\n'.join(chinese)])):
        log(f'tokenizer: Chinese, {label}')
        jieba_mbs = throughput(jieba.lcut, texts, reps=1)
        rows.append(Row(section, f'ZH tokenize, {label}', 'MB/s', throughput(memsift.tokenize, texts),
                        'jieba.lcut', jieba_mbs, f'input {mb(texts)}'))
        rows.append(Row(section, f'ZH count_tokens, {label}', 'MB/s', throughput(count_tokens, texts),
                        'jieba.lcut', jieba_mbs, f'input {mb(texts)}'))
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
        rows.append(Row(section, f'exact {dtype}, n={n:,}', 'queries/s', n_queries / seconds, 'numpy f32 M @ q',
                        n_queries / numpy_s, f'top-10 agree {agreement(found, truth):.1f}%'))
    return rows, truth


def build_ann(matrix: np.ndarray, probe: np.ndarray) -> memsift.VectorStore:
    """VectorStore with HNSW active from the first vector, filled with ``matrix`` and searched once (``probe``)."""
    store = memsift.VectorStore(matrix.shape[1], ann_threshold=1)
    store.add(np.arange(len(matrix), dtype=np.uint64), matrix)
    store.search(probe, k=10)
    return store


def bench_ann(section: str, matrix: np.ndarray, queries: np.ndarray, truth: list[np.ndarray], exact_qps: float,
              label: str) -> list[Row]:
    """HNSW build rate, then HNSW queries/s vs exact f32 and its recall@10 against numpy's exact top-10."""
    n, n_queries = len(matrix), len(queries)
    build_s, store = best_time(lambda: build_ann(matrix, queries[0]), reps=1)
    if not store.ann_active:
        log('warning: VectorStore(ann_threshold=1).ann_active is False after add')
    seconds, found = best_time(lambda: store_top10(store, queries, exact=None))
    return [
        Row(section, f'ANN build (HNSW), n={n:,}, {label}', 'vectors/s', n / build_s, check=f'{build_s:.1f} s'),
        Row(section, f'ANN f32, n={n:,}, {label}', 'queries/s', n_queries / seconds, 'memsift exact f32', exact_qps,
            f'recall@10 {agreement(found, truth) / 100:.3f}'),
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
    return bench_ann(section, matrix, queries, truth, n_queries / exact_s, 'clustered')


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
        print(f'| {row.task} | {row.unit} | {fmt(row.memsift)} | {row.peer or "-"} | {fmt(row.peer_value)} '
              f'| {ratio} | {row.check} |')
    print()
    for line in goals:
        print(line)


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT,
                        help='directory holding scifact/ and cmrc2018/ (default: ../shared/data from the repo root)')
    parser.add_argument('--quick', action='store_true', help='halve the input sizes')
    parser.add_argument('--json', action='store_true', help='print one JSON object instead of tables')
    return parser.parse_args()


def main() -> None:
    """Run the three sections and print the results."""
    args = parse_args()
    for name in ('scifact', 'cmrc2018'):
        _beir.require_dataset_dir(args.data_root / name, '--data-root')
    scale = 0.5 if args.quick else 1.0
    env = environment()

    rows, goals = bench_tokenizer(args.data_root, scale)
    rows += bench_bm25(args.data_root)
    rows += bench_vectors((int(10_000 * scale), int(100_000 * scale)), n_queries=200)

    if args.json:
        records = [{**asdict(row), 'ratio': row.ratio} for row in rows]
        print(json.dumps({'environment': env, 'rows': records, 'goals': goals}))
    else:
        print_tables(env, rows, goals)


if __name__ == '__main__':
    main()
