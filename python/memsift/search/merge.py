"""The ranking stage: one call into the Rust core (``memsift._core.rank_candidates``, ``src/rank.rs``) that merges
the legs (best-score scaling of BM25, weights, union), runs OpenClaw's relaxed pass when nothing reaches
``minScore``, applies temporal decay, the filename/path tiers and MMR, and keeps ``limit`` results.

Python only gathers the candidates' columns; no score is computed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memsift._core import rank_candidates
from memsift.config import HybridConfig
from memsift.index.store import ChunkRow
from memsift.search.legs import LEG_CANDIDATES, Candidate
from memsift.search.request import SearchMode

__all__ = ['Ranked', 'rank']


@dataclass(frozen=True, slots=True)
class Ranked:
    """A kept chunk and its final score."""

    row: ChunkRow
    score: float


def rank(
    candidates: Sequence[Candidate],
    rows: Mapping[int, ChunkRow],
    mtime: Callable[[ChunkRow], float | None],
    *,
    mode: SearchMode,
    text: str,
    keyword_best: float,
    hybrid: HybridConfig,
    limit: int,
    floor: float,
) -> tuple[list[Ranked], bool]:
    """Rank ``candidates`` (each with a row in ``rows``); returns the kept results, best first, and whether the
    relaxed pass ran. ``mtime`` gives a chunk's age source for temporal decay (``None``: it does not decay)."""
    chunks = [rows[c.id] for c in candidates]
    decay, mmr = hybrid.temporal_decay, hybrid.mmr
    order, scores, relaxed = rank_candidates(
        [c.id for c in candidates],
        [c.vector_score for c in candidates],
        [c.keyword_score for c in candidates],
        [c.path_score for c in candidates],
        [c.tier for c in candidates],
        [row.path for row in chunks],
        [row.source for row in chunks],
        [mtime(row) for row in chunks],
        [row.text for row in chunks],
        mode=mode,
        query=text,
        keyword_best=keyword_best,
        vector_weight=hybrid.vector_weight,
        text_weight=hybrid.text_weight,
        decay=(time.time(), decay.half_life_days) if decay.enabled else None,
        mmr=(mmr.lambda_, min(LEG_CANDIDATES, limit * hybrid.candidate_multiplier)) if mmr.enabled else None,
        min_score=floor,
        limit=min(limit, len(candidates)),  # (a huge max_results is just "all of them")
    )
    return [Ranked(chunks[i], score) for i, score in zip(order, scores, strict=True)], relaxed
