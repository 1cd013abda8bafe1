"""The ranking stage: one call into the Rust core (``memsift._core.rank_candidates``, ``src/rank.rs``) that merges
the legs (best-score scaling of BM25, weights, union), runs OpenClaw's relaxed pass when nothing reaches
``minScore``, applies temporal decay, the filename/path tiers and MMR, and keeps ``limit`` results.

Python only gathers the candidates' columns; no score is computed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memsift._core import normalize_weights, rank_candidates
from memsift.config import HybridConfig
from memsift.index.store import ChunkHead
from memsift.search.legs import LEG_CANDIDATES, LegScores
from memsift.search.request import SearchMode

__all__ = ['rank']


def rank(
    legs: LegScores,
    heads: Sequence[ChunkHead],
    *,
    written: Sequence[float | None] | None,
    texts: Callable[[Sequence[int]], Mapping[int, str]],
    mode: SearchMode,
    text: str,
    hybrid: HybridConfig,
    limit: int,
    floor: float,
    keep: int | None = None,
    explain: dict[int, dict[str, Any]] | None = None,
) -> tuple[list[tuple[ChunkHead, float]], bool]:
    """Rank the candidates ``heads`` by the ``legs``' scores; returns the kept ones with their scores, best first,
    and whether the relaxed pass ran. ``written`` is when each chunk was last written, epoch seconds, for temporal
    decay (``None``: decay is off); ``texts`` reads chunk texts, for MMR (read only with MMR on, in hybrid mode).
    ``keep`` (default ``limit``) results are returned: more extends the list past ``limit`` without changing its
    first ``limit`` (MMR's candidate count follows ``limit``), for a reranker to choose from. ``explain``, when a
    dict, receives each candidate's scoring by chunk id (the legs' raw scores, the weights, and the stages as the
    ranking call reports them; positions 1-based)."""
    ids = [head.id for head in heads]
    decay, mmr = hybrid.temporal_decay, hybrid.mmr
    with_mmr = mmr.enabled and mode == 'hybrid'
    keyword, vector, path, tier = legs.keyword, legs.vector, legs.path, legs.tier
    if with_mmr:
        by_id = texts(ids)
    ranking = rank_candidates(
        ids,
        [vector.get(i, 0.0) for i in ids],
        [keyword.get(i, 0.0) for i in ids],
        [path.get(i, 0.0) for i in ids],
        [tier.get(i, 0) for i in ids],
        [head.path for head in heads],
        [head.source for head in heads],
        written if written is not None and decay.enabled else [None] * len(heads),
        [head.chars for head in heads],
        mode=mode,
        query=text,
        keyword_best=max(keyword.values(), default=0.0),
        vector_weight=hybrid.vector_weight,
        text_weight=hybrid.text_weight,
        decay=(time.time(), decay.half_life_days) if decay.enabled else None,
        mmr=(mmr.lambda_, min(LEG_CANDIDATES, limit * hybrid.candidate_multiplier)) if mmr.enabled else None,
        min_score=floor,
        limit=min(limit if keep is None else max(limit, keep), len(heads)),  # (a huge max_results: "all of them")
        texts=[by_id.get(i, '') for i in ids] if with_mmr else None,
        explain=explain is not None,
    )
    order, scores, relaxed = ranking[0], ranking[1], ranking[2]
    if explain is not None and len(ranking) == 4:
        weights = {'hybrid': normalize_weights(hybrid.vector_weight, hybrid.text_weight), 'vector-only': (1.0, 0.0)}
        vector_weight, text_weight = weights.get(mode, (0.0, 1.0))
        for i, row in zip(ids, ranking[3], strict=True):
            explain[i] = {
                'bm25': keyword.get(i, 0.0),
                'bm25Normalized': row['keyword'],
                'cosine': vector.get(i, 0.0),
                'pathScore': path.get(i, 0.0),
                'pathTier': tier.get(i, 0),
                'vectorWeight': vector_weight,
                'textWeight': text_weight,
                'merged': row['merged'],
                'decay': row['decay'],
                'dateSource': row['dateSource'],
                'positionBeforeMmr': row['beforeMmr'] + 1,
                'position': None if row['position'] is None else row['position'] + 1,
                'score': min(1.0, row['score']),
                'cut': row['cut'],
            }
    return [(heads[i], score) for i, score in zip(order, scores, strict=True)], relaxed
