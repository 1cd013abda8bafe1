"""YAML front-matter of a memory note: its ``date``, ``title`` and ``tags``.

Only the leading block between two ``---`` lines is read, and only the three keys memsift uses, in the forms notes
write them: ``date: 2026-11-03`` (a date or an ISO date-time; quotes allowed), ``title: Deploy plan``, and tags as a
flow list (``tags: [deploy, ops]``), a comma-separated line (``tags: deploy, ops``) or a block list (``- deploy``
lines under ``tags:``). Anything else in the block is ignored, and a note without a block has none. The text stays
searchable as it is (the block is part of the note's first chunk); these fields date the note for time-aware
search, filter it by tag, and are shown with its results.

>>> meta = front_matter('---\\ntitle: Deploy plan\\ndate: 2026-11-03\\ntags: [deploy, Ops]\\n---\\nShip on Friday.')
>>> meta.title, meta.date, meta.tags
('Deploy plan', datetime.date(2026, 11, 3), ('deploy', 'ops'))
>>> front_matter('No block here.') is None
True
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from memsift._record import record

__all__ = ['FrontMatter', 'front_matter']

MAX_BLOCK_LINES = 60
"""A block longer than this is not front-matter (a note that starts with a horizontal rule)."""
_KEY = re.compile(r'^(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?P<value>.*?)\s*$')


@record(slots=False)
class FrontMatter:
    """What memsift reads of a note's front-matter; each part ``None`` / empty when absent or unreadable."""

    date: date | None
    title: str | None
    tags: tuple[str, ...]

    def shown(self) -> dict[str, Any]:
        """The fields a search result shows: ``title``, ``date`` (ISO) and ``tags``, each only when present."""
        out: dict[str, Any] = {}
        if self.title:
            out['title'] = self.title
        if self.date is not None:
            out['date'] = self.date.isoformat()
        if self.tags:
            out['tags'] = list(self.tags)
        return out


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in '\'"':
        return value[1:-1]
    return value


def _date(value: str) -> date | None:
    text = _unquote(value)
    try:
        return date.fromisoformat(text[:10]) if len(text) >= 10 else None
    except ValueError:
        try:
            return datetime.fromisoformat(text).date()
        except ValueError:
            return None  # "February 30", "next Blursday": not a date, so the note keeps its other dates


def _tags(value: str) -> list[str]:
    value = value.strip()
    if value.startswith('[') and value.endswith(']'):
        value = value[1:-1]
    return [_unquote(tag).lstrip('#').strip().casefold() for tag in value.split(',') if _unquote(tag).strip()]


def front_matter(text: str) -> FrontMatter | None:
    """The front-matter of a note whose text (or first chunk) is ``text``, or ``None`` when it has none."""
    if not text.startswith('---'):
        return None
    lines = text.split('\n', MAX_BLOCK_LINES + 2)
    if lines[0].rstrip() != '---':
        return None
    fields: dict[str, str] = {}
    tags: list[str] = []
    listing = None
    for line in lines[1 : MAX_BLOCK_LINES + 1]:
        if line.rstrip() in ('---', '...'):
            day = _date(fields['date']) if 'date' in fields else None
            title = _unquote(fields['title']) or None if 'title' in fields else None
            return FrontMatter(day, title, tuple(dict.fromkeys(tags)))
        item = line.strip()
        if listing == 'tags' and item.startswith('- '):
            tags.extend(_tags(item[2:]))
            continue
        match = _KEY.match(line)
        listing = None
        if match is None:
            continue
        key, value = match['key'].casefold(), match['value']
        if key in ('tags', 'tag'):
            if value:
                tags.extend(_tags(value))
            else:
                listing = 'tags'
        elif key in ('date', 'title') and key not in fields:
            fields[key] = value
    return None  # no closing line: not a block
