"""Time in the query: the time expressions of a question in English, Chinese or Japanese ("last week", "上周",
"先週", "in May", "two days ago", "on Tuesday"), resolved against now into a window of days, and recency words
("latest", "most recent", "最近", "最新"). The words are taken out of the keyword query; the window and recency
become a per-result time factor (:func:`time_factors`) that ranks material from that time above the rest, and
``since`` / ``until`` filters (:func:`parse_bound`) keep only what lies between them.

Only what reads unambiguously as time counts: a month name needs a preposition or a year ("in May", "May 2026";
"you may" is no month), a weekday needs "on" or "last" ("on Tuesday"; a bare "Tuesday standup" is a topic), and a
date that is part of a file name ("2026-11-28.md") stays a file name. A query without time words is left exactly as
it is, so it ranks exactly as before.

>>> from datetime import date
>>> words = read_time('what did we decide about the deploy last week', date(2026, 11, 20))
>>> words.text, words.window.start, words.window.end
('what did we decide about the deploy', datetime.date(2026, 11, 9), datetime.date(2026, 11, 16))
>>> read_time('上周的部署决定', date(2026, 11, 20)).text, read_time('先週のデプロイ', date(2026, 11, 20)).window.start
('部署决定', datetime.date(2026, 11, 9))
>>> read_time('the latest on the budget', date(2026, 11, 20)).recent
True
>>> read_time('you may see 2026-11-28.md', date(2026, 11, 20)).window is None
True
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

from memsift._record import record
from memsift._text import preview
from memsift.errors import InvalidInputError

__all__ = [
    'OUTSIDE',
    'RECENT_HALF_LIFE_DAYS',
    'QueryTime',
    'TimeWords',
    'Window',
    'in_range',
    'parse_bound',
    'read_query_time',
    'read_time',
    'time_factors',
]

OUTSIDE = 0.5
"""The time factor of material far from the window the query names: it keeps its place among the rest, below what
lies inside (a strong match outside still beats a weak one inside only when it scores twice as high)."""
NEAR_DAYS = 7.0
"""Outside the window, the factor rises toward 1 for material close to it (a note written the day after "last
week" is often about it): ``OUTSIDE + (1 - OUTSIDE) / 2`` at the edge, halving every this many days."""
RECENT_HALF_LIFE_DAYS = 30.0
"""For recency words: the factor falls from 1 (today) toward :data:`OUTSIDE`, halfway every this many days."""
MAX_YEARS = 200
"""A date more than this many years from now, in a filter, is refused as a likely typo."""


@record(slots=False)
class Window:
    """Days ``start`` (inclusive) to ``end`` (exclusive), and the words of the query that named them."""

    start: date
    end: date
    words: str

    def distance(self, day: date) -> int:
        """Days from ``day`` to the window (0 inside)."""
        if day < self.start:
            return (self.start - day).days
        return 0 if day < self.end else (day - self.end).days + 1


@record(slots=False)
class TimeWords:
    """A query read for time: its text without the time words, the window they name, and whether it asks for the
    most recent material."""

    text: str
    window: Window | None
    recent: bool

    def report(self) -> dict[str, Any]:
        """What ``debug['time']`` shows of them: the window's days and words, and ``recent``."""
        window = self.window
        return {
            'window': None if window is None else [window.start.isoformat(), window.end.isoformat()],
            'words': None if window is None else window.words,
            'recent': self.recent,
        }


class QueryTime(NamedTuple):
    """A query read for time (:func:`read_query_time`): its text without time words, the words (``None``: none),
    the ``since`` / ``until`` filters, and today (local)."""

    text: str
    words: TimeWords | None
    since: date | None
    until: date | None
    today: date


def read_query_time(query: str, since: object, until: object, now: datetime | None, time_words: bool) -> QueryTime:
    """Read ``query`` for time words (when ``time_words``) and check the filters, against ``now`` (default: now;
    naive: local time).

    Raises:
        InvalidInputError: a filter that is no date or span, or ``since`` after ``until``.
    """
    moment = now if now is not None else datetime.now()
    today = (moment.astimezone() if moment.tzinfo is not None else moment).date()
    first, last = parse_bound(since, 'since', today), parse_bound(until, 'until', today)
    if first is not None and last is not None and first > last:
        raise InvalidInputError(f'since ({first}) is after until ({last}): nothing can lie between them')
    words = read_time(query, today) if time_words else None
    if words is None or (words.window is None and not words.recent):
        return QueryTime(query, None, first, last, today)
    return QueryTime(words.text, words, first, last, today)


# ---------------------------------------------------------------- resolving


def _day(day: date, words: str) -> Window:
    return Window(day, day + timedelta(days=1), words)


def _week(day: date, words: str) -> Window:
    monday = day - timedelta(days=day.weekday())
    return Window(monday, monday + timedelta(days=7), words)


def _month(year: int, month: int, words: str) -> Window:
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return Window(date(year, month, 1), end, words)


def _year(year: int, words: str) -> Window:
    return Window(date(year, 1, 1), date(year + 1, 1, 1), words)


def _months_back(today: date, months: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - months
    return index // 12, index % 12 + 1


def _latest_month(today: date, month: int, year: int | None) -> tuple[int, int]:
    """The most recent ``month`` up to this one (or of ``year``)."""
    if year is not None:
        return year, month
    return (today.year, month) if month <= today.month else (today.year - 1, month)


def _latest_weekday(today: date, weekday: int, weeks_back: int = 0) -> date:
    """The most recent ``weekday`` (0 Monday) before today; in the week ``weeks_back`` weeks ago when given."""
    if weeks_back:
        monday = today - timedelta(days=today.weekday() + 7 * weeks_back)
        return monday + timedelta(days=weekday)
    return today - timedelta(days=(today.weekday() - weekday) % 7 or 7)


def _rolling(today: date, days: int, words: str) -> Window:
    return Window(today - timedelta(days=days - 1), today + timedelta(days=1), words)


def _back(today: date, count: int, unit: str, words: str) -> Window:
    if unit == 'day':
        return _day(today - timedelta(days=count), words)
    if unit == 'week':
        return _week(today - timedelta(days=7 * count), words)
    if unit == 'month':
        return _month(*_months_back(today, count), words)
    return _year(today.year - count, words)


# ---------------------------------------------------------------- numbers and names

_EN_NUMBERS = {
    'a': 1, 'an': 1, 'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6, 'seven': 7, 'eight': 8,
    'nine': 9, 'ten': 10, 'eleven': 11, 'twelve': 12, 'a couple of': 2, 'couple of': 2,
}  # fmt: skip
_CJK_DIGITS = {
    '〇': 0,
    '零': 0,
    '一': 1,
    '二': 2,
    '两': 2,
    '三': 3,
    '四': 4,
    '五': 5,
    '六': 6,
    '七': 7,
    '八': 8,
    '九': 9,
}
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ('january', 'jan'), ('february', 'feb'), ('march', 'mar'), ('april', 'apr'), ('may',), ('june', 'jun'),
            ('july', 'jul'), ('august', 'aug'), ('september', 'sep', 'sept'), ('october', 'oct'),
            ('november', 'nov'), ('december', 'dec'),
        ],
        1,
    )
    for name in names
}  # fmt: skip
_WEEKDAYS = {
    name: number
    for number, names in enumerate(
        [('monday', 'mon'), ('tuesday', 'tue', 'tues'), ('wednesday', 'wed'), ('thursday', 'thu', 'thurs'),
         ('friday', 'fri'), ('saturday', 'sat'), ('sunday', 'sun')]
    )
    for name in names
}  # fmt: skip
_CJK_WEEKDAYS = {'一': 0, '二': 1, '三': 2, '四': 3, '五': 4, '六': 5, '日': 6, '天': 6}
_JA_WEEKDAYS = {'月': 0, '火': 1, '水': 2, '木': 3, '金': 4, '土': 5, '日': 6}


def _number(text: str) -> int:
    """An English number word, ASCII or full-width digits, or a CJK numeral up to 99 ("十二", "二十")."""
    text = text.strip().lower()
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if text.isdigit():
        return int(text)  # str.isdigit and int() read full-width digits too
    if '十' in text:
        tens, _, ones = text.partition('十')
        return (_CJK_DIGITS[tens] if tens else 1) * 10 + (_CJK_DIGITS[ones] if ones else 0)
    return _CJK_DIGITS[text]


# ---------------------------------------------------------------- the expressions

_EN_NUMBER = r'(?P<n>\d{1,3}|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)'
_MONTH_NAME = r'(?P<month>' + '|'.join(sorted(_MONTHS, key=len, reverse=True)) + r')\.?'
_WEEKDAY_NAME = r'(?P<weekday>' + '|'.join(sorted(_WEEKDAYS, key=len, reverse=True)) + r')'
_PREFIX = r'(?:(?:on|in|from|during|over|for|of|since|at)\s+)?'
_CJK_NUMBER = r'(?P<n>[0-9０-９]{1,3}|[一二两三四五六七八九十]{1,3})'
_CJK_MONTH = r'(?P<month>1[0-2]|0?[1-9]|１[０-２]|０?[１-９]|十[一二]?|[一二三四五六七八九])'
_CJK_DAY = r'(?P<day>[0-3]?[0-9]|[０-３]?[０-９]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])'
# A date inside a file name or path ("2026-11-28.md", "memory/2026-11-28") is a name, not a time.
_NOT_IN_NAME = r'(?![\w./-])'
_NOT_AFTER_NAME = r'(?<![\w./-])'
_ISO_PREFIX = r'(?:\b(?:on|in|from|since|of|at)\s+)?'
# A month followed by a day that is no date ("2月30日") is not a month either: the text stays keywords.
_NO_DAY = r'(?![0-9０-９一二三四五六七八九十]+[日号號])'


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(r'\b' + _PREFIX + pattern + r'\b', re.IGNORECASE)


class _Patterns(NamedTuple):
    expressions: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Window | None]]]
    recent: re.Pattern[str]
    after_cjk: re.Pattern[str]


_TRIGGER_WORDS = frozenset(
    ['yesterday', 'today', 'tonight', 'morning', 'afternoon', 'evening', 'ago', 'week', 'weeks', 'month', 'months',
     'year', 'years', 'days', 'latest', 'recent', 'recently', 'newest', 'lately', 'current', 'currently', 'nowadays',
     *_MONTHS, *_WEEKDAYS]
)  # fmt: skip
_TRIGGER_CJK = (
    *('天', '日', '周', '星期', '礼拜', '月', '年', '週', '曜', '最近', '最新', '近期', '近来', '目前', '当前'),
    *('直近', '現在', 'きのう', 'きょう', 'おととい', 'おととし'),
)
_WORD = re.compile(r'[a-z]+|\d{4}-\d{2}-\d{2}')


def _may_hold_time(query: str) -> bool:
    """A cheap first look: whether the query holds a word that some time expression starts from (most queries do
    not, and are then left as they are without compiling the expressions)."""
    if any(cjk in query for cjk in _TRIGGER_CJK):
        return True
    return any(word in _TRIGGER_WORDS or word[0].isdigit() for word in _WORD.findall(query.lower()))


@functools.cache
def _patterns() -> _Patterns:
    """The expressions, compiled on the first query that may hold time words (compiling takes ~10 ms, which a
    command-line search without them does not pay)."""
    expressions: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Window | None]]] = [
        # English
        (_en(r'(?:the\s+)?day\s+before\s+yesterday'), lambda m, t: _day(t - timedelta(days=2), m[0])),
        (_en(r'yesterday'), lambda m, t: _day(t - timedelta(days=1), m[0])),
        (_en(r'(?:earlier\s+)?today|this\s+(?:morning|afternoon|evening)|tonight'), lambda m, t: _day(t, m[0])),
        (
            _en(_EN_NUMBER + r'\s+(?P<unit>day|week|month|year)s?\s+ago'),
            lambda m, t: _back(t, _number(m['n']), m['unit'].lower(), m[0]),
        ),
        (
            _en(
                r'(?:the\s+)?(?:past|last)\s+(?P<n>\d{1,3}|two|three|four|five|six|seven|ten|few)\s+(?P<unit>day|week)s'
            ),
            lambda m, t: _rolling(
                t, (3 if m['n'].lower() == 'few' else _number(m['n'])) * (7 if m['unit'].lower() == 'week' else 1), m[0]
            ),
        ),
        (
            _en(r'the\s+(?:past|last)\s+(?P<unit>week|month|year)'),
            lambda m, t: _rolling(t, {'week': 7, 'month': 30, 'year': 365}[m['unit'].lower()], m[0]),
        ),
        (
            _en(r'(?P<which>last|previous|this)\s+(?P<unit>week|month|year)'),
            lambda m, t: _back(t, 0 if m['which'].lower() == 'this' else 1, m['unit'].lower(), m[0]),
        ),
        (
            re.compile(r'\b(?:(?:on|last|this\s+past)\s+)' + _WEEKDAY_NAME + r'\b', re.IGNORECASE),
            lambda m, t: _day(_latest_weekday(t, _WEEKDAYS[m['weekday'].lower()]), m[0]),
        ),
        (
            re.compile(_ISO_PREFIX + _NOT_AFTER_NAME + r'(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})' + _NOT_IN_NAME, re.I),
            lambda m, t: _safe(lambda: _day(date(int(m['y']), int(m['mo']), int(m['d'])), m[0])),
        ),
        (
            _en(_MONTH_NAME + r'\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?'),
            lambda m, t: _on_day(t, _MONTHS[m['month'].lower()], int(m['day']), m['y'], m[0]),
        ),
        (
            _en(r'(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?' + _MONTH_NAME + r'(?:,?\s+(?P<y>\d{4}))?'),
            lambda m, t: _on_day(t, _MONTHS[m['month'].lower()], int(m['day']), m['y'], m[0]),
        ),
        (
            re.compile(
                r'\b(?:(?:in|during|since|from|of|last|this)\s+)' + _MONTH_NAME + r'(?:\s+(?P<y>\d{4}))?\b',
                re.IGNORECASE,
            ),
            lambda m, t: _month(*_latest_month(t, _MONTHS[m['month'].lower()], _year_of(m['y'])), m[0]),
        ),
        (
            re.compile(r'\b' + _MONTH_NAME + r'\s+(?P<y>\d{4})\b', re.IGNORECASE),
            lambda m, t: _month(int(m['y']), _MONTHS[m['month'].lower()], m[0]),
        ),
        # Chinese and Japanese (the same characters often mean the same in both)
        (re.compile(r'大前天'), lambda m, t: _day(t - timedelta(days=3), m[0])),
        (re.compile(r'前天|一昨日|おととい'), lambda m, t: _day(t - timedelta(days=2), m[0])),
        (re.compile(r'昨天|昨日|きのう'), lambda m, t: _day(t - timedelta(days=1), m[0])),
        (re.compile(r'今天|今日|きょう'), lambda m, t: _day(t, m[0])),
        (
            re.compile(
                _CJK_NUMBER + r'(?P<unit>天|日|周|個?星期|个?星期|个?礼拜|週間|个月|個月|か月|ヶ月|カ月|ケ月|年)前'
            ),
            lambda m, t: _back(t, _number(m['n']), _cjk_unit(m['unit']), m[0]),
        ),
        (re.compile(r'上上(?:个)?(?:周|星期|礼拜)|先々週'), lambda m, t: _back(t, 2, 'week', m[0])),
        (
            re.compile(r'(?:上(?:个)?(?:周|星期|礼拜)|先週(?:の)?)(?P<wd>[一二三四五六日天]|[月火水木金土日]曜日?)'),
            lambda m, t: _day(_latest_weekday(t, _weekday_of(m['wd']), weeks_back=1), m[0]),
        ),
        (re.compile(r'上(?:个)?(?:周|星期|礼拜)|先週'), lambda m, t: _back(t, 1, 'week', m[0])),
        (re.compile(r'(?:本|这|這)(?:个)?(?:周|星期|礼拜)|今週'), lambda m, t: _back(t, 0, 'week', m[0])),
        (re.compile(r'上(?:个)?月|先月'), lambda m, t: _back(t, 1, 'month', m[0])),
        (re.compile(r'(?:本|这个|這個)月|今月'), lambda m, t: _back(t, 0, 'month', m[0])),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年)|(?P<y>[0-9]{4})年)?' + _CJK_MONTH + r'月' + _CJK_DAY + r'[日号號]'
            ),
            lambda m, t: _on_day(t, _number(m['month']), _number(m['day']), _cjk_year(m, t), m[0]),
        ),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年)|(?P<y>[0-9]{4})年)?(?<![个個かヶカケ0-9０-９])'
                + _CJK_MONTH
                + r'月份?'
                + _NO_DAY
            ),
            lambda m, t: _month(*_latest_month(t, _number(m['month']), _year_of(_cjk_year(m, t))), m[0]),
        ),
        (re.compile(r'前年|一昨年|おととし'), lambda m, t: _year(t.year - 2, m[0])),
        (re.compile(r'去年|昨年'), lambda m, t: _year(t.year - 1, m[0])),
        (re.compile(r'今年'), lambda m, t: _year(t.year, m[0])),
        (
            re.compile(r'(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])|(?P<ja>[月火水木金土日])曜日?'),
            lambda m, t: _day(_latest_weekday(t, _weekday_of(m['wd'] or m['ja'] + '曜')), m[0]),
        ),
    ]
    recent = re.compile(
        r'\b(?:the\s+)?(?:latest|most\s+recent(?:ly)?|newest|recently|lately|currently|current(?=\s+\w)|these\s+days'
        r'|nowadays)\b'
        r'|最近|最新|近期|近来|目前|当前|直近|現在',
        re.IGNORECASE,
    )
    # A particle that ties a CJK time expression to the rest (上周的部署, 先週のデプロイ): removed with it.
    after_cjk = re.compile(r'^[的のにはでも、，,]')
    return _Patterns(expressions, recent, after_cjk)


def _cjk_unit(unit: str) -> str:
    if '月' in unit:
        return 'month'
    if unit == '年':
        return 'year'
    return 'day' if unit in ('天', '日') else 'week'


def _safe(make: Callable[[], Window]) -> Window | None:
    try:
        return make()
    except ValueError:  # February 30 and the like: not a date, so not a time expression
        return None


def _year_of(year: str | int | None) -> int | None:
    return int(year) if year else None


def _cjk_year(match: re.Match[str], today: date) -> int | None:
    which = match['which']
    if which:
        return today.year if which == '今年' else today.year - 1
    return int(match['y']) if match['y'] else None


def _weekday_of(text: str) -> int:
    return _JA_WEEKDAYS[text[0]] if '曜' in text else _CJK_WEEKDAYS[text]


def _on_day(today: date, month: int, day: int, year: str | int | None, words: str) -> Window | None:
    """The day ``month``/``day`` of ``year``, else its most recent occurrence up to today."""

    def make() -> Window:
        if year:
            return _day(date(int(year), month, day), words)
        this_year = date(today.year, month, day)
        return _day(this_year if this_year <= today else date(today.year - 1, month, day), words)

    return _safe(make)


def read_time(query: str, today: date) -> TimeWords:
    """The query without its time words, the window the first of them names (relative to ``today``), and whether
    it asks for recent material. A query without time words comes back unchanged.

    >>> read_time('what did we talk about two days ago', date(2026, 11, 20)).window.start
    datetime.date(2026, 11, 18)
    >>> read_time('meeting notes from May 2025', date(2026, 11, 20)).window
    Window(start=datetime.date(2025, 5, 1), end=datetime.date(2025, 6, 1), words='from May 2025')
    >>> read_time('昨日の会議', date(2026, 11, 20)).text
    '会議'
    """
    found: list[tuple[int, int, Window | None]] = []
    if not _may_hold_time(query):
        return TimeWords(query, None, False)
    patterns = _patterns()
    for pattern, resolve in patterns.expressions:
        for match in pattern.finditer(query):
            if not any(start < match.end() and match.start() < end for start, end, _ in found):
                window = resolve(match, today)
                if window is not None:
                    found.append((match.start(), match.end(), window))
    recent = False
    for match in patterns.recent.finditer(query):
        if not any(start < match.end() and match.start() < end for start, end, _ in found):
            found.append((match.start(), match.end(), None))
            recent = True
    if not found:
        return TimeWords(query, None, False)
    found.sort(key=lambda item: item[0])
    window = next((w for _, _, w in found if w is not None), None)
    pieces, at = [], 0
    for start, end, _ in found:
        pieces.append(query[at:start])
        at = end
        if end < len(query) and patterns.after_cjk.match(query[end:]) and _is_cjk(query[end - 1]):
            at += 1
    pieces.append(query[at:])
    text = ' '.join(''.join(pieces).split()).strip(' ,，、?？')
    # A query that was only time words keeps them: the keyword leg needs something to look for.
    return TimeWords(text if text else query, window, recent)


def _is_cjk(char: str) -> bool:
    return '\u3040' <= char <= '\u9fff' or '\uf900' <= char <= '\ufaff'


# ---------------------------------------------------------------- factors and filters


def time_factors(days: Sequence[date | None], words: TimeWords, today: date) -> list[float] | None:
    """Each result's time factor for the query's time words (``None`` when it has none): 1 inside the window,
    toward :data:`OUTSIDE` away from it; for recency words, 1 for today toward :data:`OUTSIDE` for old material.
    Material without a date gets the factor of the farthest. The factors are scaled so that the best is 1: when
    nothing lies inside the window, the nearest material leads and scores do not all drop."""
    if words.window is None and not words.recent:
        return None
    factors = []
    for day in days:
        factor = 1.0
        if day is None:
            factor = OUTSIDE
        else:
            if words.window is not None:
                distance = words.window.distance(day)
                factor = 1.0 if distance == 0 else OUTSIDE + (1 - OUTSIDE) / 2 * math.exp2(-distance / NEAR_DAYS)
            if words.recent:
                age = max(0, (today - day).days)
                factor *= OUTSIDE + (1 - OUTSIDE) * math.exp2(-age / RECENT_HALF_LIFE_DAYS)
        factors.append(factor)
    best = max(factors, default=1.0)
    return [factor / best for factor in factors] if best > 0 else factors


_RELATIVE = re.compile(r'^\s*(?P<n>\d{1,5})\s*(?P<unit>d|w|m|y|day|days|week|weeks|month|months|year|years)\s*$')


def parse_bound(value: object, name: str, today: date) -> date | None:
    """A ``since`` / ``until`` filter as a day: an ISO date (``2026-11-01``), a date or datetime, or a span back
    from today (``7d``, ``2w``, ``3m``, ``1y``); ``None`` stays ``None``.

    Raises:
        InvalidInputError: anything else, naming the argument (``since`` or ``until``) and the value.

    >>> parse_bound('7d', 'since', date(2026, 11, 20)), parse_bound('2026-02-01', 'until', date(2026, 11, 20))
    (datetime.date(2026, 11, 13), datetime.date(2026, 2, 1))
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        day = value.date()
    elif isinstance(value, date):
        day = value
    elif isinstance(value, str) and (relative := _RELATIVE.match(value)):
        count, unit = int(relative['n']), relative['unit'][0]
        if unit == 'd':
            day = today - timedelta(days=count)
        elif unit == 'w':
            day = today - timedelta(weeks=count)
        else:
            months = count * (12 if unit == 'y' else 1)
            if months > 12 * MAX_YEARS:
                raise InvalidInputError(f'{name} {preview(value)} reaches back more than {MAX_YEARS} years')
            year, month = _months_back(today, months)
            day = date(year, month, min(today.day, 28))
    elif isinstance(value, str):
        try:
            day = date.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInputError(
                f'{name} must be an ISO date (2026-11-01) or a span back from today (7d, 2w, 3m, 1y), '
                f'got {preview(value)}'
            ) from None
    else:
        raise InvalidInputError(f'{name} must be a date or a string such as "2026-11-01" or "7d", got {preview(value)}')
    if abs(day.year - today.year) > MAX_YEARS:
        raise InvalidInputError(f'{name} {preview(value)} is more than {MAX_YEARS} years from today')
    return day


def in_range(day: date | None, since: date | None, until: date | None) -> bool:
    """Whether ``day`` lies between the ``since`` and ``until`` filters (both inclusive); undated material is kept
    only when there is no filter."""
    if since is None and until is None:
        return True
    if day is None:
        return False
    return (since is None or day >= since) and (until is None or day <= until)
