"""``explain``: how each hit of a search was scored, and which candidates were cut and why.

Two steps, in pipeline order: :func:`candidate_explains` turns the ranking call's per-candidate report into one
row per chunk (at the ranking stage); :func:`explained_hits` puts each kept row on its hit, with its final position
(after any reranking), and lists the best of the rest in ``debug['cut']`` (at the results stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsift._core import normalize_weights
from memsift._record import replace
from memsift.config import HybridConfig
from memsift.index.records import ChunkHead, ChunkRow
from memsift.search.legs import LegScores
from memsift.search.request import SearchMode
from memsift.search.results import MemoryHit

__all__ = ['CUT_SHOWN', 'candidate_explains', 'explained_hits']

CUT_SHOWN = 10
"""How many of the best candidates left out ``debug['cut']`` lists."""
_PLACE = ('path', 'startLine', 'endLine')


def candidate_explains(
    heads: Sequence[ChunkHead],
    legs: LegScores,
    rows: Sequence[dict[str, Any]],
    mode: SearchMode,
    hybrid: HybridConfig,
    whens: Sequence[float] | None = None,
) -> dict[int, dict[str, Any]]:
    """Each candidate's scoring by chunk id: where it is, the legs' raw scores, the weights, and the stages as the
    ranking call reports them in ``rows`` (one per head, in order; positions made 1-based); ``timeFactor`` when the
    query had time words (``whens``)."""
    weights = {'hybrid': normalize_weights(hybrid.vector_weight, hybrid.text_weight), 'vector-only': (1.0, 0.0)}
    vector_weight, text_weight = weights.get(mode, (0.0, 1.0))
    out = {}
    for at, (head, row) in enumerate(zip(heads, rows, strict=True)):
        i = head.id
        out[i] = {
            'path': head.path,
            'startLine': head.start_line,
            'endLine': head.end_line,
            'bm25': legs.keyword.get(i, 0.0),
            'bm25Normalized': row['keyword'],
            'cosine': legs.vector.get(i, 0.0),
            'pathScore': legs.path.get(i, 0.0),
            'pathTier': legs.tier.get(i, 0),
            'vectorWeight': vector_weight,
            'textWeight': text_weight,
            'merged': row['merged'],
            **({'timeFactor': whens[at]} if whens is not None else {}),
            'decay': row['decay'],
            'dateSource': row['dateSource'],
            **({'importance': row['importance']} if row.get('importance', 1.0) != 1.0 else {}),
            'positionBeforeMmr': row['beforeMmr'] + 1,
            'position': None if row['position'] is None else row['position'] + 1,
            'score': min(1.0, row['score']),
            'cut': row['cut'],
        }
    return out


def explained_hits(
    hits: list[MemoryHit],
    ranked: Sequence[tuple[ChunkRow, float]],
    explained: dict[int, dict[str, Any]],
    merged_order: dict[int, int],
    debug: dict[str, Any],
) -> list[MemoryHit]:
    """The hits with their ``explain``, and ``debug['cut']``: the :data:`CUT_SHOWN` best-scored candidates left out,
    and why (``minScore``: under the floor; ``limit``: past ``max_results``). ``merged_order`` is each chunk's
    1-based position before reranking."""
    out = []
    for at, (hit, (row, _)) in enumerate(zip(hits, ranked, strict=True), 1):
        why = {k: v for k, v in explained[row.id].items() if k not in (*_PLACE, 'cut')}
        if 'reranked' in debug and merged_order[row.id] != at:
            why['positionBeforeRerank'] = merged_order[row.id]
        why['position'] = at
        out.append(replace(hit, explain=why))
    shown = {row.id for row, _ in ranked}
    cut = [row for chunk_id, row in explained.items() if chunk_id not in shown]
    cut.sort(key=lambda row: -row['score'])
    debug['cut'] = [
        {key: row[key] for key in (*_PLACE, 'score', 'merged', 'cut')}
        | ({'cut': 'limit'} if row['cut'] is None else {})  # kept for the reranker, then past max_results
        for row in cut[:CUT_SHOWN]
    ]
    return out
