"""The ranking stage: one call into the Rust core (``memsift._core.rank_candidates``, ``src/rank.rs``) that merges
the legs (best-score scaling of BM25, weights, union), runs OpenClaw's relaxed pass when nothing reaches
``minScore``, applies temporal decay, the filename/path tiers and MMR, and keeps ``limit`` results.

Python only gathers the candidates' columns; no score is computed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from memsift._core import rank_candidates
from memsift.config import HybridConfig
from memsift.index.records import ChunkHead
from memsift.search.explain import candidate_explains
from memsift.search.legs import LEG_CANDIDATES, LegScores
from memsift.search.request import SearchMode

__all__ = ['Ranking', 'rank']


class Ranking(NamedTuple):
    """One ranking's outcome."""

    kept: list[tuple[ChunkHead, float]]
    """The kept candidates with their scores, best first."""
    relaxed: bool
    """Whether OpenClaw's relaxed pass chose them (nothing reached ``minScore``)."""
    explained: dict[int, dict[str, Any]] | None
    """With ``explain``: how each candidate was scored, by chunk id (see
    :func:`~memsift.search.explain.candidate_explains`)."""
    legs: LegScores
    """The legs' scores the ranking merged (a result's ``textScore`` / ``vectorScore`` under OpenClaw 2.x)."""


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
    explain: bool = False,
    whens: Sequence[float] | None = None,
    importance: bool = False,
    lexical: bool = False,
) -> Ranking:
    """Rank the candidates ``heads`` by the ``legs``' scores.

    ``written`` is when each chunk was last written, epoch seconds, for temporal decay (``None``: decay is off);
    ``texts`` reads chunk texts, for MMR (read only with MMR on, in hybrid mode) and ``lexical`` scoring.
    ``keep`` (default ``limit``) results are returned: more extends the list past ``limit`` without changing its
    first ``limit`` (MMR's candidate count follows ``limit``), for a reranker to choose from. ``explain`` adds each
    candidate's scoring. ``whens`` are the time stage's factors (default: all 1). ``importance``: each chunk's
    ``<!-- importance: N -->`` multiplies its score by ``0.75 + 0.05·N`` (OpenClaw 2.x). ``lexical``: keyword hits
    score as OpenClaw 2.x's do, boosted by their overlap with the query, and partial matches give way where 2.x's
    keyword query leaves them out (``rank_candidates(lexical=True)``)."""
    ids = [head.id for head in heads]
    decay, mmr = hybrid.temporal_decay, hybrid.mmr
    with_mmr = mmr.enabled and mode == 'hybrid'
    lexical = lexical and mode != 'vector-only'
    keyword, vector, path, tier = legs.keyword, legs.vector, legs.path, legs.tier
    if with_mmr or lexical:
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
        texts=[by_id.get(i, '') for i in ids] if with_mmr or lexical else None,
        explain=explain,
        whens=whens,
        importance=[head.importance for head in heads] if importance else None,
        lexical=lexical,
    )
    order, scores, relaxed, rows = ranking
    explained = None if rows is None else candidate_explains(heads, legs, rows, mode, hybrid, whens)
    return Ranking([(heads[i], score) for i, score in zip(order, scores, strict=True)], relaxed, explained, legs)
