"""Shared helpers for the memsift benchmarks: BEIR-layout loading and retrieval metrics.

A BEIR dataset directory holds ``corpus.jsonl`` (``{"_id", "title", "text"}``), ``queries.jsonl``
(``{"_id", "text"}``) and ``qrels/test.tsv`` (``query-id, corpus-id, score`` with a header line).

The metric functions are small and pure; check them with ``python -m doctest benches/_beir.py -v``.
"""

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_ROOT = Path(__file__).resolve().parents[2] / 'shared' / 'data'
"""``../shared/data`` relative to the repository root."""

REQUIRED_FILES = ('corpus.jsonl', 'queries.jsonl', 'qrels/test.tsv')


@dataclass(frozen=True)
class Dataset:
    """A loaded BEIR test split.

    ``docs[i]`` is ``title + "\\n" + text`` of the corpus document ``doc_ids[i]``; ``queries`` holds
    ``(query_id, text)`` for the queries named in ``qrels/test.tsv``, in ``queries.jsonl`` order.
    """

    name: str
    doc_ids: list[str]
    docs: list[str]
    queries: list[tuple[str, str]]
    qrels: dict[str, dict[str, int]]


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` to stderr and exit with ``code``."""
    print(f'error: {message}', file=sys.stderr)
    raise SystemExit(code)


def require_dataset_dir(path: Path, option: str = '--data') -> None:
    """Exit with status 2 and a clear message unless ``path`` is a BEIR dataset directory (``option`` sets it)."""
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        fail(f'dataset directory not found or incomplete: {path} (missing {", ".join(missing)}); set it with {option}')


def read_jsonl(path: Path) -> list[dict]:
    """Parse a JSON-lines file, skipping blank lines."""
    with path.open(encoding='utf-8') as f:
        return [json.loads(line) for line in f if line.strip()]


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a BEIR qrels TSV into ``{query_id: {doc_id: grade}}`` (the header line is skipped)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding='utf-8') as f:
        next(f)
        for line in f:
            if line.strip():
                query_id, doc_id, grade = line.rstrip('\n').split('\t')
                qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


def load_dataset(path: Path) -> Dataset:
    """Load the test split of the BEIR dataset in ``path`` (exits with status 2 if it is missing)."""
    require_dataset_dir(path)
    corpus = read_jsonl(path / 'corpus.jsonl')
    qrels = load_qrels(path / 'qrels' / 'test.tsv')
    queries = [(q['_id'], q['text']) for q in read_jsonl(path / 'queries.jsonl') if q['_id'] in qrels]
    return Dataset(
        name=path.resolve().name,
        doc_ids=[d['_id'] for d in corpus],
        docs=[f'{d.get("title", "")}\n{d.get("text", "")}' for d in corpus],
        queries=queries,
        qrels=qrels,
    )


def subset(data: Dataset, max_docs: int) -> Dataset:
    """A smaller test set: the relevant documents of the first queries (up to half of ``max_docs``), filled up with
    other documents in corpus order; only queries whose relevant documents are all kept remain."""
    keep: set[str] = set()
    for qid, _ in data.queries:
        relevant = set(data.qrels.get(qid, {}))
        if len(keep | relevant) > max_docs // 2:
            break
        keep |= relevant
    for doc_id in data.doc_ids:
        if len(keep) >= max_docs:
            break
        keep.add(doc_id)
    rows = [(d, t) for d, t in zip(data.doc_ids, data.docs) if d in keep]
    queries = [(q, t) for q, t in data.queries if data.qrels.get(q) and set(data.qrels[q]) <= keep]
    return Dataset(
        name=f'{data.name}[{len(rows)} docs]',
        doc_ids=[d for d, _ in rows],
        docs=[t for _, t in rows],
        queries=queries,
        qrels={q: data.qrels[q] for q, _ in queries},
    )


def dataset_dirs(root: Path) -> list[Path]:
    """BEIR dataset directories directly under ``root``, sorted by name (exits with status 2 if none)."""
    if not root.is_dir():
        fail(f'data root not found: {root}; pass --data-root PATH')
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and (p / 'corpus.jsonl').is_file())
    if not dirs:
        fail(f'no BEIR datasets (directories with corpus.jsonl) under {root}')
    return dirs


# ---------------------------------------------------------------- metrics


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain with linear gain: ``sum(gain_i / log2(i + 1))`` over 1-based ranks ``i``.

    >>> dcg([1, 0, 1])
    1.5
    >>> dcg([])
    0.0
    """
    return sum((gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1)), 0.0)


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k of one ranking: gain = qrel grade (negative grades count 0), ideal from that query's qrels.

    >>> ndcg_at_k(['a', 'b'], {'a': 1})
    1.0
    >>> round(ndcg_at_k(['x', 'a'], {'a': 1}), 4)  # 1/log2(3)
    0.6309
    >>> round(ndcg_at_k(['b', 'a'], {'a': 2, 'b': 1}), 4)  # (1 + 2/log2(3)) / (2 + 1/log2(3))
    0.8597
    >>> ndcg_at_k(['a'], {'a': 0})
    0.0
    """
    ideal = dcg(sorted((max(g, 0) for g in qrels.values()), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(qrels.get(doc_id, 0), 0) for doc_id in ranked[:k]]) / ideal


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Fraction of the relevant documents (grade > 0) found in the top ``k`` of ``ranked``.

    >>> recall_at_k(['a', 'x', 'b'], {'a': 1, 'b': 1, 'c': 0}, 2)
    0.5
    >>> recall_at_k(['a', 'x', 'b'], {'a': 1, 'b': 1}, 3)
    1.0
    """
    relevant = {doc_id for doc_id, grade in qrels.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def evaluate(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], k: int = 10, deep_k: int = 100
) -> dict[str, float]:
    """Mean nDCG@k, recall@k and recall@deep_k over the queries of ``run`` that have a positive qrel.

    ``run`` maps a query id to its ranked document ids. Returns the metrics rounded to 4 decimals
    and ``queries``, the number of queries averaged.

    >>> evaluate({'q1': ['a'], 'q2': ['x'], 'q3': ['a']}, {'q1': {'a': 1}, 'q2': {'a': 1}, 'q3': {'a': 0}}, deep_k=5)
    {'ndcg@10': 0.5, 'recall@10': 0.5, 'recall@5': 0.5, 'queries': 2}
    """
    judged = [qid for qid in run if any(g > 0 for g in qrels.get(qid, {}).values())]
    n = len(judged)

    def mean(values: list[float]) -> float:
        return round(sum(values) / n, 4) if n else 0.0

    return {
        f'ndcg@{k}': mean([ndcg_at_k(run[q], qrels[q], k) for q in judged]),
        f'recall@{k}': mean([recall_at_k(run[q], qrels[q], k) for q in judged]),
        f'recall@{deep_k}': mean([recall_at_k(run[q], qrels[q], deep_k) for q in judged]),
        'queries': n,
    }
