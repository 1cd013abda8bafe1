"""The rerank stage of a search (``query.rerank``, off by default).

After the ranking (merge, decay, path tiers, MMR), the ``topN`` best results go to a reranker that reads each
query/result pair together (the rerankers are in :mod:`memsift.providers.rerank`). Results that name the file the
query names (the exact path tiers) keep their place above the rest.

The stage is bounded: it ends within ``timeoutMs``, retries included, and before the call's deadline. Any failure
(no answer in time, an HTTP error, an answer that is not one finite score for each result at distinct indices) keeps
the merged order and says why in ``debug.rerankSkipped``; a search never fails because of its reranker.

Scores stay in [0, 1] and keep their meaning across queries: the hosted rerankers' ``relevance_score`` already is a
relevance in [0, 1] and is kept as it is; a batch with any score outside [0, 1] holds raw logits (an
OpenAI-compatible server running a cross-encoder) and each goes through the logistic function, as the local
cross-encoder's logits do. Min-max scaling within the batch is not used: it would report 1.0 for the best of ten
irrelevant results.

>>> normalize([0.25, 0.75])
[0.25, 0.75]
>>> [round(score, 3) for score in normalize([2.0, -1.0])]
[0.881, 0.269]
>>> reorder([('MEMORY.md', 1.0), ('a.md', 0.9), ('b.md', 0.8), ('c.md', 0.7)], [0.1, 0.95], pinned=1)
[('MEMORY.md', 1.0), ('b.md', 0.95), ('a.md', 0.1), ('c.md', 0.7)]
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers.rerank import HttpReranker, LocalReranker, create_reranker, is_score, sigmoid

__all__ = ['DEADLINE_MARGIN_S', 'Rerank', 'normalize', 'reorder']

DEADLINE_MARGIN_S = 0.25
"""Kept back from the call's deadline for what follows the reranker (building the hits, answering)."""
MIN_BUDGET_S = 0.05
"""Less time than this left for the stage: it is skipped rather than started with no chance to answer."""
MAX_REASON_CHARS = 300
T = TypeVar('T')


def normalize(scores: Sequence[float]) -> list[float]:
    """Scores as relevance in [0, 1]: kept when all already lie there, else each through the logistic function
    (raw logits), which keeps their order and their meaning across queries."""
    if all(0.0 <= score <= 1.0 for score in scores):
        return [float(score) for score in scores]
    return [sigmoid(score) for score in scores]


def reorder(ranked: Sequence[tuple[T, float]], scores: Sequence[float], pinned: int = 0) -> list[tuple[T, float]]:
    """``ranked`` with the ``len(scores)`` entries after the first ``pinned`` sorted by ``scores`` (which become their
    scores; ties keep the merged order); the pinned head and the tail beyond stay as they were."""
    end = pinned + len(scores)
    head = ranked[pinned:end]
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: equal scores keep the merged order
    return [*ranked[:pinned], *((head[i][0], scores[i]) for i in order), *ranked[end:]]


class Rerank:
    """The rerank stage of one index: its reranker, made on first use (a failure to make it is kept and reported
    by every search), and :meth:`apply`. Thread-safe.

    Args:
        config: The agent's config; ``query.rerank`` says what to do.
        env: Where API keys are looked up (default: the environment).
    """

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.settings = config.query.rerank
        self.top_n = self.settings.top_n
        self._env = os.environ if env is None else env
        self._reranker: HttpReranker | LocalReranker | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    @property
    def error(self) -> str | None:
        """Why the reranker could not be made (key-free), or ``None``: not tried yet, or made."""
        return self._error

    def reranker(self) -> HttpReranker | LocalReranker:
        """The reranker, made on the first call.

        Raises:
            ProviderError: it cannot be made (the same error on every call).
        """
        with self._lock:
            if self._reranker is None and self._error is None:
                try:
                    self._reranker = create_reranker(self.config, self._env)
                except Exception as exc:  # a broken model file raises whatever its runtime raises
                    self._error = _reason(exc)
            if self._reranker is None:
                raise ProviderError(self._error or 'no reranker')
            return self._reranker

    def apply(
        self,
        query: str,
        ranked: Sequence[tuple[T, float]],
        text: Callable[[T], str],
        debug: dict[str, Any],
        *,
        deadline: float | None = None,
        pinned: int = 0,
    ) -> list[tuple[T, float]]:
        """``ranked`` with its best ``topN`` entries after the first ``pinned`` reordered by the reranker, their
        scores its normalized scores (see :func:`normalize`); on any failure ``ranked`` as it was, with the reason in
        ``debug['rerankSkipped']``. Never raises.

        Args:
            query: The query as the search read it.
            ranked: The merged results, best first, with their scores.
            text: The text sent for an entry.
            debug: The search's debug dict: ``rerankMs`` and ``reranked`` (how many), or ``rerankSkipped``.
            deadline: A :func:`time.monotonic` instant the search must answer by; the stage ends
                :data:`DEADLINE_MARGIN_S` before it (and within ``timeoutMs`` in any case).
            pinned: Leading entries kept in place (the exact path hits).
        """
        head = ranked[pinned : pinned + self.top_n]
        if not head:
            return list(ranked)
        started = time.monotonic()
        end = started + self.settings.timeout_ms / 1000
        if deadline is not None:
            end = min(end, deadline - DEADLINE_MARGIN_S)
        reranker: HttpReranker | LocalReranker | None = None
        try:
            reranker = self.reranker()
            if end - time.monotonic() < MIN_BUDGET_S:
                raise ProviderError('no time left before the search deadline')
            scores = reranker.scores(query, [text(item) for item, _ in head], end)
            if len(scores) != len(head) or not all(is_score(score) for score in scores):
                raise ProviderError(f'the reranker gave {len(scores)} scores for {len(head)} results, or a bad one')
        except Exception as exc:  # whatever the reranker does, the search answers with the merged order
            reason = _reason(exc)
            debug['rerankSkipped'] = reranker.redact(reason) if reranker is not None else reason
            return list(ranked)
        finally:
            debug['rerankMs'] = round((time.monotonic() - started) * 1000, 3)
        debug['reranked'] = len(head)
        return reorder(ranked, normalize(scores), pinned)

    def close(self) -> None:
        with self._lock:
            if self._reranker is not None:
                self._reranker.close()
            self._reranker, self._error = None, 'the index is closed'


def _reason(exc: BaseException) -> str:
    """A failure as ``debug`` shows it: our own messages as they are (already scrubbed of keys), others with their
    type; bounded."""
    text = str(exc) if isinstance(exc, ProviderError) else f'{type(exc).__name__}: {exc}'
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + '...'
