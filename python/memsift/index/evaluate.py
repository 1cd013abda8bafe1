"""``memsift eval``: how well search finds the user's own notes, keyword-only against hybrid (and reranked).

Public benchmarks say little about one person's notes, so the probes come from the index itself: known-item queries.
From each sampled chunk a sentence (or heading) is taken (up to three when a small memory has fewer chunks than
probes wanted), and a person's half-remembered version of it is made by keeping 50-70 % of its content words
(stopwords dropped, one pair of words sometimes swapped); the note that holds the sentence is the one right answer.
Each probe runs through :meth:`MemoryIndex.search` in each mode, with ``min_score=0`` and ``max_results=10`` so the
metrics see the whole ranking, not what the floor lets through.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the shared team vault.\\n')
>>> _ = (ws / 'memory').mkdir()
>>> _ = (ws / 'memory' / 'standup.md').write_text('Standup moved to Tuesday mornings at nine sharp.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryIndex(ws, config) as index:
...     _ = index.sync()
...     report = evaluate_memory(index, probes=10)
>>> len(report.probes), report.files, [(m.mode, m.configured) for m in report.modes]
(2, 2, [('keyword-only', True), ('hybrid', False), ('hybrid+rerank', False)])
>>> report.modes[0].hit_at_1, report.modes[0].hit_at_5
(1.0, 1.0)
"""

from __future__ import annotations

import functools
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memsift._record import field, record, replace
from memsift._text import preview
from memsift.errors import InvalidInputError

if TYPE_CHECKING:
    from memsift.index.memory_index import MemoryIndex
    from memsift.index.store import ChunkRow
    from memsift.search.results import SearchResult

__all__ = ['EvalReport', 'ModeScore', 'Probe', 'build_probes', 'content_units', 'evaluate_memory', 'half_remembered']

MODES = ('keyword-only', 'hybrid', 'hybrid+rerank')
"""The rows of a report, in order: each adds one thing to the one before it."""
MAX_RESULTS = 10
"""Results each probe asks for: enough for MRR@10."""
MIN_UNITS = 3
"""Content words (or CJK pieces) a sentence needs to make a probe: fewer says too little to be findable."""
PER_CHUNK = 3
"""Sentences sampled per chunk: a second and third come into use only when there are fewer chunks than probes."""
WINDOW = 12
"""A long sentence is cut to a window of this many content words first: nobody searches with thirty words."""

# The analyzer keeps its stopword list (NLTK's) in Rust and does not export it; probes need only the commonest
# English function words kept out, so a short list does.
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our
ours out over own same she should so some such than that the their theirs them then there these they this
those through to too under until up very was we were what when where which while who whom why will with would
you your yours
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CJK = '\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff'
"""Kana and Han: scripts written without spaces (Hangul has spaces between words, so it splits as words do)."""
_UNITS = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W{_CJK}]+(?:['’.\-][^\W{_CJK}]+)*)")
_PARTICLES = re.compile('[のはをにがでとへもや的了是在和与及或]+')
"""CJK particles: they split a run of Han and kana into its content parts (the CJK stopwords)."""
_SENTENCE_END = re.compile(r'(?<=[.!?])\s+|(?<=[。！？])')
_MARKUP = re.compile(r'https?://\S+|\]\([^)]*\)|`[^`]*`')
"""URLs, link targets and inline code: text a person would not type to find a note."""
_PREFIX = re.compile(r'^\s*(?:#{1,6}\s+|>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?')
_SKIPPED_LINE = re.compile(r'^\s*(?:\||<!--|\[[^\]]+\]:\s|[-*_=]{3,}\s*$)')
"""Tables, HTML comments, link definitions and rules: markup, not sentences."""
_MEDIA = re.compile(r'^(?:Image|Audio) file: ')


@record
class Probe:
    """One known-item query: ``query`` should find ``path``; ``line`` is the line it was made from."""

    query: str
    path: str
    line: int
    chunk_id: int


@record
class ModeScore:
    """One mode's metrics over the probes (``None`` where the mode did not run: ``note`` says why).

    ``hit_at_1`` / ``hit_at_5``: the share of probes whose note is the first result / among the first five;
    ``mrr_at_10``: the mean of 1/rank of the note within the first ten (0 when absent); ``line_hit_at_5``: the share
    whose first five hold a result of that note covering the probed line; ``p50_ms``: the median search time;
    ``effective_modes``: how many searches ran in each search mode (a hybrid search with no vectors for the query
    answers ``fts-only``).
    """

    mode: str
    configured: bool
    probes: int = 0
    hit_at_1: float | None = None
    hit_at_5: float | None = None
    mrr_at_10: float | None = None
    line_hit_at_5: float | None = None
    p50_ms: float | None = None
    effective_modes: dict[str, int] = field(default_factory=dict)
    note: str | None = None

    @property
    def ran(self) -> bool:
        """True when the mode has metrics."""
        return self.hit_at_1 is not None

    def to_dict(self) -> dict[str, Any]:
        def rounded(value: float | None, digits: int = 4) -> float | None:
            return None if value is None else round(value, digits)

        return {
            'mode': self.mode,
            'configured': self.configured,
            'probes': self.probes,
            'hitAt1': rounded(self.hit_at_1),
            'hitAt5': rounded(self.hit_at_5),
            'mrrAt10': rounded(self.mrr_at_10),
            'lineHitAt5': rounded(self.line_hit_at_5),
            'p50Ms': rounded(self.p50_ms, 3),
            'effectiveModes': self.effective_modes,
            'note': self.note,
        }


@record
class EvalReport:
    """What :func:`evaluate_memory` measured: one :class:`ModeScore` per mode of :data:`MODES`, the provider and
    reranker they ran with, what was sampled (``files`` and ``chunks`` among ``indexed_files`` and
    ``indexed_chunks``), the seed and the probes themselves."""

    provider: str
    model: str
    reranker: str | None
    seed: int
    files: int
    chunks: int
    indexed_files: int
    indexed_chunks: int
    modes: tuple[ModeScore, ...]
    probes: tuple[Probe, ...]

    def mode(self, name: str) -> ModeScore:
        """The score of one mode of :data:`MODES`."""
        return next(score for score in self.modes if score.mode == name)

    @property
    def verdict(self) -> str:
        """One line on what hybrid search (and reranking) buys over keyword-only on these notes."""
        keyword, hybrid, reranked = (self.mode(name) for name in MODES)
        if not keyword.ran:
            return f'keyword-only search did not run: {keyword.note}'
        if not hybrid.ran:
            why = 'hybrid did not run' if hybrid.configured else 'set an embedding provider to compare hybrid search'
            parts = [f'keyword-only finds the right note first in {_percent(keyword.hit_at_1)} of probes', why]
            if reranked.ran:  # reranking without vectors: it reorders the keyword results
                parts.append(_compare('reranked keyword search', reranked.hit_at_1, 'keyword-only', keyword.hit_at_1))
            return '; '.join(parts)
        parts = [_compare('hybrid', hybrid.hit_at_1, 'keyword-only', keyword.hit_at_1)]
        if reranked.ran:
            parts.append(_compare('reranked hybrid', reranked.hit_at_1, 'hybrid', hybrid.hit_at_1))
        return '; '.join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (the probes' count, not their text)."""
        return {
            'provider': self.provider,
            'model': self.model,
            'reranker': self.reranker,
            'seed': self.seed,
            'probes': len(self.probes),
            'files': self.files,
            'chunks': self.chunks,
            'indexedFiles': self.indexed_files,
            'indexedChunks': self.indexed_chunks,
            'modes': [score.to_dict() for score in self.modes],
            'verdict': self.verdict,
        }


def _percent(value: float | None) -> str:
    return f'{round((value or 0.0) * 100)} %'


def _compare(name: str, value: float | None, base_name: str, base: float | None) -> str:
    """``hybrid finds the right note first 12 % more often than keyword-only (56 % vs 50 %)``: a relative change,
    as "more often" reads; against a base of zero only the two shares."""
    value, base = value or 0.0, base or 0.0
    if base == 0.0:
        if value == 0.0:
            return f'neither {name} nor {base_name} finds the right note first in any probe'
        return f'{name} finds the right note first in {_percent(value)} of probes, {base_name} in none'
    change = (value - base) / base
    if round(change * 100) == 0:
        return f'{name} and {base_name} find the right note first equally often ({_percent(base)})'
    more = 'more' if change > 0 else 'less'
    return (
        f'{name} finds the right note first {round(abs(change) * 100)} % {more} often than {base_name} '
        f'({_percent(value)} vs {_percent(base)})'
    )


# ---------------------------------------------------------------- probes


def content_units(sentence: str) -> list[str]:
    """The sentence's content units in order: words that are not stopwords, and CJK runs split at particles and
    cut into two-character pieces (CJK has no spaces, so a piece stands in for a word).

    >>> content_units('The deploy key lives in the shared team vault.')
    ['deploy', 'key', 'lives', 'shared', 'team', 'vault']
    """
    units: list[str] = []
    for match in _UNITS.finditer(sentence):
        word = match.group('word')
        if word is not None:
            if word.lower() not in _STOPWORDS and not (len(word) == 1 and word.isascii()):
                units.append(word)
            continue
        for part in _PARTICLES.split(match.group('cjk')):
            units.extend(part[i : i + 2] for i in range(0, len(part), 2))
    return units


def _sentences(row: ChunkRow) -> Iterator[tuple[int, list[str]]]:
    """``(line, content units)`` of each sentence or heading of a chunk long enough to probe with, skipping front
    matter, code blocks and markup lines."""
    if _MEDIA.match(row.text):
        return  # an image or audio file's label: not the user's words
    fenced = front_matter = False
    for offset, line in enumerate(row.text.split('\n')):
        stripped = line.strip()
        if offset == 0 and row.start_line == 1 and stripped == '---':
            front_matter = True
            continue
        if front_matter:
            front_matter = stripped not in ('---', '...')
            continue
        if stripped.startswith(('```', '~~~')):
            fenced = not fenced
            continue
        if fenced or not stripped or _SKIPPED_LINE.match(line):
            continue
        text = _MARKUP.sub(' ', _PREFIX.sub('', line, count=1))
        for sentence in _SENTENCE_END.split(text):
            units = content_units(sentence)
            if len(units) >= MIN_UNITS:
                yield row.start_line + offset, units


def half_remembered(units: Sequence[str], rng: random.Random) -> str:
    """A half-remembered version of a sentence: a window of it, 50-70 % of its units in order, and sometimes one
    neighbouring pair swapped (word order is what memory loses first); the same for the same ``rng`` state.

    >>> half_remembered(['deploy', 'key', 'lives', 'shared', 'team', 'vault'], random.Random(0))
    'deploy shared lives vault'
    """
    if len(units) > WINDOW:
        start = rng.randrange(len(units) - WINDOW + 1)
        units = units[start : start + WINDOW]
    keep = max(2, round(len(units) * rng.uniform(0.5, 0.7)))
    words = [units[i] for i in sorted(rng.sample(range(len(units)), keep))]
    if len(words) > 2 and rng.random() < 0.5:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    return ' '.join(words)


def build_probes(rows: Iterable[ChunkRow], count: int, seed: int = 0) -> list[Probe]:
    """At most ``count`` probes from the chunks ``rows``, the same for the same rows and seed, spread over files:
    one from each file in turn, each from a different chunk of it while it has some left, and up to
    :data:`PER_CHUNK` sentences of a chunk when a small memory has fewer chunks than probes wanted.

    A sentence that also appears in another file is skipped: it has no one right answer.

    >>> from memsift.index.store import ChunkRow
    >>> rows = [ChunkRow(1, 'a.md', 'memory', 1, 2, 'h', '# Notes\\nThe deploy key lives in the shared team vault.')]
    >>> [(p.path, p.line) for p in build_probes(rows, 5)]
    [('a.md', 2)]
    >>> build_probes(rows, 5)[0].query == build_probes(rows, 5, seed=0)[0].query
    True
    """
    rng = random.Random(seed)
    owners: dict[int, str | None] = {}  # sentence (hashed) -> its only file, or None when several hold it
    by_file: dict[str, list[list[tuple[int, int, list[str]]]]] = {}  # file -> per chunk, its sampled sentences
    for row in rows:
        found = list(_sentences(row))
        for _, units in found:
            key = hash(' '.join(units).lower())
            owners[key] = row.path if owners.get(key, row.path) == row.path else None
        if found:  # a few per chunk, not all: memory stays bounded on a large index
            picked = rng.sample(found, min(PER_CHUNK, len(found)))
            by_file.setdefault(row.path, []).append([(row.id, line, units) for line, units in picked])
    queues = []
    for path, chunks in by_file.items():
        rng.shuffle(chunks)
        # The first sentence of every chunk, then the second of every chunk, ...
        queue = [chunk[depth] for depth in range(PER_CHUNK) for chunk in chunks if depth < len(chunk)]
        queue = [pick for pick in queue if owners.get(hash(' '.join(pick[2]).lower())) == path]
        if queue:
            queues.append((path, queue))
    rng.shuffle(queues)
    probes: list[Probe] = []
    depth = 0
    while len(probes) < count and any(depth < len(queue) for _, queue in queues):
        for path, queue in queues:
            if depth < len(queue) and len(probes) < count:
                chunk_id, line, units = queue[depth]
                probes.append(Probe(half_remembered(units, rng), path, line, chunk_id))
        depth += 1
    return probes


# ---------------------------------------------------------------- running them


def _score(mode: str, probes: Sequence[Probe], search: Callable[[str], SearchResult], vectors: bool) -> ModeScore:
    """Run every probe through ``search`` (``vectors``: its searches should use them); a search that cannot run
    ends the mode with its error as the note."""
    search(probes[0].query)  # warm-up, untimed: the first search pays for loading models, catalogues and caches
    first = five = reciprocal = lines = 0.0
    times: list[float] = []
    effective: dict[str, int] = {}
    not_reranked: list[str] = []
    for probe in probes:
        started = time.perf_counter()
        result = search(probe.query)
        times.append((time.perf_counter() - started) * 1000)
        if result.unavailable:
            return ModeScore(mode, True, note=f'{result.error} ({result.action})' if result.action else result.error)
        effective[result.mode] = effective.get(result.mode, 0) + 1
        if result.debug.get('rerankSkipped'):  # a reranker that fails keeps the merged order, silently
            not_reranked.append(str(result.debug['rerankSkipped']))
        hits = result.results[:MAX_RESULTS]
        rank = next((i for i, hit in enumerate(hits) if hit.path == probe.path), None)
        if rank is not None:
            first += rank == 0
            five += rank < 5
            reciprocal += 1 / (rank + 1)
        lines += any(hit.path == probe.path and hit.start_line <= probe.line <= hit.end_line for hit in hits[:5])
    times.sort()
    middle = len(times) // 2
    n = len(probes)
    notes = []
    if vectors and 'fts-only' in effective:
        notes.append(
            f'{effective["fts-only"]} of the searches ran keyword-only: the vectors of this provider are not all '
            'indexed yet (run `memsift index`), or the model cannot read the query'
        )
    if not_reranked:
        notes.append(f'{len(not_reranked)} of the searches were not reranked: {not_reranked[0]}')
    return ModeScore(
        mode,
        True,
        n,
        first / n,
        five / n,
        reciprocal / n,
        lines / n,
        times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2,
        effective,
        '; '.join(notes) or None,
    )


def evaluate_memory(index: MemoryIndex, *, probes: int = 200, seed: int = 0) -> EvalReport:
    """Measure how well ``index`` finds its own notes with known-item probes (see the module docs), in each mode
    of :data:`MODES` that is configured: keyword-only always; hybrid with the configured embedding provider;
    hybrid + rerank when the config turns on ``query.rerank``.

    Evaluates the index as it is; it does not index the workspace first.

    Args:
        index: An open :class:`~memsift.index.memory_index.MemoryIndex` with indexed notes.
        probes: At most this many probes (fewer when the notes hold fewer usable sentences).
        seed: Which sentences and words the probes use; the same seed on the same index gives the same probes.

    Raises:
        InvalidInputError: ``probes`` or ``seed`` is not a positive / any integer, or the index holds no note to
            make probes from.
    """
    if isinstance(probes, bool) or not isinstance(probes, int) or probes < 1:
        raise InvalidInputError(f'probes must be a positive integer, not {preview(probes)}')
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError(f'seed must be an integer, not {preview(seed)}')
    counted: set[str] = set()
    chunk_count = 0

    def notes() -> Iterator[ChunkRow]:  # memory notes only: transcripts are the agent's, not the user's notes
        nonlocal chunk_count
        for row in index.store.iter_chunks():
            if row.source == 'memory':
                counted.add(row.path)
                chunk_count += 1
                yield row

    sample = build_probes(notes(), probes, seed)
    if chunk_count == 0:
        raise InvalidInputError(
            f'nothing to evaluate: no notes of {index.workspace} are indexed in {index.db_path}; index them first '
            '(`memsift index`, or MemoryIndex.sync())'
        )
    if not sample:
        raise InvalidInputError(
            f'nothing to evaluate: none of the {chunk_count} indexed chunks of {index.workspace} holds a sentence of '
            f'{MIN_UNITS} or more content words to make a probe from; write or index more notes first'
        )
    rerank = index.config.query.rerank
    provider = index.provider
    sources = ('memory',)

    def run(mode: str, **options: Any) -> ModeScore:
        search = functools.partial(index.search, max_results=MAX_RESULTS, min_score=0.0, sources=sources, **options)
        return _score(mode, sample, search, vectors=provider is not None and mode != 'keyword-only')

    scores = [run('keyword-only', keyword_only=True)]  # keyword-only searches are never reranked
    if provider is not None:
        scores.append(run('hybrid', wait_for_sync=False, rerank=False))
    else:
        resolution = index.resolution
        why = resolution.error or f'no embedding provider (provider: {resolution.requested}): set memorySearch.provider'
        # An explicit provider that is unavailable is configured, and failing: its error is the note.
        scores.append(ModeScore('hybrid', resolution.error is not None, note=why))
    if rerank.enabled:
        reranked = run('hybrid+rerank', wait_for_sync=False)
        if provider is None and reranked.ran:  # no vectors to blame: the reranker reordered keyword results
            why = '; '.join(filter(None, ['no embedding provider: keyword results, reranked', reranked.note]))
            reranked = replace(reranked, note=why)
        scores.append(reranked)
    else:
        scores.append(ModeScore('hybrid+rerank', False, note='not configured (set query.rerank to compare)'))
    return EvalReport(
        provider.id if provider is not None else 'none',
        provider.model if provider is not None else 'fts-only',
        '/'.join(filter(None, (rerank.provider, rerank.model))) or 'on' if rerank.enabled else None,
        seed,
        len({probe.path for probe in sample}),
        len({probe.chunk_id for probe in sample}),
        len(counted),
        chunk_count,
        tuple(scores),
        tuple(sample),
    )
