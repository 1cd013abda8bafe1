"""What a search returns: :class:`MemoryHit` and :class:`SearchResult` (OpenClaw's ``memory_search`` result shape
via ``to_dict``), with snippets bounded as OpenClaw bounds them and ``path#Lx-Ly`` citations.

>>> hit = MemoryHit('memory/2026-11-28.md', 3, 4, 0.81, 'Deploy on Tuesday.', citation='memory/2026-11-28.md#L3-L4')
>>> hit.to_dict()['citation'], hit.to_dict()['corpus']
('memory/2026-11-28.md#L3-L4', 'memory')
>>> wants_citations('auto', 'agent:main:telegram:group:42'), wants_citations('auto', None)
(False, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memsift._record import field, record
from memsift.index.records import ChunkRow

__all__ = [
    'SNIPPET_MAX_CHARS',
    'MemoryHit',
    'SearchResult',
    'citation',
    'openclaw2_fields',
    'snippet',
    'wants_citations',
]

SNIPPET_MAX_CHARS = 700
"""OpenClaw's snippet bound, in UTF-16 units."""


@record
class MemoryHit:
    """One search result: a chunk of a memory file."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str = 'memory'
    citation: str | None = None
    explain: dict[str, Any] | None = None
    """With ``search(..., explain=True)``: how the result was scored (see :meth:`MemoryIndex.search`)."""
    also_in: tuple[dict[str, Any], ...] = ()
    """The other places of the same text (``query.dedupe``), best first: ``{'path', 'startLine', 'endLine'}`` each."""
    front: dict[str, Any] | None = None
    """The note's front-matter as shown: ``title``, ``date`` (ISO), ``tags``, each when the note's block has it."""
    contract: dict[str, Any] | None = None
    """OpenClaw 2.x's fields of a result (:func:`openclaw2_fields`), for a 2.x config only."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            'path': self.path,
            'startLine': self.start_line,
            'endLine': self.end_line,
            'score': round(self.score, 6),
            'snippet': self.snippet,
            'source': self.source,
            'corpus': 'sessions' if self.source == 'sessions' else 'memory',
        }
        if self.citation is not None:
            out['citation'] = self.citation
        if self.also_in:  # only then: a result without copies keeps OpenClaw's exact shape
            out['alsoIn'] = [dict(place) for place in self.also_in]
        if self.front:  # likewise: only notes with front-matter carry its fields
            out.update(self.front)
        if self.contract:
            out.update(self.contract)
        if self.explain is not None:
            out['explain'] = self.explain
        return out

    @classmethod
    def of(
        cls,
        row: ChunkRow,
        score: float,
        cite: bool,
        redact: Callable[[str], str] | None = None,
        also_in: Sequence[dict[str, Any]] = (),
    ) -> MemoryHit:
        """The hit for a ranked chunk: score capped at 1, snippet (secrets masked by ``redact`` first, so a cut
        cannot leave part of one) bounded, citation when ``cite``, the places of its copies ``also_in``."""
        return cls(
            row.path,
            row.start_line,
            row.end_line,
            min(1.0, score),
            snippet(row.text if redact is None else redact(row.text)),
            row.source,
            citation(row) if cite else None,
            also_in=tuple(also_in),
        )


@record(frozen=False, slots=False)
class SearchResult:
    """What ``MemoryIndex.search`` returns; ``to_dict()`` is OpenClaw's ``memory_search`` tool result."""

    results: list[MemoryHit]
    provider: str
    model: str
    citations: str = 'auto'
    mode: str = 'fts-only'
    fallback: dict[str, str] | None = None
    debug: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    warning: str | None = None
    action: str | None = None

    @property
    def unavailable(self) -> bool:
        """True when search could not run (``error`` says why, ``action`` how to fix it)."""
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        if self.unavailable:
            return {
                'results': [],
                'disabled': True,
                'unavailable': True,
                'error': self.error,
                'warning': self.warning,
                'action': self.action,
                'debug': self.debug,
            }
        out: dict[str, Any] = {
            'results': [hit.to_dict() for hit in self.results],
            'provider': self.provider,
            'model': self.model,
            'citations': self.citations,
            'mode': self.mode,
            'debug': self.debug,
        }
        if self.fallback is not None:
            out['fallback'] = self.fallback
        return out


_SYSTEM_FOLDERS = ('memory/.dreams/', 'memory/dreaming/')


def openclaw2_fields(
    path: str,
    source: str,
    keyword: float | None,
    vector: float | None,
    observed_s: float | None,
    importance: int | None = None,
) -> dict[str, Any]:
    """A result's fields that OpenClaw 2.x adds: ``textScore`` (the keyword leg's BM25 as ``r / (1 + r)``, 0 when
    it did not find the chunk), ``vectorScore`` (the cosine, in hybrid mode) and ``provenance`` (who wrote it:
    ``agent`` for the workspace's memory files, ``system`` for dream output, ``untrusted`` for extra paths and
    transcripts; ``observedAt``: the file's mtime, ms), and the entry's ``importance`` when it has one.

    >>> openclaw2_fields('MEMORY.md', 'memory', 3.0, None, 1.5)
    {'textScore': 0.75, 'provenance': {'originClass': 'agent', 'sessionKind': 'unknown', 'observedAt': 1500}}
    """
    if source == 'sessions':
        origin, kind = 'untrusted', 'interactive'
    elif path.startswith(_SYSTEM_FOLDERS):
        origin, kind = 'system', 'unknown'
    elif path in ('MEMORY.md', 'USER.md') or (path.startswith('memory/') and '/../' not in path):
        origin, kind = 'agent', 'unknown'
    else:
        origin, kind = 'untrusted', 'unknown'
    out: dict[str, Any] = {'textScore': keyword / (1 + keyword) if keyword else 0}
    if vector is not None:
        out['vectorScore'] = vector
    if importance is not None:
        out['importance'] = importance
    provenance: dict[str, Any] = {'originClass': origin, 'sessionKind': kind}
    if observed_s is not None:
        provenance['observedAt'] = int(observed_s * 1000)
    out['provenance'] = provenance
    return out


def snippet(text: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` UTF-16 units (never splits a surrogate pair).

    >>> snippet('ab\\U0001f600cd', 3)
    'ab'
    """
    if len(text) <= limit // 2:
        return text
    encoded = text.encode('utf-16-le', 'surrogatepass')
    if len(encoded) <= 2 * limit:
        return text
    # A cut between the halves of a pair leaves a lone high surrogate at the end: 'ignore' drops it.
    return encoded[: 2 * limit].decode('utf-16-le', 'ignore')


def citation(row: ChunkRow) -> str:
    """``path#L3`` or ``path#L3-L7``."""
    lines = f'L{row.start_line}' if row.start_line == row.end_line else f'L{row.start_line}-L{row.end_line}'
    return f'{row.path}#{lines}'


def wants_citations(mode: str, session_key: str | None) -> bool:
    """OpenClaw: ``on`` always, ``off`` never, ``auto`` only in direct chats (no group/channel session key)."""
    if mode != 'auto':
        return mode == 'on'
    parts = set((session_key or '').lower().replace('-', ':').split(':'))
    return not parts & {'group', 'channel'}
