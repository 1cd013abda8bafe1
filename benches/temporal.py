"""Temporal eval: do questions with a time expression ("last week", "上周", "先週") find the note or message of
that time, and do questions without one rank exactly as before?

**The data** is synthetic and generated from ``--seed`` alone (no wall clock, no network): every random choice comes
from ``random.Random(f'{seed}:{stream}')`` with one stream for the notes, one for the transcripts and one for the
questions, so a seed always gives the same files, messages and questions (message timestamps are local wall times,
written with the machine's UTC offset, so their local dates are the same everywhere). The span runs ``--days`` days
(default 204: 2026-05-01 to 2026-11-20) up to a fixed ``--now`` (default ``2026-11-20T10:00``, naive: local time).

* **Topics.** Eight recurring topics per language, the same eight in English, Chinese and Japanese: a deploy and
  what was decided, a 1:1 with a named colleague (Priya / 王磊 / 佐藤さん), a business trip, a recurring login bug, a
  budget, a run, a call with a customer (Acme / 华科 / 山田商事) and an interview. Each time a topic comes up it
  says the same kind of thing with other facts (another service and decision, another city, another cause and
  fix ...), drawn from fixed lists: only the date tells which occurrence a question means.
* **Notes** (``memory_search``, about 300 files): one daily note ``memory/YYYY-MM-DD.md`` on most days, in one
  language picked per day, with one to three topic sections (``## Deploy``, ``## 部署``, ``## デプロイ`` ...) and
  everyday filler lines (groceries, a book, the dentist moved to next week ...). On a day, each of the other two
  languages has a 30 % chance of a note of its own under ``memory/inbox/note-NNN.md`` that carries its date only in a
  YAML front matter (``date: YYYY-MM-DD``); its mtime is a random moment between that date and ``now`` (the note was
  touched later), so only the front matter dates it. Nine undated reference notes (``MEMORY.md``, a release
  checklist, a bug write-up, a people list ..., three per language) mention the topics too; their mtimes are random
  in the span. Daily notes get the evening of their date as mtime.
* **Transcripts** (``sessions_search``, about 3,000 messages): on each day, each language has a 50 % chance of a
  session and a further 20 % of a second one; a session holds one or two topic exchanges (the user states the fact,
  "Quick update: Deployed checkout v2.14 to production. We decided to ...", the assistant acknowledges it) among one
  to three everyday exchanges (a recipe, an e-mail draft, a unit conversion ...), one to three minutes apart from a
  random start between 08:00 and 20:00 (before ``now`` on its day). A topic comes up at most once per language and
  day.

**Questions**, in the language of their target, natural phrasing (``what did we decide about the deploy last
week?``, ``上周部署的决定是什么？``, ``先週のデプロイの決定は？``):

* *timed*: one per (language, topic, time expression) whose window holds an occurrence of that topic; the answers
  are all of that topic's occurrences in the window (a note's topic section, or the user message stating the fact).
  Expressions and their windows (``now`` a Friday): yesterday (昨天, 昨日); two/three/four days ago (前天 /
  三天前 / 四天前, 一昨日 / 三日前 / 四日前, numerals or digits); English ``on Monday`` ... (the most recent such day
  before today); this week (本周, 今週: Monday to now); last week (上周 / 上星期, 先週: the previous Monday to
  Sunday); last month (上个月, 先月: the previous calendar month); ``in May`` (五月 / 5月: the most recent such
  month, at most two months per topic, so months do not outweigh the rest); and recency words (latest, most
  recent, current, 最近, 最新), whose answer is the topic's latest occurrence. A week's Sunday is ambiguous
  (weeks start on Sunday in Japan and the US): a week question is left out when its topic has an occurrence on
  the Sunday that one convention counts in and the other out.
* *untimed*: two plain questions per topic (``what did we decide about the deploy?``) and four near misses per
  language that carry no time expression but look like one (``May I see what Acme asked for?``,
  ``周报里预算写了多少？``, ``五か月分の予算はいくら？``).

**Methods**, for ``memory_search`` (``MemoryIndex``, keyword only: ``provider: none``, so no model; ``--results`` 10
results at ``--min-score`` 0, so the ranking is measured, not the floor) and ``sessions_search`` (``SessionStore``,
ranked mode, limit 10):

* ``baseline``: time handling off (``query.timeWords: false``; ``SessionStore(time_words=False)``), everything
  else at its default: today's ranking;
* ``time``: time handling on (the default) and ``now`` passed to every search.

Both methods search the same store, opened in turn with each setting: two stores built from the same data can order
tied results differently (keyword-only CJK queries often tie at score 1.0), which would read as a change.

Each line reports recall@5 (an answer among the first five results: for notes a result chunk of an answer file
that overlaps the topic's section lines, for transcripts an answer message) over the timed questions, per kind of
expression, and for the untimed questions their recall@5 (any occurrence of their topic) and, for ``time``,
``untimed_changed``: the share of untimed questions whose whole result list (``(path, startLine, endLine)`` or
``(sessionKey, messageId)`` in order) differs from the baseline's; it must be 0. Until the installed memsift has a
``now`` argument, ``time`` is skipped with a JSON note and the baseline runs alone.

**Phrasings** (issue 41): 252 phrases written by others, each with its repository and path (Duckling's EN, ZH and
JA corpora, chrono's en/ja/zh tests), converted to the windows they name looking back from ``--now``
(:func:`phrasings` says how), and look-alikes that must name no window (Duckling's negative corpus and ours: "early
stopping", "the 2nd floor", 18号线, 3日間 ...). Each is read by the time-word parser alone; a line per language
reports the share right. ``--phrasings-only`` runs only these (instant, no index).

Output: the phrasing lines, one JSON line for the data, one per (corpus, method, language: ``en``, ``zh``, ``ja``,
``all``), then a summary line with the goals (time recall@5 >= 0.9, at least +0.3 over the baseline, no untimed
change; phrasings >= 95 % right with every look-alike untouched). ``--misses`` adds one line per phrasing the parser
misses, per timed question the ``time`` method misses (the answers' dates and the top five's) and per untimed
question whose results it changed.

Examples (from the repository root; a few seconds):
    .venv/bin/python benches/temporal.py
    .venv/bin/python benches/temporal.py --seed 3 --misses
    .venv/bin/python benches/temporal.py --now 2027-02-03T18:30 --days 240
    .venv/bin/python benches/temporal.py --phrasings-only --misses
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import random
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import time as clock
from pathlib import Path

import memsift
from memsift.sessions import SessionStore

CALLER = 'agent:main:main'
LANGUAGES = ('en', 'zh', 'ja')
TOP = 5
DEFAULT_NOW = '2026-11-20T10:00'
DAILY_TOPICS = (1, 3)
"""Topic sections in a daily note: between these two."""
INBOX_CHANCE = 0.3
"""The chance, per day and language other than the daily note's, of a front-matter note of that day."""
SESSION_CHANCES = (0.5, 0.2)
"""The chance, per day and language, of a first session and of a second one."""
MONTHS_PER_TOPIC = 2
"""Month-name questions per (language, topic), picked among the months that hold an occurrence."""

# ---------------------------------------------------------------- the topics, in three languages

_DECISIONS = {
    'en': [
        'roll back the cache change',
        'keep the canary at 10% over the weekend',
        'freeze deploys until the incident review',
        'move the deploy window to Thursday mornings',
        'ship the new pricing page behind a feature flag',
        'split the database migration into two steps',
        'page the on-call team before every deploy',
        'drop the old API version',
    ],
    'zh': [
        '回滚缓存改动',
        '整个周末保持10%的灰度',
        '事故复盘前冻结发布',
        '把发布窗口改到周四上午',
        '新价格页用功能开关上线',
        '把数据库迁移拆成两步',
        '每次发布前通知值班同事',
        '下线旧版API',
    ],
    'ja': [
        'キャッシュの変更をロールバックする',
        '週末はカナリアを10%のままにする',
        '障害の振り返りまでリリースを凍結する',
        'デプロイ枠を木曜の午前に移す',
        '新しい料金ページをフィーチャーフラグの裏で出す',
        'DBマイグレーションを二段階に分ける',
        'デプロイ前に必ずオンコールに連絡する',
        '旧APIを廃止する',
    ],
}
_SERVICES = ['checkout', 'search-api', 'billing', 'auth-gateway', 'notifications', 'mobile-backend']


def _version(rng: random.Random) -> str:
    return f'v{rng.randint(1, 4)}.{rng.randint(0, 20)}'


def _km(rng: random.Random) -> str:
    return str(rng.randint(6, 42) / 2).removesuffix('.0')


@dataclass(frozen=True)
class Language:
    """One topic in one language: its section heading, the sentences stating a fact (``{slot}`` filled from
    ``slots``), and its questions: ``timed`` (``{t}``: the time expression as an adverb, ``{tn}``: as a noun
    modifier, which Japanese writes with の), ``recency`` and ``plain`` (no time expression)."""

    heading: str
    fact: str
    slots: dict[str, Sequence[str] | Callable[[random.Random], str]]
    timed: Sequence[str]
    recency: Sequence[str]
    plain: Sequence[str]


TOPICS: dict[str, dict[str, Language]] = {
    'deploy': {
        'en': Language(
            'Deploy',
            'Deployed {service} {version} to production. We decided to {decision}.',
            {'service': _SERVICES, 'version': _version, 'decision': _DECISIONS['en']},
            ['what did we decide about the deploy {t}?', 'what happened with the deploy {t}?'],
            ["what's the latest on the deploy?", 'what is the current deploy plan?'],
            ['what did we decide about the deploy?', 'what happened with the deploy?'],
        ),
        'zh': Language(
            '部署',
            '把{service} {version}部署到了生产环境。我们决定{decision}。',
            {'service': _SERVICES, 'version': _version, 'decision': _DECISIONS['zh']},
            ['{t}部署的决定是什么？', '{t}的部署怎么样了？'],
            ['最新的部署决定是什么？', '最近部署的决定是什么？'],
            ['部署的决定是什么？', '部署怎么样了？'],
        ),
        'ja': Language(
            'デプロイ',
            '{service} {version}を本番にデプロイした。{decision}ことに決定。',
            {'service': _SERVICES, 'version': _version, 'decision': _DECISIONS['ja']},
            ['{tn}デプロイの決定は？', '{tn}デプロイはどうなった？'],
            ['最新のデプロイの決定は？', '最近のデプロイはどうなった？'],
            ['デプロイの決定は？', 'デプロイはどうなった？'],
        ),
    },
    'one-on-one': {
        'en': Language(
            '1:1 with Priya',
            '1:1 with Priya: she wants {want}; we agreed that {agree}.',
            {
                'want': [
                    'more time for the search rewrite',
                    'a second reviewer on her team',
                    'to present at the all-hands',
                    'to move to the platform team',
                    'clearer goals for the quarter',
                    'fewer meetings on Mondays',
                    'budget for a conference',
                    'to mentor the new hire',
                ],
                'agree': [
                    'she owns the migration plan',
                    'I talk to her manager',
                    'we pair on the hiring rubric',
                    'she drops the reporting work',
                    'we try async standups',
                    'she writes the proposal first',
                    'we bring in a contractor',
                    'she keeps Fridays for deep work',
                ],
            },
            ['what did Priya and I agree on {t}?', 'what did Priya want {t}?'],
            ['what was the most recent thing Priya and I agreed on?', "what's the latest from my 1:1 with Priya?"],
            ['what did Priya and I agree on?', 'what does Priya want?'],
        ),
        'zh': Language(
            '和王磊的一对一',
            '和王磊一对一：他希望{want}，我们商定{agree}。',
            {
                'want': [
                    '多一些时间做搜索重构',
                    '团队里再加一个评审人',
                    '在全员大会上做分享',
                    '转到平台组',
                    '季度目标更清楚',
                    '周一少开会',
                    '有参加技术大会的预算',
                    '带新同事',
                ],
                'agree': [
                    '由他负责迁移方案',
                    '我去和他的经理沟通',
                    '一起制定招聘标准',
                    '他不再做报表工作',
                    '试行异步站会',
                    '他先写方案',
                    '找一个外包',
                    '他每周五专心做深度工作',
                ],
            },
            ['{t}和王磊商定了什么？', '{t}王磊希望什么？'],
            ['最近和王磊商定了什么？', '王磊最新希望什么？'],
            ['我和王磊商定了什么？', '王磊希望什么？'],
        ),
        'ja': Language(
            '佐藤さんとの1on1',
            '佐藤さんと1on1。{want}を希望している。{agree}ことで合意した。',
            {
                'want': [
                    '検索の作り直しにもっと時間',
                    'チームにレビュアーをもう一人',
                    '全体会議での発表',
                    'プラットフォームチームへの異動',
                    '四半期の目標の明確化',
                    '月曜の会議を減らすこと',
                    'カンファレンス参加の予算',
                    '新人のメンター役',
                ],
                'agree': [
                    '移行計画は佐藤さんが担当する',
                    '私から上長に話す',
                    '採用基準を一緒に作る',
                    'レポート業務を外す',
                    '非同期の朝会を試す',
                    '先に提案書を書く',
                    '外部委託を入れる',
                    '金曜は集中作業の日にする',
                ],
            },
            ['{t}佐藤さんと何を合意した？', '{t}佐藤さんは何を希望していた？'],
            ['最近佐藤さんと何を合意した？', '佐藤さんの最新の希望は？'],
            ['佐藤さんと何を合意した？', '佐藤さんは何を希望している？'],
        ),
    },
    'trip': {
        'en': Language(
            'Trip',
            'Work trip: travelled to {city} for {purpose}; {event}.',
            {
                'city': ['Lisbon', 'Berlin', 'Osaka', 'Toronto', 'Singapore', 'Denver', 'Milan', 'Seoul'],
                'purpose': [
                    'the partner summit',
                    'a customer workshop',
                    'the team offsite',
                    'a conference talk',
                    'the office opening',
                    'a hiring event',
                ],
                'event': [
                    'the hotel lost the booking',
                    'the flight was delayed three hours',
                    'we closed the contract',
                    'met the new regional lead',
                    'gave the keynote',
                    'the workshop ran over',
                ],
            },
            ['where did I travel {t}?', 'what was the trip {t} for?'],
            ['where was my latest trip?', 'what was my most recent trip for?'],
            ['where did I travel?', 'what was the trip for?'],
        ),
        'zh': Language(
            '出差',
            '出差去了{city}，参加{purpose}；{event}。',
            {
                'city': ['上海', '深圳', '成都', '东京', '新加坡', '西安', '杭州', '香港'],
                'purpose': ['合作伙伴峰会', '客户培训', '团队团建', '大会演讲', '新办公室开业', '校园招聘'],
                'event': [
                    '酒店把预订弄丢了',
                    '航班延误了三个小时',
                    '签下了合同',
                    '见了新的区域负责人',
                    '做了主题演讲',
                    '培训超时了',
                ],
            },
            ['{t}出差去了哪里？', '{t}出差是为了什么？'],
            ['最近一次出差去了哪里？', '最新一次出差是为了什么？'],
            ['出差去了哪里？', '出差是为了什么？'],
        ),
        'ja': Language(
            '出張',
            '{city}へ出張。目的は{purpose}。{event}。',
            {
                'city': ['大阪', '福岡', '札幌', '名古屋', 'ソウル', '台北', '仙台', '広島'],
                'purpose': [
                    'パートナーサミット',
                    '顧客向けワークショップ',
                    'チーム合宿',
                    'カンファレンス登壇',
                    '新オフィスの開所式',
                    '採用イベント',
                ],
                'event': [
                    'ホテルの予約が消えていた',
                    '飛行機が三時間遅れた',
                    '契約がまとまった',
                    '新しい地域責任者に会った',
                    '基調講演をした',
                    'ワークショップが長引いた',
                ],
            },
            ['{t}出張でどこへ行った？', '{tn}出張の目的は？'],
            ['最近の出張はどこだった？', '最新の出張の目的は？'],
            ['出張でどこへ行った？', '出張の目的は？'],
        ),
    },
    'bug': {
        'en': Language(
            'Bug',
            'The login bug came back: {cause}. Fixed it by {fix}.',
            {
                'cause': [
                    'a race in the session cache',
                    'an expired TLS certificate',
                    'clock skew between two nodes',
                    'a missing database index',
                    'a bad retry loop in the client',
                    'cookies over the size limit',
                    'a stale DNS record',
                    'the rate limiter counting twice',
                ],
                'fix': [
                    'adding a lock',
                    'renewing the certificate',
                    'syncing NTP',
                    'adding the index',
                    'capping the retries',
                    'trimming the cookie',
                    'flushing DNS',
                    'fixing the counter',
                ],
            },
            ['what caused the login bug {t}?', 'how did we fix the login bug {t}?'],
            ['what caused the latest login bug?', 'how did we fix the most recent login bug?'],
            ['what caused the login bug?', 'how did we fix the login bug?'],
        ),
        'zh': Language(
            '登录bug',
            '登录bug又出现了：原因是{cause}，{fix}后修好了。',
            {
                'cause': [
                    '会话缓存的竞态条件',
                    'TLS证书过期',
                    '两台节点时钟不同步',
                    '数据库少了索引',
                    '客户端重试死循环',
                    'cookie超过大小限制',
                    'DNS记录过期',
                    '限流器重复计数',
                ],
                'fix': [
                    '加锁',
                    '更新证书',
                    '同步NTP',
                    '补上索引',
                    '限制重试次数',
                    '精简cookie',
                    '刷新DNS',
                    '修正计数器',
                ],
            },
            ['{t}登录bug的原因是什么？', '{t}登录bug是怎么修好的？'],
            ['最近一次登录bug的原因是什么？', '最新的登录bug是怎么修好的？'],
            ['登录bug的原因是什么？', '登录bug是怎么修好的？'],
        ),
        'ja': Language(
            'ログインのバグ',
            'ログインのバグが再発。原因は{cause}。{fix}で修正した。',
            {
                'cause': [
                    'セッションキャッシュの競合',
                    'TLS証明書の期限切れ',
                    'ノード間の時刻ずれ',
                    'DBインデックスの不足',
                    'クライアントのリトライの暴走',
                    'クッキーのサイズ超過',
                    '古いDNSレコード',
                    'レートリミッタの二重カウント',
                ],
                'fix': [
                    'ロックの追加',
                    '証明書の更新',
                    'NTPの同期',
                    'インデックスの追加',
                    'リトライ回数の制限',
                    'クッキーの削減',
                    'DNSのフラッシュ',
                    'カウンタの修正',
                ],
            },
            ['{tn}ログインのバグの原因は？', '{tn}ログインのバグはどう直した？'],
            ['最新のログインのバグの原因は？', '最近のログインのバグはどう直した？'],
            ['ログインのバグの原因は？', 'ログインのバグはどう直した？'],
        ),
    },
    'budget': {
        'en': Language(
            'Budget',
            'Budget: the {area} budget is set at ${amount}k; {note}.',
            {
                'area': ['marketing', 'cloud', 'hiring', 'events', 'tooling'],
                'amount': lambda rng: str(rng.randrange(20, 205, 5)),
                'note': [
                    'finance wants a monthly report',
                    'half of it is for the launch',
                    'we cut the contractor line',
                    'the rest moves to next quarter',
                    'approved by Dana',
                    'it includes the new laptops',
                ],
            },
            ['what did we set the budget to {t}?', 'what budget did we agree {t}?'],
            ['what is the current budget?', "what's the latest budget?"],
            ['what did we set the budget to?', 'what budget did we agree?'],
        ),
        'zh': Language(
            '预算',
            '预算：{area}预算定为{amount}万元；{note}。',
            {
                'area': ['市场', '云服务', '招聘', '活动', '工具'],
                'amount': lambda rng: str(rng.randrange(20, 205, 5)),
                'note': [
                    '财务要求每月汇报',
                    '一半用于发布',
                    '砍掉了外包费用',
                    '剩下的挪到下个季度',
                    '李总已批准',
                    '包含新笔记本电脑',
                ],
            },
            ['{t}预算定了多少？', '{t}定的预算是多少？'],
            ['最新的预算是多少？', '最近定的预算是多少？'],
            ['预算定了多少？', '定的预算是多少？'],
        ),
        'ja': Language(
            '予算',
            '予算：{area}の予算を{amount}万円に決めた。{note}。',
            {
                'area': ['マーケティング', 'クラウド', '採用', 'イベント', 'ツール'],
                'amount': lambda rng: str(rng.randrange(200, 2050, 50)),
                'note': [
                    '経理から毎月の報告を求められた',
                    '半分はローンチ用',
                    '外注費を削った',
                    '残りは次の四半期に回す',
                    '部長の承認済み',
                    '新しいノートPCを含む',
                ],
            },
            ['{tn}予算はいくらに決めた？', '{t}決めた予算は？'],
            ['最新の予算はいくら？', '最近決めた予算は？'],
            ['予算はいくらに決めた？', '決めた予算は？'],
        ),
    },
    'run': {
        'en': Language(
            'Run',
            'Went for a run: {km} km along the {route}; {feel}.',
            {
                'km': _km,
                'route': ['river path', 'park loop', 'harbour trail', 'hill route', 'canal towpath'],
                'feel': [
                    'legs felt heavy',
                    'new personal best',
                    'easy pace with music',
                    'windy and cold',
                    'stopped once for water',
                ],
            },
            ['how far did I run {t}?', 'what route did I run {t}?'],
            ['how far was my most recent run?', 'what was my latest run like?'],
            ['how far did I run?', 'what route did I run?'],
        ),
        'zh': Language(
            '跑步',
            '跑步{km}公里，路线是{route}；{feel}。',
            {
                'km': _km,
                'route': ['江边步道', '公园环线', '海滨栈道', '山路', '运河边'],
                'feel': ['腿很沉', '个人最好成绩', '听着音乐慢跑', '风大很冷', '中途停下喝了次水'],
            },
            ['{t}跑步跑了多少公里？', '{t}跑步走的哪条路线？'],
            ['最近一次跑步跑了多少公里？', '最新一次跑步走的哪条路线？'],
            ['跑步跑了多少公里？', '跑步走的哪条路线？'],
        ),
        'ja': Language(
            'ランニング',
            'ランニングで{km}キロ走った。コースは{route}。{feel}。',
            {
                'km': _km,
                'route': ['川沿いの道', '公園の周回コース', '港の遊歩道', '坂道コース', '運河沿い'],
                'feel': [
                    '脚が重かった',
                    '自己ベスト更新',
                    '音楽を聴きながらゆっくり',
                    '風が強くて寒かった',
                    '途中で一回給水',
                ],
            },
            ['{t}ランニングで何キロ走った？', '{tn}ランニングのコースは？'],
            ['最近のランニングは何キロだった？', '最新のランニングのコースは？'],
            ['ランニングで何キロ走った？', 'ランニングのコースは？'],
        ),
    },
    'call': {
        'en': Language(
            'Acme call',
            'Call with Acme: they asked for {ask}; next step is to {step}.',
            {
                'ask': [
                    'a discount on the annual plan',
                    'single sign-on',
                    'a data export API',
                    'an on-site training',
                    'a longer trial',
                    'EU data residency',
                    'a dedicated support channel',
                    'custom reports',
                ],
                'step': [
                    'send a quote',
                    'schedule a demo',
                    'loop in legal',
                    'write a proposal',
                    'check with engineering',
                    'share the roadmap',
                ],
            },
            ['what did Acme ask for {t}?', "what's the next step from the Acme call {t}?"],
            ['what did Acme ask for in the latest call?', 'what is the current next step with Acme?'],
            ['what did Acme ask for?', "what's the next step from the Acme call?"],
        ),
        'zh': Language(
            '华科电话',
            '和华科通电话：他们要求{ask}；下一步是{step}。',
            {
                'ask': [
                    '年付方案打折',
                    '单点登录',
                    '数据导出接口',
                    '上门培训',
                    '延长试用期',
                    '数据存放在国内',
                    '专属支持群',
                    '定制报表',
                ],
                'step': ['发报价', '约演示', '拉上法务', '写方案', '和研发确认', '分享路线图'],
            },
            ['{t}华科提了什么要求？', '{t}和华科通电话的下一步是什么？'],
            ['华科最新提了什么要求？', '最近和华科通电话的下一步是什么？'],
            ['华科提了什么要求？', '和华科通电话的下一步是什么？'],
        ),
        'ja': Language(
            '山田商事との電話',
            '山田商事と電話。{ask}の要望があった。次は{step}。',
            {
                'ask': [
                    '年間プランの値引き',
                    'シングルサインオン',
                    'データエクスポートAPI',
                    '訪問トレーニング',
                    'トライアル延長',
                    '国内でのデータ保管',
                    '専用サポート窓口',
                    'カスタムレポート',
                ],
                'step': [
                    '見積もりを送る',
                    'デモを設定する',
                    '法務に相談する',
                    '提案書を書く',
                    '開発に確認する',
                    'ロードマップを共有する',
                ],
            },
            ['{t}山田商事からどんな要望があった？', '{tn}山田商事との電話の次のステップは？'],
            ['山田商事からの最新の要望は？', '最近の山田商事との電話の次のステップは？'],
            ['山田商事からどんな要望があった？', '山田商事との電話の次のステップは？'],
        ),
    },
    'interview': {
        'en': Language(
            'Interview',
            'Interviewed {candidate} for the {role} role; {verdict}.',
            {
                'candidate': [
                    'Maya Chen',
                    'Tom Becker',
                    'Lucia Romero',
                    'Arjun Patel',
                    'Sofia Novak',
                    'Ben Okafor',
                    'Hannah Kim',
                    'Leo Martin',
                    'Nora Walsh',
                    'Omar Haddad',
                ],
                'role': ['backend engineer', 'designer', 'data analyst', 'product manager', 'SRE'],
                'verdict': [
                    'strong yes',
                    'good but too junior',
                    'no hire',
                    'second round with the team',
                    'great on systems design',
                    'weak on testing',
                ],
            },
            ['who did I interview {t}?', 'how did the interview go {t}?'],
            ['who was the most recent candidate I interviewed?', 'how did the latest interview go?'],
            ['who did I interview?', 'how did the interview go?'],
        ),
        'zh': Language(
            '面试',
            '面试了{candidate}（{role}岗位），结果：{verdict}。',
            {
                'candidate': ['张伟', '李娜', '刘洋', '陈静', '杨帆', '赵敏', '黄磊', '周婷', '吴昊', '孙悦'],
                'role': ['后端工程师', '设计师', '数据分析师', '产品经理', '运维工程师'],
                'verdict': ['强烈推荐', '不错但太资浅', '不录用', '安排团队二面', '系统设计很强', '测试意识弱'],
            },
            ['{t}面试了谁？', '{t}的面试结果怎么样？'],
            ['最近面试了谁？', '最新的面试结果怎么样？'],
            ['面试了谁？', '面试结果怎么样？'],
        ),
        'ja': Language(
            '面接',
            '{role}の候補者、{candidate}さんを面接した。面接の結果：{verdict}。',
            {
                'candidate': ['鈴木', '高橋', '田中', '伊藤', '渡辺', '中村', '小林', '加藤', '吉田', '山本'],
                'role': ['バックエンドエンジニア', 'デザイナー', 'データアナリスト', 'プロダクトマネージャー', 'SRE'],
                'verdict': [
                    'ぜひ採用したい',
                    '良いが経験が浅い',
                    '見送り',
                    'チームとの二次面接へ',
                    'システム設計が強い',
                    'テストへの意識が弱い',
                ],
            },
            ['{t}誰を面接した？', '{tn}面接の結果は？'],
            ['最近誰を面接した？', '最新の面接の結果は？'],
            ['誰を面接した？', '面接の結果は？'],
        ),
    },
}

NEAR_MISSES: dict[str, list[tuple[str, str]]] = {
    'en': [
        ('deploy', 'what may go wrong with the deploy?'),
        ('trip', 'how many days did the trip take?'),
        ('budget', 'what did the weekly budget review say?'),
        ('call', 'May I see what Acme asked for?'),
    ],
    'zh': [
        ('budget', '周报里预算写了多少？'),
        ('deploy', '部署最大的风险是什么？'),
        ('budget', '五个月的预算一共多少？'),
        ('budget', '月度预算是多少？'),
    ],
    'ja': [
        ('budget', '週報に予算はいくらと書いた？'),
        ('deploy', 'デプロイの最大のリスクは？'),
        ('budget', '五か月分の予算はいくら？'),
        ('budget', '月次の予算はいくら？'),
    ],
}
"""Untimed questions that look temporal, per language: ``(topic, question)``."""

_BOOKS = {
    'en': ['Dune', 'The Pragmatic Programmer', 'Middlemarch'],
    'zh': ['三体', '活着', '围城'],
    'ja': ['こころ', '雪国', '檸檬'],
}
FILLER = {
    'en': [
        'Picked up groceries: eggs, rice and coffee.',
        'Read two chapters of {book}.',
        'Rainy day; worked from home.',
        'Cleaned up the inbox and archived old threads.',
        'Lunch with the team at the noodle place.',
        'Watered the plants and paid the electricity bill.',
        'Spent the afternoon on code review.',
        'Called mum in the evening.',
        'Dentist appointment moved to next week.',
        'Need to renew the passport before next month.',
    ],
    'zh': [
        '买了鸡蛋、大米和咖啡。',
        '读了两章《{book}》。',
        '下雨，在家办公。',
        '整理了邮箱，归档了旧邮件。',
        '和同事去吃了面。',
        '给植物浇了水，交了电费。',
        '下午都在做代码评审。',
        '晚上给妈妈打了电话。',
        '牙医预约改到下周了。',
        '下个月之前要续签护照。',
    ],
    'ja': [
        '卵と米とコーヒーを買った。',
        '『{book}』を二章読んだ。',
        '雨なので在宅勤務。',
        '受信箱を整理して古いスレッドをアーカイブした。',
        'チームでラーメンを食べに行った。',
        '植物に水をやって電気代を払った。',
        '午後はずっとコードレビュー。',
        '夜に母に電話した。',
        '歯医者の予約を来週に変更。',
        '来月までにパスポートを更新しないと。',
    ],
}
EXCHANGES = {
    'en': [
        (
            'Can you draft a short email to the landlord about the heating?',
            "Here's a draft: 'Hi, the heating in the flat has stopped working; could someone take a look?'",
        ),
        ("What's a quick vegetarian dinner idea?", 'A chickpea curry with rice takes about 25 minutes.'),
        (
            'Summarise this article on sleep for me.',
            'Key points: keep a regular schedule, avoid screens late, get morning light.',
        ),
        ('Convert 72 Fahrenheit to Celsius.', '72 °F is about 22 °C.'),
        ('Remind me what the capital of Australia is.', 'Canberra.'),
        ('Suggest a name for a reading group.', "How about 'Chapter and Verse'?"),
        ('How do I undo the last git commit but keep the changes?', 'Run git reset --soft HEAD~1.'),
    ],
    'zh': [
        ('帮我写一封给房东的邮件，说暖气坏了。', '草稿：“您好，家里的暖气坏了，能派人来看看吗？”'),
        ('晚饭吃什么简单？', '番茄炒蛋配米饭，二十分钟就好。'),
        ('帮我总结一下这篇关于睡眠的文章。', '要点：作息规律，睡前少看屏幕，早上多晒太阳。'),
        ('72华氏度是多少摄氏度？', '大约22摄氏度。'),
        ('澳大利亚的首都是哪里？', '堪培拉。'),
        ('给读书会起个名字吧。', '叫“书页之间”如何？'),
        ('怎么撤销上一次git提交但保留改动？', '运行 git reset --soft HEAD~1。'),
    ],
    'ja': [
        ('大家さんに暖房が壊れたとメールを書いて。', '下書き：「暖房が動かなくなりました。見ていただけますか。」'),
        ('簡単な夕飯のアイデアは？', '豚の生姜焼きなら二十分でできます。'),
        ('睡眠についてのこの記事を要約して。', '要点：規則正しい生活、寝る前の画面を控える、朝の光を浴びる。'),
        ('華氏72度は摂氏何度？', '約22度です。'),
        ('オーストラリアの首都は？', 'キャンベラです。'),
        ('読書会の名前を考えて。', '「ページの間」はどうでしょう。'),
        ('直前のgitコミットを変更を残したまま取り消すには？', 'git reset --soft HEAD~1 を実行します。'),
    ],
}
LEAD_INS = {
    'en': ['', 'Quick update: ', 'FYI, ', 'Note for later: '],
    'zh': ['', '记一下：', '更新一下：', '备忘：'],
    'ja': ['', 'メモ：', '共有です。', '覚えておいて：'],
}
ACKS = {
    'en': ['Got it.', "Noted, I'll remember that.", 'Thanks, saved.', 'Okay, noted.'],
    'zh': ['好的，记下了。', '收到。', '明白，已记录。'],
    'ja': ['了解しました。', 'メモしました。', '承知しました。'],
}
REFERENCE_NOTES = {
    'en': {
        'MEMORY.md': (
            '# Memory\n\n'
            '- Priya leads the search team; 1:1 every other week.\n'
            '- Acme is our biggest customer; calls go through the account channel.\n'
            '- I run three times a week, mostly the river path.\n'
        ),
        'memory/projects/release-checklist.md': (
            '# Release checklist\n\n'
            '1. Announce the deploy in the channel.\n'
            '2. Check the canary dashboards for 30 minutes.\n'
            '3. Decide whether to roll back or continue.\n'
        ),
        'memory/projects/login-bug.md': (
            '# The login bug\n\n'
            'A flaky login bug that keeps coming back. Causes so far were in the session cache, certificates and DNS; '
            'each fix is logged in the daily notes.\n'
        ),
    },
    'zh': {
        'memory/参考/团队.md': (
            '# 团队\n\n'
            '- 王磊负责平台组，隔周一对一。\n'
            '- 华科是重要客户，电话由销售安排。\n'
            '- 面试流程：一面技术，二面团队。\n'
        ),
        'memory/参考/发布流程.md': (
            '# 发布流程\n\n1. 在群里通知部署。\n2. 观察灰度指标30分钟。\n3. 决定继续还是回滚。\n'
        ),
        'memory/参考/预算说明.md': '# 预算说明\n\n各项预算由财务审批，超支需要李总确认。出差费用单独报销。\n',
    },
    'ja': {
        'memory/参照/チーム.md': (
            '# チーム\n\n- 佐藤さんは検索チームのリード。1on1は隔週。\n- 山田商事は大口顧客。電話は営業経由。\n'
        ),
        'memory/参照/デプロイ手順.md': (
            '# デプロイ手順\n\n'
            '1. チャンネルでデプロイを告知。\n'
            '2. カナリアを30分監視。\n'
            '3. 続行かロールバックかを決定。\n'
        ),
        'memory/参照/ランニング.md': '# ランニング\n\n週三回、主に川沿いの道を走る。目標はハーフマラソン。\n',
    },
}
INBOX_TITLES = {'en': 'Work log', 'zh': '工作记录', 'ja': '作業メモ'}


def _fact(language: Language, rng: random.Random) -> str:
    filled = {k: v(rng) if callable(v) else rng.choice(v) for k, v in language.slots.items()}
    return language.fact.format(**filled)


# ---------------------------------------------------------------- the data


@dataclass(frozen=True)
class Occurrence:
    """One time a topic came up: where (a note's lines or a message) and when."""

    language: str
    topic: str
    day: date
    where: tuple[str, int, int] | tuple[str, str]
    """``(path, first line, last line)`` of a note's topic section, or ``(session key, message id)``."""


@dataclass
class Corpus:
    occurrences: list[Occurrence] = field(default_factory=list)
    days: dict[str, date] = field(default_factory=dict)
    """Note path or session key -> its date (for ``--misses``)."""


def write_notes(root: Path, start: date, now: datetime, seed: int) -> tuple[Corpus, dict[str, int]]:
    """The workspace under ``root``: daily notes, front-matter notes, reference notes (see the module docstring)."""
    rng = random.Random(f'{seed}:notes')
    corpus, counts = Corpus(), {'daily': 0, 'front_matter': 0, 'reference': 0}
    (root / 'memory').mkdir(parents=True)
    inbox = 0
    day = start
    while day <= now.date():
        daily = rng.choice(LANGUAGES)
        for language in (daily, *[other for other in LANGUAGES if other != daily]):
            if language == daily:
                topics = rng.sample(sorted(TOPICS), rng.randint(*DAILY_TOPICS)) if rng.random() < 0.85 else []
                if not topics and rng.random() < 0.5:
                    continue
                path = f'memory/{day.isoformat()}.md'
                lines = [f'# {day.isoformat()}', '']
                mtime = datetime.combine(day, clock(21, 0)).timestamp()
                counts['daily'] += 1
            else:
                if rng.random() >= INBOX_CHANCE:
                    continue
                topics = rng.sample(sorted(TOPICS), rng.randint(1, 2))
                inbox += 1
                path = f'memory/inbox/note-{inbox:03d}.md'
                lines = ['---', f'date: {day.isoformat()}', '---', f'# {INBOX_TITLES[language]}', '']
                touched = datetime.combine(day, clock(21, 0)).timestamp()
                mtime = rng.uniform(min(touched, now.timestamp()), now.timestamp())
                counts['front_matter'] += 1
            for topic in topics:
                spec = TOPICS[topic][language]
                first = len(lines) + 1
                lines += [f'## {spec.heading}', _fact(spec, rng)]
                corpus.occurrences.append(Occurrence(language, topic, day, (path, first, len(lines))))
                lines.append('')
            if language == daily:
                filler = rng.sample(FILLER[language], rng.randint(1, 3))
                lines += [{'en': '## Notes', 'zh': '## 杂记', 'ja': '## メモ'}[language]]
                lines += ['- ' + line.format(book=rng.choice(_BOOKS[language])) for line in filler]
            file = root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text('\n'.join(lines).rstrip() + '\n', encoding='utf-8')
            os.utime(file, (mtime, mtime))
            corpus.days[path] = day
        day += timedelta(days=1)
    span = (datetime.combine(start, clock(8, 0)).timestamp(), now.timestamp())
    for language in LANGUAGES:
        for path, text in REFERENCE_NOTES[language].items():
            file = root / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding='utf-8')
            mtime = rng.uniform(*span)
            os.utime(file, (mtime, mtime))
            counts['reference'] += 1
    return corpus, counts


def write_sessions(store_paths: Sequence[Path], start: date, now: datetime, seed: int) -> tuple[Corpus, dict]:
    """The transcripts (see the module docstring) into each store path; returns the corpus and counts."""
    rng = random.Random(f'{seed}:sessions')
    corpus = Corpus()
    sessions: dict[str, list[dict]] = {}
    day = start
    while day <= now.date():
        for language in LANGUAGES:
            left = sorted(TOPICS)
            rng.shuffle(left)
            for chance in SESSION_CHANCES:
                if rng.random() >= chance or not left:
                    continue
                key = f'agent:main:chat-{len(sessions):04d}'
                exchanges: list[tuple[str | None, str, str]] = []
                for _ in range(min(rng.randint(1, 2), len(left))):
                    topic = left.pop()
                    fact = _fact(TOPICS[topic][language], rng)
                    exchanges.append((topic, rng.choice(LEAD_INS[language]) + fact, rng.choice(ACKS[language])))
                exchanges += [(None, *pair) for pair in rng.sample(EXCHANGES[language], rng.randint(1, 3))]
                rng.shuffle(exchanges)
                last = datetime.combine(day, clock(20, 0)) if day < now.date() else now - timedelta(minutes=40)
                first = datetime.combine(day, clock(8, 0))
                if last <= first:
                    continue
                moment = first + (last - first) * rng.random()
                events = []
                for topic, user, reply in exchanges:
                    for role, text in (('user', user), ('assistant', reply)):
                        message_id = f'm{len(events)}'
                        if topic is not None and role == 'user':
                            corpus.occurrences.append(Occurrence(language, topic, day, (key, message_id)))
                        stamp = moment.replace(second=0, microsecond=0).astimezone().isoformat()
                        events.append(
                            {
                                'type': 'message',
                                'id': message_id,
                                'timestamp': stamp,
                                'message': {'role': role, 'content': text},
                            }
                        )
                        moment += timedelta(minutes=rng.randint(1, 3))
                sessions[key] = events
                corpus.days[key] = day
        day += timedelta(days=1)
    for path in store_paths:
        with SessionStore(path, visibility='agent') as store:
            for key, events in sessions.items():
                store.append_many(key, events)
    return corpus, {'sessions': len(sessions), 'messages': sum(len(e) for e in sessions.values())}


# ---------------------------------------------------------------- the questions


@dataclass(frozen=True)
class Expression:
    """A time expression in one language: its kind, how it is written, and the days it covers (``strict``, and
    ``loose`` where a reader could count more days in: a question is kept only when its topic occurs on none of
    those extra days)."""

    kind: str
    adverb: str
    noun: str
    strict: tuple[date, date]
    loose: tuple[date, date]


_WEEKDAYS = ('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday')
_EN_NUMBERS = {2: 'two', 3: 'three', 4: 'four'}
_HAN_NUMBERS = dict(enumerate(['一', '二', '三', '四', '五', '六', '七', '八', '九', '十', '十一', '十二'], start=1))
_MONTHS = [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
]


def expressions(language: str, now: datetime, start: date, rng: random.Random) -> list[Expression]:
    """The time expressions of ``language`` at ``now`` whose windows lie inside the data (from ``start``)."""
    today = now.date()
    out: list[Expression] = []

    def add(kind: str, adverb: str, first: date, last: date, loose: tuple[date, date] | None = None, noun=None):
        if first >= start:
            noun = noun if noun is not None else adverb.removesuffix('に') + 'の'
            out.append(Expression(kind, adverb, noun, (first, last), loose or (first, last)))

    one = timedelta(days=1)
    monday = today - timedelta(days=today.weekday())
    last_monday = monday - 7 * one
    month_end = today.replace(day=1) - one
    month_start = month_end.replace(day=1)
    this_week = (monday, today), (monday - one, today)  # a Sunday-first week also holds the Sunday before
    last_week = (last_monday, last_monday + 5 * one), (last_monday - one, last_monday + 6 * one)
    if language == 'en':
        add('yesterday', 'yesterday', today - one, today - one)
        for n in (2, 3, 4):
            written = rng.choice([_EN_NUMBERS[n], str(n)])
            add('days-ago', f'{written} days ago', today - n * one, today - n * one)
        for weekday in range(7):
            back = (today.weekday() - weekday) % 7
            if back:
                add('weekday', f'on {_WEEKDAYS[weekday]}', today - back * one, today - back * one)
        add('this-week', 'this week', *this_week[0], this_week[1])
        add('last-week', 'last week', *last_week[0], last_week[1])
        add('last-month', 'last month', month_start, month_end)
    else:
        ja = language == 'ja'
        add('yesterday', '昨日' if ja else '昨天', today - one, today - one)
        add('days-ago', '一昨日' if ja else '前天', today - 2 * one, today - 2 * one)
        for n in (3, 4):
            written = rng.choice([_HAN_NUMBERS[n], str(n)])
            add('days-ago', f'{written}日前に' if ja else f'{written}天前', today - n * one, today - n * one)
        add('this-week', '今週' if ja else '本周', *this_week[0], this_week[1])
        add('last-week', '先週' if ja else rng.choice(['上周', '上星期']), *last_week[0], last_week[1])
        add('last-month', '先月' if ja else '上个月', month_start, month_end)
    for month in range(1, 13):
        year = today.year if month < today.month else today.year - 1
        first = date(year, month, 1)
        last = (date(year + month // 12, month % 12 + 1, 1)) - one
        if language == 'en':
            add('month', f'in {_MONTHS[month - 1]}', first, last)
        else:
            written = rng.choice([_HAN_NUMBERS[month], str(month)])
            add('month', f'{written}月に' if language == 'ja' else f'{written}月', first, last)
    return out


@dataclass(frozen=True)
class Question:
    language: str
    kind: str
    """The expression's kind (``yesterday``, ``days-ago``, ``weekday``, ``this-week``, ``last-week``,
    ``last-month``, ``month``, ``recency``), or ``plain`` / ``near-miss`` for untimed questions."""
    text: str
    answers: frozenset
    """The ``where`` of its answer occurrences."""

    @property
    def timed(self) -> bool:
        return self.kind not in ('plain', 'near-miss')


def questions(corpus: Corpus, now: datetime, start: date, seed: int, stream: str) -> list[Question]:
    """Timed questions for ``corpus`` (one per language, topic and expression whose window holds that topic), then
    the untimed ones (see the module docstring)."""
    rng = random.Random(f'{seed}:questions:{stream}')
    out: list[Question] = []
    for language in LANGUAGES:
        listed = expressions(language, now, start, rng)
        for topic, specs in TOPICS.items():
            spec = specs[language]
            days = [o for o in corpus.occurrences if o.language == language and o.topic == topic]
            months: list[Question] = []
            for expression in listed:
                inside = [o for o in days if expression.strict[0] <= o.day <= expression.strict[1]]
                around = [o for o in days if expression.loose[0] <= o.day <= expression.loose[1]]
                if not inside or len(around) != len(inside):
                    continue
                text = rng.choice(spec.timed).format(t=expression.adverb, tn=expression.noun)
                asked = Question(language, expression.kind, text, frozenset(o.where for o in inside))
                (months if expression.kind == 'month' else out).append(asked)
            out += rng.sample(months, min(MONTHS_PER_TOPIC, len(months)))
            if days:
                latest = max(o.day for o in days)
                answers = frozenset(o.where for o in days if o.day == latest)
                out.append(Question(language, 'recency', rng.choice(spec.recency), answers))
    for language in LANGUAGES:
        for topic, specs in TOPICS.items():
            answers = frozenset(o.where for o in corpus.occurrences if o.language == language and o.topic == topic)
            out += [Question(language, 'plain', text, answers) for text in specs[language].plain]
        for topic, text in NEAR_MISSES[language]:
            answers = frozenset(o.where for o in corpus.occurrences if o.language == language and o.topic == topic)
            out.append(Question(language, 'near-miss', text, answers))
    return out


# ---------------------------------------------------------------- third-party phrasings

DUCKLING_EN = 'facebook/duckling Duckling/Time/EN/Corpus.hs'
DUCKLING_ZH = 'facebook/duckling Duckling/Time/ZH/Corpus.hs'
DUCKLING_JA = 'facebook/duckling Duckling/Time/JA/Corpus.hs'
CHRONO_EN = 'wanasit/chrono test/en/en_relative.test.ts'
CHRONO_JA = 'wanasit/chrono test/ja/ja_relative_date.test.ts'
CHRONO_JA_CASUAL = 'wanasit/chrono test/ja/ja_casual.test.ts'
CHRONO_ZH = 'wanasit/chrono test/zh/hans/zh_hans_ago.test.ts'
OURS = 'memsift (issue 41: words that only look like time)'

Span = tuple[date, date]
"""Days ``start`` (inclusive) to ``end`` (exclusive)."""


def _d(day: date) -> Span:
    return day, day + timedelta(days=1)


def _monday_of(today: date, back: int) -> date:
    return today - timedelta(days=today.weekday() + 7 * back)


def _w(today: date, back: int, first: int = 0, last: int = 7) -> Span:
    monday = _monday_of(today, back)
    return monday + timedelta(days=first), monday + timedelta(days=last)


def _m(year: int, month: int, first: int = 1, last: int | None = None) -> Span:
    end = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, first), end if last is None else date(year, month, last)


def _back_month(today: date, back: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - back
    return index // 12, index % 12 + 1


def _latest(today: date, month: int, day: int = 1) -> int:
    """The year of the most recent ``month``/``day`` up to today."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _latest_day(today: date, day: int) -> Span:
    """The most recent day ``day`` of a month, up to today."""
    year, month = today.year, today.month
    for _ in range(13):
        try:
            candidate = date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and candidate <= today:
            return _d(candidate)
        year, month = (year - 1, 12) if month == 1 else (year, month - 1)
    raise ValueError(f'no day {day} in a year')


def _rolling(today: date, days: int) -> Span:
    return today - timedelta(days=days - 1), today + timedelta(days=1)


@dataclass(frozen=True)
class Phrasing:
    """A time phrase from a third party's test corpus (``source``: repository and path), with the windows it may
    name read against the bench's now (several where readers differ: "two weeks ago" is that week, or the day 14
    days back); none for text that must name no window."""

    language: str
    text: str
    source: str
    accepted: tuple[Span, ...]


def phrasings(today: date) -> list[Phrasing]:
    """The phrasings and their windows at ``today``. Duckling's and chrono's answers are for their own reference
    time, and they read a bare date forward ("on the 15th" is the next 15th); here each phrase is converted to what
    it names looking back from ``today``, as a question about one's notes does: a bare day, month or weekday is its
    most recent occurrence up to today, "N weeks ago" is that calendar week or the day N*7 days back, "the past N
    days" ends today or yesterday. Parts of periods take the sources' own windows: early / mid / late a month are
    days 1-10, 11-20 and 21 to the end (Duckling's "early March", 三月頭, 五月中, 六月尾), the start of a year
    January to March and its end September to December (Duckling's 年頭, 年尾). Phrases about the future, clock
    times, holidays and ranges ("July 13-15") are left out: a question about the past does not use them."""
    t = today
    y = t.year
    one = timedelta(days=1)
    last_week, this_week = _w(t, 1), (_w(t, 0)[0], t + one)
    weeks_ago = lambda n: (_w(t, n), _d(t - 7 * n * one))  # noqa: E731
    month_ago = lambda n: _m(*_back_month(t, n))  # noqa: E731
    sunday_last = _d(_monday_of(t, 1) + 6 * one)
    tuesday_last = _d(_monday_of(t, 1) + one)
    last_tuesday = _d(t - timedelta(days=(t.weekday() - 1) % 7 or 7))
    last_sunday = _d(t - timedelta(days=(t.weekday() - 6) % 7 or 7))
    out: list[tuple[str, str, str, tuple[Span, ...]]] = []

    def add(language: str, source: str, texts: Sequence[str], *accepted: Span) -> None:
        out.extend((language, text, source, tuple(accepted)) for text in texts)

    # English: Duckling's corpus
    add('en', DUCKLING_EN, ['today'], _d(t))
    add('en', DUCKLING_EN, ['yesterday'], _d(t - one))
    add('en', DUCKLING_EN, ['the day before yesterday'], _d(t - 2 * one))
    add('en', DUCKLING_EN, ['this week', 'current week'], _w(t, 0), this_week)
    add('en', DUCKLING_EN, ['last week', 'previous week'], last_week)
    add('en', DUCKLING_EN, ['past week'], last_week, _rolling(t, 7))
    add('en', DUCKLING_EN, ['last month'], month_ago(1))
    add('en', DUCKLING_EN, ['last year', 'last yr'], (date(y - 1, 1, 1), date(y, 1, 1)))
    add('en', DUCKLING_EN, ['this year', 'current year', 'this yr'], (date(y, 1, 1), date(y + 1, 1, 1)))
    add('en', DUCKLING_EN, ['last sunday'], last_sunday, sunday_last)
    add('en', DUCKLING_EN, ['sunday from last week', "last week's sunday"], sunday_last)
    add('en', DUCKLING_EN, ['last tuesday'], last_tuesday, tuesday_last)
    add('en', DUCKLING_EN, ['7 days ago'], _d(t - 7 * one))
    add('en', DUCKLING_EN, ['14 days Ago'], _d(t - 14 * one))
    add('en', DUCKLING_EN, ['a fortnight ago'], *weeks_ago(2))
    add('en', DUCKLING_EN, ['a week ago', 'one week ago', '1 week ago'], *weeks_ago(1))
    add('en', DUCKLING_EN, ['three weeks ago'], *weeks_ago(3))
    add('en', DUCKLING_EN, ['three months ago'], month_ago(3))
    add('en', DUCKLING_EN, ['two years ago'], (date(y - 2, 1, 1), date(y - 1, 1, 1)))
    add('en', DUCKLING_EN, ['last 2 days', 'last two days', 'past 2 days'], _rolling(t, 2), (t - 2 * one, t))
    add(
        'en',
        DUCKLING_EN,
        ['last 2 weeks', 'last two weeks', 'past 2 weeks'],
        _rolling(t, 14),
        (_w(t, 2)[0], _w(t, 0)[0]),
    )
    add('en', DUCKLING_EN, ['this past weekend'], _w(t, 1, 5, 7))
    add('en', DUCKLING_EN, ['yesterday evening'], _d(t - one))
    add('en', DUCKLING_EN, ['early March'], _m(_latest(t, 3), 3, 1, 11))
    add('en', DUCKLING_EN, ['mid March'], _m(_latest(t, 3, 11), 3, 11, 21))
    add('en', DUCKLING_EN, ['late March'], _m(_latest(t, 3, 21), 3, 21))
    add('en', DUCKLING_EN, ['in March'], _m(_latest(t, 3), 3))
    add('en', DUCKLING_EN, ['on the 15th'], _latest_day(t, 15))
    add('en', DUCKLING_EN, ['the 1st'], _latest_day(t, 1))
    add('en', DUCKLING_EN, ['on the first'], _latest_day(t, 1))
    add(
        'en',
        DUCKLING_EN,
        ['the 15th of february', '15 of february', 'february the 15th', 'february 15', '15th february'],
        _d(date(_latest(t, 2, 15), 2, 15)),
    )
    add('en', DUCKLING_EN, ['the 1st of march', 'first of march', 'march first'], _d(date(_latest(t, 3, 1), 3, 1)))
    add('en', DUCKLING_EN, ['march 3'], _d(date(_latest(t, 3, 3), 3, 3)))
    add('en', DUCKLING_EN, ['march 3 2015', 'march 3rd 2015', '2015-03-03'], _d(date(2015, 3, 3)))
    add('en', DUCKLING_EN, ['April 14, 2015'], _d(date(2015, 4, 14)))
    add('en', DUCKLING_EN, ['October 2014'], _m(2014, 10))
    add('en', DUCKLING_EN, ['last day of october 2015'], _d(date(2015, 10, 31)), _m(2015, 10, 21))
    add('en', DUCKLING_EN, ['third day of october'], _d(date(_latest(t, 10, 3), 10, 3)))
    # English: chrono's tests
    add('en', CHRONO_EN, ['this week'], _w(t, 0), this_week)
    add('en', CHRONO_EN, ['this month'], _m(y, t.month))
    add('en', CHRONO_EN, ['this year'], (date(y, 1, 1), date(y + 1, 1, 1)))
    add('en', CHRONO_EN, ['end of the month', 'end of month'], _m(y, t.month, 21))
    add(
        'en', CHRONO_EN, ['last day of the month', 'last day of month'], _d(_m(y, t.month)[1] - one), _m(y, t.month, 21)
    )
    add('en', CHRONO_EN, ['last week'], last_week)
    add('en', CHRONO_EN, ['last month', 'lastmonth'], month_ago(1))
    add('en', CHRONO_EN, ['past week'], last_week, _rolling(t, 7))
    # English: words that are no time (Duckling's negative corpus, and ours)
    add('en', DUCKLING_EN, ['laughing out loud', '1 adult', 'we are separated', '25', 'this is the one', 'in 61'])
    add('en', DUCKLING_EN, ['this one', 'this past one', 'at single', 'at a couple of', 'at a few', 'at dozens'])
    add('en', DUCKLING_EN, ['Rat 6', 'rat 6', '3 30', 'three twenty', 'at 650.650.6500', 'two sixty a m'])
    add(
        'en',
        OURS,
        [
            'the March release codename', 'you may need the deploy key', 'the second retry',
            'early stopping in training',
            'mid-size clusters', 'the end of the pipeline', 'start of the script', 'late binding in Python',
            'the 2nd floor printer', 'the 3rd attempt failed', 'weekend on-call rota', 'doing it early may help',
            'the start may be delayed', 'the 21st century', 'a long week', 'the end of an era', 'Tuesday standup',
            'week numbers in ISO 8601', 'the monthly report', 'early access program', 'sun and moon',
            'the Mar tag', 'end-of-life date', 'May I see the budget', 'the last day of school',
        ],
    )  # fmt: skip
    # Chinese: Duckling's corpus and chrono's tests
    add('zh', DUCKLING_ZH, ['今天', '今日'], _d(t))
    add('zh', DUCKLING_ZH, ['昨天', '昨日'], _d(t - one))
    add('zh', DUCKLING_ZH, ['前天'], _d(t - 2 * one))
    add('zh', DUCKLING_ZH, ['上周日', '上星期天', '上礼拜天', '上週日', '上禮拜天', '上禮拜日'], sunday_last)
    add('zh', DUCKLING_ZH, ['上周二', '上礼拜二', '上週二', '上禮拜二', '上星期二'], tuesday_last)
    add('zh', DUCKLING_ZH, ['三月一号', '三月一日', '三月一號'], _d(date(_latest(t, 3, 1), 3, 1)))
    add('zh', DUCKLING_ZH, ['2015年3月3号', '2015年三月三号', '2015年3月三號', '2015-03-03'], _d(date(2015, 3, 3)))
    add('zh', DUCKLING_ZH, ['2月15号', '二月十五号', '2月15號', '二月十五號'], _d(date(_latest(t, 2, 15), 2, 15)))
    add('zh', DUCKLING_ZH, ['这周', '这礼拜', '這週', '這禮拜'], _w(t, 0), this_week)
    add('zh', DUCKLING_ZH, ['上周', '上週', '上個星期', '上個礼拜', '上個禮拜'], last_week)
    add('zh', DUCKLING_ZH, ['上月', '上个月', '上個月'], month_ago(1))
    add('zh', DUCKLING_ZH, ['3月', '3月份', '三月'], _m(_latest(t, 3), 3))
    add('zh', DUCKLING_ZH, ['去年', '上年'], (date(y - 1, 1, 1), date(y, 1, 1)))
    add('zh', DUCKLING_ZH, ['今年'], (date(y, 1, 1), date(y + 1, 1, 1)))
    add('zh', DUCKLING_ZH, ['三月頭'], _m(_latest(t, 3), 3, 1, 11))
    add('zh', DUCKLING_ZH, ['五月中'], _m(_latest(t, 5, 11), 5, 11, 21))
    add('zh', DUCKLING_ZH, ['六月尾'], _m(_latest(t, 6, 21), 6, 21))
    add('zh', DUCKLING_ZH, ['月尾'], _m(y, t.month, 21), _m(*_back_month(t, 1), 21))
    add('zh', DUCKLING_ZH, ['2017年頭'], (date(2017, 1, 1), date(2017, 4, 1)))
    add('zh', DUCKLING_ZH, ['今年年尾', '年尾'], (date(y, 9, 1), date(y + 1, 1, 1)))
    add('zh', DUCKLING_ZH, ['兩星期前', '兩個禮拜前'], *weeks_ago(2))
    add('zh', DUCKLING_ZH, ['兩個月前'], month_ago(2))
    add('zh', CHRONO_ZH, ['3天前'], _d(t - 3 * one))
    add('zh', CHRONO_ZH, ['2星期前'], *weeks_ago(2))
    add(
        'zh',
        OURS,
        ['周末加班规定', '18号线怎么走', '3号楼的会议室', '月报模板', '日报怎么写', '年度预算', '生日快乐',
         '星期几开会', '第3日的议程', '年中无休', '日本语', '月亮的照片'],
    )  # fmt: skip
    # Japanese: Duckling's corpus and chrono's tests
    add('ja', DUCKLING_JA, ['3月25日'], _d(date(_latest(t, 3, 25), 3, 25)))
    add('ja', DUCKLING_JA, ['2021年3月25日に', '2021年三月25日に'], _d(date(2021, 3, 25)))
    add('ja', DUCKLING_JA, ['火曜日に', '火曜に', '火曜日は', '火曜日で'], last_tuesday)
    add('ja', DUCKLING_JA, ['25日に', '25日は', '25日で'], _latest_day(t, 25))
    add('ja', DUCKLING_JA, ['6月に', '6月中に', '6月の間に', '6月は', '六月に'], _m(_latest(t, 6), 6))
    add('ja', DUCKLING_JA, ['2021年3月に', '2021年三月に'], _m(2021, 3))
    add('ja', DUCKLING_JA, ['月曜', '月曜日'], _d(t - timedelta(days=t.weekday() or 7)))
    add('ja', DUCKLING_JA, ['先週', '前週'], last_week)
    add('ja', DUCKLING_JA, ['先月', '前月'], month_ago(1))
    add('ja', DUCKLING_JA, ['去年', '昨年'], (date(y - 1, 1, 1), date(y, 1, 1)))
    add('ja', DUCKLING_JA, ['今年'], (date(y, 1, 1), date(y + 1, 1, 1)))
    add('ja', DUCKLING_JA, ['今週'], _w(t, 0), this_week)
    add('ja', DUCKLING_JA, ['今月', '当月'], _m(y, t.month))
    add('ja', DUCKLING_JA, ['今日', '本日', 'きょう'], _d(t))
    add('ja', DUCKLING_JA, ['昨日', 'きのう'], _d(t - one))
    add('ja', DUCKLING_JA, ['過去7日間', 'この7日間'], _rolling(t, 7), (t - 7 * one, t))
    add('ja', DUCKLING_JA, ['去年8月19日'], _d(date(y - 1, 8, 19)))
    add('ja', DUCKLING_JA, ['6月初め', '6月頭'], _m(_latest(t, 6), 6, 1, 11))
    add('ja', DUCKLING_JA, ['7月末'], _m(_latest(t, 7, 21), 7, 21))
    add('ja', CHRONO_JA, ['一昨日', 'おととい', '二日前'], _d(t - 2 * one))
    add('ja', CHRONO_JA, ['先々週'], _w(t, 2))
    add('ja', CHRONO_JA, ['先週'], last_week)
    add('ja', CHRONO_JA, ['今週'], _w(t, 0), this_week)
    add('ja', CHRONO_JA, ['先月'], month_ago(1))
    add('ja', CHRONO_JA, ['今月'], _m(y, t.month))
    add('ja', CHRONO_JA, ['先々週の水曜日'], _d(_monday_of(t, 2) + 2 * one))
    add('ja', CHRONO_JA, ['先月の１日'], _d(date(*_back_month(t, 1), 1)))
    add('ja', CHRONO_JA, ['去年の１１月１日'], _d(date(y - 1, 11, 1)))
    add('ja', CHRONO_JA, ['一昨年の９月８日'], _d(date(y - 2, 9, 8)))
    add('ja', CHRONO_JA, ['去年11月11日'], _d(date(y - 1, 11, 11)))
    add('ja', CHRONO_JA, ['先々月'], month_ago(2))
    add('ja', CHRONO_JA, ['二ヶ月前'], month_ago(2))
    add('ja', CHRONO_JA, ['三年前'], (date(y - 3, 1, 1), date(y - 2, 1, 1)))
    add('ja', CHRONO_JA_CASUAL, ['今日感じたことを忘れずに'], _d(t))
    add('ja', CHRONO_JA_CASUAL, ['昨日の全国観測値ランキング'], _d(t - one))
    add('ja', DUCKLING_JA, ['三三時分', '月', '火', 'かよう'])
    add(
        'ja',
        OURS,
        ['3日間の研修', '年中無休の店', '週末のシフト表', '日本語の資料', '第3日の議題', '月次レポート', '毎日の運動',
         '2号機の点検', '曜日の設定'],
    )  # fmt: skip
    return [Phrasing(*row) for row in out]


def phrasing_report(today: date, misses: bool) -> Iterator[dict]:
    """Whether ``read_time`` names an accepted window for each phrasing, and none (the query left as it is) for
    the phrases that are no time: one record per language and ``all``, then (with ``misses``) one per miss."""
    try:
        from memsift.search.when import read_time
    except ImportError:
        yield {'phrasings': 'memsift.search.when.read_time: not in this memsift'}
        return
    listed = phrasings(today)
    right: list[bool] = []
    for phrase in listed:
        words = read_time(phrase.text, today)
        window = None if words.window is None else (words.window.start, words.window.end)
        if phrase.accepted:
            ok = window in phrase.accepted
        else:
            ok = window is None and not words.recent and words.text == phrase.text
        right.append(ok)
        if misses and not ok:
            yield {
                'phrasing_miss': phrase.text,
                'language': phrase.language,
                'source': phrase.source,
                'got': None if window is None else [day.isoformat() for day in window],
                'accepted': [[day.isoformat() for day in span] for span in phrase.accepted],
            }
    for language in (*LANGUAGES, 'all'):
        rows = [i for i, p in enumerate(listed) if language in ('all', p.language)]
        timed = [i for i in rows if listed[i].accepted]
        untimed = [i for i in rows if not listed[i].accepted]
        yield {
            'phrasings': language,
            'today': today.isoformat(),
            'timed': len(timed),
            'timed_right': _share([right[i] for i in timed]),
            'no_time': len(untimed),
            'no_time_untouched': _share([right[i] for i in untimed]),
            'accuracy': _share([right[i] for i in rows]),
            'sources': sorted({listed[i].source for i in rows}),
        }


# ---------------------------------------------------------------- the searches


def accepts(function: Callable, name: str) -> bool:
    """Whether ``function`` takes a keyword argument ``name`` (the time handling adds ``now``)."""
    return name in inspect.signature(function).parameters


def _hit(where: tuple, answers: frozenset) -> bool:
    """Whether a memory hit ``(path, start, end)`` overlaps an answer section, or a message hit is an answer."""
    if len(where) == 2:
        return where in answers
    path, start, end = where
    return any(a[0] == path and a[1] <= end and start <= a[2] for a in answers)


def _knows_time_words() -> bool:
    """Whether this memsift's config knows ``query.timeWords`` (an unknown key only warns)."""
    from memsift.config import load_config

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        load_config({'agents': {'defaults': {'memorySearch': {'query': {'timeWords': False}}}}})
    return not any(issubclass(w.category, memsift.ConfigWarning) for w in caught)


@functools.cache
def support() -> dict[str, bool]:
    """What this memsift takes: ``query.timeWords`` and ``now`` for memory, ``time_words`` and ``now`` for
    sessions (read on the first search, so ``--phrasings-only`` needs neither index nor store)."""
    memory_words = _knows_time_words()
    session_words = accepts(SessionStore.__init__, 'time_words')
    return {
        'memory_words': memory_words,
        'memory_time': memory_words and accepts(memsift.MemoryIndex.search, 'now'),
        'session_words': session_words,
        'session_time': session_words and accepts(SessionStore.search, 'now'),
    }


def memory_search(workspace: Path, store: Path, time_words: bool, now, results: int, min_score: float):
    """A ``MemoryIndex`` over ``workspace`` (keyword only; ``query.timeWords`` set where this memsift knows it) and
    its search (with ``now`` unless None) as a list of ``(path, start, end)``. The caller closes the index."""
    query = {'timeWords': time_words} if support()['memory_words'] else {}
    config = {
        'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': str(store)}, 'query': query}}}
    }
    index = memsift.MemoryIndex(workspace, config)
    index.sync()
    extra = {'now': now} if now is not None else {}

    def search(text: str) -> list[tuple]:
        found = index.search(text, max_results=results, min_score=min_score, **extra)
        if found.unavailable:
            sys.exit(f'memory_search failed: {found.error}')
        return [(h.path, h.start_line, h.end_line) for h in found.results]

    return index, search


def session_search(path: Path, time_words: bool, now):
    """A ``SessionStore`` on ``path`` (``time_words`` where this memsift takes it) and its search (with ``now``
    unless None) as a list of ``(session key, message id)``. The caller closes the store."""
    store = SessionStore(path, visibility='agent', **({'time_words': time_words} if support()['session_words'] else {}))
    extra = {'now': now} if now is not None else {}

    def search(text: str) -> list[tuple]:
        found = store.search(text, CALLER, limit=10, **extra)['results']
        return [(h['sessionKey'], h['messageId']) for h in found]

    return store, search


# ---------------------------------------------------------------- the report


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def evaluate(
    corpus_name: str, method: str, asked: Sequence[Question], lists: Sequence[list], baseline: Sequence[list] | None
) -> Iterator[dict]:
    """One record per language and ``all``: timed recall@5 overall and per kind, untimed recall@5, and (given the
    baseline's lists) the share of untimed questions whose list differs from it."""
    for language in (*LANGUAGES, 'all'):
        rows = [i for i, q in enumerate(asked) if language in ('all', q.language)]
        timed = [i for i in rows if asked[i].timed]
        untimed = [i for i in rows if not asked[i].timed]
        found = {i: any(_hit(w, asked[i].answers) for w in lists[i][:TOP]) for i in rows}
        kinds: dict[str, list[bool]] = {}
        for i in timed:
            kinds.setdefault(asked[i].kind, []).append(found[i])
        record = {
            'corpus': corpus_name,
            'method': method,
            'language': language,
            'questions': len(timed),
            'recall@5': _share([found[i] for i in timed]),
            'by_kind': {kind: [len(flags), _share(flags)] for kind, flags in sorted(kinds.items())},
            'untimed': len(untimed),
            'untimed_recall@5': _share([found[i] for i in untimed]),
        }
        if baseline is not None:
            record['untimed_changed'] = _share([lists[i] != baseline[i] for i in untimed])
        yield record


def main() -> None:
    """Build the data, run both methods on both corpora and print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seed', type=int, default=0, help='the data and questions (default 0)')
    parser.add_argument('--now', default=DEFAULT_NOW, help=f'the moment questions are asked (default {DEFAULT_NOW})')
    parser.add_argument('--days', type=int, default=204, help='days of data up to --now (default 204)')
    parser.add_argument('--results', type=int, default=10, help='memory_search max_results (default 10)')
    parser.add_argument('--min-score', type=float, default=0.0, help='memory_search min_score (default 0)')
    parser.add_argument(
        '--misses',
        action='store_true',
        help='a line per timed question the time method misses and per untimed question whose results it changed',
    )
    parser.add_argument(
        '--phrasings-only',
        action='store_true',
        help='only the third-party phrasings, read by the time-word parser (no data, no searches; instant)',
    )
    args = parser.parse_args()
    now = datetime.fromisoformat(args.now)
    summary: dict = {'summary': True}
    for record in phrasing_report(now.date(), args.misses):
        print(json.dumps(record, ensure_ascii=False), flush=True)
        if record.get('phrasings') == 'all':
            summary['phrasings'] = {
                'accuracy': record['accuracy'],
                'timed_right': record['timed_right'],
                'no_time_untouched': record['no_time_untouched'],
                'goal_met': record['accuracy'] >= 0.95 and record['no_time_untouched'] == 1,
            }
    if args.phrasings_only:
        print(json.dumps(summary), flush=True)
        return
    start = now.date() - timedelta(days=args.days - 1)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        notes, note_counts = write_notes(root / 'workspace', start, now, args.seed)
        # One store per corpus, searched by both methods in turn: two stores built from the same data can order
        # tied results differently, which would read as a change the time handling made.
        chats, chat_counts = write_sessions([root / 'sessions.sqlite'], start, now, args.seed)
        asked = {'memory': questions(notes, now, start, args.seed, 'memory')}
        asked['sessions'] = questions(chats, now, start, args.seed, 'sessions')
        print(
            json.dumps(
                {
                    'data': {
                        'seed': args.seed,
                        'now': now.isoformat(),
                        'from': start.isoformat(),
                        'notes': note_counts,
                        **chat_counts,
                        'questions': {
                            name: {'timed': sum(q.timed for q in qs), 'untimed': sum(not q.timed for q in qs)}
                            for name, qs in asked.items()
                        },
                    }
                },
                ensure_ascii=False,
            ),
            flush=True,
        )
        for corpus_name, corpus in (('memory', notes), ('sessions', chats)):
            supported = support()['memory_time' if corpus_name == 'memory' else 'session_time']
            if not supported:
                where = 'query.timeWords / MemoryIndex.search(now=)' if corpus_name == 'memory' else 'SessionStore'
                note = f'{where}: not in this memsift; the time method is skipped, the baseline runs alone'
                print(json.dumps({'corpus': corpus_name, 'note': note}), flush=True)
            # The baseline gets now as well (it must change nothing there); time words decide.
            when = now if supported else None
            methods = [('baseline', False), *([('time', True)] if supported else [])]
            results: dict[str, list[list]] = {}
            for method, words in methods:
                if corpus_name == 'memory':
                    store = root / 'memory.sqlite'
                    handle, search = memory_search(root / 'workspace', store, words, when, args.results, args.min_score)
                else:
                    handle, search = session_search(root / 'sessions.sqlite', words, when)
                try:
                    results[method] = [search(q.text) for q in asked[corpus_name]]
                finally:
                    handle.close()
                for record in evaluate(
                    corpus_name, method, asked[corpus_name], results[method], results.get('baseline') if words else None
                ):
                    print(json.dumps(record), flush=True)
                    if record['language'] == 'all':
                        summary.setdefault(corpus_name, {})[method] = record['recall@5']
                        if 'untimed_changed' in record:
                            summary[corpus_name]['untimed_changed'] = record['untimed_changed']
            if 'time' in results and args.misses:
                for q, hits, before in zip(asked[corpus_name], results['time'], results['baseline']):
                    if not q.timed and hits != before:
                        changed = {'changed': corpus_name, 'language': q.language, 'kind': q.kind, 'question': q.text}
                        print(json.dumps(changed, ensure_ascii=False), flush=True)
                    if q.timed and not any(_hit(w, q.answers) for w in hits[:TOP]):
                        top = [corpus.days[w[0]].isoformat() if w[0] in corpus.days else w[0] for w in hits[:TOP]]
                        wanted = sorted({corpus.days[a[0]].isoformat() for a in q.answers})
                        miss = {'miss': corpus_name, 'language': q.language, 'kind': q.kind, 'question': q.text}
                        print(json.dumps({**miss, 'answers': wanted, 'top5': top}, ensure_ascii=False), flush=True)
    for corpus_name in ('memory', 'sessions'):
        got = summary.get(corpus_name, {})
        if 'time' in got:
            got['gain'] = round(got['time'] - got['baseline'], 4)
            got['goal_met'] = got['time'] >= 0.9 and got['gain'] >= 0.3 and got['untimed_changed'] == 0
    summary['goal'] = (
        'time recall@5 >= 0.9 and >= baseline + 0.3; untimed_changed == 0; phrasings accuracy >= 0.95 with every '
        'phrase that is no time left untouched'
    )
    summary['seconds'] = round(time.perf_counter() - began, 1)
    print(json.dumps(summary), flush=True)


if __name__ == '__main__':
    main()
