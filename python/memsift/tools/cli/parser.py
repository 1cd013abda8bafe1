"""The ``memsift`` command's arguments: every command, option and help text, each shared option declared once.

>>> args = build_parser().parse_args(['search', 'deploy checklist', '--max-results', '3', '--json'])
>>> args.command, args.query, args.max_results, args.json, args.agent
('search', 'deploy checklist', 3, True, None)
>>> build_parser().parse_args(['sessions', 'history', 'agent:main:main', '--as', 'agent:main:chat']).caller
'agent:main:chat'
>>> args = build_parser().parse_args(['write', '-', '--path', 'memory/projects/deploy.md'])
>>> args.text, args.path, build_parser().parse_args(['mcp', '--allow-write']).allow_write
('-', 'memory/projects/deploy.md', True)
>>> args = build_parser().parse_args(['search', 'deploy', '--since', '7d', '--path', 'memory', '--path', 'notes/*.md'])
>>> args.since, args.until, args.paths, args.tags
('7d', None, ['memory', 'notes/*.md'], None)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeAlias

    Commands: TypeAlias = 'argparse._SubParsersAction[Parser]'

__all__ = ['MCP_TOKEN_ENV', 'build_parser']

MCP_TOKEN_ENV = 'MEMSIFT_MCP_TOKEN'
"""The environment variable ``memsift mcp --http`` reads its bearer token from by default."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, at the terminal's width found without ``shutil``: argparse imports it (and with it
    the compression modules, 2 ms) for every option added, to size help it mostly never prints."""

    def __init__(self, prog: str, **options: Any) -> None:
        if options.get('width') is None:
            stdout = sys.__stdout__
            try:
                columns = int(os.environ.get('COLUMNS') or os.get_terminal_size(stdout.fileno()).columns)  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):  # no stdout, not a terminal, COLUMNS not a number
                columns = 80  # shutil.get_terminal_size's fallback
            options['width'] = columns - 2
        super().__init__(prog, **options)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` with :class:`_Formatter` (its subcommands' parsers too)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        options.setdefault('formatter_class', _Formatter)
        super().__init__(*args, **options)


def common_options(
    agent_default: str | None = None, agent_help: str = "agent id (default: the config's default agent, else main)"
) -> Parser:
    """The options every command takes, as a parent parser."""
    common = Parser(add_help=False)
    common.add_argument('--workspace', metavar='DIR', help='agent workspace (default: from the config, else .)')
    common.add_argument(
        '--config',
        metavar='FILE',
        help='OpenClaw config file (JSON5; default: $OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json if present)',
    )
    common.add_argument('--agent', metavar='ID', default=agent_default, help=agent_help)
    common.add_argument('--store', metavar='PATH', help='index database file (overrides store.path)')
    common.add_argument('--json', action='store_true', help='print JSON on stdout')
    return common


def add_sessions_db(parser: Parser) -> None:
    """``--sessions-db``, for each command that opens the session store (sessions, migrate, mcp).

    A function rather than a parent parser, so that each command's help lists it where it always did (after
    migrate's ``--dsn``, mcp's ``--deadline``, and the sessions commands' common options)."""
    parser.add_argument(
        '--sessions-db', metavar='PATH', help='session database (default: ~/.memsift/agents/{agent}/sessions.sqlite)'
    )


def add_time_filters(parser: Parser) -> None:
    """``--since``, ``--until`` and ``--now``, for the commands that search (``search``, ``sessions search``)."""
    span = 'an ISO date (2026-11-01) or a span back from today (7d, 2w, 3m, 1y)'
    parser.add_argument('--since', metavar='WHEN', help=f'only material of this day or later: {span}')
    parser.add_argument('--until', metavar='WHEN', help=f'only material of this day or earlier: {span}')
    parser.add_argument(
        '--now',
        type=_moment,
        metavar='ISO-DATETIME',
        help='read --since/--until spans and time words in the query against this moment, not now (for replays)',
    )


def _moment(text: str) -> datetime:
    """``--now``'s value: an ISO date or date-time (naive: local time)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not an ISO date-time (2026-11-20T10:00): {text!r}') from None


def _version() -> str:
    """The installed version: the Rust core's, which is Cargo.toml's and the wheel's."""
    from memsift._core import __version__

    return str(__version__)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``memsift`` parser: one subcommand per command, ``sessions`` with its own subcommands.

    When ``argv`` starts with a command, only that command is built: the others' options cost a process that never
    reads them milliseconds (argparse looks up a translation for each help text), a tenth of a quick search's time.
    """
    parser = Parser(prog='memsift', description='Fast, CJK-aware memory search for AI agents.')
    parser.add_argument('--version', action='version', version=f'memsift {_version()}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND', parser_class=Parser)
    named = argv[0] if argv and argv[0] in _COMMANDS else None
    common = common_options()
    for name, add in _COMMANDS.items():
        if named in (None, name):
            add(commands, common)
    return parser


def _add_index(commands: Commands, common: Parser) -> None:
    index = commands.add_parser('index', parents=[common], help='index the workspace (incremental)')
    index.add_argument('--force', action='store_true', help='re-chunk and re-embed every file')


def _add_search(commands: Commands, common: Parser) -> None:
    search = commands.add_parser('search', parents=[common], help='search memory like memory_search')
    search.add_argument('query', nargs='?', help='what to look for (any language, or a file name)')
    search.add_argument('--query', dest='query_option', metavar='TEXT', help='the query, as an option (wins)')
    search.add_argument('--max-results', type=int, metavar='N', help='results to return (default 6)')
    search.add_argument('--min-score', type=float, metavar='X', help='minimum score in [0, 1] (default 0.35)')
    search.add_argument('--no-sync', action='store_true', help='answer from the index as it is, without syncing')
    search.add_argument('--explain', action='store_true', help='show how each result was scored, and what was cut')
    add_time_filters(search)
    search.add_argument(
        '--path',
        dest='paths',
        action='append',
        metavar='GLOB',
        help='only files matching this workspace-relative glob (memory/2026-11-*.md, projects/**, or a folder); '
        'repeat for more',
    )
    search.add_argument(
        '--tag',
        dest='tags',
        action='append',
        metavar='TAG',
        help='only notes whose front-matter tags include this one; repeat for more (any of them)',
    )


def _add_status(commands: Commands, common: Parser) -> None:
    status = commands.add_parser('status', parents=[common], help='show index state')
    status.add_argument('--deep', action='store_true', help='also check index consistency and probe the provider')
    status.add_argument('--index', action='store_true', help='sync the index first (implies --deep)')
    status.add_argument(
        '--fix', action='store_true', help='rebuild the index from the memory files when the deep check finds it off'
    )


def _add_reset(commands: Commands, common: Parser) -> None:
    reset = commands.add_parser(
        'reset', parents=[common], help="empty the agent's memory index (files and transcripts stay; index rebuilds it)"
    )
    reset.add_argument('--yes', action='store_true', help='do not ask (required without a terminal)')


def _add_forget(commands: Commands, common: Parser) -> None:
    forget = commands.add_parser(
        'forget', parents=[common], help="forget sessions: their messages leave memsift's store for good"
    )
    forget.add_argument(
        '--session', dest='sessions', action='append', required=True, metavar='KEY_OR_ID', help='repeat for more'
    )
    forget.add_argument('--dry-run', action='store_true', help='say what would be forgotten, forget nothing')
    add_sessions_db(forget)


def _add_get(commands: Commands, common: Parser) -> None:
    get = commands.add_parser('get', parents=[common], help='print lines of an indexed memory file')
    get.add_argument('path', help='workspace-relative path, as search results give it')
    get.add_argument('--from', dest='from_line', type=int, metavar='N', help='first line (1-based)')
    get.add_argument('--lines', type=int, metavar='N', help='number of lines')


def _add_write(commands: Commands, common: Parser) -> None:
    write = commands.add_parser(
        'write',
        parents=[common],
        help="append a note to today's memory file (memory/YYYY-MM-DD.md) or --path, then index it",
    )
    write.add_argument('text', help='the note (Markdown, at most 20,000 characters); - reads it from stdin')
    write.add_argument(
        '--path', metavar='FILE', help='a Markdown file under memory/, e.g. memory/projects/deploy.md (default: today)'
    )


def _add_watch(commands: Commands, common: Parser) -> None:
    commands.add_parser('watch', parents=[common], help='index, then re-index memory files as they change')


def _add_compact(commands: Commands, common: Parser) -> None:
    compact = commands.add_parser(
        'compact', parents=[common], help='give disk back: prune the embedding cache, merge the index, vacuum'
    )
    compact.add_argument(
        '--cache-days',
        type=float,
        default=30.0,
        metavar='N',
        help='keep cache rows written in the last N days even for text no note holds any more (default 30)',
    )


def _add_eval(commands: Commands, common: Parser) -> None:
    evaluate = commands.add_parser(
        'eval',
        parents=[common],
        help='measure how well search finds your own notes: keyword-only vs hybrid (vs reranked)',
        description='Known-item probes from the indexed notes (run `memsift index` first), searched keyword-only, '
        'hybrid and hybrid + rerank: hit@1, hit@5, MRR@10 and the median time of each.',
    )
    evaluate.add_argument('--probes', type=int, default=200, metavar='N', help='at most N probes (default 200)')
    evaluate.add_argument('--seed', type=int, default=0, metavar='S', help='which probes (default 0)')
    # The index as it is: no sync on the query path (a sync could re-embed the whole workspace).
    evaluate.set_defaults(no_sync=True)


def _add_migrate(commands: Commands, common: Parser) -> None:
    migrate = commands.add_parser(
        'migrate',
        parents=[common],
        help="copy the agent's memory and sessions between SQLite and PostgreSQL, then verify",
        description='Copies the memory store (store.path) and the session store into the PostgreSQL database '
        '(--to postgres) or back (--to sqlite), file by file and session by session: run it again to resume. '
        'Verified by counts and sha256 digests of both sides; exit status 1 when they differ.',
    )
    migrate.add_argument('--to', choices=('postgres', 'sqlite'), required=True, help='where the stores go')
    migrate.add_argument(
        '--dsn',
        metavar='DSN',
        help='the database (default: store.dsn, else $MEMSIFT_PG_DSN, which keeps the '
        'password out of the process list)',
    )
    add_sessions_db(migrate)


def _add_sessions(commands: Commands, common: Parser) -> None:
    sessions_common = Parser(add_help=False, parents=[common])
    add_sessions_db(sessions_common)
    sessions_common.add_argument(
        '--as',
        dest='caller',
        metavar='KEY',
        help="calling session; visibility starts there (default: the agent's main session)",
    )
    sessions = commands.add_parser('sessions', help='session transcripts: import, search, history')
    session_commands = sessions.add_subparsers(dest='sessions_command', required=True, metavar='COMMAND')
    imported = session_commands.add_parser('import', parents=[sessions_common], help='import an OpenClaw JSONL file')
    imported.add_argument('path', help='transcript file (.jsonl)')
    imported.add_argument('--key', help='session key (default: agent:{agent}:<file stem>)')
    imported.add_argument('--spawned-by', metavar='KEY', help='session that spawned this one')
    found = session_commands.add_parser('search', parents=[sessions_common], help='search transcripts')
    found.add_argument('query', help='words or a question (any language)')
    found.add_argument('--session', metavar='KEY', help='only this session')
    found.add_argument('--limit', type=int, default=10, metavar='N', help='results (default 10, at most 25)')
    add_time_filters(found)
    session_commands.add_parser(
        'status', parents=[sessions_common], help='sessions, indexed messages, search mode and message vectors'
    )
    history = session_commands.add_parser('history', parents=[sessions_common], help="print a session's messages")
    history.add_argument('key', help='session key or session id')
    history.add_argument('--limit', type=int, default=50, metavar='N', help='last N messages (default 50)')
    history.add_argument('--include-tools', action='store_true', help='include tool results')


def _add_mcp(commands: Commands, common: Parser) -> None:
    # Its own --agent default (None): with --openclaw, no --agent means OpenClaw's default agent.
    mcp_common = common_options(None, "agent id (default: main; with --openclaw, OpenClaw's default agent)")
    mcp = commands.add_parser(
        'mcp',
        parents=[mcp_common],
        help='serve the memory tools over MCP (stdio or HTTP)',
        description='Serve memory_search, memory_get, sessions_search and sessions_history '
        'to MCP clients (and memory_write with --allow-write); stdio by default.',
    )
    mcp.add_argument('--http', type=int, metavar='PORT', help='serve streamable HTTP on this port instead of stdio')
    mcp.add_argument('--host', default='127.0.0.1', help='HTTP address to bind (default 127.0.0.1)')
    mcp.add_argument(
        '--token-env',
        metavar='NAME',
        help='environment variable holding the bearer token HTTP clients must send (default: '
        f'{MCP_TOKEN_ENV} when set)',
    )
    mcp.add_argument(
        '--openclaw',
        action='store_true',
        help="serve an agent of the user's OpenClaw setup (--agent, default: OpenClaw's default agent)",
    )
    mcp.add_argument(
        '--allow-write',
        action='store_true',
        help='also serve memory_write, which appends notes to Markdown files under memory/ (default: read-only)',
    )
    mcp.add_argument(
        '--deadline',
        type=float,
        metavar='SECONDS',
        help='longest a tool call may take before answering with what it has (default 15)',
    )
    add_sessions_db(mcp)


def _add_openclaw(commands: Commands, common: Parser) -> None:
    openclaw = commands.add_parser('openclaw', help='memsift in OpenClaw 2.x: its memory plugin')
    openclaw_commands = openclaw.add_subparsers(dest='openclaw_command', required=True, metavar='COMMAND')
    openclaw_commands.add_parser(
        'plugin-path',
        help='print the folder of memsift\'s OpenClaw memory plugin: openclaw plugins install "$(memsift openclaw '
        'plugin-path)" --force --accept-capabilities',
    )


_COMMANDS: dict[str, Callable[[Commands, Parser], None]] = {
    'index': _add_index,
    'search': _add_search,
    'reset': _add_reset,
    'forget': _add_forget,
    'status': _add_status,
    'get': _add_get,
    'write': _add_write,
    'watch': _add_watch,
    'compact': _add_compact,
    'eval': _add_eval,
    'migrate': _add_migrate,
    'sessions': _add_sessions,
    'mcp': _add_mcp,
    'openclaw': _add_openclaw,
}
"""Each command and what adds it, in the order ``memsift --help`` lists them."""
