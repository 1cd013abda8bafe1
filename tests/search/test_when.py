"""Time in the query (issue 31): time words in three languages become a window that ranks material of that time
first, recency words favour new material, ``since`` / ``until`` / ``paths`` / ``tags`` filter, and a query without
time words ranks exactly as before."""

from __future__ import annotations

import os
from datetime import date, datetime, timezone

import pytest

import memsift
from memsift.errors import InvalidInputError
from memsift.search.when import parse_bound, read_time
from memsift.sessions import SessionStore

TODAY = date(2026, 11, 20)  # a Friday
NOW = datetime(2026, 11, 20, 10, 0)


@pytest.mark.parametrize(
    ('query', 'start', 'end', 'text'),
    [
        (
            'what did we decide about the deploy last week',
            date(2026, 11, 9),
            date(2026, 11, 16),
            'what did we decide about the deploy',
        ),
        ('deploy notes from yesterday', date(2026, 11, 19), date(2026, 11, 20), 'deploy notes'),
        ('what did Ana say on Tuesday', date(2026, 11, 17), date(2026, 11, 18), 'what did Ana say'),
        ('the budget in May', date(2026, 5, 1), date(2026, 6, 1), 'the budget'),
        ('the trip two days ago', date(2026, 11, 18), date(2026, 11, 19), 'the trip'),
        ('offsite plans last month', date(2026, 10, 1), date(2026, 11, 1), 'offsite plans'),
        ('meeting on 2026-11-03', date(2026, 11, 3), date(2026, 11, 4), 'meeting'),
        ('上周的部署决定', date(2026, 11, 9), date(2026, 11, 16), '部署决定'),
        ('昨天的会议', date(2026, 11, 19), date(2026, 11, 20), '会议'),
        ('五月的预算', date(2026, 5, 1), date(2026, 6, 1), '预算'),
        ('三天前说了什么', date(2026, 11, 17), date(2026, 11, 18), '说了什么'),
        ('去年五月的旅行', date(2025, 5, 1), date(2025, 6, 1), '旅行'),
        ('昨日の会議', date(2026, 11, 19), date(2026, 11, 20), '会議'),
        ('先週のデプロイの決定', date(2026, 11, 9), date(2026, 11, 16), 'デプロイの決定'),
        ('先月の旅行', date(2026, 10, 1), date(2026, 11, 1), '旅行'),
        ('5月の予算', date(2026, 5, 1), date(2026, 6, 1), '予算'),
        ('火曜日の会議', date(2026, 11, 17), date(2026, 11, 18), '会議'),
    ],
)
def test_time_words_in_three_languages_name_a_window_and_leave_the_query(query, start, end, text):
    words = read_time(query, TODAY)
    assert words.window is not None and (words.window.start, words.window.end) == (start, end)
    assert words.text == text and not words.recent


@pytest.mark.parametrize('query', ['the latest on the budget', '最近的部署', '最新のバグ', 'my current address'])
def test_recency_words_ask_for_recent_material(query):
    words = read_time(query, TODAY)
    assert words.recent and words.window is None and words.text != query


@pytest.mark.parametrize(
    'query',
    [
        'you may need the deploy key',
        'march forward plan',
        'Tuesday standup notes',
        '2026-11-28.md',
        'see memory/2026-11-03.md',
        'electric current',
        'February 30 plan',
        '2月30日',
        'last Blursday',
        'where is the deploy key',
        '部署到东京区域',
    ],
)
def test_text_that_only_looks_like_time_stays_keywords(query):
    words = read_time(query, TODAY)
    assert (words.text, words.window, words.recent) == (query, None, False)


def test_filters_read_dates_and_spans_and_refuse_the_rest():
    assert parse_bound('7d', 'since', TODAY) == date(2026, 11, 13)
    assert parse_bound('2w', 'since', TODAY) == date(2026, 11, 6)
    assert parse_bound('1y', 'since', TODAY) == date(2025, 11, 20)
    assert parse_bound(datetime(2026, 1, 2, 3, 4), 'until', TODAY) == date(2026, 1, 2)
    for bad in ('yesterday-ish', '2026-02-30', '99999y', 12, '3000-01-01'):
        with pytest.raises(InvalidInputError, match='since'):
            parse_bound(bad, 'since', TODAY)


def dated_workspace(tmp_path):
    ws = tmp_path / 'ws'
    (ws / 'memory').mkdir(parents=True)
    notes = {
        'memory/2026-11-11.md': 'Deploy: we decided to ship the API on Thursday behind a flag.',
        'memory/2026-10-02.md': 'Deploy decision: we decided to freeze every deploy until the audit ends. Deploy decided.',
        'memory/2026-06-15.md': 'Deploy decision: we decided to move deploys to Mondays.',
        'memory/2026-11-19.md': 'Lunch with Ana; the deploy dashboard looks fine.',
        'notes/plan.md': '---\ntitle: Tooling plan\ndate: 2026-05-12\ntags: [ops, Budget]\n---\nBudget for the deploy tooling.',
        'notes/misc.md': 'Deploy checklist: tests, changelog, tag.',
    }
    for path, text in notes.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    old = datetime(2026, 1, 5, tzinfo=timezone.utc).timestamp()
    os.utime(ws / 'notes/misc.md', (old, old))
    return ws


def open_dated(tmp_path, **query):
    ws = dated_workspace(tmp_path)
    config = {
        'agents': {
            'defaults': {
                'memorySearch': {
                    'provider': 'none',
                    'extraPaths': ['notes'],
                    'store': {'path': str(tmp_path / 'i.sqlite')},
                }
            }
        }
    }
    config['agents']['defaults']['memorySearch']['query'] = query
    return memsift.MemoryIndex(ws, config)


def paths(result):
    return [hit.path for hit in result.results]


@pytest.mark.parametrize(
    'query', ['what did we decide about the deploy last week', '上周的deploy决定', '先週のdeploy決定']
)
def test_memory_search_ranks_the_window_first(tmp_path, query):
    with open_dated(tmp_path) as index:
        index.sync()
        plain = paths(index.search('what did we decide about the deploy', now=NOW, min_score=0))
        timed = index.search(query, now=NOW, min_score=0)
    assert plain[0] != 'memory/2026-11-11.md'  # the keywords alone prefer another deploy note
    assert paths(timed)[0] == 'memory/2026-11-11.md'
    assert timed.debug['time']['window'] == ['2026-11-09', '2026-11-16'] and timed.debug['time']['inWindow'] == 1


def test_front_matter_dates_a_note_and_its_tags_filter(tmp_path):
    with open_dated(tmp_path) as index:
        index.sync()
        assert paths(index.search('deploy budget in May', now=NOW, min_score=0))[0] == 'notes/plan.md'
        assert paths(index.search('deploy', now=NOW, tags=['budget'], min_score=0)) == ['notes/plan.md']
        assert paths(index.search('deploy', now=NOW, tags=['#OPS', 'none'], min_score=0)) == ['notes/plan.md']


def test_since_until_and_paths_filter(tmp_path):
    with open_dated(tmp_path) as index:
        index.sync()
        recent = paths(index.search('deploy', now=NOW, since='2026-10-01', min_score=0))
        assert sorted(recent) == ['memory/2026-10-02.md', 'memory/2026-11-11.md', 'memory/2026-11-19.md']
        assert paths(index.search('deploy', now=NOW, since='7d', min_score=0)) == ['memory/2026-11-19.md']
        until = paths(index.search('deploy', now=NOW, until='2026-06-30', min_score=0))
        assert sorted(until) == ['memory/2026-06-15.md', 'notes/misc.md', 'notes/plan.md']  # misc: by its mtime
        assert sorted(paths(index.search('deploy', now=NOW, paths=['notes'], min_score=0))) == [
            'notes/misc.md',
            'notes/plan.md',
        ]
        assert paths(index.search('deploy', now=NOW, paths=['memory/2026-06-*.md'], min_score=0)) == [
            'memory/2026-06-15.md'
        ]


@pytest.mark.parametrize(
    ('arguments', 'named'),
    [
        ({'since': '2026-11-10', 'until': '2026-11-01'}, 'since'),
        ({'since': 'last Blursday'}, 'since'),
        ({'until': '2026-02-30'}, 'until'),
        ({'paths': ['../outside/*.md']}, 'paths'),
        ({'paths': ['/etc/*']}, 'paths'),
        ({'paths': 'memory/*.md'}, 'paths'),
        ({'tags': 'ops'}, 'tags'),
        ({'tags': ['']}, 'tags'),
    ],
)
def test_bad_filters_are_typed_errors_naming_the_argument(tmp_path, arguments, named):
    with open_dated(tmp_path) as index:
        index.sync()
        with pytest.raises(InvalidInputError, match=named):
            index.search('deploy', now=NOW, **arguments)


QUESTIONS = [
    'what did we decide about the deploy',
    'deploy checklist',
    'Ana lunch',
    'budget tooling',
    'you may ship it',
    'Tuesday standup',
    '2026-11-11.md',
]


def test_queries_without_time_words_rank_exactly_as_with_time_words_off(tmp_path):
    with open_dated(tmp_path) as index:
        index.sync()
        on = [
            [(h.path, h.start_line, h.end_line, h.score) for h in index.search(q, now=NOW, min_score=0).results]
            for q in QUESTIONS
        ]
    with open_dated(tmp_path / 'off', timeWords=False) as index:
        index.sync()
        off = [
            [(h.path, h.start_line, h.end_line, h.score) for h in index.search(q, now=NOW, min_score=0).results]
            for q in QUESTIONS
        ]
    assert on == off and sum(map(bool, on)) >= 5  # (some questions find nothing either way)


def test_time_words_off_reads_them_as_keywords(tmp_path):
    with open_dated(tmp_path, timeWords=False) as index:
        index.sync()
        result = index.search('deploy last week', now=NOW, min_score=0)
    assert 'time' not in result.debug


def message(i, text, day):
    stamp = datetime(2026, 11, day, 12, 0).astimezone(timezone.utc).isoformat()
    return {'type': 'message', 'id': f'm{i}', 'timestamp': stamp, 'message': {'role': 'user', 'content': text}}


def test_sessions_search_leads_with_the_window_and_filters():
    with SessionStore(':memory:') as store:
        store.append_many(
            'agent:main:main',
            [
                message(1, 'we decided the deploy goes out Thursday', 11),
                message(2, 'deploy decision: freeze everything', 2),
                message(3, 'another deploy decision about the database', 18),
            ],
        )
        plain = store.search('deploy decision', 'main', now=NOW)
        timed = store.search('deploy decision last week', 'main', now=NOW)
        japanese = store.search('先週の deploy decision', 'main', now=NOW)
        between = store.search('deploy', 'main', now=NOW, since='2026-11-10', until='2026-11-12')
        with pytest.raises(InvalidInputError, match='since'):
            store.search('deploy', 'main', now=NOW, since='2026-11-12', until='2026-11-10')
    assert plain['results'][0]['messageId'] != 'm1'
    assert timed['results'][0]['messageId'] == 'm1' == japanese['results'][0]['messageId']
    assert timed['debug']['time']['inWindow'] == 1
    assert [h['messageId'] for h in between['results']] == ['m1']


def test_sessions_search_without_time_words_is_unchanged():
    with SessionStore(':memory:') as on, SessionStore(':memory:', time_words=False) as off:
        events = [message(i, text, 10 + i) for i, text in enumerate(['deploy on Friday', 'the deploy key', 'lunch'])]
        for store in (on, off):
            store.append_many('agent:main:main', events)
        for query in ('deploy', 'deploy key', 'where is the key', 'you may deploy'):
            answers = [store.search(query, 'main', now=NOW) for store in (on, off)]
            for answer in answers:
                for hit in answer['results']:
                    del hit['sessionId']  # each store names its session anew
            assert answers[0] == answers[1] and answers[0]['results']


def test_results_show_a_notes_front_matter_and_others_keep_openclaws_shape(tmp_path):
    with open_dated(tmp_path) as index:
        index.sync()
        hits = {hit.path: hit.to_dict() for hit in index.search('deploy', now=NOW, min_score=0, max_results=10).results}
    assert hits['notes/plan.md']['title'] == 'Tooling plan'
    assert (hits['notes/plan.md']['date'], hits['notes/plan.md']['tags']) == ('2026-05-12', ['ops', 'budget'])
    assert not {'title', 'date', 'tags'} & hits['notes/misc.md'].keys()


# Issue 41: parts of periods, days of the month, "before last". SATURDAY is the held-out set's kind of now.
SATURDAY = date(2026, 11, 21)


@pytest.mark.parametrize(
    ('query', 'start', 'end'),
    [
        ('notes in early October', date(2026, 10, 1), date(2026, 10, 11)),
        ('the launch in mid-October', date(2026, 10, 11), date(2026, 10, 21)),
        ('late October budget', date(2026, 10, 21), date(2026, 11, 1)),
        ('start of March plans', date(2026, 3, 1), date(2026, 3, 11)),
        ('the end of November review', date(2026, 11, 21), date(2026, 12, 1)),
        ('late last month', date(2026, 10, 21), date(2026, 11, 1)),
        ('early this month', date(2026, 11, 1), date(2026, 11, 11)),
        ('the end of the month', date(2026, 11, 21), date(2026, 12, 1)),
        ('end of last week', date(2026, 11, 13), date(2026, 11, 16)),
        ('beginning of this week', date(2026, 11, 16), date(2026, 11, 18)),
        ('the beginning of the year', date(2026, 1, 1), date(2026, 4, 1)),
        ('end of last year', date(2025, 9, 1), date(2026, 1, 1)),
        ('mid-2025', date(2025, 4, 1), date(2025, 9, 1)),
        ('what happened on the 18th', date(2026, 11, 18), date(2026, 11, 19)),
        ('the 25th', date(2026, 10, 25), date(2026, 10, 26)),  # not yet this month: last month's
        ('the 3rd of last month', date(2026, 10, 3), date(2026, 10, 4)),
        ('the week before last', date(2026, 11, 2), date(2026, 11, 9)),
        ('the month before last', date(2026, 9, 1), date(2026, 10, 1)),
        ('last weekend', date(2026, 11, 14), date(2026, 11, 16)),
        ('over the weekend', date(2026, 11, 21), date(2026, 11, 23)),  # a Saturday: this weekend has begun
        ('the first of March', date(2026, 3, 1), date(2026, 3, 2)),
        ('十月初的会议', date(2026, 10, 1), date(2026, 10, 11)),
        ('10月中旬', date(2026, 10, 11), date(2026, 10, 21)),
        ('九月下旬', date(2026, 9, 21), date(2026, 10, 1)),
        ('上个月底', date(2026, 10, 21), date(2026, 11, 1)),
        ('本月初', date(2026, 11, 1), date(2026, 11, 11)),
        ('月中', date(2026, 11, 11), date(2026, 11, 21)),
        ('去年年底', date(2025, 9, 1), date(2026, 1, 1)),
        ('年初', date(2026, 1, 1), date(2026, 4, 1)),
        ('上周末', date(2026, 11, 14), date(2026, 11, 16)),
        ('上周初', date(2026, 11, 9), date(2026, 11, 11)),
        ('18号的会议', date(2026, 11, 18), date(2026, 11, 19)),
        ('上个月18号', date(2026, 10, 18), date(2026, 10, 19)),
        ('上上个月', date(2026, 9, 1), date(2026, 10, 1)),
        ('兩個禮拜前', date(2026, 11, 2), date(2026, 11, 9)),
        ('10月の初め', date(2026, 10, 1), date(2026, 10, 11)),
        ('10月上旬', date(2026, 10, 1), date(2026, 10, 11)),
        ('10月半ば', date(2026, 10, 11), date(2026, 10, 21)),
        ('先月末', date(2026, 10, 21), date(2026, 11, 1)),
        ('先週末', date(2026, 11, 14), date(2026, 11, 16)),
        ('先週の半ば', date(2026, 11, 11), date(2026, 11, 13)),
        ('18日に', date(2026, 11, 18), date(2026, 11, 19)),
        ('先月の１日', date(2026, 10, 1), date(2026, 10, 2)),
        ('先々月', date(2026, 9, 1), date(2026, 10, 1)),
        ('先々週の水曜日', date(2026, 11, 4), date(2026, 11, 5)),
        ('昨年末', date(2025, 9, 1), date(2026, 1, 1)),
    ],
)
def test_parts_of_periods_days_of_the_month_and_before_last(query, start, end):
    words = read_time(query, SATURDAY)
    assert words.window is not None and (words.window.start, words.window.end) == (start, end), query


def test_a_part_of_a_named_month_that_has_not_begun_is_last_years():
    assert read_time('late November', date(2026, 11, 5)).window.start == date(2025, 11, 21)
    assert read_time('11月下旬', date(2026, 11, 5)).window.start == date(2025, 11, 21)
    assert read_time('the 31st', date(2026, 11, 5)).window.start == date(2026, 10, 31)
    assert read_time('the 31st', date(2026, 10, 5)).window.start == date(2026, 8, 31)  # September has no 31st


def test_time_words_leave_the_rest_of_the_query():
    assert read_time('what did we decide in early October', SATURDAY).text == 'what did we decide'
    assert read_time('10月中旬の予定', SATURDAY).text == '予定'
    assert read_time('十月初的会议', SATURDAY).text == '会议'


@pytest.mark.parametrize(
    'query',
    [
        'early stopping in training',
        'the March release codename',
        'the second retry',
        'mid-size clusters',
        'the end of the pipeline',
        'start of the script',
        'late binding',
        'doing it early may help',
        'the start may be delayed',
        'the 2nd floor printer',
        'the 3rd attempt failed',
        'the 21st century',
        'weekend on-call rota',
        'the last day of school',
        '18号线怎么走',
        '3号楼的会议室',
        '周末加班规定',
        '第3日的议程',
        '3日間の研修',
        '年中無休の店',
        '週末のシフト表',
        '2号機の点検',
    ],
)
def test_words_that_only_look_like_parts_of_periods_stay_keywords(query):
    words = read_time(query, SATURDAY)
    assert (words.text, words.window, words.recent) == (query, None, False)


NEGATIVES = ['early stopping in training', 'the March release codename', 'the 2nd floor', 'weekend deploy rota']


def test_new_lookalikes_rank_exactly_as_with_time_words_off(tmp_path):
    with open_dated(tmp_path) as index:
        index.sync()
        on = [[(h.path, h.score) for h in index.search(q, now=NOW, min_score=0).results] for q in NEGATIVES]
        assert all('time' not in index.search(q, now=NOW, min_score=0).debug for q in NEGATIVES)
    with open_dated(tmp_path / 'off', timeWords=False) as index:
        index.sync()
        off = [[(h.path, h.score) for h in index.search(q, now=NOW, min_score=0).results] for q in NEGATIVES]
    assert on == off
