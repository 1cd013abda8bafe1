"""The ``memsift`` command: index, search, status, get and watch an agent's memory.

Every command takes ``--workspace DIR`` (default: the agent's workspace from the config, else the current
folder), ``--config FILE`` (an OpenClaw JSON5 config), ``--agent ID``, ``--store PATH`` (overrides
``store.path``) and ``--json`` (machine-readable output on stdout). Errors go to stderr with exit status 1.

    memsift index --workspace ~/agent [--force]
    memsift search "deploy checklist" --max-results 3 --json
    memsift status --deep
    memsift get memory/2026-11-28.md --from 5 --lines 10
    memsift watch
    memsift eval --probes 200 --seed 0
    memsift sessions import ~/.openclaw/agents/main/sessions/abc.jsonl --key agent:main:main
    memsift sessions search "数据库迁移" --session agent:main:main --limit 5
    memsift sessions history agent:main:main --json
    memsift mcp [--http PORT] [--openclaw]
    memsift --version

``eval`` measures how well search finds the user's own notes, keyword-only against hybrid (and reranked), with
known-item probes made from the indexed notes (see :mod:`memsift.index.evaluate`); it evaluates the index as it is.

``sessions`` commands read ``--sessions-db`` (default ``~/.memsift/agents/{agent}/sessions.sqlite``) and act as the
agent's main session (``--as KEY`` to act as another), with the config's ``tools.sessions.visibility``.

``mcp`` serves the four memory tools to MCP clients (see :mod:`memsift.tools.mcp`): over stdin/stdout by default,
or over streamable HTTP on ``127.0.0.1:PORT/mcp`` with ``--http PORT``. ``--openclaw`` serves an agent of the
user's OpenClaw setup; a bearer token for HTTP is read from the environment variable ``--token-env`` names
(default ``MEMSIFT_MCP_TOKEN``), never from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift.config import MemoryConfig, load_config
from memsift.errors import ConfigError, MemsiftError
from memsift.index.memory_index import MemoryIndex

if TYPE_CHECKING:
    from memsift.index.sync import Progress, SyncReport

# Each command imports what only it needs (sessions, the agent tools, MCP, rich) when it runs: `memsift search`
# starts in well under 100 ms.

__all__ = ['main']

MCP_TOKEN_ENV = 'MEMSIFT_MCP_TOKEN'
"""The environment variable ``memsift mcp --http`` reads its bearer token from by default."""


def _common(
    agent_default: str | None = 'main', agent_help: str = 'agent id (default: main)'
) -> argparse.ArgumentParser:
    """The options every command takes."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--workspace', metavar='DIR', help='agent workspace (default: from the config, else .)')
    common.add_argument('--config', metavar='FILE', help='OpenClaw config file (JSON5)')
    common.add_argument('--agent', metavar='ID', default=agent_default, help=agent_help)
    common.add_argument('--store', metavar='PATH', help='index database file (overrides store.path)')
    common.add_argument('--json', action='store_true', help='print JSON on stdout')
    return common


def _version() -> str:
    """The installed version: the Rust core's, which is Cargo.toml's and the wheel's."""
    from memsift._core import __version__

    return str(__version__)


def _parser() -> argparse.ArgumentParser:
    common = _common()

    parser = argparse.ArgumentParser(prog='memsift', description='Fast, CJK-aware memory search for AI agents.')
    parser.add_argument('--version', action='version', version=f'memsift {_version()}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    index = commands.add_parser('index', parents=[common], help='index the workspace (incremental)')
    index.add_argument('--force', action='store_true', help='re-chunk and re-embed every file')
    search = commands.add_parser('search', parents=[common], help='search memory like memory_search')
    search.add_argument('query', help='what to look for (any language, or a file name)')
    search.add_argument('--max-results', type=int, metavar='N', help='results to return (default 6)')
    search.add_argument('--min-score', type=float, metavar='X', help='minimum score in [0, 1] (default 0.35)')
    search.add_argument('--no-sync', action='store_true', help='answer from the index as it is, without syncing')
    search.add_argument('--explain', action='store_true', help='show how each result was scored, and what was cut')
    status = commands.add_parser('status', parents=[common], help='show index state')
    status.add_argument('--deep', action='store_true', help='also check index consistency and probe the provider')
    get = commands.add_parser('get', parents=[common], help='print lines of an indexed memory file')
    get.add_argument('path', help='workspace-relative path, as search results give it')
    get.add_argument('--from', dest='from_line', type=int, metavar='N', help='first line (1-based)')
    get.add_argument('--lines', type=int, metavar='N', help='number of lines')
    commands.add_parser('watch', parents=[common], help='index, then re-index memory files as they change')
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

    sessions_common = argparse.ArgumentParser(add_help=False, parents=[common])
    sessions_common.add_argument(
        '--sessions-db', metavar='PATH', help='session database (default: ~/.memsift/agents/{agent}/sessions.sqlite)'
    )
    sessions_common.add_argument(
        '--as',
        dest='caller',
        metavar='KEY',
        help="calling session; visibility starts there (default: the agent's main session)",
    )
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
    migrate.add_argument(
        '--sessions-db', metavar='PATH', help='session database (default: ~/.memsift/agents/{agent}/sessions.sqlite)'
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
    session_commands.add_parser(
        'status', parents=[sessions_common], help='sessions, indexed messages, search mode and message vectors'
    )
    history = session_commands.add_parser('history', parents=[sessions_common], help="print a session's messages")
    history.add_argument('key', help='session key or session id')
    history.add_argument('--limit', type=int, default=50, metavar='N', help='last N messages (default 50)')
    history.add_argument('--include-tools', action='store_true', help='include tool results')

    # Its own --agent default (None): with --openclaw, no --agent means OpenClaw's default agent.
    mcp_common = _common(None, "agent id (default: main; with --openclaw, OpenClaw's default agent)")
    mcp = commands.add_parser(
        'mcp',
        parents=[mcp_common],
        help='serve the memory tools over MCP (stdio or HTTP)',
        description='Serve memory_search, memory_get, sessions_search and sessions_history '
        'to MCP clients; stdio by default.',
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
        '--deadline',
        type=float,
        metavar='SECONDS',
        help='longest a tool call may take before answering with what it has (default 15)',
    )
    mcp.add_argument(
        '--sessions-db', metavar='PATH', help='session database (default: ~/.memsift/agents/{agent}/sessions.sqlite)'
    )
    return parser


def _config(args: argparse.Namespace) -> MemoryConfig:
    config = load_config(args.config, args.agent)
    if args.store:
        config = dataclasses.replace(config, store=dataclasses.replace(config.store, path=str(Path(args.store))))
    return config


def _open(args: argparse.Namespace) -> MemoryIndex:
    config = _config(args)
    if getattr(args, 'no_sync', False):
        config = dataclasses.replace(config, sync=dataclasses.replace(config.sync, on_search=False))
    workspace = args.workspace or config.workspace or '.'
    return MemoryIndex(workspace, config, args.agent)


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


@contextmanager
def _progress(enabled: bool, index: MemoryIndex) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal (files done of all, time left, and chunks/s while a model embeds);
    nothing when output is piped or JSON."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn('indexing'),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn('files'),
        TimeRemainingColumn(),
        TextColumn('{task.fields[embedding]}'),
        TextColumn('{task.description}'),
        transient=True,
    ) as bar:
        task = bar.add_task('', total=None, embedding='')
        started, embedded_before = time.monotonic(), index.chunks_embedded

        def update(done: int, total: int, path: str) -> None:
            embedded = index.chunks_embedded - embedded_before
            rate = embedded / max(time.monotonic() - started, 1e-3)
            embedding = f'{embedded:,} chunks embedded, {rate:,.1f} chunks/s' if embedded else ''
            bar.update(task, completed=done, total=total, description=path[-40:], embedding=embedding)

        yield update


def _report_line(report: SyncReport) -> str:
    parts = [
        f'{len(report.added)} added',
        f'{len(report.updated)} updated',
        f'{len(report.removed)} removed',
        f'{report.unchanged} unchanged',
    ]
    if report.skipped:
        parts.append(f'{len(report.skipped)} skipped')
    return f'indexed: {", ".join(parts)} · {report.chunks_written} chunks written · {report.seconds:.2f} s'


def _index(args: argparse.Namespace) -> int:
    with _open(args) as index, _progress(not args.json, index) as progress:
        report = index.sync(force=args.force, progress=progress)
        if args.json:
            _print_json(report.to_dict())
        else:
            print(_report_line(report))
            for path, reason in report.skipped.items():
                print(f'  skipped {path}: {reason}')
    return 0


def _search(args: argparse.Namespace) -> int:
    with _open(args) as index:
        if not args.no_sync:
            index.sync()
        result = index.search(args.query, args.max_results, args.min_score, explain=args.explain)
    data = result.to_dict()
    if args.explain:
        data['debug']['cut'] = result.debug.get('cut', [])
    if args.json:
        _print_json(data)
        return 1 if result.unavailable else 0
    if result.unavailable:
        print(f'memsift: {result.error}\n  {result.action}', file=sys.stderr)
        return 1
    if not result.results:
        print('no results')
    for hit in result.results:
        print(f'{hit.score:.3f}  {hit.path}:{hit.start_line}-{hit.end_line}')
        snippet = ' '.join(hit.snippet.split())
        print(f'       {snippet[:200]}{"…" if len(snippet) > 200 else ""}')
        if hit.explain is not None:
            print(f'       {_explain_line(hit.explain)}')
    for cut in result.debug.get('cut', []) if args.explain else []:
        print(f'  cut  {cut["score"]:.3f}  {cut["path"]}:{cut["startLine"]}-{cut["endLine"]} ({cut["cut"]})')
    return 0


def _explain_line(why: dict[str, Any]) -> str:
    """One line of how a result was scored: legs, weights, merge, decay, path tier, MMR (and rerank) moves."""
    parts = [
        f'bm25 {why["bm25"]:.3f} → {why["bm25Normalized"]:.3f}',
        f'cosine {why["cosine"]:.3f}',
        f'weights {why["vectorWeight"]:.2f}/{why["textWeight"]:.2f}',
        f'merged {why["merged"]:.3f}',
        f'decay ×{why["decay"]:.3f} ({why["dateSource"]})',
    ]
    if why['pathTier'] or why['pathScore']:
        parts.append(f'path tier {why["pathTier"]}, path score {why["pathScore"]:.3f}')
    moves = f'#{why["positionBeforeMmr"]} before MMR'
    if 'positionBeforeRerank' in why:
        moves += f', #{why["positionBeforeRerank"]} before rerank'
    parts.append(f'{moves}, #{why["position"]} now')
    return ' · '.join(parts)


def _status(args: argparse.Namespace) -> int:
    with _open(args) as index:
        data = index.status(deep=args.deep)
    if args.json:
        _print_json(data)
        return 0
    vector = data['vector']
    lines = [
        ('Provider', f'{data["provider"]} (requested: {data["requestedProvider"]})'),
        ('Model', data['model']),
        ('Sources', ', '.join(data['sources'])),
        ('Extra paths', ', '.join(data['extraPaths']) or '-'),
        ('Indexed', f'{data["files"]} files · {data["chunks"]} chunks'),
        ('Dirty', 'yes' if data['dirty'] else 'no'),
        ('Store', data['store']['location'] if data['store']['backend'] == 'postgres' else data['dbPath']),
        ('Workspace', data['workspaceDir']),
        ('FTS', f'ready · {data["fts"]["docs"]} chunks · {data["fts"]["tokenizer"]}'),
        ('Vector', f'{vector["dims"]} dims · {vector["vectors"]} vectors' if vector['enabled'] else 'off (FTS-only)'),
        ('Embedding cache', f'{data["cache"]["entries"]} entries' if data['cache']['enabled'] else 'off'),
        ('Disk', _disk_line(data['disk'])),
        ('Rerank', _rerank_line(data['rerank'])),
        ('Index identity', data['identity']['status']),
    ]
    for name, value in lines:
        print(f'{name + ":":17}{value}')
    if data['skipped']:
        print(f'Skipped:         {len(data["skipped"])} files')
        for item in data['skipped']:
            print(f'  {item["path"]}: {item["reason"]}')
    for issue in data.get('issues', []):
        print(f'Issue:           {issue}')
    return 0


def _get(args: argparse.Namespace) -> int:
    with _open(args) as index:
        data = index.get(args.path, args.from_line, args.lines)
    if args.json:
        _print_json(data)
    else:
        print(data['text'])
        if data.get('truncated'):
            print(f'… (truncated; continue with --from {data["nextFrom"]})', file=sys.stderr)
    return 0


def _size(count: int | None) -> str:
    """Bytes in decimal units, as disk tools show them; ``?`` where SQLite could not tell."""
    if count is None:
        return '?'
    value, unit = float(count), 'B'
    for larger in ('KB', 'MB', 'GB'):
        if value < 1000:
            break
        value, unit = value / 1000, larger
    return f'{value:.0f} {unit}' if unit == 'B' else f'{value:.1f} {unit}'


def _disk_line(disk: dict[str, Any]) -> str:
    return (
        f'{_size(disk["total"])} (store {_size(disk["store"])}, of it cache {_size(disk["embeddingCache"])}; '
        f'keyword index {_size(disk["keywordIndex"])}; vectors {_size(disk["vectors"])})'
    )


def _rerank_line(rerank: dict[str, Any]) -> str:
    if not rerank['enabled']:
        return 'off'
    name = '/'.join(str(part) for part in (rerank['provider'], rerank['model']) if part)
    return f'{name} · top {rerank["topN"]}' + (f' · cannot run: {rerank["error"]}' if rerank['error'] else '')


def _compact(args: argparse.Namespace) -> int:
    with _open(args) as index:
        report = index.compact(cache_days=args.cache_days)
    if args.json:
        _print_json(report)
        return 0
    print(f'Before:          {_disk_line(report["before"])}')
    print(f'After:           {_disk_line(report["after"])}')
    print(f'Cache rows pruned: {report["cacheRowsPruned"]} · index segments merged: {report["segmentsMerged"]}')
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from memsift.migrate import migrate

    config = _config(args)
    bar = None
    if not args.json and sys.stderr.isatty():
        from rich.progress import Progress as Bar

        bar = Bar(transient=True)
    tasks: dict[str, Any] = {}

    def progress(what: str, done: int, total: int) -> None:
        if bar is not None:
            task = tasks.setdefault(what, bar.add_task(f'copying {what}', total=total))
            bar.update(task, completed=done, total=total)

    if bar is not None:
        bar.start()
    try:
        report = migrate(config, args.to, dsn=args.dsn, sessions_path=args.sessions_db, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    if args.json:
        _print_json(report)
        return 0 if report['verified'] else 1
    memory = report['memory']
    print(
        f'memory: {memory["target"]["files"]} files, {memory["target"]["chunks"]} chunks, '
        f'{memory["target"]["vectors"]} vectors ({memory["filesCopied"]} files copied, '
        f'{memory["filesAlreadyThere"]} already there) · {"verified" if memory["verified"] else "DIFFERENT"}'
    )
    if 'sessions' in report:
        sessions = report['sessions']
        print(
            f'sessions: {sessions["target"]["sessions"]} sessions, {sessions["target"]["events"]} events '
            f'({sessions["sessionsCopied"]} copied) · {"verified" if sessions["verified"] else "DIFFERENT"}'
        )
    if not report['verified']:
        print('memsift: the copy differs from its source; run migrate again to complete it', file=sys.stderr)
        return 1
    print(f'set store.backend to "{args.to}" to use the copy ({report["seconds"]} s)')
    return 0


def _eval(args: argparse.Namespace) -> int:
    from memsift.index.evaluate import evaluate_memory

    with _open(args) as index:
        report = evaluate_memory(index, probes=args.probes, seed=args.seed)
    if args.json:
        _print_json(report.to_dict())
        return 0
    reranker = f' · reranker {report.reranker}' if report.reranker else ''
    print(
        f'{len(report.probes)} probes from {report.files} of {report.indexed_files} files ({report.chunks} chunks) '
        f'· provider {report.provider}/{report.model}{reranker} · seed {report.seed}\n'
    )
    print(f'{"mode":15}{"hit@1":>8}{"hit@5":>8}{"MRR@10":>8}{"p50 ms":>9}')
    for score in report.modes:
        if score.ran:
            print(
                f'{score.mode:15}{score.hit_at_1:>8.3f}{score.hit_at_5:>8.3f}{score.mrr_at_10:>8.3f}'
                f'{score.p50_ms:>9.1f}'
            )
        else:
            print(f'{score.mode:15}  {score.note}')
    notes = [f'{score.mode}: {score.note}' for score in report.modes if score.ran and score.note]
    print('\n' + '\n'.join([*notes, report.verdict]))
    return 0


def _watch(args: argparse.Namespace) -> int:
    with _open(args) as index, _progress(not args.json, index) as progress:
        report = index.sync(progress=progress)
        print(json.dumps(report.to_dict()) if args.json else _report_line(report), flush=True)
        index.start_watching()
        if not args.json:
            print(f'watching {index.workspace} (Ctrl-C to stop)', file=sys.stderr, flush=True)
        generation = index.store.generation
        try:
            while True:
                time.sleep(0.25)
                if index.store.generation != generation:
                    generation = index.store.generation
                    status = index.status()
                    line = {
                        'event': 'synced',
                        'files': status['files'],
                        'chunks': status['chunks'],
                        'generation': generation,
                    }
                    print(
                        json.dumps(line) if args.json else f'synced: {line["files"]} files · {line["chunks"]} chunks',
                        flush=True,
                    )
        except KeyboardInterrupt:
            return 0


def _sessions(args: argparse.Namespace) -> int:
    from memsift.index.backend import sessions_target
    from memsift.sessions import Caller, SessionStore, main_session_key

    config = load_config(args.config, args.agent)
    caller = Caller(args.caller or main_session_key(args.agent))
    target, setting = (args.sessions_db, '--sessions-db') if args.sessions_db else sessions_target(config)
    with SessionStore.from_config(target, args.agent, config.session_tools, setting=setting) as store:
        if args.sessions_command == 'import':
            data = store.import_jsonl(
                args.path, args.key or f'agent:{args.agent}:{Path(args.path).stem}', spawned_by=args.spawned_by
            )
            store.reconcile()
            text = f'imported {data["events"]} events into {data["sessionKey"]} ({data["skipped"]} lines skipped)'
        elif args.sessions_command == 'search':
            data = store.search(args.query, caller, args.session, args.limit)
            text = (
                '\n'.join(
                    f'{h["score"]:.3f}{"~" if h.get("match") == "partial" else " "} {h["sessionKey"]}  {h["role"]}  '
                    f'{h["snippet"]}'
                    for h in data.get('results', [])
                )
                or 'no results'
            )
            if any(h.get('match') == 'partial' for h in data.get('results', [])):
                text += '\n(~: partial match, holding some of the words)'
        elif args.sessions_command == 'status':
            data = store.status()
            vectors = ', '.join(f'{v["messages"]} by {v["key"]}' for v in data['vectors']) or 'none'
            text = (
                f'{data["path"]}\n{data["sessions"]} sessions, {data["messages"]} indexed messages, search mode '
                f'{data["searchMode"]}{" (indexing)" if data["indexing"] else ""}\nmessage vectors: {vectors}'
            )
        else:
            data = store.history(args.key, caller, limit=args.limit, include_tools=args.include_tools)
            text = '\n'.join(f'[{m["role"]}] {m["content"]}' for m in data.get('messages', []))
    if args.json:
        _print_json(data)
    else:
        print(text)
        if data.get('warning'):
            print(data['warning'], file=sys.stderr)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from memsift.tools.agent import DEFAULT_DEADLINE_S, MemoryTools, from_openclaw
    from memsift.tools.mcp import serve_http, serve_stdio  # here: the MCP SDK is slow to import

    if args.deadline is None:
        args.deadline = DEFAULT_DEADLINE_S
    token = None
    if args.http is not None:
        name = args.token_env or MCP_TOKEN_ENV
        token = os.environ.get(name) or None
        if args.token_env and token is None:  # asked for a token: never serve without one by mistake
            raise ConfigError(f'--token-env {name}: the environment variable {name} is not set')
    if args.openclaw:
        if args.workspace or args.store or args.sessions_db:
            raise ConfigError(
                '--openclaw serves the workspace and stores of the OpenClaw setup: drop --workspace, '
                '--store and --sessions-db (--config names the OpenClaw config)'
            )
        tools = from_openclaw(args.agent, config_path=args.config, deadline_s=args.deadline, watch=True)
    else:
        args.agent = args.agent or 'main'
        config = _config(args)
        tools = MemoryTools.open(
            args.workspace or config.workspace or '.',
            config,
            args.agent,
            sessions_path=args.sessions_db,
            deadline_s=args.deadline,
            watch=True,
        )
    with tools:
        where = f'http://{args.host}:{args.http}/mcp' if args.http is not None else 'stdio'
        # In stdio mode stdout carries the protocol and nothing else: the line goes to stderr there.
        print(
            json.dumps(
                {
                    'event': 'serving',
                    'agent': tools.agent_id,
                    'workspace': str(tools.index.workspace),
                    'transport': where,
                    'token': token is not None,
                }
            )
            if args.json
            else f'memsift mcp: serving agent {tools.agent_id} ({tools.index.workspace}) on {where}'
            f'{" (bearer token required)" if token else ""}',
            file=sys.stdout if args.json and args.http is not None else sys.stderr,
            flush=True,
        )
        try:
            if args.http is not None:
                serve_http(tools, args.host, args.http, token=token)
            else:
                serve_stdio(tools)
        except KeyboardInterrupt:
            pass  # Ctrl-C is how a server is stopped: a clean exit
    return 0


_COMMANDS = {
    'index': _index,
    'search': _search,
    'status': _status,
    'get': _get,
    'watch': _watch,
    'compact': _compact,
    'migrate': _migrate,
    'eval': _eval,
    'sessions': _sessions,
    'mcp': _mcp,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``memsift`` command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except BrokenPipeError:
        # The reader went away (`memsift search ... | head`): exit quietly, as other Unix tools do, and point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
    except MemsiftError as exc:
        if args.json:
            _print_json({'status': 'error', 'error': str(exc), 'type': type(exc).__name__})
        else:
            print(f'memsift: {exc}', file=sys.stderr)
        return 1
