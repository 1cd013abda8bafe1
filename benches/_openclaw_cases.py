"""The cases ``benches/openclaw_diff.py`` runs through the real OpenClaw 2026.9.6 and through memsift, and that
``tests/surfaces/test_openclaw2_parity.py`` replays on memsift against OpenClaw's pinned answers (no npm needed).

Everything here is plain data and small helpers, so the bench and the test build the same workspaces and judge the
answers the same way:

- :func:`ranking_workspace`: a year of daily notes dated back from ``today`` (so temporal decay matters), a
  ``MEMORY.md`` with entries and ``<!-- importance: N -->`` annotations, a ``USER.md``, and a long checklist for
  ``memory_get``'s window. :data:`QUERIES` are questions about it with their known right answers.
- :data:`TOOL_CALLS`: the ``memory_search`` corpora and ``memory_get`` windows and errors whose shapes are compared.
- :func:`config_workspace` and :data:`CONFIGS`: the configs whose resolution (agent, workspace, files indexed,
  errors) is compared.

Dated paths change with the day the bench runs, so answers are pinned with symbolic names: ``memory/<today-20d>.md``
is the note written 20 days before the run (:meth:`Workspace.symbolic`, :meth:`Workspace.real`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    'ALLOWED_EXTRA_KEYS',
    'CONFIGS',
    'QUERIES',
    'SHAPE_FLAGS',
    'TOOL_CALLS',
    'ConfigCase',
    'Query',
    'ToolCall',
    'Workspace',
    'call_tools',
    'compare_shapes',
    'config_workspace',
    'is_right',
    'normalize_answer',
    'ranking_workspace',
    'shape',
    'two_x_config',
]

# ---------------------------------------------------------------- the ranking workspace

MEMORY_MD = """\
# Long-term memory

- The office Wi-Fi password is kept in the 1Password vault "Office".
- VPN gateway (staging): vpn-a.example. <!-- importance: 2 -->
- The production VPN gateway for every office laptop is vpn-b.example. <!-- importance: 9 -->
- Deploy target is hetzner-fsn1. <!-- importance: 3 -->

## Decisions

We decided to use PostgreSQL for the billing service.
It replaced the old MySQL cluster.
"""

USER_MD = """\
# User

- Preferred name: Sam (not Samuel).
- I live in Lisbon; my timezone is Europe/Lisbon. <!-- importance: 8 -->
- Prefers concise progress updates.
"""

# Days before today -> the lines of that day's note (under a "# YYYY-MM-DD" heading). Days not listed here but on
# the fortnightly grid get a filler line that no query matches.
FACTS: dict[int, list[str]] = {
    300: ['Production database host is db-alpha.internal (the first cluster).'],
    250: ['Changed the office Wi-Fi password today; the new one went into the vault.'],
    200: ['On-call rotation: the on-call rotation switches on Fridays; rotation handoff at noon.'],
    150: ['Billing service moved to PostgreSQL; billing cron jobs moved too.'],
    120: ['Production database host moved to db-beta.internal after the disk failure.'],
    100: ['Deploys happen on Mondays, right after the planning call. Deploys happen before lunch.'],
    90: ['Incident INC-4821: the payment webhook retried 4,000 times; fixed the idempotency key.'],
    60: ['Nightly backup of the wiki now goes to the NAS at 02:00 (backup job: wiki-nas).'],
    45: ['数据库迁移计划：周五之前完成账单服务的切换。'],
    30: ['Billing latency dashboard lives in Grafana under Payments / p99.'],
    20: ['Production database host is now db-gamma.internal; the migration finished today.'],
    10: ['From now on deploys happen on Thursdays after the release review.'],
    5: ["Scheduled the vendor call in the client's timezone (PST)."],
    3: ['On-call rotation moves to Wednesdays.'],
}
FILLER = [
    'Standup: walked the sprint board, nothing blocked.',
    'Paired on the flaky UI test; rerun was green.',
    'Read through the quarterly planning doc.',
    'Cleaned up stale branches and closed old tickets.',
]
GRID_DAYS = range(364, -1, -14)  # a note every two weeks for a year, plus the FACTS days
CHECKLIST = 'memory/checklist.md'
CHECKLIST_LINES = 150


@dataclass
class Workspace:
    """A built workspace: its folder and the dated notes' symbolic names (``memory/<today-20d>.md``)."""

    root: Path
    today: date
    dated: dict[str, str] = field(default_factory=dict)
    """Symbolic path -> real workspace-relative path."""

    def real(self, symbolic: str) -> str:
        return self.dated.get(symbolic, symbolic)

    def symbolic(self, path: str) -> str:
        """A workspace-relative path with a dated note's date replaced by its age (``memory/<today-20d>.md``)."""
        match = re.fullmatch(r'memory/(\d{4}-\d{2}-\d{2})\.md', path)
        if match is None:
            return path
        age = (self.today - date.fromisoformat(match[1])).days
        return f'memory/<today-{age}d>.md'


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')


def ranking_workspace(root: Path, today: date | None = None) -> Workspace:
    """Write the ranking workspace into ``root`` (created): ``MEMORY.md``, ``USER.md``, dated notes from 364 days
    ago to today, the undated ``memory/checklist.md``."""
    today = today or date.today()
    ws = Workspace(root, today)
    _write(root / 'MEMORY.md', MEMORY_MD)
    _write(root / 'USER.md', USER_MD)
    for n, age in enumerate(sorted(set(GRID_DAYS) | set(FACTS), reverse=True)):
        day = (today - timedelta(days=age)).isoformat()
        lines = FACTS.get(age, [FILLER[n % len(FILLER)]])
        real = f'memory/{day}.md'
        ws.dated[f'memory/<today-{age}d>.md'] = real
        _write(root / real, f'# {day}\n\n' + '\n'.join(lines) + '\n')
    _write(
        root / CHECKLIST,
        ''.join(f'Checklist item {i:03d}: verify the rack label.\n' for i in range(1, CHECKLIST_LINES + 1)),
    )
    return ws


@dataclass(frozen=True)
class Query:
    """A question with its known right answer: the top hit is right when its path is ``path`` and its snippet
    holds ``needle`` (any chunk of the file when ``None``) and not ``decoy``."""

    id: str
    text: str | None
    path: str
    needle: str | None
    decoy: str | None = None
    needs: str | None = None
    """A memsift feature still being added that this query needs (the test marks it xfail until it lands)."""
    why: str = ''
    age_query: int | None = None
    """The query is the date of the note this many days old (``text`` is then ``None``)."""

    def shown(self) -> str:
        """The query as reports and pins show it (a date query by the note's age)."""
        if self.age_query is not None:
            return f'<date of today-{self.age_query}d>'
        assert self.text is not None
        return self.text

    def query(self, ws: Workspace) -> str:
        if self.age_query is not None:
            return (ws.today - timedelta(days=self.age_query)).isoformat()
        assert self.text is not None
        return self.text


QUERIES: list[Query] = [
    Query(
        'db-host',
        'production database host',
        'memory/<today-20d>.md',
        'db-gamma',
        'db-beta',
        why='three notes name a host; the newest is right (decay)',
    ),
    Query(
        'deploy-day',
        'when do deploys happen',
        'memory/<today-10d>.md',
        'Thursdays',
        'Mondays',
        why='the current rule, not the Mondays of 100 days ago (which says "deploys happen" twice)',
    ),
    Query(
        'on-call',
        'on-call rotation',
        'memory/<today-3d>.md',
        'Wednesdays',
        'Fridays',
        why='the old note repeats the terms; decay must still put the new rule first',
    ),
    Query(
        'preferred-name',
        'preferred name',
        'USER.md',
        'Sam (not Samuel)',
        needs='USER.md indexing',
        why='a fact only USER.md holds',
    ),
    Query(
        'timezone',
        'my timezone',
        'USER.md',
        'Europe/Lisbon',
        'PST',
        needs='USER.md indexing',
        why="USER.md's timezone, not the client's in a note of 5 days ago",
    ),
    Query(
        'vpn-gateway',
        'VPN gateway',
        'MEMORY.md',
        'vpn-b.example',
        'vpn-a.example',
        needs='per-entry chunking and importance',
        why='two MEMORY.md entries match; the importance-9 one is right over the shorter importance-2 one',
    ),
    Query(
        'deploy-target',
        'deploy target',
        'MEMORY.md',
        'hetzner-fsn1',
        why='an evergreen MEMORY.md entry',
    ),
    Query('wifi', 'Wi-Fi password', 'MEMORY.md', '1Password vault', why='evergreen MEMORY.md over a stale note'),
    Query('incident', 'INC-4821', 'memory/<today-90d>.md', 'INC-4821', why='an exact identifier'),
    Query(
        'backups',
        'where do backups go',
        'memory/<today-60d>.md',
        'wiki-nas',
        why='the note says "backup": OpenClaw\'s unstemmed all-terms FTS misses it',
    ),
    Query(
        'cjk',
        '数据库迁移',
        'memory/<today-45d>.md',
        '数据库迁移',
        why='Chinese inside a longer run: unicode61 indexes the whole run as one token, so OpenClaw misses it',
    ),
    Query(
        'grafana',
        'Grafana dashboard for billing latency',
        'memory/<today-30d>.md',
        'Grafana',
        'cron',
        why='most terms in one note; "billing" alone is elsewhere too',
    ),
    Query(
        'date-path',
        None,
        'memory/<today-20d>.md',
        None,
        age_query=20,
        why="a note's date as the query: the file of that name",
    ),
]


def is_right(hit: Mapping[str, Any] | None, query: Query, ws: Workspace) -> bool:
    """Whether ``hit`` (a ``memory_search`` result, or ``None`` for no result) is the query's right answer."""
    if hit is None or hit.get('path') != ws.real(query.path):
        return False
    snippet = str(hit.get('snippet', ''))
    if query.needle is not None and query.needle not in snippet:
        return False
    return query.decoy is None or query.decoy not in snippet


# ---------------------------------------------------------------- tool answers (shapes)


@dataclass(frozen=True)
class ToolCall:
    id: str
    tool: str  # memory_search | memory_get
    args: dict[str, Any]


TOOL_CALLS: list[ToolCall] = [
    ToolCall('search-memory', 'memory_search', {'query': 'INC-4821'}),
    ToolCall('search-importance', 'memory_search', {'query': 'deploy target'}),
    ToolCall('search-none', 'memory_search', {'query': 'zeppelin'}),
    ToolCall('search-wiki', 'memory_search', {'query': 'INC-4821', 'corpus': 'wiki'}),
    ToolCall('search-all', 'memory_search', {'query': 'INC-4821', 'corpus': 'all'}),
    ToolCall('search-sessions', 'memory_search', {'query': 'INC-4821', 'corpus': 'sessions'}),
    ToolCall('search-unknown-corpus', 'memory_search', {'query': 'INC-4821', 'corpus': 'web'}),
    ToolCall('get-window', 'memory_get', {'path': 'MEMORY.md', 'from': 3, 'lines': 2}),
    ToolCall('get-default', 'memory_get', {'path': CHECKLIST}),
    ToolCall('get-tail', 'memory_get', {'path': CHECKLIST, 'from': 140, 'lines': 50}),
    ToolCall('get-past-end', 'memory_get', {'path': 'MEMORY.md', 'from': 500}),
    ToolCall('get-missing', 'memory_get', {'path': 'memory/missing.md'}),
    ToolCall('get-disallowed', 'memory_get', {'path': '../etc/passwd'}),
    ToolCall('get-not-markdown', 'memory_get', {'path': 'notes.txt'}),
    ToolCall('get-wiki', 'memory_get', {'path': 'MEMORY.md', 'corpus': 'wiki'}),
    ToolCall('get-all', 'memory_get', {'path': 'MEMORY.md', 'from': 3, 'lines': 2, 'corpus': 'all'}),
    ToolCall('get-all-missing', 'memory_get', {'path': 'memory/missing.md', 'corpus': 'all'}),
    ToolCall('get-unknown-corpus', 'memory_get', {'path': 'MEMORY.md', 'corpus': 'sessions'}),
]


def call_tools(tools: Any, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """One call on memsift's :class:`~memsift.tools.MemoryTools`, the arguments as the model sends them
    (``memory_get``'s ``from`` is ``from_`` in Python)."""
    args = dict(args)
    if tool == 'memory_get':
        return tools.memory_get(args.pop('path'), args.pop('from', None), args.pop('lines', None), **args)
    return tools.memory_search(**args)


SHAPE_FLAGS = (
    'status',
    'truncated',
    'nextFrom',
    'disabled',
    'unavailable',
    'error',
    'code',
    'action',
    'corpora',
    'warning',
    'from',
    'lines',
)
"""The fields whose values (not only presence) an answer's shape records."""


def shape(answer: Mapping[str, Any]) -> dict[str, Any]:
    """An answer's shape: its keys, the keys of its results (and their ``provenance``), and the values of
    :data:`SHAPE_FLAGS`. A thrown tool error (OpenClaw's unknown corpus) is ``{thrown: message}``."""
    if 'thrown' in answer:
        return {'thrown': answer['thrown']}
    results = answer.get('results')
    out: dict[str, Any] = {'keys': sorted(answer)}
    if isinstance(results, list):
        out['resultKeys'] = sorted({k for hit in results for k in hit})
        out['provenanceKeys'] = sorted({k for hit in results for k in hit.get('provenance', {})})
        out['results'] = len(results)
    for flag in SHAPE_FLAGS:
        if flag in answer:
            out[flag] = answer[flag]
    return out


ALLOWED_EXTRA_KEYS = {
    'mode': 'memsift names the mode that answered (fts-only, hybrid); OpenClaw omits it in keyword-only mode',
    'model': 'memsift names the model (fts-only without one); OpenClaw omits it without a provider',
    'reason': "memsift's own reason for refusing a path, beside OpenClaw's code and error",
}
"""Keys memsift adds to an answer OpenClaw gives without them, each with why (a deliberate difference)."""


def compare_shapes(want: Mapping[str, Any], got: Mapping[str, Any]) -> dict[str, Any]:
    """OpenClaw's shape ``want`` against memsift's ``got`` (both from :func:`shape`): ``verdict`` is ``same``,
    ``deliberate`` (only the differences :data:`ALLOWED_EXTRA_KEYS` explains, or memsift answering an error OpenClaw
    throws with the same text) or ``differs``; ``differences`` lists each."""
    hard: list[str] = []
    soft: list[str] = []
    if 'thrown' in want:
        expected = {'keys': ['error', 'status'], 'status': 'error', 'error': want['thrown']}
        if got == expected:
            soft.append('OpenClaw throws; memsift answers {status: "error", error} with the same text')
        else:
            hard.append(f'OpenClaw throws {want["thrown"]!r}; memsift answers {got}')
        return {'verdict': 'differs' if hard else 'deliberate', 'differences': hard + soft}
    if 'thrown' in got:
        return {'verdict': 'differs', 'differences': [f'memsift throws {got["thrown"]!r}']}
    for field_name in ('keys', 'resultKeys', 'provenanceKeys'):
        wanted, have = set(want.get(field_name, [])), set(got.get(field_name, []))
        where = '' if field_name == 'keys' else f' ({field_name})'
        hard += [f'missing {k}{where}' for k in sorted(wanted - have)]
        for k in sorted(have - wanted):
            (soft if field_name == 'keys' and k in ALLOWED_EXTRA_KEYS else hard).append(f'extra {k}{where}')
    for flag in SHAPE_FLAGS:
        if flag in want or flag in got:
            a, b = want.get(flag, '<absent>'), got.get(flag, '<absent>')
            if a != b:
                hard.append(f'{flag}: OpenClaw {a!r}, memsift {b!r}')
    if bool(want.get('results')) != bool(got.get('results')):
        hard.append(f'results: OpenClaw {want.get("results")}, memsift {got.get("results")}')
    verdict = 'differs' if hard else 'deliberate' if soft else 'same'
    return {'verdict': verdict, 'differences': hard + soft}


_VOLATILE = ('observedAt', 'managerMs', 'searchMs', 'toolMs', 'outsideSearchMs', 'embeddingBootstrap')


def normalize_answer(answer: Any, ws: Workspace) -> Any:
    """An answer with what changes between runs replaced: timings and ``observedAt`` by ``0``, scores rounded to 4
    places, the workspace's
    absolute path by ``<ws>``, dated note paths and their dates by their symbolic names (``<today-20d>``, also
    inside citations and snippets)."""
    if isinstance(answer, Mapping):
        return {k: _normalized(k, v, ws) for k, v in answer.items()}
    if isinstance(answer, list):
        return [normalize_answer(v, ws) for v in answer]
    if isinstance(answer, str):
        text = answer.replace(str(ws.root), '<ws>')
        for symbolic, real in ws.dated.items():
            text = text.replace(real, symbolic).replace(real[len('memory/') : -len('.md')], symbolic[7:-3])
        return text
    return answer


def _normalized(key: str, value: Any, ws: Workspace) -> Any:
    if key in _VOLATILE and isinstance(value, (int, float)):
        return 0
    if key in ('score', 'textScore') and isinstance(value, float):
        return round(value, 4)  # decay runs to the millisecond: the last digits change with the time of day
    return normalize_answer(value, ws)


# ---------------------------------------------------------------- config resolution


def two_x_config(search: Mapping[str, Any] | None = None, store: str | None = None, **root: Any) -> dict[str, Any]:
    """An OpenClaw 2.x config: ``memory.search`` (keyword-only unless ``search`` says otherwise), memsift's store
    under ``plugins.entries.memsift.config`` when ``store`` is given, and other top-level keys as given."""
    config: dict[str, Any] = {'memory': {'search': {'provider': 'none', **(search or {})}}, **root}
    if store is not None:
        config['plugins'] = {'entries': {'memsift': {'config': {'store': {'path': store}}}}}
    return config


def config_workspace(root: Path) -> dict[str, Path]:
    """The small workspaces of the config cases under ``root``: ``ws`` (root files, notes, ``DREAMS.md`` and a
    lowercase ``memory.md``, which 2.x does not index), ``ws-beta`` (a second agent's) and ``extra`` (a folder of
    extra paths: ``runbooks/**`` matches the case's pattern, ``other/`` and ``runbooks/.hidden/`` do not)."""
    ws, beta, extra = root / 'ws', root / 'ws-beta', root / 'extra'
    _write(ws / 'MEMORY.md', '# Facts\n- The router VLAN for lab hosts is 42.\n')
    _write(ws / 'USER.md', '# User\n- Prefers short answers.\n')
    _write(ws / 'memory.md', 'lowercase memory file: 2.x skips it\n')
    _write(ws / 'DREAMS.md', 'dreams are not indexed\n')
    _write(ws / 'memory' / '2026-09-01.md', '# 2026-09-01\n\nWorked on the router VLAN migration.\n')
    _write(ws / 'memory' / 'notes.md', '# Notes\n\nRandom undated note about the gateway.\n')
    _write(beta / 'MEMORY.md', '# Beta facts\n- Beta agent keeps its own router notes.\n')
    _write(extra / 'runbooks' / 'a.md', '# Runbook A\nrouter reboot\n')
    _write(extra / 'runbooks' / 'sub' / 'b.md', '# Runbook B\nrouter reset\n')
    _write(extra / 'runbooks' / '.hidden' / 'h.md', '# Hidden\nrouter secret\n')
    _write(extra / 'other' / 'o.md', '# Other\nrouter other\n')
    _write(extra / 'c.txt', 'router text\n')
    return {'ws': ws, 'ws-beta': beta, 'extra': extra}


@dataclass(frozen=True)
class ConfigCase:
    """One config: ``build(paths, store)`` gives the config dict (``store``: memsift's store path pattern);
    ``agent``: the ``--agent`` passed (``None``: none)."""

    id: str
    what: str
    build: Callable[[Mapping[str, Path], str], dict[str, Any]]
    agent: str | None = None


def _single(paths: Mapping[str, Path], own_store: str, **search: Any) -> dict[str, Any]:
    return two_x_config(search, own_store, agents={'entries': {'main': {'workspace': str(paths['ws'])}}})


def _multi(paths: Mapping[str, Path], store: str, explicit: bool) -> dict[str, Any]:
    agents: dict[str, Any] = {
        'entries': {'alpha': {'workspace': str(paths['ws'])}, 'beta': {'workspace': str(paths['ws-beta'])}}
    }
    if explicit:
        agents['ownership'] = 'explicit'
    return two_x_config(None, store, agents=agents)


def _legacy_beside(paths: Mapping[str, Path], store: str) -> dict[str, Any]:
    config = _single(paths, store)
    config['agents']['defaults'] = {'memorySearch': {'query': {'maxResults': 3}, 'extraPaths': ['../extra/other']}}
    return config


CONFIGS: list[ConfigCase] = [
    ConfigCase('single', 'one agent in agents.entries', build=lambda p, s: _single(p, s)),
    ConfigCase(
        'multi-explicit',
        'agents.entries alpha + beta, ownership explicit, no --agent',
        build=lambda p, s: _multi(p, s, True),
    ),
    ConfigCase(
        'multi-unmarked',
        'agents.entries alpha + beta, no ownership and no default, no --agent',
        build=lambda p, s: _multi(p, s, False),
    ),
    ConfigCase('unknown-agent', 'one agent, --agent nope', agent='nope', build=lambda p, s: _single(p, s)),
    ConfigCase(
        'legacy-beside',
        'agents.defaults.memorySearch beside memory.search',
        build=_legacy_beside,
    ),
    ConfigCase(
        'removed-keys',
        'memory.search with chunking, query.hybrid, store.path',
        build=lambda p, s: _single(
            p,
            s,
            chunking={'tokens': 200, 'overlap': 20},
            query={'hybrid': {'enabled': False}},
            store={'path': str(Path(s).parent / 'removed.sqlite')},
        ),
    ),
    ConfigCase(
        'extra-pattern',
        'extraPaths [{path: ../extra, pattern: runbooks/**/*.md}]',
        build=lambda p, s: _single(p, s, extraPaths=[{'path': '../extra', 'pattern': 'runbooks/**/*.md'}]),
    ),
    ConfigCase(
        'no-remember',
        'rememberAcrossConversations: false',
        build=lambda p, s: _single(p, s, rememberAcrossConversations=False),
    ),
    ConfigCase('disabled', 'memory.search.enabled: false', build=lambda p, s: _single(p, s, enabled=False)),
]
