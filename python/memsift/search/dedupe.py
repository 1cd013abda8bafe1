"""One hit per fact (``query.dedupe``): results whose text is the same, or nearly, collapse into the best-ranked one.

A fact copied into three daily notes would otherwise fill three of the six result slots. After the ranking (and the
reranker), :func:`collapse` walks the results best first: a result that duplicates one already kept is folded into
it (its place goes to that hit's ``alsoIn``, in rank order), and the slot it leaves is filled from the results ranked
below, so the ``limit`` slots hold distinct texts. The search ranks :func:`ranked_for` results for it to choose from.

Two chunks are the same fact (:func:`same_fact`) when their :func:`normalize`\\ d texts are equal, or nearly: their
word shingles' Jaccard similarity (:func:`similarity`) reaches :data:`NEAR_DUPLICATE` and they hold the same numbers
(``deploy at 9:30`` and ``deploy at 10:30`` are two facts, however alike the rest). ``benches/dedupe.py`` measures
the threshold on the BEIR corpora, the docs and edited copies of daily notes.

>>> normalize('## 2026-11-20\\n\\n- **Deploy** on *Tuesday*, 9:30.')
'deploy on tuesday 9:30'
>>> round(similarity(shingles('the deploy key lives in the team vault'),
...                  shingles('The deploy key lives in the *team* vault!')), 2)
1.0
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from memsift._core import near_copy_candidates
from memsift.index.records import ChunkRow

__all__ = [
    'NEAR_DUPLICATE',
    'SHINGLE_WORDS',
    'Fingerprint',
    'collapse',
    'fingerprint',
    'normalize',
    'ranked_for',
    'same_fact',
    'shingles',
    'similarity',
]

NEAR_DUPLICATE = 0.9
"""Distinct results stay under 0.75; one changed word reaches 0.9 only in chunks of ~60+ words (benches/dedupe.py)."""
SHINGLE_WORDS = 3
"""Words per shingle (shingles never cross a line, so a reordered list keeps its shingles)."""
REFILL = 20
"""The search ranks ``limit`` more results (at most this many more) for copies to fold into: six asked, twelve ranked,
so that up to half may fold away and the slots still fill; a long list keeps a bounded margin."""

_WORD = re.compile(r'[^\W_](?:\S*[^\W_])?')
"""A word: a run without spaces, trimmed to its first and last letter or digit (``**Deploy**,`` → ``Deploy``; inner
punctuation stays: ``9:30``, ``v2.3.1``, ``snake_case``)."""
_DIGIT = re.compile(r'\d')
_LIST_NUMBER = re.compile(r'^\s*\d+[.)]\s+')
_DATE_HEADING = re.compile(r'\s*#+[\d\s:/.,t+-]*$')
"""A heading that is only a date or time (a daily note's ``# 2026-11-20``): it says when, which the path says too."""

Shingles = frozenset[tuple[str, ...]]


class Fingerprint:
    """What :func:`same_fact` compares of a chunk: its :func:`normalize`\\ d ``text``, its ``numbers`` (words with a
    digit: numbers, dates, times, versions) and, made on first use, its ``shingles``."""

    __slots__ = ('_lines', '_shingles', 'numbers', 'text', 'words')

    def __init__(self, lines: list[list[str]]) -> None:
        self._lines = lines
        self._shingles: Shingles | None = None
        self.text = '\n'.join(' '.join(words) for words in lines)
        self.numbers = frozenset(w for words in lines for w in words if not w.isalpha() and _DIGIT.search(w))
        self.words = sum(map(len, lines))

    @property
    def shingles(self) -> Shingles:
        if self._shingles is None:
            self._shingles = _shingles(self._lines)
        return self._shingles


def fingerprint(text: str) -> Fingerprint:
    """The :class:`Fingerprint` of a chunk's text."""
    return Fingerprint(_lines(text))


def same_fact(a: Fingerprint, b: Fingerprint) -> bool:
    """Equal normalized texts, or Jaccard of the shingles ≥ :data:`NEAR_DUPLICATE` with the same numbers."""
    if a.text == b.text:
        return True
    if a.numbers != b.numbers or min(a.words, b.words) < NEAR_DUPLICATE * max(a.words, b.words) - SHINGLE_WORDS:
        return False  # most pairs end here, before any shingle is made: Jaccard ≤ small set / large set
    na, nb = len(a.shingles), len(b.shingles)
    return min(na, nb) >= NEAR_DUPLICATE * max(na, nb) and similarity(a.shingles, b.shingles) >= NEAR_DUPLICATE


def normalize(text: str) -> str:
    """``text`` as compared: NFKC, casefolded, its words (see ``_WORD``: Markdown bullets, ``#``, emphasis and
    punctuation at the words' edges dropped) one space apart, without list numbers and date-only headings; one line
    per line with words."""
    return '\n'.join(' '.join(words) for words in _lines(text))


def shingles(text: str) -> Shingles:
    """The :data:`SHINGLE_WORDS`-word runs of each normalized line (a shorter line is one shingle)."""
    return _shingles(_lines(text))


def similarity(a: Shingles, b: Shingles) -> float:
    """Jaccard similarity of two shingle sets: shared / all (1.0 for two empty texts)."""
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def ranked_for(limit: int) -> int:
    """How many results the search ranks for :func:`collapse` to fill ``limit`` slots from."""
    return limit + min(limit, REFILL)


def collapse(
    ranked: Sequence[tuple[ChunkRow, float]],
    limit: int,
    debug: dict[str, Any],
    explained: dict[int, dict[str, Any]] | None = None,
) -> tuple[list[tuple[ChunkRow, float]], dict[int, list[dict[str, Any]]]]:
    """The first ``limit`` distinct results of ``ranked`` (best first), and each kept chunk's duplicates by its id:
    ``[{'path', 'startLine', 'endLine'}]`` in rank order. ``debug['collapsed']`` counts the folded results; in
    ``explained`` (``explain=True``) their ``cut`` becomes ``duplicate``.

    Each result is compared with the kept ones (at most ``limit``) whose words are alike (:data:`COARSE`);
    :func:`same_fact` turns most of those pairs away by their numbers and shingle counts before intersecting anything.
    """
    kept: list[tuple[ChunkRow, float]] = []
    kept_at: dict[int, int] = {}  # a kept result's place in ``ranked`` -> its place in ``kept``
    prints: dict[int, Fingerprint] = {}  # made only for the pairs whose words are alike
    also_in: dict[int, list[dict[str, Any]]] = {}
    folded = 0

    def print_of(at: int) -> Fingerprint:
        if at not in prints:
            prints[at] = fingerprint(kept[at][0].text)
        return prints[at]

    # The words look runs in the core: in Python, splitting each result into its set of words cost more than the
    # rest of a keyword search's ranking. The first ``limit`` results are looked at first: most searches fold none.
    texts = [row.text for row, _ in ranked]
    candidates = near_copy_candidates(texts[:limit], COARSE)
    for place, (row, score) in enumerate(ranked):
        if len(kept) == limit:
            break
        if place == len(candidates):
            candidates = near_copy_candidates(texts, COARSE)
        alike = [kept_at[j] for j in candidates[place] if j in kept_at]
        at = None
        if alike:  # the best-ranked kept result it repeats, if any
            own = prints[len(kept)] = fingerprint(row.text)
            at = next((k for k in alike if same_fact(own, print_of(k))), None)
            if at is not None:
                del prints[len(kept)]
        if at is not None:
            also_in.setdefault(kept[at][0].id, []).append(
                {'path': row.path, 'startLine': row.start_line, 'endLine': row.end_line}
            )
            folded += 1
            if explained is not None and row.id in explained:
                explained[row.id]['cut'] = 'duplicate'
            continue
        kept_at[place] = len(kept)
        kept.append((row, score))
    debug['collapsed'] = folded
    return kept, also_in


COARSE = 0.7
"""A first look that spares most pairs the fingerprint: two chunks whose sets of words (casefolded, ASCII punctuation
as space) have a Jaccard below this cannot be the same fact (a copy keeps most words; shingles change faster). Only
results whose few alphabetically first words are half shared are looked at (``memsift._core.near_copy_candidates``)."""


def _lines(text: str) -> list[list[str]]:
    """The words of each line of ``text`` that has any, as :func:`normalize` describes."""
    out = []
    for line in unicodedata.normalize('NFKC', text).casefold().splitlines():
        if _DATE_HEADING.match(line):
            continue
        words = [word for token in _LIST_NUMBER.sub('', line, count=1).split() if (word := _trim(token))]
        if words:
            out.append(words)
    return out


def _trim(token: str) -> str:
    """``token`` from its first letter or digit to its last (``_WORD``: what a word is), by hand: a regex
    backtracks through every token of a long chunk, this looks at the ends only."""
    if token[0].isalnum() and token[-1].isalnum():
        return token
    start, end = 0, len(token)
    while start < end and not token[start].isalnum():
        start += 1
    while end > start and not token[end - 1].isalnum():
        end -= 1
    return token[start:end]


def _shingles(lines: list[list[str]]) -> Shingles:
    out: set[tuple[str, ...]] = set()
    for words in lines:
        if len(words) <= SHINGLE_WORDS:
            out.add(tuple(words))
        else:
            out.update(zip(*(words[i:] for i in range(SHINGLE_WORDS))))
    return frozenset(out)
