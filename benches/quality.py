"""Retrieval quality of memsift on BEIR-layout datasets; prints one JSON line per run.

Modes:
    bm25       memsift.Bm25Index (in RAM) on ``--data``; nDCG@k, recall@k, recall@100 and timings.
    dense      The pipeline with the local embedding model alone (vector-only; needs memsift[local]).
    hybrid     The pipeline with the local model and BM25 merged (OpenClaw's 0.7 / 0.3 weights).
    semantic   dense then hybrid on one index (the corpus is embedded once).
    fts        The whole memory pipeline in FTS-only mode: one Markdown file per document under ``memory/`` of a
               temporary workspace, ``MemoryIndex.sync`` then ``MemoryIndex.search`` per query.
    bm25s      The long-query reference: bm25s (k1=1.2, b=0.75) with PyStemmer's English stemmer and its own
               tokenizer, with and without its English stopwords, beside memsift's BM25 on ``--data``.
    segmenter  Tokenization only, under one BM25 (bm25s, k1=1.2, b=0.75): memsift.tokenize vs
               jieba.lcut_for_search on ``--data`` (meant for CJK, e.g. cmrc2018); one line per segmenter.
    all        bm25 on every dataset under ``--data-root``, stemming on and off.

Examples (from the repository root):
    .venv/bin/python benches/quality.py --data ../shared/data/scifact --mode bm25
    .venv/bin/python benches/quality.py --data ../shared/data/scifact --mode fts
    .venv/bin/python benches/quality.py --data ../shared/data/cmrc2018 --mode segmenter
    .venv/bin/python benches/quality.py --data ../shared/data/cranfield --mode bm25s
    .venv/bin/python benches/quality.py --mode all
    .venv/bin/python benches/quality.py --data ../shared/data/cmrc2018 --mode semantic --model multilingual-e5-small
"""

import argparse
import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _beir

import memsift

DEEP_K = 100
"""Search depth: enough for recall@100."""


def run_bm25(data: _beir.Dataset, stem: bool, k: int) -> dict:
    """Index ``data`` in an in-RAM memsift.Bm25Index, run every test query and return the result record."""
    start = time.perf_counter()
    index = memsift.Bm25Index(None, stem=stem)
    index.add(list(range(len(data.docs))), data.doc_ids, ['memory'] * len(data.docs), data.docs)
    index.commit()
    index_s = time.perf_counter() - start

    start = time.perf_counter()
    run = {qid: [data.doc_ids[i] for i, _ in index.search(text, k=max(k, DEEP_K))] for qid, text in data.queries}
    query_s = time.perf_counter() - start

    metrics = _beir.evaluate(run, data.qrels, k=k, deep_k=DEEP_K)
    return {
        'dataset': data.name,
        'mode': 'bm25',
        'stem': stem,
        **{key: value for key, value in metrics.items() if key != 'queries'},
        'queries': metrics['queries'],
        'docs': index.num_docs,
        'index_s': round(index_s, 3),
        'query_s': round(query_s, 3),
    }


def write_workspace(data: _beir.Dataset, root: Path) -> dict[str, str]:
    """One ``memory/<doc id>.md`` per document; returns workspace path -> doc id."""
    (root / 'memory').mkdir(parents=True)
    paths = {}
    for doc_id, text in zip(data.doc_ids, data.docs):
        path = f'memory/{re.sub(r"[^A-Za-z0-9_.-]", "_", doc_id)}.md'
        (root / path).write_text(text, encoding='utf-8')
        paths[path] = doc_id
    return paths


PIPELINE_SETTINGS = {
    'fts': {'provider': 'none'},
    'dense': {'provider': 'local', 'query': {'hybrid': {'enabled': False}}},
    'hybrid': {'provider': 'local'},
}
"""memory.search settings per pipeline mode: keyword-only, the local model alone, both (OpenClaw's 0.7/0.3 merge)."""


def run_pipeline(data: _beir.Dataset, k: int, mode: str = 'fts', model: str | None = None) -> dict:
    """Index ``data`` as a memory workspace and search it through ``MemoryIndex`` in ``mode``."""
    return run_pipelines(data, k, (mode,), model)[0]


def run_pipelines(data: _beir.Dataset, k: int, modes: tuple[str, ...], model: str | None = None) -> list[dict]:
    """One record per mode; the modes share one workspace and store, so the local model embeds the corpus once
    (``dense`` and ``hybrid`` have the same index identity: only the query settings differ)."""
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / 'workspace'
        paths = write_workspace(data, root)
        for mode in modes:
            settings = {**PIPELINE_SETTINGS[mode], 'store': {'path': str(Path(tmp) / f'{mode == "fts"}.sqlite')}}
            if model and mode != 'fts':  # a built-in model's name, or a model file
                settings |= {'local': {'modelPath': model}} if Path(model).is_file() else {'model': model}
            with memsift.MemoryIndex(root, {'agents': {'defaults': {'memorySearch': settings}}}) as index:
                if mode != 'fts' and index.provider is None:
                    _beir.fail(f'--mode {mode} needs the local model: {index.resolution.reason}')
                report = index.sync()
                latencies, run = [], {}
                for qid, text in data.queries:
                    start = time.perf_counter()
                    result = index.search(text, max_results=DEEP_K, min_score=0.0)
                    latencies.append(time.perf_counter() - start)
                    ranked = []
                    for hit in result.results:
                        doc = paths[hit.path]
                        if doc not in ranked:
                            ranked.append(doc)
                    run[qid] = ranked
            metrics = _beir.evaluate(run, data.qrels, k=k, deep_k=DEEP_K)
            latencies.sort()
            records.append(
                {
                    'dataset': data.name,
                    'mode': mode,
                    **({'model': index.provider.model} if index.provider else {}),
                    **{key: value for key, value in metrics.items() if key != 'queries'},
                    'queries': metrics['queries'],
                    'files': len(paths),
                    'index_s': round(report.seconds, 3),
                    'query_p50_ms': round(statistics.median(latencies) * 1000, 3),
                    'query_p95_ms': round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 3),
                }
            )
    return records


def run_fts(data: _beir.Dataset, k: int) -> dict:
    """The pipeline in FTS-only mode (no provider)."""
    return run_pipeline(data, k, 'fts')


def jieba_tokenizer() -> Callable[[str], list[str]]:
    """jieba.lcut_for_search, lower-cased, dropping tokens without a letter or digit (spaces, punctuation)."""
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()

    def tokenize(text: str) -> list[str]:
        return [t.lower() for t in jieba.lcut_for_search(text) if any(ch.isalnum() for ch in t)]

    return tokenize


def bm25s_ranking(retriever, tokens: list[str], doc_ids: list[str], depth: int) -> list[str]:
    """Ranked doc ids of one pre-tokenized query from a bm25s retriever (zero-score hits dropped)."""
    docs, scores = retriever.retrieve([tokens], k=min(depth, len(doc_ids)), show_progress=False)
    return [doc_ids[i] for i, score in zip(docs[0], scores[0]) if score > 0]


def run_segmenter(data: _beir.Dataset, name: str, tokenize: Callable[[str], list[str]], k: int) -> dict:
    """Tokenize ``data`` with ``tokenize``, index it with bm25s (k1=1.2, b=0.75) and return the result record."""
    import bm25s

    start = time.perf_counter()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokenize(doc) for doc in data.docs], show_progress=False)
    index_s = time.perf_counter() - start

    start = time.perf_counter()
    depth = max(k, DEEP_K)
    run = {qid: bm25s_ranking(retriever, tokenize(text), data.doc_ids, depth) for qid, text in data.queries}
    query_s = time.perf_counter() - start

    metrics = _beir.evaluate(run, data.qrels, k=k, deep_k=DEEP_K)
    return {
        'dataset': data.name,
        'mode': 'segmenter',
        'segmenter': name,
        **{key: value for key, value in metrics.items() if key != 'queries'},
        'queries': metrics['queries'],
        'docs': len(data.docs),
        'index_s': round(index_s, 3),
        'query_s': round(query_s, 3),
    }


def run_bm25s_stemmed(data: _beir.Dataset, stopwords: str | None, k: int) -> dict:
    """bm25s with PyStemmer (``pip install PyStemmer``) and its regex tokenizer; ``stopwords='en'`` drops its
    English stopword list from documents and queries."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer('english')
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize(data.docs, stopwords=stopwords, stemmer=stemmer, show_progress=False), show_progress=False
    )
    run = {}
    for qid, text in data.queries:
        words = bm25s.tokenize([text], stopwords=stopwords, stemmer=stemmer, show_progress=False, return_ids=False)
        tokens = [t for t in words[0] if t in retriever.vocab_dict]
        run[qid] = bm25s_ranking(retriever, tokens, data.doc_ids, max(k, DEEP_K)) if tokens else []
    metrics = _beir.evaluate(run, data.qrels, k=k, deep_k=DEEP_K)
    return {'dataset': data.name, 'mode': 'bm25s-stemmed', 'stopwords': stopwords, **metrics}


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, help='BEIR dataset directory (modes bm25 and segmenter)')
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT, help='datasets for --mode all')
    parser.add_argument(
        '--mode', choices=('bm25', 'bm25s', 'fts', 'dense', 'hybrid', 'semantic', 'segmenter', 'all'), default='bm25'
    )
    parser.add_argument('--limit-docs', type=int, help='use only the first N documents (and their queries)')
    parser.add_argument('--no-stem', action='store_true', help='disable English stemming (bm25, segmenter)')
    parser.add_argument('--k', type=int, default=10, help='cut-off for nDCG@k and recall@k (default 10)')
    parser.add_argument(
        '--model', help='local model for dense/hybrid/semantic: a name (multilingual-e5-small) or a file'
    )
    args = parser.parse_args()
    if args.mode != 'all' and args.data is None:
        parser.error(f'--data is required for --mode {args.mode}')
    return args


def main() -> None:
    """Run the selected mode and print one JSON line per result."""
    args = parse_args()
    if args.mode == 'all':
        for path in _beir.dataset_dirs(args.data_root):
            data = _beir.load_dataset(path)
            for stem in (True, False):
                print(json.dumps(run_bm25(data, stem, args.k)), flush=True)
            print(json.dumps(run_fts(data, args.k)), flush=True)
        return

    data = _beir.load_dataset(args.data)
    if args.limit_docs:
        data = _beir.subset(data, args.limit_docs)
    if args.mode == 'bm25':
        print(json.dumps(run_bm25(data, not args.no_stem, args.k)))
    elif args.mode == 'bm25s':
        for stopwords in (None, 'en'):
            print(json.dumps(run_bm25s_stemmed(data, stopwords, args.k)), flush=True)
        print(json.dumps(run_bm25(data, True, args.k)))
    elif args.mode in PIPELINE_SETTINGS or args.mode == 'semantic':
        modes = ('dense', 'hybrid') if args.mode == 'semantic' else (args.mode,)
        for record in run_pipelines(data, args.k, modes, args.model):
            print(json.dumps(record), flush=True)
    else:
        analyzer = memsift.Analyzer(stem=not args.no_stem)
        for name, tokenize in (('memsift', analyzer.tokenize), ('jieba', jieba_tokenizer())):
            print(json.dumps(run_segmenter(data, name, tokenize, args.k)), flush=True)


if __name__ == '__main__':
    main()
