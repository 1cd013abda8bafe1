"""The first stage of a search: check and normalize what the caller asked for.

>>> from memsift.config import load_config
>>> request = SearchRequest.parse('  where is the deploy key\\ud83d ', None, 0.2, load_config(None).query)
>>> request.text, request.limit, request.floor
('where is the deploy key\\ufffd', 6, 0.2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from memsift._record import field, record
from memsift._text import MAX_QUERY_CHARS, preview, scrub
from memsift.config import QueryConfig
from memsift.errors import InvalidInputError

__all__ = ['MAX_QUERY_CHARS', 'SearchMode', 'SearchRequest']

SearchMode = Literal['hybrid', 'vector-only', 'fts-only']
"""Both legs, the vector leg alone, or keywords alone (no provider, or a query the model cannot read)."""


@record(frozen=False, slots=False)
class SearchRequest:
    """A checked search: the query text as the engine reads it, how many results, and the score floor."""

    text: str
    limit: int
    floor: float
    session_key: str | None = None
    sources: Sequence[str] | None = None
    debug: dict[str, Any] = field(default_factory=lambda: {'backend': 'memsift'})

    @classmethod
    def parse(
        cls,
        query: object,
        max_results: object,
        min_score: object,
        defaults: QueryConfig,
        session_key: str | None = None,
        sources: Sequence[str] | None = None,
    ) -> SearchRequest:
        """Check the arguments of ``MemoryIndex.search`` (``None``: the config's ``maxResults``/``minScore``).

        Raises:
            InvalidInputError: the query is not a string, ``max_results`` not a positive integer, or ``min_score``
                not a finite number (it is then clamped to [0, 1]).
        """
        if not isinstance(query, str):
            raise InvalidInputError(f'query must be a string, got {type(query).__name__}')
        limit = defaults.max_results if max_results is None else max_results
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(f'max_results must be a positive integer, got {preview(max_results)}')
        floor = defaults.min_score if min_score is None else min_score
        if (
            isinstance(floor, bool)
            or not isinstance(floor, (int, float))
            or (isinstance(floor, float) and not math.isfinite(floor))
        ):
            raise InvalidInputError(f'min_score must be a number between 0 and 1, got {preview(min_score)}')
        floor = 1.0 if floor > 1 else 0.0 if floor < 0 else float(floor)  # compared first: 10**400 has no float
        request = cls('', limit, floor, session_key, sources)
        # Lone surrogates (from a broken client) cannot be encoded for the engine: replace them.
        text = scrub(query).strip()
        if len(text) > MAX_QUERY_CHARS:
            text = text[:MAX_QUERY_CHARS]
            request.debug['queryTruncated'] = True
        request.text = text
        return request
