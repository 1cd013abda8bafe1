"""The retrieval legs: each finds candidate chunks for a query, with its own score.

- keyword: BM25 over chunk text (tantivy), raw scores;
- vector: cosine similarity to the query's embedding (exact SIMD scan or usearch ANN);
- path: exact file-name tiers (full path, basename, stem) and BM25 over paths for partial matches (§6).

Every leg fetches :data:`LEG_CANDIDATES` whatever ``maxResults`` is, so the top results do not move with it.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from memsift._core import Bm25Index, VectorStore, bm25_score_to_unit
from memsift._record import field, record
from memsift.embedding import EmbeddingProvider, embed_query
from memsift.index.records import ChunkHead
from memsift.search.paths import Catalogue

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    import numpy as np
    import numpy.typing as npt

    from memsift.index.protocol import Store

__all__ = ['COMMIT_WAIT_S', 'LEG_CANDIDATES', 'LegScores', 'keyword_leg', 'path_leg', 'start_vector_leg', 'vector_leg']

LEG_CANDIDATES = 200
"""Candidates fetched per leg whatever ``maxResults`` is, so the top results do not move with it (OpenClaw #134604)."""
COMMIT_WAIT_S = 1.0
"""How long a search that caught a writer between its store write and its BM25 commit waits for that commit."""
_EXACT_PATH_CANDIDATE_LIMIT = 200


@record(frozen=False, slots=False)
class LegScores:
    """Each leg's scores by chunk id; a chunk a leg did not find is absent from that leg's mapping."""

    keyword: dict[int, float] = field(default_factory=dict)
    """Raw BM25 (the ranking scales it: hybrid by the query's best match, FTS-only r / (1 + r))."""
    vector: dict[int, float] = field(default_factory=dict)
    """Cosine similarity, clamped at 0."""
    path: dict[int, float] = field(default_factory=dict)
    """Partial path match (BM25 over paths, r / (1 + r)), on a file's first chunk."""
    tier: dict[int, int] = field(default_factory=dict)
    """Exact path tier on a file's first chunk: 3 full path, 2 basename, 1 stem."""

    def ids(self) -> list[int]:
        """Every candidate, once."""
        return list({**self.keyword, **self.vector, **self.path, **self.tier})


def keyword_leg(
    bm25: Bm25Index, store: Store, text: str, debug: dict[str, Any]
) -> tuple[dict[int, float], dict[int, ChunkHead]]:
    """BM25 hits (chunk id -> raw score) and the chunks they name, read together.

    A writer (here or in another process) replaces a file's chunks in the store first and commits the BM25
    index right after; a search in between would find the old chunk ids gone from the store and lose the file.
    When it sees that, it waits (at most :data:`COMMIT_WAIT_S`) for the commit.
    """
    started = time.monotonic()
    while True:
        hits = dict(bm25.search(text, LEG_CANDIDATES))
        heads = store.chunk_heads(hits)
        # Retried until the two agree, not until the generations do: another thread may reload the index
        # between this search and a generation check, so equal generations say nothing about these hits.
        if len(heads) == len(hits) or time.monotonic() - started > COMMIT_WAIT_S:
            return hits, heads
        time.sleep(0.005)
        bm25.reload()
        debug['awaitedCommitMs'] = round((time.monotonic() - started) * 1000, 3)


def vector_leg(vectors: VectorStore, query_vector: npt.NDArray[np.float32]) -> dict[int, float]:
    """Chunks nearest the query's embedding (chunk id -> cosine clamped at 0; none for a zero vector)."""
    import numpy as np

    if not np.any(query_vector) or not len(vectors):
        return {}
    ids, scores = vectors.search(query_vector, LEG_CANDIDATES)
    return {chunk_id: max(0.0, score) for chunk_id, score in zip(ids.tolist(), scores.tolist())}


_VECTOR_WORKERS = 4
"""Vector legs that run at once (across searches); more queue. Each is mostly GIL-free work."""
_vector_pool: ThreadPoolExecutor | None = None
_vector_pool_lock = threading.Lock()


def start_vector_leg(
    provider: EmbeddingProvider, vectors: VectorStore, text: str
) -> Future[tuple[dict[int, float], float, float]]:
    """Embed the query and run :func:`vector_leg` on a worker thread, so both overlap the keyword and path legs
    (the embedding call and the vector scan release the GIL). The future gives ``(hits, embed ms, search ms)`` or
    raises what embedding raised (:class:`~memsift.errors.ProviderError`)."""
    global _vector_pool
    with _vector_pool_lock:
        if _vector_pool is None:
            from concurrent.futures import ThreadPoolExecutor  # only hybrid searches need it

            _vector_pool = ThreadPoolExecutor(_VECTOR_WORKERS, thread_name_prefix='memsift-vector-leg')
        pool = _vector_pool

    def run() -> tuple[dict[int, float], float, float]:
        started = time.perf_counter()
        query_vector = embed_query(provider, text)
        embedded = time.perf_counter()
        hits = vector_leg(vectors, query_vector)
        return hits, round((embedded - started) * 1000, 3), round((time.perf_counter() - embedded) * 1000, 3)

    return pool.submit(run)


def path_leg(catalogue: Catalogue, bm25: Bm25Index, store: Store, text: str) -> tuple[dict[int, int], dict[int, float]]:
    """Files the query names: ``{first chunk id: tier}`` for exact names, ``{first chunk id: score}`` for partial
    matches (BM25 over paths, r / (1 + r)). A file is represented by its first chunk."""
    exact = dict(list(catalogue.exact(text).items())[:_EXACT_PATH_CANDIDATE_LIMIT])
    tiers = {chunk_id: exact[path] for path, chunk_id in store.first_chunks(list(exact)).items()}
    partial: dict[str, float] = {}
    hits = bm25.search_paths(text, LEG_CANDIDATES)
    if hits:
        heads = store.chunk_heads([chunk_id for chunk_id, _ in hits])
        for chunk_id, score in hits:
            head = heads.get(chunk_id)
            if head is not None and head.path not in exact:
                partial[head.path] = max(partial.get(head.path, 0.0), bm25_score_to_unit(score))
    return tiers, {chunk_id: partial[path] for path, chunk_id in store.first_chunks(list(partial)).items()}
