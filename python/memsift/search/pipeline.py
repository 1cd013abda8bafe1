"""One memory search, stage by stage: ``MemoryIndex.search`` hands the request here and gets the result back.

The stages, in order: check the request (:mod:`~memsift.search.request`); catch up with the workspace and other
writers (``Freshness.prepare``); pick the mode; run the legs (:mod:`~memsift.search.legs`: keyword, vector, path);
keep what the caller may see; rank (:mod:`~memsift.search.merge`: one Rust call); rerank, when ``query.rerank`` is
on (:mod:`~memsift.search.rerank`); build the hits (:mod:`~memsift.search.results`) and their ``explain``
(:mod:`~memsift.search.explain`). ``debug`` reports each stage's time.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> search = {'store': {'path': str(ws / 'index.sqlite')}}
>>> with MemoryIndex(ws, {'agents': {'defaults': {'memorySearch': search}}}) as index:
...     _ = index.sync()
...     result = index.pipeline.search('deploy key', None, None, SearchOptions(keyword_only=True))
>>> result.mode, result.results[0].path
('fts-only', 'MEMORY.md')
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from memsift._record import record, replace
from memsift._text import preview
from memsift.config import MemoryConfig
from memsift.errors import InvalidInputError, ProviderError
from memsift.index.frontmatter import front_matter
from memsift.index.records import ChunkHead, ChunkRow
from memsift.providers import SILENT
from memsift.redact import Redactor
from memsift.search.dates import ChunkDates, path_filter
from memsift.search.dedupe import collapse, ranked_for
from memsift.search.explain import explained_hits
from memsift.search.legs import LegScores, keyword_leg, path_leg, start_vector_leg
from memsift.search.merge import Ranking, rank
from memsift.search.request import SearchMode, SearchRequest
from memsift.search.rerank import Rerank
from memsift.search.results import MemoryHit, SearchResult, openclaw2_fields, wants_citations
from memsift.search.when import TimeWords, in_range, read_query_time, time_factors

if TYPE_CHECKING:
    from memsift.index.freshness import Freshness
    from memsift.index.session_memory import SessionMemory

__all__ = ['RANKING_ATTEMPTS', 'SearchOptions', 'SearchPipeline']

RANKING_ATTEMPTS = 3
"""Rankings tried when a writer replaces a result's file between the ranking and the read of its text."""


@record(slots=False)
class SearchOptions:
    """How to run one search, besides the query and its limits (see ``MemoryIndex.search`` for each)."""

    session_key: str | None = None
    sources: Sequence[str] | None = None
    keyword_only: bool = False
    wait_for_sync: bool = True
    deadline: float | None = None
    rerank: bool = True
    explain: bool = False
    since: object = None
    until: object = None
    paths: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    now: datetime | None = None


class _ProviderFailed(Exception):
    """An explicitly configured embedding provider failed while ranking (the search may switch to its fallback)."""

    def __init__(self, error: ProviderError, debug: dict[str, Any]) -> None:
        super().__init__(str(error))
        self.error, self.debug = error, debug


class SearchPipeline:
    """The search stages of one memory index.

    Args:
        config: The agent's config (``query.*``).
        freshness: Keeps the store, keyword index and embeddings searched here current.
        session_memory: The transcripts indexed with the notes (their visibility and dates), if any.
        rerank: The rerank stage (``query.rerank``), if on.
        snippet_redactor: Masks secrets in snippets (``query.redactSnippets``), if on.
    """

    def __init__(
        self,
        config: MemoryConfig,
        freshness: Freshness,
        session_memory: SessionMemory | None,
        rerank: Rerank | None,
        snippet_redactor: Redactor | None,
    ) -> None:
        self.config, self.freshness, self.session_memory = config, freshness, session_memory
        self.rerank, self.snippet_redactor = rerank, snippet_redactor
        self.store, self.index, self.embeddings = freshness.store, freshness.index, freshness.embeddings
        self.dates = ChunkDates(self.store, session_memory)

    def search(self, query: object, max_results: object, min_score: object, options: SearchOptions) -> SearchResult:
        """The result of one search (see ``MemoryIndex.search``).

        Raises:
            InvalidInputError: ``query``, ``max_results`` or ``min_score`` is not what it should be.
        """
        started = time.perf_counter()
        for attempt in range(2):
            request = self._request(query, max_results, min_score, options)
            try:
                return self._search(request, options, self._when(request, options), started)
            except _ProviderFailed as failed:
                # Once more with the fallback provider, from the start (the index is re-embedded for it).
                if attempt or not self.freshness.switch_to_fallback(failed.error):
                    return self._unavailable(str(failed.error), failed.debug, started)
        raise AssertionError('unreachable: the second attempt returns')

    def _request(self, query: object, max_results: object, min_score: object, options: SearchOptions) -> SearchRequest:
        request = SearchRequest.parse(
            query, max_results, min_score, self.config.query, options.session_key, options.sources
        )
        if self.session_memory is not None:
            # Transcripts are indexed in the redaction's searchable form (each mask one constant): the question is
            # read in it too, so a guessed secret reads as any other of its shape and cannot be confirmed.
            request.text = self.session_memory.sessions.redactor.redact_for_search(request.text)
        return request

    def _when(self, request: SearchRequest, options: SearchOptions) -> _When:
        """The time stage's inputs: the filters, checked, and the query's time words, taken out of its text."""
        read = read_query_time(request.text, options.since, options.until, options.now, self.config.query.time_words)
        tags = _check_tags(options.tags)
        if read.words is not None:
            request.text = read.text
            request.debug['time'] = read.words.report()
        return _When(read.today, read.words, read.since, read.until, path_filter(options.paths), tags)

    def _search(self, request: SearchRequest, options: SearchOptions, when: _When, started: float) -> SearchResult:
        debug = request.debug
        try:
            if not options.keyword_only:
                self.embeddings.ready()
                self.freshness.prepare(debug, options.wait_for_sync)
        except ProviderError as exc:
            return self._unavailable(str(exc), debug, started)
        result = self._empty_result(debug)
        mode = result.mode = self._choose_mode(request.text, options.keyword_only, debug)
        if not self.config.enabled:
            result.error = f'memory search is disabled for agent {self.config.agent_id!r}'
            result.warning = 'memorySearch.enabled is false in the config'
            result.action = 'set agents.defaults.memorySearch.enabled (or memory.search.enabled) to true'
        elif request.text:
            result.results, result.mode = self._hits(request, mode, options, when)
        debug['hits'] = len(result.results)
        debug['searchMs'] = round((time.perf_counter() - started) * 1000, 3)
        return result

    def _hits(
        self, request: SearchRequest, mode: SearchMode, options: SearchOptions, when: _When
    ) -> tuple[list[MemoryHit], str]:
        """Rank, rerank and build the hits; and the mode that answered (keyword-only when a silent provider
        failed)."""
        debug = request.debug
        # The keyword-only answer past a deadline must be immediate: no reranker there.
        reranker = self.rerank if options.rerank and not options.keyword_only else None
        keep = request.limit if reranker is None else max(request.limit, reranker.top_n)
        if self.config.query.dedupe:  # copies of a fact fold away: rank spares to refill their slots
            keep = max(keep, ranked_for(request.limit))
        try:
            ranked, pinned, explained, legs = self._ranked_rows(request, mode, keep, options.explain, when)
        except ProviderError as exc:
            if self.embeddings.resolution.requested not in SILENT:
                raise _ProviderFailed(exc, debug) from exc
            # auto/local: keyword-only, silently, with the reason recorded (OpenClaw's contract)
            debug['embeddingError'] = str(exc)
            mode = debug['effectiveMode'] = 'fts-only'
            ranked, pinned, explained, legs = self._ranked_rows(request, mode, keep, options.explain, when)
        redact = self.snippet_redactor.redact if self.snippet_redactor is not None else None
        merged_order = {row.id: at for at, (row, _) in enumerate(ranked, 1)}
        if reranker is not None:
            # The reranker reads what the agent would: chunk text with secrets masked, as in snippets.
            ranked = reranker.apply(
                request.text,
                ranked,
                (lambda row: redact(row.text)) if redact is not None else (lambda row: row.text),
                debug,
                deadline=options.deadline,
                pinned=pinned,
            )
        # One hit per fact (query.dedupe): a copy folds into the best-ranked one's alsoIn, the slots refill from below.
        dedupe = self.config.query.dedupe
        ranked, also_in = collapse(ranked, request.limit, debug, explained) if dedupe else (ranked[: request.limit], {})
        cite = wants_citations(self.config.citations, request.session_key)
        hits = [MemoryHit.of(row, score, cite, redact, also_in.get(row.id, ())) for row, score in ranked]
        hits = self._with_front_matter(hits, [row for row, _ in ranked])
        if self.config.profile.tool_contract == 2:
            hits = self._with_openclaw2_fields(hits, [row for row, _ in ranked], legs, mode)
        if explained is not None:
            hits = explained_hits(hits, ranked, explained, merged_order, debug)
        return hits, mode

    def _with_openclaw2_fields(
        self, hits: list[MemoryHit], rows: Sequence[ChunkRow], legs: LegScores, mode: SearchMode
    ) -> list[MemoryHit]:
        """The fields OpenClaw 2.x gives each result: its legs' scores and where it came from."""
        known = self.store.chunk_heads([row.id for row in rows])  # cached since the ranking read them
        heads = [
            known.get(row.id) or ChunkHead(row.id, row.path, row.source, row.start_line, row.end_line, len(row.text))
            for row in rows
        ]
        observed = self._written(heads)
        return [
            replace(
                hit,
                contract=openclaw2_fields(
                    row.path,
                    row.source,
                    legs.keyword.get(row.id),
                    legs.vector.get(row.id, 0.0) if mode == 'hybrid' else None,
                    when,
                    head.importance,
                ),
            )
            for hit, row, head, when in zip(hits, rows, heads, observed, strict=True)
        ]

    def _with_front_matter(self, hits: list[MemoryHit], rows: Sequence[ChunkRow]) -> list[MemoryHit]:
        """The hits of notes that open with front-matter, with its ``title``, ``date`` and ``tags`` (read from the
        hit itself when it is the note's first chunk, else from the note's first chunk, cached)."""
        if not any(row.start_line > 1 or row.text.startswith('---') for row in rows):
            return hits  # only first chunks, none with a block: nothing to read
        later = sorted({row.path for row in rows if row.start_line > 1 and row.source != 'sessions'})
        front = self.dates.front_matters(later) if later else {}
        out = []
        for hit, row in zip(hits, rows, strict=True):
            meta = front_matter(row.text) if row.start_line == 1 else front.get(row.path)
            shown = {} if meta is None else meta.shown()
            out.append(replace(hit, front=shown) if shown else hit)
        return out

    def _empty_result(self, debug: dict[str, Any]) -> SearchResult:
        provider = self.embeddings.provider  # read after prepare: a sync there may have switched to the fallback
        return SearchResult(
            [],
            provider.id if provider is not None else 'none',
            provider.model if provider is not None else 'fts-only',
            citations=self.config.citations,
            debug=debug,
            fallback=self.embeddings.resolution.fallback_report(),
        )

    def _choose_mode(self, text: str, keyword_only: bool, debug: dict[str, Any]) -> SearchMode:
        """Hybrid when vectors serve and hybrid is on, vector-only when it is off, else keywords only (no provider,
        a provider switch not yet indexed, ``keyword_only``, or a query the model cannot read)."""
        embeddings = self.embeddings
        provider, serving, resolution = embeddings.provider, embeddings.serving, embeddings.resolution
        vector_ready = embeddings.searchable
        mode: SearchMode = (
            'hybrid'
            if vector_ready and self.config.query.hybrid.enabled
            else ('vector-only' if vector_ready else 'fts-only')
        )
        debug['effectiveMode'] = mode
        if provider is not None and not vector_ready:
            debug['vectorPaused'] = 'the index is being rebuilt for a new embedding provider/model/settings'
        if serving is not None and not embeddings.current and provider is not None:
            debug['servingModel'] = (
                f'{serving[0].id}/{serving[0].model} until {provider.id}/{provider.model} is indexed'
            )
        if resolution.reason is not None:
            debug['embeddingBootstrap'] = resolution.reason
        handles = getattr(provider, 'handles', None)
        if keyword_only and mode != 'fts-only':
            debug['vectorSkipped'] = 'keyword-only answer'
            mode = debug['effectiveMode'] = 'fts-only'
        if mode != 'fts-only' and handles is not None and not handles(text):
            # The model cannot read this query (an English-only local model and a CJK query): keyword search only.
            debug['vectorSkipped'] = f'{provider.id if provider else ""} model does not cover the query language'
            mode = debug['effectiveMode'] = 'fts-only'
        return mode

    def _unavailable(self, error: str, debug: dict[str, Any], started: float) -> SearchResult:
        """OpenClaw's unavailable result: an explicitly configured provider failed, so no silent keyword-only."""
        debug['searchMs'] = round((time.perf_counter() - started) * 1000, 3)
        provider = self.embeddings.provider
        return SearchResult(
            [],
            provider.id if provider is not None else self.embeddings.resolution.requested,
            provider.model if provider is not None else '',
            citations=self.config.citations,
            debug=debug,
            error=error,
            warning='memory search is unavailable because the embedding provider failed',
            action='check the provider settings and API key (memsift status --deep), or set provider to "none" '
            'for keyword-only search',
        )

    def _ranked_rows(
        self, request: SearchRequest, mode: SearchMode, keep: int, explain: bool, when: _When
    ) -> tuple[list[tuple[ChunkRow, float]], int, dict[int, dict[str, Any]] | None, LegScores]:
        """The ranked results with their chunks, read after ranking (only the kept ones need their text), how many
        lead as exact path hits, the candidates' explain rows and the legs' scores. A file replaced in between by a
        writer is ranked again, as the keyword leg does when it catches one."""
        for _ in range(RANKING_ATTEMPTS):
            ranking, exact = self._rank_once(request, mode, keep, explain, when)
            rows = {row.id: row for row in self.store.chunks([head.id for head, _ in ranking.kept])}
            if len(rows) == len(ranking.kept):
                break
            self.freshness.refresh_after_writer()
        kept = [(rows[head.id], score) for head, score in ranking.kept if head.id in rows]
        pinned = next((i for i, (row, _) in enumerate(kept) if row.id not in exact), len(kept))
        return kept, pinned, ranking.explained, ranking.legs

    def _rank_once(
        self, request: SearchRequest, mode: SearchMode, keep: int, explain: bool, when: _When
    ) -> tuple[Ranking, set[int]]:
        """The legs, the visibility filter and the ranking call, each timed into ``debug``: the ranking of ``keep``
        results (at least ``request.limit``: more for a reranker), and the ids of the exact path hits (which
        lead)."""
        text, debug = request.text, request.debug
        clock = _StageClock(debug)
        legs = LegScores()
        heads: dict[int, ChunkHead] = {}
        # The vector leg (embedding included) runs beside the keyword and path legs, on a worker thread.
        pending = start_vector_leg(*self.embeddings.for_queries(), text) if mode != 'fts-only' else None
        if mode != 'vector-only':
            legs.keyword, heads = keyword_leg(self.index, self.store, text, debug)
            clock.lap('keywordMs')
        legs.tier, legs.path = path_leg(self.freshness.catalogue(), self.index, self.store, text)
        clock.lap('pathMs')
        if pending is not None:
            legs.vector, debug['embedMs'], debug['vectorMs'] = pending.result()
            clock.lap('vectorWaitMs')  # what the vector leg added after the others finished
        heads.update(self.store.chunk_heads([i for i in legs.ids() if i not in heads]))
        pool = self._visible([heads[i] for i in legs.ids() if i in heads], request)
        pool, whens = self._timed(pool, when, debug)
        ranking = rank(
            legs,
            pool,
            written=self._written(pool) if self.config.query.hybrid.temporal_decay.enabled else None,
            texts=self.store.chunk_texts,
            mode=mode,
            text=text,
            hybrid=self.config.query.hybrid,
            limit=request.limit,
            floor=request.floor,
            keep=keep,
            explain=explain,
            whens=whens,
            importance=self.config.profile.importance,
            lexical=self.config.profile.lexical_boost,
        )
        clock.lap('mergeMs')  # merge, decay, path tiers, MMR and floor: one call
        if mode != 'vector-only' and (ranking.relaxed or not ranking.kept):
            debug['relaxed'] = ranking.relaxed  # nothing reached minScore: the relaxed pass ran
        debug['candidates'] = len(pool)
        return ranking, set(legs.tier)

    def _timed(
        self, pool: list[ChunkHead], when: _When, debug: dict[str, Any]
    ) -> tuple[list[ChunkHead], list[float] | None]:
        """The time stage: the candidates the filters keep (``since`` / ``until``, ``paths``, ``tags``), and their
        time factors for the query's time words (``None``: it has none)."""
        if not when.active:
            return pool, None
        if when.paths is not None:
            pattern = when.paths
            pool = [head for head in pool if pattern.fullmatch(head.path)]
        if when.tags is not None:
            front = self.dates.front_matters(sorted({head.path for head in pool}))
            tagged = {path for path, meta in front.items() if meta is not None and when.tags & set(meta.tags)}
            pool = [head for head in pool if head.path in tagged]
        if when.since is None and when.until is None and when.words is None:
            return pool, None
        days = self.dates.days(pool)
        if when.since is not None or when.until is not None:
            kept = [i for i, day in enumerate(days) if in_range(day, when.since, when.until)]
            pool, days = [pool[i] for i in kept], [days[i] for i in kept]
        factors = time_factors(days, when.words, when.today) if when.words is not None else None
        window = when.words.window if when.words is not None else None
        if window is not None:
            debug['time']['inWindow'] = sum(day is not None and window.distance(day) == 0 for day in days)
        return pool, factors

    def _written(self, pool: Sequence[ChunkHead]) -> list[float | None]:
        """When each chunk was last written, for temporal decay: its file's mtime; a transcript's newest message."""
        mtimes = self.store.file_mtimes({head.path for head in pool if head.source != 'sessions'})
        memory = self.session_memory
        transcripts = memory.last_messages() if memory is not None else {}
        return [(transcripts if head.source == 'sessions' else mtimes).get(head.path) for head in pool]

    def _visible(self, pool: list[ChunkHead], request: SearchRequest) -> list[ChunkHead]:
        """The candidates from the sources asked for, transcripts only where the calling session may see them."""
        if request.sources is not None:
            pool = [head for head in pool if head.source in request.sources]
        if any(head.source == 'sessions' for head in pool):
            memory = self.session_memory
            visible = set() if memory is None else memory.visible_paths(request.session_key)
            pool = [head for head in pool if head.source != 'sessions' or head.path in visible]
        return pool


@record(frozen=False, slots=False)
class _When:
    """The time stage's inputs for one search: today (local), the query's time words (``None``: none), and the
    filters."""

    today: date
    words: TimeWords | None
    since: date | None
    until: date | None
    paths: re.Pattern[str] | None
    tags: frozenset[str] | None

    @property
    def active(self) -> bool:
        """Whether the stage has anything to do: without filters and time words, results are exactly as before."""
        return any(part is not None for part in (self.words, self.since, self.until, self.paths, self.tags))


def _check_tags(tags: object) -> frozenset[str] | None:
    """The ``tags`` filter, case-folded (``#`` prefixes dropped).

    Raises:
        InvalidInputError: not a list of non-empty strings.
    """
    if tags is None:
        return None
    if (
        isinstance(tags, str)
        or not isinstance(tags, Sequence)
        or not all(isinstance(t, str) and t.strip() for t in tags)
    ):
        raise InvalidInputError(f'tags must be a list of tag names, got {preview(tags)}')
    return frozenset(tag.strip().lstrip('#').casefold() for tag in tags)


class _StageClock:
    """Records each search stage's wall time in ``debug`` (``<stage>Ms``), from the end of the previous one."""

    def __init__(self, debug: dict[str, Any]) -> None:
        self.debug = debug
        self.since = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.debug[name] = round((now - self.since) * 1000, 3)
        self.since = now
