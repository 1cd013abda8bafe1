"""What the retriever integrations share: one search, its hits as (full chunk text, metadata) pairs.

A :class:`~memsift.MemoryHit` carries a snippet: the chunk's text (secrets masked when ``query.redactSnippets`` is
on, the default) cut to 700 UTF-16 units. A retriever's document should hold the whole chunk, so
:meth:`HitReader.text` returns the snippet when it is the whole chunk and reads the chunk's lines back otherwise.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryIndex(ws, config) as index:
...     _ = index.sync()
...     [(text, meta['path'], meta['startLine']) for text, meta in HitReader(index).search('deploy key', 1, 0.0)]
[('The deploy key lives in the team vault.\\n', 'MEMORY.md', 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from memsift.errors import ConfigError, InvalidInputError, ProviderError
from memsift.index.memory_index import MemoryIndex
from memsift.redact import Redactor
from memsift.search.request import SearchRequest
from memsift.search.results import SNIPPET_MAX_CHARS, MemoryHit

__all__ = ['HitReader', 'check_options', 'hit_id', 'hit_metadata']


class HitReader:
    """Searches one :class:`~memsift.MemoryIndex` and reads each hit's whole chunk text."""

    def __init__(self, index: MemoryIndex) -> None:
        self.index = index
        query = index.config.query
        # The snippets' own redaction, applied to text read back from the file so a document never shows a secret
        # its snippet masks.
        self._redactor = Redactor(index.config.session_tools.redact_patterns) if query.redact_snippets else None

    def search(
        self,
        query: str,
        max_results: int | None,
        min_score: float | None,
        session_key: str | None = None,
        *,
        since: str | date | None = None,
        until: str | date | None = None,
        paths: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        """``(chunk text, metadata)`` of each hit, best first (see :meth:`MemoryIndex.search
        <memsift.MemoryIndex.search>` for the arguments, the filters included; an empty or blank query finds
        nothing).

        Raises:
            InvalidInputError: a query that is not a string, or a bad ``max_results`` / ``min_score`` or filter.
            ConfigError: memory search is disabled for the agent.
            ProviderError: an explicitly configured embedding provider failed (no silent keyword-only answer).
        """
        result = self.index.search(
            query,
            max_results,
            min_score,
            session_key=session_key,
            since=since,
            until=until,
            paths=paths,
            tags=tags,
        )
        if result.unavailable:
            # A retriever that answered [] here would look like "nothing relevant" to the chain; say why instead.
            error = ConfigError if not self.index.config.enabled else ProviderError
            raise error(f'{result.error}; {result.action}')
        return [(self.text(hit), hit_metadata(hit)) for hit in result.results]

    def text(self, hit: MemoryHit) -> str:
        """The whole text of the hit's chunk (for a transcript hit, its snippet)."""
        # Shorter than the cap, the snippet is the whole (redacted) chunk: nothing to read. A cut may drop the high
        # half of a surrogate pair, so a snippet one unit short of the cap may be cut too.
        if hit.source != 'memory' or _utf16_units(hit.snippet) < SNIPPET_MAX_CHARS - 1:
            return hit.snippet
        # The hit names no chunk id to fetch the stored text by (and the store is internal), so the chunk's lines
        # are read back through `get`, memory_get's read path with its checks (indexed files only, inside the
        # workspace, never through links): one file read per long hit, only for the hits returned.
        try:
            text = str(self.index.get(hit.path, hit.start_line, hit.end_line - hit.start_line + 1)['text'])
        except InvalidInputError:  # the file went away (or became unreadable) since it was ranked
            return hit.snippet
        if self._redactor is not None:
            text = self._redactor.redact(text)
        # The file may have changed since it was indexed: lines that no longer begin with the snippet are not the
        # chunk that matched, and the snippet is then the best text there is.
        return text if text.startswith(hit.snippet) else hit.snippet


def check_options(
    index: object,
    max_results: object,
    min_score: object,
    *,
    since: Any = None,
    until: Any = None,
    paths: Any = None,
    tags: Any = None,
) -> MemoryIndex:
    """``index``, once it and the options are found usable: a retriever checks them when it is made rather than on
    its first query, with memsift's own checks (those of every search).

    Raises:
        InvalidInputError: ``index`` is not a :class:`~memsift.MemoryIndex`, or ``max_results`` / ``min_score`` or
            a filter (``since``, ``until``, ``paths``, ``tags``) is one a search would refuse.
    """
    if not isinstance(index, MemoryIndex):
        raise InvalidInputError(
            f'expected a memsift.MemoryIndex, got {type(index).__name__} (for MemoryTools pass tools.index)'
        )
    SearchRequest.parse('', max_results, min_score, index.config.query)
    if any(value is not None for value in (since, until, paths, tags)):
        # The filters' checks are the search's own (since after until included): a search for nothing runs them and
        # finds nothing, keyword-only so it neither syncs nor calls a provider. A span (7d) is read against today
        # here and against the day of each query when searching.
        index.search('', keyword_only=True, wait_for_sync=False, since=since, until=until, paths=paths, tags=tags)
    return index


def hit_metadata(hit: MemoryHit) -> dict[str, Any]:
    """A hit's metadata with the ``memory_search`` result's names; ``citation`` is ``None`` when citations are off
    (``citations: "off"``, or ``auto`` in a group or channel session)."""
    return {
        'path': hit.path,
        'startLine': hit.start_line,
        'endLine': hit.end_line,
        'score': hit.score,
        'source': hit.source,
        'citation': hit.citation,
    }


def hit_id(metadata: dict[str, Any]) -> str:
    """A stable id for a hit's chunk, ``path#Lstart-Lend`` (a citation's form, whether or not citations are on)."""
    return f'{metadata["path"]}#L{metadata["startLine"]}-L{metadata["endLine"]}'


def _utf16_units(text: str) -> int:
    """Length in UTF-16 code units, the unit of OpenClaw's snippet cap."""
    return len(text.encode('utf-16-le', 'surrogatepass')) // 2
