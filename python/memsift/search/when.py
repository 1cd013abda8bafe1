"""Time in the query: the time expressions of a question in English, Chinese or Japanese ("last week", "上周",
"先週", "in May", "two days ago", "on Tuesday"), resolved against now into a window of days, and recency words
("latest", "most recent", "最近", "最新"). The words are taken out of the keyword query; the window and recency
become a per-result time factor (:func:`time_factors`) that ranks material from that time above the rest, and
``since`` / ``until`` filters (:func:`parse_bound`) keep only what lies between them.

Parts of periods (issue 41): early / mid / late a month are days 1-10, 11-20 and 21 to its end, as 上旬 / 中旬 /
下旬 ("early October", "mid-October", "late last month", "the start / end of March", 十月初, 10月中旬, 上个月底,
月初 / 月中 / 月底, 10月の初め, 10月半ば, 先月末); of a week, Monday-Tuesday, Wednesday-Thursday and Friday-Sunday
("end of last week", 上周初, 先週の半ば), its weekend Saturday-Sunday ("last weekend", 上周末, 先週末; "over the
weekend": the latest that has begun); of a year, January-March, April-August and September-December ("the beginning
of the year", "end of last year", 年初, 去年年底, 昨年末). A part of a named month is of its most recent occurrence
that has begun ("late November" asked on November 5 is last year's); "the month / week / year" is this one. A day of
the month ("on the 18th", "the 3rd", 18号, 18日に) is its most recent occurrence up to today: this month's when it
has come, else the latest month before that has it ("the 31st" on November 20 is October 31); "of last month",
上个月, 先月の name that month. "The week / month / year before last", 上上周, 上上个月, 先々週, 先々月 are two back.

Only what reads unambiguously as time counts: a month name needs a preposition or a year ("in May", "May 2026";
"you may" is no month), a weekday needs "on" or "last" ("on Tuesday"; a bare "Tuesday standup" is a topic), and a
date that is part of a file name ("2026-11-28.md") stays a file name. A part word needs its period ("early
stopping", "the end of the pipeline" are no time; a lower-case "may" after it is the verb: "doing it early may
help"), an ordinal day needs "on" or "the" and an end or a function word after it ("the 2nd floor", "the 3rd
attempt" are no days), and a CJK day number is no count or name (3日間, 3日前 is "ago", 第3日, 18号线, 3号楼). A
query without time words is left exactly as it is, so it ranks exactly as before.

Left out: the future ("tomorrow", "next week": notes are about the past), clock times and parts of days, holidays,
seasons, quarters, ranges ("July 13-15", "6月から7月まで"), ordinal weekdays ("the first Tuesday of October"), "the
last day of the month", a weekday of a named week ("last week's Sunday"), ordinal words after a month ("March
first") and alone ("on the first": the word is too common to look at every query for), a bare weekend (周末 /
週末 / "the weekend": as often a topic, "weekend rota"), bare 年中 (Japanese "all year") and 6月中に (Japanese
"during June": the whole month), Japanese era years (令和3年).

The check runs on every query, so it is cheap: one scan for a trigger word or character (an ASCII query skips the
CJK scan) before any expression; an ASCII query is read with the English expressions alone, and the expressions of
parts of periods, weekends, "before last" and ordinal words only when the query holds such a word.

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

import contextlib
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


PART_DAYS = {'early': (1, 11), 'mid': (11, 21), 'late': (21, 32)}
"""The days of a month each part covers (start, end exclusive; ``late`` runs to the month's end): 上旬 / 中旬 /
下旬, the ten-day thirds that Chinese and Japanese name, and what "early", "mid" and "late" read as."""
PART_MONTHS = {'early': (1, 4), 'mid': (4, 9), 'late': (9, 13)}
"""The months of a year each part covers (start, end exclusive): January to March, April to August, September to
December (Duckling's 年頭 and 年尾)."""
PART_WEEKDAYS = {'early': (0, 2), 'mid': (2, 4), 'late': (4, 7), 'weekend': (5, 7)}
"""The days of a week (Monday 0) each part covers (start, end exclusive): Monday and Tuesday, Wednesday and
Thursday, Friday to Sunday; the weekend is Saturday and Sunday."""


def _month_part(year: int, month: int, part: str, words: str) -> Window:
    whole = _month(year, month, words)
    first, last = PART_DAYS[part]
    end = whole.end if last > 28 else date(year, month, last)
    return Window(date(year, month, first), end, words)


def _year_part(year: int, part: str, words: str) -> Window:
    first, last = PART_MONTHS[part]
    return Window(date(year, first, 1), date(year, last, 1) if last <= 12 else date(year + 1, 1, 1), words)


def _week_part(monday: date, part: str, words: str) -> Window:
    first, last = PART_WEEKDAYS[part]
    return Window(monday + timedelta(days=first), monday + timedelta(days=last), words)


def _monday(today: date, weeks_back: int) -> date:
    return today - timedelta(days=today.weekday() + 7 * weeks_back)


def _named_month_part(today: date, month: int, year: int | None, part: str, words: str) -> Window:
    """A part of the most recent ``month`` (of ``year`` when given) that has begun: "late November" asked on
    November 5 is last year's."""
    at = _latest_month(today, month, year)
    window = _month_part(*at, part, words)
    if year is None and window.start > today:
        window = _month_part(at[0] - 1, month, part, words)
    return window


def _relative_month_part(today: date, back: int | None, part: str, words: str) -> Window:
    """A part of the month ``back`` months ago (``None``: "the month", this one)."""
    return _month_part(*_months_back(today, back or 0), part, words)


def _relative_year_part(today: date, back: int | None, year: int | None, part: str, words: str) -> Window:
    """A part of ``year``, or of the year ``back`` years ago (``None``: "the year", this one)."""
    return _year_part(year if year is not None else today.year - (back or 0), part, words)


def _relative_week_part(today: date, back: int | None, part: str, words: str) -> Window:
    """A part of the week ``back`` weeks ago; ``None``: the most recent such part that has begun ("over the
    weekend" asked on a Wednesday is the last one)."""
    window = _week_part(_monday(today, back or 0), part, words)
    if back is None and window.start > today:
        window = _week_part(_monday(today, 1), part, words)
    return window


def _month_day(today: date, day: int, back: int | None, words: str) -> Window | None:
    """The day ``day`` of the month ``back`` months ago; ``None``: its most recent occurrence up to today (this
    month's when it has come, else the latest month before that has such a day: "the 31st" on November 20 is
    October 31)."""
    if not 1 <= day <= 31:
        return None
    if back is not None:
        month = _months_back(today, back)
        return _safe(lambda: _day(date(*month, day), words))
    for months in range(1 if day > today.day else 0, 13):  # the latest month that has such a day
        with contextlib.suppress(ValueError):
            return _day(date(*_months_back(today, months), day), words)
    return None


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


_EN_PARTS = {'early': 'early', 'beginning': 'early', 'start': 'early', 'mid': 'mid', 'middle': 'mid',
             'late': 'late', 'end': 'late'}  # fmt: skip
_CJK_PARTS = {
    **dict.fromkeys(('初', '头', '頭', '上旬', '初旬', '初め', 'はじめ', '初頭', '月初', '月头', '月頭'), 'early'),
    **dict.fromkeys(('中', '中旬', '半ば', 'なかば', '月中'), 'mid'),
    **dict.fromkeys(('底', '末', '尾', '下旬', '終わり', '月末', '月底', '月尾'), 'late'),
}
_EN_BACK = {'this': 0, 'current': 0, 'last': 1, 'previous': 1, 'past': 1, 'the': None}
_CJK_BACK = {
    **dict.fromkeys(('本', '这', '這', '今', '当', '當'), 0),
    **dict.fromkeys(('上', '先', '前'), 1),
    **dict.fromkeys(('上上', '先々', '先先'), 2),
}


def _en_back(which: str | None) -> int | None:
    if which is None:
        return None
    which = ' '.join(which.lower().split())
    if which.endswith('before last'):
        return 2
    return _EN_BACK[which.split()[0]]


def _cjk_back(rel: str | None) -> int | None:
    """How many months or weeks back a Chinese or Japanese qualifier points: 上个月 1, 上上周 2, 本月 0."""
    if not rel:
        return None
    for prefix in ('上上', '先々', '先先', '上', '先', '前', '本', '这', '這', '今', '当', '當'):
        if rel.startswith(prefix):
            return _CJK_BACK[prefix]
    return None


def _cjk_part(part: str) -> str:
    return _CJK_PARTS[part]


# ---------------------------------------------------------------- numbers and names

_ORDINALS = {
    word: number
    for number, word in enumerate(
        ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh',
         'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth', 'eighteenth', 'nineteenth',
         'twentieth', 'twenty-first', 'twenty-second', 'twenty-third', 'twenty-fourth', 'twenty-fifth',
         'twenty-sixth', 'twenty-seventh', 'twenty-eighth', 'twenty-ninth', 'thirtieth', 'thirty-first'],
        1,
    )
}  # fmt: skip
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
    '兩': 2,
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
_CJK_NUMBER = r'(?P<n>[0-9０-９]{1,3}|[一二两兩三四五六七八九十]{1,3})'
_CJK_MONTH = r'(?P<month>1[0-2]|0?[1-9]|１[０-２]|０?[１-９]|十[一二]?|[一二三四五六七八九])'
_CJK_DAY = r'(?P<day>[0-3]?[0-9]|[０-３]?[０-９]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])'
# A date inside a file name or path ("2026-11-28.md", "memory/2026-11-28") is a name, not a time.
_NOT_IN_NAME = r'(?![\w./-])'
_NOT_AFTER_NAME = r'(?<![\w./-])'
_ISO_PREFIX = r'(?:\b(?:on|in|from|since|of|at)\s+)?'
# A month followed by a day that is no date ("2月30日") is not a month either: the text stays keywords.
_NO_DAY = r'(?![0-9０-９一二三四五六七八九十]+[日号號])'


# A part of a period: "early", "mid-", "late" before it ("early October", "mid-October", "late last month"), or
# "the beginning / start / middle / end of" it ("the end of last week"); ``part`` or ``part_of`` holds the word.
_EN_PART = (
    r'(?:the\s+)?(?:(?P<part>early|mid|late)(?:\s*-\s*|\s+)(?:in\s+|of\s+)?'
    r'|(?P<part_of>beginning|start|middle|end)\s+of\s+)'
)
_EN_WHICH = r'(?:(?P<which>this|current|last|previous|the)\s+)?'
_BEFORE_LAST = r'(?P<before_last>\s+before\s+last)?'
# An ordinal day ("on the 18th") counts when the sentence goes on with a function word or ends there: "the 2nd
# floor" and "the 3rd attempt" are no days.
_ORDINAL_END = (
    r'(?=\s*$|\s*[,.;:!?)]|\s+(?:of|at|in|on|about|for|with|and|or|when|where|what|we|i|you|they|he|she|it|did|do'
    r'|was|were|is|regarding|around|before|after|to|from|this|that|last)\b)'
)
_CJK_MONTH_PART = (
    r'(?P<part>上旬|中旬|下旬|初旬|初め|はじめ|半ば|なかば|終わり|月末|月底|月初|初|头|頭|底|末|尾'
    r'|中(?![にはでもの間]))'
)
_CJK_REL_MONTH = r'(?P<rel>上上(?:个|個)?月|上(?:个|個)?月|先々月|先月|前月|本月|这个月|這個月|今月|当月)'
_CJK_REL_WEEK = (
    r'(?P<rel>上上(?:个|個)?(?:周|週|星期|礼拜|禮拜)|上(?:个|個)?(?:周|週|星期|礼拜|禮拜)|先々週|先週|前週'
    r'|本(?:周|週)|这(?:个)?(?:周|星期|礼拜)|這(?:個)?(?:週|星期|禮拜)|今週)'
)
_CJK_YEAR_BACK = {'今年': 0, '去年': 1, '昨年': 1, '一昨年': 2, '前年': 2}
# A day of the month ("18号", "25日に"): not a count ("3日間", "3日前"), an ordinal ("第3日") or a number
# ("18号线", "3号楼").
_CJK_NOT_DAY_AFTER = (
    r'(?![0-9０-９間间前后後以目分中連连ぶおき置付线線楼樓房机機位床门門车車店柜窗台桌箱球院厅館馆室口站章码碼字])'
)


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(r'\b' + _PREFIX + pattern + r'\b', re.IGNORECASE)


class _Patterns(NamedTuple):
    expressions: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Window | None]]]
    english: int
    """How many of the expressions, from the first, are English (an ASCII query is read with these alone)."""
    gates: dict[re.Pattern[str], frozenset[str]]
    """Expressions tried only when the query holds one of these words (lower case)."""
    recent: re.Pattern[str]
    after_cjk: re.Pattern[str]


_TRIGGER_WORDS = frozenset(
    ['yesterday', 'today', 'tonight', 'morning', 'afternoon', 'evening', 'ago', 'week', 'weeks', 'weekend',
     'midweek', 'fortnight', 'yr', 'month', 'months', 'year', 'years', 'days', 'latest', 'recent', 'recently', 'newest',
     'lately', 'current', 'currently', 'nowadays', *_MONTHS, *_WEEKDAYS]
)  # fmt: skip
_TRIGGER_CJK = re.compile(
    '天|日|周|星期|礼拜|禮拜|月|年|週|曜|号|號|旬|最近|最新|近期|近来|目前|当前|直近|現在|きのう|きょう|おととい|おととし'
)
# A word, an ISO date, a year ("early 2025") or an ordinal day ("18th" gives "8th"): those that start with a digit
# always pass.
_WORD = re.compile(r'[a-z]+|\d{4}-\d{2}-\d{2}|\b(?:19|20)\d\d\b|\d(?:st|nd|rd|th)\b')


def _may_hold_time(query: str) -> bool:
    """A cheap first look: whether the query holds a word that some time expression starts from (most queries do
    not, and are then left as they are without compiling the expressions). An ASCII query skips the CJK scan."""
    if not query.isascii() and _TRIGGER_CJK.search(query):
        return True
    return any(word in _TRIGGER_WORDS or word[0].isdigit() for word in _WORD.findall(query.lower()))


@functools.cache
def _patterns() -> _Patterns:
    """The expressions, compiled on the first query that may hold time words (compiling takes ~10 ms, which a
    command-line search without them does not pay)."""
    gates: dict[re.Pattern[str], frozenset[str]] = {}

    def gated(pattern: re.Pattern[str], *words: str) -> re.Pattern[str]:
        gates[pattern] = frozenset(words)
        return pattern

    parts = ('early', 'mid', 'late', 'beginning', 'start', 'middle', 'end')
    expressions: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Window | None]] | None] = [
        # English: parts of periods first (they hold "last month", "October" and the like)
        (
            gated(_en(_EN_PART + r'(?:(?P<which>last|this)\s+)?' + _MONTH_NAME + r'(?:,?\s+(?P<y>\d{4}))?'), *parts),
            _en_named_part,
        ),
        (gated(_en(_EN_PART + _EN_WHICH + r'month' + _BEFORE_LAST), *parts), _en_relative_part('month')),
        (gated(_en(_EN_PART + _EN_WHICH + r'week' + _BEFORE_LAST), *parts), _en_relative_part('week')),
        (
            gated(_en(_EN_PART + r'(?:' + _EN_WHICH + r'year' + _BEFORE_LAST + r'|(?P<y>\d{4}))'), *parts),
            _en_relative_part('year'),
        ),
        (
            _en(
                r'(?:the\s+)?(?P<day>[12]?[0-9]|3[01])(?:st|nd|rd|th)\s+of\s+(?P<which>this|last|the\s+previous|previous)'
                r'\s+month'
            ),
            lambda m, t: _month_day(t, int(m['day']), _en_back(m['which'].split()[-1]), m[0]),
        ),
        (gated(_en(r'mid-?week'), 'mid', 'midweek'), lambda m, t: _relative_week_part(t, 0, 'mid', m[0])),
        (
            gated(
                re.compile(
                    r'\b(?:(?P<which>last|this\s+past|past|this)\s+|(?:over|on|during|at)\s+the\s+)weekend\b',
                    re.IGNORECASE,
                ),
                'weekend',
            ),
            _weekend,
        ),
        (
            gated(_en(r'(?:the\s+)?(?P<unit>week|month|year)\s+before\s+last'), 'before'),
            lambda m, t: _back(t, 2, m['unit'].lower(), m[0]),
        ),
        (gated(_en(r'(?:a|one)\s+fortnight\s+ago'), 'fortnight'), lambda m, t: _back(t, 2, 'week', m[0])),
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
            _en(r'(?:the\s+(?:past|last)|past)\s+(?P<unit>week|month|year)'),
            lambda m, t: _rolling(t, {'week': 7, 'month': 30, 'year': 365}[m['unit'].lower()], m[0]),
        ),
        (
            _en(r'(?P<which>last|previous|this|current)\s+(?P<unit>week|month|year|yr)'),
            lambda m, t: _back(
                t, 0 if m['which'].lower() in ('this', 'current') else 1, m['unit'].lower().replace('yr', 'year'), m[0]
            ),
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
            gated(
                _en(
                    r'(?:the\s+)?(?P<ord>'
                    + '|'.join(sorted(_ORDINALS, key=len, reverse=True))
                    + r')\s+of\s+'
                    + _MONTH_NAME
                ),
                *_ORDINALS,
            ),
            lambda m, t: _on_day(t, _MONTHS[m['month'].lower()], _ORDINALS[m['ord'].lower()], None, m[0]),
        ),
        (
            _en(_MONTH_NAME + r'\s+(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?'),
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
        (
            gated(
                re.compile(
                    r'\bon\s+the\s+(?P<ord>'
                    + '|'.join(sorted(_ORDINALS, key=len, reverse=True))
                    + r')\b'
                    + _ORDINAL_END,
                    re.IGNORECASE,
                ),
                *_ORDINALS,
            ),
            lambda m, t: _month_day(t, _ORDINALS[m['ord'].lower()], None, m[0]),
        ),
        (
            re.compile(
                r'\b(?:(?:on|since|from)\s+the\s+|on\s+|the\s+)(?P<day>[12]?[0-9]|3[01])(?:st|nd|rd|th)\b'
                r'(?:\s+of\s+(?P<which>this|last|the\s+previous|previous|the)\s+month\b)?' + _ORDINAL_END,
                re.IGNORECASE,
            ),
            lambda m, t: _month_day(
                t, int(m['day']), None if m['which'] is None else _en_back(m['which'].split()[-1]), m[0]
            ),
        ),
        None,
        # Chinese and Japanese (the same characters often mean the same in both)
        (re.compile(r'大前天'), lambda m, t: _day(t - timedelta(days=3), m[0])),
        (re.compile(r'前天|一昨日|おととい'), lambda m, t: _day(t - timedelta(days=2), m[0])),
        (re.compile(r'昨天|昨日|きのう'), lambda m, t: _day(t - timedelta(days=1), m[0])),
        (re.compile(r'今天|今日|きょう|本日'), lambda m, t: _day(t, m[0])),
        (
            re.compile(
                _CJK_NUMBER
                + r'(?P<unit>天|日|周|週|[个個]?星期|[个個]?礼拜|[个個]?禮拜|週間|个月|個月|か月|ヶ月|カ月|ケ月|年)'
                + r'(?:之)?前'
            ),
            lambda m, t: _back(t, _number(m['n']), _cjk_unit(m['unit']), m[0]),
        ),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年|一昨年)(?:の)?|(?P<y>[0-9]{4})年)?(?<![个個かヶカケ0-9０-９])'
                + _CJK_MONTH
                + r'月(?:份)?(?:の)?'
                + _CJK_MONTH_PART
            ),
            lambda m, t: _named_month_part(
                t, _number(m['month']), _year_of(_cjk_year(m, t)), _cjk_part(m['part']), m[0]
            ),
        ),
        (
            re.compile(_CJK_REL_MONTH + r'(?:の|的)?' + _CJK_MONTH_PART),
            lambda m, t: _relative_month_part(t, _cjk_back(m['rel']), _cjk_part(m['part']), m[0]),
        ),
        (
            re.compile(
                _CJK_REL_MONTH
                + r'(?:の|的)?(?P<day>[0-9０-９]{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])'
                + r'(?P<unit>[号號]|日)'
                + _CJK_NOT_DAY_AFTER
            ),
            _cjk_day,
        ),
        (
            re.compile(
                r'(?<![0-9０-９一二三四五六七八九十月上下本这這今先前个個当])'
                r'(?P<part>月初|月头|月頭|月中(?![にはでもの])|月底|月末|月尾|上旬|中旬|下旬|初旬)'
            ),
            lambda m, t: _relative_month_part(t, None, _cjk_part(m['part']), m[0]),
        ),
        (
            re.compile(_CJK_REL_WEEK + r'(?:の|的)?(?P<part>末|初め|はじめ|初|半ば|中(?![にはでもの]))'),
            _cjk_week_part,
        ),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年|一昨年|前年)(?:の)?年?|(?P<y>[0-9]{4})年(?:の)?|(?<![0-9０-９今去昨前])年)'
                r'(?P<part>初め|はじめ|初頭|初|头|頭|半ば|底|末|尾|終わり)'
            ),
            _cjk_year_part,
        ),
        (
            re.compile(
                r'(?P<back>上上(?:个|個)?(?:周|週|星期|礼拜|禮拜)|先々週(?:の)?|上(?:个|個)?(?:周|週|星期|礼拜|禮拜)'
                r'|先週(?:の)?)(?P<wd>[一二三四五六日天]|[月火水木金土日]曜日?)'
            ),
            lambda m, t: _day(_latest_weekday(t, _weekday_of(m['wd']), weeks_back=_cjk_back(m['back']) or 1), m[0]),
        ),
        (
            re.compile(r'上上(?:个|個)?(?:周|週|星期|礼拜|禮拜)|先々週'),
            lambda m, t: _back(t, 2, 'week', m[0]),
        ),
        (
            re.compile(r'上(?:个|個)?(?:周|週|星期|礼拜|禮拜)|先週|前週'),
            lambda m, t: _back(t, 1, 'week', m[0]),
        ),
        (
            re.compile(r'(?:本|这|這)(?:个|個)?(?:周|週|星期|礼拜|禮拜)|今週'),
            lambda m, t: _back(t, 0, 'week', m[0]),
        ),
        (re.compile(r'上上(?:个|個)?月|先々月'), lambda m, t: _back(t, 2, 'month', m[0])),
        (re.compile(r'上(?:个|個)?月|先月|前月'), lambda m, t: _back(t, 1, 'month', m[0])),
        (re.compile(r'(?:本|这个|這個)月|今月|当月'), lambda m, t: _back(t, 0, 'month', m[0])),
        (
            re.compile(r'(?:过去|過去|この)' + _CJK_NUMBER + r'(?:天|日間|日)'),
            lambda m, t: _rolling(t, _number(m['n']), m[0]),
        ),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年|一昨年)(?:の)?|(?P<y>[0-9]{4})年)?'
                + _CJK_MONTH
                + r'月'
                + _CJK_DAY
                + r'[日号號]'
            ),
            lambda m, t: _on_day(t, _number(m['month']), _number(m['day']), _cjk_year(m, t), m[0]),
        ),
        (
            re.compile(
                r'(?:(?P<which>今年|去年|昨年|一昨年)(?:の)?|(?P<y>[0-9]{4})年)?(?<![个個かヶカケ0-9０-９])'
                + _CJK_MONTH
                + r'月份?'
                + _NO_DAY
            ),
            lambda m, t: _month(*_latest_month(t, _number(m['month']), _year_of(_cjk_year(m, t))), m[0]),
        ),
        (re.compile(r'前年|一昨年|おととし'), lambda m, t: _year(t.year - 2, m[0])),
        (re.compile(r'去年|昨年|上年(?![纪紀级級度])'), lambda m, t: _year(t.year - 1, m[0])),
        (re.compile(r'今年'), lambda m, t: _year(t.year, m[0])),
        (
            re.compile(r'(?:周|週|星期|礼拜|禮拜)(?P<wd>[一二三四五六日天])|(?P<ja>[月火水木金土日])曜日?'),
            lambda m, t: _day(_latest_weekday(t, _weekday_of(m['wd'] or m['ja'] + '曜')), m[0]),
        ),
        (
            re.compile(
                r'(?<![0-9０-９月年第/.:\-])(?P<rel>)(?P<day>[0-9０-９]{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])'
                r'(?P<unit>[号號]|日)' + _CJK_NOT_DAY_AFTER
            ),
            _cjk_day,
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
    english = expressions.index(None)
    return _Patterns([item for item in expressions if item is not None], english, gates, recent, after_cjk)


def _en_part(match: re.Match[str]) -> str:
    return _EN_PARTS[(match['part'] or match['part_of']).lower()]


def _verb_may(match: re.Match[str]) -> bool:
    """Whether a lower-case "may" reads as the verb ("doing it early may help"), not the month."""
    if match['month'] is None or match['month'] != 'may':
        return False
    following = re.match(r'\s+([a-z]+)', match.string[match.end() :])
    return following is not None and following[1] not in ('of', 'in', 'at', 'on', 'for', 'and', 'or', 'to', 'when')


def _en_named_part(match: re.Match[str], today: date) -> Window | None:
    if _verb_may(match):
        return None
    year = _year_of(match['y'])
    month = _MONTHS[match['month'].lower()]
    if year is None and match['which'] is not None and match['which'].lower() == 'last':
        year = today.year - 1  # "late last March": last year's
    return _named_month_part(today, month, year, _en_part(match), match[0])


def _en_relative_part(unit: str) -> Callable[[re.Match[str], date], Window | None]:
    def resolve(match: re.Match[str], today: date) -> Window | None:
        back = 2 if match['before_last'] else _en_back(match['which']) or 0
        if unit == 'month':
            return _relative_month_part(today, back, _en_part(match), match[0])
        if unit == 'week':
            return _relative_week_part(today, back, _en_part(match), match[0])
        return _relative_year_part(today, back, _year_of(match['y']), _en_part(match), match[0])

    return resolve


def _weekend(match: re.Match[str], today: date) -> Window:
    which = ' '.join((match['which'] or '').lower().split())
    if which == 'this':
        return _week_part(_monday(today, 0), 'weekend', match[0])
    if which in ('last', 'this past', 'past'):
        return _week_part(_monday(today, 1), 'weekend', match[0])
    return _relative_week_part(today, None, 'weekend', match[0])  # "over the weekend": the latest begun


def _cjk_week_part(match: re.Match[str], today: date) -> Window:
    part = match['part']
    named = 'weekend' if part == '末' else 'early' if part.startswith('初') or part == 'はじめ' else 'mid'
    return _week_part(_monday(today, _cjk_back(match['rel']) or 0), named, match[0])


def _cjk_year_part(match: re.Match[str], today: date) -> Window:
    which = match['which']
    back = _CJK_YEAR_BACK[which] if which else None
    return _relative_year_part(today, back, _year_of(match['y']), _cjk_part(match['part']), match[0])


def _cjk_day(match: re.Match[str], today: date) -> Window | None:
    text = match['day']
    if match['unit'] == '日' and not text.isdigit():
        return None  # "一日" is as often "one day" as the 1st
    return _month_day(today, _number(text), _cjk_back(match['rel']) if match['rel'] else None, match[0])


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
        return today.year - _CJK_YEAR_BACK[which]
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
    expressions = patterns.expressions[: patterns.english] if query.isascii() else patterns.expressions
    words: set[str] | None = None
    for pattern, resolve in expressions:
        gate = patterns.gates.get(pattern)
        if gate is not None:
            if words is None:
                words = set(re.findall(r'[a-z]+', query.lower()))
            if gate.isdisjoint(words):
                continue
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
